-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION simhash" to load this file. \quit
-- ---------------------------------------------------------------------------
-- The simhash type: a 64-bit fingerprint, 16 hex digits in text form.
-- ---------------------------------------------------------------------------
CREATE TYPE simhash;

CREATE FUNCTION simhash_in(cstring) RETURNS simhash
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_out(simhash) RETURNS cstring
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_recv(internal) RETURNS simhash
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_send(simhash) RETURNS bytea
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE TYPE simhash (
    INPUT = simhash_in,
    OUTPUT = simhash_out,
    RECEIVE = simhash_recv,
    SEND = simhash_send,
    INTERNALLENGTH = 8,
    PASSEDBYVALUE,
    ALIGNMENT = double,
    STORAGE = plain
);
COMMENT ON TYPE simhash IS '64-bit SimHash fingerprint; text form is 16 hex digits';

-- Casts ----------------------------------------------------------------------
CREATE FUNCTION simhash(bigint) RETURNS simhash
    AS 'MODULE_PATHNAME', 'simhash_from_int8' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash(integer) RETURNS simhash
    AS 'MODULE_PATHNAME', 'simhash_from_int4' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash(smallint) RETURNS simhash
    AS 'MODULE_PATHNAME', 'simhash_from_int2' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_to_bigint(simhash) RETURNS bigint
    AS 'MODULE_PATHNAME', 'simhash_to_int8' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash(bit) RETURNS simhash
    AS 'MODULE_PATHNAME', 'simhash_from_bit' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_to_bit(simhash) RETURNS bit
    AS 'MODULE_PATHNAME', 'simhash_to_bit' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash(numeric) RETURNS simhash
    AS 'MODULE_PATHNAME', 'simhash_from_numeric' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_to_numeric(simhash) RETURNS numeric
    AS 'MODULE_PATHNAME', 'simhash_to_numeric' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE CAST (bigint AS simhash) WITH FUNCTION simhash(bigint);
CREATE CAST (integer AS simhash) WITH FUNCTION simhash(integer);
CREATE CAST (smallint AS simhash) WITH FUNCTION simhash(smallint);
CREATE CAST (simhash AS bigint) WITH FUNCTION simhash_to_bigint(simhash);
CREATE CAST (bit AS simhash) WITH FUNCTION simhash(bit);
CREATE CAST (simhash AS bit) WITH FUNCTION simhash_to_bit(simhash);
CREATE CAST (numeric AS simhash) WITH FUNCTION simhash(numeric);
CREATE CAST (simhash AS numeric) WITH FUNCTION simhash_to_numeric(simhash);

COMMENT ON FUNCTION simhash(bigint) IS 'the simhash with the same 64 bits as a bigint (two''s complement)';
COMMENT ON FUNCTION simhash(integer) IS 'the simhash of an integer widened to bigint: same bits as integer::bigint::simhash';
COMMENT ON FUNCTION simhash(smallint) IS 'the simhash of a smallint widened to bigint: same bits as smallint::bigint::simhash';
COMMENT ON FUNCTION simhash_to_bigint(simhash) IS 'the bigint with the same 64 bits (two''s complement)';
COMMENT ON FUNCTION simhash(bit) IS 'the simhash of a bit(64), most significant bit first';
COMMENT ON FUNCTION simhash_to_bit(simhash) IS 'the 64 bits as bit(64), most significant bit first';
COMMENT ON FUNCTION simhash(numeric) IS 'the simhash of an unsigned decimal 0..18446744073709551615';
COMMENT ON FUNCTION simhash_to_numeric(simhash) IS 'the fingerprint as an unsigned decimal';

