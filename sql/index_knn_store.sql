-- Run directories kept by a backend across scans (src/am/dirstore.c): the
-- second KNN query of a session reads no directory page, and every answer
-- stays equal to a sequential scan's (distance, then ctid) while the index
-- changes under the kept copies: new runs and merges, REINDEX of other rows
-- (same OID, the same generations again), DROP and CREATE, TRUNCATE, and
-- directories evicted from a store too small for them all.
SET client_min_messages = warning;
SET jit = off;
SET max_parallel_workers_per_gather = 0;
-- KNN through its probe steps (at 50,000 rows it would sweep from the start)
SET simhash.debug_sweep = never;
-- directories only: no keys kept (probes that read a whole run would keep
-- them, and the pages of keeping them would count in the blocks below)
SET simhash.sweep_cache_size = 0;
CREATE TABLE ds (id int, fp simhash) WITH (autovacuum_enabled = off);
INSERT INTO ds SELECT i, ('x' || md5(i::text))::bit(64)::simhash FROM generate_series(1, 50000) i;
CREATE INDEX ds_fp ON ds USING simhash (fp) WITH (bits = 3, blocks = 4);
CREATE TABLE dsq AS SELECT i AS qid, ('x' || md5('store q' || i))::bit(64)::simhash AS q
  FROM generate_series(1, 6) i;
INSERT INTO dsq SELECT 10 + row_number() OVER (ORDER BY id), fp FROM ds WHERE id IN (7, 7000, 49999);

-- The index's blocks read by one KNN query (its plan node's buffer counts).
CREATE FUNCTION knn_index_blocks(tab text, q simhash) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE plan json;
BEGIN
  PERFORM set_config('enable_seqscan', 'off', true);
  EXECUTE format('EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF, FORMAT JSON) '
                 'SELECT id FROM %I ORDER BY fp <~> %L LIMIT 10', tab, q) INTO plan;
  -- Limit -> Index Scan: the scan node's blocks, heap pages included
  RETURN (plan->0->'Plan'->'Plans'->0->>'Shared Hit Blocks')::bigint +
         (plan->0->'Plan'->'Plans'->0->>'Shared Read Blocks')::bigint;
END $$;

-- LIMIT 10 and 200 through the index against a sequential scan, every query.
CREATE FUNCTION store_mismatches(tab text) RETURNS TABLE (checked int, mismatches int)
LANGUAGE plpgsql AS $$
DECLARE qr record; k int; got int[]; want int[];
BEGIN
  checked := 0; mismatches := 0;
  FOR qr IN SELECT q FROM dsq ORDER BY qid LOOP
    FOREACH k IN ARRAY ARRAY[10, 200] LOOP
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

-- One run of 4 tables, each directory one page: the same query again reads
-- those 4 pages fewer (the first query of the session copied them).
SELECT generation, pages FROM simhash_index_runs('ds_fp') WHERE kind = 'run';
CREATE TEMP TABLE first_read AS SELECT knn_index_blocks('ds', (SELECT q FROM dsq WHERE qid = 1)) AS n;
SELECT n - knn_index_blocks('ds', (SELECT q FROM dsq WHERE qid = 1)) AS directory_pages_not_read_again
  FROM first_read;
SELECT * FROM store_mismatches('ds');

-- REINDEX on other rows: the same OID and the same generation for the new
-- run, whose directories lie at the same blocks; the kept copies list the
-- old rows' pages.  The new rows have the first bit of every 16-bit block
-- set, so that a kept copy would send a probe past the page of its prefix.
DELETE FROM ds;
INSERT INTO ds SELECT i, (('x' || md5('other' || i))::bit(64)::bigint | x'8000800080008000'::bigint)::simhash
  FROM generate_series(1, 50000) i;
REINDEX INDEX ds_fp;
SELECT generation, pages FROM simhash_index_runs('ds_fp') WHERE kind = 'run';
-- queries with rows 0 to 12 bits away, which the first probe steps return
UPDATE dsq SET q = ((SELECT fp FROM ds WHERE id = dsq.qid * 1000)::bigint # ((1::bigint << (qid % 13)) - 1))::simhash;
SELECT * FROM store_mismatches('ds');

-- New runs (flushes of the pending buffer), then VACUUM's merges
INSERT INTO ds SELECT 100000 + i, ('x' || md5('late' || i))::bit(64)::simhash FROM generate_series(1, 3000) i;
SELECT count(*) FILTER (WHERE kind = 'run') > 1 AS several_runs FROM simhash_index_runs('ds_fp');
SELECT * FROM store_mismatches('ds');
DELETE FROM ds WHERE id % 3 = 0;
VACUUM ds;
SELECT * FROM store_mismatches('ds');

-- DROP and CREATE, then TRUNCATE and new rows
DROP INDEX ds_fp;
CREATE INDEX ds_fp ON ds USING simhash (fp) WITH (bits = 3, blocks = 4);
SELECT * FROM store_mismatches('ds');
TRUNCATE ds;
INSERT INTO ds SELECT i, ('x' || md5('third' || i))::bit(64)::simhash FROM generate_series(1, 20000) i;
VACUUM ds;
SELECT * FROM store_mismatches('ds');

-- A store too small for two indexes' directories (a quarter of work_mem:
-- 16 kB; each index's 4 directories take 11 kB): queries on both, in turn
-- and interleaved in one join, evict each other's directories.
INSERT INTO ds SELECT 200000 + i, ('x' || md5('more' || i))::bit(64)::simhash FROM generate_series(1, 80000) i;
REINDEX INDEX ds_fp;
CREATE TABLE ds2 AS SELECT id + 1 AS id, fp FROM ds;
CREATE INDEX ds2_fp ON ds2 USING simhash (fp) WITH (bits = 3, blocks = 4);
SET work_mem = '64kB';
SELECT * FROM store_mismatches('ds');
SELECT * FROM store_mismatches('ds2');
SELECT * FROM store_mismatches('ds');
SET enable_seqscan = off;
CREATE TEMP TABLE joined AS
  SELECT qid, a.ids AS a_ids, b.ids AS b_ids
    FROM dsq,
         LATERAL (SELECT array_agg(id) AS ids FROM (SELECT id FROM ds ORDER BY fp <~> q LIMIT 50) s) a,
         LATERAL (SELECT array_agg(id - 1) AS ids FROM (SELECT id FROM ds2 ORDER BY fp <~> q LIMIT 50) s) b;
RESET enable_seqscan;
SELECT count(*) AS queries,
       count(*) FILTER (WHERE a_ids IS DISTINCT FROM
         (SELECT array_agg(id) FROM (SELECT id FROM ds ORDER BY fp <~> q, ctid LIMIT 50) s)) AS mismatches_ds,
       count(*) FILTER (WHERE a_ids IS DISTINCT FROM b_ids) AS ds2_differs
  FROM joined JOIN dsq USING (qid);
RESET work_mem;
-- a temporary table's index: its pages are in local buffers
CREATE TEMP TABLE dst AS SELECT id, fp FROM ds WHERE id % 2 = 0;
CREATE INDEX dst_fp ON dst USING simhash (fp);
SELECT * FROM store_mismatches('dst');
SELECT * FROM store_mismatches('dst');
DROP TABLE ds, ds2, dsq, dst;
