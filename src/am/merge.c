/*
 * merge.c — every change to the run list: the flush of the pending buffer
 * into a run, streaming k-way merges, the tier policy of INSERT, the
 * compaction of VACUUM and its in-place cleaning of runs, each recorded in
 * the metapage as one WAL record (the marks of running operations).
 *
 * See "Runs and merges" and "Marks of running operations" in src/am/README.
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

/* simhash.debug_pause_merge: see runs.h. */
bool simhash_debug_pause_merge = false;

/* ---- metapage updates -------------------------------------------------- */

typedef struct MetaChange
{
	uint32		  gen; /* the new run's generation */
	uint64		  count;
	BlockNumber	  npages;
	BlockNumber	 *dir;	  /* per table; NULL: no run to add */
	int			  table;  /* switch_table: the table written */
	const uint32 *inputs; /* a merge's input runs */
	int			  ninputs;
} MetaChange;

/* The slot of run `gen` in the list, -1 if none. */
static int
find_run(const SimhashRunList *l, uint32 gen)
{
	for (int r = 0; r < l->nruns; r++)
		if (l->runs[r].gen == gen)
			return r;
	return -1;
}

/* A new run at the end of the list (its directories: dir, or none yet). */
static void
add_run(Relation index, const SimhashMetaPageData *m, SimhashRunList *l, const MetaChange *ch,
		const BlockNumber *dir)
{
	int r;

	if (l->nruns >= simhash_max_runs(m->ntables))
		elog(ERROR, "simhash index \"%s\": no free run slot", RelationGetRelationName(index));
	r = l->nruns++;
	l->uneven[r] = 0;
	l->runs[r].gen = ch->gen;
	l->runs[r].count = ch->count;
	l->runs[r].npages = ch->npages;
	for (int t = 0; t < m->ntables; t++)
		l->run_dir[r * m->ntables + t] = dir ? dir[t] : InvalidBlockNumber;
}

/* Drop a merge's input runs from the list, keeping the others in order. */
static void
drop_inputs(Relation index, const SimhashMetaPageData *m, SimhashRunList *l, const MetaChange *ch)
{
	int kept = 0;

	for (int r = 0; r < l->nruns; r++)
	{
		bool input = false;

		for (int j = 0; j < ch->ninputs; j++)
			input |= l->runs[r].gen == ch->inputs[j];
		if (input)
			continue;
		l->runs[kept] = l->runs[r];
		l->uneven[kept] = l->uneven[r];
		for (int t = 0; t < m->ntables; t++)
			l->run_dir[kept * m->ntables + t] = l->run_dir[r * m->ntables + t];
		kept++;
	}
	if (l->nruns - kept != ch->ninputs)
		elog(ERROR, "simhash index \"%s\": merge inputs changed under the merge lock",
			 RelationGetRelationName(index));
	l->nruns = kept;
}

/*
 * One change of the metapage (and of the run list, if it changes): both
 * locked exclusively (metapage first) and registered in one GenericXLog
 * record by meta_begin; meta_end logs it (or drops it: nothing to do),
 * copies the result out if asked, and unlocks.
 */
typedef struct MetaEdit
{
	Buffer			  metabuf;
	Buffer			  listbuf;
	GenericXLogState *state;
	SimhashMetaPage	  m;
	SimhashRunList	 *l; /* read-only unless the list was registered */
} MetaEdit;

static void
meta_begin(Relation index, MetaEdit *e, bool list_changes)
{
	e->metabuf = ReadBuffer(index, SIMHASH_METAPAGE_BLKNO);
	e->listbuf = ReadBuffer(index, SIMHASH_RUNLIST_BLKNO);
	LockBuffer(e->metabuf, BUFFER_LOCK_EXCLUSIVE);
	LockBuffer(e->listbuf, BUFFER_LOCK_EXCLUSIVE);
	e->state = GenericXLogStart(index);
	e->m = SimhashPageGetMeta(GenericXLogRegisterBuffer(e->state, e->metabuf, 0));
	if (list_changes)
	{
		Page		  lp = GenericXLogRegisterBuffer(e->state, e->listbuf, 0);
		LocationIndex end =
			(char *) SimhashPageGetRunList(lp) + sizeof(SimhashRunList) - (char *) lp;

		/* a list written before uneven[] existed: cover it (zeroes, in the hole) */
		if (((PageHeader) lp)->pd_lower < end)
			((PageHeader) lp)->pd_lower = end;
		e->l = SimhashPageGetRunList(lp);
	}
	else
		e->l = SimhashPageGetRunList(BufferGetPage(e->listbuf));
}

