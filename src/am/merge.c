/*
 * merge.c — writing sorted runs (bulk build and merges) and the merge that
 * folds the pending list into the runs and drops dead entries.
 *
 * A merge rewrites every table: it reads table 0's run (every row once) and
 * the sealed pending chain into memory, 16 bytes per row, and sorts a copy
 * per table.  This memory is not bounded by maintenance_work_mem (see README).
 */
#include "simhash_am.h"

#include "commands/progress.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/indexfsm.h"
#include "storage/lmgr.h"
#include "utils/memutils.h"

/* Free pages taken from the FSM for a merge, sorted. */
typedef struct FreePages
{
	BlockNumber *blk;
	int			n;
	bool	   *used;
} FreePages;

static int
blkno_cmp(const void *a, const void *b)
{
	BlockNumber x = *(const BlockNumber *) a,
				y = *(const BlockNumber *) b;

	return x < y ? -1 : x > y ? 1 : 0;
}

static void
collect_free_pages(Relation index, FreePages *fp)
{
	int			cap = 64;

	simhash_recycle_pages(index, NULL);
	fp->n = 0;
	fp->blk = palloc(sizeof(BlockNumber) * cap);
	for (;;)
	{
		BlockNumber b = GetFreeIndexPage(index);
		Buffer		buf;
		bool		ok;

		if (b == InvalidBlockNumber)
			break;
		buf = ReadBuffer(index, b);
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		ok = simhash_page_recyclable(BufferGetPage(buf));
		UnlockReleaseBuffer(buf);
		if (!ok)
			continue;
		if (fp->n == cap)
		{
			cap *= 2;
			fp->blk = repalloc(fp->blk, sizeof(BlockNumber) * cap);
		}
		fp->blk[fp->n++] = b;
	}
	qsort(fp->blk, fp->n, sizeof(BlockNumber), blkno_cmp);
	fp->used = palloc0(sizeof(bool) * Max(fp->n, 1));
}

/* First-fit contiguous range of npages free pages, or InvalidBlockNumber. */
static BlockNumber
take_free_range(FreePages *fp, BlockNumber npages)
{
	int			i = 0;

	while (i < fp->n)
	{
		int			j = i;

		while (j < fp->n && !fp->used[j] && fp->blk[j] == fp->blk[i] + (j - i) &&
			   (BlockNumber) (j - i) < npages)
			j++;
		if ((BlockNumber) (j - i) == npages && !fp->used[i])
		{
			int			k;

			for (k = i; k < j; k++)
				fp->used[k] = true;
			return fp->blk[i];
		}
		i = Max(j, i + 1);
	}
	return InvalidBlockNumber;
}

static void
return_free_pages(Relation index, FreePages *fp)
{
	int			i;

	for (i = 0; i < fp->n; i++)
		if (!fp->used[i])
			RecordFreeIndexPage(index, fp->blk[i]);
}

/* Put a prepared page image into buffer buf (exclusively locked). */
static void
put_page(Relation index, Buffer buf, Page image, bool wal)
{
	if (wal)
	{
		GenericXLogState *state = GenericXLogStart(index);
		Page		page = GenericXLogRegisterBuffer(state, buf, GENERIC_XLOG_FULL_IMAGE);

		memcpy(page, image, BLCKSZ);
		GenericXLogFinish(state);
	}
	else
	{
		memcpy(BufferGetPage(buf), image, BLCKSZ);
		MarkBufferDirty(buf);
	}
	UnlockReleaseBuffer(buf);
}

/*
 * Write one sorted run per table.  With use_fsm (a merge, concurrent with
 * other backends) pages are WAL-logged one by one and may come from the FSM;
 * otherwise (bulk build) the relation is extended and the caller logs it.
 */
