/*
 * info.c — simhash_index_runs(regclass): the runs and buffers of an index,
 * read from its metapage (for monitoring, tuning pending_pages, and tests).
 */
#include "simhash_am.h"
#include "runs.h"

#include "catalog/pg_am.h"
#include "catalog/pg_class.h"
#include "commands/defrem.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

/* Pages of a chain (pending or NULLs), which is short or read anyway by scans. */
static int64
chain_pages(Relation index, BlockNumber blkno)
{
	int64		n = 0;
	BlockNumber nblocks = RelationGetNumberOfBlocks(index);

	while (BlockNumberIsValid(blkno) && blkno < nblocks && n <= (int64) nblocks)
	{
		Buffer buf = ReadBuffer(index, blkno);

		CHECK_FOR_INTERRUPTS();
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		blkno = SimhashPageGetOpaque(BufferGetPage(buf))->next;
		UnlockReleaseBuffer(buf);
		n++;
	}
	return n;
}

/* One row of simhash_index_runs(); a negative gen or level is NULL. */
static void
put_row(ReturnSetInfo *rsinfo, const char *kind, int64 gen, int level, int64 entries, int64 pages)
{
	Datum values[5];
	bool  nulls[5] = {false, gen < 0, level < 0, false, false};

	values[0] = CStringGetTextDatum(kind);
	values[1] = Int64GetDatum(gen);
	values[2] = Int32GetDatum(level);
	values[3] = Int64GetDatum(entries);
	values[4] = Int64GetDatum(pages);
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

/*
 * simhash_index_runs(regclass): the index's pending buffer and its runs, a
 * row each (kind, generation, level, entries, pages), largest run first.
 */
PG_FUNCTION_INFO_V1(simhash_index_runs);
Datum
simhash_index_runs(PG_FUNCTION_ARGS)
{
	Oid					indexoid = PG_GETARG_OID(0);
	ReturnSetInfo	   *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Relation			index;
	SimhashMetaPageData meta;
	SimhashRun			runs[SIMHASH_MAX_RUNS];
	int64				prows;
	int					r;

	if (get_rel_name(indexoid) == NULL)
		ereport(ERROR, (errcode(ERRCODE_UNDEFINED_TABLE),
						errmsg("relation with OID %u does not exist", indexoid)));
	if (get_rel_relkind(indexoid) != RELKIND_INDEX)
		ereport(ERROR, (errcode(ERRCODE_WRONG_OBJECT_TYPE),
						errmsg("\"%s\" is not a simhash index", get_rel_name(indexoid))));
	index = index_open(indexoid, AccessShareLock);
	if (index->rd_rel->relam != get_index_am_oid("simhash", false))
		ereport(ERROR, (errcode(ERRCODE_WRONG_OBJECT_TYPE),
						errmsg("\"%s\" is not a simhash index", RelationGetRelationName(index))));
	InitMaterializedSRF(fcinfo, 0);
	simhash_read_meta(index, &meta);
	prows = simhash_pending_limit(index);
	memcpy(runs, meta.list.runs, sizeof(SimhashRun) * meta.list.nruns);
	qsort(runs, meta.list.nruns, sizeof(SimhashRun), simhash_run_cmp_desc);
	for (r = 0; r < meta.list.nruns; r++)
		put_row(rsinfo, "run", runs[r].gen, simhash_run_level(runs[r].count, prows),
				(int64) runs[r].count,
				(int64) meta.ntables * (runs[r].npages + SimhashDirPages(runs[r].npages)));
	put_row(rsinfo, "pending", -1, -1, (int64) simhash_meta_pending(&meta),
			chain_pages(index, meta.pending_head) + chain_pages(index, meta.sealed_head));
	put_row(rsinfo, "nulls", -1, -1, (int64) meta.nnulls, chain_pages(index, meta.nulls_head));
	/* a flush or merge under way, or interrupted by a crash (VACUUM cleans up) */
	if (meta.flush_gen != 0)
		put_row(rsinfo, "flush", meta.flush_gen, -1, 0, 0);
	if (meta.merge_gen != 0)
		put_row(rsinfo, "merge", meta.merge_gen, -1, 0, 0);
	/* a run VACUUM is removing dead entries from in place (or was, at a crash) */
	for (r = 0; r < meta.list.nruns; r++)
		if (meta.list.uneven[r])
			put_row(rsinfo, "clean", meta.list.runs[r].gen, -1, 0, 0);
	index_close(index, AccessShareLock);
	return (Datum) 0;
}