static bool
meta_end(MetaEdit *e, bool done, SimhashMetaPageData *copy)
{
	if (done)
		GenericXLogFinish(e->state);
	else
		GenericXLogAbort(e->state);
	/* e->m and e->l pointed into the record's page copies, freed by Finish/Abort */
	if (copy)
	{
		memcpy(copy, SimhashPageGetMeta(BufferGetPage(e->metabuf)), SIMHASH_META_SIZE);
		memcpy(&copy->list, SimhashPageGetRunList(BufferGetPage(e->listbuf)),
			   sizeof(SimhashRunList));
	}
	UnlockReleaseBuffer(e->listbuf);
	UnlockReleaseBuffer(e->metabuf);
	return done;
}

/*
 * A flush starts: seal the pending chain (unless a flush that did not finish
 * left one sealed) and hand out the run's generation in ch->gen.  False when
 * there is nothing to flush or no free run slot: the last one is kept for a
 * merge's new run.
 */
static bool
meta_start_flush(Relation index, MetaChange *ch, SimhashMetaPageData *copy)
{
	MetaEdit		e;
	SimhashMetaPage m;
	bool			slot;

	meta_begin(index, &e, false);
	m = e.m;
	slot = e.l->nruns < simhash_max_runs(m->ntables) - 1;
	if (!BlockNumberIsValid(m->sealed_head) && BlockNumberIsValid(m->pending_head) && slot)
	{
		m->sealed_head = m->pending_head;
		m->sealed_chain = m->pending_chain;
		m->nsealed = m->npending;
		m->pending_head = m->pending_tail = InvalidBlockNumber;
		m->npending = 0;
	}
	if (!BlockNumberIsValid(m->sealed_head) || !slot)
		return meta_end(&e, false, copy);
	ch->gen = m->flush_gen = ++m->gen_seq;
	return meta_end(&e, true, copy);
}

/* A flush ends: its run (if not empty) is listed, the sealed chain dropped. */
static void
meta_end_flush(Relation index, const MetaChange *ch)
{
	MetaEdit e;

	meta_begin(index, &e, true);
	e.m->sealed_head = InvalidBlockNumber;
	e.m->nsealed = 0;
	e.m->flush_gen = 0;
	e.m->flushes++;
	if (ch->dir && ch->count > 0)
		add_run(index, e.m, e.l, ch, ch->dir);
	meta_end(&e, true, NULL);
}

/* A merge starts: the generation of its run, in ch->gen and merge_gen. */
static void
meta_start_merge(Relation index, MetaChange *ch, SimhashMetaPageData *copy)
{
	MetaEdit e;

	meta_begin(index, &e, false);
	ch->gen = e.m->merge_gen = ++e.m->gen_seq;
	meta_end(&e, true, copy);
}

/*
 * Table ch->table of a merge's run replaces the inputs' (the run is listed
 * with its table 0); with the last table, the inputs are dropped and the
 * merge ends.
 */
static void
meta_switch_table(Relation index, const MetaChange *ch)
{
	MetaEdit		e;
	SimhashMetaPage m;
	int				r;

	meta_begin(index, &e, true);
	m = e.m;
	if (ch->table == 0)
		add_run(index, m, e.l, ch, NULL);
	r = find_run(e.l, ch->gen);
	if (r < 0)
		elog(ERROR, "simhash index \"%s\": merged run %u is gone", RelationGetRelationName(index),
			 ch->gen);
	e.l->run_dir[r * m->ntables + ch->table] = ch->dir[ch->table];
	for (int j = 0; j < ch->ninputs; j++)
	{
		int i = find_run(e.l, ch->inputs[j]);

		if (i < 0)
			elog(ERROR, "simhash index \"%s\": merge inputs changed under the merge lock",
				 RelationGetRelationName(index));
		e.l->run_dir[i * m->ntables + ch->table] = InvalidBlockNumber;
	}
	if (ch->table == m->ntables - 1)
	{
		drop_inputs(index, m, e.l, ch);
		m->merge_gen = 0;
		m->merges++;
	}
	meta_end(&e, true, NULL);
}

/* A merge of empty inputs (VACUUM removed every entry) ends: they are dropped. */
static void
meta_end_empty_merge(Relation index, const MetaChange *ch)
{
	MetaEdit e;

	meta_begin(index, &e, true);
	drop_inputs(index, e.m, e.l, ch);
	e.m->merge_gen = 0;
	e.m->merges++;
	meta_end(&e, true, NULL);
}

