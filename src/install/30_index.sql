-- ---------------------------------------------------------------------------
-- The simhash index access method: exact Hamming-radius search on permuted
-- tables, and KNN ordering by <~>.
-- ---------------------------------------------------------------------------

-- "Within the radius simhash.max_distance" (pg_trgm style) ------------------
CREATE FUNCTION simhash_similar(a simhash, b simhash) RETURNS bool
    AS 'MODULE_PATHNAME', 'simhash_similar' LANGUAGE C STABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_similar(a bigint, b bigint) RETURNS bool
    AS 'MODULE_PATHNAME', 'simhash_similar' LANGUAGE C STABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash_similar(simhash, simhash) IS
    'true when the Hamming distance is at most simhash.max_distance (the % operator)';
COMMENT ON FUNCTION simhash_similar(bigint, bigint) IS
    'true when the Hamming distance of two 64-bit hashes is at most simhash.max_distance (the ~% operator)';

CREATE FUNCTION simhash_similar_sel(internal, oid, internal, integer) RETURNS float8
    AS 'MODULE_PATHNAME' LANGUAGE C STABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_similar_joinsel(internal, oid, internal, smallint, internal) RETURNS float8
    AS 'MODULE_PATHNAME' LANGUAGE C STABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash_similar_sel(internal, oid, internal, integer) IS
    'selectivity of %, ~% and %@: random pairs within the radius plus a near-duplicate allowance';
COMMENT ON FUNCTION simhash_similar_joinsel(internal, oid, internal, smallint, internal) IS
    'join selectivity of % and ~%';

CREATE OPERATOR % (
    LEFTARG = simhash, RIGHTARG = simhash, PROCEDURE = simhash_similar,
    COMMUTATOR = %, RESTRICT = simhash_similar_sel, JOIN = simhash_similar_joinsel
);
COMMENT ON OPERATOR % (simhash, simhash) IS 'within simhash.max_distance differing bits';

-- bigint % bigint is already the modulo operator, so the bigint form is ~%.
CREATE OPERATOR ~% (
    LEFTARG = bigint, RIGHTARG = bigint, PROCEDURE = simhash_similar,
    COMMUTATOR = ~%, RESTRICT = simhash_similar_sel, JOIN = simhash_similar_joinsel
);
COMMENT ON OPERATOR ~% (bigint, bigint) IS
    'within simhash.max_distance differing bits (64-bit hashes stored as bigint)';

-- Explicit radius: simhash_within() and the query value it becomes -----------
CREATE TYPE simhash_query AS (fp simhash, radius int4);
COMMENT ON TYPE simhash_query IS
    'a fingerprint and a radius: the right operand of %@, built by simhash_query(fp, radius)';

CREATE FUNCTION simhash_query(fp simhash, radius int4) RETURNS simhash_query
    AS 'MODULE_PATHNAME', 'simhash_query_make' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_query(fp bigint, radius int4) RETURNS simhash_query
    AS 'MODULE_PATHNAME', 'simhash_query_make' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash_query(simhash, int4) IS 'the query "within radius of fp" for %@';
COMMENT ON FUNCTION simhash_query(bigint, int4) IS 'the query "within radius of fp" for %@ (bigint hash)';
-- A string, and so an untyped literal as in simhash_query('00ff', 3), is read
-- as a simhash (hex digits), not as a bigint.
CREATE FUNCTION simhash_query(fp text, radius int4) RETURNS simhash_query
    AS 'SELECT @extschema@.simhash_query($1::@extschema@.simhash, $2)'
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash_query(text, int4) IS
    'the query "within radius of fp" for %@, fp read as a simhash literal (1 to 16 hex digits)';

CREATE FUNCTION simhash_within_query(a simhash, q simhash_query) RETURNS bool
    AS 'MODULE_PATHNAME', 'simhash_within_query' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_within_query(a bigint, q simhash_query) RETURNS bool
    AS 'MODULE_PATHNAME', 'simhash_within_query' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash_within_query(simhash, simhash_query) IS
    'true when a is within q.radius differing bits of q.fp (the %@ operator)';
COMMENT ON FUNCTION simhash_within_query(bigint, simhash_query) IS
    'true when the bigint hash a is within q.radius differing bits of q.fp (the %@ operator)';

CREATE FUNCTION simhash_query_sel(internal, oid, internal, integer) RETURNS float8
    AS 'MODULE_PATHNAME' LANGUAGE C STABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash_query_sel(internal, oid, internal, integer) IS
    'selectivity of %@ from the radius of a constant simhash_query';

