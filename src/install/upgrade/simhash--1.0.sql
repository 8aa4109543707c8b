-- simhash 1.0, as released: frozen; changes go into src/install/*.sql and an update script
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
CREATE CAST (simhash AS bigint) WITH FUNCTION simhash_to_bigint(simhash);
CREATE CAST (bit AS simhash) WITH FUNCTION simhash(bit);
CREATE CAST (simhash AS bit) WITH FUNCTION simhash_to_bit(simhash);
CREATE CAST (numeric AS simhash) WITH FUNCTION simhash(numeric);
CREATE CAST (simhash AS numeric) WITH FUNCTION simhash_to_numeric(simhash);

COMMENT ON FUNCTION simhash(bigint) IS 'the simhash with the same 64 bits as a bigint (two''s complement)';
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
    'every pair of array positions a < b (1-based) whose fingerprints differ in at most max_distance bits, in (a, b) order; NULL elements are skipped';
COMMENT ON FUNCTION simhash_find_all(bigint[], int) IS
    'every pair of array positions a < b (1-based) whose 64-bit hashes differ in at most max_distance bits, in (a, b) order; NULL elements are skipped';

CREATE FUNCTION simhash_find_clusters(fps simhash[], max_distance int)
    RETURNS TABLE (cluster int, member int)
    AS 'MODULE_PATHNAME', 'simhash_find_clusters_array'
    LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE ROWS 100;
CREATE FUNCTION simhash_find_clusters(fps bigint[], max_distance int)
    RETURNS TABLE (cluster int, member int)
    AS 'MODULE_PATHNAME', 'simhash_find_clusters_array'
    LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE ROWS 100;
COMMENT ON FUNCTION simhash_find_clusters(simhash[], int) IS
    'connected components (two or more positions) of the pairs of simhash_find_all: one row per member, cluster = its smallest position';
COMMENT ON FUNCTION simhash_find_clusters(bigint[], int) IS
    'connected components (two or more positions) of the pairs of simhash_find_all: one row per member, cluster = its smallest position';

CREATE FUNCTION simhash_cluster(fp simhash, max_distance int) RETURNS bigint
    AS 'MODULE_PATHNAME', 'simhash_cluster_window'
    LANGUAGE C WINDOW IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION simhash_cluster(fp bigint, max_distance int) RETURNS bigint
    AS 'MODULE_PATHNAME', 'simhash_cluster_window'
    LANGUAGE C WINDOW IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION simhash_cluster(simhash, int) IS
    'window function: near-duplicate cluster id of the row within its partition, the 1-based position of the first row of its connected component (pairs within max_distance bits); NULL for a NULL fp';
COMMENT ON FUNCTION simhash_cluster(bigint, int) IS
    'window function: near-duplicate cluster id of the row within its partition, the 1-based position of the first row of its connected component (pairs within max_distance bits); NULL for a NULL hash';
