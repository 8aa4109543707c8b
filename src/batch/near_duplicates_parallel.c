/*
 * near_duplicates_parallel.c — simhash_near_duplicates' disk join
 * (near_duplicates_spill.c) shared with parallel workers.
 *
 * The disk join is a block nested loop over one file of the sets in join
 * order: each chunk of sets that fits in work_mem is joined with itself and
 * probed by the sets after it, and a pair is found once, in the chunk of its
 * earlier set.  So the work splits into independent parts: a chunk probed by
 * a run of the sets after it (nd_spill_plan_parts), even when the whole file
 * is one chunk.  The leader reads the rows (with the caller's rights, as
 * always) and writes that file to a FileSet; then the leader and the workers
 * each take the next part until none is left.  Workers never read the table:
 * they open the file by name, join their parts exactly as the leader does,
 * and write their pairs of keys to a file of their own; the leader returns
 * its own pairs as it finds them, and the workers' once they are done.
 *
 * Planned as a parallel query plans its workers: max_parallel_workers_per_gather
 * of them (0: none, the serial join), when the file reaches
 * min_parallel_table_scan_size, never in parallel mode (the functions are
 * PARALLEL UNSAFE, so a query that calls them has no workers of its own);
 * with parallel_leader_participation off the leader only returns rows.  Each
 * worker, like a hash join's, has work_mem of its own: one chunk, as the
 * leader holds it.  A worker checks for interrupts as the leader does; an
 * error in one ends the call in the leader.  The files are deleted when the
 * call ends, on error too.
 */
#include "simhash.h"

#include "access/parallel.h"
#include "access/xact.h"
#include "miscadmin.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/paths.h"
#include "port/atomics.h"
#include "storage/buffile.h"
#include "storage/fileset.h"
#include "utils/memutils.h"

#include "near_duplicates.h"

#define ND_KEY_SHARED UINT64CONST(0x53484e4450000001)
#define ND_KEY_DONE	  UINT64CONST(0x53484e4450000002)

/* What the leader tells the workers. */
typedef struct NdShared
{
	FileSet			 fileset;
	double			 threshold;
	NdExport		 exp;
	uint32			 nparts;
	pg_atomic_uint32 next_part; /* the next part nobody has taken */
	NdPart			 parts[FLEXIBLE_ARRAY_MEMBER];
} NdShared;

/* What a worker did, written by it at its end. */
typedef struct NdWorkerDone
{
	bool   done;
	uint32 parts;
	uint64 candidates;
	uint64 similar; /* similar pairs of sets */
	uint64 pairs;	/* pairs of keys written for the leader */
} NdWorkerDone;

static void
delete_files(void *arg)
{
	FileSetDeleteAll((FileSet *) arg);
}

/* Workers may join: not in parallel mode, and some allowed. */
static bool
workers_allowed(void)
{
	return max_parallel_workers_per_gather > 0 && max_parallel_workers > 0 && !IsInParallelMode() &&
		   IsUnderPostmaster;
}

/*
 * Gives the call a FileSet for the file in join order when workers may join
 * it later (the set is deleted when the call's memory goes, on error too);
 * without one, the file is an anonymous temporary file.
 */
void
nd_parallel_fileset(NearDupCall *call)
{
	MemoryContextCallback *cb;

	if (call->fileset != NULL || !workers_allowed())
		return;
	cb = MemoryContextAlloc(call->cxt, sizeof(MemoryContextCallback));
	call->fileset = MemoryContextAllocZero(call->cxt, sizeof(FileSet));
	FileSetInit(call->fileset);
	cb->func = delete_files;
	cb->arg = call->fileset;
	MemoryContextRegisterResetCallback(call->cxt, cb);
}

/* Takes the next part nobody has taken, or returns false. */
static bool
next_part(NdShared *shared, uint32 *p)
{
	*p = pg_atomic_fetch_add_u32(&shared->next_part, 1);
	return *p < shared->nparts;
}

static char *
pairs_name(int worker)
{
	return psprintf("p%d", worker);
}

/* The entry point of a worker (CreateParallelContext names it). */
PGDLLEXPORT void simhash_near_duplicates_worker(dsm_segment *seg, shm_toc *toc);

