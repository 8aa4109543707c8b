/*
 * simhash_near_duplicates_citus.c — the prefixes that the distributed form
 * of simhash_near_duplicates (src/install/49_near_duplicates_citus.sql)
 * repartitions on, and the switch of simhash_near_duplicates to that form
 * on a Citus distributed table.
 *
 * The global order is the fixed one of simhash_prefix_tokens (prefix.h: a
 * 64-bit mix of the hash, the built-in list of frequent shingles last), so
 * every node computes the same prefix of a set by itself, and frequent
 * shingles stay out of the prefixes.  If J(A, B) >= t then |A and B| >=
 * ceil(t |A|), so A and B share an element within the first
 * |A| - ceil(t |A|) + 1 elements of A in that order, and likewise of B.
 */
#include "simhash.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/tuplestore.h"

#include "near_duplicates.h"
#include "prefix.h"

/*
 * simhash_prefix(set bigint[], threshold float8, overlap int, frequent
 * bigint[]): the set's prefix at threshold that holds overlap common hashes,
 * in the global order with the listed hashes last.
 */
PG_FUNCTION_INFO_V1(simhash_prefix);
Datum
simhash_prefix(PG_FUNCTION_ARGS)
{
	ArrayType			  *arr = PG_GETARG_ARRAYTYPE_P(0);
	float8				   threshold = PG_GETARG_FLOAT8(1);
	int32				   overlap = PG_GETARG_INT32(2);
	const sh_prefix_order *order = simhash_frequent_order(fcinfo, 3, "simhash_prefix");
	int					   n;
	size_t				   len;
	const uint64_t		  *v;
	uint64_t			  *prefix;
	Datum				  *elems;

	simhash_check_threshold(threshold);
	if (overlap < 1)
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						errmsg("overlap %d is out of range", overlap),
						errhint("The prefix holds overlap common hashes: 1 or more.")));
	v = simhash_shingle_set_elements(arr, 1, &n);
	simhash_check_shingle_order(v, n, 1);
	prefix = palloc(sizeof(uint64_t) * Max(n, 1));
	SH_CHECK(sh_prefix_ordered(v, (size_t) n, threshold, (size_t) overlap, order, prefix,
							   (size_t) n, &len),
			 "simhash_prefix");
	elems = palloc(sizeof(Datum) * Max(len, 1));
	for (size_t i = 0; i < len; i++)
		elems[i] = Int64GetDatum((int64) prefix[i]);
	PG_RETURN_ARRAYTYPE_P(
		construct_array(elems, (int) len, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
}

/*
 * When rel is a Citus table distributed over workers
 * (simhash_citus_distributed, which looks Citus's catalog up only if it
 * exists), returns simhash_near_duplicates_distributed's pairs as the
 * result of the caller, simhash_near_duplicates, and true; else false, and
 * the caller joins here.  The two SQL functions live in the caller's schema.
 * The arguments have been checked.
 */
bool
nd_citus_join(FunctionCallInfo fcinfo)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	const char	  *schema =
		quote_identifier(get_namespace_name(get_func_namespace(fcinfo->flinfo->fn_oid)));
	Oid	   argtypes[5] = {REGCLASSOID, NAMEOID, NAMEOID, NAMEOID, FLOAT8OID};
	Datum  args[5];
	bool   distributed, isnull;
	Portal portal;

	for (int i = 0; i < 5; i++)
		args[i] = PG_GETARG_DATUM(i);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (SPI_execute_with_args(psprintf("SELECT %s.simhash_citus_distributed($1)", schema), 1,
							  argtypes, args, NULL, true, 1) != SPI_OK_SELECT ||
		SPI_processed != 1)
		elog(ERROR, "simhash_citus_distributed failed");
	distributed =
		DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	if (!distributed)
	{
		SPI_finish();
		return false;
	}
	InitMaterializedSRF(fcinfo, 0);
	portal = SPI_cursor_open_with_args(NULL,
									   psprintf("SELECT key_a, key_b, similarity FROM "
												"%s.simhash_near_duplicates_distributed($1, $2, "
												"$3, $4, $5)",
												schema),
									   5, argtypes, args, NULL, false, 0);
	for (;;)
	{
		SPI_cursor_fetch(portal, true, 1000);
		if (SPI_processed == 0)
			break;
		for (uint64 i = 0; i < SPI_processed; i++)
		{
			Datum values[3];
			bool  nulls[3];

			for (int c = 0; c < 3; c++)
				values[c] =
					SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, c + 1, &nulls[c]);
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		}
		SPI_freetuptable(SPI_tuptable);
		CHECK_FOR_INTERRUPTS();
	}
	SPI_cursor_close(portal);
	SPI_finish();
	return true;
}
