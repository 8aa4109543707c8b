/*
 * runs.c — sorted runs: the one page writer of bulk builds, flushes and
 * merges; the flush of the pending buffer into a run; streaming k-way
 * merges; the tier policy of INSERT and the compaction of VACUUM.
 *
 * See "Runs and merges" in simhash_am.h for the design.
 */
#include "simhash_am.h"

#include "commands/progress.h"
#include "commands/vacuum.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/lmgr.h"
#include "utils/memutils.h"

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
 * merge) WAL-logs every page and reuses free pages; a bulk build extends the
 * relation and logs it whole at the end.
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
}

/* Write the filled page to a page of its own and list it in the directory. */
static void
write_current(SimhashRunWriter *w)
{
	SimhashPageOpaque opaque = SimhashPageGetOpaque(w->image.data);
	Buffer			  buf = simhash_alloc_buffer(w->index, w->heap, w->concurrent);

	if (w->npages == w->dircap)
	{
		w->dircap *= 2;
		w->dir = repalloc_huge(w->dir, (Size) w->dircap * SIMHASH_DIR_ENTRY_SIZE);
	}
	simhash_dir_set(w->dir + (Size) w->npages * SIMHASH_DIR_ENTRY_SIZE, opaque->hikey,
					BufferGetBlockNumber(buf));
	w->npages++;
	put_page(w->index, buf, w->image.data, w->concurrent);
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
 * Write the last page and the directory (contiguous pages at the end of the
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
	if (ndir > 0)
		LockRelationForExtension(w->index, ExclusiveLock);
	for (d = 0; d < ndir; d++)
	{
		BlockNumber		  d0 = d * SIMHASH_DIR_CAPACITY;
		int				  nd = (int) Min((BlockNumber) SIMHASH_DIR_CAPACITY, w->npages - d0);
		const char		 *src = w->dir + (Size) d0 * SIMHASH_DIR_ENTRY_SIZE;
		SimhashPageOpaque opaque;
		Buffer			  buf = ReadBuffer(w->index, P_NEW);

		LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
		if (d == 0)
			first = BufferGetBlockNumber(buf);
		if (BufferGetBlockNumber(buf) != first + d)
			elog(ERROR, "simhash: directory of table %d is not contiguous", w->table);
		simhash_init_page(image.data, SIMHASH_DIR);
		opaque = SimhashPageGetOpaque(image.data);
		opaque->table = w->table;
		opaque->gen = w->gen;
		memcpy(PageGetContents(image.data), src, (Size) nd * SIMHASH_DIR_ENTRY_SIZE);
		((PageHeader) image.data)->pd_lower += nd * SIMHASH_DIR_ENTRY_SIZE;
		opaque->hikey = simhash_entry_key(src + (Size) (nd - 1) * SIMHASH_DIR_ENTRY_SIZE);
		put_page(w->index, buf, image.data, w->concurrent);
	}
	if (ndir > 0)
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

/* Reads one (run, table) page by page: a copy of a directory page and of a run page. */
typedef struct RunCursor
{
	Relation			 index;
	BufferAccessStrategy strategy;
	uint32				 gen;
	int					 table;
	BlockNumber			 next_dir;	 /* next directory block to read */
	BlockNumber			 pages_left; /* run pages not read yet */
	int					 dir_i, dir_n;
	int					 i, n;
	PGAlignedBlock		 dirpage;
	PGAlignedBlock		 page;
} RunCursor;

/* A private copy of block blkno, read through the strategy. */
static void
read_copy(Relation index, BlockNumber blkno, BufferAccessStrategy strategy, Page copy)
{
	Buffer buf = ReadBufferExtended(index, MAIN_FORKNUM, blkno, RBM_NORMAL, strategy);

	LockBuffer(buf, BUFFER_LOCK_SHARE);
	memcpy(copy, BufferGetPage(buf), BLCKSZ);
	UnlockReleaseBuffer(buf);
}

/*
 * Reports corruption unless page is a live page of the given kind, run
 * generation and table.
 */
static void
expect_page(Relation index, Page page, BlockNumber blkno, uint16 flags, uint32 gen, int table)
{
	SimhashPageOpaque o = SimhashPageGetOpaque(page);

	if (PageIsNew(page) || o->page_id != SIMHASH_PAGE_ID || o->flags != flags || o->gen != gen ||
		o->table != table)
		ereport(ERROR, (errcode(ERRCODE_INDEX_CORRUPTED),
						errmsg("simhash index \"%s\": block %u is not a page of table %d of run %u",
							   RelationGetRelationName(index), blkno, table, gen),
						errhint("REINDEX the index.")));
}

/* A cursor at the start of table t of run r; nothing is read yet. */
static void
cursor_open(RunCursor *c, Relation index, BufferAccessStrategy strategy,
			const SimhashMetaPageData *meta, int r, int t)
{
	c->index = index;
	c->strategy = strategy;
	c->gen = meta->list.runs[r].gen;
	c->table = t;
	c->next_dir = simhash_meta_dir(meta, r, t);
	c->pages_left = meta->list.runs[r].npages;
	c->dir_i = c->dir_n = 0;
	c->i = c->n = 0;
}

/* Load the next non-empty run page; false at the end of the run. */
static bool
cursor_next_page(RunCursor *c)
{
	BlockNumber blkno;

	while (c->i >= c->n)
	{
		if (c->pages_left == 0)
			return false;
		if (c->dir_i >= c->dir_n)
		{
			read_copy(c->index, c->next_dir, c->strategy, c->dirpage.data);
			expect_page(c->index, c->dirpage.data, c->next_dir, SIMHASH_DIR, c->gen, c->table);
			c->next_dir++;
			c->dir_i = 0;
			c->dir_n = SimhashDirEntries(c->dirpage.data);
			if (c->dir_n == 0)
				return false;
		}
		blkno = simhash_dir_block(SimhashDirEntry(c->dirpage.data, c->dir_i));
		c->dir_i++;
		c->pages_left--;
		read_copy(c->index, blkno, c->strategy, c->page.data);
		expect_page(c->index, c->page.data, blkno, SIMHASH_RUN, c->gen, c->table);
		c->i = 0;
		c->n = SimhashPageEntries(c->page.data);
		vacuum_delay_point();
	}
	return true;
}

/* The current entry, or false at the end. */
static inline bool
cursor_peek(RunCursor *c, uint64 *key, ItemPointer tid)
{
	const char *e;

	if (c->i >= c->n && !cursor_next_page(c))
		return false;
	e = SimhashPageEntry(c->page.data, c->i);
	*key = simhash_entry_key(e);
	simhash_entry_tid(e, tid);
	return true;
}

/* ---- metapage updates -------------------------------------------------- */

typedef enum MetaOp
{
	META_START_FLUSH, /* seal the pending chain, hand out a generation */
	META_START_MERGE, /* hand out a generation */
	META_END_FLUSH,	  /* add the run, drop the sealed chain */
	META_END_MERGE,	  /* replace the input runs by the output run */
	META_CLEAR_FLUSH, /* forget a flush a crash interrupted */
	META_CLEAR_MERGE  /* forget a merge a crash interrupted */
} MetaOp;

typedef struct MetaChange
{
	uint32		  gen; /* the new run's generation */
	uint64		  count;
	BlockNumber	  npages;
	BlockNumber	 *dir;	  /* per table; NULL: no run to add */
	const uint32 *inputs; /* META_END_MERGE: generations it replaces */
	int			  ninputs;
} MetaChange;

/*
 * Apply one change to the metapage (one WAL record) and copy it out.
 * Returns false when there is nothing to do (START_FLUSH without a pending
 * chain, or without a free run slot).
 */
static bool
change_meta(Relation index, MetaOp op, MetaChange *ch, SimhashMetaPageData *copy)
{
	Buffer			  metabuf = ReadBuffer(index, SIMHASH_METAPAGE_BLKNO);
	Buffer			  listbuf = ReadBuffer(index, SIMHASH_RUNLIST_BLKNO);
	GenericXLogState *state;
	SimhashMetaPage	  m;
	SimhashRunList	 *l;
	bool			  done = true;
	int				  r, t, j, kept;

	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	LockBuffer(listbuf, BUFFER_LOCK_EXCLUSIVE);
	state = GenericXLogStart(index);
	m = SimhashPageGetMeta(GenericXLogRegisterBuffer(state, metabuf, 0));
	/* the run list changes only when a flush or merge ends */
	if (op == META_END_FLUSH || op == META_END_MERGE)
		l = SimhashPageGetRunList(GenericXLogRegisterBuffer(state, listbuf, 0));
	else
		l = SimhashPageGetRunList(BufferGetPage(listbuf));
	switch (op)
	{
		case META_START_FLUSH:
			if (!BlockNumberIsValid(m->sealed_head) && BlockNumberIsValid(m->pending_head) &&
				l->nruns < simhash_max_runs(m->ntables))
			{
				m->sealed_head = m->pending_head;
				m->sealed_chain = m->pending_chain;
				m->nsealed = m->npending;
				m->pending_head = m->pending_tail = InvalidBlockNumber;
				m->npending = 0;
			}
			if (!BlockNumberIsValid(m->sealed_head) || l->nruns >= simhash_max_runs(m->ntables))
			{
				done = false;
				break;
			}
			ch->gen = m->flush_gen = ++m->gen_seq;
			break;
		case META_START_MERGE:
			ch->gen = m->merge_gen = ++m->gen_seq;
			break;
		case META_CLEAR_FLUSH:
		case META_CLEAR_MERGE:
			if (op == META_CLEAR_FLUSH ? m->flush_gen == 0 : m->merge_gen == 0)
			{
				done = false;
				break;
			}
			if (op == META_CLEAR_FLUSH)
				m->flush_gen = 0;
			else
				m->merge_gen = 0;
			break;
		case META_END_FLUSH:
		case META_END_MERGE:
			if (op == META_END_MERGE)
			{
				kept = 0;
				for (r = 0; r < l->nruns; r++)
				{
					bool input = false;

					for (j = 0; j < ch->ninputs; j++)
						input |= l->runs[r].gen == ch->inputs[j];
					if (input)
						continue;
					l->runs[kept] = l->runs[r];
					for (t = 0; t < m->ntables; t++)
						l->run_dir[kept * m->ntables + t] = l->run_dir[r * m->ntables + t];
					kept++;
				}
				if (l->nruns - kept != ch->ninputs)
					elog(ERROR, "simhash index \"%s\": merge inputs changed under the merge lock",
						 RelationGetRelationName(index));
				l->nruns = kept;
				m->merge_gen = 0;
				m->merges++;
			}
			else
			{
				m->sealed_head = InvalidBlockNumber;
				m->nsealed = 0;
				m->flush_gen = 0;
				m->flushes++;
			}
			if (ch->dir && ch->count > 0)
			{
				if (l->nruns >= simhash_max_runs(m->ntables))
					elog(ERROR, "simhash index \"%s\": no free run slot",
						 RelationGetRelationName(index));
				r = l->nruns++;
				l->runs[r].gen = ch->gen;
				l->runs[r].count = ch->count;
				l->runs[r].npages = ch->npages;
				for (t = 0; t < m->ntables; t++)
					l->run_dir[r * m->ntables + t] = ch->dir[t];
			}
			break;
	}
	if (done)
		GenericXLogFinish(state);
	else
		GenericXLogAbort(state);
	/* m and l pointed into the record's page copies, freed by Finish/Abort */
	if (copy)
	{
		memcpy(copy, SimhashPageGetMeta(BufferGetPage(metabuf)), SIMHASH_META_SIZE);
		memcpy(&copy->list, SimhashPageGetRunList(BufferGetPage(listbuf)), sizeof(SimhashRunList));
	}
	UnlockReleaseBuffer(listbuf);
	UnlockReleaseBuffer(metabuf);
	return done;
}

/* Mark every page of a replaced run DELETED (its directory last). */
static void
retire_run(Relation index, const SimhashMetaPageData *meta, int r, FullTransactionId safexid,
		   BufferAccessStrategy strategy)
{
	PGAlignedBlock dirpage;
	int			   t;

	for (t = 0; t < meta->ntables; t++)
	{
		BlockNumber dir = simhash_meta_dir(meta, r, t);
		BlockNumber ndir = SimhashDirPages(meta->list.runs[r].npages);
		BlockNumber d;

		for (d = 0; d < ndir; d++)
		{
			int i, n;

			read_copy(index, dir + d, strategy, dirpage.data);
			expect_page(index, dirpage.data, dir + d, SIMHASH_DIR, meta->list.runs[r].gen, t);
			n = SimhashDirEntries(dirpage.data);
			for (i = 0; i < n; i++)
			{
				vacuum_delay_point();
				simhash_delete_page(index, simhash_dir_block(SimhashDirEntry(dirpage.data, i)),
									safexid, strategy);
			}
		}
		for (d = 0; d < ndir; d++)
			simhash_delete_page(index, dir + d, safexid, strategy);
	}
}

/*
 * Forget the flush (or merge) a crash interrupted, so that VACUUM retires
 * the pages it had written.  The caller holds the flush (merge) lock, so no
 * flush (merge) is under way.
 */
void
simhash_clear_interrupted(Relation index, bool flush)
{
	MetaChange ch = {0};

	change_meta(index, flush ? META_CLEAR_FLUSH : META_CLEAR_MERGE, &ch, NULL);
}

/* ---- flush ------------------------------------------------------------- */

/*
 * Turn the pending chain into a new run, dropping entries whose TID "dead"
 * reports (VACUUM).  The caller holds the flush lock.  Returns false when
 * there was nothing to flush or no free run slot.
 */
bool
simhash_flush(Relation index, Relation heap, SimhashDeadCallback dead, void *dead_state,
			  IndexBulkDeleteResult *stats)
{
	SimhashMetaPageData meta;
	MetaChange			ch = {0};
	SimhashItemArray	a = {0};
	BlockNumber		   *chain;
	int					nchain = 0, chaincap = 16, ntables, i;
	BlockNumber			blkno;
	BlockNumber			dir[SIMHASH_MAX_TABLES];
	sh_table		   *tables;
	FullTransactionId	safexid;
	MemoryContext		cxt =
		AllocSetContextCreate(CurrentMemoryContext, "simhash flush", SIMHASH_CONTEXT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(cxt);

	if (!change_meta(index, META_START_FLUSH, &ch, &meta))
	{
		MemoryContextSwitchTo(old);
		MemoryContextDelete(cxt);
		return false;
	}
	chain = palloc(sizeof(BlockNumber) * chaincap);
	for (blkno = meta.sealed_head; BlockNumberIsValid(blkno);)
	{
		PGAlignedBlock copy;
		int			   n;

		CHECK_FOR_INTERRUPTS();
		read_copy(index, blkno, NULL, copy.data);
		expect_page(index, copy.data, blkno, SIMHASH_PENDING, meta.sealed_chain, 0);
		n = SimhashPageEntries(copy.data);
		for (i = 0; i < n; i++)
		{
			const char	   *e = SimhashPageEntry(copy.data, i);
			ItemPointerData tid;

			simhash_entry_tid(e, &tid);
			if (dead && dead(&tid, dead_state))
			{
				if (stats)
					stats->tuples_removed++;
				continue;
			}
			simhash_items_push(&a, simhash_entry_key(e), &tid);
		}
		if (nchain == chaincap)
		{
			chaincap *= 2;
			chain = repalloc(chain, sizeof(BlockNumber) * chaincap);
		}
		chain[nchain++] = blkno;
		blkno = SimhashPageGetOpaque(copy.data)->next;
	}

	tables = simhash_layout(meta.blocks, meta.bits, &ntables);
	simhash_write_sorted_runs(index, heap, a.items, a.n, tables, ntables, true, ch.gen, dir,
							  &ch.npages, false);
	ch.count = a.n;
	ch.dir = dir;
	change_meta(index, META_END_FLUSH, &ch, NULL);

	safexid = ReadNextFullTransactionId();
	for (i = 0; i < nchain; i++)
		simhash_delete_page(index, chain[i], safexid, NULL);
	MemoryContextSwitchTo(old);
	MemoryContextDelete(cxt);
	return true;
}

/* ---- merge ------------------------------------------------------------- */

/*
 * Merge the runs whose generations are listed into one, table by table,
 * streaming: one page per input run in memory.  The caller holds the merge
 * lock.  Dead entries (VACUUM) are dropped and counted in stats.
 */
static void
merge_runs(Relation index, Relation heap, const uint32 *gens, int k, SimhashDeadCallback dead,
		   void *dead_state, BufferAccessStrategy strategy, IndexBulkDeleteResult *stats)
{
	SimhashMetaPageData meta;
	MetaChange			ch = {0};
	BlockNumber			dir[SIMHASH_MAX_TABLES];
	RunCursor		   *cur;
	int				   *idx;
	int					t, j, r;
	int64				removed = 0;
	FullTransactionId	safexid;
	MemoryContext		cxt =
		AllocSetContextCreate(CurrentMemoryContext, "simhash merge", SIMHASH_CONTEXT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(cxt);

	change_meta(index, META_START_MERGE, &ch, &meta);
	cur = palloc(sizeof(RunCursor) * k);
	idx = palloc(sizeof(int) * k);
	for (j = 0; j < k; j++)
	{
		idx[j] = -1;
		for (r = 0; r < meta.list.nruns; r++)
			if (meta.list.runs[r].gen == gens[j])
				idx[j] = r;
		if (idx[j] < 0)
			elog(ERROR, "simhash index \"%s\": run %u to merge is gone",
				 RelationGetRelationName(index), gens[j]);
	}

	for (t = 0; t < meta.ntables; t++)
	{
		SimhashRunWriter w;

		for (j = 0; j < k; j++)
			cursor_open(&cur[j], index, strategy, &meta, idx[j], t);
		simhash_run_begin(&w, index, heap, true, t, ch.gen);
		for (;;)
		{
			int				best = -1;
			uint64			bkey = 0, key;
			ItemPointerData btid, tid;

			for (j = 0; j < k; j++)
			{
				if (!cursor_peek(&cur[j], &key, &tid))
					continue;
				if (best < 0 || key < bkey || (key == bkey && ItemPointerCompare(&tid, &btid) < 0))
				{
					best = j;
					bkey = key;
					btid = tid;
				}
			}
			if (best < 0)
				break;
			cur[best].i++;
			if (dead && dead(&btid, dead_state))
			{
				if (t == 0)
					removed++;
				continue;
			}
			simhash_run_add(&w, bkey, &btid);
		}
		dir[t] = simhash_run_finish(&w);
		if (t == 0)
		{
			ch.count = w.count;
			ch.npages = w.npages;
		}
		else if (w.count != ch.count)
			ereport(ERROR,
					(errcode(ERRCODE_INDEX_CORRUPTED),
					 errmsg("simhash index \"%s\": table %d of the merged runs holds " UINT64_FORMAT
							" entries, table 0 " UINT64_FORMAT,
							RelationGetRelationName(index), t, w.count, ch.count),
					 errhint("REINDEX the index.")));
	}
	ch.dir = dir;
	ch.inputs = gens;
	ch.ninputs = k;
	change_meta(index, META_END_MERGE, &ch, NULL);
	if (stats)
		stats->tuples_removed += (double) removed;

	safexid = ReadNextFullTransactionId();
	for (j = 0; j < k; j++)
		retire_run(index, &meta, idx[j], safexid, strategy);
	MemoryContextSwitchTo(old);
	MemoryContextDelete(cxt);
}

/* Does table 0 of run r hold a TID that "dead" reports? */
static bool
run_has_dead(Relation index, const SimhashMetaPageData *meta, int r, SimhashDeadCallback dead,
			 void *dead_state, BufferAccessStrategy strategy)
{
	RunCursor	   *c = palloc(sizeof(RunCursor));
	uint64			key;
	ItemPointerData tid;
	bool			found = false;

	cursor_open(c, index, strategy, meta, r, 0);
	while (!found && cursor_peek(c, &key, &tid))
	{
		found = dead(&tid, dead_state);
		c->i++;
	}
	pfree(c);
	return found;
}

/* Runs by size, largest first. */
static int
run_cmp_desc(const void *a, const void *b)
{
	const SimhashRun *x = a, *y = b;

	return x->count > y->count	 ? -1
		   : x->count < y->count ? 1
								 : (x->gen < y->gen	  ? -1
									: x->gen > y->gen ? 1
													  : 0);
}

/*
 * The tier merges an INSERT may do after a flush: while SIMHASH_TIER_RATIO
 * runs share a level and together stay within SIMHASH_INSERT_MERGE_PAGES
 * pages over all tables, merge them.  When the run list is full, merge the
 * smallest runs whatever their size (the list holds at least 6 runs).
 * Skipped if another merge runs.
 */
void
simhash_insert_merges(Relation index, Relation heap)
{
	int64 prows = simhash_pending_limit(index);

	if (!ConditionalLockPage(index, SIMHASH_MERGE_LOCK, ExclusiveLock))
		return;
	for (;;)
	{
		SimhashMetaPageData meta;
		SimhashRun			runs[SIMHASH_MAX_RUNS];
		uint32				gens[SIMHASH_MAX_RUNS];
		int					k = 0, r, level, found = -1;

		simhash_read_meta(index, &meta);
		memcpy(runs, meta.list.runs, sizeof(SimhashRun) * meta.list.nruns);
		qsort(runs, meta.list.nruns, sizeof(SimhashRun), run_cmp_desc);
		if (meta.list.nruns >= simhash_max_runs(meta.ntables))
		{
			/* full list: the smallest runs, at least two */
			for (r = meta.list.nruns - 1; r >= 0 && k < SIMHASH_TIER_RATIO; r--)
				gens[k++] = runs[r].gen;
		}
		else
		{
			for (level = 0; level < 64 && found < 0; level++)
			{
				uint64 pages = 0;

				k = 0;
				for (r = meta.list.nruns - 1; r >= 0; r--)
					if (simhash_run_level(runs[r].count, prows) == level)
					{
						gens[k++] = runs[r].gen;
						pages += runs[r].npages;
					}
				pages *= (uint64) meta.ntables;
				if (k >= SIMHASH_TIER_RATIO && pages <= SIMHASH_INSERT_MERGE_PAGES)
					found = level;
				if (pages > SIMHASH_INSERT_MERGE_PAGES)
					break;
			}
			if (found < 0)
				k = 0;
		}
		if (k < 2)
			break;
		merge_runs(index, heap, gens, k, NULL, NULL, NULL, NULL);
	}
	UnlockPage(index, SIMHASH_MERGE_LOCK, ExclusiveLock);
}

/*
 * VACUUM's compaction (the caller holds the merge lock): with the runs
 * sorted largest first, keep each run that holds at least
 * SIMHASH_TIER_RATIO times the rows of all smaller runs together; merge the
 * rest into one.  With "dead" (bulk delete), the merge drops dead entries,
 * and every kept run that holds one is rewritten alone.
 */
void
simhash_compact(Relation index, Relation heap, SimhashDeadCallback dead, void *dead_state,
				BufferAccessStrategy strategy, IndexBulkDeleteResult *stats)
{
	SimhashMetaPageData meta;
	SimhashRun			runs[SIMHASH_MAX_RUNS];
	uint32				gens[SIMHASH_MAX_RUNS];
	uint64				smaller = 0;
	int					first_merged, r, k = 0;

	simhash_read_meta(index, &meta);
	memcpy(runs, meta.list.runs, sizeof(SimhashRun) * meta.list.nruns);
	qsort(runs, meta.list.nruns, sizeof(SimhashRun), run_cmp_desc);

	/* the first run (largest first) that does not dominate the smaller ones */
	first_merged = meta.list.nruns;
	for (r = meta.list.nruns - 1; r >= 0; r--)
	{
		if (runs[r].count < (uint64) SIMHASH_TIER_RATIO * smaller)
			first_merged = r;
		smaller += runs[r].count;
	}
	/* a single trailing run needs no merge unless it holds dead entries */
	for (r = first_merged; r < meta.list.nruns; r++)
		gens[k++] = runs[r].gen;
	if (k >= 2)
		merge_runs(index, heap, gens, k, dead, dead_state, strategy, stats);
	if (dead == NULL)
		return;
	for (r = 0; r < meta.list.nruns; r++)
	{
		int m;

		if (k >= 2 && r >= first_merged)
			break;
		for (m = 0; m < meta.list.nruns; m++)
			if (meta.list.runs[m].gen == runs[r].gen)
				break;
		if (run_has_dead(index, &meta, m, dead, dead_state, strategy))
			merge_runs(index, heap, &runs[r].gen, 1, dead, dead_state, strategy, stats);
	}
}
