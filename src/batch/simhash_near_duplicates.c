/*
 * simhash_near_duplicates.c — simhash_near_duplicates(rel, fp, body, key,
 * threshold) and simhash_near_duplicates_cursor(rows refcursor, threshold)
 * (src/install/46_near_duplicates.sql): every pair of rows whose exact shingle
 * similarity reaches the threshold.
 *
 * The arguments are checked here, before anything is read, so a mistake
 * raises one plain error.  The rows are read as (key text, body text)
 * through SPI with the caller's rights (on Citus the workers send only those
 * two columns); each body is shingled as simhash(text) does by default and
 * handed to the core's prefix-filtering join (neardup.h), whose verified
 * pairs of sets become pairs of keys.
 *
 * Memory: the core's sets and the keys stay within work_mem.  When they
 * would not (while reading, or when the join is sized), the sets move to
 * temporary files and the join runs by chunks there (near_duplicates_spill.c),
 * with the same pairs, shared with parallel workers when it is large
 * (near_duplicates_parallel.c).  The pairs go to the SRF's tuplestore, which
 * spills beyond work_mem (near_duplicates_result.c).
 *
 * The core objects live across calls that may raise an error, so a reset
 * callback of the call's memory context frees them if one does; the core
 * never runs below a PostgreSQL call, so no longjmp crosses a C++ frame.
 *
 * Progress: a NOTICE every simhash.near_duplicates_progress rows read and
 * sets joined (0: none), one with the counts once the join is built, and one
 * with the rows returned at the end.
 */
#include "simhash.h"

#include "access/htup_details.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/syscache.h"
#include "utils/tuplestore.h"

#include "near_duplicates.h"
#include "text.h"

#define FETCH_ROWS 1000
#define PAIR_CHUNK 4096
#define EMIT_POLL  1024

/* The attribute number of an existing column, or 42703. */
static AttrNumber
column_of(Oid rel, const char *relname, Name column)
{
	AttrNumber att = get_attnum(rel, NameStr(*column));

	if (att <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("column \"%s\" of relation %s does not exist", NameStr(*column), relname)));
	return att;
}

/*
 * Checks the arguments of simhash_near_duplicates (rel exists; fp a simhash
 * or bigint column, body a text one, key any; the caller may read all three;
 * threshold in (0, 1]) and returns the query of its (key, body) rows.
 */
static char *
near_duplicates_query(Oid fn, Oid rel, Name fp, Name body, Name key, double threshold)
{
	Oid		   simhash_type;
	char	  *relname;
	AttrNumber fpatt, bodyatt, keyatt;
	Oid		   fptype, bodytype;
	Oid		   user = GetUserId();

	simhash_check_threshold(threshold);
	if (get_rel_relkind(rel) == '\0')
		ereport(ERROR, (errcode(ERRCODE_UNDEFINED_TABLE),
						errmsg("relation with OID %u does not exist", rel)));
	relname = DatumGetCString(DirectFunctionCall1(regclassout, ObjectIdGetDatum(rel)));
	simhash_type = GetSysCacheOid2(TYPENAMENSP, Anum_pg_type_oid, CStringGetDatum("simhash"),
								   ObjectIdGetDatum(get_func_namespace(fn)));
	fpatt = column_of(rel, relname, fp);
	fptype = get_atttype(rel, fpatt);
	if (fptype != simhash_type && fptype != INT8OID)
		ereport(ERROR, (errcode(ERRCODE_DATATYPE_MISMATCH),
						errmsg("column \"%s\" of relation %s is of type %s, not simhash or bigint",
							   NameStr(*fp), relname, format_type_be(fptype))));
	keyatt = column_of(rel, relname, key);
	bodyatt = column_of(rel, relname, body);
	bodytype = get_atttype(rel, bodyatt);
	if (bodytype != TEXTOID && bodytype != VARCHAROID && bodytype != BPCHAROID)
		ereport(ERROR, (errcode(ERRCODE_DATATYPE_MISMATCH),
						errmsg("column \"%s\" of relation %s is of type %s, not text",
							   NameStr(*body), relname, format_type_be(bodytype))));
	if (pg_class_aclcheck(rel, user, ACL_SELECT) != ACLCHECK_OK &&
		(pg_attribute_aclcheck(rel, fpatt, user, ACL_SELECT) != ACLCHECK_OK ||
		 pg_attribute_aclcheck(rel, bodyatt, user, ACL_SELECT) != ACLCHECK_OK ||
		 pg_attribute_aclcheck(rel, keyatt, user, ACL_SELECT) != ACLCHECK_OK))
		ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
						errmsg("permission denied for relation %s", relname),
						errhint("simhash_near_duplicates reads columns %s, %s and %s with the "
								"caller's rights.",
								quote_identifier(NameStr(*fp)), quote_identifier(NameStr(*body)),
								quote_identifier(NameStr(*key)))));
	return psprintf("SELECT (%1$s)::pg_catalog.text, (%2$s)::pg_catalog.text FROM %3$s"
					" WHERE %1$s IS NOT NULL AND %2$s IS NOT NULL AND %4$s IS NOT NULL",
					quote_identifier(NameStr(*key)), quote_identifier(NameStr(*body)),
					quote_qualified_identifier(get_namespace_name(get_rel_namespace(rel)),
											   get_rel_name(rel)),
					quote_identifier(NameStr(*fp)));
}

