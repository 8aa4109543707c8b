-- ---------------------------------------------------------------------------
-- Hamming distance.
-- ---------------------------------------------------------------------------
CREATE FUNCTION simhash_distance(a simhash, b simhash) RETURNS int4
    AS 'MODULE_PATHNAME', 'simhash_distance' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION simhash_distance(a bigint, b bigint) RETURNS int4
    AS 'MODULE_PATHNAME', 'simhash_distance_int8' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
COMMENT ON FUNCTION simhash_distance(simhash, simhash) IS 'Hamming distance: number of differing bits (0..64)';
COMMENT ON FUNCTION simhash_distance(bigint, bigint) IS 'Hamming distance between two 64-bit hashes stored as bigint';

CREATE OPERATOR <~> (
    LEFTARG = simhash, RIGHTARG = simhash, PROCEDURE = simhash_distance,
    COMMUTATOR = <~>
);
COMMENT ON OPERATOR <~> (simhash, simhash) IS 'Hamming distance';

CREATE OPERATOR <~> (
    LEFTARG = bigint, RIGHTARG = bigint, PROCEDURE = simhash_distance,
    COMMUTATOR = <~>
);
COMMENT ON OPERATOR <~> (bigint, bigint) IS 'Hamming distance between 64-bit hashes stored as bigint';
