/*
 * fingerprint_text.c — SQL entry points that turn features into fingerprints:
 * simhash(text), simhash(tsvector), simhash_compute(bigint[]), simhash_agg.
 */
#include "simhash.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "mb/pg_wchar.h"
#include "tsearch/ts_type.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "libpq/pqformat.h"

#include "text.h"

/* ---- simhash(text, shingle, tokens, casefold) ----------------------------- */

/* The sh_token_mode named by the tokens argument (words or chars). */
static sh_token_mode
parse_token_mode(text *mode)
{
	char *s = text_to_cstring(mode);

	if (pg_strcasecmp(s, "words") == 0)
		return SH_TOKENS_WORDS;
	if (pg_strcasecmp(s, "chars") == 0)
		return SH_TOKENS_CHARS;
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("invalid tokens mode \"%s\"", s),
			 errhint("Valid modes are \"words\" and \"chars\".")));
	return SH_TOKENS_WORDS; /* keep compiler quiet */
}

/*
 * The (shingle int, tokens text, casefold bool) arguments starting at
 * argument first_arg, shared by simhash(text), simhash_html and
 * simhash_similarity so all accept and reject the same values with the same
 * errors.
 */
void
simhash_text_options(FunctionCallInfo fcinfo, int first_arg, sh_text_options *opts)
{
	sh_text_options_default(opts);
	opts->shingle = PG_GETARG_INT32(first_arg);
	opts->tokens = parse_token_mode(PG_GETARG_TEXT_PP(first_arg + 1));
	opts->casefold = PG_GETARG_BOOL(first_arg + 2);
	if (opts->shingle < 1 || opts->shingle > SH_MAX_SHINGLE)
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						errmsg("shingle size %d is out of range", opts->shingle),
						errhint("A shingle is 1 to %d tokens.", SH_MAX_SHINGLE)));
}

/*
 * A text value's bytes in UTF-8 (converted from the server encoding when it
 * differs; an error names characters that cannot be converted).
 */
char *
simhash_text_to_utf8(text *t, size_t *len)
{
	int	  n = VARSIZE_ANY_EXHDR(t);
	char *utf8 = pg_server_to_any(VARDATA_ANY(t), n, PG_UTF8);

	*len = (utf8 == VARDATA_ANY(t)) ? (size_t) n : strlen(utf8);
	return utf8;
}

/*
 * The arguments (doc, shingle, tokens, casefold) shared by simhash(text) and
 * simhash_html: the options into *opts, and doc in UTF-8 (*len bytes).
 */
char *
simhash_text_arguments(FunctionCallInfo fcinfo, sh_text_options *opts, size_t *len)
{
	simhash_text_options(fcinfo, 1, opts);
	return simhash_text_to_utf8(PG_GETARG_TEXT_PP(0), len);
}

/* simhash(doc text, shingle, tokens, casefold). */
PG_FUNCTION_INFO_V1(simhash_text);
Datum
simhash_text(PG_FUNCTION_ARGS)
{
	sh_text_options opts;
	size_t			len;
	char		   *utf8;
	uint64_t		fp;

	utf8 = simhash_text_arguments(fcinfo, &opts, &len);
	SH_CHECK(sh_fingerprint_text(utf8, len, &opts, &fp), "simhash(text)");
	PG_RETURN_SIMHASH(fp);
}

/* ---- simhash_compute(bigint[]) ----------------------------------------------- */

/* simhash_compute(bigint[]): one vote per non-NULL feature hash. */
PG_FUNCTION_INFO_V1(simhash_compute);
Datum
simhash_compute(PG_FUNCTION_ARGS)
{
	ArrayType *arr = PG_GETARG_ARRAYTYPE_P(0);
	Datum	  *elems;
	bool	  *nulls;
	int		   n, kept = 0;
	uint64	  *features;
	uint64	   fp;

	deconstruct_array(arr, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE, &elems, &nulls, &n);
	features = palloc(sizeof(uint64) * Max(n, 1));
	for (int i = 0; i < n; i++)
		if (!nulls[i])
			features[kept++] = (uint64) DatumGetInt64(elems[i]);
	fp = sh_compute(features, kept);
	PG_RETURN_SIMHASH(fp);
}

/* ---- simhash(tsvector) ---------------------------------------------------- */

/* Feature weights of tsvector labels, as ts_rank's defaults: D, C, B, A. */
static const double label_weight[4] = {0.1, 0.2, 0.4, 1.0};

/* simhash(tsvector): each lexeme a feature, weighted by its positions' labels. */
PG_FUNCTION_INFO_V1(simhash_tsvector);
Datum
simhash_tsvector(PG_FUNCTION_ARGS)
{
	TSVector   tsv = PG_GETARG_TSVECTOR(0);
	WordEntry *entries = ARRPTR(tsv);
	char	  *lexemes = STRPTR(tsv);
	double	   sums[SH_BITS] = {0};

	for (int i = 0; i < tsv->size; i++)
	{
		WordEntry *we = &entries[i];
		char	  *utf8 = pg_server_to_any(lexemes + we->pos, we->len, PG_UTF8);
		size_t	   len = (utf8 == lexemes + we->pos) ? we->len : strlen(utf8);
		uint64_t   h = sh_feature_hash(utf8, len);
		double	   weight = 0;

		if (we->haspos)
		{
			WordEntryPos *pos = POSDATAPTR(tsv, we);

			for (int p = 0; p < POSDATALEN(tsv, we); p++)
				weight += label_weight[WEP_GETWEIGHT(pos[p])];
		}
		else
			weight = 1.0; /* a stripped tsvector: every lexeme once */
		sh_vote_add_many(sums, &h, &weight, 1);
	}
	PG_RETURN_SIMHASH(sh_vote_result(sums));
}

