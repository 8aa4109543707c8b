-- simhash(x) for every string type fingerprints the text, as simhash(text)
-- does.  PostgreSQL reads a one-argument call named after a type as a cast
-- when no function takes the argument's exact type, so before 1.2
-- simhash('cafe'::varchar) was the hex literal 000000000000cafe.
SET jit = off;

-- varchar: the same as text, with and without options
SELECT simhash('cafe'::varchar) = simhash('cafe'::text) AS cafe,
       simhash('cafe'::varchar) <> '000000000000cafe' AS not_hex,
       simhash('The quick brown fox'::varchar(40)) = simhash('The quick brown fox'::text) AS typmod,
       simhash('The quick brown fox'::varchar, 2, 'chars', false)
         = simhash('The quick brown fox'::text, 2, 'chars', false) AS options;

-- char(n): what bpchar::text gives (trailing blanks dropped; blanks are
-- never tokens, so they could not change a fingerprint anyway)
SELECT simhash('cafe'::char(8)) = simhash('cafe'::text) AS cafe,
       simhash('ab  '::char(4), 1, 'chars') = simhash('ab'::text, 1, 'chars') AS trailing,
       simhash(' ab'::char(4), 1, 'chars') = simhash(' ab'::text, 1, 'chars') AS leading,
       simhash('The quick brown fox'::char(30), 2, 'words', false)
         = simhash('The quick brown fox'::text, 2, 'words', false) AS options;

-- untyped literals with options still mean text
SELECT simhash('cafe', 3) = simhash('cafe'::text) AS literal_with_shingle;

-- a string of hex digits is a fingerprint of the text too
SELECT simhash('0123456789abcdef'::varchar) = simhash('0123456789abcdef'::text) AS hexlike;

-- NULL in, NULL out
SELECT simhash(NULL::varchar) IS NULL AS v, simhash(NULL::char(3)) IS NULL AS c;

-- generated columns and index expressions over varchar and char(n)
CREATE TABLE str_docs (id int, v varchar(200), c char(40),
    fv simhash GENERATED ALWAYS AS (simhash(v)) STORED,
    fc simhash GENERATED ALWAYS AS (simhash(c, 3, 'chars')) STORED);
INSERT INTO str_docs (id, v, c) VALUES
  (1, 'cafe', 'cafe'),
  (2, 'the quick brown fox jumps over the lazy dog', 'the quick brown fox'),
  (3, NULL, NULL);
SELECT id, fv = simhash(v::text) AS fv_text, fc = simhash(rtrim(c::text), 3, 'chars') AS fc_text
  FROM str_docs ORDER BY id;
CREATE INDEX str_docs_v ON str_docs USING simhash (simhash(v));
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM str_docs WHERE simhash(v) % simhash('cafe'::text);
SELECT id FROM str_docs WHERE simhash(v) % simhash('cafe'::text);
RESET enable_seqscan;
DROP TABLE str_docs;

-- the functions that take text and are not named after a type always
-- fingerprinted a varchar as text (no trap there): unchanged
SELECT simhash_html('<p>cafe</p>'::varchar) = simhash_html('<p>cafe</p>'::text) AS html,
       simhash_seomoz('cafe au lait'::varchar) = simhash_seomoz('cafe au lait'::text) AS seomoz,
       simhash_html('<p>cafe</p>'::char(20)) = simhash_html('<p>cafe</p>'::text) AS html_char;
