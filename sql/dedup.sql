-- Deduplication recipes of the README: keep one row per near-duplicate
-- cluster (connected components, which chain), and the bounded variant that
-- removes only rows within the radius of a row that is kept.
CREATE TABLE docs (url text PRIMARY KEY, fp simhash);
-- a chain: each step flips 2 new bits, so a~b~c~d at radius 3 but a..d is 6 bits
INSERT INTO docs VALUES
  ('a', '0000000000000000'), ('b', '0000000000000003'), ('c', '000000000000000f'), ('d', '000000000000003f'),
  -- exact copies and a 1-bit edit of one page
  ('p1', 'ff00ff00ff00ff00'), ('p2', 'ff00ff00ff00ff00'), ('p3', 'ff00ff00ff00ff01'),
  -- a page with no neighbour, and one without a fingerprint
  ('solo', '0123456789abcdef'), ('nofp', NULL);
SELECT x.url, y.url, x.fp <~> y.fp AS bits FROM docs x JOIN docs y ON x.url < y.url
 WHERE x.fp <~> y.fp <= 6 ORDER BY 1, 2;

-- 1. one row per cluster: the first row (in url order) of every connected component
CREATE TABLE keep1 AS SELECT * FROM docs;
DELETE FROM keep1 WHERE url IN (
  SELECT url FROM (
    SELECT url, row_number() OVER w AS pos, simhash_cluster(fp, 3) OVER w AS cluster
      FROM keep1 WINDOW w AS (ORDER BY url)) s
   WHERE pos <> cluster);
-- 'd' is gone although it is 6 bits from 'a', the row kept for its cluster
SELECT url, fp FROM keep1 ORDER BY url;

-- 2. bounded: remove only rows within 3 bits of the row kept for their cluster,
-- and repeat until nothing is removed
CREATE TABLE keep2 AS SELECT * FROM docs;
DO $$
BEGIN
  LOOP
    DELETE FROM keep2 WHERE url IN (
      SELECT url FROM (
        SELECT url, pos, cluster, fp <~> first_value(fp) OVER (PARTITION BY cluster ORDER BY pos) AS bits
          FROM (SELECT url, fp, row_number() OVER w AS pos, simhash_cluster(fp, 3) OVER w AS cluster
                  FROM keep2 WINDOW w AS (ORDER BY url)) c) s
       WHERE pos <> cluster AND bits <= 3);
    EXIT WHEN NOT FOUND;
  END LOOP;
END $$;
SELECT url, fp FROM keep2 ORDER BY url;
-- no two kept rows within 3 bits; every removed row within 3 bits of a kept row
SELECT count(*) AS near_pairs_left FROM keep2 x JOIN keep2 y ON x.url < y.url AND x.fp <~> y.fp <= 3;
SELECT d.url AS removed, (SELECT min(d.fp <~> k.fp) FROM keep2 k) AS bits_to_nearest_kept
  FROM docs d WHERE d.url NOT IN (SELECT url FROM keep2) ORDER BY 1;

-- the same on planted data: 2,000 random rows, 500 near copies 1..3 bits away
CREATE TABLE big (id int PRIMARY KEY, fp simhash);
INSERT INTO big SELECT i, ('x' || md5(i::text))::bit(64)::simhash FROM generate_series(1, 2000) i;
INSERT INTO big SELECT 2000 + i,
       (('x' || md5((1 + i * 7 % 2000)::text))::bit(64)::bigint # ((1::bigint << (i % 64)) | (1::bigint << (i * 3 % 64))))::simhash
  FROM generate_series(1, 500) i;
CREATE TABLE big_kept AS SELECT * FROM big;
DO $$
BEGIN
  LOOP
    DELETE FROM big_kept WHERE id IN (
      SELECT id FROM (
        SELECT id, pos, cluster, fp <~> first_value(fp) OVER (PARTITION BY cluster ORDER BY pos) AS bits
          FROM (SELECT id, fp, row_number() OVER w AS pos, simhash_cluster(fp, 3) OVER w AS cluster
                  FROM big_kept WINDOW w AS (ORDER BY id)) c) s
       WHERE pos <> cluster AND bits <= 3);
    EXIT WHEN NOT FOUND;
  END LOOP;
END $$;
SELECT count(*) AS kept,
       (SELECT count(*) FROM big_kept x JOIN big_kept y ON x.id < y.id AND x.fp <~> y.fp <= 3) AS near_pairs_left,
       (SELECT count(*) FROM big b WHERE b.id NOT IN (SELECT id FROM big_kept)
           AND NOT EXISTS (SELECT FROM big_kept k WHERE k.fp <~> b.fp <= 3)) AS removed_far_from_kept,
       (SELECT count(*) FROM big_kept WHERE id <= 2000) AS originals_kept
  FROM big_kept;
DROP TABLE docs, keep1, keep2, big, big_kept;
