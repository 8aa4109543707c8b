-- Exact similarity: simhash_similarity(text, text), simhash_shingles,
-- simhash_similarity(bigint[], bigint[]).
-- Golden values: test/golden/similarity_reference.py (an independent
-- reference: shingles as tuples of token strings, no hashing).
\set fox 'the quick brown fox jumps over the lazy dog'
SELECT simhash_similarity('', '') AS both_empty,
       simhash_similarity('', 'hello') AS one_empty,
       simhash_similarity('!!! ...', '--') AS no_tokens_either,
       simhash_similarity(:'fox', upper(:'fox')) AS folded_equal,
       simhash_similarity(:'fox', 'the quick brown fox jumped over the lazy dog') AS four_of_ten,
       simhash_similarity(:'fox', 'the quick brown fox jumped over the lazy dog', shingle => 1) AS seven_of_nine;
SELECT simhash_similarity('a b c a b c a b c', 'a b c') AS distinct_sets,
       simhash_similarity('Hello World', 'hello world', 2, casefold => false) AS no_folding,
       simhash_similarity('hello world', 'hello world again') AS short_texts,
       simhash_similarity('Καλημέρα κόσμε, привет мир 2024', 'καλημέρα ΚΌΣΜΕ привет мир 2025') AS greek_cyrillic,
       simhash_similarity('日本語のテキスト', '日本語のテキスト です', 2, 'chars') AS cjk_chars;
\set page `cat test/data/lighthouse.txt`
\set other `cat test/data/bakery.txt`
SELECT simhash_similarity(:'other', :'page') AS bakery_lighthouse,
       simhash_similarity(:'other', :'page', shingle => 1) AS bakery_lighthouse_words,
       simhash_similarity(:'other', substr(:'other', 401)) AS bakery_cut;
-- symmetric; the sets are the fingerprint's features; the array form agrees
SELECT simhash_similarity(:'page', left(:'page', 3000)) = simhash_similarity(left(:'page', 3000), :'page') AS symmetric,
       simhash_compute(simhash_shingles(:'fox')) = simhash(:'fox'::text) AS features_of_simhash,
       cardinality(simhash_shingles(:'fox')) AS fox_shingles,
       cardinality(simhash_shingles(:'page')) AS page_shingles,
       simhash_similarity(simhash_shingles(:'page'), simhash_shingles(replace(:'page', 'porridge', 'oatmeal')))
         = simhash_similarity(:'page', replace(:'page', 'porridge', 'oatmeal')) AS array_form_agrees,
       simhash_shingles('') AS no_shingles,
       simhash_similarity('{}'::bigint[], '{}') AS empty_sets;
-- options validated as simhash(text)'s
SELECT simhash_similarity('x', 'y', shingle => 0);
SELECT simhash_similarity('x', 'y', shingle => 65);
SELECT simhash_similarity('x', 'y', tokens => 'bytes');
SELECT simhash_shingles('x', shingle => 0);
-- sets must be what simhash_shingles returns
SELECT simhash_similarity('{3,2}'::bigint[], '{1}');
SELECT simhash_similarity('{1}'::bigint[], '{5,5}');
SELECT simhash_similarity('{1,NULL}'::bigint[], '{1}');
SELECT simhash_similarity('{{1,2}}'::bigint[], '{1}');
-- NULL in, NULL out; volatility and safety
SELECT simhash_similarity(NULL, 'x') IS NULL AS null_text, simhash_similarity('x', 'y', NULL) IS NULL AS null_option;
SELECT p.oid::regprocedure, p.provolatile, p.proisstrict, p.proparallel
  FROM pg_proc p WHERE p.proname IN ('simhash_similarity', 'simhash_shingles')
 ORDER BY 1::text;
-- the shingle sets are held within work_mem: past it 53200 with a hint (a
-- 100 MB pair took 485 MB, with no bound a DBA could set); repeated
-- shingles take no room, and the answer does not depend on work_mem
SET work_mem = '64kB';
\set VERBOSITY default
SELECT simhash_similarity((SELECT string_agg('w' || g, ' ') FROM generate_series(1, 10000) g), 'w1 w2 w3');
\set VERBOSITY terse
SELECT simhash_similarity((SELECT string_agg('w' || (g % 100), ' ') FROM generate_series(1, 100000) g), 'w1 w2 w3') AS repeated_64kb \gset
RESET work_mem;
SELECT simhash_similarity((SELECT string_agg('w' || (g % 100), ' ') FROM generate_series(1, 100000) g), 'w1 w2 w3') = :repeated_64kb AS same_as_default_work_mem,
       :repeated_64kb > 0 AS nonzero;
