-- Online lookup: simhash_near_duplicates_of through a GIN index on
-- simhash_prefix_tokens (opclass simhash_prefix_ops: two common tokens).
-- Every lookup is compared with a sequential scan of simhash_similarity over
-- the whole table (the rows at or above the threshold, with the same
-- similarities), before and after inserts, deletes and VACUUM; then the
-- errors.
\set page `cat test/data/lighthouse.txt`
\set other `cat test/data/bakery.txt`
CREATE TABLE words AS
  SELECT row_number() OVER () AS i, w FROM regexp_split_to_table(:'page' || ' ' || :'other', '\s+') AS w;
-- windows of 1 to 400 words of two real pages, with copies edited the ways
-- documents change
CREATE TABLE lookup_docs (id serial PRIMARY KEY, k text, body text);
INSERT INTO lookup_docs (k, body)
  SELECT format('%s-%s', s, len), (SELECT string_agg(w, ' ' ORDER BY i) FROM words WHERE i >= s AND i < s + len)
    FROM generate_series(1, 1400, 97) AS s, unnest('{1,2,3,5,8,12,20,35,60,100,180,400}'::int[]) AS len;
INSERT INTO lookup_docs (k, body)
  SELECT k || '/typo', regexp_replace(body, '\m(the|and|of)\M', 'teh') FROM lookup_docs WHERE k ~ '-(12|35|100|400)$'
  UNION ALL
  SELECT k || '/cut', regexp_replace(body, '\.[^.]*\.', '.') FROM lookup_docs WHERE k ~ '-(20|60|180|400)$'
  UNION ALL
  SELECT k || '/header', 'Version 2.1 - updated ' || body FROM lookup_docs WHERE k ~ '-(3|8|35|100)$'
  UNION ALL
  SELECT k || '/truncated', left(body, length(body) * 9 / 10) FROM lookup_docs WHERE k ~ '-(5|60|180|400)$';
INSERT INTO lookup_docs (k, body) VALUES ('empty', ''), ('punctuation', '!!'), ('null', NULL);
-- the documents looked up: some stored, some edited anew, some unrelated
CREATE TABLE probes AS
  SELECT 'stored ' || k AS q, body AS doc FROM lookup_docs WHERE k ~ '^(98|389|874)-(12|60|400)'
  UNION ALL
  SELECT 'edited ' || k, replace(body, ' a ', ' one ') FROM lookup_docs WHERE k ~ '^(195|583)-(35|180|400)$'
  UNION ALL
  SELECT 'short ' || k, body FROM lookup_docs WHERE k ~ '^(1|97)-(1|2|3|5)$'
  UNION ALL
  VALUES ('empty', ''), ('unrelated', 'completely unrelated words that appear in no stored document at all');

-- golden tokens: a change of the tokenizer, the order, the size classes or
-- the token mix would make every index built before miss rows
SELECT simhash_prefix_tokens('The quick brown fox jumps over the lazy dog and naps', 0.5);
SELECT simhash_prefix_probe('The quick brown fox jumps over the lazy dog and naps', 0.9);

-- no index yet: 55000, and the hint is the statement to run
SELECT * FROM simhash_near_duplicates_of('lookup_docs', 'body', 'k', 'a b c d');
CREATE INDEX docs_prefix ON lookup_docs USING gin (simhash_prefix_tokens(body, 0.8) simhash_prefix_ops);

