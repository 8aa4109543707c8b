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
