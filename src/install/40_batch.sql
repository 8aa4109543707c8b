-- ---------------------------------------------------------------------------
-- Batch analytics: every pair within k bits, and their clusters (connected
-- components), computed in memory by sorted permuted tables.  The number of
-- blocks is chosen automatically from the input size and distance.
-- ---------------------------------------------------------------------------
CREATE FUNCTION simhash_find_all(fps simhash[], max_distance int)
    RETURNS TABLE (a int, b int, distance int)
    AS 'MODULE_PATHNAME', 'simhash_find_all_array'
    LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE ROWS 100;
CREATE FUNCTION simhash_find_all(fps bigint[], max_distance int)
    RETURNS TABLE (a int, b int, distance int)
    AS 'MODULE_PATHNAME', 'simhash_find_all_array'
    LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE ROWS 100;
COMMENT ON FUNCTION simhash_find_all(simhash[], int) IS
    'every pair of array positions a < b (1-based) whose fingerprints differ in at most max_distance bits, in no particular order (ORDER BY a, b to sort); NULL elements are skipped; fails with 53200 when the work would not fit in work_mem';
COMMENT ON FUNCTION simhash_find_all(bigint[], int) IS
    'every pair of array positions a < b (1-based) whose 64-bit hashes differ in at most max_distance bits, in no particular order (ORDER BY a, b to sort); NULL elements are skipped; fails with 53200 when the work would not fit in work_mem';

CREATE FUNCTION simhash_find_clusters(fps simhash[], max_distance int)
    RETURNS TABLE (cluster int, member int)
    AS 'MODULE_PATHNAME', 'simhash_find_clusters_array'
    LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE ROWS 100;
CREATE FUNCTION simhash_find_clusters(fps bigint[], max_distance int)
    RETURNS TABLE (cluster int, member int)
    AS 'MODULE_PATHNAME', 'simhash_find_clusters_array'
    LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE ROWS 100;
COMMENT ON FUNCTION simhash_find_clusters(simhash[], int) IS
    'connected components (two or more positions) of the pairs of simhash_find_all: one row per member, cluster = its smallest position; fails with 53200 when the work would not fit in work_mem';
COMMENT ON FUNCTION simhash_find_clusters(bigint[], int) IS
    'connected components (two or more positions) of the pairs of simhash_find_all: one row per member, cluster = its smallest position; fails with 53200 when the work would not fit in work_mem';

CREATE FUNCTION simhash_cluster(fp simhash, max_distance int) RETURNS bigint
    AS 'MODULE_PATHNAME', 'simhash_cluster_window'
    LANGUAGE C WINDOW IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION simhash_cluster(fp bigint, max_distance int) RETURNS bigint
    AS 'MODULE_PATHNAME', 'simhash_cluster_window'
    LANGUAGE C WINDOW IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION simhash_cluster(simhash, int) IS
    'window function: near-duplicate cluster id of the row within its partition, the 1-based position of the first row of its connected component (pairs within max_distance bits); NULL for a NULL fp; fails with 53200 when the partition would not fit in work_mem';
COMMENT ON FUNCTION simhash_cluster(bigint, int) IS
    'window function: near-duplicate cluster id of the row within its partition, the 1-based position of the first row of its connected component (pairs within max_distance bits); NULL for a NULL hash; fails with 53200 when the partition would not fit in work_mem';
