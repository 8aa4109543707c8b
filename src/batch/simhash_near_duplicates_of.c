/*
 * simhash_near_duplicates_of.c — the index side of the online lookup
 * simhash_near_duplicates_of (src/sql/48_near_duplicates_of.sql):
 *
 *   simhash_prefix_tokens(doc, threshold, frequent)
 *                              the tokens a GIN index stores for a row
 *                              (IMMUTABLE: the index expression)
 *   simhash_prefix_probe(doc, threshold, frequent)
 *                              the tokens a lookup probes with
 *   simhash_prefix_index_for(rel, body, threshold, prefix_fn)
 *                              the GIN index on rel that serves a lookup
 *   simhash_prefix_match(a, b) a &&& b: the arrays share two elements, and
 *                              the GIN support of opclass simhash_prefix_ops
 *                              that answers it from the index
 *
 * The tokens come from the core (src/core/search/prefix.h): the prefix of the
 * doc's distinct shingle set (the tokenizer of simhash(text) with its
 * default options, the sets simhash_similarity compares) in one fixed global
 * order (frequent shingles listed in the index expression last), tagged with
 * the set's size class.
 */
#include "simhash.h"

#include <math.h>

#include "access/genam.h"
#include "access/gin.h"
#include "access/relation.h"
#include "catalog/pg_am.h"
#include "commands/defrem.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_type.h"
#include "nodes/makefuncs.h"
#include "nodes/primnodes.h"
#include "nodes/value.h"
#include "funcapi.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#include "near_duplicates.h"
#include "prefix.h"
#include "text.h"

/*
 * The distinct shingle hashes of doc under simhash(text)'s default options
 * (palloc'd, *n of them).  With bounded set, fails with 53200 first when the
 * doc's buffers could pass work_mem.
 */
static uint64_t *
doc_shingles(text *doc, bool bounded, size_t *n)
{
	sh_text_options opts;
	size_t			len, cap;
	char		   *utf8;
	uint64_t	   *buf;
	sh_status		st;

	sh_text_options_default(&opts);
	utf8 = simhash_text_to_utf8(doc, &len);
	/* about one shingle per word; English averages six bytes a word */
	cap = len / 4 + 16;
	if (bounded)
	{
		/* the set, its ordered copy (16 bytes a hash) and the probe tokens */
		double need_kb = (double) cap * (sizeof(uint64_t) * 4) / 1024.0;

		if (need_kb > (double) work_mem)
			ereport(ERROR,
					(errcode(ERRCODE_OUT_OF_MEMORY),
					 errmsg("a lookup of a document of %zu bytes may need %.0f kB of memory, more "
							"than work_mem (%d kB)",
							len, ceil(need_kb), work_mem),
					 errhint("Raise work_mem to at least %.0f kB for this lookup (SET LOCAL "
							 "work_mem), or look up a shorter document.",
							 ceil(need_kb))));
	}
	buf = palloc_extended(sizeof(uint64_t) * cap, MCXT_ALLOC_HUGE);
	st = sh_text_shingle_set(utf8, len, &opts, buf, cap, n);
	if (st == SH_ERR_RANGE && *n > cap)
	{
		pfree(buf);
		cap = *n;
		buf = palloc_extended(sizeof(uint64_t) * cap, MCXT_ALLOC_HUGE);
		st = sh_text_shingle_set(utf8, len, &opts, buf, cap, n);
	}
	SH_CHECK(st, "simhash_prefix_tokens");
	return buf;
}

/* A stored row and a probe must share this many tokens (src/core/search/prefix.h). */
#define SIMHASH_PREFIX_COMMON 2

static int
int64_cmp(const void *a, const void *b)
{
	int64 x = *(const int64 *) a, y = *(const int64 *) b;

	return (x > y) - (x < y);
}

static ArrayType *
token_array(const uint64_t *tokens, size_t n)
{
	Datum *elems = palloc_extended(sizeof(Datum) * Max(n, 1), MCXT_ALLOC_HUGE);

	for (size_t i = 0; i < n; i++)
		elems[i] = Int64GetDatum((int64) tokens[i]);
	return construct_array(elems, (int) n, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE);
}

/*
 * The order of a call's list of frequent shingles (argument argno: bigint[],
 * most frequent first), built once per list and kept in fn_extra: an index
 * build or a scan passes the same list for every row.  what names the SQL
 * function in an error.  simhash_prefix (the Citus join's) uses it too.
 */
typedef struct order_cache
{
	ArrayType	   *list; /* a copy of the list it was built from */
	sh_prefix_order order;
} order_cache;