static void
release_call(void *arg)
{
	NearDupCall *call = arg;

	if (call->nd != NULL)
		sh_nd_free(call->nd);
	call->nd = NULL;
	nd_spill_release(call);
}

/* Keeps the key of the next row in memory (the row's position is its index). */
static void
keep_key(NearDupCall *call, const char *key, uint32 len)
{
	char *copy;

	if (call->rows == call->maxkeys)
	{
		call->maxkeys = call->maxkeys * 2;
		call->keys = repalloc_huge(call->keys, sizeof(char *) * call->maxkeys);
		call->keylen = repalloc_huge(call->keylen, sizeof(uint32) * call->maxkeys);
	}
	copy = MemoryContextAlloc(call->cxt, len + 1);
	memcpy(copy, key, len);
	copy[len] = '\0';
	call->keys[call->rows] = copy;
	call->keylen[call->rows] = len;
	call->key_bytes += len + 1 + 16 + sizeof(char *) * 2 + sizeof(uint32) * 2;
}

/* Adds one row's set: to the core while it fits, else to the files. */
static void
add_row(NearDupCall *call, const uint64_t *hashes, size_t n, const char *key, uint32 keylen)
{
	nd_check_text(call, n, key, keylen);
	if (call->spill == NULL)
	{
		sh_nd_stats stats;

		SH_CHECK(sh_nd_add(call->nd, hashes, n), "simhash_near_duplicates");
		keep_key(call, key, keylen);
		call->rows++;
		sh_nd_get_stats(call->nd, &stats);
		/* the sets now, and the sort of all their hashes that comes next */
		if ((double) stats.bytes + (double) stats.hashes * 8 + (double) call->key_bytes >
			(double) call->budget)
			nd_spill_begin(call);
		return;
	}
	nd_spill_add(call, hashes, n, key, keylen);
	call->rows++;
}

