/*
 * simhash_near_duplicates.c — the in-memory join of simhash_near_duplicates
 * (src/install/46_near_duplicates.sql): simhash_near_duplicates_cursor(rows
 * refcursor, threshold) reads (key text, body text) rows from a cursor the
 * caller opened (so they are read with the caller's rights, and on Citus the
 * workers send only those two columns), shingles each body as simhash(text)
 * does by default, and hands the sets to the core's prefix-filtering join
 * (neardup.h), whose verified pairs of sets become pairs of keys.
 *
 * Memory: the core's sets and the keys stay within work_mem; a call that
 * would need more fails with 53200 before it returns any row (the reading
 * stops as soon as the sets alone pass it, the join is sized before it is
 * built), and the SQL function then joins in temporary tables, which spill.
 * The pairs go to the SRF's tuplestore, which spills beyond work_mem.
 *
 * The core object lives across calls that may raise an error, so a reset
 * callback of the query's memory context frees it if one does; the core
 * never runs below a PostgreSQL call, so no longjmp crosses a C++ frame.
 *
 * Progress: a NOTICE every simhash.near_duplicates_progress rows read and
 * sets joined (0: none), and one with the counts once the join is built.
 */
#include "simhash.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/tuplestore.h"

#include "neardup.h"
#include "text.h"

#define FETCH_ROWS 1000
#define PAIR_CHUNK 4096

/* simhash.near_duplicates_progress (simhash.c). */
int simhash_near_duplicates_progress = 100000;

/* What a call holds besides the core: the keys, and the core's release. */
typedef struct NearDupCall
{
	sh_nd				 *nd;
	MemoryContextCallback release;
	MemoryContext		  keycxt;
	char				**keys; /* by row, NUL-terminated */
	uint32				 *keylen;
	size_t				  nkeys, maxkeys;
	size_t				  key_bytes;
} NearDupCall;

static void
release_core(void *arg)
{
	NearDupCall *call = arg;

	if (call->nd != NULL)
		sh_nd_free(call->nd);
	call->nd = NULL;
}

/* 53200 with what the in-memory join needs, in kB. */
static void
refuse(const NearDupCall *call, const sh_nd_stats *st, double need_bytes)
{
	double need_kb = ceil(need_bytes / 1024.0);

	ereport(ERROR,
			(errcode(ERRCODE_OUT_OF_MEMORY),
			 errmsg("simhash_near_duplicates in memory needs at least %.0f kB for " UINT64_FORMAT
					" rows (" UINT64_FORMAT " shingles so far), more than work_mem (%d kB)",
					need_kb, (uint64) call->nkeys, (uint64) st->hashes, work_mem),
			 errhint("Raise work_mem to at least %.0f kB (about 30 bytes per shingle); with less, "
					 "simhash_near_duplicates() joins in temporary tables, which spill to disk "
					 "and take longer.",
					 need_kb)));
}

/* Keeps the key of the next row (the row's position is its index). */
static void
keep_key(NearDupCall *call, text *key)
{
	size_t len = VARSIZE_ANY_EXHDR(key);
	char  *copy;

	if (call->nkeys == call->maxkeys)
	{
		call->maxkeys = call->maxkeys * 2;
		call->keys = repalloc_huge(call->keys, sizeof(char *) * call->maxkeys);
		call->keylen = repalloc_huge(call->keylen, sizeof(uint32) * call->maxkeys);
	}
	copy = MemoryContextAlloc(call->keycxt, len + 1);
	memcpy(copy, VARDATA_ANY(key), len);
	copy[len] = '\0';
	call->keys[call->nkeys] = copy;
	call->keylen[call->nkeys] = (uint32) len;
	call->nkeys++;
	call->key_bytes += len + 1 + 16 + sizeof(char *) * 2 + sizeof(uint32) * 2;
}

