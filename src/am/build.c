/*
 * build.c — CREATE INDEX: collect (fingerprint, TID) pairs from the heap,
 * sort them once per table and write them as one run (the run writer of
 * runs.c); every page goes to a bulk writer (bulkwrite.c), outside shared
 * buffers, WAL-logged as it is written.
 *
 * While the pairs fit in maintenance_work_mem (16 bytes per row, twice: the
 * pairs and one table's sorted copy) they are sorted in memory.  Beyond that,
 * whenever the memory is full, they are sorted once per table and written as
 * a sorted chunk to that table's temporary file, and each table is merged
 * from its chunks (the merge of build_parallel.c).  With parallel workers planned, the heap
 * is scanned and the tables sorted and merged by several processes
 * (build_parallel.c); the leader writes the same pages.
 */
#include "simhash_am.h"
#include "runs.h"

#include "build_parallel.h"
#include "build_sort.h"

#include "access/tableam.h"
#include "access/xloginsert.h"
#include "catalog/index.h"
#include "commands/progress.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/smgr.h"
#include "catalog/pg_type.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "storage/buffile.h"

typedef struct BuildState
{
	const sh_table	*tables;
	int				 ntables;
	SimhashItem		*items; /* the pairs held, n of them */
	int64			 n;
	int64			 cap;
	int64			 total; /* pairs seen: held and written to chunks */
	ItemPointerData *nulls;
	int64			 nnulls;
	int64			 nullcap;
	double			 heap_tuples;
	int64			 mem_limit; /* pairs held in memory before a chunk is written */
	/* once the pairs outgrow mem_limit: one temporary file per table */
	BufFile **files;
	int		  nchunks;
	int		  chunkcap;
	int64	 *chunk_blk; /* chunk c's first block, the same in every table's file */
	int64	 *chunk_n;	 /* and its pairs */
	int64	  nextblk;	 /* the block the next chunk starts at */
} BuildState;

/*
 * The pairs held outgrew maintenance_work_mem (or the scan ended after they
 * did): sort them once per table and append each table's sorted chunk to
 * its file, padded to a whole block so that a merge input reads whole
 * blocks; empty the array.  The permuted copy is zeroed once, so the
 * padding of each item written is defined.
 */
static void
write_spill_chunk(BuildState *bs)
{
	SimhashItem *keys =
		MemoryContextAllocExtended(CurrentMemoryContext, Max(bs->n, 1) * sizeof(SimhashItem),
								   MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	size_t				  bytes = bs->n * sizeof(SimhashItem);
	size_t				  pad = (BLCKSZ - bytes % BLCKSZ) % BLCKSZ;
	static PGAlignedBlock zeros; /* all zero, never written */

	if (bs->files == NULL)
	{
		bs->files = palloc0(bs->ntables * sizeof(BufFile *));
		for (int t = 0; t < bs->ntables; t++)
			bs->files[t] = BufFileCreateTemp(false);
	}
	if (bs->nchunks == bs->chunkcap)
	{
		bs->chunkcap = Max(bs->chunkcap * 2, 8);
		bs->chunk_blk = bs->chunk_blk == NULL
							? palloc(bs->chunkcap * sizeof(int64))
							: repalloc(bs->chunk_blk, bs->chunkcap * sizeof(int64));
		bs->chunk_n = bs->chunk_n == NULL ? palloc(bs->chunkcap * sizeof(int64))
										  : repalloc(bs->chunk_n, bs->chunkcap * sizeof(int64));
	}
	for (int t = 0; t < bs->ntables; t++)
	{
		simhash_permute_sorted(bs->items, bs->n, &bs->tables[t], keys);
		BufFileWrite(bs->files[t], keys, bytes);
		if (pad > 0)
			BufFileWrite(bs->files[t], zeros.data, pad);
	}
	pfree(keys);
	bs->chunk_blk[bs->nchunks] = bs->nextblk;
	bs->chunk_n[bs->nchunks] = bs->n;
	bs->nchunks++;
	bs->nextblk += (int64) ((bytes + pad) / BLCKSZ);
	bs->n = 0;
}

/*
 * table_index_build_scan's callback: NULL or unindexable values go to the
 * NULLs list, fingerprints to the array (written out as sorted chunks
 * whenever it is full).
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
	if (bs->n == bs->mem_limit)
		write_spill_chunk(bs);
	if (bs->n == bs->cap)
	{
		bs->cap = Min(bs->cap * 2, bs->mem_limit);
		bs->items = repalloc_huge(bs->items, bs->cap * sizeof(SimhashItem));
	}
	bs->items[bs->n].key = fp;
	bs->items[bs->n].tid = *tid;
	bs->n++;
	bs->total++;
}

/*
 * The spilled build: each table the merge of its sorted chunks, written as
 * the run's table; its file is dropped once merged.
 */
static void
write_runs_spilled(Relation index, BuildState *bs, SimhashBuilt *out)
{
	SimhashChunk *chunks = palloc(bs->nchunks * sizeof(SimhashChunk));

	for (int t = 0; t < bs->ntables; t++)
	{
		BlockNumber first = out->sink->next;

		pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, SIMHASH_PHASE_WRITE);
		for (int c = 0; c < bs->nchunks; c++)
		{
			chunks[c].file = bs->files[t];
			chunks[c].blk = bs->chunk_blk[c];
			chunks[c].n = bs->chunk_n[c];
		}
		simhash_merge_chunks(index, chunks, bs->nchunks, t, bs->total, out->sink,
							 (int64) t * bs->total);
		BufFileClose(bs->files[t]);
		bs->files[t] = NULL;
		out->run_npages =
			(BlockNumber) ((bs->total + SIMHASH_PAGE_CAPACITY - 1) / SIMHASH_PAGE_CAPACITY);
		out->dir[t] = bs->total > 0 ? first + out->run_npages : InvalidBlockNumber;
	}
	pfree(chunks);
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
 * Text is indexed through its fingerprint, never as itself: the operator
 * class simhash_text_ops (default for text, and so for varchar and citext)
 * exists only so that CREATE INDEX ... USING simhash (body) reaches this
 * error and its hint, instead of PostgreSQL's "no default operator class".
 */
static void
check_indexed_type(Relation heap, Relation index, IndexInfo *indexInfo)
{
	AttrNumber	col = indexInfo->ii_IndexAttrNumbers[0];
	Oid			heapoid = RelationGetRelid(heap);
	const char *name;

	if (index->rd_opcintype[0] != TEXTOID)
		return;
	if (col == 0)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("a simhash index cannot index an expression of type text"),
				 errdetail("A simhash index holds 64-bit fingerprints (simhash or bigint)."),
				 errhint("Index the fingerprint of the text: USING simhash (simhash(...)).")));
	name = quote_identifier(get_attname(heapoid, col, false));
	ereport(ERROR,
			(errcode(ERRCODE_DATATYPE_MISMATCH),
			 errmsg("a simhash index cannot index column %s of type %s", name,
					format_type_be(get_atttype(heapoid, col))),
			 errdetail("A simhash index holds 64-bit fingerprints (simhash or bigint)."),
			 errhint("Index the fingerprint: USING simhash (simhash(%s)), or better a column "
					 "fp simhash GENERATED ALWAYS AS (simhash(%s)) STORED, indexed USING "
					 "simhash (fp).",
					 name, name)));
}

