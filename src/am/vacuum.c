/*
 * vacuum.c — bulk delete (flush the pending buffer without its dead
 * entries, remove dead TIDs from the runs' pages in place) and cleanup
 * (flush, compact the runs, rewrite runs left sparse, recycle retired pages
 * through the FSM, cut free pages off the end of the file).
 */
#include "simhash_am.h"
#include "runs.h"

#include "access/table.h"
#include "commands/vacuum.h"
#include "miscadmin.h"
#include "storage/lmgr.h"

typedef struct DeadState
{
	IndexBulkDeleteCallback callback;
	void				   *state;
	Relation				index; /* for the message about a damaged entry */
} DeadState;

/*
 * VACUUM's dead-TID callback, in the shape the run merge takes.  A TID that
 * cannot be a heap tuple's (a damaged entry) is reported here, before the
 * table's dead-TID store sees it.
 */
static bool
is_dead(ItemPointer tid, void *arg)
{
	DeadState *ds = (DeadState *) arg;

	if (!ItemPointerIsValid(tid))
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("simhash index \"%s\" holds an invalid heap TID (%u,%u)",
						RelationGetRelationName(ds->index), ItemPointerGetBlockNumberNoCheck(tid),
						ItemPointerGetOffsetNumberNoCheck(tid)),
				 errhint("REINDEX the index.")));
	return ds->callback(tid, ds->state);
}

/*
 * Remove dead TIDs in place from a chain (pending, sealed or NULLs); returns
 * how many were removed.
 */
static uint64
vacuum_chain(IndexVacuumInfo *info, BlockNumber blkno, DeadState *ds, IndexBulkDeleteResult *stats)
{
	uint64		 removed = 0;
	SimhashChain walk;

	simhash_chain_begin(&walk, info->index, info->strategy, blkno, BUFFER_LOCK_EXCLUSIVE,
						SIMHASH_PENDING | SIMHASH_NULLS, -1, SIMHASH_PAGE_LIVE);
	walk.vacuum = true;
	while (simhash_chain_next(&walk) != NULL)
	{
		GenericXLogState *state = GenericXLogStart(info->index);
		Page			  page = GenericXLogRegisterBuffer(state, walk.buf, 0);
		int				  n, i, kept = 0;

		n = SimhashPageEntries(info->index, walk.blkno, page);
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
		if (kept != n)
		{
			((PageHeader) page)->pd_lower =
				MAXALIGN(SizeOfPageHeaderData) + kept * SIMHASH_ENTRY_SIZE;
			GenericXLogFinish(state);
		}
		else
			GenericXLogAbort(state);
	}
	return removed;
}

/*
 * Remove dead TIDs in place from every page of table t of run r; returns
 * the entries left.  Entries stay in (key, TID) order and the directory's
 * high keys stay upper bounds, so scans read the page as before; the page
 * counts what it lost (opaque->removed), so the scans' check that a page
 * holds what it was written with still holds.  *begun: the run was flagged
 * uneven before its first change.
 */
static uint64
clean_run_table(IndexVacuumInfo *info, const SimhashMetaPageData *meta, int r, int t, DeadState *ds,
				bool *begun)
{
	const SimhashRun *run = &meta->list.runs[r];
	uint64			  left = 0;
	SimhashDirWalk	  walk;
	SimhashReader	 *reader;
	Buffer			  buf;

	if (!simhash_run_has(meta, r, t))
		return 0;

	/* the run's pages in directory order, read ahead where the server can */
	simhash_dir_walk_init(&walk, info->index, info->strategy, meta, r, t);
	reader = simhash_reader_begin(info->index, info->strategy, simhash_dir_walk_next, &walk);
	while ((buf = simhash_reader_next(reader)) != InvalidBuffer)
	{
		BlockNumber blkno = BufferGetBlockNumber(buf);
		Page		page;
		int			n, i, first_dead = -1;

		simhash_vacuum_delay_point();
		LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
		page = BufferGetPage(buf);
		simhash_page_check(info->index, page, blkno, SIMHASH_RUN, run->gen, t, SIMHASH_PAGE_LIVE);
		n = SimhashPageEntries(info->index, blkno, page);
		for (i = 0; i < n && first_dead < 0; i++)
		{
			ItemPointerData tid;

			simhash_entry_tid(SimhashPageEntry(page, i), &tid);
			if (is_dead(&tid, ds))
				first_dead = i;
		}
		if (first_dead >= 0)
		{
			GenericXLogState *state;
			int				  kept = first_dead;

			if (!*begun)
			{
				/* the metapage is locked after this page: let go of it first */
				LockBuffer(buf, BUFFER_LOCK_UNLOCK);
				simhash_clean_begin(info->index, run->gen);
				*begun = true;
				LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
			}
			state = GenericXLogStart(info->index);
			page = GenericXLogRegisterBuffer(state, buf, 0);
			n = SimhashPageEntries(info->index, blkno, page);
			for (i = first_dead; i < n; i++)
			{
				char		   *ent = SimhashPageEntry(page, i);
				ItemPointerData tid;

				simhash_entry_tid(ent, &tid);
				if (is_dead(&tid, ds))
					continue;
				memmove(SimhashPageEntry(page, kept), ent, SIMHASH_ENTRY_SIZE);
				kept++;
			}
			SimhashPageGetOpaque(page)->removed += n - kept;
			((PageHeader) page)->pd_lower =
				MAXALIGN(SizeOfPageHeaderData) + kept * SIMHASH_ENTRY_SIZE;
			GenericXLogFinish(state);
			n = kept;
		}
		UnlockReleaseBuffer(buf);
		left += n;
	}
	simhash_reader_end(reader);
	return left;
}

