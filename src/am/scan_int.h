/*
 * scan_int.h — the state of an index scan, shared by scan.c (the access
 * method's scan entry points), probe.c (the read step) and knn.c.
 */
#ifndef SIMHASH_SCAN_INT_H
#define SIMHASH_SCAN_INT_H

#include "simhash_am.h"

#include "access/relscan.h"
#include "nodes/tidbitmap.h"

typedef struct SimhashCond
{
	uint64 q;
	int	   radius;
} SimhashCond;

typedef struct SimhashHit
{
	ItemPointerData tid;
	int16			dist;	/* order-by distance, -1 when NULL */
	bool			isnull; /* the indexed value is NULL */
	uint64			fp;
} SimhashHit;

/* What a scan returns once its current batch of hits is used up. */
typedef enum SimhashScanPhase
{
	SIMHASH_PHASE_STREAM,  /* the next batch of a streamed radius or full scan */
	SIMHASH_PHASE_ORDERED, /* radius + ORDER BY: the next pass (knn.c) */
	SIMHASH_PHASE_LEVELS,  /* KNN: the next probe level (knn.c) */
	SIMHASH_PHASE_LINEAR,  /* KNN: the next nearest rows, by a linear pass */
	SIMHASH_PHASE_NULLS,   /* the rows whose key is NULL */
	SIMHASH_PHASE_DONE
} SimhashScanPhase;

/*
 * A (run, table) directory copied into memory the first time a probe needs
 * it (the scan's, or the backend's kept across scans: dirstore.c): the
 * hikey and block of every run page, so that a probe is one in-memory binary
 * search and the run pages it reads.  The run pages still carry their
 * generation, checked on every read.
 */
typedef struct SimhashDirCache
{
	bool		 loaded; /* tried: hikeys/blocks valid when n >= 0 */
	int			 probes; /* probes before it was loaded */
	int			 n;		 /* run pages listed; -1: not cached */
	uint64		*hikeys;
	BlockNumber *blocks;
	Buffer		*recent; /* the buffer each page was last read from; NULL: none kept */
	/* the arrays are the backend's (dirstore.c), valid while its epoch is */
	bool   stored;
	uint64 epoch;
	/*
	 * A stored directory's kept keys: those of run pages [0, nkeyed), those
	 * of page p at keys[kstart[p] .. kstart[p + 1]) in page order, as read
	 * (dirstore.c).  VACUUM removes entries from run pages in place, nothing
	 * adds any: the keys hold every entry of those pages, and maybe some
	 * removed since, so the sweep (sweep.c) and the listed probes
	 * (probe_list.c) filter them and look up on the page only the keys in
	 * range.
	 */
	const uint64 *keys;
	const uint32 *kstart;
	int			  nkeyed;
	/*
	 * With every page's keys kept: where each key prefix starts among them,
	 * for the listed probes (probe_list.c): kbucket[b] counts the kept keys
	 * whose top bits (key >> kshift) are below b, for b up to 2^(64 -
	 * kshift).  NULL when not every page's keys are kept.
	 */
	const uint32 *kbucket;
	int			  kshift;
} SimhashDirCache;

/*
 * The first of a[l .. r) that is >= lo (r when none is), a ascending: by
 * halving.  The run directory's key bounds and the kept keys' buckets.
 */
static inline uint32
simhash_first_u64_at_least(const uint64 *a, uint32 l, uint32 r, uint64 lo)
{
	const uint64 *base = a + l;
	uint32		  n = r - l;

	if (n == 0)
		return l;
	/* the answer lies in [base, base + n]; no branch to mispredict */
	while (n > 1)
	{
		uint32 half = n / 2;

		base = base[half] < lo ? base + half : base;
		n -= half;
	}
	return (uint32) (base - a) + (*base < lo);
}

/*
 * Where a streamed scan's batch stopped: the last entry it visited, by table,
 * probe variant (their order of enumeration), run, run page, and the entry's
 * (stored key, heap TID); entries of a run page are in (key, TID) order, and
 * VACUUM only removes entries in place, so the next batch finds its place on
 * the same page.
 */
typedef struct SimhashScanPos
{
	int				t;
	int64			v;
	int				r;
	int64			p;
	uint64			key;
	ItemPointerData tid;
} SimhashScanPos;

/*
 * Where the next batch of a chain's rows starts: the next page (pages are
 * read whole), the page that links to it and the pages read so far (the
 * chain's loop check).
 */
typedef struct SimhashChainPos
{
	BlockNumber next;
	BlockNumber prev;
	BlockNumber steps;
} SimhashChainPos;

/*
 * KNN's linear pass over the keys the backend keeps (sweep.c): kept keys
 * counted by distance above `after` (a count per distance, those up to d in
 * upto), d the least distance that `want` of them reach, and d1 (<= d) the
 * least that the pass's `batch` reach (upto1 up to it).  A count may leave
 * out keys at d met after d fell to it (they do not move d): the counts are
 * lower bounds, and d and d1 bounds that hold enough keys.  The pass reads the
 * pages with a key within d1 and notes those with a key within d, for the
 * next passes (SimhashKeyNoted).  Rows farther than d1 cannot be among the
 * pass's rows but for keys VACUUM removed since they were kept (knn.c's
 * linear_pass then goes on after d1).  A pass that reads the pages noted by
 * an earlier one (`noted`) counts nothing: d1 is fixed.
 */
typedef struct SimhashKeyCount
{
	int	  after;
	int64 want;
	int64 batch;
	int64 count[65];
	int64 upto;
	int64 upto1;
	int	  d;
	int	  d1;
	bool  noted;
} SimhashKeyCount;

/* A run page noted by a counting pass: a key within its reach, the least such. */
typedef struct SimhashKeyPage
{
	int	  r;
	int	  p;
	uint8 least;
} SimhashKeyPage;

