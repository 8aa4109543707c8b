-- ---------------------------------------------------------------------------
-- The simhash type: a 64-bit fingerprint, 16 hex digits in text form.
-- ---------------------------------------------------------------------------
CREATE TYPE simhash;

CREATE FUNCTION simhash_in(cstring) RETURNS simhash
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_out(simhash) RETURNS cstring
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_recv(internal) RETURNS simhash
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_send(simhash) RETURNS bytea
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE TYPE simhash (
    INPUT = simhash_in,
    OUTPUT = simhash_out,
    RECEIVE = simhash_recv,
    SEND = simhash_send,
    INTERNALLENGTH = 8,
    PASSEDBYVALUE,
    ALIGNMENT = double,
    STORAGE = plain
);
COMMENT ON TYPE simhash IS '64-bit SimHash fingerprint; text form is 16 hex digits';
COMMENT ON FUNCTION simhash_in(cstring) IS
    'input function of simhash: 1 to 16 hex digits, optionally prefixed with 0x';
COMMENT ON FUNCTION simhash_out(simhash) IS 'output function of simhash: 16 lowercase hex digits';
COMMENT ON FUNCTION simhash_recv(internal) IS
    'binary input function of simhash: the 64 bits as an 8-byte big-endian integer';
COMMENT ON FUNCTION simhash_send(simhash) IS
    'binary output function of simhash: the 64 bits as an 8-byte big-endian integer';

-- Casts ----------------------------------------------------------------------
CREATE FUNCTION simhash(bigint) RETURNS simhash
    AS 'MODULE_PATHNAME', 'simhash_from_int8' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash(integer) RETURNS simhash
    AS 'MODULE_PATHNAME', 'simhash_from_int4' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash(smallint) RETURNS simhash
    AS 'MODULE_PATHNAME', 'simhash_from_int2' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_to_bigint(simhash) RETURNS bigint
    AS 'MODULE_PATHNAME', 'simhash_to_int8' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash(bit) RETURNS simhash
    AS 'MODULE_PATHNAME', 'simhash_from_bit' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_to_bit(simhash) RETURNS bit
    AS 'MODULE_PATHNAME', 'simhash_to_bit' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash(numeric) RETURNS simhash
    AS 'MODULE_PATHNAME', 'simhash_from_numeric' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_to_numeric(simhash) RETURNS numeric
    AS 'MODULE_PATHNAME', 'simhash_to_numeric' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE CAST (bigint AS simhash) WITH FUNCTION simhash(bigint);
CREATE CAST (integer AS simhash) WITH FUNCTION simhash(integer);
CREATE CAST (smallint AS simhash) WITH FUNCTION simhash(smallint);
CREATE CAST (simhash AS bigint) WITH FUNCTION simhash_to_bigint(simhash);
CREATE CAST (bit AS simhash) WITH FUNCTION simhash(bit);
CREATE CAST (simhash AS bit) WITH FUNCTION simhash_to_bit(simhash);
CREATE CAST (numeric AS simhash) WITH FUNCTION simhash(numeric);
CREATE CAST (simhash AS numeric) WITH FUNCTION simhash_to_numeric(simhash);

COMMENT ON FUNCTION simhash(bigint) IS 'the simhash with the same 64 bits as a bigint (two''s complement)';
COMMENT ON FUNCTION simhash(integer) IS 'the simhash of an integer widened to bigint: same bits as integer::bigint::simhash';
COMMENT ON FUNCTION simhash(smallint) IS 'the simhash of a smallint widened to bigint: same bits as smallint::bigint::simhash';
COMMENT ON FUNCTION simhash_to_bigint(simhash) IS 'the bigint with the same 64 bits (two''s complement)';
COMMENT ON FUNCTION simhash(bit) IS 'the simhash of a bit(64), most significant bit first';
COMMENT ON FUNCTION simhash_to_bit(simhash) IS 'the 64 bits as bit(64), most significant bit first';
COMMENT ON FUNCTION simhash(numeric) IS 'the simhash of an unsigned decimal 0..18446744073709551615';
COMMENT ON FUNCTION simhash_to_numeric(simhash) IS 'the fingerprint as an unsigned decimal';
COMMENT ON CAST (bigint AS simhash) IS 'explicit: the same 64 bits (two''s complement)';
COMMENT ON CAST (integer AS simhash) IS 'explicit: the integer widened to bigint, then its 64 bits';
COMMENT ON CAST (smallint AS simhash) IS 'explicit: the smallint widened to bigint, then its 64 bits';
COMMENT ON CAST (simhash AS bigint) IS 'explicit: the same 64 bits (two''s complement)';
COMMENT ON CAST (bit AS simhash) IS 'explicit: a bit(64), most significant bit first';
COMMENT ON CAST (simhash AS bit) IS 'explicit: the 64 bits as bit(64), most significant bit first';
COMMENT ON CAST (numeric AS simhash) IS 'explicit: an unsigned decimal 0..18446744073709551615';
COMMENT ON CAST (simhash AS numeric) IS 'explicit: the fingerprint as an unsigned decimal';

