-- Exact KNN and radius search through probe levels, for several layouts
-- (bits, blocks), with several runs and rows in the pending buffer: every answer equals a
-- sequential scan's (ORDER BY distance, then ctid: the index returns ties in
-- heap TID order).
SET client_min_messages = warning;
SET jit = off;
SET max_parallel_workers_per_gather = 0;
CREATE TABLE kp (id int, fp simhash) WITH (autovacuum_enabled = off);
INSERT INTO kp SELECT i, ('x' || md5(i::text))::bit(64)::simhash FROM generate_series(1, 12000) i;
-- 10 centres with 40 copies each at 1..12 flipped bits (positions from a hash)
INSERT INTO kp SELECT 100000 + c * 100 + j,
       (('x' || md5('centre' || c))::bit(64)::bigint #
        (SELECT bit_or(1::bigint << ((hashint4(c * 10000 + j * 64 + b) & 2147483647) % 64))
           FROM generate_series(1, 1 + j % 12) b))::simhash
  FROM generate_series(1, 10) c, generate_series(1, 40) j;
INSERT INTO kp VALUES (200001, NULL), (200002, NULL);
CREATE TABLE kq (qid int, q simhash);
INSERT INTO kq SELECT c, ('x' || md5('centre' || c))::bit(64)::simhash FROM generate_series(1, 10) c;
INSERT INTO kq SELECT 10 + i, ('x' || md5('fresh' || i))::bit(64)::simhash FROM generate_series(1, 10) i;

-- Reference by sequential scan: for every query, the ids in (distance, ctid) order
-- (the first 2500, and all within 24).
CREATE TABLE kref (qid int, rn int, id int, d int);
CREATE FUNCTION fill_ref() RETURNS void LANGUAGE sql AS $$
  DELETE FROM kref;
  INSERT INTO kref SELECT * FROM (
    SELECT qid, row_number() OVER (PARTITION BY qid ORDER BY fp <~> q, kp.ctid) AS rn, id, fp <~> q AS d
      FROM kq, kp WHERE fp IS NOT NULL) s WHERE rn <= 2500 OR d <= 24;
$$;
CREATE INDEX ON kref (qid, rn);
CREATE INDEX ON kref (qid, d);   -- the radius answers below

