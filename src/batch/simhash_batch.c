/*
 * simhash_batch.c — SQL entry points of the batch analytics over the core's
 * batch.h: simhash_find_all and simhash_find_clusters over arrays, and the
 * window function simhash_cluster.
 *
 * The core runs on this backend's thread only (threads = 1: parallelism in
 * PostgreSQL is the planner's business) and polls simhash_interrupt_pending;
 * SH_CHECK_INTERRUPTIBLE (simhash.h) serves the interrupt once the core has
 * returned.
 *
 * Memory stays within work_mem: the core's working memory is known from the
 * input size (sh_batch_memory), so a call that would need more fails before
 * it starts (53200, with the work_mem it would take); the rows go to the
 * SRF's tuplestore, which spills to disk beyond work_mem.  simhash_find_all
 * streams its pairs from the core in fixed chunks, however many there are.
 * Its chunks are written into the tuplestore from a callback that runs below
 * C++ frames, so that callback (and its interrupt poll) catch any PostgreSQL
 * error, stop the core, and the error is raised again here once the core has
 * returned: no longjmp ever crosses a C++ frame.
 */
#include "simhash.h"

#include <math.h>

#include "funcapi.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/tuplestore.h"
#include "windowapi.h"

#include "batch.h"

/* Pairs of simhash_find_all per chunk from the core: 64 kB. */
#define PAIR_CHUNK 8192

/*
 * Fails early when a call would need more than work_mem: need_core from
 * sh_batch_memory plus bytes_per_fp of this file's own arrays.
 */
static void
check_work_mem(const char *what, int64 nfps, size_t need_core, size_t bytes_per_fp)
{
	double need_kb = ((double) need_core + (double) nfps * (double) bytes_per_fp) / 1024.0;

	if (need_kb > (double) work_mem)
		ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY),
						errmsg("%s of " INT64_FORMAT
							   " fingerprints needs %.0f kB of memory, more than work_mem (%d kB)",
							   what, nfps, ceil(need_kb), work_mem),
						errhint("Raise work_mem to at least %.0f kB, or pass fewer fingerprints; "
								"simhash_pairs() and simhash_clusters() work on a table of any "
								"size within work_mem.",
								ceil(need_kb))));
}

/* The non-NULL elements of a fingerprint array and their 1-based positions. */
typedef struct Fingerprints
{
	int		  n;
	uint64_t *h;
	int32	 *pos;
} Fingerprints;

/* Bytes per element of array_fingerprints: Datum and null flag, hash, position. */
#define ARRAY_BYTES_PER_FP (sizeof(Datum) + sizeof(bool) + sizeof(uint64_t) + sizeof(int32))

/*
 * Checks the array's shape, and that the call fits in work_mem with the
 * core's need for this many elements (NULLs included: an upper bound).
 */
static void
array_fingerprints(ArrayType *arr, int32 max_distance, bool clusters, size_t extra,
				   const char *what, Fingerprints *fps)
{
	Datum *elems;
	bool  *nulls;
	int	   nelems;

	if (ARR_NDIM(arr) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("fingerprint array must have one dimension, not %d", ARR_NDIM(arr))));
	nelems = ArrayGetNItems(ARR_NDIM(arr), ARR_DIMS(arr));
	check_work_mem(what, nelems, sh_batch_memory(nelems, 0, max_distance, 1, clusters) + extra,
				   ARRAY_BYTES_PER_FP);
	/* simhash and bigint are both 8-byte, by-value, double-aligned */
	deconstruct_array(arr, ARR_ELEMTYPE(arr), 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE, &elems, &nulls,
					  &nelems);
	fps->n = 0;
	fps->h = palloc(sizeof(uint64_t) * Max(nelems, 1));
	fps->pos = palloc(sizeof(int32) * Max(nelems, 1));
	for (int i = 0; i < nelems; i++)
	{
		if (nulls[i])
			continue;
		fps->h[fps->n] = DatumGetSimhash(elems[i]);
		fps->pos[fps->n] = i + 1;
		fps->n++;
	}
	pfree(elems);
	pfree(nulls);
}

/* ---- simhash_find_all(fps, max_distance) -> (a, b, distance) ---------------- */

/* What the core's callbacks of simhash_find_all need. */
typedef struct PairOutput
{
	ReturnSetInfo *rsinfo;
	Fingerprints  *fps;
	MemoryContext  cxt;	  /* where a caught error is copied to */
	ErrorData	  *error; /* the error that stopped the core, if any */
} PairOutput;

