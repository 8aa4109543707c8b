-- DDL of the simhash index: reloptions, operator classes, errors, NULLs,
-- REINDEX, CONCURRENTLY, empty, unlogged, partial and expression indexes.
SET client_min_messages = warning;
SET jit = off;   -- disabled plan nodes cost 1e10 and would JIT-compile every query
\set VERBOSITY default
\set SHOW_CONTEXT never
-- SQLSTATE of a statement, or 'ok'
CREATE FUNCTION sqlstate_of(stmt text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE stmt;
  RETURN 'ok';
EXCEPTION WHEN others THEN
  RETURN SQLSTATE;
END $$;

SELECT amname, amtype FROM pg_am WHERE amname = 'simhash';
SELECT opc.opcname, opc.opcintype::regtype, opc.opcdefault, amvalidate(opc.oid)
  FROM pg_opclass opc JOIN pg_am am ON am.oid = opc.opcmethod
 WHERE am.amname = 'simhash' ORDER BY 1;
SELECT name, setting, boot_val, min_val, max_val FROM pg_settings WHERE name = 'simhash.max_distance';

CREATE TABLE t (id int, fp simhash, h bigint, txt text, n int);
INSERT INTO t SELECT i, ('x' || md5(i::text))::bit(64)::simhash, ('x' || md5(i::text))::bit(64)::bigint, i::text, i
  FROM generate_series(1, 2000) i;
INSERT INTO t VALUES (0, NULL, NULL, NULL, NULL);

-- reloptions: bits 1..15, blocks bits+1..16, at most 256 tables
CREATE INDEX ON t USING simhash (fp) WITH (bits = 0);
CREATE INDEX ON t USING simhash (fp) WITH (bits = 17);
CREATE INDEX ON t USING simhash (fp) WITH (bits = 3, blocks = 3);
CREATE INDEX ON t USING simhash (fp) WITH (bits = 3, blocks = 2);
CREATE INDEX ON t USING simhash (fp) WITH (bits = 3, blocks = 17);
CREATE INDEX ON t USING simhash (fp) WITH (bits = 16);
CREATE INDEX ON t USING simhash (fp) WITH (bits = 8, blocks = 16);
CREATE INDEX ON t USING simhash (fp) WITH (bits = 5, blocks = 11);
CREATE INDEX ON t USING simhash (fp) WITH (bits = 'three');
CREATE INDEX ON t USING simhash (fp) WITH (radius = 3);
SELECT s, sqlstate_of(format('CREATE INDEX ON t USING simhash (fp) WITH (%s)', s)) AS sqlstate
  FROM unnest(ARRAY['bits = 0', 'bits = 17', 'bits = 3, blocks = 3', 'bits = 3, blocks = 17',
                    'bits = 8, blocks = 16', 'bits = 5, blocks = 11', 'bits = 16']) s;
-- the largest accepted configurations: C(10,5) = 252 and C(16,15) = 16 tables; and the defaults
CREATE INDEX t_252 ON t USING simhash (fp) WITH (bits = 5, blocks = 10);
CREATE INDEX t_16 ON t USING simhash (fp) WITH (bits = 15, blocks = 16);
CREATE INDEX t_1 ON t USING simhash (fp) WITH (bits = 1);
CREATE INDEX t_def ON t USING simhash (fp);
SELECT relname, reloptions FROM pg_class WHERE relname IN ('t_252', 't_16', 't_1', 't_def') ORDER BY 1;
SELECT simhash_index_check('t_252'), simhash_index_check('t_16'), simhash_index_check('t_1'), simhash_index_check('t_def');
SET enable_seqscan = off; SET enable_bitmapscan = off;
DROP INDEX t_16, t_1, t_def;
SELECT count(*) FROM t WHERE fp % ('x' || md5('7'))::bit(64)::simhash;
DROP INDEX t_252;
RESET enable_seqscan; RESET enable_bitmapscan;

-- wrong types, unsupported index kinds
CREATE INDEX ON t USING simhash (txt);
CREATE INDEX ON t USING simhash (n);
CREATE INDEX ON t USING simhash (fp simhash_bigint_ops);
CREATE INDEX ON t USING simhash (fp, h simhash_bigint_ops);
CREATE UNIQUE INDEX ON t USING simhash (fp);
SELECT sqlstate_of('CREATE INDEX ON t USING simhash (txt)') AS text_column,
       sqlstate_of('CREATE UNIQUE INDEX ON t USING simhash (fp)') AS unique_index;

-- simhash_index_check on what is not a simhash index
CREATE INDEX t_btree ON t (fp);
SELECT simhash_index_check('t_btree');
SELECT simhash_index_check('t');
SELECT simhash_index_check(NULL);
SELECT sqlstate_of($$SELECT simhash_index_check('t_btree')$$) AS btree,
       sqlstate_of($$SELECT simhash_index_check('t')$$) AS table;
DROP INDEX t_btree;

-- NULLs and radius bounds, by sequential scan and through the index
CREATE INDEX t_fp ON t USING simhash (fp) WITH (bits = 3, blocks = 5);
CREATE INDEX t_h ON t USING simhash (h simhash_bigint_ops);
CREATE FUNCTION null_and_bounds() RETURNS TABLE (what text, result text) LANGUAGE plpgsql AS $$
DECLARE q simhash := ('x' || md5('7'))::bit(64)::simhash;
BEGIN
  what := 'fp % NULL';               SELECT count(*)::text INTO result FROM t WHERE fp % NULL::simhash; RETURN NEXT;
  what := 'within(fp, NULL, 2)';     SELECT count(*)::text INTO result FROM t WHERE simhash_within(fp, NULL::simhash, 2); RETURN NEXT;
  what := 'within(fp, q, NULL)';     SELECT count(*)::text INTO result FROM t WHERE simhash_within(fp, q, NULL); RETURN NEXT;
  what := 'within(h, NULL, 2)';      SELECT count(*)::text INTO result FROM t WHERE simhash_within(h, NULL::bigint, 2); RETURN NEXT;
  what := 'within(fp, q, 0)';        SELECT count(*)::text INTO result FROM t WHERE simhash_within(fp, q, 0); RETURN NEXT;
  what := 'within(fp, q, 64)';       SELECT count(*)::text INTO result FROM t WHERE simhash_within(fp, q, 64); RETURN NEXT;
  what := 'within(fp, q, 1000)';     result := sqlstate_of(format('SELECT count(*) FROM t WHERE simhash_within(fp, %L::simhash, 1000)', q)); RETURN NEXT;
  what := 'within(h, q, 64)';        SELECT count(*)::text INTO result FROM t WHERE simhash_within(h, q::bigint, 64); RETURN NEXT;
  what := 'within(fp, q, -1)';       result := sqlstate_of(format('SELECT count(*) FROM t WHERE simhash_within(fp, %L::simhash, -1)', q)); RETURN NEXT;
  what := 'within(h, q, -1)';        result := sqlstate_of(format('SELECT count(*) FROM t WHERE simhash_within(h, %s::bigint, -1)', q::bigint)); RETURN NEXT;
  what := 'ORDER BY <~> NULL';       SELECT count(*)::text INTO result FROM (SELECT id FROM t ORDER BY fp <~> NULL::simhash LIMIT 5) s; RETURN NEXT;
END $$;
SELECT * FROM null_and_bounds();
SET enable_seqscan = off; SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT count(*) FROM t WHERE simhash_within(fp, '0123456789abcdef', 64);
SELECT * FROM null_and_bounds();
RESET enable_seqscan; RESET enable_bitmapscan;
-- the error message for a negative radius
SELECT count(*) FROM t WHERE simhash_within(fp, '0123456789abcdef', -1);
SELECT simhash_within('0123456789abcdef'::simhash, '0123456789abcdef', -1);
-- the GUC's range
SET simhash.max_distance = -1;
SET simhash.max_distance = 65;
SET simhash.max_distance = 64;
SELECT count(*) FROM t WHERE fp % '0123456789abcdef';
RESET simhash.max_distance;
SHOW simhash.max_distance;

-- the radius of % is read when the scan runs, not when the plan is made
PREPARE sim(simhash) AS SELECT count(*) FROM t WHERE fp % $1;
SET plan_cache_mode = force_generic_plan; SET enable_seqscan = off; SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) EXECUTE sim('0123456789abcdef');
SET simhash.max_distance = 0;
EXECUTE sim(('x' || md5('7'))::bit(64)::simhash);
SET simhash.max_distance = 24;
EXECUTE sim(('x' || md5('7'))::bit(64)::simhash);
SET simhash.max_distance = 64;
EXECUTE sim(('x' || md5('7'))::bit(64)::simhash);
RESET simhash.max_distance; RESET plan_cache_mode; RESET enable_seqscan; RESET enable_bitmapscan;
SET enable_indexscan = off; SET enable_bitmapscan = off;
SELECT count(*) AS seqscan_24 FROM t WHERE simhash_distance(fp, ('x' || md5('7'))::bit(64)::simhash) <= 24;
RESET enable_indexscan; RESET enable_bitmapscan;
DEALLOCATE sim;

