-- The sweep (a pass over the index's own keys) and the probes answer alike.
-- The sweep filters the keys a backend keeps (simhash.sweep_cache_size), all,
-- some or none of them, reading only pages with a key in range.
--
-- simhash.debug_sweep forces every radius and KNN scan to sweep (always) or
-- to probe whenever probes can answer (never); auto chooses by cost.  Each
-- mode must return exactly what a sequential scan returns, for radius 0..16
-- and KNN, over an index whose rows lie in several runs, the pending buffer
-- and the NULLs chain, after deletes and VACUUM.  Only counts are printed.
SET client_min_messages = warning;
SET jit = off;
SET max_parallel_workers_per_gather = 0;

CREATE FUNCTION sw_h64(t text) RETURNS bigint LANGUAGE sql IMMUTABLE STRICT AS
  $$ SELECT ('x' || md5(t))::bit(64)::bigint $$;
-- x with d bits flipped, at positions s, s + 5, s + 10, ... (mod 64)
CREATE FUNCTION sw_flip(x bigint, d int, s int) RETURNS bigint LANGUAGE sql IMMUTABLE STRICT AS $$
  SELECT x # coalesce((SELECT bit_or(1::bigint << ((s + t * 5) % 64)) FROM generate_series(0, d - 1) t), 0)
$$;

-- no autovacuum: its invalidations would drop the keys a backend keeps and
-- add DEBUG lines below
CREATE TABLE sw (id serial PRIMARY KEY, fp simhash) WITH (autovacuum_enabled = off);
CREATE TABLE sw_q (qid int PRIMARY KEY, q simhash NOT NULL);
INSERT INTO sw_q SELECT i, sw_h64('centre' || i)::simhash FROM generate_series(1, 6) i;
INSERT INTO sw_q SELECT 10 + i, sw_h64('fresh' || i)::simhash FROM generate_series(1, 3) i;
-- random rows, and near copies of the centres at every distance 0..18
INSERT INTO sw (fp) SELECT sw_h64(i::text)::simhash FROM generate_series(1, 6000) i;
INSERT INTO sw (fp) SELECT sw_flip(q::bigint, d, qid * 3 + d)::simhash
  FROM sw_q, generate_series(0, 18) d WHERE qid <= 6 ORDER BY qid, d;
INSERT INTO sw (fp) SELECT NULL FROM generate_series(1, 50);
CREATE INDEX sw_fp_idx ON sw USING simhash (fp) WITH (pending_pages = 1);
-- more rows through the pending buffer: flushed into small runs, and some left pending
INSERT INTO sw (fp) SELECT sw_h64('late' || i)::simhash FROM generate_series(1, 2500) i;
INSERT INTO sw (fp) SELECT sw_flip(q::bigint, d, qid + d)::simhash
  FROM sw_q, generate_series(0, 16, 2) d ORDER BY qid, d;
INSERT INTO sw (fp) SELECT NULL FROM generate_series(1, 20);
DELETE FROM sw WHERE id % 7 = 3;
VACUUM sw;
-- new small runs beside the compacted one, then rows left pending
INSERT INTO sw (fp) SELECT sw_h64('later' || i)::simhash FROM generate_series(1, 1500) i;
INSERT INTO sw (fp) SELECT sw_h64('pending' || i)::simhash FROM generate_series(1, 300) i;
INSERT INTO sw (fp) SELECT sw_flip(q::bigint, d, qid * 5 + d)::simhash
  FROM sw_q, generate_series(1, 15, 2) d ORDER BY qid, d;
DELETE FROM sw WHERE id % 11 = 5;   -- dead entries the index still holds
ANALYZE sw;
-- the index holds several runs, pending rows and NULLs
SELECT count(*) FILTER (WHERE kind = 'run') > 1 AS runs,
       sum(entries) FILTER (WHERE kind = 'pending') > 0 AS pending,
       sum(entries) FILTER (WHERE kind = 'nulls') > 0 AS nulls
  FROM simhash_index_runs('sw_fp_idx');

CREATE TABLE sw_ref AS SELECT qid, id, fp <~> q AS d, sw.ctid AS tid FROM sw_q, sw WHERE fp IS NOT NULL;
CREATE INDEX ON sw_ref (qid, d);  -- for the lookups of the reference below
ANALYZE sw_ref;

-- Every (query, radius 0..16) through the scan the settings allow, against
-- sw_ref; returns the scan nodes used, the pairs compared and mismatches.
CREATE FUNCTION sw_radius(target text DEFAULT 'id')
RETURNS TABLE (plan text, pairs int, mismatches int) LANGUAGE plpgsql AS $$
DECLARE
  qr record; r int; sql text; got text; want text; nodes text[] := '{}'; line text;
BEGIN
  pairs := 0; mismatches := 0;
  FOR qr IN SELECT qid, q FROM sw_q ORDER BY qid LOOP
    FOR r IN 0..16 LOOP
      IF target = 'id' THEN
        sql := format('SELECT array_agg(id ORDER BY id)::text FROM sw WHERE simhash_within(fp, %L::simhash, %s)', qr.q, r);
        SELECT array_agg(id ORDER BY id)::text INTO want FROM sw_ref WHERE qid = qr.qid AND d <= r;
      ELSE
        sql := format('SELECT array_agg(fp ORDER BY fp)::text FROM (SELECT fp FROM sw WHERE simhash_within(fp, %L::simhash, %s)) s', qr.q, r);
        SELECT array_agg(s.fp ORDER BY s.fp)::text INTO want FROM sw_ref JOIN sw s USING (id) WHERE qid = qr.qid AND d <= r;
      END IF;
      IF qr.qid = 1 THEN
        FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || sql LOOP
          line := substring(line FROM '(Seq Scan|Index Only Scan|Bitmap Index Scan|Index Scan)');
          IF line IS NOT NULL AND NOT line = ANY (nodes) THEN nodes := nodes || line; END IF;
        END LOOP;
      END IF;
      EXECUTE sql INTO got;
      pairs := pairs + 1;
      IF got IS DISTINCT FROM want THEN
        mismatches := mismatches + 1;
        IF mismatches <= 3 THEN
          RAISE WARNING 'radius mismatch: qid % r %: got % want %', qr.qid, r, got, want;
        END IF;
      END IF;
    END LOOP;
  END LOOP;
  plan := array_to_string(ARRAY(SELECT unnest(nodes) ORDER BY 1), ' + ');
  RETURN NEXT;
END $$;

-- KNN: the first k rows (k = 1, 10, 100) and the whole order (ties in heap
-- TID order, the NULLs last), by index scan, against sw_ref; also a radius
-- with ORDER BY.
CREATE FUNCTION sw_knn()
RETURNS TABLE (plan text, orders int, mismatches int) LANGUAGE plpgsql AS $$
DECLARE
  qr record; k int; sql text; got text; want text; nodes text[] := '{}'; line text;
BEGIN
  orders := 0; mismatches := 0;
  FOR qr IN SELECT qid, q FROM sw_q ORDER BY qid LOOP
    FOREACH k IN ARRAY ARRAY[1, 10, 100, 100000] LOOP
      sql := format('SELECT array_agg(id || '':'' || coalesce(d::text, ''-'') ORDER BY n)::text FROM '
                    '(SELECT id, fp <~> %L::simhash AS d, row_number() OVER () AS n FROM '
                    '(SELECT id, fp FROM sw ORDER BY fp <~> %L::simhash LIMIT %s) l) s', qr.q, qr.q, k);
      SELECT array_agg(id || ':' || coalesce(d::text, '-') ORDER BY n)::text INTO want FROM
        (SELECT id, d, row_number() OVER (ORDER BY d NULLS LAST, tid) AS n FROM
          (SELECT id, d, tid FROM sw_ref WHERE qid = qr.qid
           UNION ALL SELECT id, NULL, ctid FROM sw WHERE fp IS NULL) a
         ORDER BY d NULLS LAST, tid LIMIT k) s;
      IF k = 100000 THEN
        -- the NULLs come last, in the index's own order: each shows as 'null'
        EXECUTE format('SELECT array_agg(CASE WHEN fp IS NULL THEN ''null'' ELSE id || '':'' || (fp <~> %L::simhash) END ORDER BY o)::text FROM '
                       '(SELECT id, fp, row_number() OVER () AS o FROM (SELECT id, fp FROM sw ORDER BY fp <~> %L::simhash) l) s',
                       qr.q, qr.q) INTO got;
        SELECT array_agg(CASE WHEN d IS NULL THEN 'null' ELSE id || ':' || d END ORDER BY d NULLS LAST, tid)::text INTO want FROM
          (SELECT id, d, tid FROM sw_ref WHERE qid = qr.qid
           UNION ALL SELECT id, NULL, ctid FROM sw WHERE fp IS NULL) a;
      ELSE
        EXECUTE sql INTO got;
      END IF;
      IF qr.qid = 1 AND k = 10 THEN
        FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || sql LOOP
          line := substring(line FROM '(Seq Scan|Index Only Scan|Index Scan)');
          IF line IS NOT NULL AND NOT line = ANY (nodes) THEN nodes := nodes || line; END IF;
        END LOOP;
      END IF;
      orders := orders + 1;
      IF got IS DISTINCT FROM want THEN
        mismatches := mismatches + 1;
        IF mismatches <= 3 THEN
          RAISE WARNING 'knn mismatch: qid % k %: got % want %', qr.qid, k, left(got, 300), left(want, 300);
        END IF;
      END IF;
    END LOOP;
    -- radius 12 in distance order
    EXECUTE format('SELECT array_agg(id || '':'' || d ORDER BY n)::text FROM (SELECT id, fp <~> %L::simhash AS d, row_number() OVER () AS n FROM '
                   '(SELECT id, fp FROM sw WHERE simhash_within(fp, %L::simhash, 12) ORDER BY fp <~> %L::simhash) l) s', qr.q, qr.q, qr.q) INTO got;
    SELECT array_agg(id || ':' || d ORDER BY d, tid)::text INTO want FROM sw_ref WHERE qid = qr.qid AND d <= 12;
    orders := orders + 1;
    IF got IS DISTINCT FROM want THEN
      mismatches := mismatches + 1;
      RAISE WARNING 'ordered radius mismatch: qid %: got % want %', qr.qid, left(got, 300), left(want, 300);
    END IF;
  END LOOP;
  plan := array_to_string(ARRAY(SELECT unnest(nodes) ORDER BY 1), ' + ');
  RETURN NEXT;
END $$;

-- the reference agrees with itself through a sequential scan
SET enable_indexscan = off; SET enable_bitmapscan = off;
SELECT * FROM sw_radius();
RESET enable_indexscan; RESET enable_bitmapscan;

SET enable_seqscan = off;
SET enable_indexonlyscan = off;
SET enable_bitmapscan = off;
SET simhash.debug_sweep = always;
SELECT 'always' AS mode, * FROM sw_radius();
SELECT 'always' AS mode, * FROM sw_knn();
-- the sweep with no keys kept (every page read: lowering the setting drops
-- the keys kept so far), and with room for the keys of a few pages only
-- (the rest read)
SET simhash.sweep_cache_size = 0;
SELECT 'always, no keys kept' AS mode, * FROM sw_radius();
SELECT 'always, no keys kept' AS mode, * FROM sw_knn();
SET simhash.sweep_cache_size = '24kB';
SELECT 'always, some keys kept' AS mode, * FROM sw_radius();
SELECT 'always, some keys kept' AS mode, * FROM sw_knn();
RESET simhash.sweep_cache_size;
-- the loops' portable forms, as on a CPU without POPCNT and AVX2 (kept keys
-- filtered for the first pages, as kept under 24kB above, the rest read)
SET simhash.debug_simd = off;
SELECT 'always, no simd' AS mode, * FROM sw_radius();
SELECT 'always, no simd' AS mode, * FROM sw_knn();
SET simhash.debug_sweep = never;
SELECT 'never, no simd' AS mode, * FROM sw_radius();
SELECT 'never, no simd' AS mode, * FROM sw_knn();
RESET simhash.debug_simd;
SELECT 'never' AS mode, * FROM sw_radius();
SELECT 'never' AS mode, * FROM sw_knn();
SET simhash.debug_sweep = auto;
SELECT 'auto' AS mode, * FROM sw_radius();
SELECT 'auto' AS mode, * FROM sw_knn();

