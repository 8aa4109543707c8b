/*
 * build.c — CREATE INDEX: collect (fingerprint, TID) pairs from the heap,
 * sort them once per table and write them as one run (the run writer of
 * runs.c); every page goes to a bulk writer (bulkwrite.c), outside shared
 * buffers, WAL-logged as it is written.
 *
 * While the pairs fit in maintenance_work_mem (16 bytes per row, twice: the
 * pairs and one table's sorted copy) they are sorted in memory.  Beyond that
 * they spill to a tuplestore, and each table is sorted by a tuplesort, both
 * bounded by maintenance_work_mem.  With parallel workers planned, the heap
 * is scanned and the tables sorted and merged by several processes
 * (build_parallel.c); the leader writes the same pages.
 */
#include "simhash_am.h"

#include "build.h"

#include "access/tableam.h"
#include "access/xloginsert.h"
#include "catalog/index.h"
#include "commands/progress.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/smgr.h"
#include "catalog/pg_operator_d.h"
#include "catalog/pg_type_d.h"
#include "executor/tuptable.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/regproc.h"
#include "utils/tuplesort.h"
#include "utils/tuplestore.h"

/* Unsigned key order as int8 order: flip the sign bit. */
#define KEY_TO_INT8(k) ((int64) ((k) ^ UINT64CONST(0x8000000000000000)))
#define INT8_TO_KEY(i) (((uint64) (i)) ^ UINT64CONST(0x8000000000000000))

typedef struct BuildState
{
	SimhashItem		*items;
	int64			 n;
	int64			 cap;
	ItemPointerData *nulls;
	int64			 nnulls;
	int64			 nullcap;
	double			 heap_tuples;
	int64			 mem_limit; /* pairs held in memory before spilling */
	Tuplestorestate *spill;		/* (fingerprint int8, tid) beyond mem_limit */
	TupleDesc		 desc;
} BuildState;

/* One (key, TID) into the build's spill tuplestore. */
static void
spill_put(BuildState *bs, uint64 fp, ItemPointer tid)
{
	Datum values[2];
	bool  nulls[2] = {false, false};

	values[0] = Int64GetDatum((int64) fp);
	values[1] = PointerGetDatum(tid);
	tuplestore_putvalues(bs->spill, bs->desc, values, nulls);
}

/*
 * The build outgrew maintenance_work_mem: move the entries gathered so far
 * into a tuplestore (which spills to disk) and free the array.
 */
static void
start_spill(BuildState *bs)
{
	int64 i;

	bs->desc = CreateTemplateTupleDesc(2);
	TupleDescInitEntry(bs->desc, 1, "k", INT8OID, -1, 0);
	TupleDescInitEntry(bs->desc, 2, "t", TIDOID, -1, 0);
	bs->spill = tuplestore_begin_heap(false, false, Max(maintenance_work_mem / 4, 64));
	for (i = 0; i < bs->n; i++)
		spill_put(bs, bs->items[i].key, &bs->items[i].tid);
	pfree(bs->items);
	bs->items = NULL;
}

/*
 * table_index_build_scan's callback: NULL or unindexable values go to the
 * NULLs list, fingerprints to the array (or the spill once it is full).
 */
static void
build_callback(Relation index, ItemPointer tid, Datum *values, bool *isnull, bool tupleIsAlive,
			   void *arg)
{
	BuildState *bs = (BuildState *) arg;
	uint64		fp;

	bs->heap_tuples += 1;
	if (isnull[0] || !simhash_index_value(index, values[0], &fp))
	{
		if (bs->nnulls == bs->nullcap)
		{
			bs->nullcap *= 2;
			bs->nulls = repalloc_huge(bs->nulls, bs->nullcap * sizeof(ItemPointerData));
		}
		bs->nulls[bs->nnulls++] = *tid;
		return;
	}
	if (bs->spill != NULL || bs->n >= bs->mem_limit)
	{
		if (bs->spill == NULL)
			start_spill(bs);
		spill_put(bs, fp, tid);
		bs->n++;
		return;
	}
	if (bs->n == bs->cap)
	{
		bs->cap = Min(bs->cap * 2, Max(bs->mem_limit, 1024));
		bs->items = repalloc_huge(bs->items, bs->cap * sizeof(SimhashItem));
	}
	bs->items[bs->n].key = fp;
	bs->items[bs->n].tid = *tid;
	bs->n++;
}

