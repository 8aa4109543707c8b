-- Near-duplicate exclusion constraints: the radius is written in the
-- constraint, the same for every session; the @%@ operator answers the same
-- by the index as by a sequential scan.
SET jit = off;

SELECT opcname, amvalidate(oid) FROM pg_opclass WHERE opcname = 'simhash_query_ops';

CREATE TABLE ex (id int PRIMARY KEY, fp simhash,
    EXCLUDE USING simhash (simhash_query(fp, 3) WITH @%@));
SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = 'ex'::regclass AND contype = 'x';

-- Constraints on % and ~% are refused when their index is built: the radius
-- would be each inserting session's simhash.max_distance.
CREATE TABLE ex_guc (fp simhash, EXCLUDE USING simhash (fp WITH %));
CREATE TABLE ex_guc (fp bigint, EXCLUDE USING simhash (fp WITH ~%));
CREATE TABLE ex_guc (id int, fp simhash);
INSERT INTO ex_guc VALUES (1, '0'), (2, 'ff');
ALTER TABLE ex_guc ADD CONSTRAINT ex_guc_fp EXCLUDE USING simhash (fp WITH %);
ALTER TABLE ex_guc ADD CONSTRAINT ex_guc_fp EXCLUDE USING simhash (simhash_query(fp, 3) WITH @%@);
SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = 'ex_guc'::regclass;
DROP TABLE ex_guc;

INSERT INTO ex VALUES (1, '0123456789abcdef');
-- 3 bits away: rejected
INSERT INTO ex VALUES (2, '0123456789abcde8');
\echo :LAST_ERROR_SQLSTATE
-- 4 bits away: accepted
INSERT INTO ex VALUES (3, '0123456789abcde0');
-- NULL fingerprints never conflict
INSERT INTO ex VALUES (4, NULL), (5, NULL);

-- The session's radius of % plays no part.
SET simhash.max_distance = 0;
INSERT INTO ex VALUES (6, '0123456789abcdee');
\echo :LAST_ERROR_SQLSTATE
SET simhash.max_distance = 64;
INSERT INTO ex VALUES (7, 'fedcba9876543210');
RESET simhash.max_distance;

-- An UPDATE that moves a row next to another is rejected too.
UPDATE ex SET fp = '0123456789abcd0f' WHERE id = 7;
\echo :LAST_ERROR_SQLSTATE
-- ON CONFLICT DO NOTHING skips a near-duplicate.
INSERT INTO ex VALUES (9, '0123456789abcdee') ON CONFLICT DO NOTHING;
INSERT INTO ex VALUES (9, '0123456789abcdee'), (10, '00000000000000ff') ON CONFLICT DO NOTHING;
-- The rows within a pending chain and within the runs are both seen.
VACUUM ex;
INSERT INTO ex VALUES (8, '8123456789abcdef');
\echo :LAST_ERROR_SQLSTATE
SELECT id, fp FROM ex ORDER BY id;

-- The operator: within the smaller of the two radii; NULL fields give NULL.
SELECT simhash_query(0, 3) @%@ simhash_query(7, 3) AS r3_3,
       simhash_query(0, 3) @%@ simhash_query(7, 2) AS r3_2,
       simhash_query(0, 1) @%@ simhash_query(1, 5) AS r1_5,
       simhash_query(0, 3) @%@ ROW(NULL, 3)::simhash_query AS null_fp;

-- Queries with @%@ on a planted table: index scan = bitmap scan = seq scan.
CREATE TABLE exq (id int, fp simhash);
INSERT INTO exq SELECT i, ('x' || md5(i::text))::bit(64)::simhash FROM generate_series(1, 3000) i;
-- 100 rows at distances 0..6 (i % 7 adjacent bits flipped) of the query
INSERT INTO exq SELECT 10000 + i, ('0123456789abcdef'::simhash::bigint # (((1::bigint << (i % 7)) - 1) << (i % 50)))::simhash
  FROM generate_series(0, 99) i;
INSERT INTO exq VALUES (20000, NULL);
CREATE INDEX exq_q ON exq USING simhash (simhash_query(fp, 4));
ANALYZE exq;
CREATE TEMP TABLE answers (how text, r int, ids int[]);
SET enable_seqscan = off; SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM exq WHERE simhash_query(fp, 4) @%@ simhash_query('0123456789abcdef'::simhash, 2);
INSERT INTO answers SELECT 'index', r, (SELECT array_agg(id ORDER BY id) FROM exq
  WHERE simhash_query(fp, 4) @%@ simhash_query('0123456789abcdef'::simhash, r)) FROM generate_series(0, 6) r;
SET enable_indexscan = off; SET enable_bitmapscan = on;
INSERT INTO answers SELECT 'bitmap', r, (SELECT array_agg(id ORDER BY id) FROM exq
  WHERE simhash_query(fp, 4) @%@ simhash_query('0123456789abcdef'::simhash, r)) FROM generate_series(0, 6) r;
RESET enable_seqscan; RESET enable_indexscan; RESET enable_bitmapscan;
SET enable_indexscan = off; SET enable_bitmapscan = off;
INSERT INTO answers SELECT 'seqscan', r, (SELECT array_agg(id ORDER BY id) FROM exq
  WHERE simhash_query(fp, 4) @%@ simhash_query('0123456789abcdef'::simhash, r)) FROM generate_series(0, 6) r;
RESET enable_indexscan; RESET enable_bitmapscan;
SELECT r, count(*) AS hows, count(DISTINCT ids) AS distinct_answers, max(cardinality(ids)) AS rows
  FROM answers GROUP BY r ORDER BY r;
-- The index holds the fingerprint only: it cannot return the simhash_query value.
SET enable_seqscan = off; SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT simhash_query(fp, 4) FROM exq WHERE simhash_query(fp, 4) @%@ simhash_query('0123456789abcdef'::simhash, 0);
SELECT simhash_query(fp, 4) FROM exq WHERE simhash_query(fp, 4) @%@ simhash_query('0123456789abcdef'::simhash, 0) LIMIT 2;
RESET enable_seqscan; RESET enable_bitmapscan;
SELECT simhash_index_check('exq_q');
SELECT simhash_index_check('ex_simhash_query_excl');

DROP TABLE ex, exq;
