/*
 * simhash_type.c — the simhash type: text I/O, binary I/O, casts,
 * comparison support and Hamming distance.
 */
#include "simhash.h"

#include "libpq/pqformat.h"
#include "utils/builtins.h"
#include "utils/numeric.h"
#include "utils/varbit.h"
#include "common/hashfn.h"

/* ---- text and binary I/O ------------------------------------------------ */

/* Text input: 1 to 16 hex digits, optionally prefixed with 0x. */
PG_FUNCTION_INFO_V1(simhash_in);
Datum
simhash_in(PG_FUNCTION_ARGS)
{
	char	*str = PG_GETARG_CSTRING(0);
	uint64_t value;

	if (sh_parse_hex(str, strlen(str), &value) != SH_OK)
	{
		/*
		 * simhash('some words') with an untyped literal is read as a cast to
		 * the type, not as a fingerprint of the text: say how to ask for the
		 * fingerprint, quoting the input when it is short and has no quote
		 * (not for input made of hex digits only, a mistyped simhash).
		 */
		const char *shown = strlen(str) <= 40 && strchr(str, '\'') == NULL ? str : "...";

		if (strspn(str, "0123456789abcdefABCDEFxX") == strlen(str))
			ereport(ERROR, (errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
							errmsg("invalid input syntax for type %s: \"%s\"", "simhash", str),
							errhint("A simhash is 1 to 16 hexadecimal digits, optionally prefixed "
									"with 0x.")));
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
				 errmsg("invalid input syntax for type %s: \"%s\"", "simhash", str),
				 errhint("A simhash is 1 to 16 hexadecimal digits, optionally prefixed with 0x. "
						 "To fingerprint text, give it the type text: simhash(text '%s') or "
						 "simhash('%s'::text).",
						 shown, shown)));
	}
	PG_RETURN_SIMHASH(value);
}

/* Text output: 16 lowercase hex digits. */
PG_FUNCTION_INFO_V1(simhash_out);
Datum
simhash_out(PG_FUNCTION_ARGS)
{
	char *buf = palloc(17);

	sh_format_hex(PG_GETARG_SIMHASH(0), buf);
	PG_RETURN_CSTRING(buf);
}

/* Binary input: the 8 bytes of a bigint, network order. */
PG_FUNCTION_INFO_V1(simhash_recv);
Datum
simhash_recv(PG_FUNCTION_ARGS)
{
	StringInfo buf = (StringInfo) PG_GETARG_POINTER(0);

	PG_RETURN_SIMHASH((simhash) pq_getmsgint64(buf));
}

/* Binary output: the 8 bytes of a bigint, network order. */
PG_FUNCTION_INFO_V1(simhash_send);
Datum
simhash_send(PG_FUNCTION_ARGS)
{
	StringInfoData buf;

	pq_begintypsend(&buf);
	pq_sendint64(&buf, (int64) PG_GETARG_SIMHASH(0));
	PG_RETURN_BYTEA_P(pq_endtypsend(&buf));
}

/* ---- casts ---------------------------------------------------------------- */

/* Cast bigint -> simhash: the same 64 bits. */
PG_FUNCTION_INFO_V1(simhash_from_int8);
Datum
simhash_from_int8(PG_FUNCTION_ARGS)
{
	PG_RETURN_SIMHASH((simhash) PG_GETARG_INT64(0));
}

/*
 * integer and smallint widen to bigint first (sign extension), so that
 * x::simhash has the same bits as x::bigint::simhash for every value: a
 * client that binds a small number as int2 or int4 gets what int8 gives.
 */
PG_FUNCTION_INFO_V1(simhash_from_int4);
Datum
simhash_from_int4(PG_FUNCTION_ARGS)
{
	PG_RETURN_SIMHASH((simhash) (int64) PG_GETARG_INT32(0));
}

PG_FUNCTION_INFO_V1(simhash_from_int2);
Datum
simhash_from_int2(PG_FUNCTION_ARGS)
{
	PG_RETURN_SIMHASH((simhash) (int64) PG_GETARG_INT16(0));
}

/* Cast simhash -> bigint: the same 64 bits (two's complement). */
PG_FUNCTION_INFO_V1(simhash_to_int8);
Datum
simhash_to_int8(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT64((int64) PG_GETARG_SIMHASH(0));
}

/* Cast simhash -> bit(64). */
PG_FUNCTION_INFO_V1(simhash_to_bit);
Datum
simhash_to_bit(PG_FUNCTION_ARGS)
{
	simhash value = PG_GETARG_SIMHASH(0);
	int		len = VARBITTOTALLEN(64);
	VarBit *result = (VarBit *) palloc0(len);
	bits8  *p = VARBITS(result);

	SET_VARSIZE(result, len);
	VARBITLEN(result) = 64;
	/* Most significant bit first, as bit(64) prints. */
	for (int i = 0; i < 8; i++)
		p[i] = (bits8) (value >> (56 - 8 * i));
	PG_RETURN_VARBIT_P(result);
}

