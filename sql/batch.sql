-- Batch analytics: simhash_find_all, simhash_find_clusters, simhash_cluster.
-- Hand-checked distances: 1-3: 1, 1-7: 2, 1-401: 1, 3-7: 1, 3-401: 2,
-- 7-401: 3 (hex 401 = 1025); positions 2 and 6 are both 3 (distance 0).
SELECT * FROM simhash_find_all(ARRAY['1', '3', '7', NULL, '401', '3']::simhash[], 1);
SELECT * FROM simhash_find_all(ARRAY[1, 3, 7, NULL, 1025, 3]::bigint[], 2);
SELECT * FROM simhash_find_all(ARRAY['1', '3', '7', NULL, '401', '3']::simhash[], 0);
SELECT count(*) AS all_pairs FROM simhash_find_all(ARRAY['0', 'ffffffffffffffff', '1']::simhash[], 64);
-- Empty and degenerate inputs; STRICT: a NULL argument gives no rows.
SELECT count(*) FROM simhash_find_all('{}'::simhash[], 3);
SELECT count(*) FROM simhash_find_all(ARRAY[NULL, NULL]::simhash[], 3);
SELECT count(*) FROM simhash_find_all(ARRAY['5']::simhash[], 3);
SELECT count(*) FROM simhash_find_all(NULL::simhash[], 3);
SELECT count(*) FROM simhash_find_all(ARRAY['5']::simhash[], NULL);
-- Ordinal positions, whatever the lower bound.
SELECT * FROM simhash_find_all('[0:2]={1,3,255}'::bigint[], 1);

-- Clusters: {1, 3, 7, 401, 3} at distance 1 is one chain; ff is alone.
SELECT * FROM simhash_find_clusters(ARRAY['1', '3', 'ff', '7', NULL, '401', '3']::simhash[], 1);
SELECT * FROM simhash_find_clusters(ARRAY[1, 1024, 3]::bigint[], 1);
SELECT count(*) FROM simhash_find_clusters('{}'::bigint[], 1);

-- Errors.
SELECT * FROM simhash_find_all(ARRAY['1']::simhash[], -1);
SELECT * FROM simhash_find_all(ARRAY['1']::simhash[], 65);
SELECT * FROM simhash_find_clusters(ARRAY[1]::bigint[], 100);
SELECT * FROM simhash_find_all('{{1,2},{3,4}}'::bigint[], 1);
\set VERBOSITY sqlstate
SELECT * FROM simhash_find_all(ARRAY['1']::simhash[], 65);
\set VERBOSITY default

-- Against an independent scan: a self-join on <~> over 3000 fingerprints,
-- a third of them near copies (1..4 bits flipped) of others.
CREATE TEMP TABLE fp_set AS
WITH base AS (
    SELECT i, (hashint8(i)::bigint << 32 | (hashint8(-i)::bigint & 4294967295)) AS h
      FROM generate_series(1, 2000) i
), copies AS (
    SELECT 2000 + j AS i,
           (SELECT h FROM base WHERE i = 1 + (abs(hashint4(j)) % 2000))
             # (1::bigint << (abs(hashint4(j * 3)) % 64))
             # CASE WHEN j % 2 = 0 THEN (1::bigint << (abs(hashint4(j * 5)) % 64)) ELSE 0 END
             # CASE WHEN j % 3 = 0 THEN (1::bigint << (abs(hashint4(j * 7)) % 64)) ELSE 0 END
             # CASE WHEN j % 5 = 0 THEN (1::bigint << (abs(hashint4(j * 11)) % 64)) ELSE 0 END AS h
      FROM generate_series(1, 1000) j
)
SELECT i, h FROM base UNION ALL SELECT i, h FROM copies;
CREATE TEMP TABLE fp_arr AS SELECT array_agg(h::simhash ORDER BY i) AS fps FROM fp_set;
SELECT d, (SELECT count(*) FROM simhash_find_all((SELECT fps FROM fp_arr), d)) AS pairs,
       (SELECT count(*) FROM fp_set x JOIN fp_set y ON x.i < y.i AND x.h <~> y.h <= d) AS scan_pairs,
       (SELECT count(*) FROM (
            (SELECT * FROM simhash_find_all((SELECT fps FROM fp_arr), d)
             EXCEPT
             SELECT x.i, y.i, x.h <~> y.h FROM fp_set x JOIN fp_set y ON x.i < y.i AND x.h <~> y.h <= d)
            UNION ALL
            (SELECT x.i, y.i, x.h <~> y.h FROM fp_set x JOIN fp_set y ON x.i < y.i AND x.h <~> y.h <= d
             EXCEPT
             SELECT * FROM simhash_find_all((SELECT fps FROM fp_arr), d))) diff) AS differences
  FROM generate_series(0, 4) d;
-- rows come out in (a, b) order
SELECT bool_and(ord_ok) AS ordered FROM (
    SELECT (a, b) > lag((a, b)) OVER () OR lag(a) OVER () IS NULL AS ord_ok
      FROM simhash_find_all((SELECT fps FROM fp_arr), 3)) s;

-- The window function: one id per connected component within a partition,
-- the 1-based position (in window order) of the component's first row.
CREATE TEMP TABLE pages (site text, url text, fp simhash);
INSERT INTO pages VALUES
    ('a', 'a/1', '1'), ('a', 'a/2', 'ff00'), ('a', 'a/3', '3'), ('a', 'a/4', NULL),
    ('a', 'a/5', '7'), ('a', 'a/6', 'ff01'), ('a', 'a/7', '1'), ('a', 'a/8', 'f0f0f0'),
    ('b', 'b/1', 'ff00'), ('b', 'b/2', 'ffff'), ('b', 'b/3', 'ff01'),
    ('c', 'c/1', NULL);
