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

-- A text column indexed as it is: an error whose hint names simhash(column)
-- (before 1.2: "data type text has no default operator class").
CREATE TABLE mt (id int, body text, v varchar, fp simhash GENERATED ALWAYS AS (simhash(body)) STORED);
INSERT INTO mt (id, body, v) VALUES (1, 'hello world', 'hello world'), (2, 'hello world', 'x');
CREATE INDEX ON mt USING simhash (body);
CREATE INDEX ON mt USING simhash (v);
CREATE INDEX ON mt USING simhash (lower(body));
CREATE UNLOGGED TABLE mt_u (body text);
CREATE INDEX ON mt_u USING simhash (body);
DROP TABLE mt_u;
SELECT count(*) AS simhash_indexes_left FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
  JOIN pg_am a ON a.oid = c.relam WHERE i.indrelid = 'mt'::regclass AND a.amname = 'simhash';
SELECT amvalidate(oid) FROM pg_opclass WHERE opcname = 'simhash_text_ops';
-- the fingerprint indexes, and the check says what it checked
CREATE INDEX mt_fp ON mt USING simhash (fp);
SELECT simhash_index_check('mt_fp');
-- simhash(name) fingerprints the text, as varchar and char do
SELECT simhash('hello world'::name) = simhash(text 'hello world') AS name_is_text,
       simhash('a b c d'::name, shingle => 1) = simhash(text 'a b c d', shingle => 1) AS name_options,
       simhash('abc'::name) = simhash(text 'abc') AS hex_looking_name;
-- argument errors of the PL/pgSQL functions come without CONTEXT lines
SELECT * FROM simhash_pairs('mt', 'body', 'id', 3);
SELECT * FROM simhash_pairs('mt', 'fp', 'id', 65);
SELECT * FROM simhash_pairs('mt', 'fp', 'nosuch', 3);
SELECT * FROM simhash_clusters('mt', 'nosuch', 'id', 3);
SELECT simhash_df_build('mt', 'nosuch');
SELECT simhash_df_build('mt', 'id');
SELECT simhash_df_build('mt', 'body', min_df => 0);
-- simhash_raise itself
SELECT simhash_raise('22023', 'a message', 'a hint');
SELECT simhash_raise('2202', 'bad code');
SELECT simhash_raise(NULL, 'no code');
DROP TABLE mt;
