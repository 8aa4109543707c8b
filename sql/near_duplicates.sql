-- Verified near-duplicates: simhash_near_duplicates and
-- simhash_near_duplicate_survivors.  Every result is compared with the
-- brute force over all pairs (simhash_similarity of every pair of bodies):
-- the function must return exactly the pairs at or above the threshold,
-- with the same similarities (precision and recall 1).
CREATE TABLE nd (id int PRIMARY KEY, body text, fp simhash, created date);
INSERT INTO nd (id, body, created) VALUES
 (1, 'the quick brown fox jumps over the lazy dog', '2020-01-01'),
 (2, 'the quick brown fox jumps over the lazy dog', '2021-01-01'),
 (3, 'the quick brown fox jumps over the lazy dog today', '2019-01-01'),
 (4, 'something else entirely different here ok', '2022-01-01'),
 (5, '', '2022-01-01'),
 (6, '!!', '2022-01-01'),
 (7, 'the quick brown fox jumps over the lazy cat', '2018-01-01'),
 (8, NULL, '2018-01-01');
UPDATE nd SET fp = simhash(body);
SELECT * FROM simhash_near_duplicates('nd', 'fp', 'body', 'id', 0.5) ORDER BY 1, 2;

-- Real text of every length: windows of 1 to 400 words of two real pages
-- (test/data), each with copies edited the ways documents change (a word
-- replaced, a sentence cut, a header added, the end truncated).
\set page `cat test/data/lighthouse.txt`
\set other `cat test/data/bakery.txt`
CREATE TABLE words AS
  SELECT row_number() OVER () AS i, w FROM regexp_split_to_table(:'page' || ' ' || :'other', '\s+') AS w;
CREATE TABLE real_docs (k text, body text, fp simhash);
INSERT INTO real_docs (k, body)
  SELECT format('%s-%s', s, len), (SELECT string_agg(w, ' ' ORDER BY i) FROM words WHERE i >= s AND i < s + len)
    FROM generate_series(1, 1400, 97) AS s, unnest('{1,2,3,5,8,12,20,35,60,100,180,400}'::int[]) AS len;
INSERT INTO real_docs (k, body)
  SELECT k || '/typo', regexp_replace(body, '\m(the|and|of)\M', 'teh') FROM real_docs WHERE k ~ '-(12|35|100|400)$'
  UNION ALL
  SELECT k || '/cut', regexp_replace(body, '\.[^.]*\.', '.') FROM real_docs WHERE k ~ '-(20|60|180|400)$'
  UNION ALL
  SELECT k || '/header', 'Version 2.1 - updated ' || body FROM real_docs WHERE k ~ '-(3|8|35|100)$'
  UNION ALL
  SELECT k || '/truncated', left(body, length(body) * 9 / 10) FROM real_docs WHERE k ~ '-(5|60|180|400)$';
UPDATE real_docs SET fp = simhash(body);
CREATE TABLE truth AS
  SELECT a.k AS key_a, b.k AS key_b, simhash_similarity(a.body, b.body) AS similarity
    FROM real_docs a JOIN real_docs b ON a.k COLLATE "C" < b.k COLLATE "C";
-- precondition: true pairs at every threshold, among short and long documents
SELECT t, count(*) FILTER (WHERE similarity >= t) > 10 AS has_pairs,
       count(*) FILTER (WHERE similarity >= t AND key_a ~ '-(1|2|3|5|8)(/|$)') > 0 AS has_short_pairs,
       count(*) FILTER (WHERE similarity >= t AND key_a ~ '-(180|400)(/|$)') > 0 AS has_long_pairs
  FROM truth, unnest('{0.5,0.7,0.8,0.9}'::float8[]) AS t GROUP BY t ORDER BY t;
SET client_min_messages = warning;
CREATE FUNCTION nd_mismatches(t float8) RETURNS bigint LANGUAGE sql AS $$
  WITH got AS (SELECT * FROM simhash_near_duplicates('real_docs', 'fp', 'body', 'k', t)),
       want AS (SELECT * FROM truth WHERE similarity >= t)
  SELECT (SELECT count(*) FROM (SELECT * FROM got EXCEPT ALL SELECT * FROM want) x)
       + (SELECT count(*) FROM (SELECT * FROM want EXCEPT ALL SELECT * FROM got) y)
$$;
SELECT t, nd_mismatches(t) AS mismatches FROM unnest('{0.3,0.5,0.7,0.8,0.9,1.0}'::float8[]) AS t ORDER BY t;
-- the in-memory join itself (what the calls above used: the NOTICE below
-- says so), over a cursor, at every threshold
CREATE FUNCTION nd_cursor_mismatches(t float8) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  c refcursor;
  n bigint;