-- For one layout: build the index, add pending rows, and compare
--   knn_k:       ORDER BY fp <~> q LIMIT k through the index, k = 1, 10, 100, 2500
--                (2500 > one linear pass's first batch), ids and order
--   radius:      simhash_within(fp, q, r) for r = 0..24, ids
-- with the reference.  Returns the scans seen and the number of mismatches.
CREATE FUNCTION check_layout(bits int, blocks int)
RETURNS TABLE (layout text, runs bigint, pending bigint, knn_plan text, knn_checked int,
               knn_mismatches int, radius_checked int, radius_mismatches int) LANGUAGE plpgsql AS $$
DECLARE qr record; k int; r int; got int[]; want int[]; plan text;
BEGIN
  layout := format('bits %s, blocks %s', bits, blocks);
  EXECUTE format('CREATE INDEX kp_fp ON kp USING simhash (fp) WITH (bits = %s, blocks = %s, pending_pages = 1)',
                 bits, blocks);
  -- rows inserted after the build: flushed into small runs, the last ones pending
  INSERT INTO kp SELECT 300000 + i, ('x' || md5('late' || i))::bit(64)::simhash FROM generate_series(1, 2000) i;
  INSERT INTO kp SELECT 310000 + c, (('x' || md5('centre' || c))::bit(64)::bigint # (7::bigint << c))::simhash
    FROM generate_series(1, 10) c;
  PERFORM set_config('enable_seqscan', 'on', true);
  PERFORM set_config('enable_indexscan', 'off', true);
  PERFORM set_config('enable_bitmapscan', 'off', true);
  PERFORM fill_ref();
  PERFORM set_config('enable_seqscan', 'off', true);
  PERFORM set_config('enable_indexscan', 'on', true);
  PERFORM set_config('enable_bitmapscan', 'on', true);
  FOR plan IN EXECUTE 'EXPLAIN (COSTS OFF) SELECT id FROM kp ORDER BY fp <~> ''0123456789abcdef''::simhash LIMIT 10' LOOP
    IF plan ~ 'Scan' THEN knn_plan := regexp_replace(plan, '^[ ->]*', ''); END IF;
  END LOOP;
  SELECT count(*) FILTER (WHERE kind = 'run'), sum(entries) FILTER (WHERE kind = 'pending')
    INTO runs, pending FROM simhash_index_runs('kp_fp');
  knn_checked := 0; knn_mismatches := 0; radius_checked := 0; radius_mismatches := 0;
  FOR qr IN SELECT qid, q FROM kq ORDER BY qid LOOP
    FOREACH k IN ARRAY ARRAY[1, 10, 100, 2500] LOOP
      SELECT array_agg(id) INTO got FROM (SELECT id FROM kp ORDER BY fp <~> qr.q LIMIT k) s;
      SELECT array_agg(id ORDER BY rn) INTO want FROM kref WHERE qid = qr.qid AND rn <= k;
      knn_checked := knn_checked + 1;
      IF got IS DISTINCT FROM want THEN knn_mismatches := knn_mismatches + 1; END IF;
    END LOOP;
    FOR r IN 0..24 LOOP
      SELECT array_agg(id ORDER BY id) INTO got FROM kp WHERE simhash_within(fp, qr.q, r);
      SELECT array_agg(id ORDER BY id) INTO want FROM kref WHERE qid = qr.qid AND d <= r;
      radius_checked := radius_checked + 1;
      IF got IS DISTINCT FROM want THEN radius_mismatches := radius_mismatches + 1; END IF;
    END LOOP;
  END LOOP;
  DELETE FROM kp WHERE id >= 300000;
  DROP INDEX kp_fp;
  RETURN NEXT;
END $$;

SELECT * FROM check_layout(3, 4);
SELECT * FROM check_layout(3, 6);
SELECT * FROM check_layout(6, 7);
SELECT * FROM check_layout(1, 2);
SELECT * FROM check_layout(2, 9);

-- the reference is not trivial: planted centres have near neighbours, fresh queries do not
SELECT qid <= 10 AS planted, min(d) FILTER (WHERE rn = 10) AS min_d10, max(d) FILTER (WHERE rn = 10) AS max_d10
  FROM kref GROUP BY 1 ORDER BY 1;

-- The whole order through the index: every row once, in order, NULLs last
CREATE INDEX kp_fp ON kp USING simhash (fp) WITH (bits = 3);
SET enable_seqscan = off;
SELECT count(*) AS rows, count(DISTINCT id) AS distinct_ids,
       bool_and(d >= prev) AS ordered, bool_and(d IS NULL) FILTER (WHERE rn > 12400) AS nulls_last
  FROM (SELECT id, d, rn, lag(d) OVER (ORDER BY rn) AS prev
          FROM (SELECT id, fp <~> '0123456789abcdef' AS d, row_number() OVER () AS rn
                  FROM (SELECT id, fp FROM kp ORDER BY fp <~> '0123456789abcdef') o) o2) s;
RESET enable_seqscan;

-- Ties, LIMITs beyond the table, deleted rows, and a carry that outgrows
-- work_mem: 300 copies of one fingerprint, 3000 rows 1..7 bits from it (which
-- the first probe steps meet and keep for later steps), random rows; runs and
-- pending rows (pending_pages = 1); then deleted rows, before and after VACUUM.
-- Every order must equal a sequential scan's (distance, then ctid).
CREATE TABLE kt (id int, fp simhash) WITH (autovacuum_enabled = off);
INSERT INTO kt SELECT i, ('x' || md5('tie' || i))::bit(64)::simhash FROM generate_series(1, 5000) i;
INSERT INTO kt SELECT 10000 + i, 'a5a5a5a5a5a5a5a5' FROM generate_series(1, 300) i;
INSERT INTO kt SELECT 20000 + i,
       ('a5a5a5a5a5a5a5a5'::simhash::bigint #
        (SELECT bit_or(1::bigint << ((hashint4(i * 64 + b) & 2147483647) % 64))
           FROM generate_series(1, 1 + i % 7) b))::simhash
  FROM generate_series(1, 3000) i;
CREATE INDEX kt_fp ON kt USING simhash (fp) WITH (bits = 3, pending_pages = 1);
INSERT INTO kt SELECT 30000 + i, ('x' || md5('tie late' || i))::bit(64)::simhash FROM generate_series(1, 1500) i;
INSERT INTO kt SELECT 40000 + i, 'a5a5a5a5a5a5a5a4' FROM generate_series(1, 20) i;
CREATE TABLE ktq (qid int, q simhash);
INSERT INTO ktq VALUES (1, 'a5a5a5a5a5a5a5a5'), (2, 'a5a5a5a5a5a5a5a7'), (3, '5a5a5a5a5a5a5a5a'),
       (4, ('x' || md5('tie q'))::bit(64)::simhash);
-- the ids of ORDER BY fp <~> q LIMIT k through the index against a sequential scan
CREATE FUNCTION knn_mismatches(tab text, ks int[]) RETURNS TABLE (checked int, mismatches int)
LANGUAGE plpgsql AS $$
DECLARE qr record; k int; got int[]; want int[];
BEGIN
  checked := 0; mismatches := 0;
  FOR qr IN SELECT q FROM ktq ORDER BY qid LOOP
    FOREACH k IN ARRAY ks LOOP
      PERFORM set_config('enable_seqscan', 'off', true);
      PERFORM set_config('enable_indexscan', 'on', true);
      EXECUTE format('SELECT array_agg(id) FROM (SELECT id FROM %I ORDER BY fp <~> %L LIMIT %s) s', tab, qr.q, k)
        INTO got;
      PERFORM set_config('enable_seqscan', 'on', true);
      PERFORM set_config('enable_indexscan', 'off', true);
      EXECUTE format('SELECT array_agg(id) FROM (SELECT id FROM %I ORDER BY fp <~> %L, ctid LIMIT %s) s', tab, qr.q, k)
        INTO want;
      checked := checked + 1;
      IF got IS DISTINCT FROM want THEN mismatches := mismatches + 1; END IF;
    END LOOP;
  END LOOP;
  RETURN NEXT;
END $$;
SELECT count(*) FILTER (WHERE kind = 'run') > 1 AS several_runs, sum(entries) FILTER (WHERE kind = 'pending') > 0 AS pending
  FROM simhash_index_runs('kt_fp');
-- 300 ties at distance 0 (320 within 1 of query 1), a LIMIT above the table's 9,820 rows
SELECT * FROM knn_mismatches('kt', '{1, 10, 299, 300, 301, 320, 321, 3500, 20000}');
SET work_mem = '64kB';
SELECT * FROM knn_mismatches('kt', '{1, 10, 300, 3500, 20000}');
RESET work_mem;
DELETE FROM kt WHERE id % 10 = 3;
SELECT * FROM knn_mismatches('kt', '{10, 300, 3500, 20000}');
VACUUM kt;
SELECT * FROM knn_mismatches('kt', '{10, 300, 3500, 20000}');
-- every row once through the index, NULLs last
SET enable_seqscan = off;
INSERT INTO kt VALUES (50001, NULL);
SELECT count(*) AS rows, count(DISTINCT id) AS distinct_ids, (array_agg(id))[count(*)] AS last_id
  FROM (SELECT id FROM kt ORDER BY fp <~> 'a5a5a5a5a5a5a5a5' LIMIT 100000) s;
RESET enable_seqscan;

-- 100,000 rows at bits 6: probe levels are cheap against a linear pass, so
-- the steps go on to 27 bits while rows are carried to 20 only (the level of
-- a random query's 100th nearest row); a longer order probes whole levels
-- again past 20 bits before its linear passes.
CREATE TABLE kb (id int, fp simhash);
INSERT INTO kb SELECT i, ('x' || md5('big' || i))::bit(64)::simhash FROM generate_series(1, 100000) i;
CREATE INDEX kb_fp ON kb USING simhash (fp) WITH (bits = 6);
VACUUM ANALYZE kb;
TRUNCATE ktq;
INSERT INTO ktq SELECT i, ('x' || md5('big q' || i))::bit(64)::simhash FROM generate_series(1, 3) i;
INSERT INTO ktq SELECT 10, fp FROM kb WHERE id = 777;
SELECT * FROM knn_mismatches('kb', '{10, 100, 1000, 3000}');
-- the 3000th row of a random query is beyond 20 bits (and within 27)
SELECT min(d), max(d) FROM (SELECT (SELECT max(d) FROM (SELECT fp <~> q AS d FROM kb ORDER BY fp <~> q LIMIT 3000) s) AS d
  FROM ktq WHERE qid < 10) x;

-- Many equal fingerprints (issue 23): 6,700 copies of one value and 2,500 one
-- bit from it, among random rows, in runs and the pending buffer.  A band of
-- more than 2,048 rows is returned in selected batches (each sorted), a band
-- of more than half of work_mem in rows by its first rows, kept in a bounded
-- heap by the step itself, then whole-level passes.  Every order equals a
-- sequential scan's (distance, then ctid), at LIMITs around each boundary.
CREATE TABLE ke (id int, fp simhash) WITH (autovacuum_enabled = off);
INSERT INTO ke SELECT i, ('x' || md5('eq' || i))::bit(64)::simhash FROM generate_series(1, 3000) i;
INSERT INTO ke SELECT 10000 + i, '0f0f0f0f0f0f0f0f' FROM generate_series(1, 6000) i;
INSERT INTO ke SELECT 20000 + i, '0f0f0f0f0f0f0f0e' FROM generate_series(1, 2500) i;
CREATE INDEX ke_fp ON ke USING simhash (fp) WITH (bits = 3, pending_pages = 1);
INSERT INTO ke SELECT 30000 + i, '0f0f0f0f0f0f0f0f' FROM generate_series(1, 700) i;
TRUNCATE ktq;
INSERT INTO ktq VALUES (1, '0f0f0f0f0f0f0f0f'), (2, '0f0f0f0f0f0f0f0e'), (3, '0f0f0f0f0f0f0f0c'),
       (4, 'f0f0f0f0f0f0f0f0');
SELECT count(*) FILTER (WHERE kind = 'run') > 1 AS several_runs, sum(entries) FILTER (WHERE kind = 'pending') > 0 AS pending
  FROM simhash_index_runs('ke_fp');
SET work_mem = '1MB';   -- bands of up to 21,845 rows held whole
SELECT * FROM knn_mismatches('ke', '{1, 10, 2048, 2049, 4096, 6700, 6701, 9200, 9201, 20000}');
SET work_mem = '128kB'; -- bands of up to 2,730 rows: 6,700 at distance 0 overflow
SELECT * FROM knn_mismatches('ke', '{1, 10, 2730, 2731, 5460, 6700, 6701, 9200, 20000}');
DELETE FROM ke WHERE id % 7 = 2;
SELECT * FROM knn_mismatches('ke', '{10, 2731, 6000, 20000}');
VACUUM ke;
SELECT * FROM knn_mismatches('ke', '{10, 2731, 6000, 20000}');
RESET work_mem;

-- All rows equal: LIMIT 10 reads the first step's range of one table, not
-- every table's (a band of many equal rows kept by the step itself; before,
-- it read the range, dropped it, and read all four tables again).  Pages
-- counted by the transaction's statistics of the index: one table holds a
-- quarter of the run's pages, every table their whole.
CREATE TABLE ka (id int, fp simhash) WITH (autovacuum_enabled = off);
INSERT INTO ka SELECT i, '7777777777777777' FROM generate_series(1, 20000) i;
CREATE INDEX ka_fp ON ka USING simhash (fp) WITH (bits = 3);
TRUNCATE ktq;
INSERT INTO ktq VALUES (1, '7777777777777777'), (2, '7777777777777776'), (3, '8888888888888888');
SET work_mem = '64kB';
SELECT * FROM knn_mismatches('ka', '{1, 10, 1365, 1366, 5000, 20001}');
BEGIN;
SET LOCAL enable_seqscan = off;
CREATE TEMP TABLE ka_before AS SELECT pg_stat_get_xact_blocks_fetched('ka_fp'::regclass) AS n;
SELECT count(*) FROM (SELECT id FROM ka ORDER BY fp <~> '7777777777777777' LIMIT 10) s;
SELECT pg_stat_get_xact_blocks_fetched('ka_fp'::regclass) - (SELECT n FROM ka_before) <=
       (SELECT pages FROM simhash_index_runs('ka_fp') WHERE kind = 'run') / 2 AS one_table_read;
COMMIT;
RESET work_mem;
-- an empty index, and one holding only NULLs
CREATE TABLE k0 (id int, fp simhash);
CREATE INDEX k0_fp ON k0 USING simhash (fp);
SET enable_seqscan = off;
SELECT count(*) FROM (SELECT id FROM k0 ORDER BY fp <~> '7777777777777777' LIMIT 10) s;
INSERT INTO k0 VALUES (1, NULL), (2, NULL);
SELECT array_agg(id) FROM (SELECT id FROM k0 ORDER BY fp <~> '7777777777777777' LIMIT 10) s;
RESET enable_seqscan;
DROP TABLE ke, ka, k0;