/* Reads every row of the portal ((key text, body text) rows). */
static void
read_rows(NearDupCall *call, Portal portal, const char *what)
{
	sh_text_options opts;
	uint64_t	   *buf;
	size_t			cap = 4096;
	int64			progress = simhash_near_duplicates_progress;

	sh_text_options_default(&opts);
	buf = MemoryContextAlloc(call->cxt, sizeof(uint64_t) * cap);
	for (;;)
	{
		TupleDesc desc;

		SPI_cursor_fetch(portal, true, FETCH_ROWS);
		if (SPI_processed == 0)
			break;
		desc = SPI_tuptable->tupdesc;
		if (desc->natts != 2 || SPI_gettypeid(desc, 1) != TEXTOID ||
			SPI_gettypeid(desc, 2) != TEXTOID)
			ereport(ERROR, (errcode(ERRCODE_DATATYPE_MISMATCH),
							errmsg("%s must return two text columns (key, body)", what)));
		for (uint64 r = 0; r < SPI_processed; r++)
		{
			HeapTuple t = SPI_tuptable->vals[r];
			bool	  knull, bnull;
			Datum	  k = SPI_getbinval(t, desc, 1, &knull);
			Datum	  b = SPI_getbinval(t, desc, 2, &bnull);
			text	 *body, *key;
			char	 *utf8;
			size_t	  len, n = 0;
			sh_status st;

			if (knull || bnull)
				continue;
			body = DatumGetTextPP(b);
			utf8 = simhash_text_to_utf8(body, &len);
			st = sh_text_shingle_set(utf8, len, &opts, buf, cap, &n);
			if (st == SH_ERR_RANGE && n > cap)
			{
				pfree(buf);
				cap = Max(n, cap * 2);
				buf =
					MemoryContextAllocExtended(call->cxt, sizeof(uint64_t) * cap, MCXT_ALLOC_HUGE);
				st = sh_text_shingle_set(utf8, len, &opts, buf, cap, &n);
			}
			SH_CHECK(st, "simhash_near_duplicates");
			if (utf8 != VARDATA_ANY(body))
				pfree(utf8);
			if ((Pointer) body != DatumGetPointer(b))
				pfree(body);
			if (n == 0)
				call->empty_rows++;
			call->body_chars += len;
			key = DatumGetTextPP(k);
			call->key_chars += VARSIZE_ANY_EXHDR(key);
			add_row(call, buf, n, VARDATA_ANY(key), (uint32) VARSIZE_ANY_EXHDR(key));
			if ((Pointer) key != DatumGetPointer(k))
				pfree(key);
			if (progress > 0 && call->rows % progress == 0)
				ereport(NOTICE, (errmsg("simhash_near_duplicates: " UINT64_FORMAT " rows read",
										call->rows)));
		}
		SPI_freetuptable(SPI_tuptable);
		CHECK_FOR_INTERRUPTS();
	}
	pfree(buf);
}

/*
 * A body column that gives no shingle for nearly every row is not a body,
 * and keys several times longer than the bodies are the bodies: most often
 * the key and body arguments were swapped, and the call would return no
 * pair (or every pair of empty texts) instead of an error.
 */
static void
check_bodies(const NearDupCall *call, const char *what)
{
	if (call->rows < 10)
		return;
	if (call->empty_rows * 10 >= call->rows * 9)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s gives no shingles for " UINT64_FORMAT " of " UINT64_FORMAT " rows",
						what, call->empty_rows, call->rows),
				 errhint("The body argument names the text to compare and the key argument the "
						 "row's name; an empty text, or one without a word, has no shingle.")));
	if (call->key_chars >= 256 * call->rows && call->key_chars >= 4 * call->body_chars)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s, the body, averages %.0f bytes a row, and the key %.0f", what,
						(double) call->body_chars / (double) call->rows,
						(double) call->key_chars / (double) call->rows),
				 errhint("The body argument names the text to compare and the key argument the "
						 "row's name: were they swapped?")));
}

/*
 * Returns the row pairs of a verified pair of sets of the in-memory join
 * (sa == sb: the rows that share sa).
 */
static void
emit_rows(NearDupCall *call, uint32 sa, uint32 sb, double similarity)
{
	size_t		  na, nb;
	const uint32 *ra = sh_nd_rows_of(call->nd, sa, &na);
	const uint32 *rb = sh_nd_rows_of(call->nd, sb, &nb);
	uint32		  polled = 0;

	for (size_t i = 0; i < na; i++)
		for (size_t j = (sa == sb ? i + 1 : 0); j < nb; j++)
		{
			nd_put_pair(call, call->keys[ra[i]], call->keylen[ra[i]], call->keys[rb[j]],
						call->keylen[rb[j]], similarity);
			if (++polled == EMIT_POLL)
			{
				polled = 0;
				CHECK_FOR_INTERRUPTS();
			}
		}
}

