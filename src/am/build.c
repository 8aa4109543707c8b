/*
 * build.c — CREATE INDEX: collect (fingerprint, TID) pairs from the heap,
 * sort them once per table, write the runs sequentially, WAL-log the whole
 * relation with log_newpage_range().
 *
 * The pairs are held in memory (16 bytes per row plus one sorted copy); this
 * is not bounded by maintenance_work_mem (documented in the README).
 */
#include "simhash_am.h"

#include "access/tableam.h"
#include "access/xloginsert.h"
#include "catalog/index.h"
#include "commands/progress.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/smgr.h"
#include "utils/memutils.h"

typedef struct BuildState
{
	SimhashItem *items;
	int64		n;
	int64		cap;
	ItemPointerData *nulls;
	int64		nnulls;
	int64		nullcap;
	double		heap_tuples;
} BuildState;

static void
build_callback(Relation index, ItemPointer tid, Datum *values, bool *isnull,
			   bool tupleIsAlive, void *arg)
{
	BuildState *bs = (BuildState *) arg;

	bs->heap_tuples += 1;
	if (isnull[0])
	{
		if (bs->nnulls == bs->nullcap)
		{
			bs->nullcap *= 2;
			bs->nulls = repalloc_huge(bs->nulls, bs->nullcap * sizeof(ItemPointerData));
		}
		bs->nulls[bs->nnulls++] = *tid;
		return;
	}
	if (bs->n == bs->cap)
	{
		bs->cap *= 2;
		bs->items = repalloc_huge(bs->items, bs->cap * sizeof(SimhashItem));
	}
	bs->items[bs->n].fp = simhash_datum_fp(values[0]);
	bs->items[bs->n].tid = *tid;
	bs->n++;
}

/* Write the NULLs chain of a build; returns its head, sets *tail. */
static BlockNumber
write_nulls(Relation index, ItemPointerData *tids, int64 n, BlockNumber *tail)
{
	BlockNumber head = InvalidBlockNumber;
	Buffer		prev = InvalidBuffer;
	int64		i = 0;

	*tail = InvalidBlockNumber;
	while (i < n)
	{
		Buffer		buf = ReadBuffer(index, P_NEW);
		Page		page;
		int			k = 0;

		LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
		page = BufferGetPage(buf);
		simhash_init_page(page, SIMHASH_NULLS);
		for (; i < n && k < SIMHASH_PAGE_CAPACITY; i++, k++)
			simhash_entry_set(SimhashPageEntry(page, k), 0, &tids[i]);
		((PageHeader) page)->pd_lower += k * SIMHASH_ENTRY_SIZE;
		MarkBufferDirty(buf);
		if (BufferIsValid(prev))
		{
			SimhashPageGetOpaque(BufferGetPage(prev))->next = BufferGetBlockNumber(buf);
			MarkBufferDirty(prev);
			UnlockReleaseBuffer(prev);
		}
		else
			head = BufferGetBlockNumber(buf);
		*tail = BufferGetBlockNumber(buf);
		prev = buf;
	}
	if (BufferIsValid(prev))
		UnlockReleaseBuffer(prev);
	return head;
}

IndexBuildResult *
simhash_build(Relation heap, Relation index, IndexInfo *indexInfo)
{
	IndexBuildResult *result;
	BuildState	bs = {0};
	int			bits,
				blocks,
				ntables,
				t;
	sh_table   *tables;
	Buffer		metabuf;
	SimhashMetaPage meta;
	BlockNumber run_start[SIMHASH_MAX_TABLES];
	BlockNumber run_npages;
	MemoryContext cxt,
				old;

	if (RelationGetNumberOfBlocks(index) != 0)
		elog(ERROR, "index \"%s\" already contains data", RelationGetRelationName(index));
	simhash_options_resolve(index, &bits, &blocks);
	tables = simhash_layout(blocks, bits, &ntables);

	/* block 0: the metapage, filled in last */
	metabuf = ReadBuffer(index, P_NEW);
	Assert(BufferGetBlockNumber(metabuf) == SIMHASH_METAPAGE_BLKNO);
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	simhash_init_metapage(BufferGetPage(metabuf), bits, blocks, ntables);
	MarkBufferDirty(metabuf);
	LockBuffer(metabuf, BUFFER_LOCK_UNLOCK);

	cxt = AllocSetContextCreate(CurrentMemoryContext, "simhash build", ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(cxt);
	bs.cap = 1024;
	bs.items = MemoryContextAllocHuge(cxt, bs.cap * sizeof(SimhashItem));
	bs.nullcap = 64;
	bs.nulls = MemoryContextAllocHuge(cxt, bs.nullcap * sizeof(ItemPointerData));

	pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, SIMHASH_PHASE_SCAN);
	table_index_build_scan(heap, index, indexInfo, true, true, build_callback, &bs, NULL);

	pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_TOTAL, bs.n * ntables);
	simhash_write_runs(index, bs.items, bs.n, tables, ntables, run_start, &run_npages, false);

	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	meta = SimhashPageGetMeta(BufferGetPage(metabuf));
	meta->run_npages = run_npages;
	meta->run_count = bs.n;
	for (t = 0; t < ntables; t++)
		meta->run_start[t] = run_start[t];
	meta->nnulls = bs.nnulls;
	meta->nulls_head = write_nulls(index, bs.nulls, bs.nnulls, &meta->nulls_tail);
	MarkBufferDirty(metabuf);
	UnlockReleaseBuffer(metabuf);

	if (RelationNeedsWAL(index))
		log_newpage_range(index, MAIN_FORKNUM, 0, RelationGetNumberOfBlocks(index), true);

	result = palloc(sizeof(IndexBuildResult));
	result->heap_tuples = bs.heap_tuples;
	result->index_tuples = bs.n + bs.nnulls;
	MemoryContextSwitchTo(old);
	MemoryContextDelete(cxt);
	return result;
}

/* The init fork of an unlogged index: just the metapage. */
void
simhash_buildempty(Relation index)
{
	PGAlignedBlock page;
	int			bits,
				blocks,
				ntables;

	simhash_options_resolve(index, &bits, &blocks);
	ntables = sh_table_count(blocks, bits);
	simhash_init_metapage(page.data, bits, blocks, ntables);
	PageSetChecksumInplace(page.data, SIMHASH_METAPAGE_BLKNO);
	smgrwrite(RelationGetSmgr(index), INIT_FORKNUM, SIMHASH_METAPAGE_BLKNO, page.data, true);
	log_newpage(&(RelationGetSmgr(index))->smgr_rnode.node, INIT_FORKNUM,
				SIMHASH_METAPAGE_BLKNO, page.data, true);
	smgrimmedsync(RelationGetSmgr(index), INIT_FORKNUM);
}