const sh_prefix_order *
simhash_frequent_order(FunctionCallInfo fcinfo, int argno, const char *what)
{
	ArrayType	 *arr = PG_GETARG_ARRAYTYPE_P(argno);
	order_cache	 *cache = (order_cache *) fcinfo->flinfo->fn_extra;
	MemoryContext old;
	int			  count;
	uint64_t	 *hashes;
	uint32_t	 *ranks;
	size_t		  n = 0;

	if (cache != NULL && VARSIZE(cache->list) == VARSIZE(arr) &&
		memcmp(cache->list, arr, VARSIZE(arr)) == 0)
		return &cache->order;
	if (ARR_NDIM(arr) > 1 || ARR_HASNULL(arr) || ARR_ELEMTYPE(arr) != INT8OID)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("frequent shingles must be a one-dimensional bigint array without NULLs"),
				 errhint("List shingle hashes of simhash_shingles, the most frequent first.")));
	count = ARR_NDIM(arr) == 0 ? 0 : ArrayGetNItems(ARR_NDIM(arr), ARR_DIMS(arr));
	old = MemoryContextSwitchTo(fcinfo->flinfo->fn_mcxt);
	if (cache == NULL)
		cache = palloc0(sizeof(order_cache));
	else
	{
		pfree(cache->list);
		if (cache->order.n > 0)
		{
			pfree((void *) cache->order.hashes);
			pfree((void *) cache->order.ranks);
		}
	}
	memset(&cache->order, 0, sizeof(cache->order));
	cache->list = (ArrayType *) palloc(VARSIZE(arr));
	memcpy(cache->list, arr, VARSIZE(arr));
	if (count > 0)
	{
		hashes = palloc(sizeof(uint64_t) * count);
		ranks = palloc(sizeof(uint32_t) * count);
		/* no NULLs: the data follows the fixed header (ARR_DATA_PTR warns under -Wsign-compare) */
		SH_CHECK(sh_prefix_order_build((const uint64_t *) ((const char *) cache->list +
														   ARR_OVERHEAD_NONULLS(1)),
									   (size_t) count, hashes, ranks, &n),
				 what);
		cache->order.hashes = hashes;
		cache->order.ranks = ranks;
		cache->order.n = n;
	}
	fcinfo->flinfo->fn_extra = cache;
	MemoryContextSwitchTo(old);
	return &cache->order;
}

/*
 * The tokens of argument 0 (doc text) at threshold argument 1 in the order
 * of argument 2 (frequent bigint[]): those a row is indexed under, or with
 * probe set those a lookup probes with (only a lookup's doc is held to
 * work_mem by doc_shingles, as before).
 */
static ArrayType *
doc_tokens(FunctionCallInfo fcinfo, bool probe, const char *what)
{
	double				   t = PG_GETARG_FLOAT8(1);
	const sh_prefix_order *order;
	size_t				   n, cap, ntok = 0;
	uint64_t			  *set, *tokens;

	simhash_check_threshold(t);
	order = simhash_frequent_order(fcinfo, 2, what);
	set = doc_shingles(PG_GETARG_TEXT_PP(0), probe, &n);
	cap = probe ? sh_prefix_probe_room(n, t) : sh_prefix_tokens_room(n, t);
	tokens = palloc_extended(sizeof(uint64_t) * cap, MCXT_ALLOC_HUGE);
	SH_CHECK(probe ? sh_prefix_probe(set, n, t, order, tokens, cap, &ntok)
				   : sh_prefix_tokens(set, n, t, order, tokens, cap, &ntok),
			 what);
	return token_array(tokens, ntok);
}

/* simhash_prefix_tokens(doc text, threshold float8, frequent bigint[]): the indexed tokens. */
PG_FUNCTION_INFO_V1(simhash_prefix_tokens);
Datum
simhash_prefix_tokens(PG_FUNCTION_ARGS)
{
	PG_RETURN_ARRAYTYPE_P(doc_tokens(fcinfo, false, "simhash_prefix_tokens"));
}

/* simhash_prefix_probe(doc text, threshold float8, frequent bigint[]): the tokens of a lookup. */
PG_FUNCTION_INFO_V1(simhash_prefix_probe);
Datum
simhash_prefix_probe(PG_FUNCTION_ARGS)
{
	PG_RETURN_ARRAYTYPE_P(doc_tokens(fcinfo, true, "simhash_prefix_probe"));
}

