/*
 * pages.c — page initialisation, allocation, retirement and recycling.
 *
 * New pages come from the FSM when a recyclable page is there, else by
 * extending the relation (directories of more than one page, which must be
 * contiguous, always extend).  The allocator never waits for the lock of a
 * page the FSM offers, so pending and NULLs pages may be taken under the
 * metapage lock.  The pages a flush or an INSERT's merge retires are
 * offered to the FSM by the same backend's next flush or merge, once they
 * are recyclable in its view, so that the next writer reuses them instead
 * of extending the file; VACUUM's merges reuse theirs through a
 * SimhashPagePool.  The allocator re-checks every page the FSM offers and
 * puts back one that must still wait.  VACUUM's sweep records every
 * recyclable page and cuts free pages off the end of the file.  See the
 * locking protocol in src/am/README.
 */
#include "simhash_am.h"
#include "page.h"

#include "access/xact.h"
#include "access/table.h"
#include "catalog/storage.h"
#include "commands/vacuum.h"
#include "miscadmin.h"
#include "storage/freespace.h"
#include "storage/indexfsm.h"
#include "storage/lmgr.h"
#include "storage/procarray.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"

/* FSM pages the allocator tries before it extends the relation. */
#define SIMHASH_FSM_TRIES 8
/* Free pages at the end of the file that VACUUM tries to cut off. */
#define SIMHASH_TRUNCATE_MIN 16

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

/*
 * Bring this backend's view of the heap's horizon up to date.  VACUUM works
 * under one snapshot, and GlobalVisCheckRemovableFullXid() recomputes the
 * horizon only when the backend took a newer one, so without this a VACUUM
 * would not see that the pages it retired a moment ago are no longer read
 * (as nbtree's _bt_pendingfsm_finalize does).
 */
void
simhash_refresh_horizon(Relation heap)
{
	(void) GetOldestNonRemovableTransactionId(heap);
}

/*
 * A new page at the end of the relation, exclusively locked.  It waits for
 * the relation extension lock: the caller holds no buffer lock.
 */
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
 * A recyclable page from the FSM, exclusively locked, or InvalidBuffer.  The
 * FSM may hand the same page to two backends; the conditional lock and the
 * re-check make only one of them keep it (the other sees it locked, or no
 * longer DELETED), as in nbtree.  A DELETED page that some snapshot may
 * still read goes back into the FSM for later.  Never waits for a lock.
 */
static Buffer
fsm_buffer(Relation index, Relation heap)
{
	for (int tries = 0; tries < SIMHASH_FSM_TRIES; tries++)
	{
		BlockNumber blkno = GetFreeIndexPage(index);
		Buffer		buf;
		bool		wait = false;

		if (blkno == InvalidBlockNumber)
			break;
		if (blkno >= RelationGetNumberOfBlocks(index))
			continue; /* an FSM entry older than a truncation */
		buf = ReadBuffer(index, blkno);
		if (ConditionalLockBuffer(buf))
		{
			Page page = BufferGetPage(buf);

			if (simhash_page_recyclable(heap, page))
				return buf;
			wait = (SimhashPageGetOpaque(page)->flags & SIMHASH_DELETED) != 0;
			LockBuffer(buf, BUFFER_LOCK_UNLOCK);
		}
		ReleaseBuffer(buf);
		if (wait)
			RecordFreeIndexPage(index, blkno);
	}
	return InvalidBuffer;
}

/*
 * A page for a run, exclusively locked: a recyclable page from the FSM when
 * use_fsm, else a new one.  May wait for the relation extension lock: the
 * caller holds no buffer lock.
 */
Buffer
simhash_alloc_buffer(Relation index, Relation heap, bool use_fsm)
{
	Buffer buf = use_fsm ? fsm_buffer(index, heap) : InvalidBuffer;

	return BufferIsValid(buf) ? buf : simhash_extend_buffer(index);
}

/*
 * A page, exclusively locked, without waiting for any lock (the caller holds
 * the metapage lock): from the FSM, or a new one if the relation extension
 * lock is free at once; InvalidBuffer otherwise.
 */