/* Reads every row of the cursor into the core and the keys. */
static void
read_rows(NearDupCall *call, const char *cursor)
{
	Portal			portal;
	sh_text_options opts;
	uint64_t	   *buf;
	size_t			cap = 4096;
	int64			progress = simhash_near_duplicates_progress;

	sh_text_options_default(&opts);
	/* outlives SPI_finish, which frees what is palloc'd below it */
	buf = MemoryContextAlloc(call->keycxt, sizeof(uint64_t) * cap);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	portal = SPI_cursor_find(cursor);
	if (portal == NULL)
		ereport(ERROR, (errcode(ERRCODE_UNDEFINED_CURSOR),
						errmsg("cursor \"%s\" does not exist", cursor)));
	for (;;)
	{
		TupleDesc desc;

		SPI_cursor_fetch(portal, true, FETCH_ROWS);
		if (SPI_processed == 0)
			break;
		desc = SPI_tuptable->tupdesc;
		if (desc->natts != 2 || SPI_gettypeid(desc, 1) != TEXTOID ||
			SPI_gettypeid(desc, 2) != TEXTOID)
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("cursor \"%s\" must return two text columns (key, body)", cursor)));
		for (uint64 r = 0; r < SPI_processed; r++)
		{
			HeapTuple	t = SPI_tuptable->vals[r];
			bool		knull, bnull;
			Datum		k = SPI_getbinval(t, desc, 1, &knull);
			Datum		b = SPI_getbinval(t, desc, 2, &bnull);
			text	   *body;
			char	   *utf8;
			size_t		len, n = 0;
			sh_status	st;
			sh_nd_stats stats;

			if (knull || bnull)
				continue;
			body = DatumGetTextPP(b);
			utf8 = simhash_text_to_utf8(body, &len);
			st = sh_text_shingle_set(utf8, len, &opts, buf, cap, &n);
			if (st == SH_ERR_RANGE && n > cap)
			{
				pfree(buf);
				cap = Max(n, cap * 2);
				buf = MemoryContextAllocExtended(call->keycxt, sizeof(uint64_t) * cap,
												 MCXT_ALLOC_HUGE);
				st = sh_text_shingle_set(utf8, len, &opts, buf, cap, &n);
			}
			SH_CHECK(st, "simhash_near_duplicates");
			if (utf8 != VARDATA_ANY(body))
				pfree(utf8);
			if ((Pointer) body != DatumGetPointer(b))
				pfree(body);
			SH_CHECK(sh_nd_add(call->nd, buf, n), "simhash_near_duplicates");
			keep_key(call, DatumGetTextPP(k));
			sh_nd_get_stats(call->nd, &stats);
			/* the sets now, and the sort of all their hashes that comes next */
			if ((double) stats.bytes + (double) stats.hashes * 8 + (double) call->key_bytes >
				(double) work_mem * 1024.0)
				refuse(call, &stats,
					   (double) stats.bytes + (double) stats.hashes * 8 + (double) call->key_bytes);
			if (progress > 0 && call->nkeys % progress == 0)
				ereport(NOTICE, (errmsg("simhash_near_duplicates: " UINT64_FORMAT
										" rows read, " UINT64_FORMAT
										" distinct shingle sets, " UINT64_FORMAT " shingles",
										(uint64) call->nkeys, stats.sets, stats.hashes)));
		}
		SPI_freetuptable(SPI_tuptable);
		CHECK_FOR_INTERRUPTS();
	}
	SPI_finish();
	pfree(buf);
}

/* Writes the row pairs of one verified pair of sets (a == b: the rows sharing a). */
static void
emit_pair(NearDupCall *call, ReturnSetInfo *rsinfo, const sh_nd_pair *p)
{
	size_t			na, nb;
	const uint32_t *ra = sh_nd_rows_of(call->nd, p->a, &na);
	const uint32_t *rb = sh_nd_rows_of(call->nd, p->b, &nb);

	for (size_t i = 0; i < na; i++)
		for (size_t j = (p->a == p->b ? i + 1 : 0); j < nb; j++)
		{
			uint32 x = ra[i], y = rb[j];
			int	   c;
			Datum  values[3];
			bool   isnull[3] = {false, false, false};

			/* key order in "C" collation: bytes, then length */
			c = memcmp(call->keys[x], call->keys[y], Min(call->keylen[x], call->keylen[y]));
			if (c == 0)
				c = (call->keylen[x] > call->keylen[y]) - (call->keylen[x] < call->keylen[y]);
			if (c == 0)
				continue; /* equal keys are never paired */
			if (c > 0)
			{
				uint32 swap = x;

				x = y;
				y = swap;
			}
			values[0] = PointerGetDatum(cstring_to_text_with_len(call->keys[x], call->keylen[x]));
			values[1] = PointerGetDatum(cstring_to_text_with_len(call->keys[y], call->keylen[y]));
			values[2] = Float8GetDatum(p->similarity);
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, isnull);
			pfree(DatumGetPointer(values[0]));
			pfree(DatumGetPointer(values[1]));
		}
}

