-- simhash_pairs and simhash_clusters on plain and partitioned tables, against
-- a naive self-join on <~> and components found by a recursive walk.
--
-- 1200 rows: 400 random centres, each with two copies 1..5 bits away, plus
-- exact duplicates; keys are text with characters that need quoting, and the
-- key order is "C" (byte) order.
CREATE TABLE "Pages ""x""" ("Key col" text, "fp col" simhash, h bigint, part int);
INSERT INTO "Pages ""x"""
SELECT format('k-%s', lpad(i::text, 5, '0')) || CASE WHEN i % 7 = 0 THEN 'Z' ELSE 'a' END,
       v::simhash, v, i % 3
  FROM (SELECT i, (hashint8(i / 3)::bigint << 32 | (hashint8(-(i / 3))::bigint & 4294967295))
                  # CASE i % 3 WHEN 0 THEN 0::bigint
                               WHEN 1 THEN (1::bigint << (abs(hashint4(i)) % 64))
                               ELSE (31::bigint << (abs(hashint4(i)) % 59)) END AS v
          FROM generate_series(1, 1200) i) s;
-- an exact duplicate of a row, a NULL fingerprint and a NULL key
INSERT INTO "Pages ""x""" SELECT 'dup', "fp col", h, 1 FROM "Pages ""x""" WHERE "Key col" = 'k-00004a';
INSERT INTO "Pages ""x""" VALUES ('nullfp', NULL, NULL, 1), (NULL, '0123456789abcdef', 81985529216486895, 2);

CREATE TEMP TABLE naive AS
SELECT a."Key col" AS key_a, b."Key col" AS key_b, (a."fp col" <~> b."fp col") AS distance
  FROM "Pages ""x""" a JOIN "Pages ""x""" b ON a."Key col" COLLATE "C" < b."Key col" COLLATE "C";
ANALYZE naive;

-- Each radius, each path (in memory under the default work_mem; streaming
-- per-table joins when work_mem is small), simhash and bigint columns:
-- the differences with the naive join, both ways, and the pair count.
CREATE FUNCTION pairs_diff(fp name, r int) RETURNS TABLE (missing bigint, extra bigint, pairs bigint)
LANGUAGE sql AS $$
    WITH p AS (SELECT * FROM simhash_pairs('"Pages ""x"""', fp, 'Key col', r)),
         n AS (SELECT * FROM naive WHERE distance <= r)
    SELECT (SELECT count(*) FROM (SELECT * FROM n EXCEPT ALL SELECT * FROM p) s),
           (SELECT count(*) FROM (SELECT * FROM p EXCEPT ALL SELECT * FROM n) s),
           (SELECT count(*) FROM p)
$$;
SELECT r, d.* FROM generate_series(0, 6) r, pairs_diff('fp col', r) d;
SELECT r, d.* FROM (VALUES (3), (20), (24)) v(r), pairs_diff('h', r) d;
-- radius 64: every pair of the 1201 rows with a key and a fingerprint
SELECT count(*) = 1201 * 1200 / 2 AS all_pairs FROM simhash_pairs('"Pages ""x"""', 'h', 'Key col', 64);
SET work_mem = '64kB';
SELECT r, d.* FROM generate_series(0, 6) r, pairs_diff('fp col', r) d;
SELECT r, d.* FROM (VALUES (3), (20)) v(r), pairs_diff('h', r) d;
RESET work_mem;

-- Near the in-memory limit: for 1000 rows at work_mem 64kB simhash_find_all
-- needs more than work_mem and refuses; the per-table joins answer instead.
CREATE TEMP VIEW first_1000 AS SELECT * FROM "Pages ""x""" WHERE "Key col" < 'k-01000';
SET work_mem = '64kB';
SELECT count(*) AS differences FROM (
    (SELECT * FROM simhash_pairs('first_1000', 'fp col', 'Key col', 5)
     EXCEPT ALL SELECT n.* FROM naive n JOIN first_1000 a ON a."Key col" = n.key_a JOIN first_1000 b ON b."Key col" = n.key_b WHERE n.distance <= 5)
    UNION ALL
    (SELECT n.* FROM naive n JOIN first_1000 a ON a."Key col" = n.key_a JOIN first_1000 b ON b."Key col" = n.key_b WHERE n.distance <= 5
     EXCEPT ALL SELECT * FROM simhash_pairs('first_1000', 'fp col', 'Key col', 5))) s;
