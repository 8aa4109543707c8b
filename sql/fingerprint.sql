-- Fingerprints: simhash(text), simhash(tsvector), simhash_compute, simhash_agg.
-- Golden values: test/golden/text_reference.py (independent reference).
-- A lone string literal in simhash('...') is the type's own literal (hex), as
-- for every type name; text literals are typed: simhash(text '...').
SELECT simhash(text 'hello world') AS hello, simhash(text 'Hello, World!') AS same,
       simhash(text '') AS empty, simhash(text 'hello') AS one_token, simhash('1a40201a26358020') AS hex_literal;
SELECT simhash(text 'the quick brown fox jumps over the lazy dog') AS default_options,
       simhash('the quick brown fox jumps over the lazy dog', shingle => 1) AS words,
       simhash('The Quick Brown Fox', shingle => 2, casefold => false) AS no_folding,
       simhash('日本語のテキスト', tokens => 'chars') AS cjk,
       simhash(text 'Καλημέρα κόσμε, привет мир 2024') AS greek_cyrillic;
SELECT simhash('ONE two', tokens => 'WORDS') = simhash(text 'one two') AS mode_case_insensitive;
-- bad options
SELECT simhash('x', shingle => 0);
SELECT simhash('x', shingle => 65);
SELECT simhash('x', tokens => 'bytes');
-- NULL in, NULL out
SELECT simhash(NULL::text) IS NULL AS null_text, simhash('x', NULL) IS NULL AS null_option;
SELECT p.proname, p.provolatile, p.proisstrict, p.proparallel
  FROM pg_proc p WHERE p.proname IN ('simhash', 'simhash_compute', 'simhash_seomoz', 'simhash_html')
   AND p.prorettype = 'simhash'::regtype AND p.pronargs > 0
   AND p.proargtypes[0] IN ('text'::regtype, 'tsvector'::regtype, 'bigint[]'::regtype)
 ORDER BY 1, p.proargtypes::text;

-- Near duplicates on a real page (test/data/lighthouse.txt, 1,151 words).
\set page `cat test/data/lighthouse.txt`
\set other `cat test/data/bakery.txt`
SELECT length(:'page') > 6000 AS long_page,
       simhash(:'page'::text) <~> simhash(replace(:'page', 'porridge', 'oatmeal')) <= 3 AS one_word_changed,
       simhash(:'page'::text) <~> simhash(:'other'::text) > 10 AS unrelated_far;

-- The server encoding does not change a fingerprint.
CREATE DATABASE simhash_latin1 ENCODING 'LATIN1' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0;
SELECT simhash(text 'Café crème brûlée') AS utf8_value \gset
\c simhash_latin1
SET client_encoding = UTF8;
CREATE EXTENSION simhash;
SELECT current_setting('server_encoding') AS server_encoding;
SELECT simhash(text 'Café crème brûlée') = :'utf8_value' AS same_in_latin1;
\c contrib_regression
DROP DATABASE simhash_latin1;

-- tsvector: lexemes are features weighted by label
SELECT simhash(to_tsvector('english', 'The quick brown foxes jumped over the lazy dogs'))
     = simhash(to_tsvector('english', 'quick brown fox jumps over lazy dog')) AS stemmed_and_stopwords_dropped;
SELECT simhash(''::tsvector) AS empty_tsvector;
-- one A lexeme outweighs three D lexemes: the fingerprint is its hash
SELECT simhash(setweight(to_tsvector('english', 'alpha'), 'A') || to_tsvector('english', 'beta gamma delta'))
     = simhash(to_tsvector('english', 'alpha')) AS heavy_lexeme_wins,
       simhash(to_tsvector('english', 'alpha beta gamma delta'))
     <> simhash(to_tsvector('english', 'alpha')) AS equal_weights_differ;
SELECT simhash(strip(to_tsvector('english', 'alpha beta gamma')))
     = simhash(to_tsvector('english', 'alpha beta gamma')) AS strip_keeps_equal_weights;

-- simhash_compute: the classic compute() on raw feature hashes
SELECT simhash_compute(ARRAY[x'ABCD'::bigint, x'BCDE'::bigint, x'CDEF'::bigint]) AS adcf,
       simhash_compute(ARRAY[1234567::bigint, ~1234567::bigint]) AS opposite,
       simhash_compute('{}') AS empty,
       simhash_compute(ARRAY[x'ABCD'::bigint, NULL, x'BCDE'::bigint, x'CDEF'::bigint]) AS nulls_skipped;

-- simhash_agg equals simhash_compute; weights decide the vote
SELECT simhash_agg(f) AS agg, simhash_compute(array_agg(f)) AS compute
  FROM unnest(ARRAY[x'ABCD'::bigint, x'BCDE'::bigint, x'CDEF'::bigint]) f;
SELECT simhash_agg(f, w) FROM (VALUES (x'FF'::bigint, 1.0), (x'0F'::bigint, 3.0)) v(f, w);
SELECT simhash_agg(f) AS no_rows FROM (SELECT 1::bigint f WHERE false) s;
SELECT simhash_agg(f, 'NaN') FROM (VALUES (1::bigint)) v(f);
-- weights near the largest float8 never overflow the sums: every one of the
-- 120 orders of these five rows gives the same fingerprint, 1 (bit 0 sums to
-- +1, bit 1 and bit 2 to -1, every other bit to -4 * 1.7e308 - 1)
WITH v(k, f, w) AS (VALUES (1, 3::bigint, 1.7e308::float8), (2, 1, 1.7e308), (3, 6, 1.7e308),
                           (4, 4, 1.7e308), (5, 1, 1)),
     orders AS (SELECT ARRAY[a.k, b.k, c.k, d.k, e.k] AS o
                  FROM v a, v b, v c, v d, v e
                 WHERE cardinality(ARRAY(SELECT DISTINCT x FROM unnest(ARRAY[a.k, b.k, c.k, d.k, e.k]) x)) = 5)
SELECT count(*) AS orders, count(DISTINCT fp) AS results, min(fp::text) AS fp
  FROM (SELECT (SELECT simhash_agg(v.f, v.w ORDER BY array_position(orders.o, v.k)) FROM v) AS fp
          FROM orders) s;
-- parallel aggregation agrees with serial
CREATE TABLE feats AS SELECT g AS grp, hashint8(i) * 2654435761::bigint AS f
  FROM generate_series(1, 40000) i, LATERAL (SELECT i % 3 AS g) s;
ANALYZE feats;
SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
EXPLAIN (COSTS OFF) SELECT simhash_agg(f) FROM feats;
SELECT simhash_agg(f) AS parallel_value FROM feats \gset
RESET max_parallel_workers_per_gather;
SET max_parallel_workers_per_gather = 0;
SELECT simhash_agg(f) = :'parallel_value' AS same_serial, simhash_compute(array_agg(f)) = :'parallel_value' AS same_compute FROM feats;
SELECT grp, simhash_agg(f) = simhash_compute(array_agg(f)) AS agrees FROM feats GROUP BY grp ORDER BY grp;
RESET ALL;
DROP TABLE feats;
