-- The simhash index answers exactly what a sequential scan answers.
--
-- Planted data: 20,000 hash-generated fingerprints, 28 centres (4 of them at
-- the edges of the signed/unsigned orders) each with copies flipped in 0..8
-- bits (bits spread over the word and bits packed in one run, so that both
-- "one bit per block" and "all in one block" occur), exact duplicates, and
-- NULLs.  The reference is computed once by a sequential scan with the
-- distance function; every index configuration, radius 0..6 and scan type
-- must return the very same row set, each row once.  Only counts and plan
-- node names are printed, so this file does not depend on the data itself.
SET client_min_messages = warning;
SET jit = off;   -- disabled plan nodes cost 1e10 and would JIT-compile every query
SET max_parallel_workers_per_gather = 0;

-- x with d bits flipped, at positions s, s+p, s+2p, ... (mod 64); p odd keeps them distinct.
CREATE FUNCTION flip(x bigint, d int, s int, p int) RETURNS bigint
LANGUAGE sql IMMUTABLE STRICT AS $$
  SELECT x # coalesce((SELECT bit_or(1::bigint << ((s + t * p) % 64)) FROM generate_series(0, d - 1) t), 0)
$$;
CREATE FUNCTION h64(t text) RETURNS bigint LANGUAGE sql IMMUTABLE STRICT AS
  $$ SELECT ('x' || md5(t))::bit(64)::bigint $$;

CREATE TABLE centres (cid int PRIMARY KEY, c bigint NOT NULL);
INSERT INTO centres SELECT j, h64('centre' || j) FROM generate_series(1, 24) j;
INSERT INTO centres VALUES (25, 0), (26, -1), (27, -9223372036854775808), (28, 9223372036854775807);

CREATE TABLE pts (id serial PRIMARY KEY, fp simhash);
INSERT INTO pts (fp) SELECT h64(i::text)::simhash FROM generate_series(1, 20000) i;
-- near copies: per centre and distance 0..8, one spread and one packed pattern
INSERT INTO pts (fp)
SELECT flip(c, d, cid * 7 + d, CASE WHEN v = 0 THEN 2 * (cid % 16) + 1 ELSE 1 END)::simhash
  FROM centres, generate_series(0, 8) d, generate_series(0, 1) v
 ORDER BY cid, d, v;
-- exact duplicates of centres and of some random rows
INSERT INTO pts (fp) SELECT c::simhash FROM centres, generate_series(1, 2) ORDER BY cid;
INSERT INTO pts (fp) SELECT h64(i::text)::simhash FROM generate_series(1, 20000, 1000) i;
INSERT INTO pts (fp) SELECT NULL FROM generate_series(1, 200);
SELECT count(*) AS rows, count(fp) AS non_null, count(DISTINCT fp) AS distinct_fp FROM pts;

-- queries: the centres, some stored random rows, some fresh random values
CREATE TABLE queries (qid int PRIMARY KEY, q simhash NOT NULL);
INSERT INTO queries SELECT cid, c::simhash FROM centres;
INSERT INTO queries SELECT 100 + i, h64(i::text)::simhash FROM generate_series(1, 20000, 2500) i;
INSERT INTO queries SELECT 200 + i, h64('fresh' || i)::simhash FROM generate_series(1, 4) i;
-- a centre seen through one flipped bit: the answer set is shifted by one
INSERT INTO queries SELECT 300 + cid, flip(c, 1, 60, 1)::simhash FROM centres WHERE cid IN (3, 26);

-- reference by sequential scan over the distance function
CREATE TABLE ref AS
SELECT qid, id, fp, fp <~> q AS d FROM queries, pts WHERE fp <~> q <= 6;
SELECT count(*) AS pairs_within_6, count(*) FILTER (WHERE d <= 3) AS within_3 FROM ref;
SELECT d, count(*) FROM ref GROUP BY d ORDER BY d;

