/*
 * probe_int.h — what the radius probes (probe.c) and KNN's exact steps
 * (knn.c) share, private to the scan: one table's probe context, the
 * checked reads of a scan's pages, the range scan of one prefix, the
 * directory cache (dirstore.c) and the prefix filters (filter.c).
 */
#ifndef SIMHASH_PROBE_INT_H
#define SIMHASH_PROBE_INT_H

#include "scan_int.h"
#include "page.h"

#include "port/pg_bitutils.h"

/* One table's probes: the context shared by its range scans. */
typedef struct ProbeCtx
{
	IndexScanDesc	scan;
	const sh_table *tab;
	int				t;
	int				r;	  /* the run probed */
	uint64			q;	  /* the query */
	uint64			qkey; /* the query, permuted for this table */
	int				radius;
	int				flips; /* prefix bits allowed to differ */
	bool			exact; /* only the prefixes `flips` bits away */
	/*
	 * radius probes: the level, the tables before `split` probed with up to
	 * `level` flipped prefix bits, the others with level - 1 (flips is this
	 * table's); which table reports a row depends on all of them
	 */
	int			 level;
	int			 split;
	SimhashVisit visit;
	void		*arg;
	/* the run page last read, kept pinned for the next range on it */
	Buffer		buf;
	BlockNumber blkno;
	int			dir_hint; /* run page of the last range in a cached directory */
	/* streaming (SimhashScanPos): the variant probed, and the resume state */
	int64 v;		/* the next variant's number */
	int64 cur_v;	/* the variant being probed */
	bool  resuming; /* so->pos lies ahead in this table: skip up to it */
	bool  after;	/* this range starts after so->pos */
} ProbeCtx;

/*
 * The number of entries of `size` bytes on a page that passed simhash_scan_page_current():
 * pd_lower must lie inside the page's contents, so that no read goes past it.
 */
static inline int
simhash_buf_nentries(Relation index, Buffer buf, Size size)
{
	return simhash_page_nentries(index, BufferGetBlockNumber(buf), BufferGetPage(buf), size);
}

/*
 * Is table t the one that reports, among exact probes (those of the prefixes
 * exactly `flips` bits away from the query's), a row differing from the query
 * by diff, met in table t's probes?  Each row belongs to the level of the
 * fewest flipped prefix bits over all tables, and there to the first table
 * with that few: so every row is met once over all levels.
 */
static inline bool
simhash_owned_at(SimhashScanOpaque so, int t, uint64 diff, int flips)
{
	int e;

	for (e = 0; e < so->ntables; e++)
	{
		int k;

		if (e == t)
			continue;
		k = pg_popcount64(diff & so->tables[e].prefix_orig_mask);
		if (k < flips || (k == flips && e < t))
			return false;
	}
	return true;
}

/* Checked reads of a scan's pages (scanpage.c) */
extern bool
simhash_scan_page_current(IndexScanDesc scan, Buffer buf, uint16 kind, uint32 gen, int table);
extern void simhash_scan_check_link(IndexScanDesc scan, BlockNumber from, BlockNumber blkno);
extern void simhash_scan_check_dir_link(IndexScanDesc scan, int r, BlockNumber dstart);
extern int
simhash_run_page_nentries(Relation index, Buffer buf, const SimhashRun *run, BlockNumber p);
extern int simhash_scan_lock_run_page(IndexScanDesc scan, Buffer buf, const SimhashRun *run, int t,
									  BlockNumber p);

/* Probes (probe.c) */
extern void simhash_probe_ctx_init(ProbeCtx *c, IndexScanDesc scan, int t, uint64 q, int radius,
								   int flips, bool exact, SimhashVisit visit, void *arg);
extern int	simhash_first_at_least(Page page, int n, uint64 lo, int guess);
extern int	simhash_first_with_key(Page page, int n, uint64 key, int guess);
extern void simhash_range_scan(ProbeCtx *c, uint64 lo, uint64 hi);
extern void simhash_probe_table(IndexScanDesc scan, int t, uint64 q, int radius, int flips,
								int split, bool exact, SimhashVisit visit, void *arg);

/* Listed prefix ranges, page by page (probe_list.c) */
extern void simhash_list_prefixes(const sh_table *tab, uint64 qkey, int b, int left, bool exact,
								  uint64 lo, uint64 *out, int *n);
extern bool simhash_probe_listed(ProbeCtx *c, const uint64 *los, const uint64 *his, int nlos);

/* Directories copied into memory (dirstore.c) */
extern int				simhash_dir_first_from(const SimhashDirCache *cache, int a, uint64 lo);
extern SimhashDirCache *simhash_dir_cache_get(ProbeCtx *c);
extern Buffer			simhash_dir_read_page(Relation index, SimhashDirCache *cache, int p);

/* The sweep of one run (sweep.c) */
extern void simhash_scan_chain(IndexScanDesc scan, BlockNumber blkno, uint32 chain, uint64 q,
							   int radius, SimhashVisit visit, void *arg);
extern void simhash_sweep_run(IndexScanDesc scan, int r, uint64 q, int lo, int hi,
							  SimhashSweepBound bound, SimhashVisit visit);

/* Prefix filters of small runs (filter.c) */
extern bool simhash_filter_may_hold(ProbeCtx *c, uint64 lo);

#endif /* SIMHASH_PROBE_INT_H */
