-- ---------------------------------------------------------------------------
-- Online lookup: every stored row whose exact shingle similarity to one
-- document reaches a threshold, through a GIN index the server maintains.
--
-- A row is indexed under simhash_prefix_tokens(body, t0): the prefix of its
-- distinct shingle set (the sets simhash_similarity compares) in one fixed
-- global order, one hash longer than the classic prefix, tagged with the
-- size class of the set (src/core/search/prefix.h).  A lookup at t >= t0
-- probes with the document's own tokens at t in every size class a similar
-- set may have (simhash_prefix_probe); a stored row with J >= t shares two
-- tokens with it (prefix filtering, the stored prefix at t0 holding the one
-- at t), which the GIN opclass simhash_prefix_ops answers (operator &&&), so
-- none is missed, and every candidate is verified exactly.  Inserts,
-- VACUUM, WAL and replicas are GIN's.  It runs with the caller's rights.
-- ---------------------------------------------------------------------------
CREATE FUNCTION simhash_prefix_tokens(doc text, threshold float8, frequent bigint[] DEFAULT '{}') RETURNS bigint[]
    AS 'MODULE_PATHNAME', 'simhash_prefix_tokens' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash_prefix_tokens(text, float8, bigint[]) IS
    'the tokens a GIN index stores for simhash_near_duplicates_of lookups at thresholds >= threshold: the first |x| - ceil(threshold |x|) + 2 shingles (at most |x|) of the distinct shingle set x of doc (simhash(text)''s default options) in a fixed global order (by a 64-bit mix of the hash, the shingle hashes listed in frequent after all others, the first listed last), each tagged with the size class of x, twice for a set of at most 1 / threshold shingles; index with CREATE INDEX ON rel USING gin (simhash_prefix_tokens(body, 0.8) simhash_prefix_ops)';

CREATE FUNCTION simhash_prefix_probe(doc text, threshold float8, frequent bigint[] DEFAULT '{}') RETURNS bigint[]
    AS 'MODULE_PATHNAME', 'simhash_prefix_probe' LANGUAGE C STABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash_prefix_probe(text, float8, bigint[]) IS
    'the tokens a simhash_near_duplicates_of lookup of doc at threshold probes a simhash_prefix_tokens index (with the same frequent list) with, by &&&: its tokens at threshold in every size class a set with Jaccard similarity >= threshold may have, of which such a set''s stored tokens hold two; fails with 53200 when doc could need more than work_mem';

CREATE FUNCTION simhash_prefix_match(a bigint[], b bigint[]) RETURNS boolean
    AS 'MODULE_PATHNAME', 'simhash_prefix_match' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash_prefix_match(bigint[], bigint[]) IS
    'a &&& b: a and b share at least two distinct non-NULL elements (a stored row''s simhash_prefix_tokens and a lookup''s simhash_prefix_probe do when their sets may be similar)';

CREATE OPERATOR &&& (
    LEFTARG = bigint[], RIGHTARG = bigint[], FUNCTION = simhash_prefix_match,
    COMMUTATOR = &&&, RESTRICT = contsel, JOIN = contjoinsel);
COMMENT ON OPERATOR &&& (bigint[], bigint[]) IS
    'the arrays share at least two distinct elements (simhash_prefix_match); indexed by GIN opclass simhash_prefix_ops';

CREATE FUNCTION simhash_prefix_extract_query(bigint[], internal, int2, internal, internal, internal, internal) RETURNS internal
    AS 'MODULE_PATHNAME', 'simhash_prefix_extract_query' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash_prefix_extract_query(bigint[], internal, int2, internal, internal, internal, internal) IS
    'GIN extractQuery of simhash_prefix_ops: the distinct non-NULL elements of the query, none when fewer than two';
CREATE FUNCTION simhash_prefix_consistent(internal, int2, bigint[], int4, internal, internal, internal, internal) RETURNS boolean
    AS 'MODULE_PATHNAME', 'simhash_prefix_consistent' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash_prefix_consistent(internal, int2, bigint[], int4, internal, internal, internal, internal) IS
    'GIN consistent of simhash_prefix_ops: two of the query''s elements are in the row''s array';
