/*
 * build_parallel.c — CREATE INDEX with parallel workers, planned as for
 * btree (max_parallel_maintenance_workers, the table's parallel_workers,
 * at least 32 MB of maintenance_work_mem per participant, serial for
 * temporary tables and parallel-unsafe index expressions).
 *
 * The participants (the workers, and the leader unless
 * parallel_leader_participation is off) scan the heap in parallel.  Each
 * holds (fingerprint, TID) pairs in its share of maintenance_work_mem (the
 * planned participants split it, as btree's do); whenever the share is full
 * and at the end of its scan it sorts them once per permuted table and
 * writes each table's sorted chunk to a temporary file of a shared file set;
 * NULLs go to a file of their own.  Once every participant has scanned, the
 * run's layout is known (each table's pages and directory, one table after
 * the other, as a serial build writes them): the leader extends the index
 * file to the run's end, and then the workers and the leader each claim the
 * next table, merge the chunks of all participants in (key, TID) order into
 * a run writer and write its pages straight into the index at their final
 * blocks, through a bulk writer of their own (WAL-logged, and synced or
 * registered for the checkpoint, by the process that wrote them).  The
 * leader then writes the NULLs, sorted by TID, the run list and the
 * metapage: the index is the one a serial build writes, page for page.
 *
 * The same code runs on every server: 17+ plan the workers themselves
 * (amcanbuildparallel), older ones are asked here (compat.h).
 */
#include "simhash_am.h"
#include "runs.h"

#include "build_parallel.h"
#include "build_sort.h"

#include "access/parallel.h"
#include "access/relscan.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/index.h"
#include "commands/progress.h"
#include "miscadmin.h"
#include "optimizer/optimizer.h"
#include "pgstat.h"
#include "storage/buffile.h"
#include "storage/condition_variable.h"
#include "storage/sharedfileset.h"
#include "storage/spin.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"

/* Keys of the parallel context's table of contents. */
#define SIMHASH_KEY_SHARED	UINT64CONST(0x5348495842000001)
#define SIMHASH_KEY_FILESET UINT64CONST(0x5348495842000002)
#define SIMHASH_KEY_SCAN	UINT64CONST(0x5348495842000003)

/* What one participant did, written by it when it is done. */
typedef struct SimhashParticipantDone
{
	bool   done;
	int	   nchunks; /* sorted chunks written per table */
	int64  n;		/* fingerprints */
	int64  nnulls;
	double heap_tuples;
} SimhashParticipantDone;

/* The build's shared state. */
typedef struct SimhashBuildShared
{
	Oid					   heaprelid;
	Oid					   indexrelid;
	bool				   isconcurrent;
	int					   nslots;		/* planned workers + the leader */
	int64				   chunk_items; /* pairs a participant holds before it writes a chunk */
	int					   ntables;
	ConditionVariable	   cv;		   /* a scan ended, the file grew, a table was merged */
	slock_t				   mutex;	   /* protects what follows */
	int					   nscanners;  /* participants that scan, -1 until launched */
	int					   nscanned;   /* those done scanning */
	bool				   extended;   /* the index file holds the run's blocks */
	int					   next_table; /* the next table to merge */
	int					   nmerged;	   /* tables merged (their pages handed over) */
	bool				   brokenhotchain;
	SimhashParticipantDone part[FLEXIBLE_ARRAY_MEMBER];
} SimhashBuildShared;

/* A participant's state while it scans. */
typedef struct Participant
{
	Relation	   index;
	SharedFileSet *fileset;
	int			   p; /* its slot: ParallelWorkerNumber, the leader last */
	sh_table	  *tables;
	int			   ntables;
	SimhashItem	  *items;
	int64		   n, cap, limit;
	BufFile		  *nulls;
	int			   nchunks;
	int64		   total, nnulls;
	double		   heap_tuples;
} Participant;