-- Comparison: unsigned order, so it agrees with the hex and numeric forms. ---
CREATE FUNCTION simhash_eq(simhash, simhash) RETURNS bool
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION simhash_ne(simhash, simhash) RETURNS bool
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION simhash_lt(simhash, simhash) RETURNS bool
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION simhash_le(simhash, simhash) RETURNS bool
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION simhash_gt(simhash, simhash) RETURNS bool
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION simhash_ge(simhash, simhash) RETURNS bool
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION simhash_cmp(simhash, simhash) RETURNS int4
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION simhash_hash(simhash) RETURNS int4
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION simhash_hash_extended(simhash, bigint) RETURNS bigint
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE OPERATOR = (
    LEFTARG = simhash, RIGHTARG = simhash, PROCEDURE = simhash_eq,
    COMMUTATOR = =, NEGATOR = <>, RESTRICT = eqsel, JOIN = eqjoinsel,
    HASHES, MERGES
);
CREATE OPERATOR <> (
    LEFTARG = simhash, RIGHTARG = simhash, PROCEDURE = simhash_ne,
    COMMUTATOR = <>, NEGATOR = =, RESTRICT = neqsel, JOIN = neqjoinsel
);
CREATE OPERATOR < (
    LEFTARG = simhash, RIGHTARG = simhash, PROCEDURE = simhash_lt,
    COMMUTATOR = >, NEGATOR = >=, RESTRICT = scalarltsel, JOIN = scalarltjoinsel
);
CREATE OPERATOR <= (
    LEFTARG = simhash, RIGHTARG = simhash, PROCEDURE = simhash_le,
    COMMUTATOR = >=, NEGATOR = >, RESTRICT = scalarlesel, JOIN = scalarlejoinsel
);
CREATE OPERATOR > (
    LEFTARG = simhash, RIGHTARG = simhash, PROCEDURE = simhash_gt,
    COMMUTATOR = <, NEGATOR = <=, RESTRICT = scalargtsel, JOIN = scalargtjoinsel
);
CREATE OPERATOR >= (
    LEFTARG = simhash, RIGHTARG = simhash, PROCEDURE = simhash_ge,
    COMMUTATOR = <=, NEGATOR = <, RESTRICT = scalargesel, JOIN = scalargejoinsel
);

CREATE OPERATOR CLASS simhash_btree_ops
    DEFAULT FOR TYPE simhash USING btree AS
        OPERATOR 1 <, OPERATOR 2 <=, OPERATOR 3 =, OPERATOR 4 >=, OPERATOR 5 >,
        FUNCTION 1 simhash_cmp(simhash, simhash);

CREATE OPERATOR CLASS simhash_hash_ops
    DEFAULT FOR TYPE simhash USING hash AS
        OPERATOR 1 =,
        FUNCTION 1 simhash_hash(simhash),
        FUNCTION 2 simhash_hash_extended(simhash, bigint);
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
-- ---------------------------------------------------------------------------
-- seomoz simhash-cpp compatible text fingerprint.
-- ---------------------------------------------------------------------------
CREATE FUNCTION simhash_seomoz(doc text) RETURNS simhash
    AS 'MODULE_PATHNAME', 'simhash_seomoz' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash_seomoz(text) IS
    'SimHash of text exactly as the classic seomoz simhash-cpp library computes it: ASCII letter runs, lookup3 hashlittle2 token hashes, cyclic window of 3, bit-reversed majority vote';
-- ---------------------------------------------------------------------------
-- Web pages: visible text of HTML and its fingerprint.
-- ---------------------------------------------------------------------------
CREATE FUNCTION html_text(html text) RETURNS text
    AS 'MODULE_PATHNAME', 'simhash_html_text' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION html_text(text) IS
    'Visible text of an HTML page (HTML5 parse by gumbo): entities decoded, head/script/style/noscript/template/nav/aside/hidden and page-level header/footer dropped, one line per block';

CREATE FUNCTION simhash_html(html text, shingle int DEFAULT 3, tokens text DEFAULT 'words',
                             casefold bool DEFAULT true) RETURNS simhash
    AS 'MODULE_PATHNAME', 'simhash_html' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash_html(text, int, text, bool) IS
    'SimHash of the visible text of an HTML page: simhash(html_text(html), shingle, tokens, casefold)';
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

CREATE OPERATOR CLASS simhash_bigint_ops
    DEFAULT FOR TYPE bigint USING simhash AS
        OPERATOR 1 ~% (bigint, bigint),
        OPERATOR 2 %@ (bigint, simhash_query),
        OPERATOR 3 <~> (bigint, bigint) FOR ORDER BY pg_catalog.integer_ops;
COMMENT ON OPERATOR CLASS simhash_bigint_ops USING simhash IS
    '64-bit hashes stored as bigint: ~%, simhash_within() and ORDER BY <~>';