CREATE FUNCTION simhash_prefix_triconsistent(internal, int2, bigint[], int4, internal, internal, internal) RETURNS "char"
    AS 'MODULE_PATHNAME', 'simhash_prefix_triconsistent' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash_prefix_triconsistent(internal, int2, bigint[], int4, internal, internal, internal) IS
    'GIN triConsistent of simhash_prefix_ops: simhash_prefix_consistent over true, false and maybe';

CREATE OPERATOR CLASS simhash_prefix_ops FOR TYPE bigint[] USING gin AS
    OPERATOR 1 &&& (bigint[], bigint[]),
    FUNCTION 1 pg_catalog.btint8cmp(bigint, bigint),
    FUNCTION 2 pg_catalog.ginarrayextract(anyarray, internal, internal),
    FUNCTION 3 simhash_prefix_extract_query(bigint[], internal, int2, internal, internal, internal, internal),
    FUNCTION 4 simhash_prefix_consistent(internal, int2, bigint[], int4, internal, internal, internal, internal),
    FUNCTION 6 simhash_prefix_triconsistent(internal, int2, bigint[], int4, internal, internal, internal),
    STORAGE bigint;
COMMENT ON OPERATOR CLASS simhash_prefix_ops USING gin IS
    'GIN over bigint[] answering &&& (two common elements): the index of simhash_near_duplicates_of, on simhash_prefix_tokens(body, t0) simhash_prefix_ops';
COMMENT ON OPERATOR FAMILY simhash_prefix_ops USING gin IS 'GIN operators of simhash_prefix_ops';

CREATE FUNCTION simhash_prefix_index_for(rel regclass, body name, threshold float8, prefix_fn regprocedure,
                                         OUT index_threshold float8, OUT frequent bigint[], OUT thresholds float8[])
    AS 'MODULE_PATHNAME', 'simhash_prefix_index_for' LANGUAGE C STABLE STRICT;
COMMENT ON FUNCTION simhash_prefix_index_for(regclass, name, float8, regprocedure) IS
    'of the valid, non-partial GIN indexes (simhash_prefix_ops) on exactly prefix_fn(body, t0, frequent) of rel, the one with the largest t0 <= threshold (its t0 and frequent list; NULLs when none) and the t0 of them all; NULL when rel has no column body';

-- The lookup; simhash_near_duplicates_of names its result columns.
CREATE FUNCTION simhash_near_duplicates_of_rows(rel regclass, body name, key name, doc text, threshold float8)
    RETURNS TABLE (row_key text, row_similarity float8)
    LANGUAGE plpgsql STABLE
    SET search_path = pg_catalog, pg_temp
    SET enable_seqscan = off
AS $$
DECLARE
    p_rel regclass := rel;
    p_body name := body;
    p_key name := key;
    p_doc text := doc;
    p_t float8 := threshold;
    bodytype oid;
    ix record;
    detail text;