void
simhash_write_runs(Relation index, SimhashItem *items, int64 nitems,
				   const sh_table *tables, int ntables,
				   BlockNumber *run_start, BlockNumber *run_npages,
				   bool use_fsm, uint32 gen)
{
	int			cap = SIMHASH_PAGE_CAPACITY;
	BlockNumber npages = (BlockNumber) ((nitems + cap - 1) / cap);
	BlockNumber ndir = SimhashDirPages(npages);
	uint64	   *hikeys = palloc(sizeof(uint64) * Max(npages, 1));
	SimhashItem *keys = MemoryContextAllocHuge(CurrentMemoryContext,
											   Max(nitems, 1) * sizeof(SimhashItem));
	PGAlignedBlock image;
	FreePages	fp = {0};
	int			t;

	*run_npages = npages;
	if (use_fsm)
		collect_free_pages(index, &fp);
	for (t = 0; t < ntables; t++)
	{
		int64		i;
		BlockNumber p;
		BlockNumber start = InvalidBlockNumber;
		bool		extend_locked = false;
		bool		from_free;

		CHECK_FOR_INTERRUPTS();
		for (i = 0; i < nitems; i++)
		{
			keys[i].fp = sh_table_permute(&tables[t], items[i].fp);
			keys[i].tid = items[i].tid;
		}
		if (!use_fsm)
			pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, SIMHASH_PHASE_SORT);
		simhash_sort_items(keys, nitems);
		if (!use_fsm)
			pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, SIMHASH_PHASE_WRITE);

		if (use_fsm && npages > 0)
			start = take_free_range(&fp, npages + ndir);
		if (!BlockNumberIsValid(start) && use_fsm)
		{
			/* contiguous pages: no other backend may extend meanwhile */
			LockRelationForExtension(index, ExclusiveLock);
			extend_locked = true;
		}
		from_free = BlockNumberIsValid(start);
		for (p = 0; p < npages + ndir; p++)
		{
			int64		first = (int64) p * cap;
			int			n = (int) Min((int64) cap, nitems - first);
			int			k;
			Buffer		buf;
			SimhashPageOpaque opaque;

			if (p < npages)
			{
				simhash_init_page(image.data, SIMHASH_RUN);
				opaque = SimhashPageGetOpaque(image.data);
				opaque->gen = gen;
				for (k = 0; k < n; k++)
					simhash_entry_set(SimhashPageEntry(image.data, k), keys[first + k].fp,
									  &keys[first + k].tid);
				((PageHeader) image.data)->pd_lower += n * SIMHASH_ENTRY_SIZE;
				opaque->hikey = hikeys[p] = keys[first + n - 1].fp;
			}
			else
			{
				/* directory: the hikeys of run pages [d * DIR_CAPACITY, ...) */
				BlockNumber d0 = (p - npages) * SIMHASH_DIR_CAPACITY;
				int			nd = (int) Min((BlockNumber) SIMHASH_DIR_CAPACITY, npages - d0);

				simhash_init_page(image.data, SIMHASH_DIR);
				opaque = SimhashPageGetOpaque(image.data);
				opaque->gen = gen;
				memcpy(PageGetContents(image.data), &hikeys[d0], nd * sizeof(uint64));
				((PageHeader) image.data)->pd_lower += nd * sizeof(uint64);
				opaque->hikey = hikeys[d0 + nd - 1];
				n = 0;
			}
			opaque->table = t;

			if (from_free)
				buf = ReadBuffer(index, start + p);
			else
				buf = ReadBuffer(index, P_NEW);
			LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
			if (p == 0 && !BlockNumberIsValid(start))
				start = BufferGetBlockNumber(buf);
			Assert(BufferGetBlockNumber(buf) == start + p);
			put_page(index, buf, image.data, use_fsm);
			if ((p & 63) == 0)
			{
				if (!use_fsm)
					pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_DONE,
												 (int64) t * nitems + first + n);
				CHECK_FOR_INTERRUPTS();
			}
		}
		if (extend_locked)
			UnlockRelationForExtension(index, ExclusiveLock);
		run_start[t] = npages > 0 ? start : InvalidBlockNumber;
	}
	if (use_fsm)
		return_free_pages(index, &fp);
	pfree(keys);
	pfree(hikeys);
}

/*
 * Pending entries that trigger a merge from aminsert: 8 pages, or a quarter
 * of the rows, so that the rewrites stay amortised O(1) per row (each merge
 * rewrites everything; a merge every 25% growth writes ~5x the final size
 * over a bulk load, whose retired pages later VACUUMs recycle).
 */
int64
simhash_pending_limit(const SimhashMetaPageData *meta)
{
	return Max((int64) 8 * SIMHASH_PAGE_CAPACITY, (int64) (meta->run_count / 4));
}

/* ---- the merge ---------------------------------------------------------- */