CREATE FUNCTION simhash_index_check(index regclass) RETURNS void
    AS 'MODULE_PATHNAME' LANGUAGE C STRICT PARALLEL RESTRICTED;
COMMENT ON FUNCTION simhash_index_check(regclass) IS
    'verifies a simhash index: pages, sort order, per-table counts, every live heap row once per table; raises index_corrupted otherwise';
-- The check runs the index's expressions as the table's owner; only owners
-- (and superusers) may check a table, and only roles granted EXECUTE at all.
REVOKE EXECUTE ON FUNCTION simhash_index_check(regclass) FROM PUBLIC;
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

CREATE FUNCTION simhash_index_runs(index regclass,
    OUT kind text, OUT generation bigint, OUT level int, OUT entries bigint, OUT pages bigint)
    RETURNS SETOF record
    AS 'MODULE_PATHNAME' LANGUAGE C STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash_index_runs(regclass) IS
    'the sorted runs of a simhash index (largest first: generation, level, entries per table, pages over all tables), then its pending buffer and NULLs chain, and a flush or merge under way or interrupted';
REVOKE ALL ON FUNCTION simhash_index_runs(regclass) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION simhash_index_runs(regclass) TO pg_stat_scan_tables;
-- ---------------------------------------------------------------------------
-- Batch analytics: every pair within k bits, and their clusters (connected
-- components), computed in memory by sorted permuted tables.  The number of
-- blocks is chosen automatically from the input size and distance.
-- ---------------------------------------------------------------------------
CREATE FUNCTION simhash_find_all(fps simhash[], max_distance int)
    RETURNS TABLE (a int, b int, distance int)
    AS 'MODULE_PATHNAME', 'simhash_find_all_array'
    LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE ROWS 100;
CREATE FUNCTION simhash_find_all(fps bigint[], max_distance int)
    RETURNS TABLE (a int, b int, distance int)
    AS 'MODULE_PATHNAME', 'simhash_find_all_array'
    LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE ROWS 100;
COMMENT ON FUNCTION simhash_find_all(simhash[], int) IS
    'every pair of array positions a < b (1-based) whose fingerprints differ in at most max_distance bits, in no particular order (ORDER BY a, b to sort); NULL elements are skipped; fails with 53200 when the work would not fit in work_mem';
COMMENT ON FUNCTION simhash_find_all(bigint[], int) IS
    'every pair of array positions a < b (1-based) whose 64-bit hashes differ in at most max_distance bits, in no particular order (ORDER BY a, b to sort); NULL elements are skipped; fails with 53200 when the work would not fit in work_mem';

CREATE FUNCTION simhash_find_clusters(fps simhash[], max_distance int)
    RETURNS TABLE (cluster int, member int)
    AS 'MODULE_PATHNAME', 'simhash_find_clusters_array'
    LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE ROWS 100;
CREATE FUNCTION simhash_find_clusters(fps bigint[], max_distance int)
    RETURNS TABLE (cluster int, member int)
    AS 'MODULE_PATHNAME', 'simhash_find_clusters_array'
    LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE ROWS 100;
COMMENT ON FUNCTION simhash_find_clusters(simhash[], int) IS
    'connected components (two or more positions) of the pairs of simhash_find_all: one row per member, cluster = its smallest position; fails with 53200 when the work would not fit in work_mem';
COMMENT ON FUNCTION simhash_find_clusters(bigint[], int) IS
    'connected components (two or more positions) of the pairs of simhash_find_all: one row per member, cluster = its smallest position; fails with 53200 when the work would not fit in work_mem';

CREATE FUNCTION simhash_cluster(fp simhash, max_distance int) RETURNS bigint
    AS 'MODULE_PATHNAME', 'simhash_cluster_window'
    LANGUAGE C WINDOW IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION simhash_cluster(fp bigint, max_distance int) RETURNS bigint
    AS 'MODULE_PATHNAME', 'simhash_cluster_window'
    LANGUAGE C WINDOW IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION simhash_cluster(simhash, int) IS
    'window function: near-duplicate cluster id of the row within its partition, the 1-based position of the first row of its connected component (pairs within max_distance bits); NULL for a NULL fp; fails with 53200 when the partition would not fit in work_mem';
