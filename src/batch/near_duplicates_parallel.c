/*
 * near_duplicates_parallel.c — the batches of simhash_near_duplicates'
 * disk join (near_duplicates_spill.c) joined by parallel workers.
 *
 * The batches are independent: each holds the prefix entries of a range of
 * tokens, and a pair is verified and returned only by the batch of its first
 * common token.  So the leader reads the rows (with the caller's rights, as
 * always), writes the sets, their prefix entries and the batches to files of
 * a FileSet, and then the leader and the workers each take the next batch
 * until none is left.  Workers never read the table: they open the files by
 * name, join their batches exactly as the leader does, and write their
 * verified pairs of sets (16 bytes each) to a file of their own; the leader
 * returns its own pairs as it finds them, and the workers' once they are
 * done, as rows of keys.
 *
 * Planned as a parallel query plans its workers: max_parallel_workers_per_gather
 * of them (0: none, the serial join), when the sets written reach
 * min_parallel_table_scan_size, never in parallel mode (the functions are
 * PARALLEL UNSAFE, so a query that calls them has no workers of its own);
 * with parallel_leader_participation off the leader only returns rows.  Each
 * worker, like a hash join's, has work_mem of its own: its batch and the
 * positions of every set, as the leader holds them.  A worker checks for
 * interrupts as the leader does; an error in one ends the call in the leader.
 * The files are deleted when the call ends, on error too.
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
	Size			 budget;
	uint32			 nsets;
	uint32			 head_k;
	uint32			 nbatches;
	pg_atomic_uint32 next_batch;					/* the next batch nobody has taken */
	uint64			 counts[FLEXIBLE_ARRAY_MEMBER]; /* prefix entries of each batch */
} NdShared;

/* What a worker did, written by it at its end. */
typedef struct NdWorkerDone
{
	bool   done;
	uint32 batches;
	uint64 candidates;
	uint64 similar; /* pairs of sets written for the leader */
} NdWorkerDone;

/* A verified pair of sets as a worker hands it to the leader. */
typedef struct NdPairRecord
{
	uint32 x;
	uint32 y;
	double similarity;
} NdPairRecord;

static void
delete_files(void *arg)
{
	FileSetDeleteAll((FileSet *) arg);
}

/*
 * When the call moves to disk: the files go to a FileSet if workers may
 * join them later (deleted when the call's memory goes, on error too).
 */
void
nd_parallel_begin(NearDupCall *call)
{
	MemoryContextCallback *cb;

	if (max_parallel_workers_per_gather <= 0 || max_parallel_workers <= 0 || IsInParallelMode() ||
		!IsUnderPostmaster)
		return;
	call->fileset = MemoryContextAllocZero(call->cxt, sizeof(FileSet));
	FileSetInit(call->fileset);
	cb = MemoryContextAlloc(call->cxt, sizeof(MemoryContextCallback));
	cb->func = delete_files;
	cb->arg = call->fileset;
	MemoryContextRegisterResetCallback(call->cxt, cb);
}

/* A new temporary file of the call, named if workers may open it. */
BufFile *
nd_spill_file(NearDupCall *call, const char *name)
{
	if (call->fileset != NULL)
		return BufFileCreateFileSet(call->fileset, name);
	return BufFileCreateTemp(false);
}

/* The workers to plan for a disk join of set_bytes of sets (0: serial). */
int
nd_parallel_workers(NearDupCall *call, uint64 set_bytes)
{
	if (call->fileset == NULL || IsInParallelMode())
		return 0;
	if (set_bytes < (uint64) min_parallel_table_scan_size * BLCKSZ)
		return 0;
	return Min(max_parallel_workers_per_gather, max_parallel_workers);
}

void
nd_parallel_put(NearDupCall *call, uint32 x, uint32 y, double similarity)
{
	NdPairRecord r;

	r.x = x;
	r.y = y;
	r.similarity = similarity;
	BufFileWrite(call->pair_sink, &r, sizeof(r));
}

/* Takes the next batch nobody has taken, or returns false. */
static bool
next_batch(NdShared *shared, uint32 *b)
{
	*b = pg_atomic_fetch_add_u32(&shared->next_batch, 1);
	return *b < shared->nbatches;
}

