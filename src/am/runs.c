/*
 * runs.c — sorted runs: the rows to place, the one page writer of bulk
 * builds, flushes and merges, and the cursor that reads a run in key order.
 * The flushes and merges that make runs are merge.c's.
 *
 * See "Runs and merges" in src/am/README for the design.
 */
#include "simhash_am.h"
#include "runs.h"

#include "commands/progress.h"
#include "commands/vacuum.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/latch.h"
#include "storage/lmgr.h"
#include "utils/memutils.h"
#include "utils/wait_event.h"

#define ST_SORT			simhash_sort_items
#define ST_ELEMENT_TYPE SimhashItem
#define ST_COMPARE(a, b) \
	((a)->key < (b)->key ? -1 \
	 : (a)->key > (b)->key \
		 ? 1 \
		 : ItemPointerCompare((ItemPointer) & (a)->tid, (ItemPointer) & (b)->tid))
#define ST_SCOPE
#define ST_DEFINE
#include "lib/sort_template.h"

/* Appends an item, growing the array geometrically. */
void
simhash_items_push(SimhashItemArray *a, uint64 key, ItemPointer tid)
{
	if (a->n == a->cap)
	{
		a->cap = Max(1024, a->cap * 2);
		a->items = a->items
					   ? repalloc_huge(a->items, a->cap * sizeof(SimhashItem))
					   : MemoryContextAllocHuge(CurrentMemoryContext, a->cap * sizeof(SimhashItem));
	}
	a->items[a->n].key = key;
	a->items[a->n].tid = *tid;
	a->n++;
}

/* Rows of a full pending buffer: the unit of run sizes. */
int64
simhash_pending_limit(Relation index)
{
	return (int64) simhash_pending_pages(index) * SIMHASH_PAGE_CAPACITY;
}

/* floor(log_R(count / pending_rows)), 0 for a run no larger than R buffers. */
int
simhash_run_level(uint64 count, int64 pending_rows)
{
	uint64 x = count / (uint64) Max(pending_rows, 1);
	int	   level = 0;

	while (x >= SIMHASH_TIER_RATIO)
	{
		x /= SIMHASH_TIER_RATIO;
		level++;
	}
	return level;
}

/* ---- the run writer ---------------------------------------------------- */