/* Mark a page DELETED, recyclable once no scan can still be reading it. */
static void
delete_page(Relation index, BlockNumber blkno, FullTransactionId safexid)
{
	Buffer		buf = ReadBuffer(index, blkno);
	GenericXLogState *state;
	Page		page;
	SimhashPageOpaque opaque;

	LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
	state = GenericXLogStart(index);
	page = GenericXLogRegisterBuffer(state, buf, 0);
	opaque = SimhashPageGetOpaque(page);
	opaque->flags = SIMHASH_DELETED;
	opaque->safexid = safexid;
	GenericXLogFinish(state);
	UnlockReleaseBuffer(buf);
}

/* Remove dead TIDs from the NULLs chain in place. */
static void
vacuum_nulls(Relation index, BlockNumber blkno, SimhashDeadCallback dead, void *dead_state,
			 IndexBulkDeleteResult *stats)
{
	uint64		removed = 0;

	while (BlockNumberIsValid(blkno))
	{
		Buffer		buf = ReadBuffer(index, blkno);
		GenericXLogState *state;
		Page		page;
		int			n,
					i,
					kept = 0;

		CHECK_FOR_INTERRUPTS();
		LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
		state = GenericXLogStart(index);
		page = GenericXLogRegisterBuffer(state, buf, 0);
		n = SimhashPageEntries(page);
		for (i = 0; i < n; i++)
		{
			char	   *ent = SimhashPageEntry(page, i);
			ItemPointerData tid;

			simhash_entry_tid(ent, &tid);
			if (dead(&tid, dead_state))
			{
				stats->tuples_removed += 1;
				removed++;
				continue;
			}
			if (kept != i)
				memmove(SimhashPageEntry(page, kept), ent, SIMHASH_ENTRY_SIZE);
			kept++;
		}
		stats->num_index_tuples += kept;
		blkno = SimhashPageGetOpaque(page)->next;
		if (kept != n)
		{
			((PageHeader) page)->pd_lower = MAXALIGN(SizeOfPageHeaderData) + kept * SIMHASH_ENTRY_SIZE;
			GenericXLogFinish(state);
		}
		else
			GenericXLogAbort(state);
		UnlockReleaseBuffer(buf);
	}
	if (removed > 0)
	{
		Buffer		metabuf = ReadBuffer(index, SIMHASH_METAPAGE_BLKNO);
		GenericXLogState *state;
		SimhashMetaPage m;

		LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
		state = GenericXLogStart(index);
		m = SimhashPageGetMeta(GenericXLogRegisterBuffer(state, metabuf, 0));
		m->nnulls -= Min(removed, m->nnulls);
		GenericXLogFinish(state);
		UnlockReleaseBuffer(metabuf);
	}
}

/*
 * Appends a page's entries to "a" as (fingerprint, TID), unpermuting run keys
 * with "unpermute" (NULL for pending pages, which hold fingerprints); entries
 * whose TID "dead" reports are counted in *removed instead.
 */
static void
collect_page_items(Page page, const sh_table *unpermute, SimhashDeadCallback dead,
				   void *dead_state, SimhashItemArray *a, int64 *removed)
{
	int			n = SimhashPageEntries(page);

	for (int i = 0; i < n; i++)
	{
		const char *ent = SimhashPageEntry(page, i);
		uint64		key = simhash_entry_key(ent);
		ItemPointerData tid;

		simhash_entry_tid(ent, &tid);
		if (dead && dead(&tid, dead_state))
			(*removed)++;
		else
			simhash_items_push(a, unpermute ? sh_table_unpermute(unpermute, key) : key, &tid);
	}
}

static void
read_chain(Relation index, BlockNumber blkno, SimhashItemArray *a, BlockNumber **pages, int *npages,
		   int *pagecap, SimhashDeadCallback dead, void *dead_state, int64 *removed)
{
	while (BlockNumberIsValid(blkno))
	{
		Buffer		buf = ReadBuffer(index, blkno);
		Page		page;

		CHECK_FOR_INTERRUPTS();
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buf);
		collect_page_items(page, NULL, dead, dead_state, a, removed);
		if (*npages == *pagecap)
		{
			*pagecap *= 2;
			*pages = repalloc(*pages, sizeof(BlockNumber) * *pagecap);
		}
		(*pages)[(*npages)++] = blkno;
		blkno = SimhashPageGetOpaque(page)->next;
		UnlockReleaseBuffer(buf);
	}
}

