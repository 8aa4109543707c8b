-- simhash 1.0 -> 1.1 (ALTER EXTENSION simhash UPDATE TO '1.1').
--
-- Every change made to the SQL objects of src/sql/*.sql since 1.0 is repeated
-- here; t/090_extension_upgrade.pl checks that an updated 1.0 has exactly the
-- objects, definitions, comments and privileges of a fresh 1.1 install and
-- prints what is missing or extra.
\echo Use "ALTER EXTENSION simhash UPDATE TO '1.1'" to load this file. \quit

-- the runs of the log-structured index
CREATE FUNCTION simhash_index_runs(index regclass,
    OUT kind text, OUT generation bigint, OUT level int, OUT entries bigint, OUT pages bigint)
    RETURNS SETOF record
    AS 'MODULE_PATHNAME' LANGUAGE C STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash_index_runs(regclass) IS
    'the sorted runs of a simhash index (largest first: generation, level, entries per table, pages over all tables), then its pending buffer and NULLs chain, and a flush or merge under way or interrupted';
REVOKE ALL ON FUNCTION simhash_index_runs(regclass) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION simhash_index_runs(regclass) TO pg_stat_scan_tables;

-- simhash_index_check runs the index's expressions as the table owner; only
-- owners (and superusers) may check a table, and only roles granted EXECUTE.
REVOKE EXECUTE ON FUNCTION simhash_index_check(regclass) FROM PUBLIC;

-- Near-duplicate exclusion constraints with a fixed radius (src/sql/31_exclusion.sql).
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
