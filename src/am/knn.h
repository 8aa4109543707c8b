/*
 * knn.h — exact k-nearest-neighbour order by probe levels (knn.c).
 */
#ifndef SIMHASH_KNN_H
#define SIMHASH_KNN_H

#include "scan_int.h"

extern void simhash_knn_start(IndexScanDesc scan);
extern void simhash_knn_next(IndexScanDesc scan);

#endif /* SIMHASH_KNN_H */
