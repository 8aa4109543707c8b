/*
 * pages.c — page initialisation, allocation, retirement and recycling.
 *
 * Run pages come from the FSM when a recyclable page is there, else by
 * extending the relation; pending and NULLs pages always extend (they are
 * allocated under the metapage lock, where waiting on an FSM page's lock
 * would be unwise).  See the locking protocol in simhash_am.h.
 */
#include "simhash_am.h"

#include "access/table.h"
#include "commands/vacuum.h"
#include "miscadmin.h"
#include "storage/indexfsm.h"
#include "storage/lmgr.h"
#include "utils/snapmgr.h"

/* An empty page of the given kind, with the page id at its end. */
void
simhash_init_page(Page page, uint16 flags)
{
	SimhashPageOpaque opaque;

	PageInit(page, BLCKSZ, sizeof(SimhashPageOpaqueData));
	opaque = SimhashPageGetOpaque(page);
	opaque->flags = flags;
	opaque->next = InvalidBlockNumber;
	opaque->page_id = SIMHASH_PAGE_ID;
}

/* The metapage of an empty index of the given layout. */
void
simhash_init_metapage(Page page, int bits, int blocks, int ntables)
{
	SimhashMetaPage meta;

	simhash_init_page(page, SIMHASH_META);
	meta = SimhashPageGetMeta(page);
	memset(meta, 0, SIMHASH_META_SIZE);
	meta->magic = SIMHASH_MAGIC;
	meta->version = SIMHASH_VERSION;
	meta->bits = bits;
	meta->blocks = blocks;
	meta->ntables = ntables;
	meta->pending_head = meta->pending_tail = InvalidBlockNumber;
	meta->sealed_head = InvalidBlockNumber;
	meta->nulls_head = meta->nulls_tail = InvalidBlockNumber;
	((PageHeader) page)->pd_lower = (char *) meta + SIMHASH_META_SIZE - (char *) page;
}

/* The run list of an index without runs (block 1). */
void
simhash_init_runlist(Page page)
{
	SimhashRunList *list;
	int				i;

	simhash_init_page(page, SIMHASH_RUNLIST);
	list = SimhashPageGetRunList(page);
	memset(list, 0, sizeof(SimhashRunList));
	for (i = 0; i < SIMHASH_RUN_SLOTS; i++)
		list->run_dir[i] = InvalidBlockNumber;
	((PageHeader) page)->pd_lower = (char *) list + sizeof(SimhashRunList) - (char *) page;
}

/*
 * The table the index belongs to, opened without a new lock: every caller
 * (aminsert, VACUUM, the build) already holds one on it.  Its visibility
 * horizon is this database's, not the cluster's.
 */
Relation
simhash_open_heap(Relation index)
{
	return table_open(index->rd_index->indrelid, NoLock);
}

/*
 * May the page be reused?  A new page, or a DELETED one that no snapshot of
 * the heap's database can still read (GlobalVisCheckRemovableFullXid with
 * the heap, as nbtree's page recycling does from PostgreSQL 16 on).
 */
bool
simhash_page_recyclable(Relation heap, Page page)
{
	SimhashPageOpaque opaque;

	if (PageIsNew(page))
		return true;
	opaque = SimhashPageGetOpaque(page);
	return (opaque->flags & SIMHASH_DELETED) != 0 &&
		   GlobalVisCheckRemovableFullXid(heap, opaque->safexid);
}

/* A new page at the end of the relation, exclusively locked. */
Buffer
simhash_extend_buffer(Relation index)
{
	Buffer buf;

	LockRelationForExtension(index, ExclusiveLock);
	buf = ReadBuffer(index, P_NEW);
	LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
	UnlockRelationForExtension(index, ExclusiveLock);
	return buf;
}

/*
 * A page for a run, exclusively locked: a recyclable page from the FSM when
 * use_fsm, else a new one.  The FSM may hand the same page to two backends;
 * the conditional lock and the re-check make only one of them keep it (the
 * other sees it locked, or no longer DELETED), as in nbtree.
 */