-- the index's functions: parallel safe except the handler and the check; % reads a GUC, so it is STABLE
SELECT p.oid::regprocedure AS function, p.proparallel, p.provolatile
  FROM pg_proc p
  JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
  JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'simhash'
 WHERE p.proname ~ '^simhash_(similar(_|$)|within|query|am_handler|index_check)'
 ORDER BY p.oid::regprocedure::text COLLATE "C";

-- ALTER INDEX SET (bits) must not make the existing index answer wrongly
ALTER INDEX t_fp SET (bits = 4);
SET enable_seqscan = off; SET enable_bitmapscan = off;
SELECT count(*) FROM t WHERE simhash_within(fp, ('x' || md5('7'))::bit(64)::simhash, 4);
RESET enable_seqscan; RESET enable_bitmapscan;
SELECT simhash_index_check('t_fp');
ALTER INDEX t_fp RESET (bits);

-- REINDEX, REINDEX CONCURRENTLY, CREATE INDEX CONCURRENTLY, TRUNCATE
REINDEX INDEX t_fp;
SELECT simhash_index_check('t_fp');
REINDEX INDEX CONCURRENTLY t_fp;
SELECT simhash_index_check('t_fp');
DROP INDEX t_fp;
CREATE INDEX CONCURRENTLY t_fp ON t USING simhash (fp) WITH (bits = 2, blocks = 4);
SELECT simhash_index_check('t_fp');
SELECT indisvalid, indisready FROM pg_index WHERE indexrelid = 't_fp'::regclass;
SET enable_seqscan = off; SET enable_bitmapscan = off;
SELECT array_agg(id ORDER BY id) FROM t WHERE fp % ('x' || md5('42'))::bit(64)::simhash;
RESET enable_seqscan; RESET enable_bitmapscan;
TRUNCATE t;
SELECT simhash_index_check('t_fp');
INSERT INTO t (id, fp) VALUES (1, '0123456789abcdef'), (2, '0123456789abcdee'), (3, NULL), (4, 'f123456789abcdef');
SET enable_seqscan = off; SET enable_bitmapscan = off;
SELECT array_agg(id ORDER BY id) FROM t WHERE fp % '0123456789abcdef';
RESET enable_seqscan; RESET enable_bitmapscan;
SELECT simhash_index_check('t_fp');