COMMENT ON FUNCTION simhash_cluster(bigint, int) IS
    'window function: near-duplicate cluster id of the row within its partition, the 1-based position of the first row of its connected component (pairs within max_distance bits); NULL for a NULL hash; fails with 53200 when the partition would not fit in work_mem';
-- ---------------------------------------------------------------------------
-- All pairs and clusters of a table's rows: simhash_pairs, simhash_clusters.
-- Plain and partitioned tables, views, and Citus distributed tables (where
-- the rows are repartitioned by permuted-table prefix so that every near
-- pair meets on one worker).  They run with the caller's rights.
-- ---------------------------------------------------------------------------
CREATE FUNCTION simhash_prefix_masks(radius int, nrows bigint) RETURNS bigint[]
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash_prefix_masks(int, bigint) IS
    'prefix masks (fingerprint bit space), in table order, of the permuted tables simhash_pairs joins on for nrows rows and this radius: {-1} for radius 0, {0} when one group of all pairs is cheapest';

-- The checked source of simhash_pairs: "SELECT k, h FROM rel" as SQL text.
CREATE FUNCTION simhash_pairs_source(rel regclass, fp name, key name, radius int) RETURNS text
    LANGUAGE plpgsql STABLE STRICT
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    fptype oid;
BEGIN
    IF radius < 0 OR radius > 64 THEN
        RAISE EXCEPTION 'radius % is out of range', radius
            USING ERRCODE = 'invalid_parameter_value', HINT = 'radius is a number of bits, 0 to 64.';
    END IF;
    SELECT atttypid INTO fptype FROM pg_attribute
     WHERE attrelid = rel AND attname = fp AND attnum > 0 AND NOT attisdropped;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'column "%" of relation % does not exist', fp, rel
            USING ERRCODE = 'undefined_column';
    END IF;
    IF fptype NOT IN ('@extschema@.simhash'::regtype, 'bigint'::regtype) THEN
        RAISE EXCEPTION 'column "%" of relation % is of type %, not simhash or bigint', fp, rel, fptype::regtype
            USING ERRCODE = 'datatype_mismatch';
    END IF;
    IF NOT EXISTS (SELECT FROM pg_attribute
                    WHERE attrelid = rel AND attname = key AND attnum > 0 AND NOT attisdropped) THEN
        RAISE EXCEPTION 'column "%" of relation % does not exist', key, rel
            USING ERRCODE = 'undefined_column';
    END IF;
    IF NOT (has_column_privilege(rel, fp::text, 'SELECT') AND has_column_privilege(rel, key::text, 'SELECT')) THEN
        RAISE EXCEPTION 'permission denied for relation %', rel
            USING ERRCODE = 'insufficient_privilege',
                  HINT = format('simhash_pairs reads columns %I and %I with the caller''s rights.', fp, key);
    END IF;
    RETURN format('SELECT (%1$I)::text COLLATE "C" AS k, (%2$I)::bigint AS h FROM %3$s WHERE %1$I IS NOT NULL AND %2$I IS NOT NULL',
                  key, fp, rel);
END
$$;
COMMENT ON FUNCTION simhash_pairs_source(regclass, name, name, int) IS
    'checks the arguments of simhash_pairs (columns exist, fp is simhash or bigint, SELECT privilege, radius 0..64) and returns the query of its (key as text, fp as bigint) rows';

-- "The first table whose prefix the pair agrees on is table t", as SQL text,
-- for a pair whose xor is the expression x.
CREATE FUNCTION simhash_pairs_first_table(masks bigint[], x text, t text) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT CASE WHEN cardinality(masks) = 1 THEN 'true'
           ELSE format('(CASE %s ELSE 0 END) = %s',
                       string_agg(format('WHEN (%s & %s::bigint) = 0 THEN %s', x, m, i), ' ' ORDER BY i), t)
           END
      FROM unnest(masks) WITH ORDINALITY AS u(m, i)
$$;
COMMENT ON FUNCTION simhash_pairs_first_table(bigint[], text, text) IS
    'SQL text of the condition "the first table of masks whose prefix agrees with the xor x is t" (simhash_pairs keeps each pair once)';

