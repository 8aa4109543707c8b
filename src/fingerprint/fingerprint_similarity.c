/*
 * fingerprint_similarity.c — exact shingle similarity beside the fingerprint:
 * simhash_similarity(text, text, ...), simhash_shingles(text, ...) and
 * simhash_similarity(bigint[], bigint[]).  The shingles are those that
 * simhash(text) votes with (the core builds both on one code path, text.cpp).
 */
#include "simhash.h"

#include "catalog/pg_type.h"
#include "utils/array.h"
#include "miscadmin.h"
#include "utils/builtins.h"

#include "text.h"

/* simhash_similarity(a text, b text, shingle, tokens, casefold). */
PG_FUNCTION_INFO_V1(simhash_similarity_text);
Datum
simhash_similarity_text(PG_FUNCTION_ARGS)
{
	sh_text_options opts;
	size_t			alen, blen;
	char		   *a, *b;
	double			j = 0;

	size_t	  max_hashes = (size_t) work_mem * 1024 / sizeof(uint64_t);
	sh_status st;

	simhash_text_options(fcinfo, 2, &opts);
	a = simhash_text_to_utf8(PG_GETARG_TEXT_PP(0), &alen);
	b = simhash_text_to_utf8(PG_GETARG_TEXT_PP(1), &blen);
	/* the shingle sets of the two texts within work_mem (8 bytes a shingle) */
	st = sh_text_similarity_bounded(a, alen, b, blen, &opts, max_hashes, &j);
	if (st == SH_ERR_RANGE)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("simhash_similarity: the shingle sets of texts of %zu and %zu bytes do not "
						"fit in work_mem (%d kB)",
						alen, blen, work_mem),
				 errhint(
					 "Raise work_mem: each text may have up to work_mem / 32 distinct shingles.")));
	SH_CHECK(st, "simhash_similarity");
	PG_RETURN_FLOAT8(j);
}

/*
 * simhash_shingles(doc text, shingle, tokens, casefold): the distinct shingle
 * hashes, ascending as unsigned 64-bit numbers.  A first guess of the buffer
 * (English averages about six bytes a word) is retried once at the exact
 * size when the text has more shingles.
 */
PG_FUNCTION_INFO_V1(simhash_shingles);
Datum
simhash_shingles(PG_FUNCTION_ARGS)
{
	sh_text_options opts;
	size_t			len, cap, n = 0;
	char		   *utf8;
	uint64_t	   *buf;
	sh_status		st;
	Datum		   *elems;

	utf8 = simhash_text_arguments(fcinfo, &opts, &len);
	cap = len / 4 + 16;
	buf = palloc_extended(sizeof(uint64_t) * cap, MCXT_ALLOC_HUGE);
	st = sh_text_shingle_set(utf8, len, &opts, buf, cap, &n);
	if (st == SH_ERR_RANGE && n > cap)
	{
		pfree(buf);
		cap = n;
		buf = palloc_extended(sizeof(uint64_t) * cap, MCXT_ALLOC_HUGE);
		st = sh_text_shingle_set(utf8, len, &opts, buf, cap, &n);
	}
	SH_CHECK(st, "simhash_shingles");
	elems = palloc_extended(sizeof(Datum) * Max(n, 1), MCXT_ALLOC_HUGE);
	for (size_t i = 0; i < n; i++)
		elems[i] = Int64GetDatum((int64) buf[i]);
	PG_RETURN_ARRAYTYPE_P(
		construct_array(elems, (int) n, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
}

/* The elements of a shingle-set argument, its shape checked (see simhash.h). */
const uint64 *
simhash_shingle_set_elements(ArrayType *arr, int argno, int *n)
{
	if (ARR_NDIM(arr) == 0)
	{
		*n = 0;
		return NULL;
	}
	if (ARR_NDIM(arr) != 1 || ARR_HASNULL(arr) || ARR_ELEMTYPE(arr) != INT8OID)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("shingle set %d must be a one-dimensional bigint array without NULLs",
						argno),
				 errhint("Pass arrays made by simhash_shingles.")));
	*n = ArrayGetNItems(ARR_NDIM(arr), ARR_DIMS(arr));
	/* no NULLs: the data follows the fixed header (ARR_DATA_PTR warns under -Wsign-compare) */
	return (const uint64 *) ((const char *) arr + ARR_OVERHEAD_NONULLS(1));
}

/* The first len elements ascend strictly as unsigned numbers (see simhash.h). */
void
simhash_check_shingle_order(const uint64 *v, int len, int argno)
{
	for (int i = 1; i < len; i++)
		if (v[i - 1] >= v[i])
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("shingle set %d is not ascending and distinct at element %d (%lld "
							"after %lld)",
							argno, i + 1, (long long) (int64) v[i], (long long) (int64) v[i - 1]),
					 errhint("Pass arrays made by simhash_shingles: distinct hashes, ascending as "
							 "unsigned 64-bit numbers.")));
}

/*
 * The elements of a shingle-set argument, checked whole: the form
 * simhash_shingles returns, so a merge counts the intersection exactly.
 */
static const uint64_t *
shingle_set_arg(ArrayType *arr, int argno, size_t *n)
{
	int				count;
	const uint64_t *v = simhash_shingle_set_elements(arr, argno, &count);

	simhash_check_shingle_order(v, count, argno);
	*n = (size_t) count;
	return v;
}

/* simhash_similarity(a bigint[], b bigint[]): Jaccard of two simhash_shingles sets. */
PG_FUNCTION_INFO_V1(simhash_similarity_sets);
Datum
simhash_similarity_sets(PG_FUNCTION_ARGS)
{
	size_t			na, nb;
	const uint64_t *a = shingle_set_arg(PG_GETARG_ARRAYTYPE_P(0), 1, &na);
	const uint64_t *b = shingle_set_arg(PG_GETARG_ARRAYTYPE_P(1), 2, &nb);

	PG_RETURN_FLOAT8(sh_sorted_jaccard(a, na, b, nb));
}
