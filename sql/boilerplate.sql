-- Boilerplate weighting: simhash_df_build writes the document frequencies of
-- shingles; simhash_weighted votes with them.
\set VERBOSITY default
-- Two sites, each with its own navigation bar and licence footer: ten
-- articles on the first, six on the second, article 11 a copy of article 1.
CREATE TABLE bp_docs (id int PRIMARY KEY, body text);
INSERT INTO bp_docs
SELECT i, 'Home Products Support Blog Careers About us Contact Sign in ' ||
          (SELECT string_agg(format('word%s_%s', i, j), ' ') FROM generate_series(1, 30) j) ||
          ' Copyright 2026 Example Corporation. All rights reserved. This page is licensed under the '
          'Creative Commons Attribution licence; see the terms of use and the privacy policy.'
  FROM generate_series(1, 10) i;
INSERT INTO bp_docs
SELECT i, 'Menu Start News Shop Forum Login ' ||
          (SELECT string_agg(format('word%s_%s', CASE WHEN i = 11 THEN 1 ELSE i END, j), ' ')
             FROM generate_series(1, 30) j) ||
          ' Powered by nothing in particular, hosted on a small server in a cupboard.'
  FROM generate_series(11, 16) i;
SET client_min_messages = warning;  -- the NOTICEs report elapsed seconds
SELECT simhash_df_build('bp_docs', 'body');
RESET client_min_messages;
\d bp_docs_simhash_df
SELECT pg_get_userbyid(relowner) = current_user AS owned_by_caller,
       obj_description(oid, 'pg_class') FROM pg_class WHERE oid = 'bp_docs_simhash_df'::regclass;
-- The document count row, and the frequencies against an independent count.
SELECT df AS documents FROM bp_docs_simhash_df WHERE shingle IS NULL;
SELECT count(*) AS shingles, min(df), max(df) FROM bp_docs_simhash_df WHERE shingle IS NOT NULL;
(SELECT shingle, df FROM bp_docs_simhash_df WHERE shingle IS NOT NULL
 EXCEPT SELECT s, count(*) FROM bp_docs, unnest(simhash_shingles(body)) s GROUP BY s HAVING count(*) >= 2)
UNION ALL
(SELECT s, count(*) FROM bp_docs, unnest(simhash_shingles(body)) s GROUP BY s HAVING count(*) >= 2
 EXCEPT SELECT shingle, df FROM bp_docs_simhash_df);

