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