-- Compares every (query, radius 0..6) answer of one query form with ref.
--   form 'within': simhash_within(col, q, r)    form 'op': col % q (or ~% for
--   bigint) with simhash.max_distance = r.  target 'id' compares row ids,
--   'fp' compares the fingerprints themselves (for index-only scans).
-- Returns the distinct scan nodes EXPLAIN showed, the number of (query,
-- radius) pairs, and how many differed from the reference.
CREATE FUNCTION compare_all(tbl text, col text, form text, target text DEFAULT 'id')
RETURNS TABLE (plan text, pairs int, mismatches int) LANGUAGE plpgsql AS $$
DECLARE
  qr record; r int; cond text; qlit text; sql text; got text; want text;
  nodes text[] := '{}'; line text; is_bigint bool;
BEGIN
  SELECT atttypid = 'bigint'::regtype INTO is_bigint
    FROM pg_attribute WHERE attrelid = tbl::regclass AND attname = col;
  pairs := 0; mismatches := 0;
  FOR qr IN SELECT qid, q FROM queries ORDER BY qid LOOP
    qlit := CASE WHEN is_bigint THEN format('%L::bigint', qr.q::bigint)
                 ELSE format('%L::simhash', qr.q) END;
    FOR r IN 0..6 LOOP
      IF form = 'within' THEN
        cond := format('simhash_within(%I, %s, %s)', col, qlit, r);
      ELSE
        PERFORM set_config('simhash.max_distance', r::text, true);
        cond := format('%I %s %s', col, CASE WHEN is_bigint THEN '~%' ELSE '%' END, qlit);
      END IF;
      IF target = 'id' THEN
        sql := format('SELECT array_agg(id ORDER BY id)::text FROM %I WHERE %s', tbl, cond);
        SELECT array_agg(id ORDER BY id)::text INTO want FROM ref WHERE qid = qr.qid AND d <= r;
      ELSE
        sql := format('SELECT array_agg(%I::simhash ORDER BY %I::simhash)::text FROM (SELECT %I FROM %I WHERE %s) s',
                      col, col, col, tbl, cond);
        SELECT array_agg(fp ORDER BY fp)::text INTO want FROM ref WHERE qid = qr.qid AND d <= r;
      END IF;
      IF qr.qid = 1 THEN    -- the plan, once per radius
        FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || sql LOOP
          line := substring(line FROM '(Seq Scan|Index Only Scan|Bitmap Index Scan|Bitmap Heap Scan|Index Scan)');
          IF line IS NOT NULL AND NOT line = ANY (nodes) THEN nodes := nodes || line; END IF;
        END LOOP;
      END IF;
      EXECUTE sql INTO got;
      pairs := pairs + 1;
      IF got IS DISTINCT FROM want THEN
        mismatches := mismatches + 1;
        IF mismatches <= 3 THEN
          RAISE WARNING 'mismatch %: qid % r %: got % want %', form, qr.qid, r, got, want;
        END IF;
      END IF;
    END LOOP;
  END LOOP;
  plan := array_to_string(ARRAY(SELECT unnest(nodes) ORDER BY 1), ' + ');
  RETURN NEXT;
END $$;

-- One index configuration: index scan and bitmap scan for both query forms,
-- index-only scan, then the self-check.
CREATE FUNCTION check_config(bits int, blocks int)
RETURNS TABLE (config text, form text, plan text, pairs int, mismatches int) LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format('CREATE INDEX pts_fp_idx ON pts USING simhash (fp) WITH (bits = %s, blocks = %s)', bits, blocks);
  config := format('(%s,%s)', bits, blocks);
  PERFORM set_config('enable_seqscan', 'off', true);
  PERFORM set_config('enable_bitmapscan', 'off', true);
  PERFORM set_config('enable_indexonlyscan', 'off', true);
  form := 'within';  SELECT * INTO plan, pairs, mismatches FROM compare_all('pts', 'fp', 'within'); RETURN NEXT;
  form := '%';       SELECT * INTO plan, pairs, mismatches FROM compare_all('pts', 'fp', 'op');     RETURN NEXT;
  PERFORM set_config('enable_indexscan', 'off', true);
  PERFORM set_config('enable_bitmapscan', 'on', true);
  form := 'within';  SELECT * INTO plan, pairs, mismatches FROM compare_all('pts', 'fp', 'within'); RETURN NEXT;
  form := '%';       SELECT * INTO plan, pairs, mismatches FROM compare_all('pts', 'fp', 'op');     RETURN NEXT;
  PERFORM set_config('enable_bitmapscan', 'off', true);
  PERFORM set_config('enable_indexscan', 'on', true);
  PERFORM set_config('enable_indexonlyscan', 'on', true);
  form := 'within fp'; SELECT * INTO plan, pairs, mismatches FROM compare_all('pts', 'fp', 'within', 'fp'); RETURN NEXT;
  PERFORM simhash_index_check('pts_fp_idx');
  form := 'check';  plan := 'ok'; pairs := NULL; mismatches := NULL; RETURN NEXT;
  DROP INDEX pts_fp_idx;