-- Unweighted, two different articles of a site are close (their shared
-- boilerplate votes) and the same article on two sites is far; weighted
-- (both sites' boilerplate is in more than 0.3 of the 16 rows), the other
-- way round.
SELECT a.id, b.id, simhash(a.body) <~> simhash(b.body) AS plain,
       simhash_weighted(a.body, 'bp_docs_simhash_df', 0.3) <~> simhash_weighted(b.body, 'bp_docs_simhash_df', 0.3) AS weighted,
       simhash_weighted(a.body, 'bp_docs_simhash_df', 0.3, true) <~> simhash_weighted(b.body, 'bp_docs_simhash_df', 0.3, true) AS idf
  FROM bp_docs a, bp_docs b WHERE (a.id, b.id) IN ((1, 2), (3, 4), (1, 11)) ORDER BY 1, 2;

-- min_df: only shingles of at least that many rows; weights names the table.
SET client_min_messages = warning;
SELECT simhash_df_build('bp_docs', 'body', weights => 'public.bp_df10', min_df => 10);
RESET client_min_messages;
SELECT count(*) FILTER (WHERE shingle IS NOT NULL) AS shingles, min(df) FILTER (WHERE shingle IS NOT NULL)
  FROM bp_df10;

-- No corpus (0 documents) and no listed shingles: every shingle weighs the
-- same, so the fingerprint is simhash(text) bit for bit.
CREATE TABLE bp_empty (shingle bigint, df bigint);
INSERT INTO bp_empty VALUES (NULL, 0);
CREATE TABLE bp_unlisted (shingle bigint, df int);
INSERT INTO bp_unlisted VALUES (NULL, 1000);
SELECT count(*) FILTER (WHERE simhash_weighted(body, 'bp_empty') = simhash(body)) AS same_empty,
       count(*) FILTER (WHERE simhash_weighted(body, 'bp_empty', idf => true) = simhash(body)) AS same_empty_idf,
       count(*) FILTER (WHERE simhash_weighted(body, 'bp_unlisted') = simhash(body)) AS same_unlisted,
       count(*) FILTER (WHERE simhash_weighted(body, 'bp_unlisted', idf => true) = simhash(body)) AS same_unlisted_idf,
       count(*) FROM bp_docs;
-- With idf a shingle of every document (df = N) has no vote (a text of only
-- such shingles is 0); without, max_df 1 drops nothing.
INSERT INTO bp_unlisted SELECT s, 1000 FROM unnest(simhash_shingles('alpha beta gamma delta')) s;
SELECT simhash_weighted('alpha beta gamma delta', 'bp_unlisted', 1) AS cut,
       simhash_weighted('alpha beta gamma delta', 'bp_unlisted', 1, true) AS idf,
       simhash(text 'alpha beta gamma delta') <> '0' AS plain_nonzero;
-- max_df: above that fraction of documents a shingle has no vote.
INSERT INTO bp_unlisted SELECT s, 100 FROM unnest(simhash_shingles('one two three four five')) s;
SELECT simhash_weighted('one two three four five', 'bp_unlisted', max_df => 0.1) = simhash(text 'one two three four five') AS kept,
       simhash_weighted('one two three four five', 'bp_unlisted', max_df => 0.099) AS dropped,
       simhash_weighted('one two three four five', 'bp_unlisted', 0.1, idf => true) = simhash(text 'one two three four five') AS kept_idf,
       simhash_weighted('one two three four five', 'bp_unlisted', 0.099, idf => true) AS dropped_idf;

-- The weights table may change from row to row: each call site reloads it when it does.
SELECT count(*) FILTER (WHERE w = CASE WHEN id % 2 = 0 THEN simhash(body)
                                       ELSE simhash_weighted(body, 'bp_docs_simhash_df') END) AS right, count(*)
  FROM (SELECT id, body, simhash_weighted(body, CASE WHEN id % 2 = 0 THEN 'bp_empty' ELSE 'bp_docs_simhash_df' END::regclass) AS w
          FROM bp_docs) s;

-- A call site that outlives its statement (PL/pgSQL keeps simple expressions
-- for the transaction) sees the weights table as the next statement does.
CREATE TABLE bp_mut (shingle bigint, df bigint);
INSERT INTO bp_mut VALUES (NULL, 10);
CREATE FUNCTION bp_w(t text) RETURNS simhash LANGUAGE plpgsql AS $$
BEGIN
    RETURN simhash_weighted(t, 'bp_mut');
END $$;
BEGIN;
SELECT bp_w('one two three four five') = simhash(text 'one two three four five') AS plain_before;
INSERT INTO bp_mut SELECT s, 10 FROM unnest(simhash_shingles('one two three four five')) s;
SELECT bp_w('one two three four five') AS all_boilerplate_after;
COMMIT;
DROP FUNCTION bp_w(text);
DROP TABLE bp_mut;

-- STABLE, not IMMUTABLE: no generated column or index expression; store it instead.
SELECT provolatile, proparallel FROM pg_proc WHERE oid = 'simhash_weighted'::regproc;
CREATE TABLE bp_gen (body text, fp simhash GENERATED ALWAYS AS (simhash_weighted(body, 'bp_docs_simhash_df')) STORED);
ALTER TABLE bp_docs ADD COLUMN fp_weighted simhash;
UPDATE bp_docs SET fp_weighted = simhash_weighted(body, 'bp_docs_simhash_df');
SELECT count(*) FROM bp_docs WHERE fp_weighted IS NULL;
-- and a trigger for new rows (the README's recipe)
CREATE FUNCTION bp_docs_fp() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.fp_weighted := simhash_weighted(NEW.body, 'bp_docs_simhash_df');
    RETURN NEW;
END $$;
CREATE TRIGGER bp_docs_fp BEFORE INSERT OR UPDATE OF body ON bp_docs
    FOR EACH ROW EXECUTE FUNCTION bp_docs_fp();
INSERT INTO bp_docs (id, body) SELECT 17, body FROM bp_docs WHERE id = 2;
SELECT a.fp_weighted = b.fp_weighted AS same, a.fp_weighted <> simhash(a.body) AS weighted
  FROM bp_docs a, bp_docs b WHERE a.id = 17 AND b.id = 2;
DELETE FROM bp_docs WHERE id = 17;
DROP TRIGGER bp_docs_fp ON bp_docs;
DROP FUNCTION bp_docs_fp();

-- Errors of simhash_weighted, with SQLSTATEs.
\set VERBOSITY sqlstate
SELECT simhash_weighted('x', 'bp_missing');                     -- 42P01
CREATE TABLE bp_dropped (shingle bigint, df bigint);
SELECT 'bp_dropped'::regclass::oid AS dropped_oid \gset
DROP TABLE bp_dropped;
SELECT simhash_weighted('x', :dropped_oid);                      -- 42P01
\set VERBOSITY default
SELECT simhash_weighted('x', 'bp_docs', 0.5);                    -- no shingle column
CREATE TABLE bp_nodf (shingle bigint, frequency int);
SELECT simhash_weighted('x', 'bp_nodf');
CREATE TABLE bp_texty (shingle text, df bigint);
SELECT simhash_weighted('x', 'bp_texty');
CREATE VIEW bp_view AS SELECT * FROM bp_empty;
SELECT simhash_weighted('x', 'bp_view');
CREATE TABLE bp_noheader (shingle bigint, df bigint);
INSERT INTO bp_noheader VALUES (1, 1);
SELECT simhash_weighted('x', 'bp_noheader');
INSERT INTO bp_noheader VALUES (NULL, 5), (NULL, 6);
SELECT simhash_weighted('x', 'bp_noheader');
CREATE TABLE bp_twice (shingle bigint, df bigint);
INSERT INTO bp_twice VALUES (NULL, 5), (7, 1), (7, 2);
SELECT simhash_weighted('x', 'bp_twice');
CREATE TABLE bp_zero (shingle bigint, df bigint);
INSERT INTO bp_zero VALUES (NULL, 5), (7, 0);
SELECT simhash_weighted('x', 'bp_zero');
SELECT simhash_weighted('x', 'bp_empty', 0);
SELECT simhash_weighted('x', 'bp_empty', 1.5);
SELECT simhash_weighted('x', 'bp_empty', 'NaN');
SELECT simhash_weighted('x', 'bp_empty', -0.5, true);
-- work_mem bounds the weights held in memory.
CREATE TABLE bp_big (shingle bigint, df bigint);
INSERT INTO bp_big SELECT i, 1 FROM generate_series(1, 20000) i;
INSERT INTO bp_big VALUES (NULL, 3);
SET work_mem = 64;
SELECT simhash_weighted('x', 'bp_big');
RESET work_mem;
SELECT simhash_weighted('x', 'bp_big') = simhash(text 'x') AS same;

-- Errors of simhash_df_build.
SELECT simhash_df_build('bp_docs', 'nobody');
SELECT simhash_df_build('bp_docs', 'id');
SELECT simhash_df_build('bp_docs', 'body');
SELECT simhash_df_build('bp_docs', 'body', min_df => 0);
SELECT simhash_df_build('bp_docs', 'body', weights => 'a.b.c');
SELECT simhash_df_build('bp_docs', NULL);

-- Permissions: the caller must read the body column and the weights table.
CREATE ROLE regress_simhash_boiler;
GRANT CREATE ON SCHEMA public TO regress_simhash_boiler;
SET ROLE regress_simhash_boiler;
SELECT simhash_df_build('bp_docs', 'body', weights => 'bp_df_other');
SELECT simhash_weighted('x', 'bp_docs_simhash_df');
RESET ROLE;
GRANT SELECT (body) ON bp_docs TO regress_simhash_boiler;
SET ROLE regress_simhash_boiler;
SET client_min_messages = warning;
SELECT simhash_df_build('bp_docs', 'body', weights => 'bp_df_other');
RESET client_min_messages;
SELECT pg_get_userbyid(relowner) FROM pg_class WHERE oid = 'bp_df_other'::regclass;
SELECT count(simhash_weighted(body, 'bp_df_other')) FROM bp_docs;
RESET ROLE;
SELECT count(*) FROM (SELECT shingle, df FROM bp_df_other EXCEPT SELECT shingle, df FROM bp_docs_simhash_df) d;
DROP TABLE bp_df_other;
REVOKE CREATE ON SCHEMA public FROM regress_simhash_boiler;
REVOKE SELECT (body) ON bp_docs FROM regress_simhash_boiler;
DROP ROLE regress_simhash_boiler;

DROP TABLE bp_docs, bp_docs_simhash_df, bp_df10, bp_empty, bp_unlisted, bp_nodf, bp_texty, bp_noheader,
           bp_twice, bp_zero, bp_big CASCADE;