void
simhash_near_duplicates_worker(dsm_segment *seg, shm_toc *toc)
{
	NdShared	 *shared = shm_toc_lookup(toc, ND_KEY_SHARED, false);
	NdWorkerDone *done =
		(NdWorkerDone *) shm_toc_lookup(toc, ND_KEY_DONE, false) + ParallelWorkerNumber;
	NearDupCall call;
	uint32		p;

	memset(&call, 0, sizeof(call));
	call.cxt = AllocSetContextCreate(CurrentMemoryContext, "simhash_near_duplicates worker",
									 SIMHASH_CONTEXT_SIZES);
	call.threshold = shared->threshold;
	call.budget = (size_t) work_mem * 1024;
	call.fileset = &shared->fileset;
	nd_spill_import(&call, &shared->exp);
	call.pair_sink = BufFileCreateFileSet(call.fileset, pairs_name(ParallelWorkerNumber));
	while (next_part(shared, &p))
	{
		nd_spill_join_part(&call, &shared->parts[p]);
		done->parts++;
	}
	BufFileClose(call.pair_sink);
	nd_spill_import_end(&call);
	ereport(DEBUG1, (errmsg_internal("simhash_near_duplicates: parallel worker %d joined %u parts",
									 ParallelWorkerNumber, done->parts)));
	done->candidates = call.candidates;
	done->similar = call.similar;
	done->pairs = call.emitted;
	done->done = true;
}

/* Returns the pairs a worker found, as rows. */
static void
emit_worker_pairs(NearDupCall *call, int worker, uint64 npairs)
{
	BufFile *file = BufFileOpenFileSet(call->fileset, pairs_name(worker), O_RDONLY, false);

	nd_put_file_pairs(call, file, npairs);
	BufFileClose(file);
}

/*
 * Joins the file in join order with workers, if they may run and it is
 * large enough; returns its chunks, or 0 when the caller is to join it alone.
 */
uint32
nd_parallel_join(NearDupCall *call)
{
	ParallelContext *pcxt;
	NdShared		*shared;
	NdWorkerDone	*done;
	NdExport		 exp;
	NdPart			*parts;
	Size			 estshared, estdone;
	uint32			 nchunks, nparts, p;
	int				 nworkers, launched;
	uint64			 leader_parts = 0;

	if (call->fileset == NULL || !workers_allowed())
		return 0;
	nd_spill_export(call, &exp);
	if (exp.bytes < (int64) min_parallel_table_scan_size * BLCKSZ)
		return 0;
	nworkers = Min(max_parallel_workers_per_gather, max_parallel_workers);
	parts = nd_spill_plan_parts(call, nworkers + 1, &nchunks, &nparts);
	estshared = add_size(offsetof(NdShared, parts), mul_size(sizeof(NdPart), nparts));
	estdone = mul_size(sizeof(NdWorkerDone), nworkers);

	EnterParallelMode();
	pcxt = CreateParallelContext("simhash", "simhash_near_duplicates_worker", nworkers);
	shm_toc_estimate_chunk(&pcxt->estimator, estshared);
	shm_toc_estimate_chunk(&pcxt->estimator, estdone);
	shm_toc_estimate_keys(&pcxt->estimator, 2);
	InitializeParallelDSM(pcxt);
	shared = shm_toc_allocate(pcxt->toc, estshared);
	memcpy(&shared->fileset, call->fileset, sizeof(FileSet));
	shared->threshold = call->threshold;
	shared->exp = exp;
	shared->nparts = nparts;
	pg_atomic_init_u32(&shared->next_part, 0);
	memcpy(shared->parts, parts, sizeof(NdPart) * nparts);
	done = shm_toc_allocate(pcxt->toc, estdone);
	memset(done, 0, estdone);
	shm_toc_insert(pcxt->toc, ND_KEY_SHARED, shared);
	shm_toc_insert(pcxt->toc, ND_KEY_DONE, done);
	LaunchParallelWorkers(pcxt);
	launched = pcxt->nworkers_launched;
	ereport(NOTICE, (errmsg("simhash_near_duplicates: %u chunks in %u parts, joined by %s%d "
							"parallel workers",
							nchunks, nparts, parallel_leader_participation ? "the leader and " : "",
							nworkers)));

	/* the leader joins parts too, unless it may leave them to the workers */
	while ((launched == 0 || parallel_leader_participation) && next_part(shared, &p))
	{
		nd_spill_join_part(call, &shared->parts[p]);
		leader_parts++;
	}
	WaitForParallelWorkersToFinish(pcxt);

	if (launched < nworkers)
		ereport(NOTICE, (errmsg("simhash_near_duplicates: %d of %d parallel workers launched",
								launched, nworkers)));
	ereport(DEBUG1,
			(errmsg_internal("simhash_near_duplicates: the leader joined " UINT64_FORMAT " parts",
							 leader_parts)));
	for (int w = 0; w < launched; w++)
	{
		if (!done[w].done)
			ereport(ERROR,
					(errcode(ERRCODE_INTERNAL_ERROR),
					 errmsg("parallel worker %d of simhash_near_duplicates did not finish", w)));
		emit_worker_pairs(call, w, done[w].pairs);
		call->candidates += done[w].candidates;
		call->similar += done[w].similar;
	}
	DestroyParallelContext(pcxt);
	ExitParallelMode();
	nd_spill_release(call);
	pfree(parts);
	return nchunks;
}
