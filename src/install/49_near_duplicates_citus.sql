-- ---------------------------------------------------------------------------
-- Verified near-duplicates of a Citus distributed table, joined on the
-- workers.  The extension does not depend on Citus: its catalog and
-- functions are looked up when a call needs them.
--
-- The global order of the prefix filter is the order simhash_shingles
-- returns a set in (ascending hashes as unsigned numbers), so each worker
-- computes the prefix of its rows alone, with no statistics of the table.
-- Every prefix entry (token, key, size, whole set) goes into a scratch table
-- distributed by token, through INSERT ... SELECT, which Citus repartitions
-- between the workers; then each shard of tokens joins with itself on its
-- worker, applies the length filter, keeps a pair only at the first token
-- both prefixes share (simhash_first_common_prefix_token) so that no global
-- deduplication is needed, and verifies it exactly (simhash_similarity).
-- The coordinator receives only the verified pairs.
-- ---------------------------------------------------------------------------

CREATE FUNCTION simhash_prefix(set bigint[], threshold float8) RETURNS bigint[]
    AS 'MODULE_PATHNAME', 'simhash_prefix' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash_prefix(bigint[], float8) IS
    'the prefix of a shingle set made by simhash_shingles at a Jaccard threshold: its first n - ceil(t n) + 1 hashes in the set''s own (ascending unsigned) order, t a hair below threshold; two sets with simhash_similarity >= threshold share a hash in their prefixes';

CREATE FUNCTION simhash_first_common_prefix_token(a bigint[], b bigint[], threshold float8) RETURNS bigint
    AS 'MODULE_PATHNAME', 'simhash_first_common_prefix_token' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash_first_common_prefix_token(bigint[], bigint[], float8) IS
    'the smallest hash (unsigned order) in both simhash_prefix(a, threshold) and simhash_prefix(b, threshold), NULL when the prefixes share none: the one token at which a prefix-filter join reports the pair';

-- Whether rel is a Citus table distributed over workers (hash, range or
-- append); false for reference and local tables and without Citus.
CREATE FUNCTION simhash_citus_distributed(rel regclass) RETURNS bool
    LANGUAGE plpgsql STABLE STRICT
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    found bool;
BEGIN
    IF to_regclass('pg_catalog.pg_dist_partition') IS NULL THEN
        RETURN false;
    END IF;
    EXECUTE 'SELECT EXISTS (SELECT FROM pg_catalog.pg_dist_partition WHERE logicalrelid = $1 AND partmethod IN (''h'', ''r'', ''a''))'
        INTO found USING rel;
    RETURN found;
END
$$;
COMMENT ON FUNCTION simhash_citus_distributed(regclass) IS
    'true when rel is a Citus table distributed over workers (hash, range or append distribution), false for reference or Citus local tables and when Citus is not installed';

CREATE FUNCTION simhash_near_duplicates_distributed(rel regclass, fp name, body name, key name, threshold float8 DEFAULT 0.8)
    RETURNS TABLE (key_a text, key_b text, similarity float8)
    LANGUAGE plpgsql VOLATILE STRICT
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    src text := @extschema@.simhash_near_duplicates_source(rel, fp, body, key, threshold);
    -- a hair below t: a looser length filter only adds candidates
    t float8 := threshold - 1e-9;
    ns name;
    scratch text;
    nentries bigint;
    ins text;
    line text;
    method text;
