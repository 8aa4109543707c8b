-- simhash 1.1 -> 1.2 (ALTER EXTENSION simhash UPDATE TO '1.2').
--
-- Every change made to the SQL objects of src/install/*.sql since 1.1 is repeated
-- here, in the order of the pieces; test/t/090_extension_upgrade.pl checks that an
-- updated 1.1 (and 1.0) has exactly the objects, definitions, comments and
-- privileges of a fresh 1.2 install.
\echo Use "ALTER EXTENSION simhash UPDATE TO '1.2'" to load this file. \quit

-- Every object has a COMMENT (1.1 left 40 without one) ------------------------
COMMENT ON FUNCTION simhash_in(cstring) IS
    'input function of simhash: 1 to 16 hex digits, optionally prefixed with 0x';
COMMENT ON FUNCTION simhash_out(simhash) IS 'output function of simhash: 16 lowercase hex digits';
COMMENT ON FUNCTION simhash_recv(internal) IS
    'binary input function of simhash: the 64 bits as an 8-byte big-endian integer';
COMMENT ON FUNCTION simhash_send(simhash) IS
    'binary output function of simhash: the 64 bits as an 8-byte big-endian integer';
COMMENT ON CAST (bigint AS simhash) IS 'explicit: the same 64 bits (two''s complement)';
COMMENT ON CAST (integer AS simhash) IS 'explicit: the integer widened to bigint, then its 64 bits';
COMMENT ON CAST (smallint AS simhash) IS 'explicit: the smallint widened to bigint, then its 64 bits';
COMMENT ON CAST (simhash AS bigint) IS 'explicit: the same 64 bits (two''s complement)';
COMMENT ON CAST (bit AS simhash) IS 'explicit: a bit(64), most significant bit first';
COMMENT ON CAST (simhash AS bit) IS 'explicit: the 64 bits as bit(64), most significant bit first';
COMMENT ON CAST (numeric AS simhash) IS 'explicit: an unsigned decimal 0..18446744073709551615';
COMMENT ON CAST (simhash AS numeric) IS 'explicit: the fingerprint as an unsigned decimal';
COMMENT ON FUNCTION simhash_eq(simhash, simhash) IS 'a = b (the = operator)';
COMMENT ON FUNCTION simhash_ne(simhash, simhash) IS 'a <> b (the <> operator)';
COMMENT ON FUNCTION simhash_lt(simhash, simhash) IS 'a < b in unsigned order (the < operator)';
COMMENT ON FUNCTION simhash_le(simhash, simhash) IS 'a <= b in unsigned order (the <= operator)';
COMMENT ON FUNCTION simhash_gt(simhash, simhash) IS 'a > b in unsigned order (the > operator)';
COMMENT ON FUNCTION simhash_ge(simhash, simhash) IS 'a >= b in unsigned order (the >= operator)';
COMMENT ON FUNCTION simhash_cmp(simhash, simhash) IS
    '-1, 0 or 1 as a is less than, equal to or greater than b in unsigned order (btree support)';
COMMENT ON FUNCTION simhash_hash(simhash) IS '32-bit hash of a fingerprint (hash index support)';
COMMENT ON FUNCTION simhash_hash_extended(simhash, bigint) IS
    '64-bit seeded hash of a fingerprint (hash index support)';
COMMENT ON OPERATOR = (simhash, simhash) IS 'equal';
COMMENT ON OPERATOR <> (simhash, simhash) IS 'not equal';
COMMENT ON OPERATOR < (simhash, simhash) IS 'less than, in unsigned order';
COMMENT ON OPERATOR <= (simhash, simhash) IS 'less than or equal, in unsigned order';
COMMENT ON OPERATOR > (simhash, simhash) IS 'greater than, in unsigned order';
COMMENT ON OPERATOR >= (simhash, simhash) IS 'greater than or equal, in unsigned order';
COMMENT ON OPERATOR CLASS simhash_btree_ops USING btree IS
    'default btree operator class of simhash: unsigned order, as the hex and numeric forms sort';
COMMENT ON OPERATOR FAMILY simhash_btree_ops USING btree IS 'btree operators of simhash';
COMMENT ON OPERATOR CLASS simhash_hash_ops USING hash IS
    'default hash operator class of simhash: equality for hash joins, hash indexes and DISTINCT';
COMMENT ON OPERATOR FAMILY simhash_hash_ops USING hash IS 'hash operators of simhash';
COMMENT ON FUNCTION simhash_agg_trans(internal, bigint) IS
    'transition function of simhash_agg(bigint): adds one vote of the feature to the bit sums';
COMMENT ON FUNCTION simhash_agg_weighted_trans(internal, bigint, float8) IS
    'transition function of simhash_agg(bigint, float8): adds the feature''s weight to the bit sums';
COMMENT ON FUNCTION simhash_agg_combine(internal, internal) IS
    'combine function of simhash_agg: adds two partial bit sums (parallel aggregation)';
COMMENT ON FUNCTION simhash_agg_serialize(internal) IS
    'serialize function of simhash_agg: partial bit sums to bytea (parallel aggregation)';
COMMENT ON FUNCTION simhash_agg_deserialize(bytea, internal) IS
    'deserialize function of simhash_agg: partial bit sums from bytea (parallel aggregation)';
COMMENT ON FUNCTION simhash_agg_final(internal) IS
    'final function of simhash_agg: a bit is set when its sum is positive; no features gives 0';
COMMENT ON OPERATOR FAMILY simhash_ops USING simhash IS 'simhash index operators of simhash';
COMMENT ON OPERATOR FAMILY simhash_bigint_ops USING simhash IS
    'simhash index operators of 64-bit hashes stored as bigint';
COMMENT ON OPERATOR FAMILY simhash_query_ops USING simhash IS
    'simhash index operators of simhash_query values (exclusion constraints)';

-- simhash(varchar) and simhash(char(n)) fingerprint the text (in 1.1 they
-- were read as the cast to simhash) -------------------------------------------
CREATE FUNCTION simhash(doc varchar, shingle int DEFAULT 3, tokens text DEFAULT 'words',
                        casefold bool DEFAULT true) RETURNS simhash
    AS 'MODULE_PATHNAME', 'simhash_text' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash(varchar, int, text, bool) IS
    'SimHash of a varchar: the same as simhash(doc::text, shingle, tokens, casefold)';

CREATE FUNCTION simhash(doc bpchar, shingle int DEFAULT 3, tokens text DEFAULT 'words',
                        casefold bool DEFAULT true) RETURNS simhash
    AS 'SELECT @extschema@.simhash($1::pg_catalog.text, $2, $3, $4)'
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash(bpchar, int, text, bool) IS
    'SimHash of a char(n): simhash(doc::text, shingle, tokens, casefold), so trailing blanks do not count';

-- simhash_query('00ff', 3): an untyped literal is a simhash, not a bigint ------
CREATE FUNCTION simhash_query(fp text, radius int4) RETURNS simhash_query
    AS 'SELECT @extschema@.simhash_query($1::@extschema@.simhash, $2)'
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash_query(text, int4) IS
    'the query "within radius of fp" for %@, fp read as a simhash literal (1 to 16 hex digits)';

-- simhash_pairs_source: the radius message of every other radius check, and
-- 42P01 for a relation that does not exist (not a missing column of "-");
-- simhash_clusters: arguments checked before its scratch tables exist, errors
-- of its work on them raised again without CONTEXT lines naming them ----------
-- The argument errors of the PL/pgSQL functions, without CONTEXT lines.
CREATE FUNCTION simhash_raise(sqlstate text, message text, hint text DEFAULT NULL) RETURNS void
    AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION simhash_raise(text, text, text) IS
    'raises ERROR sqlstate with message and hint (if not NULL), without CONTEXT lines: the argument errors of the extension''s PL/pgSQL functions';

CREATE OR REPLACE FUNCTION simhash_pairs_source(rel regclass, fp name, key name, radius int) RETURNS text
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
CREATE OR REPLACE FUNCTION simhash_clusters(rel regclass, fp name, key_column name, radius int)
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

-- src/install/23_similarity.sql: exact shingle similarity (new in 1.2).
CREATE FUNCTION simhash_similarity(a text, b text, shingle int DEFAULT 3, tokens text DEFAULT 'words',
                                   casefold bool DEFAULT true) RETURNS float8
    AS 'MODULE_PATHNAME', 'simhash_similarity_text' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash_similarity(text, text, int, text, bool) IS
    'exact Jaccard similarity |A∩B| / |A∪B| of the distinct shingle sets simhash(text) builds from a and b with the same options (shingles compared by their 64-bit hashes); 1 when neither has a token, 0 when only one has';

CREATE FUNCTION simhash_shingles(doc text, shingle int DEFAULT 3, tokens text DEFAULT 'words',
                                 casefold bool DEFAULT true) RETURNS bigint[]
    AS 'MODULE_PATHNAME', 'simhash_shingles' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash_shingles(text, int, text, bool) IS
    'the distinct 64-bit shingle hashes simhash(text) votes with under the same options, ascending as unsigned numbers (as bigint)';

CREATE FUNCTION simhash_similarity(a bigint[], b bigint[]) RETURNS float8
    AS 'MODULE_PATHNAME', 'simhash_similarity_sets' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash_similarity(bigint[], bigint[]) IS
    'Jaccard similarity of two shingle sets made by simhash_shingles (ascending and distinct, checked): simhash_similarity(simhash_shingles(a), simhash_shingles(b)) = simhash_similarity(a, b)';

-- src/install/46_near_duplicates.sql: verified near-duplicates (new in 1.2).
-- The checks of simhash_near_duplicates, and the query of its rows.
CREATE FUNCTION simhash_near_duplicates_source(rel regclass, fp name, body name, key name, threshold float8)
    RETURNS text
    AS 'MODULE_PATHNAME', 'simhash_near_duplicates_source'
    LANGUAGE C STABLE STRICT
    SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION simhash_near_duplicates_source(regclass, name, name, name, float8) IS
    'checks the arguments of simhash_near_duplicates (rel exists, fp a simhash or bigint column, body a text column, key a column, all three readable by the caller, threshold in (0, 1]) and returns the query of its (key text, body text) rows';

-- The join over (key text, body text) rows read from a cursor.
CREATE FUNCTION simhash_near_duplicates_cursor(rows refcursor, threshold float8)
    RETURNS TABLE (key_a text, key_b text, similarity float8)
    AS 'MODULE_PATHNAME', 'simhash_near_duplicates_cursor'
    LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION simhash_near_duplicates_cursor(refcursor, float8) IS
    'every pair of the (key text, body text) rows of an open cursor whose exact shingle similarity simhash_similarity(body_a, body_b) is at least threshold, once, as (key_a, key_b) with key_a < key_b in "C" collation; rows with a NULL key or body are skipped, equal keys never paired; joins in memory within work_mem, else in chunks of sets over temporary files; NOTICEs every simhash.near_duplicates_progress rows and sets';

CREATE FUNCTION simhash_near_duplicates(rel regclass, fp name, body name, key name, threshold float8 DEFAULT 0.8)
    RETURNS TABLE (key_a text, key_b text, similarity float8)
    AS 'MODULE_PATHNAME', 'simhash_near_duplicates'
    LANGUAGE C VOLATILE STRICT
    SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION simhash_near_duplicates(regclass, name, name, name, float8) IS
    'every pair of rows of rel whose exact shingle similarity simhash_similarity(body_a, body_b) is at least threshold, once, as (key_a, key_b) with key_a < key_b in "C" collation, with that similarity: candidates by prefix filtering over the shingle sets (none missed), each verified exactly; in memory when that fits in work_mem, else in chunks of sets over temporary files; rows with a NULL fp, body or key are skipped';

-- One survivor per group of verified near-duplicates.
CREATE FUNCTION simhash_near_duplicate_survivors(rel regclass, fp name, body name, key name,
                                                 threshold float8 DEFAULT 0.8, keep_by name DEFAULT NULL,
                                                 keep_highest bool DEFAULT true)
    RETURNS TABLE (duplicate text, survivor text, similarity float8)
    LANGUAGE plpgsql VOLATILE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    suffix text := pg_backend_pid() || '_' || substr(md5(random()::text), 1, 8);
    pairs text := format('pg_temp.%I', 'simhash_nds_pairs_' || suffix);
    ranks text := format('pg_temp.%I', 'simhash_nds_ranks_' || suffix);
    rankexpr text;
    cur record;
    st char;
    e_state text;
    e_message text;
    e_detail text;
    e_hint text;
BEGIN
    IF rel IS NULL OR fp IS NULL OR body IS NULL OR key IS NULL OR threshold IS NULL OR keep_highest IS NULL THEN
        RETURN;
    END IF;
    PERFORM @extschema@.simhash_near_duplicates_source(rel, fp, body, key, threshold);
    IF keep_by IS NULL THEN
        rankexpr := format('length(%I)', body);
    ELSE
        IF NOT EXISTS (SELECT FROM pg_attribute
                        WHERE attrelid = rel AND attname = keep_by AND attnum > 0 AND NOT attisdropped) THEN
            PERFORM @extschema@.simhash_raise('42703', format('column "%s" of relation %s does not exist', keep_by, rel));
        END IF;
        IF NOT has_column_privilege(rel, keep_by::text, 'SELECT') THEN
            PERFORM @extschema@.simhash_raise('42501', format('permission denied for relation %s', rel),
                format('simhash_near_duplicate_survivors reads column %I with the caller''s rights.', keep_by));
        END IF;
        -- the policy sorts by keep_by: a type without an order fails now, before any pair is computed
        BEGIN
            EXECUTE format('SELECT %I FROM %s ORDER BY 1 LIMIT 0', keep_by, rel);
        EXCEPTION WHEN undefined_function THEN
            PERFORM @extschema@.simhash_raise('42883', format('column "%s" of relation %s is of type %s, which cannot be ordered', keep_by, rel,
                (SELECT atttypid::regtype FROM pg_attribute WHERE attrelid = rel AND attname = keep_by)),
                'keep_by names a column whose values sort, such as a number, a date or a text.');
        END;
        rankexpr := format('%I', keep_by);
    END IF;
    -- The work runs in a block whose errors are raised again with their own
    -- message, code, detail and hint, so that the names of the temporary
    -- tables never show in an error's QUERY or CONTEXT; the block's rollback
    -- drops the tables.
    BEGIN
        -- both directions of every verified pair
        EXECUTE format('CREATE TEMP TABLE %s (a text COLLATE "C", b text COLLATE "C", j float8)', pairs);
        EXECUTE format('INSERT INTO %s SELECT p.key_a, p.key_b, p.similarity FROM @extschema@.simhash_near_duplicates($1, $2, $3, $4, $5) p', pairs)
            USING rel, fp, body, key, threshold;
        EXECUTE format('INSERT INTO %1$s SELECT b, a, j FROM %1$s', pairs);
        EXECUTE format('CREATE INDEX ON %s (a)', pairs);
        -- the policy's order of the rows that have a pair: best first, ties by key;
        -- a key that several rows share takes its best row's rank
        EXECUTE format('CREATE TEMP TABLE %s (k text COLLATE "C" PRIMARY KEY, r bigint, state "char", survivor text, j float8)', ranks);
        EXECUTE format('INSERT INTO %1$s (k, r) SELECT k, row_number() OVER (ORDER BY v %2$s NULLS LAST, k) FROM'
                       ' (SELECT (%3$I)::text COLLATE "C" AS k, %4$s AS v, row_number() OVER'
                       '   (PARTITION BY (%3$I)::text ORDER BY %4$s %2$s NULLS LAST) AS nth FROM %5$s'
                       '   WHERE (%3$I)::text IN (SELECT a FROM %6$s)) s WHERE nth = 1',
                       ranks, CASE WHEN keep_highest THEN 'DESC' ELSE 'ASC' END, key, rankexpr, rel, pairs);
        EXECUTE format('ANALYZE %s', ranks);
        -- greedy: the best row not yet removed survives and removes the rows
        -- verified similar to it; a removed row never removes another, so
        -- nothing is removed for being similar to something removed (no chains)
        FOR cur IN EXECUTE format('SELECT k FROM %s ORDER BY r', ranks) LOOP
            EXECUTE format('SELECT state FROM %s WHERE k = $1', ranks) INTO st USING cur.k;
            CONTINUE WHEN st IS NOT NULL;
            EXECUTE format('UPDATE %1$s r SET state = ''d'', survivor = $1, j = p.j FROM %2$s p'
                           ' WHERE p.a = $1 AND r.k = p.b AND r.state IS NULL', ranks, pairs) USING cur.k;
            EXECUTE format('UPDATE %s SET state = ''k'' WHERE k = $1', ranks) USING cur.k;
        END LOOP;
        RETURN QUERY EXECUTE format('SELECT k::text, survivor, j FROM %s WHERE state = ''d'' ORDER BY k', ranks);
        EXECUTE format('DROP TABLE %s, %s', pairs, ranks);
    EXCEPTION WHEN OTHERS OR query_canceled THEN
        GET STACKED DIAGNOSTICS e_state = RETURNED_SQLSTATE, e_message = MESSAGE_TEXT,
                                e_detail = PG_EXCEPTION_DETAIL, e_hint = PG_EXCEPTION_HINT;
        IF e_detail <> '' AND e_hint <> '' THEN
            RAISE EXCEPTION USING ERRCODE = e_state, MESSAGE = e_message, DETAIL = e_detail, HINT = e_hint;
        ELSIF e_detail <> '' THEN
            RAISE EXCEPTION USING ERRCODE = e_state, MESSAGE = e_message, DETAIL = e_detail;
        ELSIF e_hint <> '' THEN
            RAISE EXCEPTION USING ERRCODE = e_state, MESSAGE = e_message, HINT = e_hint;
        ELSE
            RAISE EXCEPTION USING ERRCODE = e_state, MESSAGE = e_message;
        END IF;
    END;
END
$$;
COMMENT ON FUNCTION simhash_near_duplicate_survivors(regclass, name, name, name, float8, name, bool) IS
    'the rows to remove so that one survivor is kept per group of verified near-duplicates (simhash_near_duplicates at threshold): survivors are chosen greedily by keep_by (a column; NULL = length of body), highest first unless keep_highest is false, ties by smallest key; each removed row is returned with the survivor it is verified similar to and their similarity, so unrelated rows are never chained together';

-- Boilerplate weighting (src/install/47_boilerplate.sql) -------------------------
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

-- simhash_pairs: the tables' self-joins run one after the other (one
-- UNION ALL kept every table's sort files until its end); it reads a simhash
-- index on fp when there is one (simhash_pairs_index_for).
CREATE OR REPLACE FUNCTION simhash_pairs(rel regclass, fp name, key name, radius int)
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

-- simhash(name) fingerprints the text, as simhash(varchar) and simhash(bpchar) do.
-- name is a string type without an overload: simhash(x::name) would be the
-- cast to simhash (hex digits), as for any string type lacking one.
CREATE FUNCTION simhash(doc name, shingle int DEFAULT 3, tokens text DEFAULT 'words',
                        casefold bool DEFAULT true) RETURNS simhash
    AS 'SELECT @extschema@.simhash($1::pg_catalog.text, $2, $3, $4)'
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash(name, int, text, bool) IS
    'SimHash of a name: simhash(doc::text, shingle, tokens, casefold)';

-- CREATE INDEX ... USING simhash on a text column: an error with a hint.
CREATE OPERATOR CLASS simhash_text_ops
    DEFAULT FOR TYPE text USING simhash AS STORAGE simhash;
COMMENT ON OPERATOR CLASS simhash_text_ops USING simhash IS
    'none: CREATE INDEX on a text column fails with a hint to index simhash(column) instead';
COMMENT ON OPERATOR FAMILY simhash_text_ops USING simhash IS
    'none: a text column is indexed through simhash(column)';

-- simhash_index_check returns a line of what it checked (1.1: void).  A
-- changed result type needs DROP and CREATE: EXECUTE granted on it is lost.
DROP FUNCTION simhash_index_check(regclass);
CREATE FUNCTION simhash_index_check(index regclass) RETURNS text
    AS 'MODULE_PATHNAME' LANGUAGE C STRICT PARALLEL RESTRICTED;
COMMENT ON FUNCTION simhash_index_check(regclass) IS
    'verifies a simhash index: pages, sort order, per-table counts, every live heap row once per table; raises index_corrupted otherwise, and returns a line of what it checked';
REVOKE EXECUTE ON FUNCTION simhash_index_check(regclass) FROM PUBLIC;

-- Online lookup (src/sql/48_near_duplicates_of.sql) ------------------------
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