/*
 * The spilled build: per table, sort the permuted pairs with a tuplesort and
 * write them through the run writer; returns the directory's first block.
 */
static BlockNumber
write_run_sorted(Relation heap, Relation index, BuildState *bs, const sh_table *tab, int t,
				 SimhashBuilt *built)
{
	AttrNumber		 attnums[2] = {1, 2};
	Oid				 ops[2] = {Int8LessOperator, TIDLessOperator};
	Oid				 colls[2] = {InvalidOid, InvalidOid};
	bool			 nullsfirst[2] = {false, false};
	Tuplesortstate	*sort;
	TupleTableSlot	*in = MakeSingleTupleTableSlot(bs->desc, &TTSOpsMinimalTuple);
	TupleTableSlot	*out = MakeSingleTupleTableSlot(bs->desc, &TTSOpsMinimalTuple);
	TupleTableSlot	*v = MakeSingleTupleTableSlot(bs->desc, &TTSOpsVirtual);
	SimhashRunWriter w;
	BlockNumber		 dir;

	sort = tuplesort_begin_heap(bs->desc, 2, attnums, ops, colls, nullsfirst,
								Max(maintenance_work_mem * 3 / 4, 64), NULL, TUPLESORT_NONE);
	pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, SIMHASH_PHASE_SORT);
	tuplestore_rescan(bs->spill);
	while (tuplestore_gettupleslot(bs->spill, true, false, in))
	{
		bool   isnull;
		uint64 fp = (uint64) DatumGetInt64(slot_getattr(in, 1, &isnull));

		CHECK_FOR_INTERRUPTS();
		ExecClearTuple(v);
		v->tts_values[0] = Int64GetDatum(KEY_TO_INT8(sh_table_permute(tab, fp)));
		v->tts_values[1] = slot_getattr(in, 2, &isnull);
		v->tts_isnull[0] = v->tts_isnull[1] = false;
		ExecStoreVirtualTuple(v);
		tuplesort_puttupleslot(sort, v);
	}
	tuplesort_performsort(sort);
	pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, SIMHASH_PHASE_WRITE);

	simhash_run_begin_sink(&w, index, built->sink, t, 1);
	while (tuplesort_gettupleslot(sort, true, false, out, NULL))
	{
		bool			isnull;
		uint64			key = INT8_TO_KEY(DatumGetInt64(slot_getattr(out, 1, &isnull)));
		ItemPointerData tid = *(ItemPointer) DatumGetPointer(slot_getattr(out, 2, &isnull));

		simhash_run_add(&w, key, &tid);
		if ((w.count & 65535) == 0)
			pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_DONE,
										 (int64) t * bs->n + (int64) w.count);
	}
	dir = simhash_run_finish(&w);
	if (w.count != (uint64) bs->n)
		elog(ERROR, "simhash build: table %d got " UINT64_FORMAT " entries, expected " INT64_FORMAT,
			 t, w.count, bs->n);
	built->run_npages = w.npages;
	tuplesort_end(sort);
	ExecDropSingleTupleTableSlot(in);
	ExecDropSingleTupleTableSlot(out);
	ExecDropSingleTupleTableSlot(v);
	return dir;
}

