/*
 * build_sort.h — the sorting the serial and parallel builds share
 * (build_sort.c).
 */
#ifndef SIMHASH_BUILD_SORT_H
#define SIMHASH_BUILD_SORT_H

#include "simhash_am.h"
#include "runs.h"

struct BufFile;

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

#endif /* SIMHASH_BUILD_SORT_H */
