-- simhash_pairs through a simhash index on the fingerprint column
-- (src/am/pairs.c): its rows against a brute-force self-join on <~> (every
-- pair of rows compared) and against the join path (the same table seen
-- through a view, which has no index), both ways with EXCEPT ALL, so a pair
-- dropped or returned twice shows as missing or extra.
--
-- 1200 rows: 300 random centres, each with copies 1, 2 and 3..6 bits away,
-- exact duplicates, two rows with equal keys, NULL fingerprints and keys.
CREATE TABLE pi (k text, fp simhash, n int, c char(8));
INSERT INTO pi
SELECT format('r%s', lpad(i::text, 5, '0')), v::simhash, i, 'c' || (i % 1000)
  FROM (SELECT i, (hashint8(i / 4)::bigint << 32 | (hashint8(-(i / 4))::bigint & 4294967295))
                  # CASE i % 4 WHEN 0 THEN 0::bigint
                               WHEN 1 THEN (1::bigint << (abs(hashint4(i)) % 64))
                               WHEN 2 THEN (3::bigint << (abs(hashint4(i)) % 63))
                               ELSE ((1::bigint << (i % 4 + 2)) - 1) << (abs(hashint4(i)) % 58) END AS v
          FROM generate_series(1, 1200) i) s;
INSERT INTO pi SELECT 'dup' || k, fp, n + 10000, c FROM pi WHERE n % 97 = 0;
INSERT INTO pi VALUES ('same', '0f0f0f0f0f0f0f0f', 20001, 'x'), ('same', '0f0f0f0f0f0f0f0e', 20002, 'y'),
                      ('nullfp', NULL, 20003, 'z'), (NULL, '0f0f0f0f0f0f0f0c', 20004, 'w');
CREATE VIEW pi_view AS SELECT * FROM pi;

-- The brute-force answer of radius r, key column key.
CREATE FUNCTION pi_naive(key name, r int) RETURNS TABLE (key_a text, key_b text, distance int)
LANGUAGE plpgsql AS $$
BEGIN
    RETURN QUERY EXECUTE format(
        'SELECT a.%1$I::text, b.%1$I::text, (a.fp <~> b.fp) FROM pi a, pi b'
        ' WHERE a.%1$I::text COLLATE "C" < b.%1$I::text COLLATE "C" AND (a.fp <~> b.fp) <= %2$s',
        key, r);
END
$$;

-- For each radius 0..bits of the index: the index path (simhash_pairs,
-- which must choose the index, and simhash_pairs_index) and the join path
-- against the brute force; 0 missing and 0 extra for each.
CREATE FUNCTION pi_compare(idx regclass, key name DEFAULT 'k')
RETURNS TABLE (radius int, via text, missing bigint, extra bigint, pairs bigint)
LANGUAGE plpgsql AS $$
DECLARE
    bits int := (SELECT coalesce((SELECT option_value::int FROM pg_options_to_table(c.reloptions)
                                   WHERE option_name = 'bits'), 3)
                   FROM pg_class c WHERE c.oid = idx);
BEGIN
    CREATE TEMP TABLE naive_all AS SELECT * FROM pi_naive(key, bits);
    FOR r IN 0 .. bits LOOP
        IF simhash_pairs_index_for('pi', 'fp', r) IS DISTINCT FROM idx THEN
            RAISE EXCEPTION 'simhash_pairs would not read index % at radius %', idx, r;
        END IF;
        CREATE TEMP TABLE naive AS SELECT * FROM naive_all n WHERE n.distance <= r;
        CREATE TEMP TABLE got AS SELECT 'simhash_pairs' AS via, * FROM simhash_pairs('pi', 'fp', key, r)
            UNION ALL SELECT 'simhash_pairs_index', * FROM simhash_pairs_index(idx, key, r)
            UNION ALL SELECT 'join path', * FROM simhash_pairs('pi_view', 'fp', key, r);
        RETURN QUERY
            SELECT r, v.via,
                   (SELECT count(*) FROM (SELECT * FROM naive EXCEPT ALL
                                          SELECT g.key_a, g.key_b, g.distance FROM got g WHERE g.via = v.via) s),
                   (SELECT count(*) FROM (SELECT g.key_a, g.key_b, g.distance FROM got g WHERE g.via = v.via
                                          EXCEPT ALL SELECT * FROM naive) s),
                   (SELECT count(*) FROM got g WHERE g.via = v.via)
              FROM (VALUES ('simhash_pairs'), ('simhash_pairs_index'), ('join path')) v(via);
        DROP TABLE naive, got;
    END LOOP;
    DROP TABLE naive_all;
END
$$;

