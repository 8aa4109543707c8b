-- ---------------------------------------------------------------------------
-- Verified near-duplicates: every pair of rows whose exact shingle
-- similarity (simhash_similarity) reaches a threshold, and a survivor per
-- group.  They run with the caller's rights, like simhash_pairs.
--
-- Candidates come from prefix filtering over the shingle-hash sets (Bayardo
-- et al.'s all-pairs): sets sorted in one global order, if J(A, B) >= t then
-- |A and B| >= ceil(t |A|), so the first common shingle lies within the
-- first |A| - ceil(t |A|) + 1 shingles of A and likewise of B; two rows are
-- candidates when those prefixes share a hash and their sizes pass the
-- length filter min/max >= t.  The order is rarest first (document
-- frequency in the table, then hash), so prefixes hold the shingles few rows
-- share and boilerplate rarely makes candidates; a prefix shingle no other
-- set has cannot pair and is not joined.  No true pair is missed (recall
-- 1 by construction, whatever the length of the documents: a radius on 64
-- bits cannot do that, see bench/QUALITY.md), and every candidate is verified
-- exactly.  Rows with identical shingle sets are collapsed into one set first,
-- so exact copies cost one prefix, not one each.
--
-- Two implementations of that one join, in C: in memory (the core: ranks
-- instead of hashes, PPJoin's positional filter, merges of sorted arrays)
-- when the sets fit in work_mem, else in chunks of sets over temporary files, as a
-- block nested loop join runs (src/batch/near_duplicates_spill.c).
-- ---------------------------------------------------------------------------

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