-- index on an empty table, then a first row
CREATE TABLE empty (fp simhash);
CREATE INDEX empty_fp ON empty USING simhash (fp);
SELECT simhash_index_check('empty_fp');
SET enable_seqscan = off;
SELECT count(*) FROM empty WHERE fp % '0123456789abcdef';
SELECT count(*) FROM (SELECT fp FROM empty ORDER BY fp <~> '0123456789abcdef' LIMIT 3) s;
INSERT INTO empty VALUES ('0123456789abcdef');
SELECT count(*) FROM empty WHERE fp % '0123456789abcdef';
RESET enable_seqscan;
SELECT simhash_index_check('empty_fp');

-- unlogged table (init fork), temporary table
CREATE UNLOGGED TABLE u (fp simhash);
CREATE INDEX u_fp ON u USING simhash (fp);
INSERT INTO u SELECT ('x' || md5(i::text))::bit(64)::simhash FROM generate_series(1, 500) i;
SELECT simhash_index_check('u_fp');
CREATE TEMP TABLE tt (fp simhash);
CREATE INDEX tt_fp ON tt USING simhash (fp);
INSERT INTO tt SELECT ('x' || md5(i::text))::bit(64)::simhash FROM generate_series(1, 500) i;
SELECT simhash_index_check('tt_fp');
SET enable_seqscan = off; SET enable_bitmapscan = off;
SELECT count(*) FROM u WHERE fp % ('x' || md5('9'))::bit(64)::simhash;
SELECT count(*) FROM tt WHERE fp % ('x' || md5('9'))::bit(64)::simhash;
RESET enable_seqscan; RESET enable_bitmapscan;

-- expression and partial indexes
CREATE TABLE docs (id int, body text);
INSERT INTO docs SELECT i, 'document ' || (i / 2) FROM generate_series(1, 400) i;
-- (since 17 index expressions run with search_path = pg_catalog, pg_temp:
-- the body names the extension's type with its schema)
CREATE FUNCTION doc_hash(t text) RETURNS simhash LANGUAGE sql IMMUTABLE STRICT AS
  $$ SELECT ('x' || md5(t))::bit(64)::public.simhash $$;
CREATE INDEX docs_expr ON docs USING simhash (doc_hash(body));
CREATE INDEX docs_part ON docs USING simhash (doc_hash(body)) WHERE id <= 100;
SELECT simhash_index_check('docs_expr'), simhash_index_check('docs_part');
SET enable_seqscan = off; SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM docs WHERE doc_hash(body) % doc_hash('document 7') AND id <= 100;
SELECT array_agg(id ORDER BY id) FROM docs WHERE doc_hash(body) % doc_hash('document 7') AND id <= 100;
DROP INDEX docs_part;
SELECT array_agg(id ORDER BY id) FROM docs WHERE doc_hash(body) % doc_hash('document 150');
RESET enable_seqscan; RESET enable_bitmapscan;

-- CLUSTER is not supported by this access method
CLUSTER docs USING docs_expr;