Buffer
simhash_alloc_buffer_nowait(Relation index, Relation heap)
{
	Buffer buf = fsm_buffer(index, heap);

	if (BufferIsValid(buf) || !ConditionalLockRelationForExtension(index, ExclusiveLock))
		return buf;
	buf = ReadBuffer(index, P_NEW);
	LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
	UnlockRelationForExtension(index, ExclusiveLock);
	return buf;
}

/*
 * Give back a page allocated and not used (still new, or DELETED and
 * recyclable), exclusively locked: it goes into the FSM.
 */
void
simhash_free_unused(Relation index, Buffer buf)
{
	BlockNumber blkno = BufferGetBlockNumber(buf);

	UnlockReleaseBuffer(buf);
	RecordFreeIndexPage(index, blkno);
}

/*
 * After a batch of simhash_delete_page(): let searches of the FSM find the
 * pages (recording a page updates the FSM's bottom level only), and make
 * them start from the lowest free page, which packs the index towards the
 * start of the file and leaves free pages at its end for VACUUM to cut off.
 */
void
simhash_fsm_update(Relation index)
{
	IndexFreeSpaceMapVacuum(index);
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

/*
 * Pages this backend's flushes and INSERT merges retired, for one index:
 * offered to the FSM by its next flush or merge once its own view of the
 * horizon says they are recyclable (not at once: a statement's own
 * snapshot keeps what it retired readable, and offering such pages would
 * make every allocation of the statement skip them and extend the file).
 * Pages still listed when the backend exits, or moves to another index,
 * are recorded by VACUUM's sweep.
 */
static SimhashRelFile	  deferred_node;
static BlockNumber		 *deferred;
static FullTransactionId *deferred_xid; /* their safexids */
static int				  ndeferred, deferred_cap;

#define SIMHASH_DEFERRED_MAX 65536

/* List a page this backend retired (outside VACUUM's pool) for the FSM. */
void
simhash_defer_free(Relation index, BlockNumber blkno, FullTransactionId safexid)
{
	if (!SimhashRelFileEquals(deferred_node, SimhashRelationFile(index)))
	{
		deferred_node = SimhashRelationFile(index);
		ndeferred = 0;
	}
	if (ndeferred == deferred_cap)
	{
		if (deferred_cap >= SIMHASH_DEFERRED_MAX)
			return; /* VACUUM's sweep will find it */
		deferred_cap = Max(1024, deferred_cap * 2);
		deferred = deferred
					   ? repalloc(deferred, sizeof(BlockNumber) * deferred_cap)
					   : MemoryContextAlloc(TopMemoryContext, sizeof(BlockNumber) * deferred_cap);
		deferred_xid =
			deferred_xid
				? repalloc(deferred_xid, sizeof(FullTransactionId) * deferred_cap)
				: MemoryContextAlloc(TopMemoryContext, sizeof(FullTransactionId) * deferred_cap);
	}
	deferred[ndeferred] = blkno;
	deferred_xid[ndeferred] = safexid;
	ndeferred++;
}

/* Offer the deferred pages that are recyclable now to the FSM. */
void
simhash_record_deferred(Relation index, Relation heap)
{
	int			kept = 0, recorded = 0;
	BlockNumber nblocks;

	if (ndeferred == 0 || !SimhashRelFileEquals(deferred_node, SimhashRelationFile(index)))
		return;
	nblocks = RelationGetNumberOfBlocks(index);
	for (int i = 0; i < ndeferred; i++)
	{
		if (deferred[i] >= nblocks)
			continue;
		if (GlobalVisCheckRemovableFullXid(heap, deferred_xid[i]))
		{
			RecordFreeIndexPage(index, deferred[i]);
			recorded++;
		}
		else
		{
			deferred[kept] = deferred[i];
			deferred_xid[kept] = deferred_xid[i];
			kept++;
		}
	}
	ndeferred = kept;
	if (recorded > 0)
		simhash_fsm_update(index);
}

/* ---- a VACUUM merge's own retired pages ---------------------------------- */

/* Remember a page a VACUUM merge retired (of a run of generation gen). */
void
simhash_pool_add(SimhashPagePool *pool, BlockNumber blkno, uint32 gen)
{
	if (pool->n == pool->cap)
	{
		pool->cap = Max(256, pool->cap * 2);
		pool->pages = pool->pages
						  ? repalloc(pool->pages, sizeof(SimhashPooledPage) * pool->cap)
						  : MemoryContextAlloc(pool->cxt, sizeof(SimhashPooledPage) * pool->cap);
	}
	pool->pages[pool->n].blkno = blkno;
	pool->pages[pool->n].gen = gen;
	pool->n++;
}

/* Pooled pages by block number, highest first: the lowest is taken first. */
static int
pooled_cmp(const void *a, const void *b)
{
	BlockNumber x = ((const SimhashPooledPage *) a)->blkno;
	BlockNumber y = ((const SimhashPooledPage *) b)->blkno;

	return x > y ? -1 : x < y ? 1 : 0;
}

/*
 * After a batch of retirements (a table switched over): the transactions
 * that have a snapshot now are the ones that may still read the pages, as a
 * scan copies the run list under its snapshot.  Lazy VACUUMs (ours and
 * others) read no run of this index through a snapshot.
 */
void
simhash_pool_seal(SimhashPagePool *pool)
{
	MemoryContext old;

	qsort(pool->pages, pool->n, sizeof(SimhashPooledPage), pooled_cmp);
	old = MemoryContextSwitchTo(pool->cxt);
	if (pool->vxids)
		pfree(pool->vxids);
	pool->vxids =
		GetCurrentVirtualXIDs(InvalidTransactionId, true, false, PROC_IN_VACUUM, &pool->nvxids);
	MemoryContextSwitchTo(old);
	pool->safe = false;
	pool->takes = 0;
}

/*
 * Have the transactions of the last seal all ended, or dropped the snapshot
 * they had then?  (Checked every 32 takes.)  The caller holds the merge
 * lock, under which no heavyweight lock but relation extension is taken
 * (src/am/README, lock order): so this reads the proc array (an LWLock),
 * never the lock manager.  VirtualXactLock, even without waiting, takes a
 * transaction lock when a listed transaction has since been prepared.
 * A transaction that still has a snapshot (xmin set) keeps its place; one
 * whose statement ended took any newer snapshot after the seal, so its
 * scans read the new run list.  Sealed entries that are gone are dropped,
 * so each check costs less.
 */
static bool
pool_safe(SimhashPagePool *pool)
{
	if (!pool->safe && pool->takes++ % 32 == 0)
	{
		int					  nnow, kept = 0;
		VirtualTransactionId *now =
			GetCurrentVirtualXIDs(InvalidTransactionId, true, false, PROC_IN_VACUUM, &nnow);

		for (int i = 0; i < pool->nvxids; i++)
			for (int j = 0; j < nnow; j++)
				if (VirtualTransactionIdEquals(pool->vxids[i], now[j]))
				{
					pool->vxids[kept++] = pool->vxids[i];
					break;
				}
		pfree(now);
		pool->nvxids = kept;
		pool->safe = kept == 0;
	}
	return pool->safe;
}

/* A page of the pool, exclusively locked, or InvalidBuffer. */
Buffer
simhash_pool_take(SimhashPagePool *pool, Relation index)
{
	while (pool->n > 0 && pool_safe(pool))
	{
		SimhashPooledPage *pp = &pool->pages[--pool->n];
		Buffer			   buf = ReadBuffer(index, pp->blkno);

		if (ConditionalLockBuffer(buf))
		{
			SimhashPageOpaque opaque = SimhashPageGetOpaque(BufferGetPage(buf));

			/*
			 * Still as the merge retired it: nobody took it from the FSM
			 * meanwhile (a page taken and retired again, by a flush, would
			 * have another generation; no other merge runs).
			 */
			if (!PageIsNew(BufferGetPage(buf)) && opaque->flags == SIMHASH_DELETED &&
				opaque->gen == pp->gen)
			{
				RecordUsedIndexPage(index, pp->blkno); /* retirement recorded it free */
				return buf;
			}
			LockBuffer(buf, BUFFER_LOCK_UNLOCK);
		}
		ReleaseBuffer(buf);
	}
	return InvalidBuffer;
}

/*
 * May the truncation treat this DELETED page as free: is it one of the
 * pool's, whose readers have all ended?
 */
bool
simhash_pool_free(SimhashPagePool *pool, BlockNumber blkno, Page page)
{
	int lo = 0, hi = pool->n;

	if (pool->n == 0 || PageIsNew(page) || SimhashPageGetOpaque(page)->flags != SIMHASH_DELETED)
		return false;
	pool->takes = 0; /* check now */
	if (!pool_safe(pool))
		return false;
	/* sorted by block number, highest first */
	while (lo < hi)
	{
		int mid = lo + (hi - lo) / 2;

		if (pool->pages[mid].blkno > blkno)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < pool->n && pool->pages[lo].blkno == blkno &&
		   pool->pages[lo].gen == SimhashPageGetOpaque(page)->gen;
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

/* simhash_truncate_tail's work, under the AccessExclusiveLock it releases. */
static void
cut_tail(Relation index, Relation heap, SimhashPagePool *pool)
{
	BlockNumber nblocks, keep;

	/* under the lock nobody reads, allocates or extends: check the tail again */
	nblocks = RelationGetNumberOfBlocks(index);
	for (keep = nblocks; keep > SIMHASH_RUNLIST_BLKNO + 1; keep--)
	{
		Buffer buf = ReadBuffer(index, keep - 1);
		bool   free_page;

		LockBuffer(buf, BUFFER_LOCK_SHARE);
		free_page = simhash_page_recyclable(heap, BufferGetPage(buf)) ||
					(pool && simhash_pool_free(pool, keep - 1, BufferGetPage(buf)));
		UnlockReleaseBuffer(buf);
		if (!free_page)
			break;
	}
	if (keep < nblocks)
		RelationTruncate(index, keep);
	UnlockRelation(index, AccessExclusiveLock);
}

/*
 * Cut the free pages at the end of the file off, if no one else has the
 * index open for a moment (a conditional AccessExclusiveLock, as VACUUM
 * truncates a heap; the lock is WAL-logged, so hot standby queries reading
 * the index conflict with the truncation as with a heap's).  `last` is the
 * last block the sweep found in use.  The caller holds neither the flush
 * nor the merge lock (no heavyweight lock is taken under those page locks);
 * the tail is checked again under the relation lock.  Not in a parallel
 * VACUUM (the lock needs a transaction id, which parallel mode cannot
 * assign).  stats may be NULL.
 */
void
simhash_truncate_tail(Relation index, Relation heap, SimhashPagePool *pool, BlockNumber last,
					  IndexBulkDeleteResult *stats)
{
	BlockNumber nblocks;

	nblocks = RelationGetNumberOfBlocks(index);
	if (!IsInParallelMode() && nblocks >= last + 1 + SIMHASH_TRUNCATE_MIN &&
		ConditionalLockRelation(index, AccessExclusiveLock))
		cut_tail(index, heap, pool);
	if (stats)
	{
		BlockNumber now = RelationGetNumberOfBlocks(index);

		stats->num_pages = now;
		/* the pages cut off were free ones */
		stats->pages_free -= Min(stats->pages_free, nblocks > now ? nblocks - now : 0);
	}
}

/*
 * VACUUM's sweep: put recyclable pages into the FSM and retire RUN, DIR and
 * PENDING pages that nothing references (left by a flush or merge that
 * failed before switching the metapage, or whose retirement a crash
 * interrupted).  The caller holds the merge lock, so no merge is under way;
 * a flush may be, and its generation is in the metapage.  Returns the last
 * block found in use, for simhash_truncate_tail (called once the merge lock
 * is released).  stats may be NULL.
 */
BlockNumber
simhash_recycle_pages(Relation index, Relation heap, BufferAccessStrategy strategy,
					  SimhashPagePool *pool, IndexBulkDeleteResult *stats)
{
	SimhashMetaPageData meta;
	BlockNumber			nblocks = RelationGetNumberOfBlocks(index);
	BlockNumber			last = SIMHASH_RUNLIST_BLKNO, nfree = 0;
	SimhashBlockRange	range = {SIMHASH_RUNLIST_BLKNO + 1, nblocks};
	SimhashReader	   *reader;
	Buffer				buf;

	simhash_read_meta(index, &meta);
	/* every page after the run list, read ahead where the server can */
	reader = simhash_reader_begin(index, strategy, simhash_block_range_next, &range);
	while ((buf = simhash_reader_next(reader)) != InvalidBuffer)
	{
		BlockNumber		  blkno = BufferGetBlockNumber(buf);
		Page			  page;
		SimhashPageOpaque opaque;
		bool			  orphan = false;

		simhash_vacuum_delay_point();
		if ((blkno & 1023) == SIMHASH_RUNLIST_BLKNO + 1)
			simhash_refresh_horizon(heap);
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buf);
		if (simhash_page_recyclable(heap, page) || (pool && simhash_pool_free(pool, blkno, page)))
		{
			RecordFreeIndexPage(index, blkno);
			nfree++;
		}
		else
		{
			/* not new (a new page is recyclable): its trailer can be read */
			opaque = SimhashPageGetOpaque(page);
			last = blkno;
			orphan = (opaque->flags & (SIMHASH_RUN | SIMHASH_DIR | SIMHASH_PENDING)) &&
					 !gen_in_use(&meta, opaque->flags, opaque->gen);
			/* a page in use that the FSM lists (it was taken without the FSM) */
			if (!(opaque->flags & SIMHASH_DELETED) && GetRecordedFreeSpace(index, blkno) > 0)
				RecordUsedIndexPage(index, blkno);
		}
		UnlockReleaseBuffer(buf);
		if (orphan)
			simhash_delete_page(index, blkno, ReadNextFullTransactionId(), strategy);
	}
	simhash_reader_end(reader);
	IndexFreeSpaceMapVacuum(index);
	if (stats)
	{
		stats->num_pages = nblocks;
		stats->pages_free = nfree;
	}
	return last;
}

/*
 * The number of entries of `size` bytes on an entry or directory page: its
 * special space must be where this access method puts it, and pd_lower inside
 * the contents at an entry boundary, so that no read or write goes past the
 * page.  PostgreSQL's own page check lets pd_lower be anything up to pd_upper.
 */
int
simhash_page_nentries(Relation index, BlockNumber blkno, Page page, Size size)
{
	PageHeader ph = (PageHeader) page;
	Size	   first = MAXALIGN(SizeOfPageHeaderData);

	if (ph->pd_special != SIMHASH_SPECIAL_OFFSET || ph->pd_lower < first ||
		ph->pd_lower > ph->pd_special || (ph->pd_lower - first) % size != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("simhash index \"%s\" is corrupted at block %u",
						RelationGetRelationName(index), blkno),
				 errdetail_internal("The page's bounds (pd_lower %u, pd_special %u) are invalid.",
									ph->pd_lower, ph->pd_special),
				 errhint("REINDEX the index; simhash_index_check() describes the damage.")));
	return (int) ((ph->pd_lower - first) / size);
}

/* A private copy of block blkno, read through the strategy. */
void
simhash_read_copy(Relation index, BlockNumber blkno, BufferAccessStrategy strategy, Page copy)
{
	Buffer buf = ReadBufferExtended(index, MAIN_FORKNUM, blkno, RBM_NORMAL, strategy);

	LockBuffer(buf, BUFFER_LOCK_SHARE);
	memcpy(copy, BufferGetPage(buf), BLCKSZ);
	UnlockReleaseBuffer(buf);
}