/* Cast bit(64) -> simhash; any other length is an error. */
PG_FUNCTION_INFO_V1(simhash_from_bit);
Datum
simhash_from_bit(PG_FUNCTION_ARGS)
{
	VarBit *arg = PG_GETARG_VARBIT_P(0);
	bits8  *p = VARBITS(arg);
	simhash value = 0;

	if (VARBITLEN(arg) != 64)
		ereport(ERROR, (errcode(ERRCODE_STRING_DATA_LENGTH_MISMATCH),
						errmsg("cannot cast bit string of length %d to simhash", VARBITLEN(arg)),
						errhint("A simhash has exactly 64 bits.")));
	for (int i = 0; i < 8; i++)
		value = (value << 8) | p[i];
	PG_RETURN_SIMHASH(value);
}

/* Cast simhash -> numeric: the unsigned value, 0 .. 2^64 - 1. */
PG_FUNCTION_INFO_V1(simhash_to_numeric);
Datum
simhash_to_numeric(PG_FUNCTION_ARGS)
{
	char buf[24];

	snprintf(buf, sizeof(buf), UINT64_FORMAT, (uint64) PG_GETARG_SIMHASH(0));
	PG_RETURN_DATUM(DirectFunctionCall3(numeric_in, CStringGetDatum(buf),
										ObjectIdGetDatum(InvalidOid), Int32GetDatum(-1)));
}

/* Cast numeric -> simhash: an integer from 0 to 2^64 - 1. */
PG_FUNCTION_INFO_V1(simhash_from_numeric);
Datum
simhash_from_numeric(PG_FUNCTION_ARGS)
{
	Numeric num = PG_GETARG_NUMERIC(0);
	char   *str = DatumGetCString(DirectFunctionCall1(numeric_out, NumericGetDatum(num)));
	char   *end;
	unsigned long long value;

	/* Only plain unsigned integers in 0 .. 2^64-1 are fingerprints. */
	errno = 0;
	value = strtoull(str, &end, 10);
	if (str[0] == '-' || !isdigit((unsigned char) str[0]) || *end != '\0' || errno == ERANGE)
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("numeric value %s is out of range for type simhash", str),
				 errhint("A simhash as a number is an integer from 0 to 18446744073709551615.")));
	PG_RETURN_SIMHASH((simhash) value);
}

/* ---- comparison (unsigned order, so numeric and hex order agree) --------- */

/* -1, 0 or 1 as a is below, equal to or above b, unsigned. */
static inline int
simhash_cmp_internal(simhash a, simhash b)
{
	return (a > b) - (a < b);
}

#define SIMHASH_CMP_FN(name, expr) \
	PG_FUNCTION_INFO_V1(name); \
	Datum name(PG_FUNCTION_ARGS) \
	{ \
		int c = simhash_cmp_internal(PG_GETARG_SIMHASH(0), PG_GETARG_SIMHASH(1)); \
		PG_RETURN_BOOL(expr); \
	}

SIMHASH_CMP_FN(simhash_eq, c == 0)
SIMHASH_CMP_FN(simhash_ne, c != 0)
SIMHASH_CMP_FN(simhash_lt, c < 0)
SIMHASH_CMP_FN(simhash_le, c <= 0)
SIMHASH_CMP_FN(simhash_gt, c > 0)
SIMHASH_CMP_FN(simhash_ge, c >= 0)

/* btree support function 1 of simhash_btree_ops. */
PG_FUNCTION_INFO_V1(simhash_cmp);
Datum
simhash_cmp(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT32(simhash_cmp_internal(PG_GETARG_SIMHASH(0), PG_GETARG_SIMHASH(1)));
}

/* hash support function 1 of simhash_hash_ops. */
PG_FUNCTION_INFO_V1(simhash_hash);
Datum
simhash_hash(PG_FUNCTION_ARGS)
{
	/* Same as hashint8, so a simhash and its bigint cast hash alike. */
	return DirectFunctionCall1(hashint8, PG_GETARG_DATUM(0));
}

/* hash support function 2 of simhash_hash_ops (seeded). */
PG_FUNCTION_INFO_V1(simhash_hash_extended);
Datum
simhash_hash_extended(PG_FUNCTION_ARGS)
{
	return DirectFunctionCall2(hashint8extended, PG_GETARG_DATUM(0), PG_GETARG_DATUM(1));
}

/* ---- Hamming distance ----------------------------------------------------- */

/* simhash_distance(simhash, simhash) and the <~> operator. */
PG_FUNCTION_INFO_V1(simhash_distance);
Datum
simhash_distance(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT32(simhash_hamming(PG_GETARG_SIMHASH(0), PG_GETARG_SIMHASH(1)));
}

/* simhash_distance(bigint, bigint) and <~> on bigint. */
PG_FUNCTION_INFO_V1(simhash_distance_int8);
Datum
simhash_distance_int8(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT32(simhash_hamming((uint64) PG_GETARG_INT64(0), (uint64) PG_GETARG_INT64(1)));
}