/* ---- simhash_agg(feature [, weight]) ----------------------------------------- */

/*
 * The aggregate state is the 64 compensated vote sums of the core
 * (sh_vote_sums: no finite weights overflow them, so the result does not
 * depend on the order of the rows).  It is a plain struct in the aggregate's
 * memory context, serialized as 128 float8 for parallel plans.
 */
typedef sh_vote_sums VoteState;

/* The transition state, allocated on the first row in the aggregate's context. */
static VoteState *
vote_state(FunctionCallInfo fcinfo)
{
	MemoryContext aggctx;

	if (!AggCheckCallContext(fcinfo, &aggctx))
		ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						errmsg("simhash_agg transition function called in non-aggregate context")));
	if (PG_ARGISNULL(0))
		return (VoteState *) MemoryContextAllocZero(aggctx, sizeof(VoteState));
	return (VoteState *) PG_GETARG_POINTER(0);
}

/* Transition function of simhash_agg(bigint): one vote per non-NULL feature. */
PG_FUNCTION_INFO_V1(simhash_agg_trans);
Datum
simhash_agg_trans(PG_FUNCTION_ARGS)
{
	VoteState *state = vote_state(fcinfo);

	if (!PG_ARGISNULL(1))
	{
		sh_vote_sums_add(state, (uint64_t) PG_GETARG_INT64(1), 1.0);
	}
	PG_RETURN_POINTER(state);
}

/* Transition function of simhash_agg(bigint, float8): a vote of the given weight. */
PG_FUNCTION_INFO_V1(simhash_agg_weighted_trans);
Datum
simhash_agg_weighted_trans(PG_FUNCTION_ARGS)
{
	VoteState *state = vote_state(fcinfo);

	if (!PG_ARGISNULL(1) && !PG_ARGISNULL(2))
	{
		uint64_t feature = (uint64_t) PG_GETARG_INT64(1);
		double	 weight = PG_GETARG_FLOAT8(2);

		if (isnan(weight) || isinf(weight))
			ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
							errmsg("feature weight must be finite, got %g", weight)));
		sh_vote_sums_add(state, feature, weight);
	}
	PG_RETURN_POINTER(state);
}

/* Combine function: merges the sums of two partial states. */
PG_FUNCTION_INFO_V1(simhash_agg_combine);
Datum
simhash_agg_combine(PG_FUNCTION_ARGS)
{
	MemoryContext aggctx;
	VoteState	 *a, *b;

	if (!AggCheckCallContext(fcinfo, &aggctx))
		elog(ERROR, "simhash_agg_combine called in non-aggregate context");
	if (PG_ARGISNULL(1))
		PG_RETURN_DATUM(PG_GETARG_DATUM(0));
	b = (VoteState *) PG_GETARG_POINTER(1);
	if (PG_ARGISNULL(0))
	{
		a = (VoteState *) MemoryContextAlloc(aggctx, sizeof(VoteState));
		memcpy(a, b, sizeof(VoteState));
		PG_RETURN_POINTER(a);
	}
	a = (VoteState *) PG_GETARG_POINTER(0);
	sh_vote_sums_merge(a, b);
	PG_RETURN_POINTER(a);
}

/* Serialization of a state for parallel aggregation: 64 pairs of float8. */
PG_FUNCTION_INFO_V1(simhash_agg_serialize);
Datum
simhash_agg_serialize(PG_FUNCTION_ARGS)
{
	VoteState	  *state = (VoteState *) PG_GETARG_POINTER(0);
	StringInfoData buf;

	pq_begintypsend(&buf);
	for (int i = 0; i < SH_BITS; i++)
	{
		pq_sendfloat8(&buf, state->hi[i]);
		pq_sendfloat8(&buf, state->lo[i]);
	}
	PG_RETURN_BYTEA_P(pq_endtypsend(&buf));
}

/* The inverse of simhash_agg_serialize. */
PG_FUNCTION_INFO_V1(simhash_agg_deserialize);
Datum
simhash_agg_deserialize(PG_FUNCTION_ARGS)
{
	bytea		  *bytes = PG_GETARG_BYTEA_PP(0);
	VoteState	  *state = palloc(sizeof(VoteState));
	StringInfoData buf;

	buf.data = VARDATA_ANY(bytes);
	buf.len = VARSIZE_ANY_EXHDR(bytes);
	buf.maxlen = buf.len;
	buf.cursor = 0;
	for (int i = 0; i < SH_BITS; i++)
	{
		state->hi[i] = pq_getmsgfloat8(&buf);
		state->lo[i] = pq_getmsgfloat8(&buf);
	}
	pq_getmsgend(&buf);
	PG_RETURN_POINTER(state);
}

/* Final function: the fingerprint of the sums. */
PG_FUNCTION_INFO_V1(simhash_agg_final);
Datum
simhash_agg_final(PG_FUNCTION_ARGS)
{
	/* No features at all: the fingerprint of nothing, as simhash_compute('{}'). */
	if (PG_ARGISNULL(0))
		PG_RETURN_SIMHASH(0);
	PG_RETURN_SIMHASH(sh_vote_sums_result((VoteState *) PG_GETARG_POINTER(0)));
}
