-- The planner uses the simhash index for selective near-duplicate queries
-- and not for a radius that matches a large part of the table.
--
-- 29,040 rows: below ANALYZE's sample size (300 x statistics target), so the
-- statistics, and with them the plans, do not depend on random sampling.
SET client_min_messages = warning;
SET jit = off;   -- disabled plan nodes cost 1e10 and would JIT-compile every query
SET max_parallel_workers_per_gather = 0;
CREATE TABLE p (id int PRIMARY KEY, fp simhash, h bigint);
INSERT INTO p SELECT i, ('x' || md5(i::text))::bit(64)::simhash, ('x' || md5(i::text))::bit(64)::bigint
  FROM generate_series(1, 29000) i;
-- a cluster of 40 near copies around one value (0..4 adjacent bits flipped), to have answers
INSERT INTO p SELECT 30000 + i, x::simhash, x
  FROM (SELECT i, '1a40201a26358020'::simhash::bigint # (((1::bigint << (i % 5)) - 1) << (i % 59)) AS x
          FROM generate_series(1, 40) i) s;
CREATE INDEX p_fp_idx ON p USING simhash (fp) WITH (bits = 3, blocks = 5);
CREATE INDEX p_h_idx ON p USING simhash (h simhash_bigint_ops) WITH (bits = 3, blocks = 5);
VACUUM ANALYZE p;

-- operator with the radius from simhash.max_distance
EXPLAIN (COSTS OFF) SELECT id FROM p WHERE fp % '1a40201a26358020';
SELECT count(*) FROM p WHERE fp % '1a40201a26358020';
-- explicit radius through the support function, both argument orders
EXPLAIN (COSTS OFF) SELECT id FROM p WHERE simhash_within(fp, '1a40201a26358020', 2);
SELECT count(*) FROM p WHERE simhash_within(fp, '1a40201a26358020', 2);
EXPLAIN (COSTS OFF) SELECT id FROM p WHERE simhash_within('1a40201a26358020', fp, 2);
-- combined with another condition
EXPLAIN (COSTS OFF) SELECT id FROM p WHERE simhash_within(fp, '1a40201a26358020', 1) AND id % 2 = 0;
SELECT count(*) FROM p WHERE simhash_within(fp, '1a40201a26358020', 1) AND id % 2 = 0;
-- KNN
EXPLAIN (COSTS OFF) SELECT id, fp <~> '1a40201a26358020' AS d FROM p ORDER BY fp <~> '1a40201a26358020' LIMIT 10;
SELECT array_agg(d) FROM (SELECT fp <~> '1a40201a26358020' AS d FROM p ORDER BY fp <~> '1a40201a26358020' LIMIT 10) s;
-- find first
-- explain_lines(query): EXPLAIN (COSTS OFF) without what differs between
-- server versions; one definition for the tests that use it
\getenv abs_srcdir PG_ABS_SRCDIR
\set ECHO none
\i :abs_srcdir/sql/include/explain_lines.psql
\set ECHO all
SELECT explain_lines($$SELECT EXISTS (SELECT 1 FROM p WHERE fp % '1a40201a26358020')$$);
SELECT EXISTS (SELECT 1 FROM p WHERE fp % '1a40201a26358020') AS found,
       EXISTS (SELECT 1 FROM p WHERE fp % 'ffffffffffffffff') AS not_found;
-- a radius that matches much of the table is left to the sequential scan
EXPLAIN (COSTS OFF) SELECT id FROM p WHERE simhash_within(fp, '1a40201a26358020', 30);
SET simhash.max_distance = 30;
EXPLAIN (COSTS OFF) SELECT id FROM p WHERE fp % '1a40201a26358020';
RESET simhash.max_distance;
-- bigint operator class
EXPLAIN (COSTS OFF) SELECT id FROM p WHERE h ~% 1891547140177887264;
EXPLAIN (COSTS OFF) SELECT id FROM p WHERE simhash_within(h, 1891547140177887264, 2);
EXPLAIN (COSTS OFF) SELECT id FROM p WHERE simhash_within(h, 1891547140177887264, 30);
-- generic plan: query and radius are parameters
PREPARE near(simhash, int) AS SELECT count(*) FROM p WHERE simhash_within(fp, $1, $2);
SET plan_cache_mode = force_generic_plan;
EXPLAIN (COSTS OFF) EXECUTE near('1a40201a26358020', 2);
EXECUTE near('1a40201a26358020', 2);
EXECUTE near('1a40201a26358020', 0);
RESET plan_cache_mode;
-- a join probes the index once per outer row
CREATE TABLE probe (q simhash);
INSERT INTO probe VALUES ('1a40201a26358020'), ('0123456789abcdef'), ('1a40201a26358021');
ANALYZE probe;
EXPLAIN (COSTS OFF) SELECT q, count(id) FROM probe LEFT JOIN p ON simhash_within(p.fp, probe.q, 2) GROUP BY q;
SELECT q, count(id) FROM probe LEFT JOIN p ON simhash_within(p.fp, probe.q, 2) GROUP BY q ORDER BY q;
