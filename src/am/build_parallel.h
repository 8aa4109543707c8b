/*
 * build_parallel.h — the parallel build (build_parallel.c) as the build
 * (build.c) calls it, and what either leaves for the metapage.
 */
#ifndef SIMHASH_BUILD_PARALLEL_H
#define SIMHASH_BUILD_PARALLEL_H

#include "simhash_am.h"
#include "runs.h"

struct IndexInfo;

/*
 * What a build leaves for the metapage: the run written (one directory per
 * table), the rows it holds, the NULLs to chain, the heap tuples seen; and
 * the bulk writer that wrote the run's pages, for the rest.
 */
typedef struct SimhashBuilt
{
	/* the bulk writer, and its sink at the block after the run */
	SimhashBulkWriter *bulk;
	SimhashPageSink	  *sink;
	int64			   n; /* rows in the run (entries per table) */
	BlockNumber		   dir[SIMHASH_MAX_TABLES];
	BlockNumber		   run_npages;
	ItemPointerData	  *nulls;
	int64			   nnulls;
	double			   heap_tuples;
} SimhashBuilt;

/*
 * Workers planned for this build (0: serial), as btree's: the server's plan
 * on 17+, plan_create_index_workers() on older servers.
 */
extern int simhash_build_workers(Relation heap, Relation index, struct IndexInfo *indexInfo);

/*
 * The parallel build: false (nothing done) when no worker could be
 * launched, the caller then builds serially.
 */
extern bool simhash_build_parallel(Relation heap, Relation index, struct IndexInfo *indexInfo,
								   int nworkers, int ntables, SimhashBuilt *out);

#endif /* SIMHASH_BUILD_PARALLEL_H */