CREATE OPERATOR %@ (
    LEFTARG = simhash, RIGHTARG = simhash_query, PROCEDURE = simhash_within_query,
    RESTRICT = simhash_query_sel
);
COMMENT ON OPERATOR %@ (simhash, simhash_query) IS 'within the query''s radius of its fingerprint';
CREATE OPERATOR %@ (
    LEFTARG = bigint, RIGHTARG = simhash_query, PROCEDURE = simhash_within_query,
    RESTRICT = simhash_query_sel
);
COMMENT ON OPERATOR %@ (bigint, simhash_query) IS
    'within the query''s radius of its fingerprint (64-bit hash stored as bigint)';

CREATE FUNCTION simhash_within_support(internal) RETURNS internal
    AS 'MODULE_PATHNAME' LANGUAGE C STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash_within_support(internal) IS
    'planner support of simhash_within: index condition %@ and selectivity';

CREATE FUNCTION simhash_within(a simhash, b simhash, radius int4) RETURNS bool
    AS 'MODULE_PATHNAME', 'simhash_within' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE
    SUPPORT simhash_within_support;
CREATE FUNCTION simhash_within(a bigint, b bigint, radius int4) RETURNS bool
    AS 'MODULE_PATHNAME', 'simhash_within' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE
    SUPPORT simhash_within_support;
COMMENT ON FUNCTION simhash_within(simhash, simhash, int4) IS
    'true when a and b differ in at most radius bits; indexable by a simhash index';
COMMENT ON FUNCTION simhash_within(bigint, bigint, int4) IS
    'true when two 64-bit hashes differ in at most radius bits; indexable by a simhash index';

-- The access method and its operator classes ---------------------------------
CREATE FUNCTION simhash_am_handler(internal) RETURNS index_am_handler
    AS 'MODULE_PATHNAME' LANGUAGE C;
COMMENT ON FUNCTION simhash_am_handler(internal) IS 'handler of the simhash index access method';

CREATE ACCESS METHOD simhash TYPE INDEX HANDLER simhash_am_handler;
COMMENT ON ACCESS METHOD simhash IS
    'exact Hamming-radius and nearest-neighbour search on permuted-table keys';

CREATE OPERATOR CLASS simhash_ops
    DEFAULT FOR TYPE simhash USING simhash AS
        OPERATOR 1 % (simhash, simhash),
        OPERATOR 2 %@ (simhash, simhash_query),
        OPERATOR 3 <~> (simhash, simhash) FOR ORDER BY pg_catalog.integer_ops;
COMMENT ON OPERATOR CLASS simhash_ops USING simhash IS
    'simhash fingerprints: %, simhash_within() and ORDER BY <~>';
COMMENT ON OPERATOR FAMILY simhash_ops USING simhash IS 'simhash index operators of simhash';

CREATE OPERATOR CLASS simhash_bigint_ops
    DEFAULT FOR TYPE bigint USING simhash AS
        OPERATOR 1 ~% (bigint, bigint),
        OPERATOR 2 %@ (bigint, simhash_query),
        OPERATOR 3 <~> (bigint, bigint) FOR ORDER BY pg_catalog.integer_ops;
COMMENT ON OPERATOR CLASS simhash_bigint_ops USING simhash IS
    '64-bit hashes stored as bigint: ~%, simhash_within() and ORDER BY <~>';
COMMENT ON OPERATOR FAMILY simhash_bigint_ops USING simhash IS
    'simhash index operators of 64-bit hashes stored as bigint';

-- Text is indexed through its fingerprint.  This class (default for text,
-- varchar and citext) has no operators: it lets CREATE INDEX ... USING
-- simhash (body) reach the build, which refuses it with a hint naming
-- simhash(body), instead of "no default operator class".
CREATE OPERATOR CLASS simhash_text_ops
    DEFAULT FOR TYPE text USING simhash AS STORAGE simhash;
COMMENT ON OPERATOR CLASS simhash_text_ops USING simhash IS
    'none: CREATE INDEX on a text column fails with a hint to index simhash(column) instead';
COMMENT ON OPERATOR FAMILY simhash_text_ops USING simhash IS
    'none: a text column is indexed through simhash(column)';

CREATE FUNCTION simhash_index_check(index regclass) RETURNS text
    AS 'MODULE_PATHNAME' LANGUAGE C STRICT PARALLEL RESTRICTED;
COMMENT ON FUNCTION simhash_index_check(regclass) IS
    'verifies a simhash index: pages, sort order, per-table counts, every live heap row once per table; raises index_corrupted otherwise, and returns a line of what it checked';
-- The check runs the index's expressions as the table's owner; only owners
-- (and superusers) may check a table, and only roles granted EXECUTE at all.
REVOKE EXECUTE ON FUNCTION simhash_index_check(regclass) FROM PUBLIC;
