/*
 * filter.c — prefix filters of small runs, kept by a backend across scans.
 */
#include "simhash_am.h"
#include "page.h"
#include "scan_int.h"
#include "probe.h"
#include "probe_int.h"

#include "access/relscan.h"
#include "utils/memutils.h"

/*
 * A query probes every run of every table, and a small run (a flush's, or a
 * few merged) rarely holds the query's prefix: it still costs a directory
 * page and a run page per table.  So a backend that meets a run of at most
 * FILTER_MAX_PAGES pages per table in a second scan reads it whole once and
 * keeps, per table, a bitmap of the first `fbits` bits of its keys (fbits at
 * most every table's prefix width, so the keys of one probed prefix share
 * one bit); a probe whose bit is clear skips the run without reading a page.
 * A run never gains entries (VACUUM only removes them), and its generation
 * names it for the life of the index, so the bitmap stays right; it lives in
 * the index's relcache entry (rd_amcache, one chunk, dropped with it: REINDEX
 * and TRUNCATE give a new one).  It is built only from pages checked for the
 * run's generation and table, and only for a run that holds every table (the
 * new run of a merge gains its tables one by one).
 */
#define FILTER_MAX_PAGES	 16 /* per table: the first two levels */
#define FILTER_SLOTS		 8
#define FILTER_MAX_BITS		 15					/* 4 kB per table */
#define FILTER_MAX_RUN_BYTES ((Size) 64 * 1024) /* over all tables */
#define FILTER_MIN_BITS		 8

typedef struct RunFilter
{
	uint32 gen;	   /* the run's generation; 0: a free slot */
	bool   built;  /* its bits are valid */
	bool   failed; /* a page was not the run's: never built */
	int	   probes; /* probes met before it was built */
	uint64 used;   /* the cache's clock at the last probe */
} RunFilter;

typedef struct FilterCache
{
	int		  ntables;
	int		  fbits;
	Size	  words; /* 64-bit words of one table's bitmap */
	uint64	  clock;
	RunFilter slot[FILTER_SLOTS];
	uint64	  bits[FLEXIBLE_ARRAY_MEMBER]; /* [(slot * ntables + t) * words] */
} FilterCache;

/*
 * The index's cache, allocated on first use; NULL if no bitmap width serves
 * every table.  Never held across a call that may accept invalidations.
 */
static FilterCache *
filter_cache(IndexScanDesc scan)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;
	Relation		  index = scan->indexRelation;
	FilterCache		 *fc = (FilterCache *) index->rd_amcache;
	int				  fbits = FILTER_MAX_BITS;
	Size			  words;

	if (fc != NULL && fc->ntables == so->ntables)
		return fc;
	for (int t = 0; t < so->ntables; t++)
		fbits = Min(fbits, so->tables[t].prefix_bits);
	while (fbits >= FILTER_MIN_BITS &&
		   (Size) so->ntables * ((Size) 1 << fbits) / 8 > FILTER_MAX_RUN_BYTES)
		fbits--;
	if (fbits < FILTER_MIN_BITS || index->rd_indexcxt == NULL)
		return NULL;
	words = ((Size) 1 << fbits) / 64;
	fc = MemoryContextAllocZero(index->rd_indexcxt,
								offsetof(FilterCache, bits) +
									sizeof(uint64) * words * so->ntables * FILTER_SLOTS);
	fc->ntables = so->ntables;
	fc->fbits = fbits;
	fc->words = words;
	if (index->rd_amcache != NULL)
		pfree(index->rd_amcache);
	index->rd_amcache = fc;
	return fc;
}

/* The slot of run `gen`, claimed (the least recently used) if it has none. */
static int
filter_slot(FilterCache *fc, uint32 gen)
{
	int victim = 0;

	for (int s = 0; s < FILTER_SLOTS; s++)
	{
		if (fc->slot[s].gen == gen)
			return s;
		if (fc->slot[s].used < fc->slot[victim].used)
			victim = s;
	}
	memset(&fc->slot[victim], 0, sizeof(RunFilter));
	fc->slot[victim].gen = gen;
	return victim;
}

/*
 * Read every page of run c->r into a bitmap per table (in `bits`, zeroed,
 * fc->words words per table).  False if a page was not the run's (so->stale
 * is then set, as for any read) or the run lists other than it holds.
 */