/*
 * keys = items permuted for table tab, in (key, TID) order.  The items are
 * distributed by the top SORT_BUCKET_BITS bits of their permuted key (a
 * counting pass, then each item put straight into its bucket's place in
 * keys) and each bucket is sorted with the (key, TID) comparator, in cache:
 * on uniform fingerprints 4M items make buckets of 16K.  256 buckets keep
 * the scatter's write streams within the caches and TLB (65,536 made the
 * scatter miss on every write: a serial 4M-row build took 14.8 s against
 * 7.3-8.9 s with 256, on 15).  Skewed keys fall back to the comparison sort
 * within their bucket; the order is the same whatever the bits.
 */
#define SORT_BUCKET_BITS 8
#define SORT_BUCKETS	 (1 << SORT_BUCKET_BITS)

void
simhash_permute_sorted(const SimhashItem *items, int64 n, const sh_table *tab, SimhashItem *keys)
{
	int64 *start = palloc0((SORT_BUCKETS + 1) * sizeof(int64));
	int64  i;

	for (i = 0; i < n; i++)
		start[(sh_table_permute(tab, items[i].key) >> (64 - SORT_BUCKET_BITS)) + 1]++;
	for (i = 1; i <= SORT_BUCKETS; i++)
		start[i] += start[i - 1];
	for (i = 0; i < n; i++)
	{
		uint64 key = sh_table_permute(tab, items[i].key);
		int64  at = start[key >> (64 - SORT_BUCKET_BITS)]++;

		keys[at].key = key;
		keys[at].tid = items[i].tid;
	}
	/* start[b] is now the end of bucket b, the start of bucket b + 1 */
	for (i = 0; i < SORT_BUCKETS; i++)
	{
		int64 from = i == 0 ? 0 : start[i - 1];

		if (start[i] - from > 1)
			simhash_sort_items(keys + from, start[i] - from);
		if ((i & 1023) == 0)
			CHECK_FOR_INTERRUPTS();
	}
	pfree(start);
}

/*
 * The in-memory build: each table's permuted pairs sorted and written as
 * the run's table, with progress (sorting, writing, tuples done).
 */
static void
write_runs_in_memory(Relation heap, Relation index, const SimhashItem *items, int64 n,
					 const sh_table *tables, int ntables, SimhashBuilt *out)
{
	SimhashItem *keys =
		MemoryContextAllocExtended(CurrentMemoryContext, Max(n, 1) * sizeof(SimhashItem),
								   MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);

	out->run_npages = 0;
	for (int t = 0; t < ntables; t++)
	{
		SimhashRunWriter w;

		pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, SIMHASH_PHASE_SORT);
		simhash_permute_sorted(items, n, &tables[t], keys);
		pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, SIMHASH_PHASE_WRITE);
		simhash_run_begin_sink(&w, index, out->sink, t, 1);
		for (int64 i = 0; i < n; i++)
		{
			simhash_run_add(&w, keys[i].key, &keys[i].tid);
			if ((i & 65535) == 0)
				pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_DONE, (int64) t * n + i);
		}
		out->dir[t] = simhash_run_finish(&w);
		out->run_npages = w.npages;
	}
	pfree(keys);
}

/*
 * Write the NULLs chain of a build into the sink (blocks from sink->next
 * on); returns its head, sets *tail.
 */
static BlockNumber
write_nulls(SimhashPageSink *sink, ItemPointerData *tids, int64 n, BlockNumber *tail)
{
	BlockNumber	   head = n > 0 ? sink->next : InvalidBlockNumber;
	PGAlignedBlock image;
	int64		   i = 0;

	*tail = InvalidBlockNumber;
	while (i < n)
	{
		int k = 0;

		simhash_init_page(image.data, SIMHASH_NULLS);
		for (; i < n && k < SIMHASH_PAGE_CAPACITY; i++, k++)
			simhash_entry_set(SimhashPageEntry(image.data, k), 0, &tids[i]);
		((PageHeader) image.data)->pd_lower += k * SIMHASH_ENTRY_SIZE;
		if (i < n)
			SimhashPageGetOpaque(image.data)->next = sink->next + 1;
		*tail = sink->next++;
		sink->put(sink, *tail, image.data);
	}
	return head;
}

