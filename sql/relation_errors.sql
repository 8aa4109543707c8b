-- A relation that does not exist, or that the caller may not read, is said
-- so first: before anything about its columns.
\set VERBOSITY default
\set SHOW_CONTEXT never
CREATE TABLE re_t (k text, fp simhash);
-- simhash_pairs and simhash_clusters on an OID that is no relation: 42P01
SELECT * FROM simhash_pairs(0::regclass, 'fp', 'k', 3);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM simhash_clusters(0::regclass, 'fp', 'k', 3);
\echo :LAST_ERROR_SQLSTATE
-- simhash_weighted on a table the caller may not read: 42501, whether or
-- not the table has the columns of a weights table
CREATE TABLE re_not_weights (a int);
CREATE TABLE re_weights (shingle bigint, df bigint);
INSERT INTO re_weights VALUES (NULL, 1);
CREATE ROLE regress_simhash_reader;
SET ROLE regress_simhash_reader;
SELECT simhash_weighted('some text', 're_not_weights');
\echo :LAST_ERROR_SQLSTATE
SELECT simhash_weighted('some text', 're_weights');
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
-- the owner is told what is wrong with the table
SELECT simhash_weighted('some text', 're_not_weights');
\echo :LAST_ERROR_SQLSTATE
SELECT simhash_weighted('some text', 0::regclass);
\echo :LAST_ERROR_SQLSTATE
DROP ROLE regress_simhash_reader;
DROP TABLE re_t, re_not_weights, re_weights;