/*
 * Fold the pending list into the runs, dropping entries whose TID "dead"
 * reports (VACUUM).  The caller holds the heavyweight merge lock.
 */
void
simhash_merge(Relation index, SimhashDeadCallback dead, void *dead_state,
			  IndexBulkDeleteResult *stats)
{
	SimhashMetaPageData meta;
	Buffer		metabuf;
	GenericXLogState *state;
	SimhashMetaPage m;
	sh_table   *tables;
	int			ntables,
				t;
	SimhashItemArray	a = {0};
	int64		removed = 0;
	BlockNumber p;
	BlockNumber *chain_pages;
	int			nchain = 0,
				chaincap = 16;
	BlockNumber new_start[SIMHASH_MAX_TABLES];
	BlockNumber new_npages;
	FullTransactionId safexid;
	MemoryContext cxt = AllocSetContextCreate(CurrentMemoryContext, "simhash merge",
											  SIMHASH_CONTEXT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(cxt);

	/* 1. seal the pending chain (unless a crashed merge left one sealed) */
	metabuf = ReadBuffer(index, SIMHASH_METAPAGE_BLKNO);
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	state = GenericXLogStart(index);
	m = SimhashPageGetMeta(GenericXLogRegisterBuffer(state, metabuf, 0));
	if (!BlockNumberIsValid(m->sealed_head) && BlockNumberIsValid(m->pending_head))
	{
		m->sealed_head = m->pending_head;
		m->sealed_chain = m->pending_chain;
		m->nsealed = m->npending;
		m->pending_head = m->pending_tail = InvalidBlockNumber;
		m->npending = 0;
		GenericXLogFinish(state);
	}
	else
		GenericXLogAbort(state);
	/* m pointed into the record's copy of the page, freed by Finish/Abort */
	memcpy(&meta, SimhashPageGetMeta(BufferGetPage(metabuf)), sizeof(meta));
	UnlockReleaseBuffer(metabuf);

	if (stats && dead)
		vacuum_nulls(index, meta.nulls_head, dead, dead_state, stats);

	if (!BlockNumberIsValid(meta.sealed_head) && dead == NULL)
		goto done;

	/* 2. every live row: table 0's run and the sealed chain */
	tables = simhash_layout(meta.blocks, meta.bits, &ntables);
	for (p = 0; p < meta.run_npages; p++)
	{
		Buffer		buf = ReadBuffer(index, meta.run_start[0] + p);
		Page		page;

		CHECK_FOR_INTERRUPTS();
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buf);
		collect_page_items(page, &tables[0], dead, dead_state, &a, &removed);
		UnlockReleaseBuffer(buf);
	}
	chain_pages = palloc(sizeof(BlockNumber) * chaincap);
	read_chain(index, meta.sealed_head, &a, &chain_pages, &nchain, &chaincap,
			   dead, dead_state, &removed);
	if (stats)
		stats->tuples_removed += removed;
	if (removed == 0 && !BlockNumberIsValid(meta.sealed_head))
	{
		if (stats)
			stats->num_index_tuples += a.n;
		goto done;
	}

	/* 3. new runs */
	simhash_write_runs(index, a.items, a.n, tables, ntables, new_start, &new_npages, true,
					   (uint32) (meta.merges + 1));

	/* 4. switch the metapage to them */
	metabuf = ReadBuffer(index, SIMHASH_METAPAGE_BLKNO);
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	state = GenericXLogStart(index);
	m = SimhashPageGetMeta(GenericXLogRegisterBuffer(state, metabuf, 0));
	for (t = 0; t < ntables; t++)
		m->run_start[t] = new_start[t];
	m->run_npages = new_npages;
	m->run_count = a.n;
	m->sealed_head = InvalidBlockNumber;
	m->nsealed = 0;
	m->merges++;
	GenericXLogFinish(state);
	UnlockReleaseBuffer(metabuf);
	if (stats)
		stats->num_index_tuples += a.n;

	/* 5. retire the old pages */
	safexid = ReadNextFullTransactionId();
	for (t = 0; t < ntables; t++)
		for (p = 0; p < SimhashExtentPages(meta.run_npages); p++)
			delete_page(index, meta.run_start[t] + p, safexid);
	for (t = 0; t < nchain; t++)
		delete_page(index, chain_pages[t], safexid);

done:
	MemoryContextSwitchTo(old);
	MemoryContextDelete(cxt);
}