-- Default layout (bits 3, blocks 4): one run, then pending rows too.
CREATE INDEX pi_fp ON pi USING simhash (fp);
SELECT * FROM pi_compare('pi_fp');
INSERT INTO pi SELECT 'new' || k, (fp::bigint # (1::bigint << (n % 64)))::simhash, n + 30000, c
  FROM pi WHERE n % 5 = 0 AND n < 1200;
SELECT kind, entries FROM simhash_index_runs('pi_fp') WHERE kind = 'pending';
SELECT * FROM pi_compare('pi_fp') WHERE radius IN (1, 3);
-- other key types: their text is the cast's, as the join path's (char(n)
-- loses its padding, so 'c1' of two rows is one key: never paired)
SELECT * FROM pi_compare('pi_fp', 'n') WHERE radius = 3;
SELECT * FROM pi_compare('pi_fp', 'c') WHERE radius = 3;
-- deleted rows (still in the index until VACUUM), then VACUUM
DELETE FROM pi WHERE n % 7 = 0;
SELECT * FROM pi_compare('pi_fp') WHERE radius = 3;
VACUUM pi;
SELECT * FROM pi_compare('pi_fp') WHERE radius IN (0, 3);
DROP INDEX pi_fp;

-- Other layouts: the first-table rule and the groups follow the index's.
CREATE INDEX pi_b2 ON pi USING simhash (fp) WITH (bits = 2, blocks = 5);
SELECT * FROM pi_compare('pi_b2');
DROP INDEX pi_b2;
CREATE INDEX pi_b4 ON pi USING simhash (fp) WITH (bits = 4, blocks = 6, pending_pages = 1);
INSERT INTO pi SELECT 'more' || k, (fp::bigint # (5::bigint << (n % 60)))::simhash, n + 40000, c
  FROM pi WHERE n % 3 = 0 AND n < 1200;
SELECT count(*) > 1 AS several_runs FROM simhash_index_runs('pi_b4') WHERE kind = 'run';
SELECT * FROM pi_compare('pi_b4');
DROP INDEX pi_b4;
CREATE INDEX pi_b1 ON pi USING simhash (fp) WITH (bits = 1);
SELECT * FROM pi_compare('pi_b1');

-- No index path: radius above the index's bits, a partial index, an index
-- on an expression or on more columns, a view, RLS for the caller.
SELECT simhash_pairs_index_for('pi', 'fp', 2) AS radius_above_bits;
SELECT simhash_pairs_index('pi_b1', 'k', 2);
DROP INDEX pi_b1;
CREATE INDEX pi_part ON pi USING simhash (fp) WHERE n > 100;
CREATE INDEX pi_expr ON pi USING simhash ((fp::bigint # 1));
SELECT simhash_pairs_index_for('pi', 'fp', 3) AS partial_or_expression;
SELECT simhash_pairs_index('pi_part', 'k', 3);
-- a DEBUG1 line says which path and why
SET client_min_messages = debug1;
SELECT simhash_pairs_index_for('pi_view', 'fp', 3) AS view;
SELECT simhash_pairs_index_for('pi', 'fp', 3) AS partial;
RESET client_min_messages;
DROP INDEX pi_part, pi_expr;
CREATE INDEX pi_fp ON pi USING simhash (fp);
CREATE ROLE regress_pi_reader;
-- without SELECT on the columns: no index named, and no pairs (42501)
SET ROLE regress_pi_reader;
SELECT simhash_pairs_index_for('pi', 'fp', 3) AS no_privilege;
SELECT simhash_pairs_index('pi_fp', 'k', 3);
RESET ROLE;
GRANT SELECT ON pi TO regress_pi_reader;
ALTER TABLE pi ENABLE ROW LEVEL SECURITY;
CREATE POLICY pi_some ON pi FOR SELECT USING (n % 2 = 0);
SET ROLE regress_pi_reader;
SELECT simhash_pairs_index_for('pi', 'fp', 3) AS rls;
SELECT simhash_pairs_index('pi_fp', 'k', 3);
-- the join path, under the policy (the brute force is too)
SELECT (SELECT count(*) FROM (SELECT * FROM simhash_pairs('pi', 'fp', 'k', 3)
                              EXCEPT ALL SELECT * FROM pi_naive('k', 3)) s) AS extra,
       (SELECT count(*) FROM (SELECT * FROM pi_naive('k', 3)
                              EXCEPT ALL SELECT * FROM simhash_pairs('pi', 'fp', 'k', 3)) s) AS missing,
       (SELECT count(*) FROM pi) AS rows_seen;
RESET ROLE;
ALTER TABLE pi DISABLE ROW LEVEL SECURITY;
DROP POLICY pi_some ON pi;
REVOKE SELECT ON pi FROM regress_pi_reader;
DROP ROLE regress_pi_reader;

-- A group larger than work_mem: 400 exact duplicates with long keys (their
-- texts pass 64kB).  The index path refuses (53200) before any pair, and
-- simhash_pairs then joins: the same rows as the brute force.
INSERT INTO pi SELECT 'big' || repeat('x', 200) || i, 'a5a5a5a5a5a5a5a5', 50000 + i, 'b'
  FROM generate_series(1, 400) i;
SET work_mem = '64kB';
SELECT count(*) FROM simhash_pairs_index('pi_fp', 'k', 3);
-- simhash_pairs still picks the index, then joins
SELECT simhash_pairs_index_for('pi', 'fp', 3) AS index;
CREATE TEMP TABLE big AS SELECT * FROM simhash_pairs('pi', 'fp', 'k', 3);
RESET work_mem;
CREATE TEMP TABLE big_naive AS SELECT * FROM pi_naive('k', 3);
SELECT (SELECT count(*) FROM (SELECT * FROM big EXCEPT ALL SELECT * FROM big_naive) s) AS extra,
       (SELECT count(*) FROM (SELECT * FROM big_naive EXCEPT ALL SELECT * FROM big) s) AS missing,
       (SELECT count(*) FROM big) AS pairs;
-- under the default work_mem the index path takes the group
SELECT simhash_pairs_index_for('pi', 'fp', 3) AS index;
SELECT (SELECT count(*) FROM (SELECT * FROM simhash_pairs('pi', 'fp', 'k', 3) EXCEPT ALL SELECT * FROM big_naive) s) AS extra,
       (SELECT count(*) FROM (SELECT * FROM big_naive EXCEPT ALL SELECT * FROM simhash_pairs('pi', 'fp', 'k', 3)) s) AS missing;

DROP TABLE pi CASCADE;
DROP FUNCTION pi_naive(name, int), pi_compare(regclass, name);