static void
chunk_name(char *name, int p, int t, int c)
{
	snprintf(name, MAXPGPATH, "simhash.p%d.t%d.c%d", p, t, c);
}

static void
nulls_name(char *name, int p)
{
	snprintf(name, MAXPGPATH, "simhash.p%d.nulls", p);
}

/*
 * Write the pairs held as one sorted chunk per table and empty the array.
 * The permuted copy is zeroed once, so the padding of each item written is
 * defined.
 */
static void
write_chunk(Participant *pt)
{
	SimhashItem *keys =
		MemoryContextAllocExtended(CurrentMemoryContext, Max(pt->n, 1) * sizeof(SimhashItem),
								   MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	char name[MAXPGPATH];

	for (int t = 0; t < pt->ntables; t++)
	{
		BufFile *file;

		simhash_permute_sorted(pt->items, pt->n, &pt->tables[t], keys);
		chunk_name(name, pt->p, t, pt->nchunks);
		file = BufFileCreateFileSet(&pt->fileset->fs, name);
		BufFileWrite(file, keys, pt->n * sizeof(SimhashItem));
		BufFileClose(file);
	}
	pfree(keys);
	pt->nchunks++;
	pt->n = 0;
}

/* table_index_build_scan's callback in a participant. */
static void
participant_callback(Relation index, ItemPointer tid, Datum *values, bool *isnull,
					 bool tupleIsAlive, void *arg)
{
	Participant *pt = (Participant *) arg;
	uint64		 fp;

	pt->heap_tuples += 1;
	if (isnull[0] || !simhash_index_value(index, values[0], &fp))
	{
		BufFileWrite(pt->nulls, tid, sizeof(ItemPointerData));
		pt->nnulls++;
		return;
	}
	if (pt->n == pt->limit)
		write_chunk(pt);
	if (pt->n == pt->cap)
	{
		pt->cap = Min(pt->cap * 2, pt->limit);
		pt->items = repalloc_huge(pt->items, pt->cap * sizeof(SimhashItem));
	}
	pt->items[pt->n].key = fp;
	pt->items[pt->n].tid = *tid;
	pt->n++;
	pt->total++;
}

/*
 * One participant's share of the build: scan what the parallel scan hands
 * it, write its chunks and NULLs, record what it did in its slot.
 */
static void
participate(SimhashBuildShared *shared, SharedFileSet *fileset, ParallelTableScanDesc pscan,
			Relation heap, Relation index, IndexInfo *indexInfo, int p, bool progress)
{
	MemoryContext cxt = AllocSetContextCreate(CurrentMemoryContext, "simhash build participant",
											  SIMHASH_CONTEXT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(cxt);
	Participant	  pt = {0};
	TableScanDesc scan;
	int			  bits, blocks;
	char		  name[MAXPGPATH];

	simhash_options_resolve(index, &bits, &blocks);
	pt.tables = simhash_layout(blocks, bits, &pt.ntables);
	pt.index = index;
	pt.fileset = fileset;
	pt.p = p;
	pt.limit = shared->chunk_items;
	pt.cap = Min((int64) 1024, pt.limit);
	pt.items = MemoryContextAllocHuge(cxt, pt.cap * sizeof(SimhashItem));
	nulls_name(name, p);
	pt.nulls = BufFileCreateFileSet(&fileset->fs, name);

	scan = table_beginscan_parallel(heap, pscan);
	table_index_build_scan(heap, index, indexInfo, true, progress, participant_callback, &pt, scan);
	if (pt.n > 0)
		write_chunk(&pt);
	BufFileClose(pt.nulls);

	SpinLockAcquire(&shared->mutex);
	shared->part[p].nchunks = pt.nchunks;
	shared->part[p].n = pt.total;
	shared->part[p].nnulls = pt.nnulls;
	shared->part[p].heap_tuples = pt.heap_tuples;
	shared->part[p].done = true;
	shared->nscanned++;
	if (indexInfo->ii_BrokenHotChain)
		shared->brokenhotchain = true;
	SpinLockRelease(&shared->mutex);
	ConditionVariableBroadcast(&shared->cv);

	MemoryContextSwitchTo(old);
	MemoryContextDelete(cxt);
}

/* ---- the merges ------------------------------------------------------- */

/*
 * Table t of the run (n entries): the merge of every participant's chunks
 * of table t, each a file of the file set, into the sink.
 */
static void
merge_table(Relation index, SimhashBuildShared *shared, SharedFileSet *fileset, int t, int64 n,
			SimhashPageSink *sink, int64 progress_base)
{
	int			  k = 0, nin = 0;
	SimhashChunk *chunks;
	char		  name[MAXPGPATH];

	for (int p = 0; p < shared->nslots; p++)
		k += shared->part[p].nchunks;
	chunks = palloc(sizeof(SimhashChunk) * Max(k, 1));
	for (int p = 0; p < shared->nslots; p++)
		for (int c = 0; c < shared->part[p].nchunks; c++)
		{
			chunk_name(name, p, t, c);
			chunks[nin].file = BufFileOpenFileSet(&fileset->fs, name, O_RDONLY, false);
			chunks[nin].blk = -1;
			chunks[nin].n = -1;
			nin++;
		}
	simhash_merge_chunks(index, chunks, nin, t, n, sink, progress_base);
	for (int j = 0; j < nin; j++)
		BufFileClose(chunks[j].file);
	/* the chunks are read: free their space now, in the merging process */
	for (int p = 0; p < shared->nslots; p++)
		for (int c = 0; c < shared->part[p].nchunks; c++)
		{
			chunk_name(name, p, t, c);
			BufFileDeleteFileSet(&fileset->fs, name, false);
		}
	pfree(chunks);
}

/*
 * The run's layout is known once the rows are counted: each table is
 * run_pages(n) full pages (the last one part full) and then their
 * directory, the tables one after the other from block 2 on, as the serial
 * build writes them.  So any participant can write table t's pages at their
 * final blocks.
 */
static BlockNumber
run_pages(int64 n)
{
	return (BlockNumber) ((n + SIMHASH_PAGE_CAPACITY - 1) / SIMHASH_PAGE_CAPACITY);
}

static BlockNumber
table_pages(int64 n)
{
	return run_pages(n) + SimhashDirPages(run_pages(n));
}

static BlockNumber
table_first_block(int t, int64 n)
{
	return SIMHASH_RUNLIST_BLKNO + 1 + (BlockNumber) t * table_pages(n);
}

/* Rows of the run: every participant's, once all have scanned. */
static int64
run_rows(SimhashBuildShared *shared)
{
	int64 n = 0;

	for (int p = 0; p < shared->nslots; p++)
		n += shared->part[p].n;
	return n;
}

/*
 * Merge table t into the bulk writer at the table's blocks; then count it
 * merged.  The leader reports the tuples done after progress_base (-1:
 * not reported).
 */
static void
merge_table_at(SimhashBuildShared *shared, SharedFileSet *fileset, Relation index, int t,
			   SimhashPageSink *sink, int64 progress_base)
{
	int64 n = run_rows(shared);

	sink->next = table_first_block(t, n);
	merge_table(index, shared, fileset, t, n, sink, progress_base);
	if (sink->next != table_first_block(t + 1, n))
		elog(ERROR, "simhash build: table %d ends at block %u, expected %u", t, sink->next,
			 table_first_block(t + 1, n));

	SpinLockAcquire(&shared->mutex);
	shared->nmerged++;
	SpinLockRelease(&shared->mutex);
	ConditionVariableBroadcast(&shared->cv);
}

/* The next table nobody merges yet (claimed), or -1. */
static int
claim_table(SimhashBuildShared *shared)
{
	int t = -1;

	SpinLockAcquire(&shared->mutex);
	if (shared->next_table < shared->ntables)
		t = shared->next_table++;
	SpinLockRelease(&shared->mutex);
	return t;
}

/*
 * Sleep until every participant that scans has finished its scan and, if
 * extended, until the leader has extended the index file for the run.
 */
static void
wait_for_scans(SimhashBuildShared *shared, bool extended)
{
	for (;;)
	{
		bool done;

		SpinLockAcquire(&shared->mutex);
		done = shared->nscanners >= 0 && shared->nscanned == shared->nscanners &&
			   (!extended || shared->extended);
		SpinLockRelease(&shared->mutex);
		if (done)
			break;
		ConditionVariableSleep(&shared->cv, WAIT_EVENT_PARALLEL_CREATE_INDEX_SCAN);
	}
	ConditionVariableCancelSleep();
}

/*
 * A worker's share of the merges: tables until none is left, written by a
 * bulk writer of its own, which makes them durable before the worker ends
 * (the leader commits only after every worker has ended).
 */
static void
merge_tables(SimhashBuildShared *shared, SharedFileSet *fileset, Relation index)
{
	SimhashBulkWriter *bulk = NULL;
	SimhashPageSink	  *sink = NULL;
	int				   t;

	while ((t = claim_table(shared)) >= 0)
	{
		if (bulk == NULL)
		{
			bulk = simhash_bulk_begin(index);
			sink = simhash_bulk_sink(bulk, InvalidBlockNumber);
		}
		merge_table_at(shared, fileset, index, t, sink, -1);
	}
	if (bulk != NULL)
		simhash_bulk_finish(bulk);
}


/* The entry point of a build worker (CreateParallelContext names it). */
PGDLLEXPORT void simhash_build_worker_main(dsm_segment *seg, shm_toc *toc);

void
simhash_build_worker_main(dsm_segment *seg, shm_toc *toc)
{
	SimhashBuildShared	 *shared = shm_toc_lookup(toc, SIMHASH_KEY_SHARED, false);
	SharedFileSet		 *fileset = shm_toc_lookup(toc, SIMHASH_KEY_FILESET, false);
	ParallelTableScanDesc pscan = shm_toc_lookup(toc, SIMHASH_KEY_SCAN, false);
	LOCKMODE			  heaplock = shared->isconcurrent ? ShareUpdateExclusiveLock : ShareLock;
	Relation			  heap, index;
	IndexInfo			 *indexInfo;

	/* the leader holds these locks: the lock group makes them compatible */
	heap = table_open(shared->heaprelid, heaplock);
	index = index_open(shared->indexrelid, RowExclusiveLock);
	SharedFileSetAttach(fileset, seg);

	indexInfo = BuildIndexInfo(index);
	indexInfo->ii_Concurrent = shared->isconcurrent;
	participate(shared, fileset, pscan, heap, index, indexInfo, ParallelWorkerNumber, false);
	wait_for_scans(shared, true);
	merge_tables(shared, fileset, index);

	index_close(index, RowExclusiveLock);
	table_close(heap, heaplock);
}

static int
tid_cmp(const void *a, const void *b)
{
	return ItemPointerCompare((ItemPointer) a, (ItemPointer) b);
}

/* Every participant's NULLs, in TID order. */
static void
collect_nulls(SimhashBuildShared *shared, SharedFileSet *fileset, SimhashBuilt *out)
{
	int64 n = 0;
	char  name[MAXPGPATH];

	for (int p = 0; p < shared->nslots; p++)
		out->nnulls += shared->part[p].nnulls;
	out->nulls =
		MemoryContextAllocHuge(CurrentMemoryContext, Max(out->nnulls, 1) * sizeof(ItemPointerData));
	for (int p = 0; p < shared->nslots; p++)
	{
		BufFile *file;
		size_t	 want = shared->part[p].nnulls * sizeof(ItemPointerData);

		if (!shared->part[p].done)
			continue;
		nulls_name(name, p);
		file = BufFileOpenFileSet(&fileset->fs, name, O_RDONLY, false);
		if (want > 0 && BufFileRead(file, out->nulls + n, want) != want)
			ereport(ERROR,
					(errcode_for_file_access(),
					 errmsg("simhash build: could not read the NULLs of participant %d", p)));
		BufFileClose(file);
		n += shared->part[p].nnulls;
	}
	qsort(out->nulls, out->nnulls, sizeof(ItemPointerData), tid_cmp);
}

/* ---- the leader ------------------------------------------------------ */

/*
 * The leader's share of the merges: the tables nobody has claimed, written
 * by its bulk writer (whose sink it leaves after the run); then it waits
 * for the workers' tables, reporting the tuples done so far, and never less
 * than before.
 */
static void
leader_merges(SimhashBuildShared *shared, SharedFileSet *fileset, Relation index, SimhashBuilt *out)
{
	int64 reported = 0;
	int	  t, nmerged;

	pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, SIMHASH_PHASE_WRITE);
	while ((t = claim_table(shared)) >= 0)
	{
		SpinLockAcquire(&shared->mutex);
		nmerged = shared->nmerged;
		SpinLockRelease(&shared->mutex);
		reported = Max(reported, (int64) nmerged * out->n);
		merge_table_at(shared, fileset, index, t, out->sink, reported);
		reported += out->n;
	}
	for (;;)
	{
		SpinLockAcquire(&shared->mutex);
		nmerged = shared->nmerged;
		SpinLockRelease(&shared->mutex);
		if ((int64) nmerged * out->n > reported)
		{
			reported = (int64) nmerged * out->n;
			pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_DONE, reported);
		}
		if (nmerged == shared->ntables)
			break;
		ConditionVariableSleep(&shared->cv, WAIT_EVENT_PARALLEL_CREATE_INDEX_SCAN);
	}
	ConditionVariableCancelSleep();
	out->sink->next = table_first_block(shared->ntables, out->n);
}

