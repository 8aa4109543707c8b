-- ---------------------------------------------------------------------------
-- Verified near-duplicates of a Citus distributed table, joined on the
-- workers.  The extension does not depend on Citus: its catalog and
-- functions are looked up when a call needs them, and simhash_near_duplicates
-- (a C function) calls simhash_near_duplicates_distributed only when
-- simhash_citus_distributed says rel is distributed.
--
-- The global order of the prefix filter is the fixed one of
-- simhash_prefix_tokens (a mix of the hash, a built-in list of frequent
-- shingles last), with the tokens frequent in a sample of the table after
-- those: one short list, the same on every worker, so each worker computes
-- the prefix of its rows alone.
-- Four scratch tables, each filled by an INSERT ... SELECT that Citus either
-- pushes down or repartitions between the workers (no other transport):
--   s (k, sh)          every row's key and shingle set, by key: the one copy
--                      of the sets;
--   e (tok, k, n, pos) the prefix entries, by token: no set travels.  The
--                      prefixes are 4 hashes longer than the prefix filter
--                      needs, so a similar pair with o common hashes shares
--                      min(5, o) tokens;
--   p (ka, kb, ...)    the pairs of entries of each token within the length
--                      filter, by the first key, with sizes and positions;
--   v (kb, ka, sha)    each candidate (grouped on ka's shard: min(5, o)
--                      common tokens, o the overlap the similarity needs,
--                      and PPJoin's positional filter at the first common
--                      token) with the set of ka, by the second key.
-- Then v joins s on kb's shard and the pair is verified exactly
-- (simhash_similarity): the coordinator receives only the verified pairs.
-- ---------------------------------------------------------------------------

CREATE FUNCTION simhash_prefix(set bigint[], threshold float8, overlap int DEFAULT 1, frequent bigint[] DEFAULT '{}')
    RETURNS bigint[]
    AS 'MODULE_PATHNAME', 'simhash_prefix' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash_prefix(bigint[], float8, int, bigint[]) IS
    'the prefix of a shingle set made by simhash_shingles at a Jaccard threshold: its first n - ceil(t n) + overlap hashes (all n at most) in the fixed global order of simhash_prefix_tokens (a 64-bit mix of the hash, then a built-in list of frequent shingles, then the hashes listed in frequent, the first listed last), in that order, t a hair below threshold; two sets with simhash_similarity >= threshold and at least overlap common hashes share overlap hashes in their prefixes (with the same frequent list)';

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
    -- a hair below t: looser filters only add candidates
    t float8 := threshold - 1e-9;
    -- the common hashes a candidate shows (fewer when the pair needs fewer)
    ell int := 5;
    sample bigint;
    frequent bigint[];
    ns name;
    base text;
    s text; e text; p text; v text;
    shards int;
    nrows bigint; nentries bigint; ncand bigint; ndistinct bigint;
    nempty bigint; keybytes numeric; bodybytes numeric;
