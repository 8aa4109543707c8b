-- The planner's choice between a simhash index and a sequential scan, from
-- the index's read-cost model (src/am/cost.c): probes up to `bits`, more
-- probes (flipped prefix bits) above it, a linear pass of the index beyond,
-- exact KNN by probe levels.  bench/planner_knn.sh times the same choices.
--
-- 29,040 rows: below ANALYZE's sample size (300 x statistics target), so the
-- statistics, and with them the plans, do not depend on random sampling.
SET client_min_messages = warning;
SET jit = off;
SET max_parallel_workers_per_gather = 0;
CREATE TABLE c3 (id int, url text PRIMARY KEY, fp simhash);
INSERT INTO c3 SELECT i, 'https://example.org/' || i, ('x' || md5(i::text))::bit(64)::simhash
  FROM generate_series(1, 29000) i;
-- 40 near copies of one page (0..4 adjacent bits flipped)
INSERT INTO c3 SELECT 30000 + i, 'https://example.org/copy/' || i,
       ('1a40201a26358020'::simhash::bigint # (((1::bigint << (i % 5)) - 1) << (i % 59)))::simhash
  FROM generate_series(1, 40) i;
CREATE TABLE c6 AS SELECT * FROM c3;
ALTER TABLE c6 ADD PRIMARY KEY (url);
CREATE INDEX c3_fp ON c3 USING simhash (fp) WITH (bits = 3);
CREATE INDEX c6_fp ON c6 USING simhash (fp) WITH (bits = 6);
VACUUM ANALYZE c3;
VACUUM ANALYZE c6;

-- The scan nodes of a plan, e.g. 'Nested Loop / Seq Scan / Index Scan'.
CREATE FUNCTION plan_of(sql text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE l text; res text := '';
BEGIN
  FOR l IN EXECUTE 'EXPLAIN (COSTS OFF) ' || sql LOOP
    IF l ~ '(Scan|Join|Loop|Sort|Limit)' AND l !~ ':' THEN
      res := res || CASE WHEN res = '' THEN '' ELSE ' / ' END ||
             regexp_replace(regexp_replace(l, '^[ ->]*', ''), ' on \w+( \w+)?$|  .*$|: .*$', '');
    END IF;
  END LOOP;
  RETURN res;
END $$;
-- The plan of `SELECT id ... WHERE simhash_within(fp, q, r)` for r = 0..64,
-- one row per range of radii with the same plan.
CREATE FUNCTION radius_plans(tbl text, q simhash) RETURNS TABLE (radii text, plan text) LANGUAGE sql AS $$
  WITH p AS (SELECT r, plan_of(format('SELECT id FROM %I WHERE simhash_within(fp, %L, %s)', tbl, q, r)) AS plan
               FROM generate_series(0, 64) r),
       g AS (SELECT r, plan, r - row_number() OVER (PARTITION BY plan ORDER BY r) AS grp FROM p)
  SELECT CASE WHEN min(r) = max(r) THEN min(r)::text ELSE min(r) || '..' || max(r) END, plan
    FROM g GROUP BY plan, grp ORDER BY min(r)
$$;

-- Radius: the index while the answers are a small share of the table, above
-- `bits` too (bits 3: 4 tables of 16-bit prefixes; bits 6: 7 tables of 9-10 bits)
SELECT * FROM radius_plans('c3', '0123456789abcdef');
SELECT * FROM radius_plans('c6', '0123456789abcdef');
-- the operator % with simhash.max_distance above bits takes the same path
SET simhash.max_distance = 10;
SELECT plan_of($$SELECT id FROM c3 WHERE fp % '0123456789abcdef'$$);
SELECT count(*) FROM c3 WHERE fp % '1a40201a26358020';
SET simhash.max_distance = 40;
SELECT plan_of($$SELECT id FROM c3 WHERE fp % '0123456789abcdef'$$);
RESET simhash.max_distance;

-- A radius beyond 64 plans without overflowing its estimate (it used to),
-- then fails with 22023 as every radius outside 0..64 does; 64 matches
-- every row
EXPLAIN (COSTS OFF) SELECT count(*) FROM c3 WHERE simhash_within(fp, '0123456789abcdef', 2147483647);
SELECT count(*) FROM c3 WHERE simhash_within(fp, '0123456789abcdef', 2147483647);
SELECT count(*) FROM c3 WHERE fp %@ simhash_query('0123456789abcdef'::simhash, 2147483647);
SELECT count(*) FROM c3 WHERE simhash_within(fp, '0123456789abcdef', 64);
SET enable_seqscan = off;
SELECT plan_of($$SELECT id FROM c3 WHERE simhash_within(fp, '0123456789abcdef', 2147483647)$$);
SELECT count(*) FROM c3 WHERE simhash_within(fp, '0123456789abcdef', 2147483647);
SELECT count(*) FROM c3 WHERE simhash_within(fp, '0123456789abcdef', 64);
RESET enable_seqscan;

-- Self-join with the key inequality in WHERE: a nested loop over the simhash
-- index, not a range scan of the primary key filtered by %
EXPLAIN (COSTS OFF)
SELECT a.url, b.url FROM c3 a JOIN c3 b ON a.fp % b.fp WHERE a.url < b.url;
SELECT plan_of($$SELECT a.url, b.url FROM c6 a JOIN c6 b ON a.fp % b.fp WHERE a.url < b.url$$);
SELECT plan_of($$SELECT a.url, b.url FROM c3 a JOIN c3 b ON simhash_within(b.fp, a.fp, 5) WHERE a.url < b.url$$);
SELECT count(*), sum(hashtext(a.url || b.url)) FROM c3 a JOIN c3 b ON a.fp % b.fp WHERE a.url < b.url;
-- the same pairs by the batch function (positions in url order)
WITH s AS (SELECT array_agg(fp ORDER BY url) AS fps, array_agg(url ORDER BY url) AS urls FROM c3)
SELECT count(*), sum(hashtext(s.urls[f.a] || s.urls[f.b])) FROM s, simhash_find_all(s.fps, 3) f;

-- KNN: a LIMIT is answered by the index, the whole order by a sort
SELECT plan_of($$SELECT id FROM c3 ORDER BY fp <~> '0123456789abcdef' LIMIT 10$$);
SELECT plan_of($$SELECT id FROM c6 ORDER BY fp <~> '0123456789abcdef' LIMIT 10$$);
SELECT plan_of($$SELECT id FROM c3 ORDER BY fp <~> '0123456789abcdef'$$);

-- An index whose rows are all pending (inserted after CREATE INDEX, fewer
-- than a merge waits for): every scan reads them whole, and the cost says so
CREATE TABLE cp (id int, fp simhash);
CREATE INDEX cp_fp ON cp USING simhash (fp) WITH (bits = 3);
INSERT INTO cp SELECT id, fp FROM c3 WHERE id <= 1500;
ANALYZE cp;
SELECT * FROM radius_plans('cp', '0123456789abcdef');
SELECT count(*) FROM cp WHERE simhash_within(fp, '1a40201a26358020', 20);
SET enable_indexscan = off; SET enable_bitmapscan = off;
SELECT count(*) FROM cp WHERE simhash_within(fp, '1a40201a26358020', 20);
RESET enable_indexscan; RESET enable_bitmapscan;

-- Probes over kept keys (probe_list.c) are priced as such: with room in
-- simhash.sweep_cache_size for every table's keys, a probed radius costs
-- less than with none, with 8-bit prefixes of layout (7,8) (~113 rows a
-- prefix) and with c3's 16-bit ones (under one row)
CREATE TABLE c8 AS SELECT * FROM c3;
CREATE INDEX c8_fp ON c8 USING simhash (fp) WITH (bits = 7, blocks = 8);
ANALYZE c8;
CREATE FUNCTION index_cost_of(sql text, idx text) RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE j jsonb;
BEGIN
  EXECUTE 'EXPLAIN (FORMAT JSON) ' || sql INTO j;
  RETURN jsonb_path_query_first(j, 'strict $.**?(@."Index Name" == $i)."Total Cost"',
                                jsonb_build_object('i', idx))::float8;
END $$;
SET enable_seqscan = off;
SET simhash.sweep_cache_size = 0;
SELECT index_cost_of($$SELECT id FROM c8 WHERE simhash_within(fp, '0123456789abcdef', 6)$$, 'c8_fp') AS c8_none,
       index_cost_of($$SELECT id FROM c3 WHERE simhash_within(fp, '0123456789abcdef', 6)$$, 'c3_fp') AS c3_none \gset
SET simhash.sweep_cache_size = '64MB';
SELECT index_cost_of($$SELECT id FROM c8 WHERE simhash_within(fp, '0123456789abcdef', 6)$$, 'c8_fp') AS c8_kept,
       index_cost_of($$SELECT id FROM c3 WHERE simhash_within(fp, '0123456789abcdef', 6)$$, 'c3_fp') AS c3_kept \gset
SELECT :c8_kept < :c8_none AS c8_kept_cheaper, :c8_kept > 0 AS positive, :c3_kept < :c3_none AS c3_kept_cheaper;
RESET simhash.sweep_cache_size;
RESET enable_seqscan;
