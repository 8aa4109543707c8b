-- ---------------------------------------------------------------------------
-- Boilerplate weighting: document frequencies of shingles in a side table
-- (simhash_df_build), and the fingerprint whose shingles vote by how rare
-- they are in the corpus (simhash_weighted), so that navigation, headers and
-- licence footers that many documents share stop deciding the fingerprint.
-- ---------------------------------------------------------------------------
CREATE FUNCTION simhash_weighted(doc text, weights regclass, max_df float8 DEFAULT 0.1, idf bool DEFAULT false)
    RETURNS simhash
    AS 'MODULE_PATHNAME', 'simhash_weighted' LANGUAGE C STABLE STRICT PARALLEL RESTRICTED;
COMMENT ON FUNCTION simhash_weighted(text, regclass, float8, bool) IS
    'SimHash of text (default options) in which a shingle of more than max_df of the N documents counted in the weights table (simhash_df_build) has no vote, and with idf each other shingle of df documents votes ln((1 + N) / (1 + df)); STABLE (reads the table): store it with UPDATE or a trigger, not in a generated column or index expression';

CREATE FUNCTION simhash_df_build(rel regclass, body name, weights text DEFAULT NULL, min_df int DEFAULT 2)
    RETURNS regclass
    LANGUAGE plpgsql VOLATILE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    bodytype oid;
    nsp name;
    tab name;
    parts text[];
    docs bigint;
    shingles bigint;
    started timestamptz := clock_timestamp();
BEGIN
    IF rel IS NULL OR body IS NULL OR min_df IS NULL THEN
        PERFORM @extschema@.simhash_raise('22004', 'simhash_df_build: rel, body and min_df must not be NULL');
    END IF;
    IF min_df < 1 THEN
        PERFORM @extschema@.simhash_raise('22023', format('min_df %s is out of range', min_df),
                                          'min_df is the fewest documents a shingle is kept for, 1 or more.');
    END IF;
    SELECT atttypid INTO bodytype FROM pg_attribute
     WHERE attrelid = rel AND attname = body AND attnum > 0 AND NOT attisdropped;
    IF NOT FOUND THEN
        PERFORM @extschema@.simhash_raise('42703', format('column "%s" of relation %s does not exist', body, rel));
    END IF;
    IF bodytype NOT IN ('text'::regtype, 'varchar'::regtype) THEN
        PERFORM @extschema@.simhash_raise('42804', format('column "%s" of relation %s is of type %s, not text', body, rel, bodytype::regtype),
                                          'For HTML, build on a view of html_text(page) and fingerprint with simhash_weighted(html_text(page), ...).');
    END IF;
    IF NOT has_column_privilege(rel, body::text, 'SELECT') THEN
        PERFORM @extschema@.simhash_raise('42501', format('permission denied for relation %s', rel),
                                          format('simhash_df_build reads column %I with the caller''s rights.', body));
    END IF;
    -- The side table: beside rel unless weights names a schema.
    SELECT n.nspname, c.relname || '_simhash_df' INTO nsp, tab
      FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = rel;
    IF weights IS NOT NULL THEN
        parts := parse_ident(weights);
        IF cardinality(parts) = 1 THEN
            tab := parts[1];
        ELSIF cardinality(parts) = 2 THEN
            nsp := parts[1];
            tab := parts[2];
        ELSE
            PERFORM @extschema@.simhash_raise('42602', format('improper table name "%s"', weights),
                                              'Name the table as table or schema.table.');
        END IF;
    END IF;
    IF to_regclass(format('%I.%I', nsp, tab)) IS NOT NULL THEN
        PERFORM @extschema@.simhash_raise('42P07', format('relation %s.%s already exists', quote_ident(nsp), quote_ident(tab)),
                                          'Drop it first to rebuild it, or name another table with weights.');
    END IF;
    -- Counting is a build: it may use maintenance_work_mem, as CREATE INDEX
    -- does (the function's SET clause restores work_mem on exit).
    PERFORM set_config('work_mem', current_setting('maintenance_work_mem'), true);
    EXECUTE format('CREATE TABLE %I.%I (shingle bigint, df bigint NOT NULL, '
                   'CHECK (df > 0 OR (shingle IS NULL AND df = 0)))', nsp, tab);
    EXECUTE format('SELECT count(*) FROM %s WHERE %I IS NOT NULL', rel, body) INTO docs;
    RAISE NOTICE 'simhash_df_build: counting the shingles of % documents of %', docs, rel;
    EXECUTE format('INSERT INTO %I.%I (shingle, df) '
                   'SELECT s, count(*) FROM %s, unnest(@extschema@.simhash_shingles(%I::text)) s '
                   'WHERE %I IS NOT NULL GROUP BY s HAVING count(*) >= $1', nsp, tab, rel, body, body)
        USING min_df;
    GET DIAGNOSTICS shingles = ROW_COUNT;
    EXECUTE format('INSERT INTO %I.%I (shingle, df) VALUES (NULL, $1)', nsp, tab) USING docs;
    EXECUTE format('COMMENT ON TABLE %I.%I IS %L', nsp, tab,
                   format('document frequencies of the shingles of %s.%I (simhash_df_build): %s documents '
                          '(the row whose shingle is NULL), shingles of at least %s of them', rel, body, docs, min_df));
    RAISE NOTICE 'simhash_df_build: % shingles in % or more of % documents written to %.% in % s',
        shingles, min_df, docs, quote_ident(nsp), quote_ident(tab),
        round(extract(epoch FROM clock_timestamp() - started)::numeric, 1);
    RETURN format('%I.%I', nsp, tab)::regclass;
END
$$;
COMMENT ON FUNCTION simhash_df_build(regclass, name, text, int) IS
    'builds the weights table of simhash_weighted: (shingle bigint, df bigint), the number of rows of rel whose body has each shingle (default options), for shingles of at least min_df rows, and one row (NULL, number of documents); named weights or <rel>_simhash_df beside rel, owned by the caller; reads rel with the caller''s rights within maintenance_work_mem';
