-- SQL that the extension's C functions run is out of reach of the caller's
-- search_path: a role that can create objects in a schema listed before
-- pg_catalog neither runs code as the caller nor changes what is read.
\set VERBOSITY default
CREATE ROLE regress_simhash_hijacker;
CREATE SCHEMA sec_evil AUTHORIZATION regress_simhash_hijacker;
CREATE TABLE sec_docs (id int, body text);
INSERT INTO sec_docs SELECT g, 'common words on every page ' || CASE WHEN g % 2 = 0 THEN 'even' ELSE 'odd' END || ' page ' || g
  FROM generate_series(1, 20) g;
SET client_min_messages = warning;
SELECT simhash_df_build('sec_docs', 'body');
RESET client_min_messages;
SELECT simhash_weighted('common words on every page odd page 3', 'sec_docs_simhash_df', 0.3) AS cut,
       simhash_weighted('common words on every page odd page 3', 'sec_docs_simhash_df', 0.3, true) AS idf \gset

-- The hijacker's operators on bigint: they say as whom they run and claim
-- every comparison false, so that no shingle would count as boilerplate.
SET ROLE regress_simhash_hijacker;
CREATE FUNCTION sec_evil.trap(bigint, bigint) RETURNS bool LANGUAGE plpgsql AS $$
BEGIN
  RAISE NOTICE 'hijacked: runs as %', current_user;
  RETURN false;
END $$;
CREATE FUNCTION sec_evil.trap(bigint, int) RETURNS bool LANGUAGE plpgsql AS $$
BEGIN
  RAISE NOTICE 'hijacked: runs as %', current_user;
  RETURN false;
END $$;
CREATE OPERATOR sec_evil.> (LEFTARG = bigint, RIGHTARG = bigint, FUNCTION = sec_evil.trap);
CREATE OPERATOR sec_evil.< (LEFTARG = bigint, RIGHTARG = bigint, FUNCTION = sec_evil.trap);
CREATE OPERATOR sec_evil.< (LEFTARG = bigint, RIGHTARG = int, FUNCTION = sec_evil.trap);
CREATE OPERATOR sec_evil.> (LEFTARG = bigint, RIGHTARG = int, FUNCTION = sec_evil.trap);
RESET ROLE;
-- the operators work where the search_path leads
SET search_path = sec_evil, pg_catalog, public;
SELECT 2::bigint > 1::bigint AS hijacked_here;
-- simhash_weighted loads the same weights, and no notice appears
SELECT simhash_weighted('common words on every page odd page 3', 'sec_docs_simhash_df', 0.3) = :'cut' AS same_cut,
       simhash_weighted('common words on every page odd page 3', 'sec_docs_simhash_df', 0.3, true) = :'idf' AS same_idf;
-- and the caller's search_path is as it was afterwards
SHOW search_path;
RESET search_path;

DROP TABLE sec_docs, sec_docs_simhash_df;
DROP SCHEMA sec_evil CASCADE;
DROP ROLE regress_simhash_hijacker;