int
simhash_build_workers(Relation heap, Relation index, IndexInfo *indexInfo)
{
	if (SIMHASH_SERVER_PLANS_BUILD_WORKERS)
		return indexInfo->ii_ParallelWorkers;
	if (!IsNormalProcessingMode())
		return 0;
	return plan_create_index_workers(RelationGetRelid(heap), RelationGetRelid(index));
}

bool
simhash_build_parallel(Relation heap, Relation index, IndexInfo *indexInfo, int nworkers,
					   int ntables, SimhashBuilt *out)
{
	bool				  leader = parallel_leader_participation;
	int					  nslots = nworkers + 1;
	Size				  estshared, estscan;
	Snapshot			  snapshot;
	ParallelContext		 *pcxt;
	SimhashBuildShared	 *shared;
	SharedFileSet		 *fileset;
	ParallelTableScanDesc pscan;

	EnterParallelMode();
	pcxt = CreateParallelContext("simhash", "simhash_build_worker_main", nworkers);
	snapshot = indexInfo->ii_Concurrent ? RegisterSnapshot(GetTransactionSnapshot()) : SnapshotAny;

	estshared = add_size(offsetof(SimhashBuildShared, part),
						 mul_size(nslots, sizeof(SimhashParticipantDone)));
	estscan = table_parallelscan_estimate(heap, snapshot);
	shm_toc_estimate_chunk(&pcxt->estimator, estshared);
	shm_toc_estimate_chunk(&pcxt->estimator, sizeof(SharedFileSet));
	shm_toc_estimate_chunk(&pcxt->estimator, estscan);
	shm_toc_estimate_keys(&pcxt->estimator, 3);
	InitializeParallelDSM(pcxt);
	if (pcxt->seg == NULL)
		goto serial;

	shared = shm_toc_allocate(pcxt->toc, estshared);
	memset(shared, 0, estshared);
	shared->heaprelid = RelationGetRelid(heap);
	shared->indexrelid = RelationGetRelid(index);
	shared->isconcurrent = indexInfo->ii_Concurrent;
	shared->nslots = nslots;
	/*
	 * Each planned participant gets an equal share of maintenance_work_mem:
	 * its pairs and one table's sorted copy, 16 bytes each.
	 */
	shared->chunk_items =
		Max((int64) 1024, (int64) maintenance_work_mem * 1024 / (nworkers + (leader ? 1 : 0)) /
							  (2 * (int64) sizeof(SimhashItem)));
	shared->ntables = ntables;
	shared->nscanners = -1;
	ConditionVariableInit(&shared->cv);
	SpinLockInit(&shared->mutex);
	fileset = shm_toc_allocate(pcxt->toc, sizeof(SharedFileSet));
	SharedFileSetInit(fileset, pcxt->seg);
	pscan = shm_toc_allocate(pcxt->toc, estscan);
	table_parallelscan_initialize(heap, pscan, snapshot);
	shm_toc_insert(pcxt->toc, SIMHASH_KEY_SHARED, shared);
	shm_toc_insert(pcxt->toc, SIMHASH_KEY_FILESET, fileset);
	shm_toc_insert(pcxt->toc, SIMHASH_KEY_SCAN, pscan);

	LaunchParallelWorkers(pcxt);
	ereport(DEBUG2,
			(errmsg_internal("simhash index \"%s\": %d of %d parallel workers launched",
							 RelationGetRelationName(index), pcxt->nworkers_launched, nworkers)));
	if (pcxt->nworkers_launched == 0)
	{
		WaitForParallelWorkersToFinish(pcxt);
		goto serial;
	}

	SpinLockAcquire(&shared->mutex);
	shared->nscanners = pcxt->nworkers_launched + (leader ? 1 : 0);
	SpinLockRelease(&shared->mutex);
	ConditionVariableBroadcast(&shared->cv);
	/* a worker launched but never started would leave the others waiting */
	WaitForParallelWorkersToAttach(pcxt);

	if (leader)
		participate(shared, fileset, pscan, heap, index, indexInfo, nworkers, true);
	wait_for_scans(shared, false);

	out->n = run_rows(shared);
	for (int p = 0; p < nslots; p++)
		out->heap_tuples += shared->part[p].heap_tuples;
	if (shared->brokenhotchain)
		indexInfo->ii_BrokenHotChain = true;
	{
		const int	params[] = {PROGRESS_CREATEIDX_TUPLES_TOTAL, PROGRESS_CREATEIDX_SUBPHASE};
		const int64 values[] = {out->n * ntables, SIMHASH_PHASE_SORT};

		pgstat_progress_update_multi_param(2, params, values);
	}
	out->run_npages = run_pages(out->n);
	for (int t = 0; t < ntables; t++)
		out->dir[t] =
			out->n > 0 ? table_first_block(t, out->n) + out->run_npages : InvalidBlockNumber;

	/*
	 * The file holds every block of the run before any bulk writer begins,
	 * so each writes its tables' blocks in place (see simhash_bulk_extend).
	 */
	simhash_bulk_extend(index, table_first_block(ntables, out->n));
	out->bulk = simhash_bulk_begin(index);
	out->sink = simhash_bulk_sink(out->bulk, table_first_block(ntables, out->n));
	SpinLockAcquire(&shared->mutex);
	shared->extended = true;
	SpinLockRelease(&shared->mutex);
	ConditionVariableBroadcast(&shared->cv);
	leader_merges(shared, fileset, index, out);
	WaitForParallelWorkersToFinish(pcxt);
	collect_nulls(shared, fileset, out);

	if (IsMVCCSnapshot(snapshot))
		UnregisterSnapshot(snapshot);
	DestroyParallelContext(pcxt);
	ExitParallelMode();
	return true;

serial:
	if (IsMVCCSnapshot(snapshot))
		UnregisterSnapshot(snapshot);
	DestroyParallelContext(pcxt);
	ExitParallelMode();
	return false;
}