-- bitmap scans, and index-only scans (after VACUUM: all-visible pages)
VACUUM sw;
SET enable_indexscan = off; SET enable_bitmapscan = on;
SET simhash.debug_sweep = always;
SELECT 'always' AS mode, * FROM sw_radius();
SET enable_indexscan = on; SET enable_bitmapscan = off; SET enable_indexonlyscan = on;
SELECT 'always' AS mode, * FROM sw_radius('fp');
-- a stream of many batches: a radius that holds every row, work_mem at its least
SET work_mem = 64;
SELECT count(*) = (SELECT count(*) FROM sw WHERE fp IS NOT NULL) AS every_row
  FROM sw WHERE simhash_within(fp, '0000000000000000', 64);
RESET work_mem;
SET simhash.debug_sweep = never;
SELECT 'never' AS mode, * FROM sw_radius('fp');
RESET simhash.debug_sweep;
RESET enable_indexscan; RESET enable_bitmapscan; RESET enable_indexonlyscan; RESET enable_seqscan;

-- an unknown mode names itself
SET simhash.debug_sweep = sometimes;
-- the keys kept: a size in memory units, not below zero (22023; the
-- message's wording differs between server versions)
DO $$ BEGIN SET simhash.sweep_cache_size = -1;
  EXCEPTION WHEN invalid_parameter_value THEN RAISE WARNING 'refused: %', SQLSTATE; END $$;
SHOW simhash.sweep_cache_size;


-- a new backend keeps the keys of each run its first sweep reads, once;
-- with room for a few pages of keys, those of the first pages
\c -
SET enable_seqscan = off;
SET simhash.debug_sweep = always;
SET client_min_messages = debug1;
SELECT count(*) FROM sw WHERE simhash_within(fp, '0000000000000000', 3);
SELECT count(*) FROM sw WHERE simhash_within(fp, '0000000000000000', 3);
RESET client_min_messages;
\c -
SET enable_seqscan = off;
SET simhash.debug_sweep = always;
SET simhash.sweep_cache_size = '24kB';
SET client_min_messages = debug1;
SELECT count(*) FROM sw WHERE simhash_within(fp, '0000000000000000', 3);
-- lowered below what is kept: the next scan drops the keys (and keeps none
-- at 0); raised again, the next sweep keeps them again
SET simhash.sweep_cache_size = 0;
SELECT count(*) FROM sw WHERE simhash_within(fp, '0000000000000000', 3);
SELECT count(*) FROM sw WHERE simhash_within(fp, '0000000000000000', 3);
RESET simhash.sweep_cache_size;
SELECT count(*) FROM sw WHERE simhash_within(fp, '0000000000000000', 3);
RESET client_min_messages;

-- A KNN cursor whose passes outlive the keys they counted: after 40 rows
-- (two passes, the second noting pages for the next ones) the keys are
-- dropped and those of a few pages read again (a new array, maybe at the
-- old one's address): passes over noted pages must sweep such a run whole
-- (taken for the same keys, they read past the few pages' ends).  The
-- whole order against sw_ref, per query; DEBUG1 shows the keys dropped and
-- read again.
CREATE FUNCTION sw_knn_cursor(qid_ int) RETURNS TABLE (fetched int, mismatches int) LANGUAGE plpgsql AS $$
DECLARE c refcursor; q_ simhash; r record; got text[] := '{}'; want text[];
BEGIN
  SELECT q INTO q_ FROM sw_q WHERE qid = qid_;
  OPEN c FOR EXECUTE format('SELECT id, fp, fp <~> %L::simhash AS d FROM sw ORDER BY fp <~> %L::simhash', q_, q_);
  LOOP
    IF cardinality(got) = 40 THEN PERFORM set_config('simhash.sweep_cache_size', '24kB', true); END IF;
    FETCH c INTO r;
    EXIT WHEN NOT FOUND;
    got := got || CASE WHEN r.fp IS NULL THEN 'null' ELSE r.id || ':' || r.d END;
  END LOOP;
  CLOSE c;
  SELECT array_agg(CASE WHEN d IS NULL THEN 'null' ELSE id || ':' || d END ORDER BY d NULLS LAST, tid) INTO want FROM
    (SELECT id, d, tid FROM sw_ref WHERE qid = qid_ UNION ALL SELECT id, NULL, ctid FROM sw WHERE fp IS NULL) a;
  fetched := cardinality(got);
  mismatches := (SELECT count(*) FROM generate_series(1, greatest(cardinality(got), cardinality(want))) i
                  WHERE got[i] IS DISTINCT FROM want[i]);
  RETURN NEXT;
END $$;
\c -
SET jit = off;
SET enable_seqscan = off;
SET enable_indexonlyscan = off;
SET enable_bitmapscan = off;
SET simhash.debug_sweep = always;
SET client_min_messages = debug1;
BEGIN;
SELECT * FROM sw_knn_cursor(1);
COMMIT;
RESET client_min_messages;
BEGIN;
SELECT qid, (sw_knn_cursor(qid)).* FROM sw_q WHERE qid > 1 ORDER BY qid;
COMMIT;

DROP TABLE sw, sw_q, sw_ref;
DROP FUNCTION sw_radius(text), sw_knn(), sw_knn_cursor(int), sw_h64(text), sw_flip(bigint, int, int);
