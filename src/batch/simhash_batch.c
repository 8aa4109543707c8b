/*
 * batch.c — SQL entry points of the batch analytics over the core's
 * batch.h: simhash_find_all and simhash_find_clusters over arrays, and the
 * window function simhash_cluster.
 *
 * The core runs on this backend's thread only (threads = 1: parallelism in
 * PostgreSQL is the planner's business).  It polls interrupt_pending(), which
 * only reads flags; when the core stops on it, CHECK_FOR_INTERRUPTS() runs
 * here, after every C++ frame has returned, and raises the error.  If the
 * pending interrupt turns out to be harmless, the computation starts again.
 */
#include "simhash.h"

#include "funcapi.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/tuplestore.h"
#include "windowapi.h"

#include "batch.h"

static int
interrupt_pending(void *arg)
{
	return INTERRUPTS_PENDING_CONDITION() && INTERRUPTS_CAN_BE_PROCESSED();
}

#define RUN_INTERRUPTIBLE(status, call) \
	for (;;) \
	{ \
		(status) = (call); \
		if ((status) != SH_ERR_INTERRUPTED) \
			break; \
		CHECK_FOR_INTERRUPTS(); \
	}

static void
check_max_distance(int32 max_distance)
{
	if (max_distance < 0 || max_distance > 64)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("max_distance %d is out of range", max_distance),
				 errhint("max_distance is a number of bits, 0 to 64.")));
}

/* The non-NULL elements of a fingerprint array and their 1-based positions. */
typedef struct Fingerprints
{
	int			n;
	uint64_t   *h;
	int32	   *pos;
} Fingerprints;

static void
array_fingerprints(ArrayType *arr, Fingerprints *fps)
{
	Datum	   *elems;
	bool	   *nulls;
	int			nelems;

	if (ARR_NDIM(arr) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("fingerprint array must have one dimension, not %d", ARR_NDIM(arr))));
	/* simhash and bigint are both 8-byte, by-value, double-aligned */
	deconstruct_array(arr, ARR_ELEMTYPE(arr), 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE,
					  &elems, &nulls, &nelems);
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

PG_FUNCTION_INFO_V1(simhash_find_all_array);
Datum
simhash_find_all_array(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	ArrayType  *arr = PG_GETARG_ARRAYTYPE_P(0);
	int32		max_distance = PG_GETARG_INT32(1);
	Fingerprints fps;
	sh_pair    *pairs;
	size_t		npairs;
	sh_status	status;

	check_max_distance(max_distance);
	InitMaterializedSRF(fcinfo, 0);
	array_fingerprints(arr, &fps);
	RUN_INTERRUPTIBLE(status, sh_find_all(fps.h, fps.n, 0, max_distance, 1,
										  interrupt_pending, NULL, &pairs, &npairs));
	SH_CHECK(status, "simhash_find_all");
	PG_TRY();
	{
		for (size_t i = 0; i < npairs; i++)
		{
			Datum		values[3];
			bool		isnull[3] = {false, false, false};
			uint32_t	a = pairs[i].a,
						b = pairs[i].b;

			values[0] = Int32GetDatum(fps.pos[a]);
			values[1] = Int32GetDatum(fps.pos[b]);
			values[2] = Int32GetDatum(sh_distance(fps.h[a], fps.h[b]));
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, isnull);
			if ((i & 0xFFFF) == 0xFFFF)
				CHECK_FOR_INTERRUPTS();
		}
	}
	PG_FINALLY();
	{
		sh_batch_free(pairs);
	}
	PG_END_TRY();
	return (Datum) 0;
}

/* ---- simhash_find_clusters(fps, max_distance) -> (cluster, member) ---------- */

PG_FUNCTION_INFO_V1(simhash_find_clusters_array);
Datum
simhash_find_clusters_array(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	ArrayType  *arr = PG_GETARG_ARRAYTYPE_P(0);
	int32		max_distance = PG_GETARG_INT32(1);
	Fingerprints fps;
	uint32_t   *members;
	size_t	   *bounds;
	size_t		nclusters;
	sh_status	status;

	check_max_distance(max_distance);
	InitMaterializedSRF(fcinfo, 0);
	array_fingerprints(arr, &fps);
	RUN_INTERRUPTIBLE(status, sh_find_clusters(fps.h, fps.n, 0, max_distance, 1,
											   interrupt_pending, NULL,
											   &members, &bounds, &nclusters));
	SH_CHECK(status, "simhash_find_clusters");
	PG_TRY();
	{
		for (size_t c = 0; c < nclusters; c++)
		{
			/* a cluster is named by its smallest member's position */
			Datum		values[2];
			bool		isnull[2] = {false, false};

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
		sh_batch_free(members);
		sh_batch_free(bounds);
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
	bool		done;
	bool		null_distance;
	uint32	   *label;
} ClusterPartition;

static void
cluster_partition(WindowObject winobj, ClusterPartition *part, bool distance_is_constant)
{
	MemoryContext partctx = GetMemoryChunkContext(part);
	int64		nrows = WinGetPartitionRowCount(winobj);
	bool		isnull,
				isout;
	int32		max_distance;
	uint64_t   *h;
	uint32	   *rowpos,
			   *lab;
	size_t		n = 0;
	sh_status	status;

	part->done = true;
	max_distance = DatumGetInt32(WinGetFuncArgInPartition(winobj, 1, 0, WINDOW_SEEK_HEAD,
														  false, &part->null_distance, &isout));
	if (!part->null_distance)
		check_max_distance(max_distance);
	if (nrows >= (int64) PG_UINT32_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("window partition of " INT64_FORMAT " rows is too large for simhash_cluster",
						nrows)));
	part->label = MemoryContextAllocHuge(partctx, sizeof(uint32) * Max(nrows, 1));
	h = palloc_extended(sizeof(uint64_t) * Max(nrows, 1), MCXT_ALLOC_HUGE);
	rowpos = palloc_extended(sizeof(uint32) * Max(nrows, 1), MCXT_ALLOC_HUGE);
	for (int64 i = 0; i < nrows; i++)
	{
		Datum		fp;

		if (!distance_is_constant)
		{
			Datum		d = WinGetFuncArgInPartition(winobj, 1, i, WINDOW_SEEK_HEAD, false,
													 &isnull, &isout);

			if (isnull != part->null_distance || (!isnull && DatumGetInt32(d) != max_distance))
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("max_distance of simhash_cluster must be the same in every row of a window partition")));
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
		RUN_INTERRUPTIBLE(status, sh_cluster_labels(h, n, 0, max_distance, 1,
													interrupt_pending, NULL, lab));
		SH_CHECK(status, "simhash_cluster");
		for (size_t k = 0; k < n; k++)
			part->label[rowpos[k] - 1] = rowpos[lab[k]];
		pfree(lab);
	}
	pfree(h);
	pfree(rowpos);
}

PG_FUNCTION_INFO_V1(simhash_cluster_window);
Datum
simhash_cluster_window(PG_FUNCTION_ARGS)
{
	WindowObject winobj = PG_WINDOW_OBJECT();
	ClusterPartition *part;
	int64		row;

	part = (ClusterPartition *) WinGetPartitionLocalMemory(winobj, sizeof(ClusterPartition));
	if (!part->done)
		cluster_partition(winobj, part, get_fn_expr_arg_stable(fcinfo->flinfo, 1));
	row = WinGetCurrentPosition(winobj);
	if (part->null_distance || part->label[row] == 0)
		PG_RETURN_NULL();
	PG_RETURN_INT64((int64) part->label[row]);
}
