/*
 * knn.h — exact k-nearest-neighbour order by probe levels (knn.c).
 */
#ifndef SIMHASH_KNN_H
#define SIMHASH_KNN_H

#include "scan_int.h"

extern void simhash_knn_start(IndexScanDesc scan);
extern void simhash_knn_next(IndexScanDesc scan);
extern void simhash_knn_ordered_start(IndexScanDesc scan);
extern void simhash_knn_ordered_begin(IndexScanDesc scan);
extern void simhash_knn_ordered_add(SimhashScanOpaque so, uint64 fp, ItemPointer tid, int d);
extern bool simhash_knn_ordered_end(IndexScanDesc scan);

#endif /* SIMHASH_KNN_H */
