-- simhash 1.0 -> 1.1 (ALTER EXTENSION simhash UPDATE TO '1.1').
--
-- Every change made to the SQL objects of src/sql/*.sql since 1.0 is repeated
-- here; t/090_extension_upgrade.pl checks that an updated 1.0 has exactly the
-- objects, definitions, comments and privileges of a fresh 1.1 install and
-- prints what is missing or extra.
\echo Use "ALTER EXTENSION simhash UPDATE TO '1.1'" to load this file. \quit

-- the runs of the log-structured index
CREATE FUNCTION simhash_index_runs(index regclass,
    OUT kind text, OUT generation bigint, OUT level int, OUT entries bigint, OUT pages bigint)
    RETURNS SETOF record
    AS 'MODULE_PATHNAME' LANGUAGE C STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash_index_runs(regclass) IS
    'the sorted runs of a simhash index (largest first: generation, level, entries per table, pages over all tables), then its pending buffer and NULLs chain, and a flush or merge under way or interrupted';
REVOKE ALL ON FUNCTION simhash_index_runs(regclass) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION simhash_index_runs(regclass) TO pg_stat_scan_tables;

-- Batch functions: working memory within work_mem (53200 beyond it);
-- simhash_find_all streams its pairs, in no particular order.
COMMENT ON FUNCTION simhash_find_all(simhash[], int) IS
    'every pair of array positions a < b (1-based) whose fingerprints differ in at most max_distance bits, in no particular order (ORDER BY a, b to sort); NULL elements are skipped; fails with 53200 when the work would not fit in work_mem';
COMMENT ON FUNCTION simhash_find_all(bigint[], int) IS
    'every pair of array positions a < b (1-based) whose 64-bit hashes differ in at most max_distance bits, in no particular order (ORDER BY a, b to sort); NULL elements are skipped; fails with 53200 when the work would not fit in work_mem';
COMMENT ON FUNCTION simhash_find_clusters(simhash[], int) IS
    'connected components (two or more positions) of the pairs of simhash_find_all: one row per member, cluster = its smallest position; fails with 53200 when the work would not fit in work_mem';
COMMENT ON FUNCTION simhash_find_clusters(bigint[], int) IS
    'connected components (two or more positions) of the pairs of simhash_find_all: one row per member, cluster = its smallest position; fails with 53200 when the work would not fit in work_mem';
COMMENT ON FUNCTION simhash_cluster(simhash, int) IS
    'window function: near-duplicate cluster id of the row within its partition, the 1-based position of the first row of its connected component (pairs within max_distance bits); NULL for a NULL fp; fails with 53200 when the partition would not fit in work_mem';
COMMENT ON FUNCTION simhash_cluster(bigint, int) IS
    'window function: near-duplicate cluster id of the row within its partition, the 1-based position of the first row of its connected component (pairs within max_distance bits); NULL for a NULL hash; fails with 53200 when the partition would not fit in work_mem';