BEGIN
  OPEN c FOR SELECT k, body FROM real_docs;
  CREATE TEMP TABLE got AS SELECT * FROM simhash_near_duplicates_cursor(c, t);
  SELECT (SELECT count(*) FROM (SELECT * FROM got EXCEPT ALL SELECT * FROM truth WHERE similarity >= t) x)
       + (SELECT count(*) FROM (SELECT * FROM truth WHERE similarity >= t EXCEPT ALL SELECT * FROM got) y) INTO n;
  DROP TABLE got;
  RETURN n;
END
$$;
SELECT t, nd_cursor_mismatches(t) AS mismatches FROM unnest('{0.3,0.5,0.7,0.8,0.9,1.0}'::float8[]) AS t ORDER BY t;
RESET client_min_messages;
SELECT count(*) FROM simhash_near_duplicates('real_docs', 'fp', 'body', 'k', 0.8);
-- progress: a NOTICE every 100 rows read and every 100 sets joined
SET simhash.near_duplicates_progress = 100;
SELECT count(*) FROM simhash_near_duplicates('real_docs', 'fp', 'body', 'k', 0.8);
RESET simhash.near_duplicates_progress;
-- the same answer on disk: at the smallest work_mem the distinct sets go to
-- temporary files and the join runs in chunks of sets (a NOTICE after each
-- chunk); at every threshold against the truth (the naive join of every
-- pair) and against the in-memory join
SET work_mem = '64kB';
SELECT count(*) FROM simhash_near_duplicates('real_docs', 'fp', 'body', 'k', 0.8);
SET client_min_messages = warning;
SELECT t, nd_mismatches(t) AS mismatches_64kb, nd_cursor_mismatches(t) AS cursor_mismatches_64kb
  FROM unnest('{0.3,0.5,0.7,0.8,0.9,1.0}'::float8[]) AS t ORDER BY t;
RESET work_mem;
CREATE TABLE nd_in_memory AS
  SELECT t, p.* FROM unnest('{0.5,0.8,0.9}'::float8[]) AS t, simhash_near_duplicates('real_docs', 'fp', 'body', 'k', t) p;
SET work_mem = '64kB';
CREATE TABLE nd_on_disk AS
  SELECT t, p.* FROM unnest('{0.5,0.8,0.9}'::float8[]) AS t, simhash_near_duplicates('real_docs', 'fp', 'body', 'k', t) p;
RESET work_mem;
SELECT (SELECT count(*) FROM nd_in_memory) AS pairs,
       (SELECT count(*) FROM (SELECT * FROM nd_in_memory EXCEPT ALL SELECT * FROM nd_on_disk) x)
     + (SELECT count(*) FROM (SELECT * FROM nd_on_disk EXCEPT ALL SELECT * FROM nd_in_memory) y) AS differences;
DROP TABLE nd_in_memory, nd_on_disk;
RESET client_min_messages;
-- the threshold reaches the join as a number, whatever extra_float_digits
-- says (it was once printed into SQL text, where at -15 0.96 became 1 and
-- this pair of similarity 2400 / 2500 was lost)
CREATE TABLE nd_digits (id int, body text, fp simhash GENERATED ALWAYS AS (simhash(body)) STORED);
INSERT INTO nd_digits (id, body) SELECT 1, string_agg('w' || g, ' ') FROM generate_series(1, 2402) g;
INSERT INTO nd_digits (id, body) SELECT 2, string_agg('w' || g, ' ') FROM generate_series(1, 2502) g;
SET client_min_messages = warning;
SET extra_float_digits = -15;
SELECT key_a, key_b, similarity::numeric(6, 4) FROM simhash_near_duplicates('nd_digits', 'fp', 'body', 'id', 0.96);
SET work_mem = '64kB';
SELECT key_a, key_b, similarity::numeric(6, 4) FROM simhash_near_duplicates('nd_digits', 'fp', 'body', 'id', 0.96);
SELECT duplicate, survivor, similarity::numeric(6, 4) FROM simhash_near_duplicate_survivors('nd_digits', 'fp', 'body', 'id', 0.96);
RESET work_mem;
RESET extra_float_digits;
DROP TABLE nd_digits;
-- on disk as in memory with empty texts (no shingle), exact copies and edited
-- copies mixed: identical sets are found by sorting their digests
CREATE TABLE nd_mixed AS
  SELECT g AS id, 0::bigint AS fp,
         CASE WHEN g % 5 = 0 THEN '.'
              WHEN g % 5 = 1 THEN 'copy ' || (g % 7) || ' of a text of several words'
              ELSE (SELECT string_agg('w' || ((g * 31 + i * 7) % (40 + g % 9)), ' ') FROM generate_series(1, 30 + g % 4) i)
         END AS body
  FROM generate_series(1, 300) g;
