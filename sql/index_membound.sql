-- Scan memory stays within work_mem on the two paths that once held every row:
-- a radius scan with ORDER BY (rows in (distance, TID) order by bounded
-- passes) and the NULL keys at the end of a scan without conditions (read a
-- batch of pages at a time).  At work_mem 64kB a batch holds about 1,400
-- rows; each answer here has several times more.  Answers must equal a
-- sequential scan (sorted by distance, then ctid: the order of ties the KNN
-- gives), and a cursor part-way through holds one batch, not every row
-- (pg_backend_memory_contexts' "simhash scan" context).
SET client_min_messages = warning;
SET jit = off;
SET max_parallel_workers_per_gather = 0;
SET work_mem = '64kB';

CREATE TABLE mb (id int, fp simhash) WITH (autovacuum_enabled = off);
-- 3,000 equal fingerprints, 3,000 within 1..4 bits of them, 5,000 random,
-- 6,000 NULLs
INSERT INTO mb SELECT i, '0123456789abcdef' FROM generate_series(1, 3000) i;
INSERT INTO mb SELECT 10000 + i,
    ('0123456789abcdef'::simhash::bigint # (1::bigint << (i % 64)) # (((i / 64) % 4)::bigint << 20))::simhash
  FROM generate_series(1, 3000) i;
INSERT INTO mb SELECT 20000 + i, ('x' || md5(i::text))::bit(64)::simhash FROM generate_series(1, 5000) i;
INSERT INTO mb SELECT 30000 + i, NULL FROM generate_series(1, 6000) i;
CREATE INDEX mb_fp ON mb USING simhash (fp) WITH (bits = 3, blocks = 5, pending_pages = 8);
-- rows in the pending buffer and in the NULLs chain after the build
INSERT INTO mb SELECT 40000 + i, ('0123456789abcdef'::simhash::bigint # (3::bigint << (i % 60)))::simhash
  FROM generate_series(1, 800) i;
INSERT INTO mb SELECT 50000 + i, NULL FROM generate_series(1, 700) i;
-- dead entries still in the index, and rows deleted and vacuumed away
DELETE FROM mb WHERE id % 7 = 0;
VACUUM ANALYZE mb;
DELETE FROM mb WHERE id % 11 = 0;

-- ---- radius + ORDER BY ------------------------------------------------------

-- the rows of `cond` in `ord` order, numbered, by an index scan (dynamic SQL:
-- planned at each call), and by a sequential scan sorted by (distance, ctid)
CREATE FUNCTION by_index(cond text, ord text)
RETURNS TABLE (n bigint, d int, id int) LANGUAGE plpgsql AS $$
DECLARE q text := format('SELECT fp <~> %s AS d, id FROM mb WHERE %s ORDER BY fp <~> %s', ord, cond, ord);
  line text; plan text := '';
BEGIN
  PERFORM set_config('enable_seqscan', 'off', true);
  PERFORM set_config('enable_indexscan', 'on', true);
  PERFORM set_config('enable_bitmapscan', 'off', true);
  FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP plan := plan || line; END LOOP;
  IF plan !~ 'Index Scan using mb_fp' OR plan ~ 'Sort' THEN
    RAISE EXCEPTION 'not an ordered index scan: %', plan;
  END IF;
  RETURN QUERY EXECUTE 'SELECT row_number() OVER (), d, id FROM (' || q || ') s';
END $$;
CREATE FUNCTION by_seqscan(cond text, ord text)
RETURNS TABLE (n bigint, d int, id int) LANGUAGE plpgsql AS $$
BEGIN
  PERFORM set_config('enable_seqscan', 'on', true);
  PERFORM set_config('enable_indexscan', 'off', true);
  PERFORM set_config('enable_bitmapscan', 'off', true);
  RETURN QUERY EXECUTE format('SELECT row_number() OVER (ORDER BY d, ctid), d, id FROM
    (SELECT fp <~> %s AS d, id, ctid FROM mb WHERE %s) s', ord, cond);
END $$;
CREATE FUNCTION compare(cond text, ord text) RETURNS text LANGUAGE sql AS $$
  SELECT format('%s rows, %s by the index, %s out of place', count(s.n), count(i.n),
                count(*) FILTER (WHERE i.d IS DISTINCT FROM s.d OR i.id IS DISTINCT FROM s.id))
    FROM by_index(cond, ord) i FULL JOIN by_seqscan(cond, ord) s USING (n) $$;

CREATE TABLE cases (cond text, ord text);
INSERT INTO cases VALUES
  -- probes (radius 4), then whole passes (12, 40: beyond `bits`)
  ($$fp %@ simhash_query('0123456789abcdef', 4)$$, $$'0123456789abcdef'$$),
  ($$fp %@ simhash_query('0123456789abcdef', 12)$$, $$'0123456789abcdef'$$),
  ($$fp %@ simhash_query('0123456789abcdef', 40)$$, $$'0123456789abcdef'$$),
  ($$simhash_within(fp, '0123456789abcdef', 2)$$, $$'0123456789abcdef'$$),
  -- ordered from another point than the condition's, and two conditions
  ($$fp %@ simhash_query('0123456789abcdef', 4)$$, $$'0123456789abcdee'$$),
  ($$fp %@ simhash_query('0123456789abcdef', 6) AND fp %@ simhash_query('0123456789abcdee', 3)$$,
   $$'0123456789abcdef'$$);
SELECT ord, cond, compare(cond, ord) FROM cases;
-- at 256kB a pass keeps up to 5,461 rows, more than the 2,048 it sorts at
-- once: the rest of the pass comes from its pool, also after the last pass
-- (radius 4: one pass; radius 40: two)
SET work_mem = '256kB';
SELECT ord, cond, compare(cond, ord) FROM cases;
SET work_mem = '64kB';

-- index-only: the same distances in the same order
SET enable_seqscan = off; SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT fp FROM mb WHERE fp %@ simhash_query('0123456789abcdef', 12)
  ORDER BY fp <~> '0123456789abcdef';
CREATE TEMP TABLE io AS SELECT row_number() OVER () AS n, fp FROM
  (SELECT fp FROM mb WHERE fp %@ simhash_query('0123456789abcdef', 12) ORDER BY fp <~> '0123456789abcdef') s;
RESET enable_seqscan; RESET enable_bitmapscan;
SELECT count(*) AS rows, count(*) FILTER (WHERE d < prev) AS out_of_order
  FROM (SELECT fp <~> '0123456789abcdef' AS d, lag(fp <~> '0123456789abcdef') OVER (ORDER BY n) AS prev
          FROM io) s;
-- the same fingerprints at each distance (ties come in TID order, which an
-- index-only scan cannot show)
SELECT count(*) AS distances_differing FROM (
  SELECT fp <~> '0123456789abcdef' AS d, array_agg(fp ORDER BY fp) AS fps FROM io GROUP BY 1) i
  FULL JOIN (SELECT fp <~> '0123456789abcdef' AS d, array_agg(fp ORDER BY fp) AS fps FROM mb
              WHERE simhash_distance(fp, '0123456789abcdef') <= 12 GROUP BY 1) s USING (d)
  WHERE i.fps IS DISTINCT FROM s.fps;

-- memory: a cursor over 9,000 ordered rows holds one pass's rows (half of
-- work_mem, plus the scan's fixed state), after the first row and midway
BEGIN;
SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off;
DECLARE c1 CURSOR FOR SELECT fp FROM mb WHERE fp %@ simhash_query('0123456789abcdef', 40)
  ORDER BY fp <~> '0123456789abcdef';
FETCH 1 FROM c1;
SELECT count(*) AS scans, max(total_bytes) < 128 * 1024 AS bounded_first
  FROM pg_backend_memory_contexts WHERE name = 'simhash scan';
MOVE 5000 IN c1;
SELECT count(*) AS scans, max(total_bytes) < 128 * 1024 AS bounded_midway
  FROM pg_backend_memory_contexts WHERE name = 'simhash scan';
COMMIT;

-- ---- the NULL keys of scans without conditions ------------------------------

-- a full index-only scan and a KNN scan return every row, NULLs last
SET enable_seqscan = off; SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT fp FROM mb;
SELECT count(*) AS rows, count(fp) AS keys FROM (SELECT fp FROM mb) s;
CREATE TEMP TABLE kn AS SELECT row_number() OVER () AS n, d, id FROM
  (SELECT fp <~> '0123456789abcdef' AS d, id FROM mb ORDER BY fp <~> '0123456789abcdef') s;
RESET enable_seqscan; RESET enable_bitmapscan;
SELECT count(*) AS rows, count(*) FILTER (WHERE i.d IS NULL) AS nulls,
       count(*) FILTER (WHERE i.n IS NULL OR s.n IS NULL) AS unmatched,
       count(*) FILTER (WHERE i.d IS DISTINCT FROM s.d) AS out_of_place
  FROM kn i FULL JOIN (SELECT id, fp <~> '0123456789abcdef' AS d,
                              row_number() OVER (ORDER BY fp <~> '0123456789abcdef' NULLS LAST, ctid) AS n
                         FROM mb) s USING (id);
SELECT count(*) FILTER (WHERE i.n IS DISTINCT FROM s.n) AS nonnull_out_of_place
  FROM kn i JOIN (SELECT id, row_number() OVER (ORDER BY fp <~> '0123456789abcdef' NULLS LAST, ctid) AS n
                    FROM mb) s USING (id) WHERE i.d IS NOT NULL;

-- memory: a cursor that has reached the 5,000 NULL keys holds a batch of
-- them, not all
BEGIN;
SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off;
DECLARE c2 CURSOR FOR SELECT fp FROM mb;
MOVE 10000 IN c2;
FETCH 1 FROM c2;
SELECT count(*) AS scans, max(total_bytes) < 96 * 1024 AS bounded_nulls
  FROM pg_backend_memory_contexts WHERE name = 'simhash scan';
DECLARE c3 CURSOR FOR SELECT fp FROM mb ORDER BY fp <~> '0123456789abcdef';
MOVE 10000 IN c3;
FETCH 1 FROM c3;
SELECT count(*) AS scans, max(total_bytes) < 128 * 1024 AS bounded_knn_nulls
  FROM pg_backend_memory_contexts WHERE name = 'simhash scan';
COMMIT;

DROP TABLE mb, cases;
DROP FUNCTION by_index(text, text), by_seqscan(text, text), compare(text, text);