/*
 * An exclusion constraint must not depend on the session: % and ~% read
 * simhash.max_distance, so a constraint on them would hold whatever radius
 * each inserting session set (and a dump restored under another setting
 * could fail).  Only @%@ over simhash_query(fp, r), whose radius is part of
 * the constraint's definition, is accepted.  42P17 as for an index
 * expression that is not immutable: the definition itself is unfit.
 */
static void
check_exclusion(Relation index, IndexInfo *indexInfo)
{
	if (indexInfo->ii_ExclusionOps == NULL)
		return;
	for (int i = 0; i < indexInfo->ii_NumIndexKeyAttrs; i++)
	{
		Oid op = indexInfo->ii_ExclusionOps[i];

		if (get_op_opfamily_strategy(op, index->rd_opfamily[i]) != SIMHASH_PAIR_STRATEGY)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
					 errmsg("simhash index \"%s\" cannot enforce an exclusion constraint with "
							"operator %s",
							RelationGetRelationName(index), get_opname(op)),
					 errdetail("The operator's radius is the session setting "
							   "simhash.max_distance, so any session could bypass the "
							   "constraint."),
					 errhint("Fix the radius in the constraint: EXCLUDE USING simhash "
							 "(simhash_query(fp, 3) WITH @%%@).")));
	}
}

/*
 * The serial build: one scan of the heap, then each table sorted (in memory,
 * or by a tuplesort once the pairs outgrow maintenance_work_mem) and
 * written as the run's table.
 */
static void
build_serial(Relation heap, Relation index, IndexInfo *indexInfo, const sh_table *tables,
			 int ntables, SimhashBuilt *out)
{
	BuildState bs = {0};

	bs.mem_limit =
		Max((int64) 1024, (int64) maintenance_work_mem * 1024 / (2 * (int64) sizeof(SimhashItem)));
	bs.cap = 1024;
	bs.items = MemoryContextAllocHuge(CurrentMemoryContext, bs.cap * sizeof(SimhashItem));
	bs.nullcap = 64;
	bs.nulls = MemoryContextAllocHuge(CurrentMemoryContext, bs.nullcap * sizeof(ItemPointerData));

	table_index_build_scan(heap, index, indexInfo, true, true, build_callback, &bs, NULL);

	pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_TOTAL, bs.n * ntables);
	if (bs.spill == NULL)
		write_runs_in_memory(heap, index, bs.items, bs.n, tables, ntables, out);
	else
	{
		for (int t = 0; t < ntables; t++)
			out->dir[t] = write_run_sorted(heap, index, &bs, &tables[t], t, out);
		tuplestore_end(bs.spill);
	}
	out->n = bs.n;
	out->nulls = bs.nulls;
	out->nnulls = bs.nnulls;
	out->heap_tuples = bs.heap_tuples;
}

/*
 * ambuild: scan the heap (in parallel when workers are planned, see
 * build_parallel.c), then write one sorted run per permuted table (each
 * with its directory), the NULLs chain, the run list and the metapage.
 */