CREATE FUNCTION simhash_pairs(rel regclass, fp name, key name, radius int)
    RETURNS TABLE (key_a text, key_b text, distance int)
    LANGUAGE plpgsql VOLATILE STRICT
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    src text := @extschema@.simhash_pairs_source(rel, fp, key, radius);
    n bigint;
    masks bigint[];
    branches text[] := '{}';
    distributed bool := false;
    nspid oid;
    nsp name;
    work text;
    hashjoin text := current_setting('enable_hashjoin');
    propagate text;
BEGIN
    IF to_regclass('pg_catalog.pg_dist_partition') IS NOT NULL THEN
        EXECUTE 'SELECT EXISTS (SELECT FROM pg_catalog.pg_dist_partition WHERE logicalrelid = $1 AND partmethod = ''h'')'
           INTO distributed USING rel;
    END IF;
    EXECUTE format('SELECT count(*) FROM (%s) s', src) INTO n;

    IF distributed THEN
        -- Repartition every row once per table by (table, prefix) into a
        -- scratch table distributed on the prefix; each group then lives on
        -- one shard and the self-join runs there.  Only pairs come back.
        masks := @extschema@.simhash_prefix_masks(radius, n);
        SELECT n.oid, n.nspname INTO nspid, nsp FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = rel;
        IF NOT has_schema_privilege(nspid, 'CREATE') THEN
            RAISE EXCEPTION 'permission denied for schema %', nsp
                USING ERRCODE = 'insufficient_privilege',
                      HINT = 'simhash_pairs on a distributed table creates a scratch distributed table in the table''s schema for the length of the call.';
        END IF;
        work := format('%I.%I', nsp, 'simhash_pairs_' || pg_backend_pid() || '_' || substr(md5(random()::text), 1, 8));
        EXECUTE format('CREATE TABLE %s (p bigint, t int, k text COLLATE "C", h bigint)', work);
        EXECUTE 'SELECT create_distributed_table($1, ''p'', colocate_with => ''none'')' USING work;
        EXECUTE format('INSERT INTO %s (p, t, k, h) SELECT s.h & u.m, u.t, s.k, s.h FROM (%s) s, unnest(%L::bigint[]) WITH ORDINALITY AS u(m, t)',
                       work, src, masks);
        -- Merge joins on the workers too (SET LOCAL, propagated by Citus for
        -- this query, then restored): see below.
        propagate := current_setting('citus.propagate_set_commands');
        PERFORM set_config('citus.propagate_set_commands', 'local', true);
        EXECUTE 'SET LOCAL enable_hashjoin = off';
        RETURN QUERY EXECUTE format(
            'SELECT a.k::text, b.k::text, (a.h OPERATOR(@extschema@.<~>) b.h)::int FROM %1$s a JOIN %1$s b ON a.p = b.p AND a.t = b.t AND a.k < b.k'
            ' WHERE (a.h OPERATOR(@extschema@.<~>) b.h) <= %2$s AND %3$s',
            work, radius, @extschema@.simhash_pairs_first_table(masks, '(a.h # b.h)', 'a.t'));
        EXECUTE format('SET LOCAL enable_hashjoin = %L', hashjoin);
        PERFORM set_config('citus.propagate_set_commands', propagate, true);
        EXECUTE format('DROP TABLE %s', work);
    ELSE
        IF n::numeric * 64 <= pg_size_bytes(current_setting('work_mem')) THEN
            -- Small enough to try the in-memory batch code over sorted
            -- arrays.  simhash_find_all refuses (53200) before it returns
            -- any pair when its working memory would pass work_mem; then
            -- the joins below take over.
            BEGIN
                RETURN QUERY EXECUTE format(
                    'WITH s AS MATERIALIZED (SELECT k, h, row_number() OVER (ORDER BY k, h) AS i FROM (%s) s),'
                    ' f AS (SELECT f.* FROM (SELECT array_agg(h ORDER BY i) AS hs FROM s) r, @extschema@.simhash_find_all(r.hs, %s) f)'
                    ' SELECT a.k::text, b.k::text, f.distance FROM f JOIN s a ON a.i = f.a JOIN s b ON b.i = f.b WHERE a.k < b.k',
                    src, radius);
                RETURN;
            EXCEPTION WHEN out_of_memory THEN
                NULL;
            END;
        END IF;
        -- One streaming self-join per table, on the rows' prefix in it.  Not
        -- a hash join: a group larger than work_mem (many rows sharing a
        -- prefix, such as exact duplicates) is one bucket that a hash join
        -- cannot split, while a merge join's sorts spill to disk.  A single
        -- group of all rows (mask 0) is a nested loop over a spilling
        -- materialization.
        masks := @extschema@.simhash_prefix_masks(radius, n);
        FOR t IN 1 .. cardinality(masks) LOOP
            branches := branches || format(
                'SELECT a.k::text, b.k::text, (a.h OPERATOR(@extschema@.<~>) b.h)::int FROM (%1$s) a JOIN (%1$s) b'
                ' ON %2$s a.k < b.k'
                ' WHERE (a.h OPERATOR(@extschema@.<~>) b.h) <= %3$s AND %4$s',
                src,
                CASE WHEN masks[t] = 0 THEN ''
                     ELSE format('(a.h & %1$s::bigint) = (b.h & %1$s::bigint) AND', masks[t]) END,
                radius,
                @extschema@.simhash_pairs_first_table(masks[1:t], '(a.h # b.h)', t::text));
        END LOOP;
        PERFORM set_config('enable_hashjoin', 'off', true);
        RETURN QUERY EXECUTE array_to_string(branches, ' UNION ALL ');
        PERFORM set_config('enable_hashjoin', hashjoin, true);
    END IF;