/* The distinct non-NULL elements of a bigint[] (palloc'd, ascending), *n of them. */
static int64 *
distinct_elements(ArrayType *arr, int *n)
{
	Datum *elems;
	bool  *nulls;
	int	   count, m = 0;
	int64 *out;

	if (ARR_ELEMTYPE(arr) != INT8OID)
		ereport(ERROR, (errcode(ERRCODE_DATATYPE_MISMATCH),
						errmsg("prefix tokens must be a bigint array, not %s",
							   format_type_be(ARR_ELEMTYPE(arr)))));
	deconstruct_array(arr, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE, &elems, &nulls, &count);
	out = palloc(sizeof(int64) * Max(count, 1));
	for (int i = 0; i < count; i++)
		if (!nulls[i])
			out[m++] = DatumGetInt64(elems[i]);
	qsort(out, m, sizeof(int64), int64_cmp);
	*n = 0;
	for (int i = 0; i < m; i++)
		if (*n == 0 || out[*n - 1] != out[i])
			out[(*n)++] = out[i];
	pfree(elems);
	pfree(nulls);
	return out;
}

/* simhash_prefix_match(a bigint[], b bigint[]) -> bool (a &&& b): a and b share two distinct elements. */
PG_FUNCTION_INFO_V1(simhash_prefix_match);
Datum
simhash_prefix_match(PG_FUNCTION_ARGS)
{
	int	   na, nb, i = 0, j = 0, common = 0;
	int64 *a = distinct_elements(PG_GETARG_ARRAYTYPE_P(0), &na);
	int64 *b = distinct_elements(PG_GETARG_ARRAYTYPE_P(1), &nb);

	while (i < na && j < nb && common < SIMHASH_PREFIX_COMMON)
	{
		if (a[i] < b[j])
			i++;
		else if (a[i] > b[j])
			j++;
		else
		{
			common++;
			i++;
			j++;
		}
	}
	PG_RETURN_BOOL(common >= SIMHASH_PREFIX_COMMON);
}

/*
 * GIN extractQuery of simhash_prefix_ops: the distinct non-NULL elements of
 * the query (a repeated element counts once, as in simhash_prefix_match); no
 * entry, so no row, when fewer than two.
 */
PG_FUNCTION_INFO_V1(simhash_prefix_extract_query);
Datum
simhash_prefix_extract_query(PG_FUNCTION_ARGS)
{
	int32 *nentries = (int32 *) PG_GETARG_POINTER(1);
	int32 *search_mode = (int32 *) PG_GETARG_POINTER(6);
	int	   n;
	int64 *elems = distinct_elements(PG_GETARG_ARRAYTYPE_P(0), &n);
	Datum *entries;

	*search_mode = GIN_SEARCH_MODE_DEFAULT;
	*nentries = n >= SIMHASH_PREFIX_COMMON ? n : 0;
	entries = palloc(sizeof(Datum) * Max(n, 1));
	for (int i = 0; i < n; i++)
		entries[i] = Int64GetDatum(elems[i]);
	PG_RETURN_POINTER(entries);
}

/* GIN consistent of simhash_prefix_ops: two of the query's entries are present (exact, no recheck). */
PG_FUNCTION_INFO_V1(simhash_prefix_consistent);
Datum
simhash_prefix_consistent(PG_FUNCTION_ARGS)
{
	bool *check = (bool *) PG_GETARG_POINTER(0);
	int32 nkeys = PG_GETARG_INT32(3);
	bool *recheck = (bool *) PG_GETARG_POINTER(5);
	int	  present = 0;

	*recheck = false;
	for (int i = 0; i < nkeys && present < SIMHASH_PREFIX_COMMON; i++)
		present += check[i];
	PG_RETURN_BOOL(present >= SIMHASH_PREFIX_COMMON);
}

/* GIN triConsistent of simhash_prefix_ops: the same over GIN_TRUE / GIN_MAYBE / GIN_FALSE. */
PG_FUNCTION_INFO_V1(simhash_prefix_triconsistent);
Datum
simhash_prefix_triconsistent(PG_FUNCTION_ARGS)
{
	GinTernaryValue *check = (GinTernaryValue *) PG_GETARG_POINTER(0);
	int32			 nkeys = PG_GETARG_INT32(3);
	int				 present = 0, maybe = 0;

	for (int i = 0; i < nkeys; i++)
	{
		if (check[i] == GIN_TRUE)
			present++;
		else if (check[i] == GIN_MAYBE)
			maybe++;
	}
	if (present >= SIMHASH_PREFIX_COMMON)
		PG_RETURN_GIN_TERNARY_VALUE(GIN_TRUE);
	PG_RETURN_GIN_TERNARY_VALUE(present + maybe >= SIMHASH_PREFIX_COMMON ? GIN_MAYBE : GIN_FALSE);
}

