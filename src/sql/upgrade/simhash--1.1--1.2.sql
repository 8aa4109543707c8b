-- simhash 1.1 -> 1.2 (ALTER EXTENSION simhash UPDATE TO '1.2').
--
-- Every change made to the SQL objects of src/sql/*.sql since 1.1 is repeated
-- here, in the order of the pieces; t/090_extension_upgrade.pl checks that an
-- updated 1.1 (and 1.0) has exactly the objects, definitions, comments and
-- privileges of a fresh 1.2 install.
\echo Use "ALTER EXTENSION simhash UPDATE TO '1.2'" to load this file. \quit

-- src/sql/23_similarity.sql: exact shingle similarity (new in 1.2).
CREATE FUNCTION simhash_similarity(a text, b text, shingle int DEFAULT 3, tokens text DEFAULT 'words',
                                   casefold bool DEFAULT true) RETURNS float8
    AS 'MODULE_PATHNAME', 'simhash_similarity_text' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash_similarity(text, text, int, text, bool) IS
    'exact Jaccard similarity |A∩B| / |A∪B| of the distinct shingle sets simhash(text) builds from a and b with the same options (shingles compared by their 64-bit hashes); 1 when neither has a token, 0 when only one has';

CREATE FUNCTION simhash_shingles(doc text, shingle int DEFAULT 3, tokens text DEFAULT 'words',
                                 casefold bool DEFAULT true) RETURNS bigint[]
    AS 'MODULE_PATHNAME', 'simhash_shingles' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash_shingles(text, int, text, bool) IS
    'the distinct 64-bit shingle hashes simhash(text) votes with under the same options, ascending as unsigned numbers (as bigint)';

CREATE FUNCTION simhash_similarity(a bigint[], b bigint[]) RETURNS float8
    AS 'MODULE_PATHNAME', 'simhash_similarity_sets' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash_similarity(bigint[], bigint[]) IS
    'Jaccard similarity of two shingle sets made by simhash_shingles (ascending and distinct, checked): simhash_similarity(simhash_shingles(a), simhash_shingles(b)) = simhash_similarity(a, b)';
