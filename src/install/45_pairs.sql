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

-- The argument errors of the PL/pgSQL functions, without CONTEXT lines.
CREATE FUNCTION simhash_raise(sqlstate text, message text, hint text DEFAULT NULL) RETURNS void
    AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION simhash_raise(text, text, text) IS
    'raises ERROR sqlstate with message and hint (if not NULL), without CONTEXT lines: the argument errors of the extension''s PL/pgSQL functions';

-- The checked source of simhash_pairs: "SELECT k, h FROM rel" as SQL text.
CREATE FUNCTION simhash_pairs_source(rel regclass, fp name, key name, radius int) RETURNS text
    LANGUAGE plpgsql STABLE STRICT
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    fptype oid;
BEGIN
    IF radius < 0 OR radius > 64 THEN
        PERFORM @extschema@.simhash_raise('22023', format('radius %s is out of range 0..64', radius),
                                          'A radius is a number of differing bits, 0 to 64.');
    END IF;
    IF NOT EXISTS (SELECT FROM pg_class WHERE oid = rel) THEN
        RAISE EXCEPTION 'relation with OID % does not exist', rel::oid
            USING ERRCODE = 'undefined_table';
    END IF;
    SELECT atttypid INTO fptype FROM pg_attribute
     WHERE attrelid = rel AND attname = fp AND attnum > 0 AND NOT attisdropped;
    IF NOT FOUND THEN
        PERFORM @extschema@.simhash_raise('42703', format('column "%s" of relation %s does not exist', fp, rel));
    END IF;
    IF fptype NOT IN ('@extschema@.simhash'::regtype, 'bigint'::regtype) THEN
        PERFORM @extschema@.simhash_raise('42804', format('column "%s" of relation %s is of type %s, not simhash or bigint',
                                                          fp, rel, fptype::regtype));
    END IF;
    IF NOT EXISTS (SELECT FROM pg_attribute
                    WHERE attrelid = rel AND attname = key AND attnum > 0 AND NOT attisdropped) THEN
        PERFORM @extschema@.simhash_raise('42703', format('column "%s" of relation %s does not exist', key, rel));
    END IF;
    IF NOT (has_column_privilege(rel, fp::text, 'SELECT') AND has_column_privilege(rel, key::text, 'SELECT')) THEN
        PERFORM @extschema@.simhash_raise('42501', format('permission denied for relation %s', rel),
                                          format('simhash_pairs reads columns %I and %I with the caller''s rights.', fp, key));
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

-- The index path of simhash_pairs (src/am/pairs.c): which index, and the
-- pairs read through it.
CREATE FUNCTION simhash_pairs_index_for(rel regclass, fp name, radius int) RETURNS regclass
    AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION simhash_pairs_index_for(regclass, name, int) IS
    'the simhash index simhash_pairs reads for these arguments: a valid, non-partial simhash index of the plain table rel on column fp alone whose bits are at least radius, row-level security not applying to the caller; NULL when there is none (it joins the rows instead); a DEBUG1 line says which path and why';

CREATE FUNCTION simhash_pairs_index(index regclass, key name, radius int)
    RETURNS TABLE (key_a text, key_b text, distance int)
    AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION simhash_pairs_index(regclass, name, int) IS
    'the rows of simhash_pairs(table, the index''s column, key, radius) read through the index: each permuted table streamed in prefix order, the heap rows fetched under the statement''s snapshot; 0A000 when the index cannot serve (see simhash_pairs_index_for), 53200 when a group of rows sharing a prefix passes work_mem';

CREATE FUNCTION simhash_pairs(rel regclass, fp name, key name, radius int)
    RETURNS TABLE (key_a text, key_b text, distance int)
    LANGUAGE plpgsql VOLATILE STRICT
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    src text := @extschema@.simhash_pairs_source(rel, fp, key, radius);
    n bigint;
    masks bigint[];
    distributed bool := false;
    nspid oid;
    nsp name;
    work text;
    hashjoin text := current_setting('enable_hashjoin');
    propagate text;
    idx regclass;
