-- Parallel CREATE INDEX (max_parallel_maintenance_workers): the index built
-- with workers planned is the serial build page for page (the page header's
-- LSN and checksum aside), passes its self-check and answers as a sequential
-- scan, for several reloptions and maintenance_work_mem settings.  The
-- table's parallel_workers fixes the workers planned whatever its size and
-- maintenance_work_mem (as for btree); the DEBUG1 line of the build says how
-- many were planned, so the test shows the parallel path was taken whether
-- or not the workers were launched in time (with none launched the leader
-- builds serially, as btree's does).  The server's own DEBUG1 line differs
-- between majors (15 plans workers for btree only and says "serially"):
-- index_parallel_build_1.out is the expected output on 15.
CREATE EXTENSION IF NOT EXISTS pageinspect;
-- the chunks' temporary files are logged when log_temp_files is on, and
-- only when workers were launched
SET log_temp_files = -1;
CREATE TABLE pb (id int, fp simhash) WITH (autovacuum_enabled = off, parallel_workers = 2);
-- groups of 4 near copies (3 bits flipped, at shifting places), NULLs, and
-- exact duplicates (equal keys, so the TID decides the order)
INSERT INTO pb SELECT i, CASE WHEN i % 101 = 0 THEN NULL
    ELSE simhash(('x' || md5((i / 4)::text))::bit(64)::bigint # ((i % 4)::bigint * 7 << (i % 53))) END
  FROM generate_series(1, 60000) i;
INSERT INTO pb SELECT id + 100000, fp FROM pb WHERE id % 50 = 0;
VACUUM ANALYZE pb;

-- Pages of two indexes that differ past the page header's LSN and checksum.
CREATE FUNCTION pb_pages_differ(a regclass, b regclass) RETURNS bigint LANGUAGE sql AS $$
  SELECT CASE WHEN pg_relation_size(a) <> pg_relation_size(b) THEN -1 ELSE
    (SELECT count(*) FROM generate_series(0, pg_relation_size(a) / current_setting('block_size')::int - 1) blk
      WHERE substr(get_raw_page(a::text, blk::int), 11) <> substr(get_raw_page(b::text, blk::int), 11)) END
$$;
-- The reference: (radius, query, row) for radius 0..5 and every 197th row
-- as a query, by a sequential scan, once (the table does not change).
CREATE TABLE pb_q AS SELECT id AS qid, fp AS q FROM pb WHERE id % 197 = 3 AND fp IS NOT NULL;
SET enable_indexscan = off;
SET enable_bitmapscan = off;
CREATE TABLE pb_ref AS SELECT r, qid, id
  FROM (SELECT qid, id, pb.fp <~> pb_q.q AS d FROM pb_q, pb WHERE pb.fp <~> pb_q.q <= 5) near,
       generate_series(d, 5) r;
RESET enable_indexscan;
RESET enable_bitmapscan;
-- Pairs the index scan finds, and those it and the reference disagree on.
CREATE FUNCTION pb_compare(OUT pairs bigint, OUT mismatches bigint) LANGUAGE plpgsql AS $$
BEGIN
  PERFORM set_config('enable_seqscan', 'off', true);
  PERFORM set_config('enable_bitmapscan', 'off', true);
  SELECT count(i.id), count(*) FILTER (WHERE i.id IS NULL OR s.id IS NULL) INTO pairs, mismatches
    FROM (SELECT r, qid, pb.id FROM generate_series(0, 5) r, pb_q, LATERAL
            (SELECT id FROM pb WHERE simhash_within(pb.fp, pb_q.q, r) OFFSET 0) pb) i
    FULL JOIN pb_ref s USING (r, qid, id);
END $$;

-- The serial build beyond maintenance_work_mem: at 1MB (32768 pairs held)
-- the ~61k fingerprints are written as sorted chunks (the DEBUG1 line says
-- how many per table) and each table merged from them; the index is the
-- in-memory build's (64MB) page for page.
SET max_parallel_maintenance_workers = 0;
SET maintenance_work_mem = '64MB';
CREATE INDEX pb_mem ON pb USING simhash (fp) WITH (bits = 3);
SET maintenance_work_mem = '1MB';
SET client_min_messages = debug1;
CREATE INDEX pb_spill ON pb USING simhash (fp) WITH (bits = 3);
RESET client_min_messages;
SELECT pb_pages_differ('pb_mem', 'pb_spill') AS pages_differ;
SELECT simhash_index_check('pb_spill');
DROP INDEX pb_mem, pb_spill;

-- bits 3 (4 tables); 1MB of maintenance_work_mem, a third of it per
-- participant: each writes several sorted chunks per table, the leader merges them
SET maintenance_work_mem = '1MB';
SET max_parallel_maintenance_workers = 0;
CREATE INDEX pb_serial ON pb USING simhash (fp) WITH (bits = 3);
SET max_parallel_maintenance_workers = 2;
SET client_min_messages = debug1;
CREATE INDEX pb_par ON pb USING simhash (fp) WITH (bits = 3);
RESET client_min_messages;
SELECT pb_pages_differ('pb_serial', 'pb_par') AS pages_differ;
SELECT simhash_index_check('pb_par');
DROP INDEX pb_serial;
SELECT * FROM pb_compare();
DROP INDEX pb_par;

-- bits 2, blocks 5 (10 tables), one chunk per participant, the leader only merging
SET maintenance_work_mem = '64MB';
SET parallel_leader_participation = off;
SET max_parallel_maintenance_workers = 0;
CREATE INDEX pb_serial ON pb USING simhash (fp) WITH (bits = 2, blocks = 5);
SET max_parallel_maintenance_workers = 2;
SET client_min_messages = debug1;
CREATE INDEX pb_par ON pb USING simhash (fp) WITH (bits = 2, blocks = 5);
RESET client_min_messages;
RESET parallel_leader_participation;
SELECT pb_pages_differ('pb_serial', 'pb_par') AS pages_differ;
SELECT simhash_index_check('pb_par');
DROP INDEX pb_serial;
SELECT * FROM pb_compare();
DROP INDEX pb_par;

-- bits 4, blocks 6 (15 tables), CONCURRENTLY (an MVCC snapshot shared with the workers)
SET maintenance_work_mem = '1MB';
SET max_parallel_maintenance_workers = 0;
CREATE INDEX pb_serial ON pb USING simhash (fp) WITH (bits = 4, blocks = 6);
SET max_parallel_maintenance_workers = 2;
SET client_min_messages = debug1;
CREATE INDEX CONCURRENTLY pb_par ON pb USING simhash (fp) WITH (bits = 4, blocks = 6);
RESET client_min_messages;
SELECT pb_pages_differ('pb_serial', 'pb_par') AS pages_differ;
SELECT simhash_index_check('pb_par');
DROP INDEX pb_serial;
SELECT * FROM pb_compare();
DROP INDEX pb_par;

-- with no workers allowed, or on a temporary table (workers cannot read it),
-- the build is serial: no workers planned
SET max_parallel_maintenance_workers = 0;
SET client_min_messages = debug1;
CREATE INDEX pb_ser ON pb USING simhash (fp);
RESET client_min_messages;
DROP INDEX pb_ser;
SET max_parallel_maintenance_workers = 2;
CREATE TEMP TABLE pb_temp WITH (parallel_workers = 2) AS SELECT * FROM pb;
SET client_min_messages = debug1;
CREATE INDEX pb_temp_idx ON pb_temp USING simhash (fp);
RESET client_min_messages;
SELECT simhash_index_check('pb_temp_idx');
DROP TABLE pb_temp;

-- Skewed keys: 70,000 rows of one fingerprint make one bucket of the
-- build's radix sort larger than its scratch array (65,536 items), sorted by
-- comparison alone; the near copies and random rows go through the second
-- digit.  simhash_index_check checks every run's (key, TID) order, and the
-- answers are a sequential scan's.
SET maintenance_work_mem = '64MB';
SET max_parallel_maintenance_workers = 0;
CREATE TABLE pb_skew (id int, fp simhash) WITH (autovacuum_enabled = off);
INSERT INTO pb_skew SELECT i, CASE WHEN i <= 70000 THEN '0123456789abcdef'::simhash
    WHEN i <= 72000 THEN ('0123456789abcdef'::simhash::bigint # (3::bigint << (i % 63)))::simhash
    ELSE hashint8extended(i, 0)::simhash END
  FROM generate_series(1, 100000) i;
CREATE INDEX pb_skew_fp ON pb_skew USING simhash (fp);
SELECT simhash_index_check('pb_skew_fp');
SET enable_seqscan = off;
SET enable_bitmapscan = off;
CREATE TABLE pb_skew_got AS SELECT r, count(*) AS n FROM generate_series(0, 3) r, pb_skew
  WHERE simhash_within(fp, '0123456789abcdef'::simhash, r) GROUP BY r;
RESET enable_seqscan;
RESET enable_bitmapscan;
SELECT r, g.n AS by_index, count(*) AS by_seqscan FROM pb_skew_got g JOIN pb_skew s
    ON simhash_distance(s.fp, '0123456789abcdef'::simhash) <= g.r GROUP BY r, g.n ORDER BY r;
DROP TABLE pb_skew, pb_skew_got;

RESET maintenance_work_mem;
RESET max_parallel_maintenance_workers;
RESET log_temp_files;
DROP FUNCTION pb_compare, pb_pages_differ;
DROP TABLE pb, pb_q, pb_ref;
