-- ---------------------------------------------------------------------------
-- Fingerprints.
-- ---------------------------------------------------------------------------
CREATE FUNCTION simhash(doc text, shingle int DEFAULT 3, tokens text DEFAULT 'words',
                        casefold bool DEFAULT true) RETURNS simhash
    AS 'MODULE_PATHNAME', 'simhash_text' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash(text, int, text, bool) IS
    'SimHash of text: Unicode word (or character) tokens, optional case folding, shingles of `shingle` tokens hashed with XXH3, majority bit vote';

CREATE FUNCTION simhash(doc tsvector) RETURNS simhash
    AS 'MODULE_PATHNAME', 'simhash_tsvector' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash(tsvector) IS
    'SimHash of a tsvector: each lexeme is a feature weighted by its positions'' labels (A=1, B=0.4, C=0.2, D=0.1)';

CREATE FUNCTION simhash_compute(features bigint[]) RETURNS simhash
    AS 'MODULE_PATHNAME', 'simhash_compute' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash_compute(bigint[]) IS
    'SimHash of raw 64-bit feature hashes, one vote each (the classic compute()); NULL elements are skipped';

-- Aggregates over feature hashes --------------------------------------------
CREATE FUNCTION simhash_agg_trans(internal, bigint) RETURNS internal
    AS 'MODULE_PATHNAME' LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;
CREATE FUNCTION simhash_agg_weighted_trans(internal, bigint, float8) RETURNS internal
    AS 'MODULE_PATHNAME' LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;
CREATE FUNCTION simhash_agg_combine(internal, internal) RETURNS internal
    AS 'MODULE_PATHNAME' LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;
CREATE FUNCTION simhash_agg_serialize(internal) RETURNS bytea
    AS 'MODULE_PATHNAME' LANGUAGE C STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_agg_deserialize(bytea, internal) RETURNS internal
    AS 'MODULE_PATHNAME' LANGUAGE C STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_agg_final(internal) RETURNS simhash
    AS 'MODULE_PATHNAME' LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;

CREATE AGGREGATE simhash_agg(feature bigint) (
    SFUNC = simhash_agg_trans, STYPE = internal, FINALFUNC = simhash_agg_final,
    COMBINEFUNC = simhash_agg_combine, SERIALFUNC = simhash_agg_serialize,
    DESERIALFUNC = simhash_agg_deserialize, PARALLEL = SAFE
);
COMMENT ON AGGREGATE simhash_agg(bigint) IS
    'SimHash of a set of 64-bit feature hashes, one vote each; NULLs skipped; no features gives 0';

CREATE AGGREGATE simhash_agg(feature bigint, weight float8) (
    SFUNC = simhash_agg_weighted_trans, STYPE = internal, FINALFUNC = simhash_agg_final,
    COMBINEFUNC = simhash_agg_combine, SERIALFUNC = simhash_agg_serialize,
    DESERIALFUNC = simhash_agg_deserialize, PARALLEL = SAFE
);
COMMENT ON AGGREGATE simhash_agg(bigint, float8) IS
    'Weighted SimHash: each feature adds its weight to the bits it has and subtracts it from the others; bit set when the sum is positive';