/* The in-memory join, once the core has taken every row. */
static void
join_in_memory(NearDupCall *call, sh_nd_stats *stats)
{
	sh_nd_pair *pairs = palloc(sizeof(sh_nd_pair) * PAIR_CHUNK);
	int64		progress = simhash_near_duplicates_progress;
	uint32		max_sets = (progress > 0 && progress < 1024) ? (uint32) progress : 1024;
	uint64		reported = 0;
	int			done = 0;

	ereport(NOTICE, (errmsg("simhash_near_duplicates: " UINT64_FORMAT " rows, " UINT64_FORMAT
							" distinct shingle sets, " UINT64_FORMAT " shingles (" UINT64_FORMAT
							" distinct, " UINT64_FORMAT " in two or more sets), " UINT64_FORMAT
							" prefix entries indexed; joining in memory",
							stats->rows, stats->sets, stats->hashes, stats->distinct, stats->shared,
							stats->indexed)));
	{
		double pairs = 0;

		for (uint64 s = 0; s < stats->sets; s++)
		{
			size_t n;

			(void) sh_nd_rows_of(call->nd, (uint32) s, &n);
			pairs += (double) n * (double) (n - (n > 0)) / 2;
		}
		nd_check_result_pairs(pairs);
	}
	for (;;)
	{
		size_t	  npairs;
		sh_status st = sh_nd_next(call->nd, pairs, PAIR_CHUNK, max_sets, &npairs, &done,
								  simhash_interrupt_pending, NULL);

		if (st == SH_ERR_INTERRUPTED)
		{
			CHECK_FOR_INTERRUPTS();
			continue;
		}
		SH_CHECK(st, "simhash_near_duplicates");
		for (size_t i = 0; i < npairs; i++)
			emit_rows(call, pairs[i].a, pairs[i].b, pairs[i].similarity);
		CHECK_FOR_INTERRUPTS();
		sh_nd_get_stats(call->nd, stats);
		if (progress > 0 && stats->joined / progress > reported && stats->joined < stats->sets)
		{
			reported = stats->joined / progress;
			ereport(NOTICE, (errmsg("simhash_near_duplicates: " UINT64_FORMAT " of " UINT64_FORMAT
									" sets joined, " UINT64_FORMAT " candidates verified",
									stats->joined, stats->sets, stats->candidates)));
		}
		if (done)
			break;
	}
	sh_nd_get_stats(call->nd, stats);
	call->candidates = stats->candidates;
	call->similar = stats->pairs;
	pfree(pairs);
}

/*
 * Materializes the SRF with a tuplestore of nd_result_kb(), so the pairs
 * and the join together stay within work_mem.
 */
static void
init_result(FunctionCallInfo fcinfo)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	MemoryContext  old;

	InitMaterializedSRF(fcinfo, 0);
	old = MemoryContextSwitchTo(rsinfo->econtext->ecxt_per_query_memory);
	tuplestore_end(rsinfo->setResult);
	rsinfo->setResult = tuplestore_begin_heap((rsinfo->allowedModes & SFRM_Materialize_Random) != 0,
											  false, (int) nd_result_kb());
	MemoryContextSwitchTo(old);
}

/*
 * The join on disk, once every row is read: the file of the sets in join
 * order (in a FileSet when workers may join it), then its chunks, with
 * workers or alone.
 */
static void
join_on_disk(NearDupCall *call)
{
	uint32 nchunks;

	nd_parallel_fileset(call);
	nd_spill_write_joined(call);
	nchunks = nd_parallel_join(call);
	if (nchunks == 0)
		nchunks = nd_spill_join_chunks(call);
	elog(DEBUG1, "simhash_near_duplicates: %u chunks", nchunks);
	nd_spill_close_joined(call);
}