/* simhash_near_duplicates_cursor(rows refcursor, threshold float8). */
PG_FUNCTION_INFO_V1(simhash_near_duplicates_cursor);
Datum
simhash_near_duplicates_cursor(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	char		  *cursor = text_to_cstring(PG_GETARG_TEXT_PP(0));
	float8		   threshold = PG_GETARG_FLOAT8(1);
	NearDupCall	  *call;
	MemoryContext  querycxt;
	sh_nd_stats	   stats;
	sh_nd_pair	  *pairs;
	size_t		   npairs;
	sh_status	   st;
	int64		   progress = simhash_near_duplicates_progress;
	uint64		   reported = 0;
	uint32		   max_sets = (progress > 0 && progress < 1024) ? (uint32) progress : 1024;
	int			   done = 0;

	if (!(threshold > 0 && threshold <= 1))
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						errmsg("threshold %g is out of range", threshold),
						errhint("threshold is a Jaccard similarity above 0 and at most 1.")));
	InitMaterializedSRF(fcinfo, 0);
	querycxt = rsinfo->econtext->ecxt_per_query_memory;
	call = MemoryContextAllocZero(querycxt, sizeof(NearDupCall));
	call->keycxt =
		AllocSetContextCreate(querycxt, "simhash_near_duplicates keys", SIMHASH_CONTEXT_SIZES);
	call->maxkeys = 1024;
	call->keys = MemoryContextAlloc(call->keycxt, sizeof(char *) * call->maxkeys);
	call->keylen = MemoryContextAlloc(call->keycxt, sizeof(uint32) * call->maxkeys);
	SH_CHECK(sh_nd_create(&call->nd), "simhash_near_duplicates");
	call->release.func = release_core;
	call->release.arg = call;
	MemoryContextRegisterResetCallback(querycxt, &call->release);

	read_rows(call, cursor);

	st = SH_ERR_INTERRUPTED;
	while (st == SH_ERR_INTERRUPTED)
	{
		size_t budget = (size_t) work_mem * 1024;

		budget = budget > call->key_bytes ? budget - call->key_bytes : 0;
		st = sh_nd_prepare(call->nd, threshold, budget, simhash_interrupt_pending, NULL);
		if (st == SH_ERR_INTERRUPTED)
			CHECK_FOR_INTERRUPTS();
	}
	sh_nd_get_stats(call->nd, &stats);
	if (st == SH_ERR_NOMEM && stats.needed > 0)
		refuse(call, &stats, (double) stats.needed + (double) call->key_bytes);
	SH_CHECK(st, "simhash_near_duplicates");
	ereport(NOTICE, (errmsg("simhash_near_duplicates: " UINT64_FORMAT " rows, " UINT64_FORMAT
							" distinct shingle sets, " UINT64_FORMAT " shingles (" UINT64_FORMAT
							" distinct, " UINT64_FORMAT " in two or more sets), " UINT64_FORMAT
							" prefix entries indexed; joining in memory",
							stats.rows, stats.sets, stats.hashes, stats.distinct, stats.shared,
							stats.indexed)));

	pairs = palloc(sizeof(sh_nd_pair) * PAIR_CHUNK);
	for (;;)
	{
		st = sh_nd_next(call->nd, pairs, PAIR_CHUNK, max_sets, &npairs, &done,
						simhash_interrupt_pending, NULL);
		if (st == SH_ERR_INTERRUPTED)
		{
			CHECK_FOR_INTERRUPTS();
			continue;
		}
		SH_CHECK(st, "simhash_near_duplicates");
		for (size_t i = 0; i < npairs; i++)
			emit_pair(call, rsinfo, &pairs[i]);
		CHECK_FOR_INTERRUPTS();
		sh_nd_get_stats(call->nd, &stats);
		if (progress > 0 && stats.joined / progress > reported && stats.joined < stats.sets)
		{
			reported = stats.joined / progress;
			ereport(NOTICE, (errmsg("simhash_near_duplicates: " UINT64_FORMAT " of " UINT64_FORMAT
									" sets joined, " UINT64_FORMAT
									" candidates verified, " UINT64_FORMAT " pairs of sets found",
									stats.joined, stats.sets, stats.candidates, stats.pairs)));
		}
		if (done)
			break;
	}
	sh_nd_get_stats(call->nd, &stats);
	ereport(NOTICE, (errmsg("simhash_near_duplicates: " UINT64_FORMAT " candidate pairs of sets "
							"verified, " UINT64_FORMAT " similar",
							stats.candidates, stats.pairs)));
	release_core(call);
	MemoryContextDelete(call->keycxt);
	return (Datum) 0;
}