/*
 * The threshold t0 of an index that serves lookups on column attno: a valid,
 * non-partial, single-column GIN index with the simhash_prefix_ops opclass on exactly
 * prefix_fn(column, t0, frequent) with constants t0 and frequent (the list
 * into *frequent); -1 for any other index.
 */
static double
index_threshold(Relation index, AttrNumber attno, Oid prefix_fn, Oid prefix_ops, Datum *frequent)
{
	List	 *exprs;
	FuncExpr *fe;
	Node	 *arg;
	Const	 *t0, *list;

	if (index->rd_rel->relam != GIN_AM_OID || !index->rd_index->indisvalid ||
		!index->rd_index->indisready || index->rd_index->indnatts != 1 ||
		index->rd_index->indkey.values[0] != 0 || index->rd_opfamily[0] != prefix_ops ||
		RelationGetIndexPredicate(index) != NIL)
		return -1;
	exprs = RelationGetIndexExpressions(index);
	if (list_length(exprs) != 1 || !IsA(linitial(exprs), FuncExpr))
		return -1;
	fe = (FuncExpr *) linitial(exprs);
	if (fe->funcid != prefix_fn || list_length(fe->args) != 3)
		return -1;
	arg = (Node *) linitial(fe->args);
	t0 = (Const *) lsecond(fe->args);
	list = (Const *) lthird(fe->args);
	if (!IsA(arg, Var) || ((Var *) arg)->varattno != attno || !IsA(t0, Const) || t0->constisnull ||
		t0->consttype != FLOAT8OID || !IsA(list, Const) || list->constisnull ||
		list->consttype != INT8ARRAYOID)
		return -1;
	*frequent = list->constvalue;
	return DatumGetFloat8(t0->constvalue);
}

/*
 * simhash_prefix_index_for(rel regclass, body name, threshold float8,
 * prefix_fn regprocedure, OUT index_threshold float8, OUT frequent bigint[],
 * OUT thresholds float8[]): of the indexes on rel that serve lookups on body,
 * the one with the largest t0 <= threshold (its t0 and list of frequent
 * shingles; NULLs when none), and the t0 of them all.  NULL when rel has no
 * column body.
 */
PG_FUNCTION_INFO_V1(simhash_prefix_index_for);
Datum
simhash_prefix_index_for(PG_FUNCTION_ARGS)
{
	Oid		   relid = PG_GETARG_OID(0);
	char	  *body = NameStr(*PG_GETARG_NAME(1));
	double	   threshold = PG_GETARG_FLOAT8(2);
	Oid		   prefix_fn = PG_GETARG_OID(3);
	Oid		   prefix_ops;
	AttrNumber attno;
	Relation   rel;
	List	  *indexes;
	ListCell  *lc;
	Datum	  *found;
	int		   nfound = 0;
	double	   best = -1;
	Datum	   best_list = (Datum) 0;
	TupleDesc  tupdesc;
	Datum	   values[3];
	bool	   nulls[3] = {false, false, false};

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "simhash_prefix_index_for must return a record");
	attno = get_attnum(relid, body);
	if (attno == InvalidAttrNumber)
		PG_RETURN_NULL();
	prefix_ops =
		get_opfamily_oid(GIN_AM_OID,
						 list_make2(makeString(get_namespace_name(get_func_namespace(prefix_fn))),
									makeString("simhash_prefix_ops")),
						 false);
	rel = relation_open(relid, AccessShareLock);
	indexes = RelationGetIndexList(rel);
	found = palloc(sizeof(Datum) * Max(list_length(indexes), 1));
	foreach (lc, indexes)
	{
		Relation index = index_open(lfirst_oid(lc), AccessShareLock);
		Datum	 list = (Datum) 0;
		double	 t0 = index_threshold(index, attno, prefix_fn, prefix_ops, &list);

		if (t0 > 0)
		{
			found[nfound++] = Float8GetDatum(t0);
			if (t0 <= threshold && t0 > best)
			{
				best = t0;
				best_list = PointerGetDatum(PG_DETOAST_DATUM_COPY(list));
			}
		}
		index_close(index, AccessShareLock);
	}
	relation_close(rel, AccessShareLock);
	values[0] = Float8GetDatum(best);
	values[1] = best_list;
	nulls[0] = nulls[1] = best < 0;
	values[2] = PointerGetDatum(
		construct_array(found, nfound, FLOAT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}