/* Reads the portal's rows and returns every verified pair of them. */
static void
near_duplicates(FunctionCallInfo fcinfo, Portal portal, double threshold, const char *what)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	MemoryContext  querycxt = rsinfo->econtext->ecxt_per_query_memory;
	NearDupCall	  *call;

	call = MemoryContextAllocZero(querycxt, sizeof(NearDupCall));
	call->cxt = AllocSetContextCreate(querycxt, "simhash_near_duplicates", SIMHASH_CONTEXT_SIZES);
	call->threshold = threshold;
	call->budget = (size_t) work_mem * 1024 - nd_result_kb() * 1024;
	call->rsinfo = rsinfo;
	call->maxkeys = 1024;
	call->keys = MemoryContextAlloc(call->cxt, sizeof(char *) * call->maxkeys);
	call->keylen = MemoryContextAlloc(call->cxt, sizeof(uint32) * call->maxkeys);
	SH_CHECK(sh_nd_create(&call->nd), "simhash_near_duplicates");
	call->release.func = release_call;
	call->release.arg = call;
	/* on call->cxt: a context's callbacks run before its memory goes, not after its children's */
	MemoryContextRegisterResetCallback(call->cxt, &call->release);

	read_rows(call, portal, what);
	check_bodies(call, what);

	if (call->spill == NULL)
	{
		sh_nd_stats stats;
		size_t		budget = call->budget > call->key_bytes ? call->budget - call->key_bytes : 0;
		sh_status	st;

		while ((st = sh_nd_prepare(call->nd, threshold, budget, simhash_interrupt_pending, NULL)) ==
			   SH_ERR_INTERRUPTED)
			CHECK_FOR_INTERRUPTS();
		if (st == SH_ERR_NOMEM)
			nd_spill_begin(call); /* the sets are as they were */
		else
		{
			SH_CHECK(st, "simhash_near_duplicates");
			sh_nd_get_stats(call->nd, &stats);
			join_in_memory(call, &stats);
		}
	}
	if (call->spill != NULL)
		join_on_disk(call);

	ereport(NOTICE,
			(errmsg("simhash_near_duplicates: " UINT64_FORMAT " pairs of rows (" UINT64_FORMAT
					" candidate pairs of distinct texts verified, " UINT64_FORMAT " similar)",
					call->emitted, call->candidates, call->similar)));
	release_call(call);
	call->spill = NULL;
	MemoryContextDelete(call->cxt);
}

/* simhash_near_duplicates(rel regclass, fp name, body name, key name, threshold float8). */
PG_FUNCTION_INFO_V1(simhash_near_duplicates);
Datum
simhash_near_duplicates(PG_FUNCTION_ARGS)
{
	Oid		   rel = PG_GETARG_OID(0);
	Name	   fp = PG_GETARG_NAME(1);
	Name	   body = PG_GETARG_NAME(2);
	Name	   key = PG_GETARG_NAME(3);
	double	   threshold = PG_GETARG_FLOAT8(4);
	char	  *query = near_duplicates_query(fcinfo->flinfo->fn_oid, rel, fp, body, key, threshold);
	char	  *what = psprintf("column \"%s\" of relation %s", NameStr(*body),
							   DatumGetCString(DirectFunctionCall1(regclassout, ObjectIdGetDatum(rel))));
	SPIPlanPtr plan;
	Portal	   portal;

	if (nd_citus_join(fcinfo)) /* a Citus distributed table: joined on its workers */
		return (Datum) 0;
	init_result(fcinfo);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	plan = SPI_prepare(query, 0, NULL);
	if (plan == NULL)
		elog(ERROR, "SPI_prepare failed: %s", SPI_result_code_string(SPI_result));
	portal = SPI_cursor_open(NULL, plan, NULL, NULL, true);
	near_duplicates(fcinfo, portal, threshold, what);
	SPI_cursor_close(portal);
	SPI_finish();
	return (Datum) 0;
}

/* simhash_near_duplicates_source(rel, fp, body, key, threshold): the checks, and the query. */
PG_FUNCTION_INFO_V1(simhash_near_duplicates_source);
Datum
simhash_near_duplicates_source(PG_FUNCTION_ARGS)
{
	PG_RETURN_TEXT_P(cstring_to_text(
		near_duplicates_query(fcinfo->flinfo->fn_oid, PG_GETARG_OID(0), PG_GETARG_NAME(1),
							  PG_GETARG_NAME(2), PG_GETARG_NAME(3), PG_GETARG_FLOAT8(4))));
}

/* simhash_near_duplicates_cursor(rows refcursor, threshold float8). */
PG_FUNCTION_INFO_V1(simhash_near_duplicates_cursor);
Datum
simhash_near_duplicates_cursor(PG_FUNCTION_ARGS)
{
	char  *cursor = text_to_cstring(PG_GETARG_TEXT_PP(0));
	double threshold = PG_GETARG_FLOAT8(1);
	Portal portal;

	simhash_check_threshold(threshold);
	init_result(fcinfo);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	portal = SPI_cursor_find(cursor);
	if (portal == NULL)
		ereport(ERROR, (errcode(ERRCODE_UNDEFINED_CURSOR),
						errmsg("cursor \"%s\" does not exist", cursor)));
	near_duplicates(fcinfo, portal, threshold, psprintf("cursor \"%s\"", cursor));
	SPI_finish();
	return (Datum) 0;
}