CREATE TABLE nd_mixed_mem AS SELECT * FROM simhash_near_duplicates('nd_mixed', 'fp', 'body', 'id', 0.6);
SET work_mem = '64kB';
CREATE TABLE nd_mixed_disk AS SELECT * FROM simhash_near_duplicates('nd_mixed', 'fp', 'body', 'id', 0.6);
RESET work_mem;
SELECT (SELECT count(*) FROM nd_mixed_mem) AS pairs,
       (SELECT count(*) FROM nd_mixed_mem WHERE similarity = 1) AS identical,
       (SELECT count(*) FROM (SELECT * FROM nd_mixed_mem EXCEPT ALL SELECT * FROM nd_mixed_disk) x)
     + (SELECT count(*) FROM (SELECT * FROM nd_mixed_disk EXCEPT ALL SELECT * FROM nd_mixed_mem) y) AS differences;
DROP TABLE nd_mixed, nd_mixed_mem, nd_mixed_disk;
-- one huge text: on disk, its join would take far more than work_mem, so it
-- is refused up front (53200) with the work_mem it needs; in memory it joins
CREATE TABLE nd_huge (id int, body text, fp bigint DEFAULT 0);
INSERT INTO nd_huge (id, body) SELECT 1, string_agg('w' || g, ' ') FROM generate_series(1, 400000) g;
INSERT INTO nd_huge (id, body) SELECT 2, string_agg('w' || g, ' ') FROM generate_series(1, 20) g;
INSERT INTO nd_huge (id, body) SELECT 3, string_agg('w' || g, ' ') FROM generate_series(1, 21) g;
SET work_mem = '64kB';
SELECT count(*) FROM simhash_near_duplicates('nd_huge', 'fp', 'body', 'id');
SET work_mem = '64MB';
SELECT key_a, key_b, similarity::numeric(6, 4) FROM simhash_near_duplicates('nd_huge', 'fp', 'body', 'id');
RESET work_mem;
DROP TABLE nd_huge;
-- exact copies: the pairs of rows that share a text are counted before any
-- is written, so more than temp_file_limit holds is refused at once; and
-- writing them can be cancelled (3,000 copies: 4,498,500 pairs)
CREATE TABLE nd_copies AS
  SELECT g AS id, 'one and the same text of a few words' AS body, 0::bigint AS fp FROM generate_series(1, 3000) g;
SET temp_file_limit = '1MB';
SELECT count(*) FROM simhash_near_duplicates('nd_copies', 'fp', 'body', 'id');
RESET temp_file_limit;
SET statement_timeout = '100ms';
SELECT count(*) FROM simhash_near_duplicates('nd_copies', 'fp', 'body', 'id');
SET work_mem = '64kB';
SELECT count(*) FROM simhash_near_duplicates('nd_copies', 'fp', 'body', 'id');
RESET work_mem;
-- survivors: the error of a timeout names no temporary table
\set SHOW_CONTEXT always
SELECT count(*) FROM simhash_near_duplicate_survivors('nd_copies', 'fp', 'body', 'id');
\set SHOW_CONTEXT errors
RESET statement_timeout;
RESET client_min_messages;
DROP TABLE nd_copies;
-- an empty table, and a view
CREATE TABLE nd_empty (k int, body text, fp simhash);
CREATE VIEW nd_view AS SELECT * FROM nd_empty;
SELECT count(*) FROM simhash_near_duplicates('nd_empty', 'fp', 'body', 'k');
SELECT count(*) FROM simhash_near_duplicates('nd_view', 'fp', 'body', 'k');
SELECT count(*) FROM simhash_near_duplicate_survivors('nd_empty', 'fp', 'body', 'k');
DROP VIEW nd_view;
DROP TABLE nd_empty;

