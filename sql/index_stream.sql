-- Streamed scans: a radius (or full) index scan returns its rows in batches
-- (the first of 1,000 hits, each next one continuing where the last stopped),
-- so every answer here spans several batches: many equal fingerprints, wide
-- radii (probes and full passes), rows in runs and in the pending buffer,
-- deletes before and after VACUUM.  Every answer must equal the sequential
-- scan's (count, sum of ids, distinct ids), for index-only, index and bitmap
-- scans, at a small work_mem.
SET client_min_messages = warning;
SET jit = off;
SET max_parallel_workers_per_gather = 0;
SET work_mem = '64kB';

CREATE TABLE st (id int, fp simhash) WITH (autovacuum_enabled = off);
-- 4,000 equal fingerprints, 3,000 within 1..4 bits of them, 5,000 random
INSERT INTO st SELECT i, '0123456789abcdef' FROM generate_series(1, 4000) i;
INSERT INTO st SELECT 10000 + i,
    ('0123456789abcdef'::simhash::bigint # (1::bigint << (i % 64)) # (((i / 64) % 4)::bigint << 20))::simhash
  FROM generate_series(1, 3000) i;
INSERT INTO st SELECT 20000 + i, ('x' || md5(i::text))::bit(64)::simhash FROM generate_series(1, 5000) i;
CREATE INDEX st_fp ON st USING simhash (fp) WITH (bits = 3, blocks = 5, pending_pages = 8);
-- rows in the pending buffer (equal and near ones)
INSERT INTO st SELECT 30000 + i, '0123456789abcdef' FROM generate_series(1, 1500) i;
INSERT INTO st SELECT 40000 + i, ('0123456789abcdef'::simhash::bigint # (3::bigint << (i % 60)))::simhash
  FROM generate_series(1, 500) i;
VACUUM ANALYZE st;

-- the answers of radius r by a scan type (dynamic SQL: planned at each call),
-- and the truth by the distance function (no index can answer it)
CREATE FUNCTION answers(r int, how text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE res text; plan text; line text; q text;
BEGIN
  PERFORM set_config('enable_seqscan', 'off', true);
  PERFORM set_config('enable_indexscan', (how IN ('index', 'indexonly'))::text, true);
  PERFORM set_config('enable_indexonlyscan', (how = 'indexonly')::text, true);
  PERFORM set_config('enable_bitmapscan', (how = 'bitmap')::text, true);
  q := format('FROM st WHERE fp %%@ simhash_query(%L::simhash, %s)', '0123456789abcdef', r);
  q := CASE WHEN how = 'indexonly'
            THEN 'SELECT format(''%s rows, %s distinct fp'', count(*), count(DISTINCT fp)) FROM (SELECT fp ' || q || ') s'
            ELSE 'SELECT format(''%s rows, %s distinct fp, ids %s, %s distinct'', count(*), count(DISTINCT fp), sum(id), count(DISTINCT id)) ' || q END;
  FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
    IF line ~ 'Scan' AND plan IS NULL THEN plan := trim(split_part(line, ' on ', 1)); END IF;
  END LOOP;
  EXECUTE q INTO res;
  RETURN plan || ': ' || res;
END $$;
CREATE FUNCTION truth(r int, how text) RETURNS text LANGUAGE sql AS $$
  SELECT CASE WHEN how = 'indexonly'
              THEN format('%s rows, %s distinct fp', count(*), count(DISTINCT fp))
              ELSE format('%s rows, %s distinct fp, ids %s, %s distinct', count(*), count(DISTINCT fp), sum(id), count(DISTINCT id)) END
    FROM st WHERE simhash_distance(fp, '0123456789abcdef') <= r
$$;

CREATE TABLE radii (r int);
INSERT INTO radii VALUES (0), (2), (4), (12), (40);
CREATE VIEW check_all AS
SELECT r, how, split_part(answers(r, how), ': ', 1) AS plan,
       split_part(answers(r, how), ': ', 2) = truth(r, how) AS equal
  FROM radii, unnest(ARRAY['indexonly', 'index', 'bitmap']) how;

SELECT r, truth(r, 'index') FROM radii ORDER BY r;
SELECT * FROM check_all ORDER BY r, how;

-- deletes: before VACUUM (dead entries still in the index), then after it
DELETE FROM st WHERE id % 3 = 0;
SELECT r, truth(r, 'index') FROM radii ORDER BY r;
SELECT * FROM check_all WHERE NOT equal;
VACUUM st;
SELECT * FROM check_all WHERE NOT equal;

-- KNN over the same rows at work_mem 64kB: 3,683 rows at distance 0 overflow
-- the first step's band (at most half of work_mem in rows), which then comes
-- in bounded passes; the whole order equals a sort by (distance, ctid)
SET enable_seqscan = off; SET enable_bitmapscan = off;
CREATE TEMP TABLE k_idx AS SELECT row_number() OVER () AS n, d, id
  FROM (SELECT fp <~> '0123456789abcdef' AS d, id FROM st ORDER BY fp <~> '0123456789abcdef') s;
RESET enable_seqscan; SET enable_indexscan = off;
CREATE TEMP TABLE k_seq AS SELECT row_number() OVER (ORDER BY d, ctid) AS n, d, id
  FROM (SELECT fp <~> '0123456789abcdef' AS d, id, ctid FROM st) s;
RESET enable_indexscan; RESET enable_bitmapscan;
SELECT (SELECT count(*) FROM k_idx) AS knn_rows, (SELECT count(*) FROM k_seq) AS rows,
       (SELECT count(*) FROM k_idx i JOIN k_seq s USING (n) WHERE i.d <> s.d OR i.id <> s.id) AS mismatches;
-- and a KNN cursor that fetched one row holds one band batch (half of
-- work_mem in rows, plus the scan's fixed state: 112 kB), not the band (256 kB)
BEGIN;
SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off;
DECLARE c0 CURSOR FOR SELECT fp FROM st ORDER BY fp <~> '0123456789abcdef';
FETCH 1 FROM c0;
SELECT count(*) AS scans, max(total_bytes) < 160 * 1024 AS bounded_band
  FROM pg_backend_memory_contexts WHERE name = 'simhash scan';
COMMIT;

-- memory: a cursor that has fetched one row of 4,000+ equal fingerprints
-- holds one batch (1,000 hits of 24 bytes), not every hit; a bitmap scan
-- holds no hits at all (they went into the bitmap)
BEGIN;
SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off;
DECLARE c1 CURSOR FOR SELECT fp FROM st WHERE fp %@ simhash_query('0123456789abcdef'::simhash, 0);
FETCH 1 FROM c1;
SELECT count(*) AS scans, max(total_bytes) < 64 * 1024 AS one_batch
  FROM pg_backend_memory_contexts WHERE name = 'simhash scan';
COMMIT;
BEGIN;
SET LOCAL enable_seqscan = off; SET LOCAL enable_indexscan = off;
DECLARE c2 CURSOR FOR SELECT fp FROM st WHERE fp %@ simhash_query('0123456789abcdef'::simhash, 0);
FETCH 1 FROM c2;
SELECT count(*) AS scans, max(total_bytes) < 64 * 1024 AS no_hit_array
  FROM pg_backend_memory_contexts WHERE name = 'simhash scan';
COMMIT;

DROP TABLE st, radii CASCADE;
DROP FUNCTION answers(int, text), truth(int, text);