SELECT site, url, fp, simhash_cluster(fp, 1) OVER (PARTITION BY site ORDER BY url) AS cluster
  FROM pages ORDER BY site, url;
-- Another order gives other positions, same grouping.
SELECT site, url, simhash_cluster(fp, 1) OVER (PARTITION BY site ORDER BY url DESC) AS cluster
  FROM pages ORDER BY site, url;
-- bigint variant, a whole-table window, a frame (ignored), NULL max_distance.
SELECT url, simhash_cluster(fp::bigint, 0) OVER (ORDER BY url) AS c0,
       simhash_cluster(fp, 8) OVER (ORDER BY url ROWS BETWEEN CURRENT ROW AND CURRENT ROW) AS c8,
       simhash_cluster(fp, NULL) OVER (ORDER BY url) AS cnull
  FROM pages ORDER BY url;
-- Empty input.
SELECT simhash_cluster(fp, 3) OVER () FROM pages WHERE false;
-- The README's examples.
WITH s AS (SELECT array_agg(fp ORDER BY url) AS fps, array_agg(url ORDER BY url) AS urls FROM pages)
SELECT s.urls[f.a] AS url_a, s.urls[f.b] AS url_b, f.distance
  FROM s, simhash_find_all(s.fps, 1) f;
SELECT site, cluster, count(*) FROM (
    SELECT site, simhash_cluster(fp, 3) OVER (PARTITION BY site ORDER BY url) AS cluster FROM pages) s
 GROUP BY 1, 2 HAVING count(*) > 1 ORDER BY 3 DESC, 1, 2;
-- Errors: out of range, and a distance that changes within a partition.
SELECT simhash_cluster(fp, 65) OVER () FROM pages;
SELECT simhash_cluster(fp, CASE WHEN url = 'b/2' THEN 2 ELSE 1 END) OVER () FROM pages;
SELECT simhash_cluster(fp, CASE WHEN url = 'a/3' THEN NULL ELSE 1 END) OVER (PARTITION BY site) FROM pages;
-- ... but constant within each partition is enough.
SELECT url, simhash_cluster(fp, CASE WHEN site = 'a' THEN 1 ELSE 8 END) OVER (PARTITION BY site ORDER BY url)
  FROM pages ORDER BY url;

-- The window function agrees with simhash_find_clusters on the 3000 set.
WITH w AS (
    SELECT i, simhash_cluster(h::simhash, 3) OVER (ORDER BY i) AS c FROM fp_set
), f AS (
    SELECT member, cluster FROM simhash_find_clusters((SELECT fps FROM fp_arr), 3)
)
SELECT count(*) AS rows, count(*) FILTER (WHERE w.c = coalesce(f.cluster, w.i)) AS agree,
       count(DISTINCT w.c) FILTER (WHERE f.cluster IS NOT NULL) AS clusters
  FROM w LEFT JOIN f ON f.member = w.i;

-- Long computations honour cancellation (here a statement timeout): 200000
-- hashes at distance 40 test all 2*10^10 pairs, far longer than the timeout.
SET work_mem = '64MB';
SET statement_timeout = '2s';
SELECT count(*) FROM simhash_find_all(
    ARRAY(SELECT hashint8(i)::bigint << 32 | i FROM generate_series(1, 200000) i), 40);
SELECT max(c) FROM (
    SELECT simhash_cluster(hashint8(i)::bigint << 32 | i, 40) OVER () AS c
      FROM generate_series(1, 200000) i) s;
RESET statement_timeout;
RESET work_mem;
SELECT 'still usable' AS after_cancel, count(*) FROM simhash_find_all(ARRAY[1, 3]::bigint[], 1);

-- Working memory stays within work_mem.  The core's need is known from the
-- number of fingerprints: beyond work_mem, the call fails before it starts
-- (53200, with the work_mem it would take).
\set VERBOSITY sqlstate
SET work_mem = '1MB';
SELECT count(*) FROM simhash_find_all(array_fill('1'::simhash, ARRAY[100000]), 0);
SELECT count(*) FROM simhash_find_clusters(array_fill('1'::simhash, ARRAY[100000]), 0);
SELECT count(DISTINCT c) FROM (
    SELECT simhash_cluster('1'::simhash, 0) OVER () AS c FROM generate_series(1, 100000)) s;
\set VERBOSITY default
SELECT count(*) FROM simhash_find_all(array_fill('1'::simhash, ARRAY[100000]), 0);
-- 5000 fingerprints fit in 1 MB
SELECT count(*) FROM simhash_find_clusters(array_fill('1'::simhash, ARRAY[5000]), 0);
-- Within work_mem, the pairs are streamed into the result, which spills to
-- disk: 100000 equal fingerprints make 5*10^9 pairs, which meet
-- temp_file_limit (53400) or a statement timeout (57014) long before memory
-- could grow, and the session carries on.
SET work_mem = '64MB';
SET temp_file_limit = '10MB';
\set VERBOSITY sqlstate
SELECT count(*) FROM simhash_find_all(array_fill('1'::simhash, ARRAY[100000]), 0);
RESET temp_file_limit;
SET statement_timeout = '1s';
SELECT count(*) FROM simhash_find_all(array_fill('1'::simhash, ARRAY[100000]), 0);
RESET statement_timeout;
\set VERBOSITY default
-- The clusters of the same input fit: one cluster of 100000.
SELECT count(*), count(DISTINCT cluster) FROM simhash_find_clusters(array_fill('1'::simhash, ARRAY[100000]), 0);
SELECT count(DISTINCT c) FROM (
    SELECT simhash_cluster('1'::simhash, 0) OVER () AS c FROM generate_series(1, 100000)) s;
RESET work_mem;
