-- The log-structured write path: a small pending buffer (pending_pages = 1,
-- 580 entries) flushed into sorted runs, tier merges of 4 runs of a level,
-- VACUUM's compaction and its rewrite of only the runs that hold dead TIDs.
-- At every step the index answers exactly as a sequential scan (every
-- radius, index and bitmap scans, KNN, index-only) and passes its self-check.
CREATE TABLE rr (id int PRIMARY KEY, fp simhash) WITH (autovacuum_enabled = off); -- the test VACUUMs itself
CREATE FUNCTION rr_fp(i int) RETURNS simhash LANGUAGE sql IMMUTABLE AS
  $$ SELECT simhash(('x' || md5((i / 3)::text))::bit(64)::bigint # ((i % 3)::bigint * 5 << (i % 59))) $$;
INSERT INTO rr SELECT i, rr_fp(i) FROM generate_series(1, 20000) i;
INSERT INTO rr VALUES (-1, NULL);
CREATE INDEX rr_fp_idx ON rr USING simhash (fp) WITH (bits = 3, blocks = 5, pending_pages = 1);
SELECT kind, generation, level, entries FROM simhash_index_runs('rr_fp_idx');

CREATE TABLE rr_q AS SELECT id AS qid, fp AS q FROM rr WHERE id % 331 = 7;
-- index answers vs a sequential scan's, for radius 0..6, by index and bitmap scans
CREATE FUNCTION rr_compare(label text) RETURNS TABLE (step text, scan text, pairs bigint, mismatches bigint)
LANGUAGE plpgsql AS $$
DECLARE
  m text; knn_want text[]; all_want simhash[];
BEGIN
  PERFORM set_config('enable_indexscan', 'off', true);
  PERFORM set_config('enable_bitmapscan', 'off', true);
  PERFORM set_config('enable_seqscan', 'on', true);
  CREATE TEMP TABLE rr_ref AS SELECT r, qid, id FROM generate_series(0, 6) r, rr_q, rr
    WHERE simhash_within(rr.fp, rr_q.q, r);
  FOREACH m IN ARRAY ARRAY['index', 'bitmap'] LOOP
    PERFORM set_config('enable_seqscan', 'off', true);
    PERFORM set_config('enable_indexscan', (m = 'index')::text, true);
    PERFORM set_config('enable_bitmapscan', (m = 'bitmap')::text, true);
    step := label; scan := m;
    SELECT count(*), count(*) FILTER (WHERE i.id IS NULL OR s.id IS NULL) INTO pairs, mismatches
      FROM (SELECT r, qid, rr.id FROM generate_series(0, 6) r, rr_q, LATERAL
              (SELECT id FROM rr WHERE simhash_within(rr.fp, rr_q.q, r) OFFSET 0) rr) i
      FULL JOIN rr_ref s USING (r, qid, id);
    RETURN NEXT;
  END LOOP;
  DROP TABLE rr_ref;
  -- KNN: the 30 nearest distances of each query, as a sort of a sequential
  -- scan gives them, and every entry once through an index scan without a
  -- condition, as the sequential scan has them (both taken while sequential
  -- scans are allowed; kept in variables, not temporary tables: catalog
  -- churn calls autovacuum in, whose snapshot can keep the VACUUMs of the
  -- steps below from removing dead entries)
  PERFORM set_config('enable_seqscan', 'on', true);
  PERFORM set_config('enable_indexscan', 'off', true);
  PERFORM set_config('enable_bitmapscan', 'off', true);
  SELECT array_agg((SELECT array_agg(d) FROM (SELECT d FROM (SELECT fp <~> q AS d FROM rr WHERE fp IS NOT NULL OFFSET 0) a
                                              ORDER BY d LIMIT 30) k)::text ORDER BY qid)
    INTO knn_want FROM rr_q;
  SELECT array_agg(fp ORDER BY fp) INTO all_want FROM rr WHERE fp IS NOT NULL;
  PERFORM set_config('enable_seqscan', 'off', true);
  PERFORM set_config('enable_indexscan', 'on', true);
  step := label; scan := 'knn';
  SELECT count(*), count(*) FILTER (WHERE got IS DISTINCT FROM knn_want[n]) INTO pairs, mismatches
    FROM (SELECT row_number() OVER (ORDER BY qid) AS n,
                 (SELECT array_agg(d) FROM (SELECT fp <~> q AS d FROM rr ORDER BY fp <~> q LIMIT 30) k)::text AS got
            FROM rr_q) x;
  RETURN NEXT;
  step := label; scan := 'all entries';
  SELECT count(*), count(*) FILTER (WHERE g IS DISTINCT FROM w) INTO pairs, mismatches
    FROM unnest((SELECT array_agg(fp ORDER BY fp) FROM (SELECT fp FROM rr WHERE fp IS NOT NULL OFFSET 0) a), all_want) u(g, w);
  RETURN NEXT;
  PERFORM simhash_index_check('rr_fp_idx');
  step := label; scan := 'check ok'; pairs := NULL; mismatches := NULL;
  RETURN NEXT;
END $$;
SELECT * FROM rr_compare('built');

-- 6,000 single-row inserts: about ten flushes, tier merges of level 0
INSERT INTO rr SELECT i, rr_fp(i) FROM generate_series(20001, 26000) i;
SELECT kind, level, entries FROM simhash_index_runs('rr_fp_idx');
SELECT count(*) FILTER (WHERE kind = 'run') >= 4 AS several_runs,
       count(DISTINCT level) FILTER (WHERE kind = 'run') >= 2 AS several_levels,
       max(entries) FILTER (WHERE kind = 'pending') < 580 AS pending_bounded
  FROM simhash_index_runs('rr_fp_idx');
SELECT * FROM rr_compare('inserted');

-- the buffer stays bounded however many rows one statement inserts
INSERT INTO rr SELECT i, rr_fp(i) FROM generate_series(26001, 40000) i;
SELECT max(entries) FILTER (WHERE kind = 'pending') < 580 AS pending_bounded,
       count(*) FILTER (WHERE kind = 'run') AS runs,
       sum(entries) FILTER (WHERE kind IN ('run', 'pending')) = 40000 AS all_rows
  FROM simhash_index_runs('rr_fp_idx');
SELECT * FROM rr_compare('more inserts');

-- VACUUM without dead rows compacts: the runs that do not hold 4x the rows of
-- all smaller runs are merged into one; afterwards each run does.
VACUUM rr;
SELECT kind, level, entries FROM simhash_index_runs('rr_fp_idx');
SELECT bool_and(entries >= 4 * coalesce(smaller, 0)) AS geometric
  FROM (SELECT entries, sum(entries) OVER (ORDER BY entries DESC ROWS BETWEEN 1 FOLLOWING AND UNBOUNDED FOLLOWING) AS smaller
          FROM simhash_index_runs('rr_fp_idx') WHERE kind = 'run') s;
SELECT * FROM rr_compare('vacuumed');

-- new rows, then VACUUM: the large run holds more than 4x the small ones
-- and is kept; the small ones are merged into one
CREATE TABLE rr_big AS SELECT generation FROM simhash_index_runs('rr_fp_idx') WHERE kind = 'run';
INSERT INTO rr SELECT i, rr_fp(i) FROM generate_series(40001, 42000) i;
VACUUM rr;
SELECT kind, level, entries FROM simhash_index_runs('rr_fp_idx');
SELECT generation = (SELECT generation FROM rr_big) AS large_run_kept
  FROM simhash_index_runs('rr_fp_idx') WHERE kind = 'run' ORDER BY entries DESC LIMIT 1;
-- deletes only among the newest rows: VACUUM rewrites the run holding them
-- and leaves the large run as it is
CREATE TABLE rr_gen AS SELECT generation, entries FROM simhash_index_runs('rr_fp_idx') WHERE kind = 'run';
DELETE FROM rr WHERE id > 40000 AND id % 2 = 0;
VACUUM rr;
SELECT (SELECT generation FROM simhash_index_runs('rr_fp_idx') WHERE kind = 'run' ORDER BY entries DESC LIMIT 1)
         = (SELECT generation FROM rr_big) AS large_run_kept,
       (SELECT generation FROM simhash_index_runs('rr_fp_idx') WHERE kind = 'run' ORDER BY entries LIMIT 1)
         <> (SELECT generation FROM rr_gen ORDER BY entries LIMIT 1) AS small_run_rewritten,
       (SELECT sum(entries) FROM simhash_index_runs('rr_fp_idx') WHERE kind IN ('run', 'pending')) AS entries,
       (SELECT count(fp) FROM rr) AS rows;
SELECT * FROM rr_compare('deleted, vacuumed');

-- deletes everywhere, updates (new versions go to the buffer), NULLs, VACUUM
DELETE FROM rr WHERE id % 7 = 3;
UPDATE rr SET fp = rr_fp(id + 1) WHERE id % 11 = 5;
UPDATE rr SET fp = NULL WHERE id % 101 = 9;
SELECT * FROM rr_compare('deleted, updated');
VACUUM rr;
SELECT * FROM rr_compare('deleted, updated, vacuumed');
SELECT (SELECT sum(entries) FROM simhash_index_runs('rr_fp_idx') WHERE kind IN ('run', 'pending')) =
       (SELECT count(fp) FROM rr) AS entries_match_rows,
       (SELECT entries FROM simhash_index_runs('rr_fp_idx') WHERE kind = 'nulls') =
       (SELECT count(*) FROM rr WHERE fp IS NULL) AS nulls_match;

-- index-only scans return the stored fingerprints
VACUUM ANALYZE rr;
SET enable_seqscan = off; SET enable_bitmapscan = off;
-- explain_lines(query): EXPLAIN (COSTS OFF) without what differs between
-- server versions; one definition for the tests that use it
\getenv abs_srcdir PG_ABS_SRCDIR
\set ECHO none
\i :abs_srcdir/sql/include/explain_lines.psql
\set ECHO all
SELECT explain_lines('SELECT fp FROM rr WHERE simhash_within(fp, (SELECT q FROM rr_q WHERE qid = 7), 3)');
SELECT count(*) FILTER (WHERE o.fp IS DISTINCT FROM rr.fp) AS wrong_fp, count(*) > 0 AS some_rows
  FROM rr_q, LATERAL (SELECT fp FROM rr WHERE simhash_within(fp, rr_q.q, 3)) o
  JOIN rr ON rr.fp = o.fp;
RESET enable_seqscan; RESET enable_bitmapscan;

-- pending_pages can be changed; the new limit applies to the next inserts
ALTER INDEX rr_fp_idx SET (pending_pages = 2);
INSERT INTO rr SELECT i, rr_fp(i) FROM generate_series(50001, 52000) i;
SELECT max(entries) FILTER (WHERE kind = 'pending') < 2 * 580 AS pending_bounded
  FROM simhash_index_runs('rr_fp_idx');
SELECT * FROM rr_compare('after ALTER INDEX');
ALTER INDEX rr_fp_idx SET (pending_pages = 0);  -- ERROR
SELECT * FROM simhash_index_runs('rr');  -- ERROR
SELECT * FROM simhash_index_runs('rr_pkey');  -- ERROR

-- an index built on an empty table, filled only by inserts, emptied by DELETE
CREATE TABLE re (fp simhash) WITH (autovacuum_enabled = off);
CREATE INDEX re_fp ON re USING simhash (fp) WITH (pending_pages = 1);
SELECT kind, entries FROM simhash_index_runs('re_fp');
INSERT INTO re SELECT rr_fp(i) FROM generate_series(1, 3000) i;
SELECT count(*) FILTER (WHERE kind = 'run') > 1 AS runs FROM simhash_index_runs('re_fp');
SELECT simhash_index_check('re_fp');
DELETE FROM re;
VACUUM re;
SELECT kind, entries FROM simhash_index_runs('re_fp');
SELECT simhash_index_check('re_fp');
SET enable_seqscan = off;
SELECT count(*) FROM re WHERE fp % rr_fp(5);
RESET enable_seqscan;
DROP TABLE re, rr, rr_q, rr_gen, rr_big;
DROP FUNCTION rr_compare(text), rr_fp(int);

-- Prefix filters of small runs (filter.c): a backend that meets a run of a
-- few pages in a second scan keeps, per table, a bitmap of its keys' first
-- bits, and skips the run for a query whose prefix is not in it.  Here one
-- bulk-built run and one flushed run of 581 rows: the third scan for a
-- fingerprint far from every row reads fewer pages than the second (which
-- builds the filter; the third skips the flushed run's directory and run
-- page of every table), and the answers stay a sequential scan's for
-- queries near rows of that run.
CREATE TABLE rf (id int, fp simhash) WITH (autovacuum_enabled = off);
INSERT INTO rf SELECT i, ('x' || md5(i::text))::bit(64)::bigint::simhash FROM generate_series(1, 20000) i;
CREATE INDEX rf_fp ON rf USING simhash (fp) WITH (pending_pages = 1);
INSERT INTO rf SELECT i, ('x' || md5(i::text))::bit(64)::bigint::simhash FROM generate_series(20001, 20600) i;
SELECT kind, entries FROM simhash_index_runs('rf_fp');
CREATE FUNCTION rf_pages(q simhash) RETURNS int LANGUAGE plpgsql AS $$
DECLARE
  plan json;
BEGIN
  EXECUTE format('EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, FORMAT JSON) '
                 'SELECT count(*) FROM rf WHERE simhash_within(fp, %L::simhash, 3)', q) INTO plan;
  RETURN (plan -> 0 -> 'Plan' ->> 'Shared Hit Blocks')::int + (plan -> 0 -> 'Plan' ->> 'Shared Read Blocks')::int;
END $$;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT rf_pages('0123456789abcdef') AS first \gset
SELECT rf_pages('0123456789abcdef') AS second \gset
SELECT rf_pages('0123456789abcdef') AS third \gset
SELECT :third < :second AS skipped;
-- near copies (2 bits flipped) of the flushed run's rows, and of the
-- bulk-built run's, each with the rows a sequential scan finds within 3
SET enable_seqscan = on; SET enable_indexscan = off;
CREATE TABLE rf_q AS SELECT qid, q, (SELECT count(*) FROM rf WHERE fp <~> q <= 3) AS want
  FROM (SELECT id AS qid, (fp::bigint # (3::bigint << (id % 60)))::simhash AS q FROM rf WHERE id % 37 = 0) s;
SET enable_seqscan = off; SET enable_indexscan = on;
SELECT count(*) AS queries, count(*) FILTER (WHERE qid > 20000) AS of_flushed_rows,
  count(*) FILTER (WHERE (SELECT count(*) FROM rf WHERE simhash_within(fp, q, 3)) <> want) AS mismatches
  FROM rf_q;
RESET enable_seqscan; RESET enable_bitmapscan;
SELECT simhash_index_check('rf_fp');
DROP TABLE rf, rf_q;
DROP FUNCTION rf_pages(simhash);
