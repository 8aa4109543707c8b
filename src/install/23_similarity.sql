-- ---------------------------------------------------------------------------
-- Exact similarity: the Jaccard similarity of the distinct shingle sets that
-- simhash(text) votes with (same tokenizer, same options, same hashes).
-- ---------------------------------------------------------------------------
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
