
CREATE FUNCTION simhash_index_runs(index regclass,
    OUT kind text, OUT generation bigint, OUT level int, OUT entries bigint, OUT pages bigint)
    RETURNS SETOF record
    AS 'MODULE_PATHNAME' LANGUAGE C STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash_index_runs(regclass) IS
    'the sorted runs of a simhash index (largest first: generation, level, entries per table, pages over all tables), then its pending buffer and NULLs chain, and a flush or merge under way or interrupted';
REVOKE ALL ON FUNCTION simhash_index_runs(regclass) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION simhash_index_runs(regclass) TO pg_stat_scan_tables;