BEGIN
    IF NOT @extschema@.simhash_citus_distributed(rel) THEN
        RAISE EXCEPTION 'relation % is not a Citus distributed table', rel
            USING ERRCODE = 'wrong_object_type',
                  HINT = 'simhash_near_duplicates joins other tables on this node.';
    END IF;
    -- The scratch tables cannot be temporary (Citus distributes no temporary
    -- table): they go into rel's schema, else the extension's, whichever the
    -- caller can create in, and are dropped before returning; an error
    -- rolls their creation back with the transaction.
    SELECT n.nspname INTO ns FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE c.oid = rel AND has_schema_privilege(n.oid, 'CREATE');
    IF ns IS NULL AND has_schema_privilege('@extschema@', 'CREATE') THEN
        ns := '@extschema@';
    END IF;
    IF ns IS NULL THEN
        RAISE EXCEPTION 'permission denied to create the scratch tables of simhash_near_duplicates for %', rel
            USING ERRCODE = 'insufficient_privilege',
                  HINT = 'The distributed join needs CREATE on the schema of the table or of the extension simhash.';
    END IF;
    base := 'simhash_ndd_' || pg_backend_pid() || '_' || substr(md5(random()::text), 1, 8);
    s := format('%I.%I', ns, base || '_s');
    e := format('%I.%I', ns, base || '_e');
    p := format('%I.%I', ns, base || '_p');
    v := format('%I.%I', ns, base || '_v');
    -- as many shards as rel has, at least 2 per worker node
    EXECUTE 'SELECT greatest((SELECT count(*) FROM pg_catalog.pg_dist_shard WHERE logicalrelid = $1),'
            ' 2 * (SELECT count(*) FROM pg_catalog.pg_dist_node WHERE isactive AND shouldhaveshards AND noderole = ''primary''))'
        INTO shards USING rel;
    RAISE NOTICE 'simhash_near_duplicates: distributed join of % on the Citus workers (% shards)', rel, shards;

    -- the sets, by key (Citus repartitions unless rel is distributed by it)
    -- (the sets of hashes do not compress: stored without trying)
    EXECUTE format('CREATE UNLOGGED TABLE %s (k text COLLATE "C" NOT NULL, sh bigint[] NOT NULL, bl int NOT NULL)', s);
    EXECUTE format('ALTER TABLE %s ALTER COLUMN sh SET STORAGE EXTERNAL', s);
    PERFORM create_distributed_table(s, 'k', colocate_with => 'none', shard_count => shards);
    EXECUTE format('INSERT INTO %s (k, sh, bl) SELECT r.k, @extschema@.simhash_shingles(r.b), octet_length(r.b) FROM (%s) r(k, b)', s, src);
    GET DIAGNOSTICS nrows = ROW_COUNT;
    -- the checks of the local join: a body without shingles in nearly every
    -- row, or keys far longer than bodies, mean swapped arguments
    EXECUTE format('SELECT count(*) FILTER (WHERE cardinality(sh) = 0), coalesce(sum(octet_length(k)), 0),'
                   ' coalesce(sum(bl), 0) FROM %s', s)
        INTO nempty, keybytes, bodybytes;
    IF nrows >= 10 AND nempty * 10 >= nrows * 9 THEN
        RAISE EXCEPTION 'column "%" of relation % gives no shingles for % of % rows', body, rel, nempty, nrows
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'The body argument names the text to compare and the key argument the row''s name; an empty text, or one without a word, has no shingle.';
    END IF;
    IF nrows >= 10 AND keybytes >= 256 * nrows AND keybytes >= 4 * bodybytes THEN
        RAISE EXCEPTION 'column "%" of relation %, the body, averages % bytes a row, and the key %', body, rel,
                round(bodybytes::numeric / nrows), round(keybytes::numeric / nrows)
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'The body argument names the text to compare and the key argument the row''s name: were they swapped?';
    END IF;

    -- this table's frequent prefix tokens, from a sample of about 1,000
    -- rows of a table of 5,000 or more: those that would make token groups of
    -- more than 64 entries go last in the order (any order is exact; this
    -- one makes fewer pairs)
    frequent := '{}';
    IF nrows >= 5000 THEN
        sample := nrows / 1000;
        EXECUTE format('SELECT coalesce(array_agg(f.tok ORDER BY f.c DESC, f.tok), ''{}'') FROM'
                       ' (SELECT x.tok, count(*) AS c FROM %s s, unnest(@extschema@.simhash_prefix(s.sh, $1, $2)) x(tok)'
                       '   WHERE abs(hashtext(s.k) %% $3) = 0 GROUP BY x.tok HAVING count(*) >= $4) f', s)
            INTO frequent USING threshold, ell, sample, greatest(2, 64 / sample);
    END IF;

    -- the prefix entries, by token.  Empty sets (texts without shingles) are
    -- similar to each other (1) and to nothing else: they meet at token 0,
    -- where only they pass the length filter.
    EXECUTE format('CREATE UNLOGGED TABLE %s (tok bigint NOT NULL, k text COLLATE "C" NOT NULL, n int NOT NULL, pos int NOT NULL)', e);
    PERFORM create_distributed_table(e, 'tok', colocate_with => 'none', shard_count => shards);
    EXECUTE format('INSERT INTO %s (tok, k, n, pos) SELECT x.tok, s.k, cardinality(s.sh), x.pos FROM %s s,'
                   ' unnest(CASE WHEN cardinality(s.sh) = 0 THEN ''{0}''::bigint[]'
                   '             ELSE @extschema@.simhash_prefix(s.sh, $1, $2, $3) END) WITH ORDINALITY x(tok, pos)', e, s)
        USING threshold, ell, frequent;
    GET DIAGNOSTICS nentries = ROW_COUNT;

    -- the pairs of entries of each token, by the first key, at one of the
    -- first ell common hashes of the pair: at the c-th, at positions i and
    -- j, |A and B| <= c + min(|A| - i, |B| - j), and J >= t needs
    -- |A and B| >= t / (1 + t) (|A| + |B|).
    EXECUTE format('CREATE UNLOGGED TABLE %s (ka text COLLATE "C" NOT NULL, kb text COLLATE "C" NOT NULL,'
                   ' na int NOT NULL, nb int NOT NULL, pa int NOT NULL, pb int NOT NULL)', p);
    PERFORM create_distributed_table(p, 'ka', colocate_with => s);
    EXECUTE format('INSERT INTO %s (ka, kb, na, nb, pa, pb) SELECT a.k, b.k, a.n, b.n, a.pos, b.pos'
                   ' FROM %2$s a JOIN %2$s b ON b.tok = a.tok AND a.k < b.k'
                   ' WHERE least(a.n, b.n) >= $1 * greatest(a.n, b.n)'
                   '   AND $2 + least(a.n - a.pos, b.n - b.pos) >= $1 / (1 + $1) * (a.n + b.n)', p, e)
        USING t, ell;
    GET DIAGNOSTICS ncand = ROW_COUNT;

    -- the candidates, with the set of the first key, by the second key.  A
    -- pair needing o common hashes shows min(ell, o) tokens (the prefixes
    -- are ell - 1 longer); at its first common token, every common hash is
    -- that one or after it: |A and B| <= 1 + min(|A| - i, |B| - j).
    EXECUTE format('CREATE UNLOGGED TABLE %s (kb text COLLATE "C" NOT NULL, ka text COLLATE "C" NOT NULL, sha bigint[] NOT NULL)', v);
    EXECUTE format('ALTER TABLE %s ALTER COLUMN sha SET STORAGE EXTERNAL', v);
    PERFORM create_distributed_table(v, 'kb', colocate_with => s);
    EXECUTE format('INSERT INTO %s (kb, ka, sha) SELECT c.kb, c.ka, s.sh FROM'
                   ' (SELECT ka, kb FROM %s GROUP BY ka, kb, na, nb'
                   '  HAVING count(*) >= least($2, ceil($1 / (1 + $1) * (na + nb)))'
                   '     AND 1 + least(na - min(pa), nb - min(pb)) >= $1 / (1 + $1) * (na + nb)) c'
                   ' JOIN %s s ON s.k = c.ka', v, p, s)
        USING t, ell;
    GET DIAGNOSTICS ndistinct = ROW_COUNT;
    RAISE NOTICE 'simhash_near_duplicates: % rows, % prefix entries (% frequent tokens last), % pairs of entries, % candidate pairs moved between the workers',
        nrows, nentries, cardinality(frequent), ncand, ndistinct;

    -- verified on the shard of the second key
    RETURN QUERY EXECUTE format(
        'SELECT w.ka::text, w.kb::text, w.j FROM'
        ' (SELECT c.ka, c.kb, @extschema@.simhash_similarity(c.sha, s.sh) AS j FROM %s c JOIN %s s ON s.k = c.kb) w'
        ' WHERE w.j >= $1', v, s)
        USING threshold;
    EXECUTE format('DROP TABLE %s, %s, %s, %s', v, p, e, s);
END
$$;
COMMENT ON FUNCTION simhash_near_duplicates_distributed(regclass, name, name, name, float8) IS
    'simhash_near_duplicates of a Citus distributed table, joined on the workers (simhash_near_duplicates calls it for such a table): shingle sets by key, prefix entries (token, key, size, position) by token, candidate pairs by key, each moved by an INSERT ... SELECT that Citus pushes down or repartitions; candidates pass the length and positional filters on their token''s shard and are verified exactly on their keys'' shards; the same pairs as simhash_near_duplicates of a local copy; four scratch tables live in rel''s schema (else the extension''s) during the call';