/* Forget the flush (flush_gen) or merge (merge_gen) whose backend is gone. */
static void
meta_clear_mark(Relation index, bool merge)
{
	MetaEdit e;
	uint32	*mark;

	meta_begin(index, &e, false);
	mark = merge ? &e.m->merge_gen : &e.m->flush_gen;
	if (*mark == 0)
	{
		meta_end(&e, false, NULL);
		return;
	}
	*mark = 0;
	meta_end(&e, true, NULL);
}

/*
 * VACUUM starts removing entries of run `gen` in place (uneven: set) or has
 * cleaned every table (count: table 0's entries; uneven: its tables still
 * differ).
 */
static void
meta_mark_clean(Relation index, uint32 gen, bool ended, uint64 count, bool uneven)
{
	MetaEdit e;
	int		 r;

	meta_begin(index, &e, true);
	r = find_run(e.l, gen);
	if (r < 0)
		elog(ERROR, "simhash index \"%s\": run %u to clean is gone", RelationGetRelationName(index),
			 gen);
	if (ended)
		e.l->runs[r].count = count;
	e.l->uneven[r] = !ended || uneven ? 1 : 0;
	meta_end(&e, true, NULL);
}

/*
 * Mark every page of table t of a replaced run DELETED (its directory
 * last), and add them to pool unless it is NULL.
 */
static void
retire_table(Relation index, const SimhashMetaPageData *meta, int r, int t,
			 FullTransactionId safexid, BufferAccessStrategy strategy, SimhashPagePool *pool)
{
	uint32		   gen = meta->list.runs[r].gen;
	PGAlignedBlock dirpage;
	BlockNumber	   dir = simhash_meta_dir(meta, r, t);
	BlockNumber	   ndir = SimhashDirPages(meta->list.runs[r].npages);
	BlockNumber	   nblocks = 0;
	BlockNumber	   d;

	if (!simhash_run_has(meta, r, t))
		return; /* a run of a merge taken over: the other side holds it */
	for (d = 0; d < ndir; d++)
	{
		int i, n;

		simhash_check_link(index, SIMHASH_RUNLIST_BLKNO, dir + d, 0, &nblocks);
		simhash_read_copy(index, dir + d, strategy, dirpage.data);
		simhash_page_check(index, dirpage.data, dir + d, SIMHASH_DIR, gen, t, SIMHASH_PAGE_LIVE);
		n = SimhashDirEntries(index, dir + d, dirpage.data);
		for (i = 0; i < n; i++)
		{
			BlockNumber blkno = simhash_dir_block(SimhashDirEntry(dirpage.data, i));

			simhash_check_link(index, dir + d, blkno, 0, &nblocks);
			simhash_vacuum_delay_point();
			simhash_delete_page(index, blkno, safexid, strategy);
			if (pool)
				simhash_pool_add(pool, blkno, gen);
			else
				simhash_defer_free(index, blkno, safexid);
		}
	}
	for (d = 0; d < ndir; d++)
	{
		simhash_delete_page(index, dir + d, safexid, strategy);
		if (pool)
			simhash_pool_add(pool, dir + d, gen);
		else
			simhash_defer_free(index, dir + d, safexid);
	}
}

/*
 * Forget the flush a crash interrupted, so that VACUUM retires the pages it
 * had written.  The caller holds the flush lock, so no flush is under way.
 */
