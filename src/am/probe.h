/*
 * probe.h — the read step of index scans (probe.c; scanpage.c's stale check),
 * used by scan.c and knn.c.
 */
#ifndef SIMHASH_PROBE_H
#define SIMHASH_PROBE_H

#include "scan_int.h"

extern void simhash_probe_all(IndexScanDesc scan, uint64 q, int radius, int flips, int split,
							  SimhashVisit visit);
extern void simhash_scan_pending(IndexScanDesc scan, SimhashVisit visit);
extern void simhash_scan_all(IndexScanDesc scan, uint64 q, int lo, int hi, SimhashSweepBound bound,
							 SimhashVisit visit);

extern void simhash_scan_nulls(IndexScanDesc scan, SimhashVisit visit, int64 limit);
extern void simhash_check_stale(IndexScanDesc scan);

#endif /* SIMHASH_PROBE_H */