RESET work_mem;
DROP VIEW first_1000;

-- The joins run without hash joins, and the caller's setting comes back.
BEGIN;
SET LOCAL work_mem = '64kB';
SELECT count(*) FROM simhash_pairs('"Pages ""x"""', 'fp col', 'Key col', 3);
SHOW enable_hashjoin;
COMMIT;
SET enable_hashjoin = off;
SET work_mem = '64kB';
SELECT count(*) FROM simhash_pairs('"Pages ""x"""', 'fp col', 'Key col', 3);
SHOW enable_hashjoin;
RESET enable_hashjoin;
RESET work_mem;

-- Orientation, keys as text, distances.
SELECT * FROM simhash_pairs('"Pages ""x"""', 'fp col', 'Key col', 0) ORDER BY 1, 2 LIMIT 5;
SELECT bool_and(key_a COLLATE "C" < key_b COLLATE "C") AS oriented,
       count(*) = count(DISTINCT (key_a, key_b)) AS once
  FROM simhash_pairs('"Pages ""x"""', 'fp col', 'Key col', 5);

-- A partitioned table: pairs across partitions too, and equal to the plain
-- table's; an integer key is compared as text.
CREATE TABLE parts (id int, fp simhash, part int) PARTITION BY LIST (part);
CREATE TABLE parts_0 PARTITION OF parts FOR VALUES IN (0);
CREATE TABLE parts_1 PARTITION OF parts FOR VALUES IN (1);
CREATE TABLE parts_2 PARTITION OF parts FOR VALUES IN (2);
INSERT INTO parts SELECT row_number() OVER (ORDER BY "Key col"), "fp col", part
  FROM "Pages ""x""" WHERE "Key col" LIKE 'k-%';
CREATE INDEX ON parts USING simhash (fp);
CREATE TEMP VIEW parts_naive AS
SELECT a.id::text AS key_a, b.id::text AS key_b, a.fp <~> b.fp AS distance
  FROM parts a JOIN parts b ON a.id::text COLLATE "C" < b.id::text COLLATE "C" AND a.fp <~> b.fp <= 4;
SELECT count(*) AS pairs, count(*) FILTER (WHERE a.part <> b.part) AS across_partitions
  FROM simhash_pairs('parts', 'fp', 'id', 4) p
  JOIN parts a ON a.id::text = p.key_a JOIN parts b ON b.id::text = p.key_b;
SELECT count(*) AS differences FROM (
    (SELECT * FROM simhash_pairs('parts', 'fp', 'id', 4) EXCEPT ALL SELECT * FROM parts_naive)
    UNION ALL
    (SELECT * FROM parts_naive EXCEPT ALL SELECT * FROM simhash_pairs('parts', 'fp', 'id', 4))) s;
SET work_mem = '64kB';
SELECT count(*) AS differences FROM (
    (SELECT * FROM simhash_pairs('parts', 'fp', 'id', 4) EXCEPT ALL SELECT * FROM parts_naive)
    UNION ALL
    (SELECT * FROM parts_naive EXCEPT ALL SELECT * FROM simhash_pairs('parts', 'fp', 'id', 4))) s;
RESET work_mem;

-- Clusters: connected components of the naive pairs by a recursive walk,
-- each named by its smallest key ("C" order).
CREATE FUNCTION clusters_diff(rel regclass, fp name, keycol name, r int) RETURNS TABLE (missing bigint, extra bigint, members bigint, clusters bigint)
LANGUAGE plpgsql AS $$
BEGIN
    CREATE TEMP TABLE e ON COMMIT DROP AS
        SELECT n.key_a AS a, n.key_b AS b FROM naive n WHERE n.distance <= r;
    INSERT INTO e SELECT e.b, e.a FROM e;
    RETURN QUERY
    WITH RECURSIVE reach(k, c) AS (
        SELECT e.a, e.a FROM e
        UNION
        SELECT reach.k, e.b FROM reach JOIN e ON e.a = reach.c
    ), want AS (SELECT reach.k, min(reach.c COLLATE "C") AS c FROM reach GROUP BY reach.k),
       got AS (SELECT * FROM simhash_clusters(rel, fp, keycol, r))
    SELECT (SELECT count(*) FROM (SELECT * FROM want EXCEPT SELECT * FROM got) s),
           (SELECT count(*) FROM (SELECT * FROM got EXCEPT SELECT * FROM want) s),
           (SELECT count(*) FROM got), (SELECT count(DISTINCT got.cluster) FROM got);
    DROP TABLE e;