-- Survivors: one per group, never chained.  By length (longest kept): 3
-- removes 1 and 2; 7 stays although it is similar to 1 (J 0.75), because 1
-- was removed and 7 is not similar enough to 3 (J 0.67).
SELECT * FROM simhash_near_duplicate_survivors('nd', 'fp', 'body', 'id', 0.7) ORDER BY 1;
-- oldest kept: 7 survives and removes 1 and 2; 3 is not similar enough to 7
SELECT * FROM simhash_near_duplicate_survivors('nd', 'fp', 'body', 'id', 0.7, 'created', false) ORDER BY 1;
-- a recipe: delete the duplicates
BEGIN;
DELETE FROM nd WHERE id::text IN (SELECT duplicate FROM simhash_near_duplicate_survivors('nd', 'fp', 'body', 'id', 0.7));
SELECT array_agg(id ORDER BY id) AS kept FROM nd;
ROLLBACK;

-- bad arguments
\set SHOW_CONTEXT never
SELECT * FROM simhash_near_duplicates('nd', 'fp', 'body', 'id', 0);
SELECT * FROM simhash_near_duplicates('nd', 'fp', 'body', 'id', 1.5);
SELECT * FROM simhash_near_duplicates('nd', 'fp', 'body', 'id', 'NaN');
SELECT * FROM simhash_near_duplicates('nd', 'fp', 'nobody', 'id');
SELECT * FROM simhash_near_duplicates('nd', 'fp', 'created', 'id');
SELECT * FROM simhash_near_duplicates('nd', 'body', 'body', 'id');
SELECT * FROM simhash_near_duplicates('nd', 'fp', 'body', 'id', -0.5);
SELECT * FROM simhash_near_duplicate_survivors('nd', 'fp', 'body', 'id', 0.8, 'nocolumn');
-- a keep_by that cannot be sorted fails before any pair is computed (no NOTICE)
ALTER TABLE nd ADD COLUMN meta json DEFAULT '{}';
SELECT * FROM simhash_near_duplicate_survivors('nd', 'fp', 'body', 'id', 0.8, 'meta');
ALTER TABLE nd DROP COLUMN meta;
-- key and body swapped: a body column with no shingles in nearly every row,
-- or keys far longer than the bodies, is an error naming the column
CREATE TABLE pages (summary text, url text, body text, fp simhash);
INSERT INTO pages (summary, url, body)
  SELECT CASE WHEN g = 1 THEN 'a page about a lighthouse' ELSE '' END, 'https://example.com/news/' || g || '/a-title',
         (SELECT string_agg(w, ' ' ORDER BY i) FROM words WHERE i BETWEEN g * 10 AND g * 10 + 60)
    FROM generate_series(1, 20) g;
UPDATE pages SET fp = simhash(body);
SELECT * FROM simhash_near_duplicates('pages', 'fp', 'summary', 'url');
SELECT * FROM simhash_near_duplicates('pages', 'fp', 'url', 'body');
SELECT count(*) FROM simhash_near_duplicates('pages', 'fp', 'body', 'url');
DROP TABLE pages;
-- argument errors are raised before anything runs: no CONTEXT lines
\set SHOW_CONTEXT always
SELECT * FROM simhash_near_duplicates('nd', 'fp', 'body', 'id', 2);
SELECT * FROM simhash_near_duplicates('nd', 'fp', 'nobody', 'id');
SELECT * FROM simhash_near_duplicates(0, 'fp', 'body', 'id');
\set SHOW_CONTEXT never
SELECT * FROM simhash_near_duplicates_cursor('no_such_cursor', 0.8);
BEGIN;
DECLARE one_column CURSOR FOR SELECT body FROM nd;
SELECT * FROM simhash_near_duplicates_cursor('one_column', 0.8);
ROLLBACK;
BEGIN;
DECLARE ok CURSOR FOR SELECT id::text, body FROM nd;
SELECT * FROM simhash_near_duplicates_cursor('ok', 0);
ROLLBACK;
-- the caller's rights: SELECT on every column read
CREATE ROLE regress_nd_reader;
GRANT SELECT (id, fp) ON nd TO regress_nd_reader;
SET ROLE regress_nd_reader;
SELECT * FROM simhash_near_duplicates('nd', 'fp', 'body', 'id');
RESET ROLE;
GRANT SELECT (body) ON nd TO regress_nd_reader;
SET ROLE regress_nd_reader;
SELECT count(*) FROM simhash_near_duplicates('nd', 'fp', 'body', 'id');
SELECT * FROM simhash_near_duplicate_survivors('nd', 'fp', 'body', 'id', 0.7, 'created');
RESET ROLE;
\set SHOW_CONTEXT errors
DROP TABLE nd, words, real_docs, truth;
DROP FUNCTION nd_mismatches(float8), nd_cursor_mismatches(float8);
DROP ROLE regress_nd_reader;