IndexBuildResult *
simhash_build(Relation heap, Relation index, IndexInfo *indexInfo)
{
	IndexBuildResult *result;
	SimhashBuilt	  built = {0};
	int				  bits, blocks, ntables, t, nworkers;
	sh_table		 *tables;
	Page			  metapage, listpage;
	BlockNumber		  nulls_head, nulls_tail;
	SimhashMetaPage	  meta;
	SimhashRunList	 *list;
	MemoryContext	  cxt, old;

	if (RelationGetNumberOfBlocks(index) != 0)
		elog(ERROR, "index \"%s\" already contains data", RelationGetRelationName(index));
	check_exclusion(index, indexInfo);
	simhash_options_resolve(index, &bits, &blocks);
	tables = simhash_layout(blocks, bits, &ntables);

	cxt = AllocSetContextCreate(CurrentMemoryContext, "simhash build", SIMHASH_CONTEXT_SIZES);
	old = MemoryContextSwitchTo(cxt);

	/*
	 * Every page goes through the bulk writer; block 0 (the metapage) and
	 * block 1 (the run list) are written last, the run from block 2 on.
	 */
	built.bulk = simhash_bulk_begin(index);
	built.sink = simhash_bulk_sink(built.bulk, SIMHASH_RUNLIST_BLKNO + 1);

	/*
	 * The table's size goes with the phase, in one update: the table scan
	 * reports it too, but only once it has started, and a reader between the
	 * two would see the scan phase with no total.
	 */
	{
		const int	params[] = {PROGRESS_CREATEIDX_SUBPHASE, PROGRESS_SCAN_BLOCKS_TOTAL,
								PROGRESS_SCAN_BLOCKS_DONE};
		const int64 values[] = {SIMHASH_PHASE_SCAN, RelationGetNumberOfBlocks(heap), 0};

		pgstat_progress_update_multi_param(3, params, values);
	}
	nworkers = simhash_build_workers(heap, index, indexInfo);
	if (nworkers > 0)
		ereport(DEBUG1, (errmsg_internal("simhash index \"%s\": parallel build, %d workers planned",
										 RelationGetRelationName(index), nworkers)));
	if (nworkers == 0 || !simhash_build_parallel(heap, index, indexInfo, nworkers, ntables, &built))
		build_serial(heap, index, indexInfo, tables, ntables, &built);

	listpage = simhash_bulk_page(built.bulk);
	simhash_init_runlist(listpage);
	list = SimhashPageGetRunList(listpage);
	if (built.n > 0)
	{
		list->nruns = 1;
		list->runs[0].gen = 1;
		list->runs[0].npages = built.run_npages;
		list->runs[0].count = built.n;
		for (t = 0; t < ntables; t++)
			list->run_dir[t] = built.dir[t];
	}
	simhash_bulk_write(built.bulk, SIMHASH_RUNLIST_BLKNO, listpage);
	nulls_head = write_nulls(built.sink, built.nulls, built.nnulls, &nulls_tail);
	metapage = simhash_bulk_page(built.bulk);
	simhash_init_metapage(metapage, bits, blocks, ntables);
	meta = SimhashPageGetMeta(metapage);
	meta->gen_seq = 1;
	meta->nnulls = built.nnulls;
	meta->nulls_head = nulls_head;
	meta->nulls_tail = nulls_tail;
	simhash_bulk_write(built.bulk, SIMHASH_METAPAGE_BLKNO, metapage);
	simhash_bulk_finish(built.bulk);

	/* The result outlives the build's context: allocate it in the caller's. */
	MemoryContextSwitchTo(old);
	result = palloc(sizeof(IndexBuildResult));
	result->heap_tuples = built.heap_tuples;
	result->index_tuples = (double) (built.n + built.nnulls);
	MemoryContextDelete(cxt);
	return result;
}

/* The init fork of an unlogged index: the metapage and an empty run list. */
void
simhash_buildempty(Relation index)
{
	PGIOAlignedBlock page;
	int				 bits, blocks, ntables;
	BlockNumber		 blkno;

	simhash_options_resolve(index, &bits, &blocks);
	ntables = sh_table_count(blocks, bits);
	for (blkno = SIMHASH_METAPAGE_BLKNO; blkno <= SIMHASH_RUNLIST_BLKNO; blkno++)
	{
		if (blkno == SIMHASH_METAPAGE_BLKNO)
			simhash_init_metapage(page.data, bits, blocks, ntables);
		else
			simhash_init_runlist(page.data);
		PageSetChecksumInplace(page.data, blkno);
		smgrwrite(RelationGetSmgr(index), INIT_FORKNUM, blkno, page.data, true);
		log_newpage(&SimhashSmgrFile(RelationGetSmgr(index)), INIT_FORKNUM, blkno, page.data, true);
	}
	smgrimmedsync(RelationGetSmgr(index), INIT_FORKNUM);
}
