-- Messages that say what to write, names that mean what they look like, and
-- a COMMENT on every object.
SET jit = off;

-- simhash('some words'): an untyped literal is a cast to the type; the error
-- says how to ask for the fingerprint
SELECT simhash('hello');
SELECT simhash('hello'::text) = simhash(text 'hello') AS fingerprint;
-- a long or quoted input is not repeated in the hint
SELECT simhash('it''s a rather long sentence that goes on and on and on');

-- simhash_query('00ff', 3): the literal is a simhash (hex), not a bigint
SELECT simhash_query('00ff', 3);
SELECT simhash_query('10', 3) = simhash_query('10'::simhash, 3) AS hex,
       simhash_query('10', 3) <> simhash_query(10::bigint, 3) AS not_decimal;
SELECT simhash_query('xyz', 3);
-- a text value too, and the bigint and simhash forms as before
SELECT simhash_query('0123456789abcdef'::text, 2), simhash_query(255::bigint, 1),
       simhash_query('00ff'::simhash, 0);
-- and in an index condition
CREATE TABLE mq (id int, fp simhash);
INSERT INTO mq SELECT i, ('x' || md5(i::text))::bit(64)::simhash FROM generate_series(1, 500) i;
INSERT INTO mq VALUES (1000, '00000000000000ff'), (1001, '00000000000000fe');
CREATE INDEX ON mq USING simhash (fp);
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM mq WHERE fp %@ simhash_query('00ff', 1);
SELECT id FROM mq WHERE fp %@ simhash_query('00ff', 1) ORDER BY id;
RESET enable_seqscan;
DROP TABLE mq;

-- every member of the extension has a COMMENT
SELECT pg_describe_object(classid, objid, objsubid) AS no_comment
  FROM pg_depend d
 WHERE refclassid = 'pg_extension'::regclass
   AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'simhash')
   AND deptype = 'e'
   AND obj_description(objid, (SELECT relname FROM pg_class WHERE oid = classid)) IS NULL
   -- array types (members since PostgreSQL 17) are described by their element type
   AND pg_describe_object(classid, objid, objsubid) !~ '\[\]$'
 ORDER BY 1;

-- simhash_clusters' errors about its arguments name none of its scratch
-- tables in their CONTEXT lines
CREATE TABLE mc (k text, fp simhash);
INSERT INTO mc VALUES ('a', '0'), ('b', '1');
\set VERBOSITY default
SELECT * FROM simhash_clusters('mc', 'fp', 'k', 65);
SELECT * FROM simhash_clusters('mc', 'nosuch', 'k', 3);
SELECT * FROM simhash_clusters('mc', 'fp', 'nosuch', 3);
SELECT * FROM simhash_clusters('mc', 'k', 'k', 3);
SELECT * FROM simhash_clusters('mc', 'fp', 'k', 1) ORDER BY 1;
-- nor errors raised while it works: a view whose fingerprint fails on one row
CREATE VIEW mc_boom AS SELECT k, (1 / (ascii(k) - ascii('b')))::bigint AS fp FROM mc;
SELECT * FROM simhash_clusters('mc_boom', 'fp', 'k', 1);
SELECT * FROM simhash_pairs('mc_boom', 'fp', 'k', 1);
DROP VIEW mc_boom;
DROP TABLE mc;