END $$;

VACUUM ANALYZE pts;   -- all-visible pages for index-only scans

-- The reference itself: sequential scans of both forms agree with the distance.
SET enable_indexscan = off; SET enable_bitmapscan = off;
SELECT * FROM compare_all('pts', 'fp', 'within');
SELECT * FROM compare_all('pts', 'fp', 'op');
RESET enable_indexscan; RESET enable_bitmapscan;

-- Every configuration, from 2 to 16 tables, blocks dividing 64 or not, each
-- built with the smallest maintenance_work_mem (the build must not need more).
SET maintenance_work_mem = '1MB';
SELECT c.* FROM (VALUES (3, 4), (3, 5), (3, 6), (2, 4), (1, 2), (4, 6), (6, 7), (15, 16)) v(b, m),
       LATERAL check_config(b, m) c;
RESET maintenance_work_mem;
-- The default configuration.
CREATE INDEX pts_fp_idx ON pts USING simhash (fp);
SELECT reloptions FROM pg_class WHERE relname = 'pts_fp_idx';
SET enable_seqscan = off; SET enable_bitmapscan = off;
SELECT * FROM compare_all('pts', 'fp', 'within');
SELECT simhash_index_check('pts_fp_idx');
RESET enable_seqscan; RESET enable_bitmapscan;
DROP INDEX pts_fp_idx;

-- ---------------------------------------------------------------------------
-- The bigint operator class on the same values (signed order on disk).
CREATE TABLE hs AS SELECT id, fp::bigint AS h FROM pts;
CREATE INDEX hs_h_idx ON hs USING simhash (h simhash_bigint_ops) WITH (bits = 3, blocks = 5);
VACUUM ANALYZE hs;
SET enable_seqscan = off; SET enable_bitmapscan = off;
SELECT * FROM compare_all('hs', 'h', 'within');
SELECT * FROM compare_all('hs', 'h', 'op');
SELECT * FROM compare_all('hs', 'h', 'within', 'h');
SET enable_indexscan = off; SET enable_bitmapscan = on;
SELECT * FROM compare_all('hs', 'h', 'within');
RESET enable_seqscan; RESET enable_bitmapscan; RESET enable_indexscan;
SELECT simhash_index_check('hs_h_idx');

-- ---------------------------------------------------------------------------
-- Exact KNN: ORDER BY fp <~> q LIMIT 10 gives the same distances as a sort.
CREATE INDEX pts_fp_idx ON pts USING simhash (fp) WITH (bits = 3, blocks = 5);
SET enable_indexscan = off; SET enable_bitmapscan = off;
CREATE TABLE knn_ref AS
SELECT qid, (SELECT array_agg(d) FROM (SELECT fp <~> q AS d FROM pts ORDER BY fp <~> q, id LIMIT 10) s) AS ds,
       (SELECT array_agg(d) FROM (SELECT fp <~> q AS d FROM pts ORDER BY fp <~> q, id LIMIT 60) s) AS ds60
  FROM queries;
RESET enable_indexscan;
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM pts ORDER BY fp <~> '0123456789abcdef' LIMIT 10;
-- per query: distances of the 10 and 60 nearest, and the ids really at those distances
CREATE TABLE knn_got AS
SELECT qid,
       (SELECT array_agg(d) FROM (SELECT fp <~> q AS d FROM pts ORDER BY fp <~> q LIMIT 10) s) AS ds,
       (SELECT array_agg(d) FROM (SELECT fp <~> q AS d FROM pts ORDER BY fp <~> q LIMIT 60) s) AS ds60,
       (SELECT count(DISTINCT id) FROM (SELECT id FROM pts ORDER BY fp <~> q LIMIT 60) s) AS distinct60
  FROM queries;