/* Put a prepared page image into buffer buf (exclusively locked), release it. */
static void
put_page(Relation index, Buffer buf, Page image, bool wal)
{
	if (wal)
	{
		GenericXLogState *state = GenericXLogStart(index);
		Page			  page = GenericXLogRegisterBuffer(state, buf, GENERIC_XLOG_FULL_IMAGE);

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
 * Start writing table `table` of run `gen`.  A concurrent writer (flush,
 * merge) WAL-logs every page and reuses free pages; a writer that is not
 * concurrent extends the relation and WAL-logs nothing (the caller logs the
 * pages).  A bulk build writes through simhash_run_begin_sink().
 */
void
simhash_run_begin(SimhashRunWriter *w, Relation index, Relation heap, bool concurrent, int table,
				  uint32 gen)
{
	w->index = index;
	w->heap = heap;
	w->concurrent = concurrent;
	w->table = table;
	w->gen = gen;
	w->n = 0;
	w->count = 0;
	w->npages = 0;
	w->dircap = 64;
	w->dir = palloc(w->dircap * SIMHASH_DIR_ENTRY_SIZE);
	w->pool = NULL;
	w->sink = NULL;
}

/*
 * Start writing table `table` of run `gen` of a bulk build: its pages go
 * to the sink, at the blocks that follow sink->next (advanced).
 */
void
simhash_run_begin_sink(SimhashRunWriter *w, Relation index, SimhashPageSink *sink, int table,
					   uint32 gen)
{
	simhash_run_begin(w, index, NULL, false, table, gen);
	w->sink = sink;
}

/* Put a prepared page image at the sink's next block; returns it. */
static BlockNumber
put_page_sink(SimhashRunWriter *w, Page image)
{
	BlockNumber blkno = w->sink->next++;

	w->sink->put(w->sink, blkno, image);
	return blkno;
}

/* A page for the writer: from its pool, else from the FSM or a new one. */
static Buffer
writer_buffer(SimhashRunWriter *w)
{
	Buffer buf = w->pool ? simhash_pool_take(w->pool, w->index) : InvalidBuffer;

	return BufferIsValid(buf) ? buf : simhash_alloc_buffer(w->index, w->heap, w->concurrent);
}

/* Write the filled page to a page of its own and list it in the directory. */
static void
write_current(SimhashRunWriter *w)
{
	SimhashPageOpaque opaque = SimhashPageGetOpaque(w->image.data);
	BlockNumber		  blkno;

	if (w->npages == w->dircap)
	{
		w->dircap *= 2;
		w->dir = repalloc_huge(w->dir, (Size) w->dircap * SIMHASH_DIR_ENTRY_SIZE);
	}
	if (w->sink)
		blkno = put_page_sink(w, w->image.data);
	else
	{
		Buffer buf = writer_buffer(w);

		blkno = BufferGetBlockNumber(buf);
		put_page(w->index, buf, w->image.data, w->concurrent);
	}
	simhash_dir_set(w->dir + (Size) w->npages * SIMHASH_DIR_ENTRY_SIZE, opaque->hikey, blkno);
	w->npages++;
	w->n = 0;
	if ((w->npages & 15) == 0)
		CHECK_FOR_INTERRUPTS();
}

/* Append an entry; entries come in (key, TID) order. */
void
simhash_run_add(SimhashRunWriter *w, uint64 key, ItemPointer tid)
{
	SimhashPageOpaque opaque;

	if (w->n == SIMHASH_PAGE_CAPACITY)
		write_current(w);
	if (w->n == 0)
	{
		simhash_init_page(w->image.data, SIMHASH_RUN);
		opaque = SimhashPageGetOpaque(w->image.data);
		opaque->table = w->table;
		opaque->gen = w->gen;
	}
	simhash_entry_set(SimhashPageEntry(w->image.data, w->n), key, tid);
	((PageHeader) w->image.data)->pd_lower += SIMHASH_ENTRY_SIZE;
	SimhashPageGetOpaque(w->image.data)->hikey = key;
	w->n++;
	w->count++;
}

/*
 * Write the last page and the directory (contiguous pages: a directory of
 * one page may take any free page, a longer one is appended to the
 * relation); returns the directory's first block, InvalidBlockNumber for an
 * empty run.  w->npages and w->count tell the run's size.
 */
BlockNumber
simhash_run_finish(SimhashRunWriter *w)
{
	BlockNumber	   ndir, d, first = InvalidBlockNumber;
	PGAlignedBlock image;

	if (w->n > 0)
		write_current(w);
	ndir = SimhashDirPages(w->npages);
	if (ndir > 1 && !w->sink)
		LockRelationForExtension(w->index, ExclusiveLock);
	for (d = 0; d < ndir; d++)
	{
		BlockNumber		  d0 = d * SIMHASH_DIR_CAPACITY;
		int				  nd = (int) Min((BlockNumber) SIMHASH_DIR_CAPACITY, w->npages - d0);
		const char		 *src = w->dir + (Size) d0 * SIMHASH_DIR_ENTRY_SIZE;
		SimhashPageOpaque opaque;
		Buffer			  buf = InvalidBuffer;
		BlockNumber		  blkno;

		if (w->sink)
			blkno = w->sink->next; /* put_page_sink() takes it below */
		else
		{
			if (ndir == 1)
				buf = writer_buffer(w);
			else
			{
				buf = ReadBuffer(w->index, P_NEW);
				LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
			}
			blkno = BufferGetBlockNumber(buf);
		}
		if (d == 0)
			first = blkno;
		if (blkno != first + d)
			elog(ERROR, "simhash: directory of table %d is not contiguous", w->table);
		simhash_init_page(image.data, SIMHASH_DIR);
		opaque = SimhashPageGetOpaque(image.data);
		opaque->table = w->table;
		opaque->gen = w->gen;
		memcpy(PageGetContents(image.data), src, (Size) nd * SIMHASH_DIR_ENTRY_SIZE);
		((PageHeader) image.data)->pd_lower += nd * SIMHASH_DIR_ENTRY_SIZE;
		opaque->hikey = simhash_entry_key(src + (Size) (nd - 1) * SIMHASH_DIR_ENTRY_SIZE);
		if (w->sink)
			(void) put_page_sink(w, image.data);
		else
			put_page(w->index, buf, image.data, w->concurrent);
	}
	if (ndir > 1 && !w->sink)
		UnlockRelationForExtension(w->index, ExclusiveLock);
	pfree(w->dir);
	w->dir = NULL;
	return first;
}

/*
 * One run of items (fingerprints): each table's permuted keys sorted in
 * memory and written.  Used by in-memory builds and by flushes.
 */
void
simhash_write_sorted_runs(Relation index, Relation heap, SimhashItem *items, int64 nitems,
						  const sh_table *tables, int ntables, bool concurrent, uint32 gen,
						  BlockNumber *dir, BlockNumber *npages, bool progress)
{
	SimhashItem *keys =
		MemoryContextAllocHuge(CurrentMemoryContext, Max(nitems, 1) * sizeof(SimhashItem));
	int t;

	*npages = 0;
	for (t = 0; t < ntables; t++)
	{
		SimhashRunWriter w;
		int64			 i;

		CHECK_FOR_INTERRUPTS();
		for (i = 0; i < nitems; i++)
		{
			keys[i].key = sh_table_permute(&tables[t], items[i].key);
			keys[i].tid = items[i].tid;
		}
		if (progress)
			pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, SIMHASH_PHASE_SORT);
		simhash_sort_items(keys, nitems);
		if (progress)
			pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, SIMHASH_PHASE_WRITE);
		simhash_run_begin(&w, index, heap, concurrent, t, gen);
		for (i = 0; i < nitems; i++)
		{
			simhash_run_add(&w, keys[i].key, &keys[i].tid);
			if (progress && (i & 65535) == 0)
				pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_DONE,
											 (int64) t * nitems + i);
		}
		dir[t] = simhash_run_finish(&w);
		*npages = w.npages;
	}
	pfree(keys);
}

