-- ---------------------------------------------------------------------------
-- Near-duplicate exclusion constraints with the radius fixed in their
-- definition:  EXCLUDE USING simhash (simhash_query(fp, 3) WITH @%@).
-- (% reads the session's simhash.max_distance, so a constraint built on it
-- would hold whatever radius each inserting session chose.)
-- ---------------------------------------------------------------------------
CREATE FUNCTION simhash_query_within(a simhash_query, b simhash_query) RETURNS bool
    AS 'MODULE_PATHNAME', 'simhash_query_pair_within' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash_query_within(simhash_query, simhash_query) IS
    'true when the two fingerprints differ in at most the smaller of the two radii (the @%@ operator)';

CREATE OPERATOR @%@ (
    LEFTARG = simhash_query, RIGHTARG = simhash_query, PROCEDURE = simhash_query_within,
    COMMUTATOR = @%@, RESTRICT = simhash_query_sel
);
COMMENT ON OPERATOR @%@ (simhash_query, simhash_query) IS
    'fingerprints within the smaller radius of each other; for EXCLUDE USING simhash (simhash_query(fp, r) WITH @%@)';

CREATE OPERATOR CLASS simhash_query_ops
    DEFAULT FOR TYPE simhash_query USING simhash AS
        OPERATOR 4 @%@ (simhash_query, simhash_query);
COMMENT ON OPERATOR CLASS simhash_query_ops USING simhash IS
    'simhash_query(fp, radius) values: @%@, for near-duplicate exclusion constraints with a fixed radius';
COMMENT ON OPERATOR FAMILY simhash_query_ops USING simhash IS
    'simhash index operators of simhash_query values (exclusion constraints)';
