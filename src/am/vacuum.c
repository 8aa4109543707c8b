/*
 * vacuum.c — bulk delete (a merge that drops dead TIDs), cleanup (merge of
 * a pending list, recycling of retired pages into the FSM).
 */
#include "simhash_am.h"

#include "commands/vacuum.h"
#include "miscadmin.h"
#include "storage/indexfsm.h"
#include "storage/lmgr.h"

typedef struct DeadState
{
	IndexBulkDeleteCallback callback;
	void	   *state;
} DeadState;

static bool
is_dead(ItemPointer tid, void *arg)
{
	DeadState  *ds = (DeadState *) arg;

	return ds->callback(tid, ds->state);
}

IndexBulkDeleteResult *
simhash_bulkdelete(IndexVacuumInfo *info, IndexBulkDeleteResult *stats,
				   IndexBulkDeleteCallback callback, void *callback_state)
{
	DeadState	ds = {callback, callback_state};

	if (stats == NULL)
		stats = palloc0(sizeof(IndexBulkDeleteResult));
	/* a second pass of the same VACUUM recounts what is left */
	stats->num_index_tuples = 0;
	LockPage(info->index, SIMHASH_METAPAGE_BLKNO, ExclusiveLock);
	simhash_merge(info->index, is_dead, &ds, stats);
	UnlockPage(info->index, SIMHASH_METAPAGE_BLKNO, ExclusiveLock);
	return stats;
}

static bool
in_current_run(const SimhashMetaPageData *meta, BlockNumber blkno, int table)
{
	return table < meta->ntables && BlockNumberIsValid(meta->run_start[table]) &&
		blkno >= meta->run_start[table] &&
		blkno < meta->run_start[table] + SimhashExtentPages(meta->run_npages);
}

/*
 * Put recyclable pages into the FSM; retire RUN/DIR pages no run references
 * (written by a merge that failed before switching the metapage).  Runs
 * under the merge lock.  stats may be NULL.
 */
void
simhash_recycle_pages(Relation index, IndexBulkDeleteResult *stats)
{
	SimhashMetaPageData meta;
	BlockNumber nblocks = RelationGetNumberOfBlocks(index);
	BlockNumber blkno;

	simhash_read_meta(index, &meta);
	if (stats)
		stats->pages_free = 0;
	for (blkno = SIMHASH_METAPAGE_BLKNO + 1; blkno < nblocks; blkno++)
	{
		Buffer		buf;
		Page		page;
		bool		orphan = false;

		CHECK_FOR_INTERRUPTS();
		buf = ReadBuffer(index, blkno);
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buf);
		if (simhash_page_recyclable(page))
		{
			RecordFreeIndexPage(index, blkno);
			if (stats)
				stats->pages_free++;
		}
		else if ((SimhashPageGetOpaque(page)->flags & (SIMHASH_RUN | SIMHASH_DIR)) &&
				 !in_current_run(&meta, blkno, SimhashPageGetOpaque(page)->table))
			orphan = true;
		UnlockReleaseBuffer(buf);
		if (orphan)
		{
			GenericXLogState *state;
			SimhashPageOpaque opaque;

			buf = ReadBuffer(index, blkno);
			LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
			state = GenericXLogStart(index);
			opaque = SimhashPageGetOpaque(GenericXLogRegisterBuffer(state, buf, 0));
			opaque->flags = SIMHASH_DELETED;
			opaque->safexid = ReadNextFullTransactionId();
			GenericXLogFinish(state);
			UnlockReleaseBuffer(buf);
		}
	}
	if (stats)
		stats->num_pages = nblocks;
	IndexFreeSpaceMapVacuum(index);
}

IndexBulkDeleteResult *
simhash_vacuumcleanup(IndexVacuumInfo *info, IndexBulkDeleteResult *stats)
{
	Relation	index = info->index;

	if (info->analyze_only)
		return stats;
	LockPage(index, SIMHASH_METAPAGE_BLKNO, ExclusiveLock);
	if (stats == NULL)
	{
		SimhashMetaPageData meta;

		stats = palloc0(sizeof(IndexBulkDeleteResult));
		simhash_read_meta(index, &meta);
		if (meta.npending > 0 || BlockNumberIsValid(meta.sealed_head))
			simhash_merge(index, NULL, NULL, NULL);
		simhash_read_meta(index, &meta);
		stats->num_index_tuples = meta.run_count + meta.npending + meta.nnulls;
	}
	simhash_recycle_pages(index, stats);
	UnlockPage(index, SIMHASH_METAPAGE_BLKNO, ExclusiveLock);
	return stats;
}