/*
 * The serial build: one scan of the heap, then each table sorted in memory
 * and written as the run's table; or, once the pairs outgrow
 * maintenance_work_mem, written as sorted chunks during the scan (as a
 * participant of the parallel build does) and each table merged from them.
 */
static void
build_serial(Relation heap, Relation index, IndexInfo *indexInfo, const sh_table *tables,
			 int ntables, SimhashBuilt *out)
{
	BuildState bs = {0};

	/*
	 * Every page goes through the bulk writer; block 0 (the metapage) and
	 * block 1 (the run list) are written last, the run from block 2 on.
	 */
	out->bulk = simhash_bulk_begin(index);
	out->sink = simhash_bulk_sink(out->bulk, SIMHASH_RUNLIST_BLKNO + 1);
	bs.tables = tables;
	bs.ntables = ntables;
	bs.mem_limit =
		Max((int64) 1024, (int64) maintenance_work_mem * 1024 / (2 * (int64) sizeof(SimhashItem)));
	bs.cap = 1024;
	bs.items = MemoryContextAllocHuge(CurrentMemoryContext, bs.cap * sizeof(SimhashItem));
	bs.nullcap = 64;
	bs.nulls = MemoryContextAllocHuge(CurrentMemoryContext, bs.nullcap * sizeof(ItemPointerData));

	table_index_build_scan(heap, index, indexInfo, true, true, build_callback, &bs, NULL);

	pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_TOTAL, bs.total * ntables);
	if (bs.nchunks == 0)
		write_runs_in_memory(heap, index, bs.items, bs.n, tables, ntables, out);
	else
	{
		pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, SIMHASH_PHASE_SORT);
		if (bs.n > 0)
			write_spill_chunk(&bs);
		pfree(bs.items);
		bs.items = NULL;
		ereport(DEBUG1,
				(errmsg_internal("simhash index \"%s\": serial build spilled, %d sorted chunks "
								 "per table",
								 RelationGetRelationName(index), bs.nchunks)));
		write_runs_spilled(index, &bs, out);
	}
	out->n = bs.total;
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
	check_indexed_type(heap, index, indexInfo);
	check_exclusion(index, indexInfo);
	simhash_options_resolve(index, &bits, &blocks);
	tables = simhash_layout(blocks, bits, &ntables);

	cxt = AllocSetContextCreate(CurrentMemoryContext, "simhash build", SIMHASH_CONTEXT_SIZES);
	old = MemoryContextSwitchTo(cxt);

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