-- every probe at several thresholds: the lookup equals the sequential scan.
-- Per threshold t and probe: the rows the lookup returns, the rows the scan
-- finds (similarity >= t) that the lookup does not return and the rows it
-- returns that the scan does not find, both as EXCEPT ALL counts them (a
-- row n times in one and m times in the other counts max(n - m, 0) times).
-- The lookup runs once per threshold and probe, and each row's similarity
-- to each probe is computed once for all thresholds (probes are named
-- distinctly: q is their key).
CREATE FUNCTION mismatches(ts float8[]) RETURNS TABLE (t float8, q text, answers bigint, missing bigint, extra bigint)
LANGUAGE sql AS $$
  WITH scan AS MATERIALIZED (
         SELECT p.q, d.k, simhash_similarity(d.body, p.doc) AS s FROM probes p, lookup_docs d),
       found AS (
         SELECT x.t, p.q, f.k, f.s, 1 AS looked_up, 0 AS scanned
           FROM unnest(ts) x(t), probes p, simhash_near_duplicates_of('lookup_docs', 'body', 'k', p.doc, x.t) f(k, s)
         UNION ALL
         SELECT x.t, scan.q, scan.k, scan.s, 0, 1 FROM unnest(ts) x(t), scan WHERE scan.s >= x.t),
       counted AS (
         SELECT found.t, found.q, sum(looked_up) AS n, sum(scanned) AS m FROM found GROUP BY found.t, found.q, k, s)
  SELECT x.t, p.q, coalesce(sum(c.n), 0)::bigint, coalesce(sum(greatest(c.m - c.n, 0)), 0)::bigint,
         coalesce(sum(greatest(c.n - c.m, 0)), 0)::bigint
    FROM unnest(ts) x(t) CROSS JOIN probes p LEFT JOIN counted c ON c.t = x.t AND c.q = p.q
   GROUP BY x.t, p.q
$$;
SELECT t, count(*) AS probes, sum(answers) AS answers, sum(missing) AS missing, sum(extra) AS extra
  FROM mismatches('{0.8,0.85,0.9,0.95,1.0}') GROUP BY t ORDER BY t;
