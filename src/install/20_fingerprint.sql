-- ---------------------------------------------------------------------------
-- Fingerprints.
-- ---------------------------------------------------------------------------
CREATE FUNCTION simhash(doc text, shingle int DEFAULT 3, tokens text DEFAULT 'words',
                        casefold bool DEFAULT true) RETURNS simhash
    AS 'MODULE_PATHNAME', 'simhash_text' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash(text, int, text, bool) IS
    'SimHash of text: Unicode word (or character) tokens, optional case folding, shingles of `shingle` tokens hashed with XXH3, majority bit vote';

-- simhash(x) with x of a string type other than text would otherwise be
-- read as the cast x::simhash (hex digits), not as a fingerprint: PostgreSQL
-- treats a one-argument call named after a type as a cast when no function
-- takes the argument's exact type.  varchar has the representation of text;
-- char(n) goes through ::text, which drops its trailing blanks.
CREATE FUNCTION simhash(doc varchar, shingle int DEFAULT 3, tokens text DEFAULT 'words',
                        casefold bool DEFAULT true) RETURNS simhash
    AS 'MODULE_PATHNAME', 'simhash_text' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash(varchar, int, text, bool) IS
    'SimHash of a varchar: the same as simhash(doc::text, shingle, tokens, casefold)';

CREATE FUNCTION simhash(doc bpchar, shingle int DEFAULT 3, tokens text DEFAULT 'words',
                        casefold bool DEFAULT true) RETURNS simhash
    AS 'SELECT @extschema@.simhash($1::pg_catalog.text, $2, $3, $4)'
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash(bpchar, int, text, bool) IS
    'SimHash of a char(n): simhash(doc::text, shingle, tokens, casefold), so trailing blanks do not count';

-- name is a string type without an overload: simhash(x::name) would be the
-- cast to simhash (hex digits), as for any string type lacking one.
CREATE FUNCTION simhash(doc name, shingle int DEFAULT 3, tokens text DEFAULT 'words',
                        casefold bool DEFAULT true) RETURNS simhash
    AS 'SELECT @extschema@.simhash($1::pg_catalog.text, $2, $3, $4)'
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash(name, int, text, bool) IS
    'SimHash of a name: simhash(doc::text, shingle, tokens, casefold)';

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

COMMENT ON FUNCTION simhash_agg_trans(internal, bigint) IS
    'transition function of simhash_agg(bigint): adds one vote of the feature to the bit sums';
COMMENT ON FUNCTION simhash_agg_weighted_trans(internal, bigint, float8) IS
    'transition function of simhash_agg(bigint, float8): adds the feature''s weight to the bit sums';
COMMENT ON FUNCTION simhash_agg_combine(internal, internal) IS
    'combine function of simhash_agg: adds two partial bit sums (parallel aggregation)';
COMMENT ON FUNCTION simhash_agg_serialize(internal) IS
    'serialize function of simhash_agg: partial bit sums to bytea (parallel aggregation)';
COMMENT ON FUNCTION simhash_agg_deserialize(bytea, internal) IS
    'deserialize function of simhash_agg: partial bit sums from bytea (parallel aggregation)';
COMMENT ON FUNCTION simhash_agg_final(internal) IS
    'final function of simhash_agg: a bit is set when its sum is positive; no features gives 0';

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
