/*
 * vacuum.c — bulk delete (flush the pending buffer without its dead
 * entries, rewrite the runs that hold dead TIDs) and cleanup (flush,
 * compact the runs, recycle retired pages through the FSM).
 */
#include "simhash_am.h"

#include "access/table.h"
#include "commands/vacuum.h"
#include "miscadmin.h"
#include "storage/lmgr.h"

typedef struct DeadState
{
	IndexBulkDeleteCallback callback;
	void				   *state;
} DeadState;

/* VACUUM's dead-TID callback, in the shape the run merge takes. */
static bool
is_dead(ItemPointer tid, void *arg)
{
	DeadState *ds = (DeadState *) arg;

	return ds->callback(tid, ds->state);
}

/*
 * Remove dead TIDs in place from a chain (pending, sealed or NULLs); returns
 * how many were removed.
 */
static uint64
vacuum_chain(IndexVacuumInfo *info, BlockNumber blkno, DeadState *ds, IndexBulkDeleteResult *stats)
{
	uint64 removed = 0;

	while (BlockNumberIsValid(blkno))
	{
		Buffer buf =
			ReadBufferExtended(info->index, MAIN_FORKNUM, blkno, RBM_NORMAL, info->strategy);
		GenericXLogState *state;
		Page			  page;
		int				  n, i, kept = 0;

		vacuum_delay_point();
		LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
		state = GenericXLogStart(info->index);
		page = GenericXLogRegisterBuffer(state, buf, 0);
		n = SimhashPageEntries(page);
		for (i = 0; i < n; i++)
		{
			char		   *ent = SimhashPageEntry(page, i);
			ItemPointerData tid;

			simhash_entry_tid(ent, &tid);
			if (is_dead(&tid, ds))
			{
				stats->tuples_removed += 1;
				removed++;
				continue;
			}
			if (kept != i)
				memmove(SimhashPageEntry(page, kept), ent, SIMHASH_ENTRY_SIZE);
			kept++;
		}
		blkno = SimhashPageGetOpaque(page)->next;
		if (kept != n)
		{
			((PageHeader) page)->pd_lower =
				MAXALIGN(SizeOfPageHeaderData) + kept * SIMHASH_ENTRY_SIZE;
			GenericXLogFinish(state);
		}
		else
			GenericXLogAbort(state);
		UnlockReleaseBuffer(buf);
	}
	return removed;
}

/* Subtract removed entries from the chains' counts in the metapage. */
static void
uncount(Relation index, uint64 pending, uint64 sealed, uint64 nulls)
{
	Buffer			  metabuf;
	GenericXLogState *state;
	SimhashMetaPage	  m;

	if (pending + sealed + nulls == 0)
		return;
	metabuf = ReadBuffer(index, SIMHASH_METAPAGE_BLKNO);
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	state = GenericXLogStart(index);
	m = SimhashPageGetMeta(GenericXLogRegisterBuffer(state, metabuf, 0));
	m->npending -= Min(pending, m->npending);
	m->nsealed -= Min(sealed, m->nsealed);
	m->nnulls -= Min(nulls, m->nnulls);
	GenericXLogFinish(state);
	UnlockReleaseBuffer(metabuf);
}

/* The index's entry count (runs, pending buffer and NULLs) into stats. */
static void
count_tuples(Relation index, IndexBulkDeleteResult *stats)
{
	SimhashMetaPageData meta;

	simhash_read_meta(index, &meta);
	stats->num_index_tuples = simhash_meta_rows(&meta) + (double) meta.nnulls;
}

/*
 * ambulkdelete: remove the dead TIDs from the pending buffer (by flushing it
 * without them), the NULLs chain and every run that holds one.
 */
IndexBulkDeleteResult *
simhash_bulkdelete(IndexVacuumInfo *info, IndexBulkDeleteResult *stats,
				   IndexBulkDeleteCallback callback, void *callback_state)
{
	Relation			index = info->index;
	Relation			heap = simhash_open_heap(index);
	DeadState			ds = {callback, callback_state};
	SimhashMetaPageData meta;
	uint64				pending = 0, sealed = 0, nulls;

	if (stats == NULL)
		stats = palloc0(sizeof(IndexBulkDeleteResult));

	/*
	 * The pending buffer: flushed without its dead entries, or cleaned in
	 * place if the run list is full.  Under the flush lock, so that no flush
	 * copies a dead entry into a run meanwhile; entries inserted later are
	 * not dead (their heap tuples outlive this VACUUM's scan).
	 */
	LockPage(index, SIMHASH_FLUSH_LOCK, ExclusiveLock);
	if (!simhash_flush(index, heap, is_dead, &ds, stats))
	{
		simhash_read_meta(index, &meta);
		pending = vacuum_chain(info, meta.pending_head, &ds, stats);
		sealed = vacuum_chain(info, meta.sealed_head, &ds, stats);
		uncount(index, pending, sealed, 0);
	}
	UnlockPage(index, SIMHASH_FLUSH_LOCK, ExclusiveLock);
	simhash_read_meta(index, &meta);
	nulls = vacuum_chain(info, meta.nulls_head, &ds, stats);
	uncount(index, 0, 0, nulls);

	/* the runs: compaction drops dead entries, other runs holding one are rewritten */
	LockPage(index, SIMHASH_MERGE_LOCK, ExclusiveLock);
	simhash_compact(index, heap, is_dead, &ds, info->strategy, stats);
	UnlockPage(index, SIMHASH_MERGE_LOCK, ExclusiveLock);

	count_tuples(index, stats);
	table_close(heap, NoLock);
	return stats;
}

/*
 * amvacuumcleanup: flush the pending buffer, forget a flush or merge a crash
 * interrupted, compact the runs (simhash_compact) and recycle the pages no
 * scan can still read.
 */
IndexBulkDeleteResult *
simhash_vacuumcleanup(IndexVacuumInfo *info, IndexBulkDeleteResult *stats)
{
	Relation index = info->index;
	Relation heap;

	if (info->analyze_only)
		return stats;
	heap = simhash_open_heap(index);
	if (stats == NULL)
		stats = palloc0(sizeof(IndexBulkDeleteResult));
	LockPage(index, SIMHASH_FLUSH_LOCK, ExclusiveLock);
	simhash_flush(index, heap, NULL, NULL, NULL);
	simhash_clear_interrupted(index, true);
	UnlockPage(index, SIMHASH_FLUSH_LOCK, ExclusiveLock);

	LockPage(index, SIMHASH_MERGE_LOCK, ExclusiveLock);
	simhash_clear_interrupted(index, false);
	simhash_compact(index, heap, NULL, NULL, info->strategy, NULL);
	simhash_recycle_pages(index, heap, info->strategy, stats);
	UnlockPage(index, SIMHASH_MERGE_LOCK, ExclusiveLock);

	count_tuples(index, stats);
	table_close(heap, NoLock);
	return stats;
}