void
simhash_clear_interrupted(Relation index)
{
	meta_clear_mark(index, false);
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
	SimhashChain		walk;
	Page				page;
	BlockNumber			dir[SIMHASH_MAX_TABLES];
	sh_table		   *tables;
	FullTransactionId	safexid;
	MemoryContext		cxt =
		AllocSetContextCreate(CurrentMemoryContext, "simhash flush", SIMHASH_CONTEXT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(cxt);

	simhash_record_deferred(index, heap);
	if (!meta_start_flush(index, &ch, &meta))
	{
		MemoryContextSwitchTo(old);
		MemoryContextDelete(cxt);
		return false;
	}
	chain = palloc(sizeof(BlockNumber) * chaincap);
	simhash_chain_begin(&walk, index, NULL, meta.sealed_head, BUFFER_LOCK_SHARE, SIMHASH_PENDING,
						meta.sealed_chain, SIMHASH_PAGE_LIVE);
	while ((page = simhash_chain_next(&walk)) != NULL)
	{
		int n = SimhashPageEntries(index, walk.blkno, page);

		for (i = 0; i < n; i++)
		{
			const char	   *e = SimhashPageEntry(page, i);
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
		chain[nchain++] = walk.blkno;
	}

	tables = simhash_layout(meta.blocks, meta.bits, &ntables);
	simhash_write_sorted_runs(index, heap, a.items, a.n, tables, ntables, true, ch.gen, dir,
							  &ch.npages, false);
	ch.count = a.n;
	ch.dir = dir;
	meta_end_flush(index, &ch);

	safexid = ReadNextFullTransactionId();
	for (i = 0; i < nchain; i++)
	{
		simhash_delete_page(index, chain[i], safexid, NULL);
		simhash_defer_free(index, chain[i], safexid);
	}
	MemoryContextSwitchTo(old);
	MemoryContextDelete(cxt);
	return true;
}

/* ---- merge ------------------------------------------------------------- */

/*
 * simhash.debug_pause_merge: a merge stops here, after switching its first
 * table over, until the backend is cancelled or terminated (a testing aid,
 * so that a test interrupts a merge midway, not by timing).  It waits in
 * wait event "Extension" and says so in the server log.
 */
static void
debug_pause(Relation index, uint32 gen, int t)
{
	ereport(LOG, (errmsg("simhash index \"%s\": merge into run %u paused after table %d "
						 "(simhash.debug_pause_merge)",
						 RelationGetRelationName(index), gen, t)));
	for (;;)
	{
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, 1000L,
						 PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
}

/*
 * Write every table of run `gen`, merging the k input runs (streaming: one
 * page per input run in memory), and switch each table over as soon as it is
 * written: the run list then lists the new run for that table and no longer
 * the inputs, whose pages of that table are retired at once.  So a merge
 * needs new pages for one table at a time beyond the index, not a whole
 * copy: a VACUUM reuses the pages of table t for table t + 1 once no scan
 * can still read them.  `meta` is a copy of the metapage taken when the
 * merge started.  An input may hold only some tables (the runs of a merge
 * taken over, see simhash_take_over_merge): each table is merged from the
 * inputs that hold it.
 */
static void
merge_tables(Relation index, Relation heap, const SimhashMetaPageData *meta, const uint32 *gens,
			 int k, uint32 gen, BufferAccessStrategy strategy, SimhashPagePool *pool)
{
	MetaChange		  ch = {0};
	BlockNumber		  dir[SIMHASH_MAX_TABLES];
	SimhashRunCursor *cur = palloc(sizeof(SimhashRunCursor) * k);
	int				 *idx = palloc(sizeof(int) * k);
	int				  t, j;

	for (j = 0; j < k; j++)
	{
		idx[j] = find_run(&meta->list, gens[j]);
		if (idx[j] < 0)
			elog(ERROR, "simhash index \"%s\": run %u to merge is gone",
				 RelationGetRelationName(index), gens[j]);
	}
	ch.gen = gen;
	ch.dir = dir;
	ch.inputs = gens;
	ch.ninputs = k;
	for (t = 0; t < meta->ntables; t++)
	{
		SimhashRunWriter  w;
		FullTransactionId safexid;

		for (j = 0; j < k; j++)
			simhash_run_cursor_init(&cur[j], index, strategy, meta, idx[j], t);
		simhash_run_begin(&w, index, heap, true, t, gen);
		w.pool = pool;
		for (;;)
		{
			int				best = -1;
			uint64			bkey = 0, key;
			ItemPointerData btid, tid;

			for (j = 0; j < k; j++)
			{
				if (!simhash_run_cursor_peek(&cur[j], &key, &tid))
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
			simhash_run_add(&w, bkey, &btid);
		}
		for (j = 0; j < k; j++)
			simhash_run_cursor_close(&cur[j]);
		dir[t] = simhash_run_finish(&w);
		if (t == 0)
		{
			ch.count = w.count;
			ch.npages = w.npages;
		}
		else if (w.count != ch.count || w.npages != ch.npages)
			ereport(ERROR,
					(errcode(ERRCODE_INDEX_CORRUPTED),
					 errmsg("simhash index \"%s\": table %d of the merged runs holds " UINT64_FORMAT
							" entries, table 0 " UINT64_FORMAT,
							RelationGetRelationName(index), t, w.count, ch.count),
					 errhint("REINDEX the index.")));
		if (ch.count == 0)
		{
			/* the inputs were empty (VACUUM removed every entry): drop them */
			meta_end_empty_merge(index, &ch);
			safexid = ReadNextFullTransactionId();
			for (j = 0; j < k; j++)
				for (int u = 0; u < meta->ntables; u++)
					retire_table(index, meta, idx[j], u, safexid, strategy, NULL);
			simhash_fsm_update(index);
			break;
		}
		ch.table = t;
		meta_switch_table(index, &ch);
		safexid = ReadNextFullTransactionId();
		for (j = 0; j < k; j++)
			retire_table(index, meta, idx[j], t, safexid, strategy, pool);
		if (pool)
			simhash_pool_seal(pool);
		simhash_fsm_update(index);
		simhash_refresh_horizon(heap);
		if (simhash_debug_pause_merge && t == 0 && meta->ntables > 1)
			debug_pause(index, gen, t);
	}
	pfree(cur);
	pfree(idx);
}

/*
 * Merge the runs whose generations are listed into one (k = 1: rewrite a
 * run without the holes VACUUM left in it).  The caller holds the merge
 * lock.
 */
static void
merge_runs(Relation index, Relation heap, const uint32 *gens, int k, BufferAccessStrategy strategy,
		   SimhashPagePool *pool)
{
	SimhashMetaPageData meta;
	MetaChange			ch = {0};
	MemoryContext		cxt =
		AllocSetContextCreate(CurrentMemoryContext, "simhash merge", SIMHASH_CONTEXT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(cxt);

	meta_start_merge(index, &ch, &meta);
	merge_tables(index, heap, &meta, gens, k, ch.gen, strategy, pool);
	MemoryContextSwitchTo(old);
	MemoryContextDelete(cxt);
}

/*
 * A merge whose backend is gone: the caller holds the merge lock, and every
 * merge holds it from the moment it records meta->merge_gen until it clears
 * it, so a merge_gen found set under the lock was left by a backend that
 * was cancelled, failed or crashed mid-merge.  Take it over:
 * - if it had switched no table over, forget it (VACUUM's sweep retires the
 *   pages it wrote, which nothing references);
 * - otherwise its run R holds the tables switched so far and its inputs the
 *   others (each run lacks the tables the other side holds): merge R and the
 *   inputs again into a new run, table by table from whichever holds it.
 *   R's pages and the inputs' are retired as each table switches; the pages
 *   the abandoned merge wrote for the table it was writing are referenced by
 *   nothing once R is dropped, and VACUUM's sweep retires them.
 * The work is that of the abandoned merge (an INSERT's is small), never a
 * pass over the whole index.
 */
void
simhash_take_over_merge(Relation index, Relation heap, BufferAccessStrategy strategy,
						SimhashPagePool *pool)
{
	SimhashMetaPageData meta;
	uint32				gens[SIMHASH_MAX_RUNS];
	int					k = 0, o, from;

	simhash_read_meta(index, &meta);
	if (meta.merge_gen == 0)
		return;
	o = find_run(&meta.list, meta.merge_gen);
	if (o < 0)
	{
		ereport(LOG, (errmsg("simhash index \"%s\": forgetting the merge into run %u that an "
							 "interrupted backend left before its first table",
							 RelationGetRelationName(index), meta.merge_gen)));
		meta_clear_mark(index, true);
		return;
	}
	for (from = 0; from < meta.ntables && simhash_run_has(&meta, o, from); from++)
		;
	gens[k++] = meta.merge_gen;
	for (int r = 0; r < meta.list.nruns; r++)
		if (r != o && !simhash_run_has(&meta, r, 0))
			gens[k++] = meta.list.runs[r].gen;
	if (from == 0 || from == meta.ntables || k < 2)
		ereport(ERROR, (errcode(ERRCODE_INDEX_CORRUPTED),
						errmsg("simhash index \"%s\": the interrupted merge of run %u cannot be "
							   "taken over (%d tables written, %d inputs)",
							   RelationGetRelationName(index), meta.merge_gen, from, k - 1),
						errhint("REINDEX the index.")));
	ereport(LOG, (errmsg("simhash index \"%s\": taking over the merge into run %u that an "
						 "interrupted backend left after %d of %d tables",
						 RelationGetRelationName(index), meta.merge_gen, from, meta.ntables)));
	merge_runs(index, heap, gens, k, strategy, pool);
}

/*
 * The runs a merge may take (not uneven, not part of an interrupted merge),
 * largest first; returns how many.
 */
static int
mergeable_runs(const SimhashMetaPageData *meta, SimhashRun *runs)
{
	int n = 0;

	for (int r = 0; r < meta->list.nruns; r++)
		if (!meta->list.uneven[r] && meta->list.runs[r].gen != meta->merge_gen &&
			simhash_run_has(meta, r, 0))
			runs[n++] = meta->list.runs[r];
	if (n > 1)
		qsort(runs, n, sizeof(SimhashRun), simhash_run_cmp_desc);
	return n;
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

	simhash_record_deferred(index, heap);
	if (!ConditionalLockPage(index, SIMHASH_MERGE_LOCK, ExclusiveLock))
		return;
	simhash_take_over_merge(index, heap, NULL, NULL);
	for (;;)
	{
		SimhashMetaPageData meta;
		SimhashRun			runs[SIMHASH_MAX_RUNS];
		uint32				gens[SIMHASH_MAX_RUNS];
		int					k = 0, r, level, nruns, found = -1;

		simhash_read_meta(index, &meta);
		nruns = mergeable_runs(&meta, runs);
		if (meta.list.nruns >= simhash_max_runs(meta.ntables) - 1)
		{
			/* full list: the smallest runs, at least two */
			for (r = nruns - 1; r >= 0 && k < SIMHASH_TIER_RATIO; r--)
				gens[k++] = runs[r].gen;
		}
		else
		{
			for (level = 0; level < 64 && found < 0; level++)
			{
				uint64 pages = 0;

				k = 0;
				for (r = nruns - 1; r >= 0; r--)
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
		merge_runs(index, heap, gens, k, NULL, NULL);
	}
	UnlockPage(index, SIMHASH_MERGE_LOCK, ExclusiveLock);
}

/*
 * Is a run worth rewriting alone?  VACUUM removes dead entries in place, so
 * a run's pages may hold far fewer entries than they can: when they are
 * less than half full, a rewrite at least halves them.
 */
static bool
run_sparse(const SimhashRun *run)
{
	return run->count * 2 < (uint64) run->npages * SIMHASH_PAGE_CAPACITY;
}

/*
 * VACUUM's compaction (the caller holds the merge lock): with the runs
 * sorted largest first, keep each run that holds at least
 * SIMHASH_TIER_RATIO times the rows of all smaller runs together; merge the
 * rest into one.  A kept run whose pages are less than half full (after
 * VACUUM removed dead entries in place) is rewritten alone.  Uneven runs
 * are left as they are.
 */
void
simhash_compact(Relation index, Relation heap, BufferAccessStrategy strategy, SimhashPagePool *pool)
{
	SimhashMetaPageData meta;
	SimhashRun			runs[SIMHASH_MAX_RUNS];
	uint32				gens[SIMHASH_MAX_RUNS];
	uint64				smaller = 0;
	int					first_merged, nruns, r, k = 0;

	simhash_read_meta(index, &meta);
	nruns = mergeable_runs(&meta, runs);

	/* the first run (largest first) that does not dominate the smaller ones */
	first_merged = nruns;
	for (r = nruns - 1; r >= 0; r--)
	{
		if (runs[r].count < (uint64) SIMHASH_TIER_RATIO * smaller)
			first_merged = r;
		smaller += runs[r].count;
	}
	for (r = first_merged; r < nruns; r++)
		gens[k++] = runs[r].gen;
	if (k >= 2)
	{
		simhash_refresh_horizon(heap);
		merge_runs(index, heap, gens, k, strategy, pool);
	}
	for (r = 0; r < nruns; r++)
	{
		if (k >= 2 && r >= first_merged)
			break;
		if (run_sparse(&runs[r]))
		{
			simhash_refresh_horizon(heap);
			merge_runs(index, heap, &runs[r].gen, 1, strategy, pool);
		}
	}
}

/* ---- VACUUM's removal of dead entries in place ---------------------------- */

/*
 * Before the first page of run `gen` changes: flag the run uneven (one WAL
 * record), so that a crash before simhash_clean_end() leaves it out of
 * merges and of the check's count comparison.  The caller holds the merge
 * lock.
 */
void
simhash_clean_begin(Relation index, uint32 gen)
{
	meta_mark_clean(index, gen, false, 0, false);
}

/*
 * Every table of run `gen` cleaned: set its entry count (table 0's), and
 * clear its uneven flag unless its tables still hold different counts.  A
 * run left empty is dropped from the list and its pages retired.
 */
void
simhash_clean_end(Relation index, Relation heap, uint32 gen, uint64 count, bool uneven,
				  BufferAccessStrategy strategy)
{
	meta_mark_clean(index, gen, true, count, uneven);
	if (count == 0 && !uneven)
		merge_runs(index, heap, &gen, 1, strategy, NULL);
}