BEGIN
    IF NOT @extschema@.simhash_citus_distributed(rel) THEN
        RAISE EXCEPTION 'relation % is not a Citus distributed table', rel
            USING ERRCODE = 'wrong_object_type',
                  HINT = 'simhash_near_duplicates joins other tables on this node.';
    END IF;
    -- The scratch table cannot be temporary (Citus distributes no temporary
    -- table): it goes into rel's schema, else the extension's, whichever the
    -- caller can create in, and is dropped before returning; an error rolls
    -- its creation back.
    SELECT n.nspname INTO ns FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE c.oid = rel AND has_schema_privilege(n.oid, 'CREATE');
    IF ns IS NULL AND has_schema_privilege('@extschema@', 'CREATE') THEN
        ns := '@extschema@';
    END IF;
    IF ns IS NULL THEN
        RAISE EXCEPTION 'permission denied to create the scratch table of simhash_near_duplicates for %', rel
            USING ERRCODE = 'insufficient_privilege',
                  HINT = 'The distributed join needs CREATE on the schema of the table or of the extension simhash.';
    END IF;
    scratch := format('%I.%I', ns, 'simhash_ndd_' || pg_backend_pid() || '_' || substr(md5(random()::text), 1, 8));
    RAISE NOTICE 'simhash_near_duplicates: distributed join of % on the Citus workers', rel;
    EXECUTE format('CREATE TABLE %s (tok bigint NOT NULL, k text COLLATE "C" NOT NULL, n int NOT NULL, sh bigint[] NOT NULL)',
                   scratch);
    PERFORM create_distributed_table(scratch, 'tok', colocate_with => 'none');
    -- the prefix entries, repartitioned by token between the workers; the
    -- NOTICE names the method Citus plans (repartition: the workers compute
    -- the shingles and send the entries to each other).  Citus cannot
    -- EXPLAIN a statement with parameters: the plan, which does not depend on
    -- the threshold, is explained with a constant in its place.  Empty sets
    -- (texts without shingles) are similar to each other (1) and to nothing
    -- else: they meet at token 0, where only they pass the length filter.
    ins := 'INSERT INTO %s (tok, k, n, sh) SELECT p.tok, s.k, cardinality(s.sh), s.sh'
           ' FROM (SELECT r.k COLLATE "C" AS k, @extschema@.simhash_shingles(r.b) AS sh FROM (%s) r(k, b)) s,'
           '      unnest(CASE WHEN cardinality(s.sh) = 0 THEN ''{0}''::bigint[]'
           '                          ELSE @extschema@.simhash_prefix(s.sh, %s) END) p(tok)';
    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || format(ins, scratch, src, '0.5::float8') LOOP
        method := coalesce(method, substring(line FROM 'INSERT/SELECT method: (.*)$'));
    END LOOP;
    EXECUTE format(ins, scratch, src, '$1') USING threshold;
    GET DIAGNOSTICS nentries = ROW_COUNT;
    RAISE NOTICE 'simhash_near_duplicates: % prefix entries sent to the workers by token (INSERT/SELECT method: %)',
        nentries, coalesce(method, 'unknown');
    -- per token, on its worker: length filter, first common token, exact similarity
    RETURN QUERY EXECUTE format(
        'SELECT v.ka::text, v.kb::text, v.j FROM'
        ' (SELECT a.k AS ka, b.k AS kb, @extschema@.simhash_similarity(a.sh, b.sh) AS j'
        '    FROM %1$s a JOIN %1$s b ON b.tok = a.tok AND a.k < b.k'
        '   WHERE least(a.n, b.n) >= $1 * greatest(a.n, b.n)'
        '     AND (a.n = 0 OR @extschema@.simhash_first_common_prefix_token(a.sh, b.sh, $2) = a.tok)) v'
        ' WHERE v.j >= $2', scratch)
        USING t, threshold;
    EXECUTE format('DROP TABLE %s', scratch);
END
$$;
COMMENT ON FUNCTION simhash_near_duplicates_distributed(regclass, name, name, name, float8) IS
    'simhash_near_duplicates of a Citus distributed table, joined on the workers: the prefix entries of the shingle sets (simhash_prefix) are repartitioned by token into a scratch distributed table (INSERT ... SELECT), each token''s rows join on their worker and a pair is verified only at its first common prefix token; the same pairs as simhash_near_duplicates of a local copy; the scratch table lives in rel''s schema (else the extension''s) during the call';