-- Comparison: unsigned order, so it agrees with the hex and numeric forms. ---
CREATE FUNCTION simhash_eq(simhash, simhash) RETURNS bool
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION simhash_ne(simhash, simhash) RETURNS bool
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION simhash_lt(simhash, simhash) RETURNS bool
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION simhash_le(simhash, simhash) RETURNS bool
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION simhash_gt(simhash, simhash) RETURNS bool
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION simhash_ge(simhash, simhash) RETURNS bool
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION simhash_cmp(simhash, simhash) RETURNS int4
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION simhash_hash(simhash) RETURNS int4
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION simhash_hash_extended(simhash, bigint) RETURNS bigint
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

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

CREATE OPERATOR = (
    LEFTARG = simhash, RIGHTARG = simhash, PROCEDURE = simhash_eq,
    COMMUTATOR = =, NEGATOR = <>, RESTRICT = eqsel, JOIN = eqjoinsel,
    HASHES, MERGES
);
CREATE OPERATOR <> (
    LEFTARG = simhash, RIGHTARG = simhash, PROCEDURE = simhash_ne,
    COMMUTATOR = <>, NEGATOR = =, RESTRICT = neqsel, JOIN = neqjoinsel
);
CREATE OPERATOR < (
    LEFTARG = simhash, RIGHTARG = simhash, PROCEDURE = simhash_lt,
    COMMUTATOR = >, NEGATOR = >=, RESTRICT = scalarltsel, JOIN = scalarltjoinsel
);
CREATE OPERATOR <= (
    LEFTARG = simhash, RIGHTARG = simhash, PROCEDURE = simhash_le,
    COMMUTATOR = >=, NEGATOR = >, RESTRICT = scalarlesel, JOIN = scalarlejoinsel
);
CREATE OPERATOR > (
    LEFTARG = simhash, RIGHTARG = simhash, PROCEDURE = simhash_gt,
    COMMUTATOR = <, NEGATOR = <=, RESTRICT = scalargtsel, JOIN = scalargtjoinsel
);
CREATE OPERATOR >= (
    LEFTARG = simhash, RIGHTARG = simhash, PROCEDURE = simhash_ge,
    COMMUTATOR = <=, NEGATOR = <, RESTRICT = scalargesel, JOIN = scalargejoinsel
);

COMMENT ON OPERATOR = (simhash, simhash) IS 'equal';
COMMENT ON OPERATOR <> (simhash, simhash) IS 'not equal';
COMMENT ON OPERATOR < (simhash, simhash) IS 'less than, in unsigned order';
COMMENT ON OPERATOR <= (simhash, simhash) IS 'less than or equal, in unsigned order';
COMMENT ON OPERATOR > (simhash, simhash) IS 'greater than, in unsigned order';
COMMENT ON OPERATOR >= (simhash, simhash) IS 'greater than or equal, in unsigned order';

CREATE OPERATOR CLASS simhash_btree_ops
    DEFAULT FOR TYPE simhash USING btree AS
        OPERATOR 1 <, OPERATOR 2 <=, OPERATOR 3 =, OPERATOR 4 >=, OPERATOR 5 >,
        FUNCTION 1 simhash_cmp(simhash, simhash);

CREATE OPERATOR CLASS simhash_hash_ops
    DEFAULT FOR TYPE simhash USING hash AS
        OPERATOR 1 =,
        FUNCTION 1 simhash_hash(simhash),
        FUNCTION 2 simhash_hash_extended(simhash, bigint);
COMMENT ON OPERATOR CLASS simhash_btree_ops USING btree IS
    'default btree operator class of simhash: unsigned order, as the hex and numeric forms sort';
COMMENT ON OPERATOR FAMILY simhash_btree_ops USING btree IS 'btree operators of simhash';
COMMENT ON OPERATOR CLASS simhash_hash_ops USING hash IS
    'default hash operator class of simhash: equality for hash joins, hash indexes and DISTINCT';
COMMENT ON OPERATOR FAMILY simhash_hash_ops USING hash IS 'hash operators of simhash';