/*
 * The pages a counting pass noted (pages[0 .. npages), in run and page
 * order) and its counts, for the next passes of the scan while they reach
 * no farther than its d: `valid`; epochs[r] is the epoch of the kept keys
 * run r's were counted from (dirstore.c; 0: not counted).  A run whose keys
 * the backend dropped or read again since has another epoch and is swept
 * whole: the array's address alone cannot tell, as a new array may be given
 * the old one's place.
 */
typedef struct SimhashKeyNoted
{
	bool			valid;
	SimhashKeyCount kc;
	SimhashKeyPage *pages;
	int64			npages;
	int64			maxpages;
	uint64		   *epochs;
} SimhashKeyNoted;

typedef struct SimhashScanOpaqueData
{
	SimhashMetaPageData meta;
	sh_table		   *tables;
	int					ntables;
	MemoryContext		cxt; /* results live here; reset by rescan */
	/* parsed keys */
	bool		 never;	  /* a NULL key: no row can match */
	bool		 recheck; /* a pair key: the heap row decides (radii) */
	int			 nconds;
	SimhashCond *conds;
	bool		 has_order;
	bool		 order_null; /* ORDER BY a <~> NULL */
	uint64		 order_q;
	/*
	 * Streamed radius and full scans return their rows in batches of at most
	 * batch_cap hits (doubling up to work_mem), each continuing after pos.
	 */
	bool			 streaming;
	bool			 resume; /* the previous batch stopped at pos */
	bool			 stop;	 /* this batch is full */
	int64			 batch_cap;
	SimhashScanPos	 pos;
	int				 flips;		   /* prefix bits a probe flips; -1: a full pass */
	int				 split;		   /* tables probed with flips, the rest with flips - 1 */
	int				 driver;	   /* the condition the probes are for */
	SimhashScanPhase after_stream; /* the phase once the stream ends */
	SimhashChainPos	 nulls_pos;	   /* the NULLs chain's next batch */
	bool			 ordered_more; /* ORDER BY radius: rows left for another pass */
	/* amgetbitmap: hits go straight into the bitmap */
	TIDBitmap *tbm;
	int64	   ntbm;
	/* the scan/VACUUM interlock (src/am/README): held now */
	bool interlocked;
	/* results */
	bool			 started;
	SimhashHit		*hits;
	int64			 nhits;
	int64			 maxhits;
	int64			 next;
	SimhashScanPhase phase;
	/* KNN (knn.c): a probe step returns the distances [band_lo, band_hi] */
	SimhashReadModel *model;	  /* of the copied metapage */
	int				  level;	  /* next step's level: prefix bits flipped */
	int				  step_table; /* next step's table */
	int				  band_lo;
	int				  band_hi;
	/*
	 * KNN: rows met by an earlier step beyond its band, by distance, for the
	 * later steps whose band holds them; up to carry_radius, in at most half
	 * of work_mem.  Once lost (a step's band reaches beyond carry_radius, or
	 * the memory ran out), whole levels probe everything again.
	 */
	SimhashHit *carry[65];
	int64		ncarry[65];
	int64		maxcarry[65];
	Size		carry_bytes;
	bool		carry_lost;
	int			carry_radius;
	/*
	 * KNN: at most band_cap rows of a band at a time (half of work_mem): a
	 * step whose band overflows is redone by whole-level passes, each keeping
	 * the band's next band_cap rows after (after_dist, after_tid).
	 */
	int64 band_cap;
	bool  band_heap; /* hits is a max-heap of the band's band_cap first rows */
	/*
	 * KNN: the rows of a band or pass not returned yet (pool[pool_off ..
	 * npool), unsorted): each batch selects and sorts the next pool_batch of
	 * them, so a band of many equal distances is not sorted whole for a LIMIT.
	 */
	SimhashHit *pool;
	int64		npool;
	int64		maxpool;
	int64		pool_off;
	int64		pool_batch;
	/* KNN's linear passes return the rows after (after_dist, after_tid) */
	int				after_dist;
	ItemPointerData after_tid;
	int64			batch;		 /* rows per linear pass */
	bool			linear_full; /* the pass has kept `batch` rows: none after linear_worst */
	SimhashHit		linear_worst;
	/* rows kept per distance, and the distance the first `batch` reach (knn.c) */
	int64 linear_count[65];
	int	  linear_d;
	int64 linear_upto; /* rows kept at distances <= linear_d */
	/* the pass's kept keys, counted by its sweep; NULL: not counting */
	SimhashKeyCount *keycount;
	SimhashKeyCount	 keycount_data;
	SimhashKeyNoted	 noted;
	BlockNumber		 nblocks;	  /* the index size as last read (check_link) */
	bool			 stale;		  /* met a page recycled since the metapage copy */
	BlockNumber		 stale_blkno; /* the last such page */
	/* directories cached by probes, [run * ntables + table]; NULL: none yet */
	SimhashDirCache *dirs;
	Size			 dir_budget; /* bytes the cache may still take */
} SimhashScanOpaqueData;

typedef SimhashScanOpaqueData *SimhashScanOpaque;

/* KNN: every row of the pool (the last band or pass) has been returned. */
static inline bool
simhash_pool_used_up(SimhashScanOpaque so)
{
	return so->pool_off >= so->npool;
}

typedef void (*SimhashVisit)(SimhashScanOpaque so, uint64 fp, ItemPointer tid, void *arg);

/*
 * The largest distance the visitor of a sweep (sweep.c) may still keep,
 * asked after each page: KNN's linear pass, its heap's worst row once full.
 */
typedef int (*SimhashSweepBound)(SimhashScanOpaque so);

#endif /* SIMHASH_SCAN_INT_H */
