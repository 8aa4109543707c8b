-- One rule for radii: every radius outside 0..64 is refused with 22023 and
-- the range in the message, whatever takes it; 0 and 64 are accepted.
SET jit = off;
-- terse: the message, then the SQLSTATE of each error on the next line
\set VERBOSITY terse

-- functions and constructors
SELECT simhash_within('0'::simhash, 'ffffffffffffffff', 64) AS s64,
       simhash_within(0::bigint, -1::bigint, 64) AS b64,
       simhash_within('0'::simhash, '1', 0) AS s0;
SELECT simhash_within('0'::simhash, '1', 65);
\echo :LAST_ERROR_SQLSTATE
SELECT simhash_within('0'::simhash, '1', -1);
\echo :LAST_ERROR_SQLSTATE
SELECT simhash_within(0::bigint, 1::bigint, 65);
\echo :LAST_ERROR_SQLSTATE
SELECT simhash_within(0::bigint, 1::bigint, -1);
\echo :LAST_ERROR_SQLSTATE
SELECT simhash_query('0'::simhash, 64), simhash_query(0::bigint, 0);
SELECT simhash_query('0'::simhash, 1000);
\echo :LAST_ERROR_SQLSTATE
SELECT simhash_query(0::bigint, 65);
\echo :LAST_ERROR_SQLSTATE
SELECT simhash_query('0'::simhash, -1);
\echo :LAST_ERROR_SQLSTATE
SELECT simhash_query('00ff', 65);
\echo :LAST_ERROR_SQLSTATE
-- query values built without the constructor are checked where they are used
SELECT '0'::simhash %@ ROW('1', 65)::simhash_query;
\echo :LAST_ERROR_SQLSTATE
SELECT 0::bigint %@ ROW('1', -3)::simhash_query;
\echo :LAST_ERROR_SQLSTATE
SELECT simhash_query('0'::simhash, 3) @%@ ROW('1', 65)::simhash_query;
\echo :LAST_ERROR_SQLSTATE

-- batch functions
SELECT count(*) FROM simhash_find_all(ARRAY['0'::simhash, '1'], 64);
SELECT * FROM simhash_find_all(ARRAY['0'::simhash, '1'], 65);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM simhash_find_all(ARRAY[0::bigint, 1], -1);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM simhash_find_clusters(ARRAY['0'::simhash, '1'], 65);
\echo :LAST_ERROR_SQLSTATE
SELECT simhash_cluster(fp, 65) OVER () FROM (VALUES ('0'::simhash)) v(fp);
\echo :LAST_ERROR_SQLSTATE
SELECT simhash_prefix_masks(65, 10);
\echo :LAST_ERROR_SQLSTATE

-- pairs and clusters of a table
CREATE TABLE rp (k text, fp simhash);
INSERT INTO rp VALUES ('a', '0'), ('b', 'ffffffffffffffff');
SELECT count(*) FROM simhash_pairs('rp', 'fp', 'k', 64);
SELECT * FROM simhash_pairs('rp', 'fp', 'k', 65);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM simhash_pairs('rp', 'fp', 'k', -1);
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) FROM simhash_clusters('rp', 'fp', 'k', 64);
SELECT * FROM simhash_clusters('rp', 'fp', 'k', 65);
\echo :LAST_ERROR_SQLSTATE

-- index conditions: the same errors through an index scan
CREATE INDEX rp_fp ON rp USING simhash (fp);
SET enable_seqscan = off; SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT k FROM rp WHERE simhash_within(fp, '0', 64);
SELECT k FROM rp WHERE simhash_within(fp, '0', 64) ORDER BY k;
SELECT k FROM rp WHERE simhash_within(fp, '0', 65);
\echo :LAST_ERROR_SQLSTATE
SELECT k FROM rp WHERE fp %@ simhash_query('0'::simhash, 1000);
\echo :LAST_ERROR_SQLSTATE
PREPARE q(int) AS SELECT k FROM rp WHERE fp %@ simhash_query('0'::simhash, $1);
EXECUTE q(64);
EXECUTE q(65);
\echo :LAST_ERROR_SQLSTATE
RESET enable_seqscan; RESET enable_bitmapscan;

-- the setting
SET simhash.max_distance = 64;
SET simhash.max_distance = 0;
SET simhash.max_distance = 65;
\echo :LAST_ERROR_SQLSTATE
SET simhash.max_distance = -1;
\echo :LAST_ERROR_SQLSTATE
RESET simhash.max_distance;

-- the index option bits: the radius a plain probe answers, 1..15 (blocks,
-- at most 16, must exceed it)
CREATE INDEX ON rp USING simhash (fp) WITH (bits = 15);
CREATE INDEX ON rp USING simhash (fp) WITH (bits = 16);
\echo :LAST_ERROR_SQLSTATE
CREATE INDEX ON rp USING simhash (fp) WITH (bits = 0);
\echo :LAST_ERROR_SQLSTATE
DROP TABLE rp;
