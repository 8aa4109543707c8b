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
-- Two implementations of that one join: in memory (the core, through
-- simhash_near_duplicates_cursor, when it fits in work_mem: ranks instead of
-- hashes, PPJoin's positional filter, merges of sorted arrays), else in
-- temporary tables whose joins and sorts spill to disk.
-- ---------------------------------------------------------------------------

-- The checked source of simhash_near_duplicates: "SELECT k, sh FROM rel" as SQL text.
CREATE FUNCTION simhash_near_duplicates_source(rel regclass, fp name, body name, key name, threshold float8)
    RETURNS text
    LANGUAGE plpgsql STABLE STRICT
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    bodytype oid;
BEGIN
    IF NOT (threshold > 0 AND threshold <= 1) THEN
        RAISE EXCEPTION 'threshold % is out of range', threshold
            USING ERRCODE = 'invalid_parameter_value', HINT = 'threshold is a Jaccard similarity above 0 and at most 1.';
    END IF;
    -- fp and key: the checks (and the errors) of simhash_pairs
    PERFORM @extschema@.simhash_pairs_source(rel, fp, key, 0);
    SELECT atttypid INTO bodytype FROM pg_attribute
     WHERE attrelid = rel AND attname = body AND attnum > 0 AND NOT attisdropped;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'column "%" of relation % does not exist', body, rel
            USING ERRCODE = 'undefined_column';
    END IF;
    IF bodytype NOT IN ('text'::regtype, 'varchar'::regtype, 'bpchar'::regtype) THEN
        RAISE EXCEPTION 'column "%" of relation % is of type %, not text', body, rel, bodytype::regtype
            USING ERRCODE = 'datatype_mismatch';
    END IF;
    IF NOT has_column_privilege(rel, body::text, 'SELECT') THEN
        RAISE EXCEPTION 'permission denied for relation %', rel
            USING ERRCODE = 'insufficient_privilege',
                  HINT = format('simhash_near_duplicates reads columns %I, %I and %I with the caller''s rights.', fp, body, key);
    END IF;
    RETURN format('SELECT (%1$I)::text COLLATE "C" AS k, @extschema@.simhash_shingles((%2$I)::text) AS sh FROM %3$s'
                  ' WHERE %1$I IS NOT NULL AND %2$I IS NOT NULL AND %4$I IS NOT NULL',
                  key, body, rel, fp);
END
$$;
COMMENT ON FUNCTION simhash_near_duplicates_source(regclass, name, name, name, float8) IS
    'checks the arguments of simhash_near_duplicates (those of simhash_pairs, body a text column readable by the caller, threshold in (0, 1]) and returns the query of its (key as text, simhash_shingles(body)) rows';

-- The in-memory join over (key text, body text) rows read from a cursor.
CREATE FUNCTION simhash_near_duplicates_cursor(rows refcursor, threshold float8)
    RETURNS TABLE (key_a text, key_b text, similarity float8)
    AS 'MODULE_PATHNAME', 'simhash_near_duplicates_cursor'
    LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION simhash_near_duplicates_cursor(refcursor, float8) IS
    'every pair of the (key text, body text) rows of an open cursor whose exact shingle similarity simhash_similarity(body_a, body_b) is at least threshold, once, as (key_a, key_b) with key_a < key_b in "C" collation; rows with a NULL key or body are skipped, equal keys never paired; joins in memory and fails with 53200 before returning any row when that would need more than work_mem; NOTICEs every simhash.near_duplicates_progress rows and sets';

CREATE FUNCTION simhash_near_duplicates(rel regclass, fp name, body name, key name, threshold float8 DEFAULT 0.8)
    RETURNS TABLE (key_a text, key_b text, similarity float8)
    LANGUAGE plpgsql VOLATILE STRICT
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    src text := @extschema@.simhash_near_duplicates_source(rel, fp, body, key, threshold);
    cur refcursor;
    suffix text := pg_backend_pid() || '_' || substr(md5(random()::text), 1, 8);
    sets text := format('pg_temp.%I', 'simhash_nd_sets_' || suffix);
    toks text := format('pg_temp.%I', 'simhash_nd_prefix_' || suffix);
    cands text := format('pg_temp.%I', 'simhash_nd_cand_' || suffix);
    -- a hair below t: a longer prefix and a looser length filter only add candidates
    t float8 := threshold - 1e-9;
    nrows bigint;
    nsets bigint;
    ntoks bigint;
    ncands bigint;
    step constant bigint := 100000;
    done bigint;
BEGIN
    -- >>> Citus hook (issue 28 item 3): a distributed table joins on its
    -- workers (49_near_duplicates_citus.sql).
    IF @extschema@.simhash_citus_distributed(rel) THEN
        RETURN QUERY SELECT * FROM @extschema@.simhash_near_duplicates_distributed(rel, fp, body, key, threshold);
        RETURN;
    END IF;
    -- <<< Citus hook
    -- In memory when it fits in work_mem: simhash_near_duplicates_cursor
    -- refuses (53200) before it returns any pair when it would not, and the
    -- temporary tables below take over.
    BEGIN
        OPEN cur FOR EXECUTE format(
            'SELECT (%1$I)::text AS k, (%2$I)::text AS b FROM %3$s WHERE %1$I IS NOT NULL AND %2$I IS NOT NULL AND %4$I IS NOT NULL',
            key, body, rel, fp);
        RETURN QUERY SELECT * FROM @extschema@.simhash_near_duplicates_cursor(cur, threshold);
        CLOSE cur;
        RETURN;
    EXCEPTION WHEN out_of_memory THEN
        RAISE NOTICE '%; joining in temporary tables', SQLERRM;
    END;
    -- 1. one row per distinct shingle set, with the keys that have it
    EXECUTE format('CREATE TEMP TABLE %s AS SELECT row_number() OVER (ORDER BY min(k)) AS id, sh,'
                   ' cardinality(sh) AS n, array_agg(k ORDER BY k) AS keys FROM (%s) s GROUP BY sh', sets, src);
    EXECUTE format('SELECT coalesce(sum(cardinality(keys)), 0), count(*) FROM %s', sets) INTO nrows, nsets;
    -- 2. the prefix of each set: its first n - ceil(t n) + 1 hashes, rarest
    -- first, without those no other set has
    EXECUTE format('CREATE TEMP TABLE %1$s AS SELECT id, n, h FROM'
                   ' (SELECT a.id, a.n, a.h, d.df, row_number() OVER (PARTITION BY a.id ORDER BY d.df, a.h) AS rank'
                   '    FROM (SELECT id, n, h FROM %2$s, unnest(sh) AS h) a'
                   '    JOIN (SELECT h, count(*) AS df FROM %2$s, unnest(sh) AS h GROUP BY h) d ON d.h = a.h) r'
                   ' WHERE rank <= n - ceil(%3$s * n)::int + 1 AND df > 1', toks, sets, t);
    EXECUTE format('SELECT count(*) FROM %s', toks) INTO ntoks;
    EXECUTE format('ANALYZE %s', toks);
    -- 3. candidates: prefixes that share a hash, sizes within the length filter
    EXECUTE format('CREATE TEMP TABLE %s AS SELECT row_number() OVER (ORDER BY a, b) AS c, a, b FROM'
                   ' (SELECT DISTINCT x.id AS a, y.id AS b FROM %2$s x JOIN %2$s y ON x.h = y.h AND x.id < y.id'
                   '   WHERE least(x.n, y.n) >= %3$s * greatest(x.n, y.n)) p', cands, toks, t);
    EXECUTE format('SELECT count(*) FROM %s', cands) INTO ncands;
    EXECUTE format('CREATE INDEX ON %s (id)', sets);
    EXECUTE format('ANALYZE %s', sets);
    RAISE NOTICE 'simhash_near_duplicates: % rows, % distinct shingle sets, % shared prefix shingles, % candidate pairs of sets to verify',
        nrows, nsets, ntoks, ncands;
    -- 4. rows sharing one set: similarity 1
    RETURN QUERY EXECUTE format('SELECT a.k, b.k, 1::float8 FROM %s s, unnest(s.keys) a(k), unnest(s.keys) b(k)'
                                ' WHERE cardinality(s.keys) > 1 AND a.k COLLATE "C" < b.k COLLATE "C"', sets);
    -- 5. verify the candidates exactly, a batch at a time
    done := 0;
    WHILE done < ncands LOOP
        RETURN QUERY EXECUTE format(
            'SELECT least(ka COLLATE "C", kb COLLATE "C"), greatest(ka COLLATE "C", kb COLLATE "C"), v.j FROM'
            ' (SELECT x.keys AS xk, y.keys AS yk, @extschema@.simhash_similarity(x.sh, y.sh) AS j'
            '    FROM %1$s c JOIN %2$s x ON x.id = c.a JOIN %2$s y ON y.id = c.b'
            '   WHERE c.c > $1 AND c.c <= $2) v, unnest(v.xk) ka, unnest(v.yk) kb'
            ' WHERE v.j >= $3 AND ka <> kb', cands, sets)
            USING done, done + step, threshold;
        done := done + step;
        IF done < ncands THEN
            RAISE NOTICE 'simhash_near_duplicates: % of % candidate pairs verified', done, ncands;
        END IF;
    END LOOP;
    EXECUTE format('DROP TABLE %s, %s, %s', sets, toks, cands);
END
$$;
COMMENT ON FUNCTION simhash_near_duplicates(regclass, name, name, name, float8) IS
    'every pair of rows of rel whose exact shingle similarity simhash_similarity(body_a, body_b) is at least threshold, once, as (key_a, key_b) with key_a < key_b in "C" collation, with that similarity: candidates by prefix filtering over the shingle sets (none missed), each verified exactly; in memory when that fits in work_mem, else in temporary tables; rows with a NULL fp, body or key are skipped';

-- One survivor per group of verified near-duplicates.
CREATE FUNCTION simhash_near_duplicate_survivors(rel regclass, fp name, body name, key name,
                                                 threshold float8 DEFAULT 0.8, keep_by name DEFAULT NULL,
                                                 keep_highest bool DEFAULT true)
    RETURNS TABLE (duplicate text, survivor text, similarity float8)
    LANGUAGE plpgsql VOLATILE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    src text;
    suffix text := pg_backend_pid() || '_' || substr(md5(random()::text), 1, 8);
    pairs text := format('pg_temp.%I', 'simhash_nds_pairs_' || suffix);
    ranks text := format('pg_temp.%I', 'simhash_nds_ranks_' || suffix);
    rankexpr text;
    cur record;
    st char;
BEGIN
    IF rel IS NULL OR fp IS NULL OR body IS NULL OR key IS NULL OR threshold IS NULL OR keep_highest IS NULL THEN
        RETURN;
    END IF;
    src := @extschema@.simhash_near_duplicates_source(rel, fp, body, key, threshold);
    IF keep_by IS NULL THEN
        rankexpr := format('length(%I)', body);
    ELSE
        IF NOT EXISTS (SELECT FROM pg_attribute
                        WHERE attrelid = rel AND attname = keep_by AND attnum > 0 AND NOT attisdropped) THEN
            RAISE EXCEPTION 'column "%" of relation % does not exist', keep_by, rel
                USING ERRCODE = 'undefined_column';
        END IF;
        IF NOT has_column_privilege(rel, keep_by::text, 'SELECT') THEN
            RAISE EXCEPTION 'permission denied for relation %', rel
                USING ERRCODE = 'insufficient_privilege',
                      HINT = format('simhash_near_duplicate_survivors reads column %I with the caller''s rights.', keep_by);
        END IF;
        rankexpr := format('%I', keep_by);
    END IF;
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
END
$$;
COMMENT ON FUNCTION simhash_near_duplicate_survivors(regclass, name, name, name, float8, name, bool) IS
    'the rows to remove so that one survivor is kept per group of verified near-duplicates (simhash_near_duplicates at threshold): survivors are chosen greedily by keep_by (a column; NULL = length of body), highest first unless keep_highest is false, ties by smallest key; each removed row is returned with the survivor it is verified similar to and their similarity, so unrelated rows are never chained together';