static bool
filter_fill(ProbeCtx *c, int fbits, Size words, uint64 *bits)
{
	SimhashScanOpaque so = (SimhashScanOpaque) c->scan->opaque;
	Relation		  index = c->scan->indexRelation;
	const SimhashRun *run = &so->meta.list.runs[c->r];

	for (int t = 0; t < so->ntables; t++)
	{
		BlockNumber dstart = simhash_meta_dir(&so->meta, c->r, t);
		BlockNumber blocks[FILTER_MAX_PAGES];
		uint64	   *tb = bits + (Size) t * words;
		Buffer		buf;
		int			n;

		simhash_scan_check_dir_link(c->scan, c->r, dstart);
		buf = ReadBuffer(index, dstart);
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		if (!simhash_scan_page_current(c->scan, buf, SIMHASH_DIR, run->gen, t))
		{
			UnlockReleaseBuffer(buf);
			return false;
		}
		n = simhash_buf_nentries(index, buf, SIMHASH_DIR_ENTRY_SIZE);
		if (n != (int) run->npages)
			simhash_corrupt_block(index, dstart,
								  "The directory lists more or fewer pages than the run list "
								  "accounts "
								  "for.");
		for (int p = 0; p < n; p++)
			blocks[p] = simhash_dir_block(SimhashDirEntry(BufferGetPage(buf), p));
		UnlockReleaseBuffer(buf);
		for (int p = 0; p < n; p++)
		{
			Page page;
			int	 k;

			simhash_scan_check_link(c->scan, dstart, blocks[p]);
			buf = ReadBuffer(index, blocks[p]);
			k = simhash_scan_lock_run_page(c->scan, buf, run, t, p);
			if (k < 0)
				return false;
			page = BufferGetPage(buf);
			for (int i = 0; i < k; i++)
			{
				uint64 b = simhash_entry_key(SimhashPageEntry(page, i)) >> (64 - fbits);

				tb[b / 64] |= UINT64CONST(1) << (b % 64);
			}
			UnlockReleaseBuffer(buf);
		}
	}
	return true;
}

/*
 * May run c->r hold keys whose first bits are lo's?  True unless its bitmap
 * says no; builds the bitmap of a small run on its probe in a second scan.
 */
bool
simhash_filter_may_hold(ProbeCtx *c, uint64 lo)
{
	SimhashScanOpaque so = (SimhashScanOpaque) c->scan->opaque;
	const SimhashRun *run = &so->meta.list.runs[c->r];
	FilterCache		 *fc;
	RunFilter		 *f;
	uint64			 *tb, b;
	int				  s;

	if (run->npages > FILTER_MAX_PAGES || run->gen == 0)
		return true;
	for (int t = 0; t < so->ntables; t++)
		if (!simhash_run_has(&so->meta, c->r, t))
			return true;
	fc = filter_cache(c->scan);
	if (fc == NULL)
		return true;
	s = filter_slot(fc, run->gen);
	f = &fc->slot[s];
	f->used = ++fc->clock;
	if (f->failed)
		return true;
	if (!f->built)
	{
		int		fbits = fc->fbits;
		Size	words = fc->words;
		uint64 *bits;
		bool	ok;

		if (++f->probes <= so->ntables)
			return true;
		/* fill a copy: reading pages may not keep fc alive */
		bits = palloc0(sizeof(uint64) * words * so->ntables);
		ok = filter_fill(c, fbits, words, bits);
		fc = (FilterCache *) c->scan->indexRelation->rd_amcache;
		if (fc == NULL || fc->ntables != so->ntables || fc->fbits != fbits)
		{
			pfree(bits);
			return true;
		}
		s = filter_slot(fc, run->gen);
		f = &fc->slot[s];
		f->failed = !ok;
		f->built = ok;
		if (ok)
			memcpy(fc->bits + (Size) s * so->ntables * words, bits,
				   sizeof(uint64) * words * so->ntables);
		pfree(bits);
		if (!ok)
			return true;
	}
	tb = fc->bits + ((Size) s * so->ntables + c->t) * fc->words;
	b = lo >> (64 - fc->fbits);
	return (tb[b / 64] >> (b % 64)) & 1;
}

/*
 * Where lo is expected among the keys of the run page that directory entry i
 * of dpage lists, in [0, 1], from the hikeys around it (as the cached path
 * does): 0 when lo is at or below the previous hikey; -1 when that hikey is
 * on another directory page, or a stream resumes at its own key.
 */