BEGIN
    IF p_rel IS NULL OR p_body IS NULL OR p_key IS NULL THEN
        RETURN;
    END IF;
    IF p_t IS NULL OR NOT (p_t > 0 AND p_t <= 1) THEN
        PERFORM @extschema@.simhash_raise('22023', format('threshold %s is out of range', coalesce(p_t::text, 'NULL')),
                                          'threshold is a Jaccard similarity above 0 and at most 1.');
    END IF;
    SELECT atttypid INTO bodytype FROM pg_attribute
     WHERE attrelid = p_rel AND attname = p_body AND attnum > 0 AND NOT attisdropped;
    IF NOT FOUND THEN
        PERFORM @extschema@.simhash_raise('42703', format('column "%s" of relation %s does not exist', p_body, p_rel));
    END IF;
    IF bodytype <> 'text'::regtype THEN
        PERFORM @extschema@.simhash_raise('42804', format('column "%s" of relation %s is of type %s, not text', p_body, p_rel, bodytype::regtype),
                                          'body is the column of the documents'' text, indexed with simhash_prefix_tokens.');
    END IF;
    IF NOT EXISTS (SELECT FROM pg_attribute
                    WHERE attrelid = p_rel AND attname = p_key AND attnum > 0 AND NOT attisdropped) THEN
        PERFORM @extschema@.simhash_raise('42703', format('column "%s" of relation %s does not exist', p_key, p_rel));
    END IF;
    IF NOT (has_column_privilege(p_rel, p_body::text, 'SELECT') AND has_column_privilege(p_rel, p_key::text, 'SELECT')) THEN
        PERFORM @extschema@.simhash_raise('42501', format('permission denied for relation %s', p_rel),
                                          format('simhash_near_duplicates_of reads columns %I and %I with the caller''s rights.', p_body, p_key));
    END IF;
    -- the index with the largest t0 <= t: the shortest stored prefixes
    ix := @extschema@.simhash_prefix_index_for(p_rel, p_body, p_t,
              '@extschema@.simhash_prefix_tokens(text, float8, bigint[])'::regprocedure);
    IF ix.index_threshold IS NULL THEN
        detail := format('It has no GIN index on simhash_prefix_tokens(%I, threshold).', p_body);
        IF cardinality(ix.thresholds) > 0 THEN
            detail := format('Its simhash_prefix_tokens indexes serve thresholds from %s up.',
                             (SELECT string_agg(x::text, ', ' ORDER BY x) FROM unnest(ix.thresholds) x));
        END IF;
        RAISE EXCEPTION 'relation % has no index for near-duplicate lookups on column "%" at threshold %', p_rel, p_body, p_t
            USING ERRCODE = 'object_not_in_prerequisite_state', DETAIL = detail,
                  HINT = format('CREATE INDEX ON %s USING gin (%I.simhash_prefix_tokens(%I, %s) %I.simhash_prefix_ops);',
                                p_rel, '@extschema@', p_body, p_t::numeric, '@extschema@');
    END IF;
    IF p_doc IS NULL THEN
        RETURN;
    END IF;
    RETURN QUERY EXECUTE format(
        'SELECT c.k, c.j FROM (SELECT (r.%1$I)::text AS k,'
        ' @extschema@.simhash_similarity(@extschema@.simhash_shingles(r.%2$I), $1) AS j FROM %3$s r'
        ' WHERE @extschema@.simhash_prefix_tokens(r.%2$I, $2, $5) OPERATOR(@extschema@.&&&) $3) c'
        ' WHERE c.j OPERATOR(pg_catalog.>=) $4',
        p_key, p_body, p_rel)
        USING @extschema@.simhash_shingles(p_doc), ix.index_threshold,
              @extschema@.simhash_prefix_probe(p_doc, p_t, ix.frequent), p_t, ix.frequent;
END
$$;
COMMENT ON FUNCTION simhash_near_duplicates_of_rows(regclass, name, name, text, float8) IS
    'the rows of simhash_near_duplicates_of (which see), as (row_key, row_similarity)';

CREATE FUNCTION simhash_near_duplicates_of(rel regclass, body name, key name, doc text, threshold float8 DEFAULT 0.8)
    RETURNS TABLE (key text, similarity float8)
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT * FROM @extschema@.simhash_near_duplicates_of_rows($1, $2, $3, $4, $5)
$$;
COMMENT ON FUNCTION simhash_near_duplicates_of(regclass, name, name, text, float8) IS
    'every row of rel whose exact shingle similarity simhash_similarity(body, doc) is at least threshold, as (key as text, similarity), through a GIN index on simhash_prefix_tokens(body, t0[, frequent]) simhash_prefix_ops with t0 <= threshold (none missed; 55000 with the CREATE INDEX to run when rel has none); no rows for a NULL doc; runs with the caller''s rights';
