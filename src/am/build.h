/*
 * build.h — what the serial build (build.c) and the parallel build
 * (build_parallel.c) hand each other.
 */
#ifndef SIMHASH_BUILD_H
#define SIMHASH_BUILD_H

#include "simhash_am.h"

struct IndexInfo;

/*
 * What a build leaves for the metapage: the run written (one directory per
 * table), the rows it holds, the NULLs to chain, the heap tuples seen; and
 * the bulk writer the run's pages go to.
 */
typedef struct SimhashBuilt
{
	/* given: the bulk writer, and its sink for the run's pages (advanced) */
	SimhashBulkWriter *bulk;
	SimhashPageSink	  *sink;
	/* returned */
	int64			 n; /* rows in the run (entries per table) */
	BlockNumber		 dir[SIMHASH_MAX_TABLES];
	BlockNumber		 run_npages;
	ItemPointerData *nulls;
	int64			 nnulls;
	double			 heap_tuples;
} SimhashBuilt;

/* keys = items permuted for table tab, sorted by (key, TID); n items each. */
extern void
simhash_permute_sorted(const SimhashItem *items, int64 n, const sh_table *tab, SimhashItem *keys);

/*
 * A sorted chunk of one table's (key, TID) pairs in a temporary file: from
 * block blk on, n pairs (blk and n -1: the whole file, read from where it
 * stands).
 */
typedef struct SimhashChunk
{
	struct BufFile *file;
	int64			blk;
	int64			n;
} SimhashChunk;

/*
 * Table t of a run with n entries: the merge of the chunks, in (key, TID)
 * order, through a run writer into sink; the entries written are reported
 * as tuples done after progress_base (-1: not reported).
 */
extern void simhash_merge_chunks(Relation index, const SimhashChunk *chunks, int nchunks, int t,
								 int64 n, SimhashPageSink *sink, int64 progress_base);

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

#endif /* SIMHASH_BUILD_H */
