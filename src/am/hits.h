/*
 * hits.h — the answers a scan collects (hits.c), used by scan.c, probe.c and
 * knn.c.
 */
#ifndef SIMHASH_HITS_H
#define SIMHASH_HITS_H

#include "scan_int.h"

/* (d, tid) after (e, etid) in the order returned? */
static inline bool
simhash_hit_after(int d, ItemPointer tid, int e, ItemPointer etid)
{
	return d != e ? d > e : ItemPointerCompare(tid, etid) > 0;
}

extern void
simhash_add_hit(SimhashScanOpaque so, uint64 fp, ItemPointer tid, int dist, bool isnull);
extern void simhash_sort_hits(SimhashScanOpaque so);
extern void simhash_hits_sift_down(SimhashHit *h, int64 n, int64 i);
extern void
simhash_keep_after(SimhashScanOpaque so, uint64 fp, ItemPointer tid, int d, int64 limit);
extern void simhash_select_first(SimhashHit *h, int64 n, int64 k);

#endif /* SIMHASH_HITS_H */
