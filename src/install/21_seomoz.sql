-- ---------------------------------------------------------------------------
-- seomoz simhash-cpp compatible text fingerprint.
-- ---------------------------------------------------------------------------
CREATE FUNCTION simhash_seomoz(doc text) RETURNS simhash
    AS 'MODULE_PATHNAME', 'simhash_seomoz' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash_seomoz(text) IS
    'SimHash of text exactly as the classic seomoz simhash-cpp library computes it: ASCII letter runs, lookup3 hashlittle2 token hashes, cyclic window of 3, bit-reversed majority vote';
