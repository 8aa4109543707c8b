-- simhash 1.0 -> 1.1 (ALTER EXTENSION simhash UPDATE TO '1.1').
--
-- Every change made to the SQL objects of src/sql/*.sql since 1.0 is repeated
-- here; t/090_extension_upgrade.pl checks that an updated 1.0 has exactly the
-- objects, definitions, comments and privileges of a fresh 1.1 install and
-- prints what is missing or extra.
\echo Use "ALTER EXTENSION simhash UPDATE TO '1.1'" to load this file. \quit

-- Casts integer -> simhash and smallint -> simhash (src/sql/00_type.sql).
CREATE FUNCTION simhash(integer) RETURNS simhash
    AS 'MODULE_PATHNAME', 'simhash_from_int4' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash(smallint) RETURNS simhash
    AS 'MODULE_PATHNAME', 'simhash_from_int2' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE CAST (integer AS simhash) WITH FUNCTION simhash(integer);
CREATE CAST (smallint AS simhash) WITH FUNCTION simhash(smallint);
COMMENT ON FUNCTION simhash(integer) IS 'the simhash of an integer widened to bigint: same bits as integer::bigint::simhash';
COMMENT ON FUNCTION simhash(smallint) IS 'the simhash of a smallint widened to bigint: same bits as smallint::bigint::simhash';

-- the runs of the log-structured index
CREATE FUNCTION simhash_index_runs(index regclass,
    OUT kind text, OUT generation bigint, OUT level int, OUT entries bigint, OUT pages bigint)
    RETURNS SETOF record
    AS 'MODULE_PATHNAME' LANGUAGE C STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash_index_runs(regclass) IS
    'the sorted runs of a simhash index (largest first: generation, level, entries per table, pages over all tables), then its pending buffer and NULLs chain, and a flush or merge under way or interrupted';
REVOKE ALL ON FUNCTION simhash_index_runs(regclass) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION simhash_index_runs(regclass) TO pg_stat_scan_tables;