static char *
batch_name(uint32 b)
{
	return psprintf("b%u", b);
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
	uint32		b;

	memset(&call, 0, sizeof(call));
	call.cxt = AllocSetContextCreate(CurrentMemoryContext, "simhash_near_duplicates worker",
									 SIMHASH_CONTEXT_SIZES);
	call.threshold = shared->threshold;
	call.budget = shared->budget;
	call.fileset = &shared->fileset;
	nd_spill_import(&call, shared->nsets, shared->head_k);
	call.pair_sink = BufFileCreateFileSet(call.fileset, pairs_name(ParallelWorkerNumber));
	while (next_batch(shared, &b))
	{
		BufFile *file = BufFileOpenFileSet(call.fileset, batch_name(b), O_RDONLY, false);
		nd_spill_join_batch(&call, file, shared->counts[b], b, shared->nbatches);
		BufFileClose(file);
		done->batches++;
	}
	BufFileClose(call.pair_sink);
	nd_spill_import_end(&call);
	ereport(DEBUG1,
			(errmsg_internal("simhash_near_duplicates: parallel worker %d joined %u batches",
							 ParallelWorkerNumber, done->batches)));
	done->candidates = call.candidates;
	done->similar = call.similar;
	done->done = true;
}

/* Returns the rows of the pairs a worker found. */
static void
emit_worker_pairs(NearDupCall *call, int worker, uint64 npairs)
{
	BufFile		*file = BufFileOpenFileSet(call->fileset, pairs_name(worker), O_RDONLY, false);
	NdPairRecord r;

	for (uint64 i = 0; i < npairs; i++)
	{
		if (BufFileRead(file, &r, sizeof(r)) != sizeof(r))
			ereport(ERROR, (errcode_for_file_access(),
							errmsg("could not read a temporary file of simhash_near_duplicates")));
		nd_emit_rows(call, r.x, r.y, r.similarity);
		if ((i & 1023) == 0)
			CHECK_FOR_INTERRUPTS();
	}
	BufFileClose(file);
}

/*
 * Joins the batches (their files complete, counts[b] entries each) with up
 * to nworkers workers, the leader taking batches too, and closes their
 * files; returns how many it joined: all, or none without workers.
 */
uint32
nd_parallel_join(NearDupCall *call, int nworkers, BufFile **files, const uint64 *counts,
				 uint32 nbatches)
{
	ParallelContext *pcxt;
	NdShared		*shared;
	NdWorkerDone	*done;
	Size			 estshared = add_size(offsetof(NdShared, counts), sizeof(uint64) * nbatches);
	Size			 estdone = mul_size(sizeof(NdWorkerDone), nworkers);
	uint32			 nsets, head_k, b;
	int				 launched;

	if (nworkers <= 0)
		return 0;
	nd_spill_export(call, &nsets, &head_k);
	for (b = 0; b < nbatches; b++)
		BufFileExportFileSet(files[b]);

	EnterParallelMode();
	pcxt = CreateParallelContext("simhash", "simhash_near_duplicates_worker", nworkers);
	shm_toc_estimate_chunk(&pcxt->estimator, estshared);
	shm_toc_estimate_chunk(&pcxt->estimator, estdone);
	shm_toc_estimate_keys(&pcxt->estimator, 2);
	InitializeParallelDSM(pcxt);
	shared = shm_toc_allocate(pcxt->toc, estshared);
	memcpy(&shared->fileset, call->fileset, sizeof(FileSet));
	shared->threshold = call->threshold;
	shared->budget = call->budget;
	shared->nsets = nsets;
	shared->head_k = head_k;
	shared->nbatches = nbatches;
	pg_atomic_init_u32(&shared->next_batch, 0);
	memcpy(shared->counts, counts, sizeof(uint64) * nbatches);
	done = shm_toc_allocate(pcxt->toc, estdone);
	memset(done, 0, estdone);
	shm_toc_insert(pcxt->toc, ND_KEY_SHARED, shared);
	shm_toc_insert(pcxt->toc, ND_KEY_DONE, done);
	LaunchParallelWorkers(pcxt);
	launched = pcxt->nworkers_launched;

	/* the leader joins batches too, unless it may leave them to the workers */
	while ((launched == 0 || parallel_leader_participation) && next_batch(shared, &b))
		nd_spill_join_batch(call, files[b], counts[b], b, nbatches);
	WaitForParallelWorkersToFinish(pcxt);

	if (launched < nworkers)
		ereport(NOTICE, (errmsg("simhash_near_duplicates: %d of %d parallel workers launched",
								launched, nworkers)));
	for (int w = 0; w < launched; w++)
	{
		if (!done[w].done)
			ereport(ERROR,
					(errcode(ERRCODE_INTERNAL_ERROR),
					 errmsg("parallel worker %d of simhash_near_duplicates did not finish", w)));
		emit_worker_pairs(call, w, done[w].similar);
		call->candidates += done[w].candidates;
		call->similar += done[w].similar;
	}
	DestroyParallelContext(pcxt);
	ExitParallelMode();
	for (b = 0; b < nbatches; b++)
		BufFileClose(files[b]);
	return nbatches;
}
