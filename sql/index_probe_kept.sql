-- Listed probes over kept keys (src/am/probe_list.c probe_listed_kept): once
-- a backend's probes of a run's table have read as many pages as the run
-- has, it keeps that table's keys (within simhash.sweep_cache_size, whole or
-- not at all), and later probes filter the keys in memory, reading a run
-- page only for a key within the radius.  Here: the same radius and KNN
-- queries with no keys kept (sweep_cache_size 0: pages read) and with every
-- table's keys kept (DEBUG1 shows them kept), for two layouts, then after
-- deletes, VACUUM and inserts; every answer must equal a sequential scan's.
SET client_min_messages = warning;
SET jit = off;
SET max_parallel_workers_per_gather = 0;
SET simhash.debug_sweep = never;

CREATE FUNCTION pk_h64(t text) RETURNS bigint LANGUAGE sql IMMUTABLE STRICT AS
  $$ SELECT ('x' || md5(t))::bit(64)::bigint $$;
-- x with 1..6 bits flipped anywhere, chosen by seed
CREATE FUNCTION pk_flip(x bigint, seed int) RETURNS bigint LANGUAGE sql IMMUTABLE STRICT AS $$
  SELECT x # (SELECT bit_or(1::bigint << ((hashint4(seed * 8 + b) & 2147483647) % 64))
                FROM generate_series(1, 1 + seed % 6) b) $$;

CREATE TABLE pk (id int, fp simhash) WITH (autovacuum_enabled = off);
INSERT INTO pk SELECT i, pk_h64(i::text)::simhash FROM generate_series(1, 20000) i;
-- near copies of 40 centres (ties and close rows), and exact copies of one
INSERT INTO pk SELECT 20000 + i, pk_flip(pk_h64('c' || i % 40), i)::simhash
  FROM generate_series(1, 2000) i;
INSERT INTO pk SELECT 22000 + i, pk_h64('c7')::simhash FROM generate_series(1, 200) i;

CREATE TABLE pkq (qid int, q simhash);
INSERT INTO pkq SELECT i, pk_h64('c' || i)::simhash FROM generate_series(0, 5) i;
INSERT INTO pkq SELECT 100 + i, pk_h64('fresh' || i)::simhash FROM generate_series(1, 4) i;

-- The scans the planner may use: a sequential scan only, or the index only.
CREATE FUNCTION pk_scans(seq bool, bitmap bool) RETURNS void LANGUAGE sql AS $$
  SELECT set_config('enable_seqscan', seq::text, true), set_config('enable_bitmapscan', bitmap::text, true),
         set_config('enable_indexscan', (NOT seq AND NOT bitmap)::text, true) $$;
-- 1 (and a warning) when an index answer differs from the sequential scan's.
CREATE FUNCTION pk_differs(what text, got text, want text) RETURNS int LANGUAGE plpgsql AS $$
BEGIN
  IF got IS NOT DISTINCT FROM want THEN RETURN 0; END IF;
  RAISE WARNING '%: got % want %', what, left(got, 60), left(want, 60);
  RETURN 1;
END $$;

-- Every query at radius 0..16 (a bitmap scan's id set) and KNN LIMIT 1, 10
-- and 100 (distances in order) against a sequential scan: answers compared
-- and mismatches.
CREATE FUNCTION pk_check(label text)
RETURNS TABLE (config text, compared int, mismatches int) LANGUAGE plpgsql AS $$
DECLARE qr record; r int; k int; got text; want text;
BEGIN
  config := label;
  compared := 0; mismatches := 0;
  FOR qr IN SELECT qid, q FROM pkq ORDER BY qid LOOP
    FOREACH r IN ARRAY ARRAY[0, 1, 2, 3, 4, 6, 8, 10, 12, 13, 14, 16] LOOP
      PERFORM pk_scans(true, false);
      SELECT array_agg(id ORDER BY id)::text INTO want FROM pk WHERE fp <~> qr.q <= r;
      PERFORM pk_scans(false, true);
      EXECUTE format('SELECT array_agg(id ORDER BY id)::text FROM pk WHERE simhash_within(fp, %L, %s)',
                     qr.q, r) INTO got;
      compared := compared + 1;
      mismatches := mismatches + pk_differs(format('%s qid %s radius %s', label, qr.qid, r), got, want);
    END LOOP;
    FOREACH k IN ARRAY ARRAY[1, 10, 100] LOOP
      PERFORM pk_scans(true, false);
      SELECT array_agg(d ORDER BY d)::text INTO want
        FROM (SELECT fp <~> qr.q AS d FROM pk ORDER BY fp <~> qr.q LIMIT k) s;
      PERFORM pk_scans(false, false);
      EXECUTE format('SELECT array_agg(d ORDER BY n)::text FROM
                        (SELECT fp <~> %L AS d, row_number() OVER () AS n FROM
                           (SELECT fp FROM pk ORDER BY fp <~> %L LIMIT %s) s) s', qr.q, qr.q, k) INTO got;
      compared := compared + 1;
      mismatches := mismatches + pk_differs(format('%s qid %s LIMIT %s', label, qr.qid, k), got, want);
    END LOOP;
  END LOOP;
  RETURN NEXT;
END $$;

-- Radius-r probes of `times` fresh values: enough for every table's keys
-- to be kept (DEBUG1 says so, a line a table).
CREATE FUNCTION pk_warm(r int, times int) RETURNS void LANGUAGE plpgsql AS $$
DECLARE n bigint;
BEGIN
  PERFORM pk_scans(false, true);
  FOR i IN 1 .. times LOOP
    SELECT count(*) INTO n FROM pk WHERE simhash_within(fp, pk_h64('w' || i)::simhash, r);
  END LOOP;
END $$;

CREATE INDEX pk_fp ON pk USING simhash (fp);
SET simhash.sweep_cache_size = 0;
SELECT * FROM pk_check('default, no keys kept');
SET simhash.sweep_cache_size = '64MB';
SET client_min_messages = debug1;
SELECT pk_warm(10, 40);
SET client_min_messages = warning;
SELECT * FROM pk_check('default, keys kept');

-- 8-bit prefixes over 8 tables
DROP INDEX pk_fp;
CREATE INDEX pk_fp ON pk USING simhash (fp) WITH (bits = 7, blocks = 8);
SET client_min_messages = debug1;
SELECT pk_warm(16, 60);
SET client_min_messages = warning;
SELECT * FROM pk_check('(7,8), keys kept');

-- deletes and VACUUM (which drops the backend's keys: kept again), then
-- inserts (a second run, its keys kept apart once probed enough)
DELETE FROM pk WHERE id % 4 = 1;
VACUUM pk;
SET client_min_messages = debug1;
SELECT pk_warm(16, 60);
SET client_min_messages = warning;
SELECT * FROM pk_check('(7,8), vacuumed, keys kept');
INSERT INTO pk SELECT 30000 + i, pk_flip(pk_h64('c' || i % 6), i + 7)::simhash
  FROM generate_series(1, 3000) i;
SELECT * FROM pk_check('(7,8), inserted');
SELECT pk_warm(16, 60);
SELECT * FROM pk_check('(7,8), inserted, warmed');

DROP TABLE pk, pkq;
DROP FUNCTION pk_check(text), pk_warm(int, int), pk_scans(bool, bool), pk_differs(text, text, text),
  pk_h64(text), pk_flip(bigint, int);