/* ---- reading runs ------------------------------------------------------ */

/* RunCursor (runs.h): one (run, table) read page by page, in key order. */

/* A cursor at the start of table t of run r; nothing is read yet. */
void
simhash_run_cursor_init(SimhashRunCursor *c, Relation index, BufferAccessStrategy strategy,
						const SimhashMetaPageData *meta, int r, int t)
{
	c->index = index;
	simhash_dir_walk_init(&c->walk, index, strategy, meta, r, t);
	c->reader = NULL;
	c->done = false;
	c->i = c->n = 0;
	c->retired_ok = false;
}

/* Let go of the cursor's reader (and the pages it read ahead). */
void
simhash_run_cursor_close(SimhashRunCursor *c)
{
	if (c->reader)
		simhash_reader_end(c->reader);
	c->reader = NULL;
	c->done = true;
}

/* Load the next non-empty run page; false at the end of the run. */
bool
simhash_run_cursor_next_page(SimhashRunCursor *c)
{
	while (c->i >= c->n)
	{
		Buffer		buf;
		BlockNumber blkno;

		if (c->done)
			return false;
		if (c->reader == NULL)
			c->reader =
				simhash_reader_begin(c->index, c->walk.strategy, simhash_dir_walk_next, &c->walk);
		buf = simhash_reader_next(c->reader);
		if (buf == InvalidBuffer)
		{
			simhash_run_cursor_close(c);
			return false;
		}
		blkno = BufferGetBlockNumber(buf);
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		memcpy(c->page.data, BufferGetPage(buf), BLCKSZ);
		UnlockReleaseBuffer(buf);
		simhash_page_check(c->index, c->page.data, blkno, SIMHASH_RUN, c->walk.gen, c->walk.table,
						   c->retired_ok ? SIMHASH_PAGE_READABLE : SIMHASH_PAGE_LIVE);
		c->i = 0;
		c->n = SimhashPageEntries(c->index, blkno, c->page.data);
		simhash_vacuum_delay_point();
	}
	return true;
}

/*
 * The cursor for readers that do not hold the merge lock (simhash_pairs):
 * a run a merge retires meanwhile stays readable to their snapshot.
 */
void
simhash_run_cursor_open(SimhashRunCursor *c, Relation index, BufferAccessStrategy strategy,
						const SimhashMetaPageData *meta, int r, int t)
{
	simhash_run_cursor_init(c, index, strategy, meta, r, t);
	c->retired_ok = true;
	c->walk.retired_ok = true;
}