BEGIN
    IF to_regclass('pg_catalog.pg_dist_partition') IS NOT NULL THEN
        EXECUTE 'SELECT EXISTS (SELECT FROM pg_catalog.pg_dist_partition WHERE logicalrelid = $1 AND partmethod = ''h'')'
           INTO distributed USING rel;
    END IF;
    IF NOT distributed THEN
        -- A simhash index on fp holds every permuted table sorted already:
        -- read it rather than sort the rows.  A group of rows sharing a
        -- prefix beyond work_mem ends it (53200) before any pair is
        -- returned; the joins below take over.
        idx := @extschema@.simhash_pairs_index_for(rel, fp, radius);
        IF idx IS NOT NULL THEN
            BEGIN
                RETURN QUERY SELECT * FROM @extschema@.simhash_pairs_index(idx, key, radius);
                RETURN;
            EXCEPTION WHEN out_of_memory THEN
                RAISE DEBUG 'simhash_pairs: join path (%)', SQLERRM;
            END;
        END IF;
    END IF;
    EXECUTE format('SELECT count(*) FROM (%s) s', src) INTO n;

    IF distributed THEN
        -- Repartition every row once per table by (table, prefix) into a
        -- scratch table distributed on the prefix; each group then lives on
        -- one shard and the self-join runs there.  Only pairs come back.
        masks := @extschema@.simhash_prefix_masks(radius, n);
        SELECT n.oid, n.nspname INTO nspid, nsp FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = rel;
        IF NOT has_schema_privilege(nspid, 'CREATE') THEN
            PERFORM @extschema@.simhash_raise('42501', format('permission denied for schema %s', nsp),
                                              'simhash_pairs on a distributed table creates a scratch distributed table in the table''s schema for the length of the call.');
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
        -- materialization.  The tables' joins run one after the other, so
        -- that only one join's sorts hold temporary files at a time (in one
        -- UNION ALL every table's sorts lived until the last one ended).
        masks := @extschema@.simhash_prefix_masks(radius, n);
        PERFORM set_config('enable_hashjoin', 'off', true);
        FOR t IN 1 .. cardinality(masks) LOOP
            RETURN QUERY EXECUTE format(
                'SELECT a.k::text, b.k::text, (a.h OPERATOR(@extschema@.<~>) b.h)::int FROM (%1$s) a JOIN (%1$s) b'
                ' ON %2$s a.k < b.k'
                ' WHERE (a.h OPERATOR(@extschema@.<~>) b.h) <= %3$s AND %4$s',
                src,
                CASE WHEN masks[t] = 0 THEN ''
                     ELSE format('(a.h & %1$s::bigint) = (b.h & %1$s::bigint) AND', masks[t]) END,
                radius,
                @extschema@.simhash_pairs_first_table(masks[1:t], '(a.h # b.h)', t::text));
        END LOOP;
        PERFORM set_config('enable_hashjoin', hashjoin, true);
    END IF;
END
$$;
COMMENT ON FUNCTION simhash_pairs(regclass, name, name, int) IS
    'every pair of rows of rel whose fingerprints (column fp, simhash or bigint) differ in at most radius bits, once, as (key_a, key_b) with key_a < key_b in "C" collation; keys are column key as text; NULL fp or key rows are skipped, equal keys never paired; reads a simhash index on fp when simhash_pairs_index_for names one; works on distributed Citus tables';

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
    e_state text;
    e_message text;
    e_detail text;
    e_hint text;
BEGIN
    -- The arguments are checked before the scratch tables exist, so that an
    -- error about them names no internal table in its CONTEXT lines.
    PERFORM @extschema@.simhash_pairs_source(rel, fp, key_column, radius);
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
    EXCEPTION WHEN OTHERS OR query_canceled THEN
        -- Raised again without the CONTEXT lines of the statements on the
        -- scratch tables (their names are internal: backend pid, random).
        GET STACKED DIAGNOSTICS e_state = RETURNED_SQLSTATE, e_message = MESSAGE_TEXT,
                                e_detail = PG_EXCEPTION_DETAIL, e_hint = PG_EXCEPTION_HINT;
        IF e_detail = '' AND e_hint = '' THEN
            RAISE EXCEPTION USING ERRCODE = e_state, MESSAGE = e_message;
        ELSIF e_hint = '' THEN
            RAISE EXCEPTION USING ERRCODE = e_state, MESSAGE = e_message, DETAIL = e_detail;
        ELSIF e_detail = '' THEN
            RAISE EXCEPTION USING ERRCODE = e_state, MESSAGE = e_message, HINT = e_hint;
        ELSE
            RAISE EXCEPTION USING ERRCODE = e_state, MESSAGE = e_message, DETAIL = e_detail, HINT = e_hint;
        END IF;
    END;
END
$$;
COMMENT ON FUNCTION simhash_clusters(regclass, name, name, int) IS
    'connected components of the pairs of simhash_pairs(rel, fp, key_column, radius): one row per key that has a pair, cluster = the smallest key of its component in "C" collation';