END
$$;
SELECT r, d.* FROM (VALUES (0), (2), (5), (12)) v(r), clusters_diff('"Pages ""x"""', 'fp col', 'Key col', r) d;
SET work_mem = '64kB';
SELECT r, d.* FROM (VALUES (5)) v(r), clusters_diff('"Pages ""x"""', 'h', 'Key col', r) d;
RESET work_mem;
SELECT * FROM simhash_clusters('"Pages ""x"""', 'fp col', 'Key col', 0) ORDER BY 2, 1;

-- Errors: radius, columns, column type, privileges.
\set SHOW_CONTEXT never
SELECT * FROM simhash_pairs('parts', 'fp', 'id', -1);
SELECT * FROM simhash_pairs('parts', 'fp', 'id', 65);
SELECT * FROM simhash_pairs('parts', 'nope', 'id', 3);
SELECT * FROM simhash_pairs('parts', 'fp', 'nope', 3);
SELECT * FROM simhash_pairs('parts', 'part', 'id', 3);
SELECT * FROM simhash_clusters('parts', 'id', 'fp', 3);
CREATE ROLE simhash_pairs_reader;
GRANT SELECT (id) ON parts TO simhash_pairs_reader;
SET ROLE simhash_pairs_reader;
SELECT * FROM simhash_pairs('parts', 'fp', 'id', 3);
RESET ROLE;
GRANT SELECT (fp) ON parts TO simhash_pairs_reader;
SET ROLE simhash_pairs_reader;
-- column rights suffice; the partitions are read through the parent
SELECT count(*) FROM simhash_pairs('parts', 'fp', 'id', 3);
RESET ROLE;
DROP OWNED BY simhash_pairs_reader;
DROP ROLE simhash_pairs_reader;
\set SHOW_CONTEXT errors
-- STRICT: a NULL argument gives no rows
SELECT count(*) FROM simhash_pairs('parts', 'fp', 'id', NULL);

-- The prefix masks: distance 0 is the whole fingerprint, a huge radius one
-- group; otherwise C(blocks, radius) tables whose masks cover blocks - radius
-- blocks each (more tables and wider prefixes for more rows).
SELECT simhash_prefix_masks(0, 1000), simhash_prefix_masks(40, 1000);
SELECT r, n, cardinality(m) AS tables, min(bit_count(x::bit(64))) AS min_bits, max(bit_count(x::bit(64))) AS max_bits
  FROM (VALUES (1, 1000), (3, 1000), (3, 1000000), (3, 8000000000), (6, 100000000)) v(r, n),
       simhash_prefix_masks(r, n) m, unnest(m) x
 GROUP BY r, n, m ORDER BY 1, 2;
SELECT simhash_prefix_masks(-1, 10);
SELECT simhash_prefix_masks(3, -10);

-- The streaming path's temporary files: the tables' self-joins run one after
-- the other, so at most one join's sorts hold files at a time.  20,000 rows
-- under a 64kB work_mem spill about 1.7MB per table; the four tables' sorts
-- together (as when they were one UNION ALL) passed a 3MB temp_file_limit.
-- 100 rows are exact copies of others, so there are 100 pairs.
CREATE TABLE pairs_big AS
SELECT 'key-' || i AS k, hashint8(i % 19900)::bigint # (hashint8(-(i % 19900))::bigint << 21) AS h
  FROM generate_series(0, 19999) i;
BEGIN;
SET LOCAL work_mem = '64kB';
SET LOCAL max_parallel_workers_per_gather = 0;
SET LOCAL temp_file_limit = '3MB';
SELECT cardinality(simhash_prefix_masks(3, 20000)) AS tables, count(*) AS pairs, max(distance)
  FROM simhash_pairs('pairs_big', 'h', 'k', 3);
COMMIT;
DROP TABLE pairs_big;

DROP TABLE parts CASCADE;
DROP TABLE "Pages ""x""", naive;
DROP FUNCTION pairs_diff, clusters_diff;
