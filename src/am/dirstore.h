/*
 * dirstore.h — run directories kept by a backend across scans (dirstore.c).
 */
#ifndef SIMHASH_DIRSTORE_H
#define SIMHASH_DIRSTORE_H

#include "scan_int.h"

extern uint64 simhash_dirstore_epoch(void);
extern Size	  simhash_dirstore_dir_bytes(double npages);
extern Size	  simhash_dirstore_budget(void);
extern SimhashDirCache *
simhash_dirstore_get(Relation index, uint32 gen, int table, BlockNumber dstart, BlockNumber npages);
extern SimhashDirCache *
simhash_dirstore_put(Relation index, const SimhashMetaPageData *meta, uint32 gen, int table,
					 BlockNumber dstart, const SimhashDirCache *dir);
extern void simhash_dirstore_load_keys(IndexScanDesc scan, int r, SimhashDirCache *d, bool whole);
extern bool simhash_dirstore_probed(const SimhashDirCache *d, int pages);

/* Forget a scan's directories (they belong to its metapage copy). */
extern void simhash_dir_cache_reset(SimhashScanOpaque so);

#endif /* SIMHASH_DIRSTORE_H */