RESET enable_seqscan; RESET enable_bitmapscan;
SELECT count(*) AS queries,
       count(*) FILTER (WHERE g.ds IS DISTINCT FROM r.ds) AS top10_mismatch,
       count(*) FILTER (WHERE g.ds60 IS DISTINCT FROM r.ds60) AS top60_mismatch,
       count(*) FILTER (WHERE g.distinct60 <> 60) AS repeated_rows
  FROM knn_got g JOIN knn_ref r USING (qid);
-- the nearest rows of a planted centre are its copies at distance 0, 0, 0, 0, 1, 1, 2, 2, ...
SELECT ds FROM knn_got WHERE qid = 5;
-- a full ordered scan returns every row, in distance order, NULLs last, each once
SET enable_seqscan = off; SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT id, fp FROM pts ORDER BY fp <~> '0123456789abcdef';
SELECT count(*) AS rows, count(DISTINCT id) AS distinct_ids, count(fp) AS non_null,
       bool_and(d >= prev) AS ordered,
       max(rn) FILTER (WHERE fp IS NOT NULL) < min(rn) FILTER (WHERE fp IS NULL) AS nulls_last
  FROM (SELECT id, fp, d, rn, lag(d) OVER (ORDER BY rn) AS prev
          FROM (SELECT id, fp, fp <~> '0123456789abcdef' AS d, row_number() OVER () AS rn
                  FROM (SELECT id, fp FROM pts ORDER BY fp <~> '0123456789abcdef') o) o2) s;
RESET enable_seqscan; RESET enable_bitmapscan;
DROP INDEX pts_fp_idx;

-- ---------------------------------------------------------------------------
-- Writes into a built index: single-row inserts (enough to overflow the
-- pending list several times), deletes, updates, VACUUM, inserts after VACUUM.
CREATE TABLE w (id int PRIMARY KEY, fp simhash);
INSERT INTO w SELECT id, fp FROM pts WHERE id % 2 = 0;
CREATE INDEX w_fp_idx ON w USING simhash (fp) WITH (bits = 3, blocks = 5);
-- w and ref agree only for even ids for now: the reference follows the table
CREATE FUNCTION refresh_ref() RETURNS void LANGUAGE sql AS $$
  DELETE FROM ref;
  INSERT INTO ref SELECT qid, id, fp, fp <~> q FROM queries, w WHERE fp <~> q <= 6;
$$;
CREATE FUNCTION check_w(label text)
RETURNS TABLE (step text, form text, plan text, pairs int, mismatches int) LANGUAGE plpgsql AS $$
BEGIN
  PERFORM set_config('enable_seqscan', 'on', true);
  PERFORM set_config('enable_indexscan', 'off', true);
  PERFORM set_config('enable_bitmapscan', 'off', true);
  PERFORM refresh_ref();
  PERFORM set_config('enable_seqscan', 'off', true);
  PERFORM set_config('enable_indexscan', 'on', true);
  step := label;
  form := 'within'; SELECT * INTO plan, pairs, mismatches FROM compare_all('w', 'fp', 'within'); RETURN NEXT;
  form := '%';      SELECT * INTO plan, pairs, mismatches FROM compare_all('w', 'fp', 'op');     RETURN NEXT;
  PERFORM set_config('enable_indexscan', 'off', true);
  PERFORM set_config('enable_bitmapscan', 'on', true);
  form := 'within'; SELECT * INTO plan, pairs, mismatches FROM compare_all('w', 'fp', 'within'); RETURN NEXT;
  PERFORM simhash_index_check('w_fp_idx');
  form := 'check'; plan := 'ok'; pairs := NULL; mismatches := NULL; RETURN NEXT;
END $$;
-- KNN on w: the 20 nearest distances through the index equal a sort's, per query
CREATE FUNCTION knn_w() RETURNS TABLE (queries int, mismatches int) LANGUAGE plpgsql AS $$
DECLARE qr record; sql text; got text; want text;
BEGIN
  queries := 0; mismatches := 0;
  FOR qr IN SELECT q FROM queries ORDER BY qid LOOP
    sql := format('SELECT array_agg(d)::text FROM (SELECT fp <~> %L::simhash AS d FROM w ORDER BY fp <~> %L::simhash LIMIT 20) s', qr.q, qr.q);
    PERFORM set_config('enable_seqscan', 'on', true);
    PERFORM set_config('enable_indexscan', 'off', true);
    EXECUTE sql INTO want;
    PERFORM set_config('enable_seqscan', 'off', true);
    PERFORM set_config('enable_indexscan', 'on', true);
    EXECUTE sql INTO got;
    queries := queries + 1;
    IF got IS DISTINCT FROM want THEN
      mismatches := mismatches + 1;
      IF mismatches <= 3 THEN RAISE WARNING 'knn mismatch %: got % want %', qr.q, got, want; END IF;
    END IF;
  END LOOP;
  RETURN NEXT;