END
$$;
COMMENT ON FUNCTION simhash_pairs(regclass, name, name, int) IS
    'every pair of rows of rel whose fingerprints (column fp, simhash or bigint) differ in at most radius bits, once, as (key_a, key_b) with key_a < key_b in "C" collation; keys are column key as text; NULL fp or key rows are skipped, equal keys never paired; works on distributed Citus tables';

CREATE FUNCTION simhash_clusters(rel regclass, fp name, key_column name, radius int)
    RETURNS TABLE (key text, cluster text)
    LANGUAGE plpgsql VOLATILE STRICT
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    suffix text := pg_backend_pid() || '_' || substr(md5(random()::text), 1, 8);
    edges text := format('pg_temp.%I', 'simhash_edges_' || suffix);
    labels text := format('pg_temp.%I', 'simhash_labels_' || suffix);
    changed bigint;
BEGIN
    -- Both directions of every pair, then labels = the smallest key reached,
    -- by minimum propagation over the edges and pointer jumping.
    EXECUTE format('CREATE TEMP TABLE %s (a text COLLATE "C", b text COLLATE "C")', edges);
    EXECUTE format('INSERT INTO %s SELECT p.key_a, p.key_b FROM @extschema@.simhash_pairs($1, $2, $3, $4) p', edges)
        USING rel, fp, key_column, radius;
    EXECUTE format('INSERT INTO %1$s SELECT b, a FROM %1$s', edges);
    EXECUTE format('ANALYZE %s', edges);
    EXECUTE format('CREATE TEMP TABLE %s (k text COLLATE "C" PRIMARY KEY, c text COLLATE "C")', labels);
    EXECUTE format('INSERT INTO %s SELECT a, least(a, min(b)) FROM %s GROUP BY a', labels, edges);
    EXECUTE format('ANALYZE %s', labels);
    LOOP
        EXECUTE format('UPDATE %1$s l SET c = s.c FROM (SELECT e.a, min(m.c) AS c FROM %2$s e JOIN %1$s m ON m.k = e.b GROUP BY e.a) s'
                       ' WHERE l.k = s.a AND s.c < l.c', labels, edges);
        GET DIAGNOSTICS changed = ROW_COUNT;
        EXIT WHEN changed = 0;
        EXECUTE format('UPDATE %1$s l SET c = m.c FROM %1$s m WHERE m.k = l.c AND m.c < l.c', labels);
    END LOOP;
    RETURN QUERY EXECUTE format('SELECT k::text, c::text FROM %s', labels);
    EXECUTE format('DROP TABLE %s, %s', edges, labels);
END
$$;
COMMENT ON FUNCTION simhash_clusters(regclass, name, name, int) IS
    'connected components of the pairs of simhash_pairs(rel, fp, key_column, radius): one row per key that has a pair, cluster = the smallest key of its component in "C" collation';