/* Catches the error of a PG_TRY block below the core: see the top comment. */
static void
keep_error(PairOutput *out, MemoryContext was)
{
	MemoryContextSwitchTo(out->cxt);
	out->error = CopyErrorData();
	FlushErrorState();
	MemoryContextSwitchTo(was);
}

/*
 * The core's interrupt poll for simhash_find_all: serves the interrupt here
 * (the rows already written cannot be taken back, so the search must not
 * start again); nonzero when that raised an error.
 */
static int
pairs_interrupt(void *arg)
{
	PairOutput	 *out = arg;
	MemoryContext was = CurrentMemoryContext;
	volatile int  stop = 0;

	if (!simhash_interrupt_pending(NULL))
		return 0;
	PG_TRY();
	{
		CHECK_FOR_INTERRUPTS();
	}
	PG_CATCH();
	{
		keep_error(out, was);
		stop = 1;
	}
	PG_END_TRY();
	return stop;
}

/* Writes a chunk of pairs into the tuplestore; nonzero on an error. */
static int
pairs_emit(const sh_pair *pairs, size_t npairs, void *arg)
{
	PairOutput	 *out = arg;
	MemoryContext was = CurrentMemoryContext;
	volatile int  stop = 0;

	PG_TRY();
	{
		const Fingerprints *fps = out->fps;

		for (size_t i = 0; i < npairs; i++)
		{
			Datum	 values[3];
			bool	 isnull[3] = {false, false, false};
			uint32_t a = pairs[i].a, b = pairs[i].b;

			values[0] = Int32GetDatum(fps->pos[a]);
			values[1] = Int32GetDatum(fps->pos[b]);
			values[2] = Int32GetDatum(simhash_hamming(fps->h[a], fps->h[b]));
			tuplestore_putvalues(out->rsinfo->setResult, out->rsinfo->setDesc, values, isnull);
		}
		CHECK_FOR_INTERRUPTS();
	}
	PG_CATCH();
	{
		keep_error(out, was);
		stop = 1;
	}
	PG_END_TRY();
	return stop;
}

/* simhash_find_all(fps, max_distance): every pair within max_distance bits. */
PG_FUNCTION_INFO_V1(simhash_find_all_array);
Datum
simhash_find_all_array(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	ArrayType	  *arr = PG_GETARG_ARRAYTYPE_P(0);
	int32		   max_distance = PG_GETARG_INT32(1);
	Fingerprints   fps;
	PairOutput	   out;
	sh_status	   status;

	simhash_check_radius(max_distance, "max_distance");
	InitMaterializedSRF(fcinfo, 0);
	array_fingerprints(arr, max_distance, false, PAIR_CHUNK * sizeof(sh_pair), "simhash_find_all",
					   &fps);
	out.rsinfo = rsinfo;
	out.fps = &fps;
	out.cxt = CurrentMemoryContext;
	out.error = NULL;
	status = sh_find_all_each(fps.h, fps.n, 0, max_distance, 1, pairs_interrupt, &out, PAIR_CHUNK,
							  pairs_emit, &out);
	if (out.error != NULL)
		ReThrowError(out.error);
	SH_CHECK(status, "simhash_find_all");
	return (Datum) 0;
}

/* ---- simhash_find_clusters(fps, max_distance) -> (cluster, member) ---------- */

/* simhash_find_clusters(fps, max_distance): connected components of two or more. */
PG_FUNCTION_INFO_V1(simhash_find_clusters_array);
Datum
simhash_find_clusters_array(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	ArrayType	  *arr = PG_GETARG_ARRAYTYPE_P(0);
	int32		   max_distance = PG_GETARG_INT32(1);
	Fingerprints   fps;
	uint32_t	  *members;
	size_t		  *bounds;
	size_t		   nclusters;

	simhash_check_radius(max_distance, "max_distance");
	InitMaterializedSRF(fcinfo, 0);
	array_fingerprints(arr, max_distance, true, 0, "simhash_find_clusters", &fps);
	SH_CHECK_INTERRUPTIBLE(sh_find_clusters(fps.h, fps.n, 0, max_distance, 1,
											simhash_interrupt_pending, NULL, &members, &bounds,
											&nclusters),
						   "simhash_find_clusters");
	PG_TRY();
	{
		for (size_t c = 0; c < nclusters; c++)
		{
			/* a cluster is named by its smallest member's position */
			Datum values[2];
			bool  isnull[2] = {false, false};

			values[0] = Int32GetDatum(fps.pos[members[bounds[c]]]);
			for (size_t k = bounds[c]; k < bounds[c + 1]; k++)
			{
				values[1] = Int32GetDatum(fps.pos[members[k]]);
				tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, isnull);
			}
			CHECK_FOR_INTERRUPTS();
		}
	}
	PG_FINALLY();
	{
		sh_free(members);
		sh_free(bounds);
	}
	PG_END_TRY();
	return (Datum) 0;
}

