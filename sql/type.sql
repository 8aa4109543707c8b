-- The simhash type: input, output, casts, comparison, distance.
SELECT '0x0123456789ABCDEF'::simhash, '0123456789abcdef'::simhash, 'A'::simhash, ' 0Xff '::simhash;
-- bad input names the value, SQLSTATE 22P02
\set VERBOSITY default
\set SHOW_CONTEXT never
SELECT ''::simhash;
SELECT '0x'::simhash;
SELECT '0123456789abcdef0'::simhash;
SELECT 'xyz'::simhash;
SELECT '12 34'::simhash;
DO $$ BEGIN PERFORM 'nothex'::simhash; EXCEPTION WHEN others THEN RAISE NOTICE 'sqlstate %', SQLSTATE; END $$;
-- bigint: bit exact, both ways
SELECT 'ffffffffffffffff'::simhash::bigint, (-1)::bigint::simhash, '8000000000000000'::simhash::bigint;
SELECT x, x::simhash::bigint = x AS roundtrip
  FROM (VALUES (0::bigint), (1), (-1), (9223372036854775807), (-9223372036854775808)) v(x);
-- integer and smallint: widened to bigint, so the same bits as via bigint
SELECT x, x::simhash, x::simhash = x::bigint::simhash AS same_as_bigint
  FROM (VALUES (0), (1), (-1), (2147483647), (-2147483648)) v(x);
SELECT x, x::simhash, x::simhash = x::bigint::simhash AS same_as_bigint
  FROM (VALUES (0::smallint), (255::smallint), ((-1)::smallint), (32767::smallint), ((-32768)::smallint)) v(x);
SELECT pg_typeof(simhash(7)), simhash(7::smallint) = simhash(7::bigint) AS via_function;
SELECT castsource::regtype, castcontext, castmethod FROM pg_cast
 WHERE castsource IN ('integer'::regtype, 'smallint'::regtype) AND casttarget = 'simhash'::regtype ORDER BY 1;
-- numeric: unsigned decimal
SELECT 'ffffffffffffffff'::simhash::numeric, 18446744073709551615::numeric::simhash, 0::numeric::simhash;
SELECT '1a40201a26358020'::simhash::numeric::simhash;
SELECT 18446744073709551616::numeric::simhash;
SELECT (-1)::numeric::simhash;
SELECT 1.5::numeric::simhash;
DO $$ BEGIN PERFORM 1e30::numeric::simhash; EXCEPTION WHEN others THEN RAISE NOTICE 'sqlstate %', SQLSTATE; END $$;
-- bit(64)
SELECT '8000000000000001'::simhash::bit(64);
SELECT B'1000000000000000000000000000000000000000000000000000000000000001'::simhash;
SELECT B'101'::simhash;
-- binary I/O round trip
SELECT simhash_send('0123456789abcdef');
-- ordering is unsigned, like the hex and numeric forms
SELECT v FROM (VALUES ('ffffffffffffffff'::simhash), ('0'), ('8000000000000000'), ('7fffffffffffffff')) t(v) ORDER BY v;
SELECT '8000000000000000'::simhash > '7fffffffffffffff'::simhash AS gt, 'a'::simhash = '0xA' AS eq,
       'a'::simhash <> 'b' AS ne, 'a'::simhash <= 'a' AS le, 'a'::simhash >= 'b' AS ge, 'a'::simhash < 'b' AS lt;
-- btree and hash: DISTINCT, GROUP BY, hash join, unique index
CREATE TEMP TABLE t (h simhash);
INSERT INTO t SELECT (i % 5)::bigint::simhash FROM generate_series(1, 20) i;
SELECT h, count(*) FROM t GROUP BY h ORDER BY h;
SELECT count(DISTINCT h) FROM t;
SET enable_mergejoin = off; SET enable_nestloop = off;
EXPLAIN (COSTS OFF) SELECT count(*) FROM t a JOIN t b ON a.h = b.h;
SELECT count(*) FROM t a JOIN t b ON a.h = b.h;
RESET enable_mergejoin; RESET enable_nestloop;
CREATE INDEX t_btree ON t (h);
CREATE INDEX t_hash ON t USING hash (h);
CREATE TEMP TABLE u (h simhash UNIQUE);
INSERT INTO u VALUES ('1'), ('2');
INSERT INTO u VALUES ('0x1');
-- NULLs
SELECT NULL::simhash, simhash_distance(NULL, '1'::simhash), NULL::simhash <~> '1';