Buffer
simhash_alloc_buffer(Relation index, Relation heap, bool use_fsm)
{
	while (use_fsm)
	{
		BlockNumber blkno = GetFreeIndexPage(index);
		Buffer		buf;

		if (blkno == InvalidBlockNumber)
			break;
		buf = ReadBuffer(index, blkno);
		if (ConditionalLockBuffer(buf))
		{
			if (simhash_page_recyclable(heap, BufferGetPage(buf)))
				return buf;
			LockBuffer(buf, BUFFER_LOCK_UNLOCK);
		}
		ReleaseBuffer(buf);
	}
	return simhash_extend_buffer(index);
}

/*
 * Mark a page DELETED, recyclable once no scan can still be reading it
 * (strategy: VACUUM's buffer access strategy, or NULL).
 */
void
simhash_delete_page(Relation index, BlockNumber blkno, FullTransactionId safexid,
					BufferAccessStrategy strategy)
{
	Buffer			  buf = ReadBufferExtended(index, MAIN_FORKNUM, blkno, RBM_NORMAL, strategy);
	GenericXLogState *state;
	SimhashPageOpaque opaque;

	LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
	state = GenericXLogStart(index);
	opaque = SimhashPageGetOpaque(GenericXLogRegisterBuffer(state, buf, 0));
	opaque->flags = SIMHASH_DELETED;
	opaque->safexid = safexid;
	GenericXLogFinish(state);
	UnlockReleaseBuffer(buf);
}

/* Is a page of this generation referenced, or being written? */
static bool
gen_in_use(const SimhashMetaPageData *meta, uint16 flags, uint32 gen)
{
	int r;

	if (gen > meta->gen_seq || gen == meta->flush_gen || gen == meta->merge_gen)
		return true;
	if (flags & SIMHASH_PENDING)
		return gen == meta->pending_chain || gen == meta->sealed_chain;
	for (r = 0; r < meta->list.nruns; r++)
		if (meta->list.runs[r].gen == gen)
			return true;
	return false;
}

/*
 * VACUUM's sweep: put recyclable pages into the FSM, and retire RUN, DIR and
 * PENDING pages that nothing references (left by a flush or merge that
 * failed before switching the metapage, or whose retirement a crash
 * interrupted).  The caller holds the merge lock, so no merge is under way;
 * a flush may be, and its generation is in the metapage.  stats may be NULL.
 */
void
simhash_recycle_pages(Relation index, Relation heap, BufferAccessStrategy strategy,
					  IndexBulkDeleteResult *stats)
{
	SimhashMetaPageData meta;
	BlockNumber			nblocks = RelationGetNumberOfBlocks(index);
	BlockNumber			blkno;

	simhash_read_meta(index, &meta);
	if (stats)
		stats->pages_free = 0;
	for (blkno = SIMHASH_RUNLIST_BLKNO + 1; blkno < nblocks; blkno++)
	{
		Buffer			  buf;
		Page			  page;
		SimhashPageOpaque opaque;
		bool			  orphan = false;

		vacuum_delay_point();
		buf = ReadBufferExtended(index, MAIN_FORKNUM, blkno, RBM_NORMAL, strategy);
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buf);
		opaque = SimhashPageGetOpaque(page);
		if (simhash_page_recyclable(heap, page))
		{
			RecordFreeIndexPage(index, blkno);
			if (stats)
				stats->pages_free++;
		}
		else if ((opaque->flags & (SIMHASH_RUN | SIMHASH_DIR | SIMHASH_PENDING)) &&
				 !gen_in_use(&meta, opaque->flags, opaque->gen))
			orphan = true;
		UnlockReleaseBuffer(buf);
		if (orphan)
			simhash_delete_page(index, blkno, ReadNextFullTransactionId(), strategy);
	}
	if (stats)
		stats->num_pages = nblocks;
	IndexFreeSpaceMapVacuum(index);
}