/*
 * Remove dead TIDs from every run in place: no run is rewritten, so a
 * VACUUM after deletes writes no new pages (cleanup rewrites the runs left
 * less than half full).  The caller holds the merge lock.
 */
static void
clean_runs(IndexVacuumInfo *info, Relation heap, DeadState *ds, IndexBulkDeleteResult *stats)
{
	SimhashMetaPageData meta;
	uint32				gens[SIMHASH_MAX_RUNS];
	int					nruns;

	simhash_read_meta(info->index, &meta);
	nruns = meta.list.nruns;
	for (int r = 0; r < nruns; r++)
		gens[r] = meta.list.runs[r].gen;
	for (int g = 0; g < nruns; g++)
	{
		uint64 left0 = 0;
		bool   begun, uneven = false;
		int	   r;

		/* a run dropped because it emptied moves the others in the list */
		simhash_read_meta(info->index, &meta);
		for (r = 0; r < meta.list.nruns && meta.list.runs[r].gen != gens[g]; r++)
			;
		if (r == meta.list.nruns)
			continue;
		begun = meta.list.uneven[r] != 0;
		for (int t = 0; t < meta.ntables; t++)
		{
			uint64 left = clean_run_table(info, &meta, r, t, ds, &begun);

			if (t == 0)
				left0 = left;
			else if (left != left0)
				uneven = true;
		}
		if (begun)
		{
			stats->tuples_removed +=
				(double) (meta.list.runs[r].count - Min(left0, meta.list.runs[r].count));
			simhash_clean_end(info->index, heap, gens[g], left0, uneven, info->strategy);
		}
	}
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
	DeadState			ds = {callback, callback_state, index};
	SimhashMetaPageData meta;
	uint64				pending = 0, sealed = 0, nulls;
	double				removed_before;

	if (stats == NULL)
		stats = palloc0(sizeof(IndexBulkDeleteResult));
	removed_before = stats->tuples_removed;
	/* an index this release cannot read (older format: 55000) is left alone */
	simhash_read_meta(index, &meta);

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

	/* the runs: dead entries removed in place */
	LockPage(index, SIMHASH_MERGE_LOCK, ExclusiveLock);
	simhash_take_over_merge(index, heap, info->strategy, NULL);
	clean_runs(info, heap, &ds, stats);
	UnlockPage(index, SIMHASH_MERGE_LOCK, ExclusiveLock);

	/* no index-only scan may still return a TID removed here (src/am/README) */
	if (stats->tuples_removed > removed_before)
		simhash_vacuum_wait_for_scans(index);

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
	Relation			index = info->index;
	Relation			heap;
	SimhashMetaPageData meta;
	SimhashPagePool		pool = {0}; /* what its merges retire, for its merges */
	BlockNumber			last;

	if (info->analyze_only)
		return stats;
	simhash_read_meta(index, &meta); /* 55000 for an older format, as above */
	pool.cxt = CurrentMemoryContext;
	heap = simhash_open_heap(index);
	if (stats == NULL)
		stats = palloc0(sizeof(IndexBulkDeleteResult));
	LockPage(index, SIMHASH_FLUSH_LOCK, ExclusiveLock);
	simhash_flush(index, heap, NULL, NULL, NULL);
	simhash_clear_interrupted(index);
	UnlockPage(index, SIMHASH_FLUSH_LOCK, ExclusiveLock);

	LockPage(index, SIMHASH_MERGE_LOCK, ExclusiveLock);
	simhash_take_over_merge(index, heap, info->strategy, &pool);
	simhash_fsm_update(index);
	simhash_compact(index, heap, info->strategy, &pool);
	last = simhash_recycle_pages(index, heap, info->strategy, &pool, stats);
	UnlockPage(index, SIMHASH_MERGE_LOCK, ExclusiveLock);
	/* no heavyweight lock is taken under the merge lock: truncate after it */
	simhash_truncate_tail(index, heap, &pool, last, stats);

	count_tuples(index, stats);
	table_close(heap, NoLock);
	return stats;
}