END $$;
SELECT * FROM check_w('built');
-- odd ids one row per statement-level call of aminsert
INSERT INTO w SELECT id, fp FROM pts WHERE id % 2 = 1 ORDER BY id;
SELECT count(*) FROM w;
SELECT * FROM check_w('inserted');
SELECT 'inserted' AS step, * FROM knn_w();
DELETE FROM w WHERE id % 3 = 0;
SELECT * FROM check_w('deleted');
SELECT 'deleted' AS step, * FROM knn_w();
-- move rows: random rows become near copies of centre 7, centres' copies become random
UPDATE w SET fp = flip((SELECT c FROM centres WHERE cid = 7), id % 5, id % 64, 3)::simhash WHERE id % 97 = 1;
UPDATE w SET fp = h64('moved' || id)::simhash WHERE id > 20000 AND id % 4 = 1;
UPDATE w SET fp = NULL WHERE id % 101 = 5;
SELECT * FROM check_w('updated');
SELECT 'updated' AS step, * FROM knn_w();
VACUUM w;
SELECT * FROM check_w('vacuumed');
SELECT 'vacuumed' AS step, * FROM knn_w();
INSERT INTO w SELECT 100000 + id, fp FROM pts WHERE id % 3 = 0 AND fp IS NOT NULL;
SELECT * FROM check_w('reinserted');
DELETE FROM w WHERE id < 15000;
VACUUM w;
SELECT * FROM check_w('half deleted, vacuumed');
SELECT pg_relation_size('w_fp_idx') > 0 AS has_size;

-- ---------------------------------------------------------------------------
-- An index created on an empty table and filled only by inserts.
CREATE TABLE e (id int PRIMARY KEY, fp simhash);
CREATE INDEX e_fp_idx ON e USING simhash (fp) WITH (bits = 3, blocks = 6);
SELECT simhash_index_check('e_fp_idx');
SET enable_seqscan = off;
SELECT count(*) FROM e WHERE fp % '0123456789abcdef';
RESET enable_seqscan;
INSERT INTO e SELECT id, fp FROM pts ORDER BY id;
DROP TABLE w;
ALTER TABLE e RENAME TO w;
ALTER INDEX e_fp_idx RENAME TO w_fp_idx;
SELECT * FROM check_w('empty, then inserts');
SELECT 'empty, then inserts' AS step, * FROM knn_w();
VACUUM w;
SELECT * FROM check_w('empty, inserts, vacuum');

-- ... and after VACUUM it reads no more than twice the pages of a bulk-built
-- index on the same rows (buffer counts, not time: deterministic).
CREATE FUNCTION buffers_radius3() RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE qr record; plan json; total bigint := 0;
BEGIN
  PERFORM set_config('enable_seqscan', 'off', true);
  PERFORM set_config('enable_bitmapscan', 'off', true);
  FOR qr IN SELECT q FROM queries ORDER BY qid LOOP
    EXECUTE format('EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF, FORMAT JSON) SELECT id FROM w WHERE simhash_within(fp, %L::simhash, 3)', qr.q)
      INTO plan;
    total := total + (plan->0->'Plan'->>'Shared Hit Blocks')::bigint + (plan->0->'Plan'->>'Shared Read Blocks')::bigint;
  END LOOP;
  RETURN total;
END $$;
CREATE TABLE buf AS SELECT buffers_radius3() AS incremental;
REINDEX INDEX w_fp_idx;
SELECT simhash_index_check('w_fp_idx');
SELECT incremental <= 2 * bulk AS within_2x_of_bulk, bulk > 0 AS reads_pages
  FROM buf, LATERAL (SELECT buffers_radius3() AS bulk) b;