-- what some lookups return
SELECT * FROM simhash_near_duplicates_of('lookup_docs', 'body', 'k', (SELECT body FROM lookup_docs WHERE k = '389-400'), 0.8) ORDER BY 1;
SELECT * FROM simhash_near_duplicates_of('lookup_docs', 'body', 'k', '', 0.9) ORDER BY 1;
-- a candidate meets two of the probe's tokens: a row sharing one rare
-- shingle with the probe is no longer read (array_ops' && reads it)
SELECT count(*) FILTER (WHERE simhash_prefix_tokens(body, 0.8) && simhash_prefix_probe(p.doc, 0.8)) AS one_common,
       count(*) FILTER (WHERE simhash_prefix_tokens(body, 0.8) &&& simhash_prefix_probe(p.doc, 0.8)) AS two_common,
       count(*) FILTER (WHERE simhash_similarity(body, p.doc) >= 0.8) AS similar
  FROM lookup_docs, probes p WHERE p.q ~ '^(stored|edited)';
-- &&& itself: two distinct common elements, NULLs and repeats counted
-- once; the opclass answers as the operator does
SELECT a, b, a &&& b AS match
  FROM (VALUES ('{1,2,3}'::bigint[], '{3,2}'::bigint[]), ('{1,2,3}', '{3,4}'), ('{1,2}', '{1,1}'),
               ('{1,NULL}', '{1,NULL}'), ('{}', '{1,2}'), ('{5,6,5}', '{6,5}')) v(a, b);
CREATE TABLE token_rows AS
  SELECT i, ARRAY(SELECT (i * 7 + j * j) % 23 FROM generate_series(1, 1 + i % 6) j)::bigint[] AS a
    FROM generate_series(1, 400) i;
INSERT INTO token_rows VALUES (401, '{}'), (402, '{1,NULL,2}'), (403, NULL), (404, '{3,3,3}');
CREATE INDEX token_rows_a ON token_rows USING gin (a simhash_prefix_ops);
CREATE TABLE token_queries (q bigint[]);
INSERT INTO token_queries VALUES ('{1,2}'), ('{3,3}'), ('{3,4,5,6}'), ('{1,NULL,2}'), ('{}'), ('{7}'), ('{0,1,2,3,4,5,6,7,8,9,10,11}');
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT i FROM token_rows WHERE a &&& '{1,2}';
SELECT q, count(*) AS rows FROM token_queries, token_rows WHERE a &&& q GROUP BY q ORDER BY q;
RESET enable_seqscan;
SET enable_bitmapscan = off; SET enable_indexscan = off;
SELECT q, count(*) AS rows FROM token_queries, token_rows WHERE a &&& q GROUP BY q ORDER BY q;
RESET enable_bitmapscan; RESET enable_indexscan;
DROP TABLE token_rows, token_queries;
-- the lookup went through the index (one index scan per lookup)
SELECT pg_stat_get_xact_numscans('docs_prefix'::regclass) AS before \gset
SELECT count(*) FROM simhash_near_duplicates_of('lookup_docs', 'body', 'k', 'a lookup', 0.9);
SELECT pg_stat_get_xact_numscans('docs_prefix'::regclass) - :before AS index_scans;

-- rows inserted, updated and deleted after the build are found, or not
INSERT INTO lookup_docs (k, body) SELECT 'new ' || k, body || ' one more sentence at the end.' FROM lookup_docs WHERE k ~ '-(180|400)$';
UPDATE lookup_docs SET body = 'rewritten: ' || body WHERE k ~ '^583-';
DELETE FROM lookup_docs WHERE k ~ '^874-';
SELECT t, count(*) AS probes, sum(answers) AS answers, sum(missing) AS missing, sum(extra) AS extra
  FROM mismatches('{0.8,0.9}') GROUP BY t ORDER BY t;
VACUUM lookup_docs;
SELECT t, count(*) AS probes, sum(answers) AS answers, sum(missing) AS missing, sum(extra) AS extra
  FROM mismatches('{0.8,0.9}') GROUP BY t ORDER BY t;

-- below the index's threshold: 55000 naming the thresholds it serves;
-- another index serves it, and the 0.8 index still serves 0.8
SELECT * FROM simhash_near_duplicates_of('lookup_docs', 'body', 'k', 'a b c d', 0.6);
CREATE INDEX docs_prefix_06 ON lookup_docs USING gin (simhash_prefix_tokens(body, 0.6) simhash_prefix_ops);
SELECT t, count(*) AS probes, sum(answers) AS answers, sum(missing) AS missing, sum(extra) AS extra
  FROM mismatches('{0.6,0.7,0.8}') GROUP BY t ORDER BY t;
-- low thresholds, where small sets are similar with one common shingle
-- (J = 1/2, 1/3): their tokens come twice
CREATE INDEX docs_prefix_03 ON lookup_docs USING gin (simhash_prefix_tokens(body, 0.3) simhash_prefix_ops);
SELECT t, count(*) AS probes, sum(answers) AS answers, sum(missing) AS missing, sum(extra) AS extra
  FROM mismatches('{0.3,0.34,0.5}') GROUP BY t ORDER BY t;
DROP INDEX docs_prefix_03;
-- an index with its own list of frequent shingles to keep out of the
-- prefixes (here the 40 most frequent of the table): still exact, and used
DROP INDEX docs_prefix, docs_prefix_06;
DO $$ BEGIN
  EXECUTE format('CREATE INDEX docs_prefix_listed ON lookup_docs USING gin (simhash_prefix_tokens(body, 0.8, %L) simhash_prefix_ops)',
                 (SELECT array_agg(h ORDER BY n DESC, h) FROM (SELECT h, count(*) AS n FROM lookup_docs, unnest(simhash_shingles(body)) h
                                                            GROUP BY h ORDER BY count(*) DESC, h LIMIT 40) f));
END $$;
SELECT t, count(*) AS probes, sum(answers) AS answers, sum(missing) AS missing, sum(extra) AS extra
  FROM mismatches('{0.8,0.9}') GROUP BY t ORDER BY t;
SELECT pg_stat_get_xact_numscans('docs_prefix_listed'::regclass) AS before \gset
SELECT count(*) FROM simhash_near_duplicates_of('lookup_docs', 'body', 'k', 'a lookup', 0.9);
SELECT pg_stat_get_xact_numscans('docs_prefix_listed'::regclass) - :before AS index_scans;
SELECT simhash_prefix_tokens('a b c d e', 0.8, '{1,NULL}');

-- an index the lookup cannot use is not taken: partial, or on another expression
DROP INDEX docs_prefix_listed;
CREATE INDEX ON lookup_docs USING gin (simhash_prefix_tokens(body, 0.8) simhash_prefix_ops) WHERE id > 0;
CREATE INDEX ON lookup_docs USING gin (simhash_prefix_tokens(lower(body), 0.8) simhash_prefix_ops);
-- array_ops answers && (one common token), not &&&
CREATE INDEX ON lookup_docs USING gin (simhash_prefix_tokens(body, 0.8));
SELECT * FROM simhash_near_duplicates_of('lookup_docs', 'body', 'k', 'a b c d', 0.8);

-- bad input
CREATE INDEX docs_prefix ON lookup_docs USING gin (simhash_prefix_tokens(body, 0.8) simhash_prefix_ops);
SELECT * FROM simhash_near_duplicates_of('lookup_docs', 'body', 'k', NULL);
SELECT * FROM simhash_near_duplicates_of('lookup_docs', 'body', 'k', 'a b c d', 0);
SELECT * FROM simhash_near_duplicates_of('lookup_docs', 'body', 'k', 'a b c d', 1.5);
SELECT * FROM simhash_near_duplicates_of('lookup_docs', 'body', 'k', 'a b c d', NULL);
SELECT * FROM simhash_near_duplicates_of('lookup_docs', 'k', 'body', 'a b c d');
SELECT * FROM simhash_near_duplicates_of('lookup_docs', 'id', 'k', 'a b c d');
SELECT * FROM simhash_near_duplicates_of('lookup_docs', 'nobody', 'k', 'a b c d');
SELECT * FROM simhash_near_duplicates_of('lookup_docs', 'body', 'nokey', 'a b c d');
SELECT simhash_prefix_tokens('a b c d', 0);
SELECT simhash_prefix_probe('a b c d', 2);
-- a huge document within work_mem, or 53200 with a hint
SET work_mem = '64kB';
SELECT * FROM simhash_near_duplicates_of('lookup_docs', 'body', 'k', repeat('many words here ', 20000));
RESET work_mem;
SELECT count(*) FROM simhash_near_duplicates_of('lookup_docs', 'body', 'k', repeat('many words here ', 20000));

-- the caller's rights: column privileges and row-level security
CREATE ROLE nd_of_reader;
GRANT SELECT (k) ON lookup_docs TO nd_of_reader;
SET ROLE nd_of_reader;
SELECT * FROM simhash_near_duplicates_of('lookup_docs', 'body', 'k', 'a b c d');
RESET ROLE;
GRANT SELECT ON lookup_docs TO nd_of_reader;
ALTER TABLE lookup_docs ENABLE ROW LEVEL SECURITY;
CREATE POLICY only_old ON lookup_docs FOR SELECT USING (k !~ '^new ');
SELECT doc AS d389 FROM probes WHERE q = 'stored 389-400' \gset
SET ROLE nd_of_reader;
SELECT * FROM simhash_near_duplicates_of('lookup_docs', 'body', 'k', :'d389', 0.8) ORDER BY 1;
RESET ROLE;
SELECT * FROM simhash_near_duplicates_of('lookup_docs', 'body', 'k', :'d389', 0.8) ORDER BY 1;
DROP POLICY only_old ON lookup_docs;
ALTER TABLE lookup_docs DISABLE ROW LEVEL SECURITY;
REVOKE ALL ON lookup_docs FROM nd_of_reader;
DROP ROLE nd_of_reader;