/* ---- window function simhash_cluster(fp, max_distance) --------------------- */

/*
 * Computed once per partition, on its first row, into partition-local
 * memory: label[i] is the cluster id of row i (the 1-based position, in the
 * window's order, of the first row of its component), 0 for a NULL fp.
 */
typedef struct ClusterPartition
{
	bool	done;
	bool	null_distance;
	uint32 *label;
} ClusterPartition;

/* Labels every row of the window partition with its cluster (see ClusterPartition). */
static void
cluster_partition(WindowObject winobj, ClusterPartition *part, bool distance_is_constant)
{
	MemoryContext partctx = GetMemoryChunkContext(part);
	int64		  nrows = WinGetPartitionRowCount(winobj);
	bool		  isnull, isout;
	int32		  max_distance;
	uint64_t	 *h;
	uint32		 *rowpos, *lab;
	size_t		  n = 0;

	part->done = true;
	max_distance = DatumGetInt32(WinGetFuncArgInPartition(winobj, 1, 0, WINDOW_SEEK_HEAD, false,
														  &part->null_distance, &isout));
	if (!part->null_distance)
		simhash_check_radius(max_distance, "max_distance");
	/* WinGetFuncArgInPartition takes an int row position */
	if (nrows > (int64) PG_INT32_MAX)
		ereport(ERROR, (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
						errmsg("window partition of " INT64_FORMAT
							   " rows is too large for simhash_cluster",
							   nrows)));
	/* label, h, rowpos and lab: 20 bytes a row */
	check_work_mem("simhash_cluster", nrows,
				   part->null_distance ? 0 : sh_batch_memory(nrows, 0, max_distance, 1, 1),
				   sizeof(uint32) * 3 + sizeof(uint64_t));
	part->label = MemoryContextAllocHuge(partctx, sizeof(uint32) * Max(nrows, 1));
	h = palloc_extended(sizeof(uint64_t) * Max(nrows, 1), MCXT_ALLOC_HUGE);
	rowpos = palloc_extended(sizeof(uint32) * Max(nrows, 1), MCXT_ALLOC_HUGE);
	for (int i = 0; i < (int) nrows; i++)
	{
		Datum fp;

		if (!distance_is_constant)
		{
			Datum d =
				WinGetFuncArgInPartition(winobj, 1, i, WINDOW_SEEK_HEAD, false, &isnull, &isout);

			if (isnull != part->null_distance || (!isnull && DatumGetInt32(d) != max_distance))
				ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
								errmsg("max_distance of simhash_cluster must be the same in every "
									   "row of a window partition")));
		}
		fp = WinGetFuncArgInPartition(winobj, 0, i, WINDOW_SEEK_HEAD, false, &isnull, &isout);
		part->label[i] = 0;
		if (!isnull)
		{
			h[n] = DatumGetSimhash(fp);
			rowpos[n] = (uint32) (i + 1);
			n++;
		}
		if ((i & 0xFFFF) == 0xFFFF)
			CHECK_FOR_INTERRUPTS();
	}
	if (!part->null_distance)
	{
		lab = palloc_extended(sizeof(uint32) * Max(n, 1), MCXT_ALLOC_HUGE);
		SH_CHECK_INTERRUPTIBLE(sh_cluster_labels(h, n, 0, max_distance, 1,
												 simhash_interrupt_pending, NULL, lab),
							   "simhash_cluster");
		for (size_t k = 0; k < n; k++)
			part->label[rowpos[k] - 1] = rowpos[lab[k]];
		pfree(lab);
	}
	pfree(h);
	pfree(rowpos);
}

/* The window function simhash_cluster(fp, max_distance): this row's cluster, or NULL. */
PG_FUNCTION_INFO_V1(simhash_cluster_window);
Datum
simhash_cluster_window(PG_FUNCTION_ARGS)
{
	WindowObject	  winobj = PG_WINDOW_OBJECT();
	ClusterPartition *part;
	int64			  row;

	part = (ClusterPartition *) WinGetPartitionLocalMemory(winobj, sizeof(ClusterPartition));
	if (!part->done)
		cluster_partition(winobj, part, get_fn_expr_arg_stable(fcinfo->flinfo, 1));
	row = WinGetCurrentPosition(winobj);
	if (part->null_distance || part->label[row] == 0)
		PG_RETURN_NULL();
	PG_RETURN_INT64((int64) part->label[row]);
}
