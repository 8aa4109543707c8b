/*
 * probe.c — the read step shared by radius scans (scan.c) and KNN (knn.c):
 * reading run, directory and chain pages checked against the scan's copy of
 * the metapage (generation, links, bounds), probing the permuted tables for
 * the keys near a query, and the scan's array of hits.
 */
#include "simhash_am.h"
#include "page.h"
#include "scan_int.h"
#include "probe.h"
#include "dirstore.h"

#include "access/relscan.h"
#include "miscadmin.h"
#include "storage/buf_internals.h"
#include "port/pg_bitutils.h"
#include "utils/memutils.h"

/* ---- reading pages ------------------------------------------------------ */

/* ---- corruption: an error naming the block, never wrong rows ------------- */

static void
corrupt_block(Relation index, BlockNumber blkno, const char *detail)
{
	ereport(ERROR, (errcode(ERRCODE_INDEX_CORRUPTED),
					errmsg("simhash index \"%s\" is corrupted at block %u",
						   RelationGetRelationName(index), blkno),
					errdetail_internal("%s", detail),
					errhint("REINDEX the index; simhash_index_check() describes the damage.")));
}

/*
 * The trailer (opaque area) of a page that is not new: only once pd_special
 * says where this access method puts it, so that no read goes past the page.
 */
static SimhashPageOpaque
page_trailer(Relation index, Buffer buf)
{
	Page page = BufferGetPage(buf);

	if (((PageHeader) page)->pd_special != SIMHASH_SPECIAL_OFFSET)
		corrupt_block(index, BufferGetBlockNumber(buf),
					  psprintf("The page's special space starts at %u.",
							   ((PageHeader) page)->pd_special));
	return SimhashPageGetOpaque(page);
}

/*
 * A block number read from page `from` (the run list, a directory page)
 * must lie inside the index before it is read: InvalidBlockNumber is P_NEW,
 * which would extend the file.
 */
static void
check_link(IndexScanDesc scan, BlockNumber from, BlockNumber blkno)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;

	simhash_check_link(scan->indexRelation, from, blkno, 0, &so->nblocks);
}

/* The directory pages of run r, table t (contiguous), inside the index. */
static void
check_dir_link(IndexScanDesc scan, int r, BlockNumber dstart)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;
	BlockNumber		  ndir = SimhashDirPages(so->meta.list.runs[r].npages);

	check_link(scan, SIMHASH_RUNLIST_BLKNO, dstart);
	if (ndir > 1)
		check_link(scan, SIMHASH_RUNLIST_BLKNO,
				   dstart + ndir - 1 < dstart ? InvalidBlockNumber : dstart + ndir - 1);
}


static inline int
so_nruns(IndexScanDesc scan)
{
	return ((SimhashScanOpaque) scan->opaque)->meta.list.nruns;
}

/*
 * Is this still the page the copied metapage points to?  A page keeps its
 * kind's flag or DELETED, and its generation, until it is recycled.
 */
static bool
page_current(IndexScanDesc scan, Buffer buf, uint16 kind, uint32 gen, int table)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;
	Page			  page = BufferGetPage(buf);
	SimhashPageOpaque o;

	if (!PageIsNew(page))
	{
		o = page_trailer(scan->indexRelation, buf);
		if (o->page_id == SIMHASH_PAGE_ID && (o->flags & (kind | SIMHASH_DELETED)) != 0 &&
			o->gen == gen && (table < 0 || o->table == table))
			return true;
	}
	so->stale = true;
	so->stale_blkno = BufferGetBlockNumber(buf);
	return false;
}

/*
 * The number of entries of `size` bytes on a page that passed page_current():
 * pd_lower must lie inside the page's contents, so that no read goes past it.
 */
static int
page_nentries(Relation index, Buffer buf, Size size)
{
	return simhash_page_nentries(index, BufferGetBlockNumber(buf), BufferGetPage(buf), size);
}

/*
 * The entries of page p of a run: every page but the last was written full,
 * and VACUUM counts on the page the entries it removed in place, so a
 * damaged page cannot hide rows.
 */
static int
run_page_nentries(Relation index, Buffer buf, const SimhashRun *run, BlockNumber p)
{
	int n = page_nentries(index, buf, SIMHASH_ENTRY_SIZE);
	int written = n + SimhashPageGetOpaque(BufferGetPage(buf))->removed;

	if (p + 1 < run->npages ? written != SIMHASH_PAGE_CAPACITY
							: written < 1 || written > SIMHASH_PAGE_CAPACITY)
		corrupt_block(index, BufferGetBlockNumber(buf),
					  "The run page holds fewer or more entries than the run list accounts for.");
	return n;
}

/*
 * A page was not the one the metapage copy points to.  If the metapage still
 * names the same runs and chains, no flush or merge can have recycled it
 * (see src/am/README): the page itself is wrong.
 */
static void
check_stale(IndexScanDesc scan)
{
	SimhashScanOpaque	so = (SimhashScanOpaque) scan->opaque;
	SimhashMetaPageData now;
	int					r;

	simhash_read_meta(scan->indexRelation, &now);
	if (now.pending_chain != so->meta.pending_chain || now.sealed_chain != so->meta.sealed_chain ||
		now.list.nruns != so->meta.list.nruns)
		return;
	for (r = 0; r < now.list.nruns; r++)
		if (now.list.runs[r].gen != so->meta.list.runs[r].gen)
			return;
	/* a merge switches its tables over one by one, keeping the same runs */
	if (memcmp(now.list.run_dir, so->meta.list.run_dir,
			   sizeof(BlockNumber) * now.list.nruns * now.ntables) != 0)
		return;
	corrupt_block(scan->indexRelation, so->stale_blkno,
				  "The page is not the run, directory or pending page the metapage points to.");
}

/*
 * A chain page: a NULLs page (chain 0; never recycled) must say so, and no
 * chain is longer than the index, so a damaged link cannot loop forever.
 */
static void
check_chain_page(Relation index, Buffer buf, uint32 chain, BlockNumber steps, BlockNumber nblocks)
{
	Page page = BufferGetPage(buf);

	if (chain == 0 && (PageIsNew(page) || page_trailer(index, buf)->page_id != SIMHASH_PAGE_ID ||
					   page_trailer(index, buf)->flags != SIMHASH_NULLS))
		corrupt_block(index, BufferGetBlockNumber(buf),
					  "The page is not the NULLs page its chain points to.");
	if (steps > nblocks)
		corrupt_block(index, BufferGetBlockNumber(buf), "The chain of pages loops.");
}

/* The last hikey of directory page d of a run (for the binary search). */
static uint64
dir_page_hikey(IndexScanDesc scan, BlockNumber blkno, uint32 gen, int t)
{
	Buffer buf = ReadBuffer(scan->indexRelation, blkno);
	uint64 hikey = PG_UINT64_MAX;

	LockBuffer(buf, BUFFER_LOCK_SHARE);
	if (page_current(scan, buf, SIMHASH_DIR, gen, t))
		hikey = SimhashPageGetOpaque(BufferGetPage(buf))->hikey;
	UnlockReleaseBuffer(buf);
	return hikey;
}

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
	SimhashVisit	visit;
	void		   *arg;
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
 * The first of the n entries of a run page whose key is >= lo, searched from
 * entry `guess` outwards by doubling steps, then by halving the bracket.
 * Keys are near uniform between two hikeys, so a guess by interpolation
 * lands a few entries away, and the search touches a few cache lines of the
 * page where a plain binary search touches a dozen.
 */
static int
first_at_least(Page page, int n, uint64 lo, int guess)
{
	int l, r, step;

	if (guess <= 0 || simhash_entry_key(SimhashPageEntry(page, guess - 1)) < lo)
	{
		/* the answer is >= guess: find r with key[r] >= lo (or r = n) */
		l = guess;
		step = 1;
		r = Min(guess, n);
		while (r < n && simhash_entry_key(SimhashPageEntry(page, r)) < lo)
		{
			l = r + 1;
			r = Min(r + step, n);
			step *= 2;
		}
	}
	else
	{
		/* key[guess - 1] >= lo: the answer is < guess */
		r = guess - 1;
		step = 1;
		l = Max(r - step, 0);
		while (l > 0 && simhash_entry_key(SimhashPageEntry(page, l - 1)) >= lo)
		{
			r = l - 1;
			step *= 2;
			l = Max(r - step, 0);
		}
	}
	/* key[l - 1] < lo (or l = 0), key[r] >= lo (or r = n): bisect [l, r] */
	while (l < r)
	{
		int mid = l + (r - l) / 2;

		if (simhash_entry_key(SimhashPageEntry(page, mid)) < lo)
			l = mid + 1;
		else
			r = mid;
	}
	return l;
}

/*
 * Is table t the one that reports, among exact probes (those of the prefixes
 * exactly `flips` bits away from the query's), a row differing from the query
 * by diff, met in table t's probes?  Each row belongs to the level of the
 * fewest flipped prefix bits over all tables, and there to the first table
 * with that few: so every row is met once over all levels.
 */
static inline bool
owned_at(SimhashScanOpaque so, int t, uint64 diff, int flips)
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

/*
 * Visit the matches on one run page: entries in [lo, hi] within radius and
 * not reachable from an earlier table (there, the prefix differs from the
 * query's in more than `flips` bits), so each match is emitted once.
 * `where` in [0, 1] is where lo is expected among the page's keys (its
 * position between the previous page's hikey and this one's), -1 if unknown.
 * Returns false when the range ends on this page.
 */
static bool
scan_run_page(ProbeCtx *c, BlockNumber blkno, BlockNumber p, uint64 lo, uint64 hi, double where)
{
	const SimhashRun *run = &((SimhashScanOpaque) c->scan->opaque)->meta.list.runs[c->r];
	uint32			  gen = run->gen;
	SimhashScanOpaque so = (SimhashScanOpaque) c->scan->opaque;
	Buffer			  buf;
	Page			  page;
	bool			  more = true, current;
	int				  n, i;

	if (BufferIsValid(c->buf) && c->blkno == blkno)
		buf = c->buf;
	else
	{
		if (BufferIsValid(c->buf))
			ReleaseBuffer(c->buf);
		c->buf = buf = ReadBuffer(c->scan->indexRelation, blkno);
		c->blkno = blkno;
	}
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	page = BufferGetPage(buf);
	current = page_current(c->scan, buf, SIMHASH_RUN, gen, c->t);
	n = current ? run_page_nentries(c->scan->indexRelation, buf, run, p) : 0;
	if (!current)
		more = false;
	/* the first entry >= lo: (key, TID) order holds on a run page */
	i = first_at_least(page, n, lo, where < 0 ? n / 2 : Min((int) (where * n), n));
	for (; i < n; i++)
	{
		const char	   *ent = SimhashPageEntry(page, i);
		uint64			key = simhash_entry_key(ent);
		uint64			fp;
		ItemPointerData tid;

		if (key > hi)
		{
			more = false;
			break;
		}
		simhash_entry_tid(ent, &tid);
		if (c->after)
		{
			if (key == so->pos.key && ItemPointerCompare(&tid, &so->pos.tid) <= 0)
				continue;
			c->after = false;
		}
		if (simhash_hamming(key, c->qkey) > c->radius)
			continue;
		fp = sh_table_unpermute(c->tab, key);
		if (c->exact ? !owned_at(so, c->t, fp ^ c->q, c->flips)
					 : !sh_table_first_match_flips(so->tables, c->t, fp, c->q, c->flips))
			continue;
		c->visit(so, fp, &tid, c->arg);
		if (so->streaming && so->nhits >= so->batch_cap)
		{
			SimhashScanPos pos = {c->t, c->cur_v, c->r, p, key, tid};

			so->pos = pos;
			so->stop = true;
			more = false;
			break;
		}
	}
	/* the page's hikey: its last key when written, now an upper bound */
	if (current && !so->stop && SimhashPageGetOpaque(page)->hikey > hi)
		more = false;
	LockBuffer(buf, BUFFER_LOCK_UNLOCK);
	return more;
}

/*
 * The first directory entry at or after a whose hikey is >= lo (cache->n when
 * none is): hikeys ascend and every entry before a is known to be below lo.
 * Searched from a by doubling steps, then by halving the bracket, so a probe
 * a few pages after the previous one costs a few comparisons.
 */
static int
dir_first_from(const SimhashDirCache *cache, int a, uint64 lo)
{
	int b = a;

	for (int step = 1; b < cache->n && cache->hikeys[b] < lo; step *= 2)
	{
		a = b + 1;
		b = Min(b + step, cache->n);
	}
	while (a < b)
	{
		int mid = a + (b - a) / 2;

		if (cache->hikeys[mid] < lo)
			a = mid + 1;
		else
			b = mid;
	}
	return a;
}

/*
 * The directory of run c->r, table c->t: the backend's copy (dirstore.c) if
 * it has one; else copied into scan memory by its second probe (a scan that
 * probes it once, as a radius query up to `bits` does, reads the pages it
 * needs), and handed to the backend's store, or kept by the scan when the
 * store has no room for it.  NULL before the second probe, when it does not
 * fit in what is left of the scan's budget (a quarter of work_mem) or a page
 * of it was recycled (then so->stale is set: the scan starts over from a
 * fresh metapage with an empty cache, or fails).  The copy stays good: a run
 * page is only read after checking its generation and table, as the pages
 * of the directory were.
 */
static SimhashDirCache *
dir_cache_get(ProbeCtx *c)
{
	SimhashScanOpaque so = (SimhashScanOpaque) c->scan->opaque;
	Relation		  index = c->scan->indexRelation;
	const SimhashRun *run = &so->meta.list.runs[c->r];
	BlockNumber		  dstart = simhash_meta_dir(&so->meta, c->r, c->t);
	BlockNumber		  ndir = SimhashDirPages(run->npages);
	SimhashDirCache	 *d, *kept;
	Size			  bytes = (Size) run->npages * (sizeof(uint64) + sizeof(BlockNumber));
	BlockNumber		  p;
	int				  n = 0;

	if (so->dirs == NULL)
		so->dirs = MemoryContextAllocZero(so->cxt, sizeof(SimhashDirCache) * so->meta.list.nruns *
													   so->ntables);
	d = &so->dirs[c->r * so->ntables + c->t];
	if (d->loaded && d->stored && d->epoch != simhash_dirstore_epoch())
		d->loaded = d->stored = false; /* the store removed something: look again */
	if (d->loaded)
		return d->n >= 0 ? d : NULL;
	kept = simhash_dirstore_get(index, run->gen, c->t, dstart, run->npages);
	if (kept != NULL)
	{
		*d = *kept;
		d->stored = true;
		d->epoch = simhash_dirstore_epoch();
		return d;
	}
	if (d->probes++ == 0)
		return NULL;
	d->loaded = true;
	d->n = -1;
	if (bytes > so->dir_budget)
		return NULL;
	d->hikeys = MemoryContextAlloc(so->cxt, sizeof(uint64) * Max(run->npages, 1));
	d->blocks = MemoryContextAlloc(so->cxt, sizeof(BlockNumber) * Max(run->npages, 1));
	d->recent = NULL;
	for (p = 0; p < ndir; p++)
	{
		Buffer buf = ReadBuffer(index, dstart + p);
		Page   page;
		int	   k, e;

		LockBuffer(buf, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buf);
		if (!page_current(c->scan, buf, SIMHASH_DIR, run->gen, c->t))
		{
			UnlockReleaseBuffer(buf);
			pfree(d->hikeys);
			pfree(d->blocks);
			return NULL;
		}
		k = Min(page_nentries(index, buf, SIMHASH_DIR_ENTRY_SIZE), (int) run->npages - n);
		for (e = 0; e < k; e++)
		{
			const char *ent = SimhashDirEntry(page, e);

			d->hikeys[n] = simhash_entry_key(ent);
			d->blocks[n] = simhash_dir_block(ent);
			n++;
		}
		UnlockReleaseBuffer(buf);
		for (e = n - k; e < n; e++)
			check_link(c->scan, dstart + p, d->blocks[e]);
	}
	d->n = n;
	/* a directory that lists fewer pages than its run (damaged) is not kept */
	kept = n == (int) run->npages
			   ? simhash_dirstore_put(index, &so->meta, run->gen, c->t, dstart, d)
			   : NULL;
	if (kept != NULL)
	{
		pfree(d->hikeys);
		pfree(d->blocks);
		*d = *kept;
		d->stored = true;
		d->epoch = simhash_dirstore_epoch();
		return d;
	}
	so->dir_budget -= bytes;
	return d;
}

/* Forget the cached directories (they belong to the metapage copy). */
static void
dir_cache_reset(SimhashScanOpaque so)
{
	so->dirs = NULL;
	so->dir_budget = (Size) work_mem * 1024 / 4;
}

/* ---- prefix filters of small runs, kept by the backend across scans ------ */

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

		check_dir_link(c->scan, c->r, dstart);
		buf = ReadBuffer(index, dstart);
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		if (!page_current(c->scan, buf, SIMHASH_DIR, run->gen, t))
		{
			UnlockReleaseBuffer(buf);
			return false;
		}
		n = page_nentries(index, buf, SIMHASH_DIR_ENTRY_SIZE);
		if (n != (int) run->npages)
			corrupt_block(index, dstart,
						  "The directory lists more or fewer pages than the run list accounts "
						  "for.");
		for (int p = 0; p < n; p++)
			blocks[p] = simhash_dir_block(SimhashDirEntry(BufferGetPage(buf), p));
		UnlockReleaseBuffer(buf);
		for (int p = 0; p < n; p++)
		{
			Page page;
			int	 k;

			check_link(c->scan, dstart, blocks[p]);
			buf = ReadBuffer(index, blocks[p]);
			LockBuffer(buf, BUFFER_LOCK_SHARE);
			if (!page_current(c->scan, buf, SIMHASH_RUN, run->gen, t))
			{
				UnlockReleaseBuffer(buf);
				return false;
			}
			page = BufferGetPage(buf);
			k = run_page_nentries(index, buf, run, p);
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
static bool
filter_may_hold(ProbeCtx *c, uint64 lo)
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
static double
where_on_page(Page dpage, int i, bool first_dir_page, uint64 lo, bool after)
{
	uint64 below, hikey;

	if (after || (i == 0 && !first_dir_page))
		return -1;
	below = i > 0 ? simhash_entry_key(SimhashDirEntry(dpage, i - 1)) : 0;
	hikey = simhash_entry_key(SimhashDirEntry(dpage, i));
	if (lo <= below || hikey <= below)
		return 0;
	return Min((double) (lo - below) / (double) (hikey - below), 1.0);
}

/*
 * Entries of run c->r whose key lies in [lo, hi] (one prefix value): a
 * binary search over the run's directory (cached, or its pages), then the
 * run pages it lists, in order, while they can hold keys <= hi.
 */
static void
range_scan(ProbeCtx *c, uint64 lo, uint64 hi)
{
	SimhashDirCache	 *cache;
	SimhashScanOpaque so = (SimhashScanOpaque) c->scan->opaque;
	Relation		  index = c->scan->indexRelation;
	const SimhashRun *run = &so->meta.list.runs[c->r];
	BlockNumber		  dstart = simhash_meta_dir(&so->meta, c->r, c->t);
	BlockNumber		  ndir = SimhashDirPages(run->npages);
	BlockNumber		  l = 0, r = ndir - 1; /* the last page if no other qualifies */
	bool			  more = true;
	int				  i;

	/* a run that does not hold this table (a merge is switching tables over) */
	if (!BlockNumberIsValid(dstart))
		return;
	/* a small run whose prefix filter says it has no key in the range */
	if (!filter_may_hold(c, lo))
		return;
	check_dir_link(c->scan, c->r, dstart);
	cache = dir_cache_get(c);
	if (c->after)
		lo = so->pos.key; /* a stream's next batch, from run page pos.p */
	if (cache != NULL && c->after)
	{
		for (int a = (int) so->pos.p; more && a < cache->n && !so->stop; a++)
		{
			more = scan_run_page(c, cache->blocks[a], a, lo, hi, -1);
			lo = 0;
		}
		return;
	}
	if (cache != NULL)
	{
		int a = c->dir_hint;

		/*
		 * The first run page whose hikey is >= lo, searched from the page of
		 * the previous range: probes come in key order (exact levels),
		 * usually a few pages apart.
		 */
		if (a > cache->n || (a > 0 && cache->hikeys[a - 1] >= lo))
			a = 0;
		a = dir_first_from(cache, a, lo);
		c->dir_hint = a;
		for (; more && a < cache->n && !so->stop; a++)
		{
			uint64 below = a > 0 ? cache->hikeys[a - 1] : 0;
			double where = 0;

			if (lo > below && cache->hikeys[a] > below)
				where = Min((double) (lo - below) / (double) (cache->hikeys[a] - below), 1.0);
			more = scan_run_page(c, cache->blocks[a], a, lo, hi, where);
			lo = 0; /* the next page: from its first entry */
		}
		return;
	}
	if (so->stale)
		return;
	if (c->after)
		l = r = (BlockNumber) (so->pos.p / SIMHASH_DIR_CAPACITY);
	while (l < r)
	{
		BlockNumber mid = l + (r - l) / 2;

		if (dir_page_hikey(c->scan, dstart + mid, run->gen, c->t) < lo)
			l = mid + 1;
		else
			r = mid;
	}
	/* directory page l is the first whose hikey can be >= lo */
	for (i = -1; more && l < ndir; l++)
	{
		Buffer dbuf = ReadBuffer(index, dstart + l);
		Page   dpage;
		int	   n;

		LockBuffer(dbuf, BUFFER_LOCK_SHARE);
		dpage = BufferGetPage(dbuf);
		if (!page_current(c->scan, dbuf, SIMHASH_DIR, run->gen, c->t))
		{
			UnlockReleaseBuffer(dbuf);
			return;
		}
		n = page_nentries(index, dbuf, SIMHASH_DIR_ENTRY_SIZE);
		if (i < 0 && c->after)
			i = (int) (so->pos.p % SIMHASH_DIR_CAPACITY);
		if (i < 0)
		{
			int lo_i = 0, hi_i = n;

			while (lo_i < hi_i)
			{
				int mid = lo_i + (hi_i - lo_i) / 2;

				if (simhash_entry_key(SimhashDirEntry(dpage, mid)) < lo)
					lo_i = mid + 1;
				else
					hi_i = mid;
			}
			i = lo_i;
		}
		while (more && i < n)
		{
			BlockNumber blkno = simhash_dir_block(SimhashDirEntry(dpage, i));
			double		where = where_on_page(dpage, i, l == 0, lo, c->after);

			/* read the run page without holding the directory page's lock */
			LockBuffer(dbuf, BUFFER_LOCK_UNLOCK);
			check_link(c->scan, dstart + l, blkno);
			more = scan_run_page(c, blkno, l * SIMHASH_DIR_CAPACITY + i, lo, hi, where);
			lo = 0; /* the next page: from its first entry */
			LockBuffer(dbuf, BUFFER_LOCK_SHARE);
			if (!page_current(c->scan, dbuf, SIMHASH_DIR, run->gen, c->t) || so->stop)
				more = false;
			i++;
		}
		i = 0;
		UnlockReleaseBuffer(dbuf);
	}
}

/* Every prefix within `left` more flipped bits (positions >= from) of flip. */
static void
probe_variants(ProbeCtx *c, int from, int left, uint64 flip)
{
	SimhashScanOpaque so = (SimhashScanOpaque) c->scan->opaque;
	uint64			  lo = (c->qkey ^ flip) & c->tab->prefix_key_mask;
	int64			  v = c->v++;
	int				  b;

	if (so->stop)
		return;
	c->cur_v = v;
	CHECK_FOR_INTERRUPTS();
	for (c->r = 0; c->r < so_nruns(c->scan); c->r++)
	{
		/* a stream's next batch: skip the ranges before pos (not read) */
		if (c->resuming)
		{
			if (v < so->pos.v || c->r < so->pos.r)
				continue;
			c->resuming = false;
			c->after = true;
		}
		range_scan(c, lo, lo | ~c->tab->prefix_key_mask);
		c->after = false;
		if (so->stop)
			return;
	}
	if (left == 0)
		return;
	for (b = from; b < c->tab->prefix_bits && !so->stop; b++)
		probe_variants(c, b + 1, left - 1, flip | (UINT64CONST(1) << (63 - b)));
}

/*
 * Run c->r's keys whose prefix is exactly `left` bits away from the query's
 * in its bits from b on, the bits before b being lo's: in increasing order of
 * prefix, so that the ranges come in page order and those sharing a run page
 * read it once (kept pinned).
 */
static void
probe_exact_sorted(ProbeCtx *c, int b, int left, uint64 lo)
{
	uint64 bit;

	if (left == 0)
	{
		/* the remaining bits are the query's */
		lo |= c->qkey & c->tab->prefix_key_mask & (PG_UINT64_MAX >> b);
		CHECK_FOR_INTERRUPTS();
		range_scan(c, lo, lo | ~c->tab->prefix_key_mask);
		return;
	}
	if (left > c->tab->prefix_bits - b)
		return;
	bit = UINT64CONST(1) << (63 - b);
	/* the prefixes with a 0 at bit b first */
	if (c->qkey & bit)
	{
		probe_exact_sorted(c, b + 1, left - 1, lo);
		probe_exact_sorted(c, b + 1, left, lo | bit);
	}
	else
	{
		probe_exact_sorted(c, b + 1, left, lo);
		probe_exact_sorted(c, b + 1, left - 1, lo | bit);
	}
}

/*
 * Table t's matches within radius in every run: every key whose prefix
 * differs from the query's in at most `flips` bits (0 when radius <= bits),
 * or with `exact`, in exactly `flips` bits (see owned_at).
 */
static void
probe_table(IndexScanDesc scan, int t, uint64 q, int radius, int flips, bool exact,
			SimhashVisit visit, void *arg)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;
	ProbeCtx		  c;

	if (so->meta.list.nruns == 0)
		return;
	c.scan = scan;
	c.tab = &so->tables[t];
	c.t = t;
	c.r = 0;
	c.q = q;
	c.qkey = sh_table_permute(c.tab, q);
	c.radius = radius;
	c.flips = flips;
	c.exact = exact;
	c.visit = visit;
	c.arg = arg;
	c.buf = InvalidBuffer;
	c.blkno = InvalidBlockNumber;
	c.dir_hint = 0;
	c.v = c.cur_v = 0;
	c.resuming = !exact && so->resume && so->pos.t == t;
	c.after = false;
	if (exact)
	{
		for (c.r = 0; c.r < so->meta.list.nruns; c.r++)
		{
			c.dir_hint = 0;
			probe_exact_sorted(&c, 0, flips, 0);
		}
	}
	else
		probe_variants(&c, 0, flips, 0);
	if (BufferIsValid(c.buf))
		ReleaseBuffer(c.buf);
}

/*
 * The entries of a chain (pending, sealed or NULLs) from page pos->next on;
 * with radius >= 0, only those within radius of q (the caller's visitor drops
 * the others: the test here spares the call and the TID copy for each entry
 * the query does not want, which is nearly every one of an unsorted chain).
 * With limit >= 0, it stops after the page on which the hits reach limit,
 * pos then naming the next page: a chain's pages are read whole.
 */
static void
scan_chain_from(IndexScanDesc scan, SimhashChainPos *pos, uint32 chain, uint64 q, int radius,
				SimhashVisit visit, void *arg, int64 limit)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;
	BlockNumber		  nblocks = 0;

	while (BlockNumberIsValid(pos->next))
	{
		BlockNumber blkno = pos->next;
		Buffer		buf;
		Page		page;
		int			n, i;

		simhash_check_link(scan->indexRelation, pos->prev, blkno, 0, &nblocks);
		buf = ReadBuffer(scan->indexRelation, blkno);

		CHECK_FOR_INTERRUPTS();
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buf);
		/* NULLs pages (chain 0) are compacted in place, never recycled */
		if (chain != 0 && !page_current(scan, buf, SIMHASH_PENDING, chain, -1))
		{
			UnlockReleaseBuffer(buf);
			pos->next = InvalidBlockNumber;
			break;
		}
		check_chain_page(scan->indexRelation, buf, chain, ++pos->steps, nblocks);
		n = page_nentries(scan->indexRelation, buf, SIMHASH_ENTRY_SIZE);
		for (i = 0; i < n; i++)
		{
			const char	   *ent = SimhashPageEntry(page, i);
			uint64			fp = simhash_entry_key(ent);
			ItemPointerData tid;

			if (radius >= 0 && simhash_hamming(fp, q) > radius)
				continue;
			simhash_entry_tid(ent, &tid);
			visit(so, fp, &tid, arg);
		}
		pos->prev = blkno;
		pos->next = SimhashPageGetOpaque(page)->next;
		UnlockReleaseBuffer(buf);
		if (limit >= 0 && so->nhits >= limit)
			break;
	}
}

/* Every entry of a chain starting at blkno (see scan_chain_from). */
static void
scan_chain(IndexScanDesc scan, BlockNumber blkno, uint32 chain, uint64 q, int radius,
		   SimhashVisit visit, void *arg)
{
	SimhashChainPos pos = {blkno, SIMHASH_METAPAGE_BLKNO, 0};

	scan_chain_from(scan, &pos, chain, q, radius, visit, arg, -1);
}

/* Every entry of table 0 of run r, in key order. */
static void
scan_run(IndexScanDesc scan, int r, SimhashVisit visit, void *arg)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;
	const SimhashRun *run = &so->meta.list.runs[r];
	const sh_table	 *tab = &so->tables[0];
	BlockNumber		  dstart = simhash_meta_dir(&so->meta, r, 0);
	BlockNumber		  d;
	BlockNumber		  blocks[SIMHASH_DIR_CAPACITY];
	bool			  after = so->resume && so->pos.r == r;

	/* a merge's input whose table 0 the new run holds already */
	if (!BlockNumberIsValid(dstart))
		return;
	check_dir_link(scan, r, dstart);

	for (d = after ? (BlockNumber) (so->pos.p / SIMHASH_DIR_CAPACITY) : 0;
		 d < SimhashDirPages(run->npages); d++)
	{
		Buffer buf = ReadBuffer(scan->indexRelation, dstart + d);
		Page   page;
		int	   n = 0, p, i;

		LockBuffer(buf, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buf);
		if (page_current(scan, buf, SIMHASH_DIR, run->gen, 0))
			n = page_nentries(scan->indexRelation, buf, SIMHASH_DIR_ENTRY_SIZE);
		for (p = 0; p < n; p++)
			blocks[p] = simhash_dir_block(SimhashDirEntry(page, p));
		UnlockReleaseBuffer(buf);
		if (n == 0)
			return;
		for (p = after ? (int) (so->pos.p % SIMHASH_DIR_CAPACITY) : 0; p < n; p++)
		{
			int	 k;
			bool current;

			CHECK_FOR_INTERRUPTS();
			check_link(scan, dstart + d, blocks[p]);
			buf = ReadBuffer(scan->indexRelation, blocks[p]);
			LockBuffer(buf, BUFFER_LOCK_SHARE);
			page = BufferGetPage(buf);
			current = page_current(scan, buf, SIMHASH_RUN, run->gen, 0);
			k = current
					? run_page_nentries(scan->indexRelation, buf, run, d * SIMHASH_DIR_CAPACITY + p)
					: 0;
			i = 0;
			if (after)
			{
				/* the batch before stopped on this page, at (pos.key, pos.tid) */
				i = first_at_least(page, k, so->pos.key, k / 2);
				while (i < k && simhash_entry_key(SimhashPageEntry(page, i)) == so->pos.key)
				{
					ItemPointerData tid;

					simhash_entry_tid(SimhashPageEntry(page, i), &tid);
					if (ItemPointerCompare(&tid, &so->pos.tid) > 0)
						break;
					i++;
				}
				after = false;
			}
			for (; i < k; i++)
			{
				const char	   *ent = SimhashPageEntry(page, i);
				ItemPointerData tid;

				simhash_entry_tid(ent, &tid);
				visit(so, sh_table_unpermute(tab, simhash_entry_key(ent)), &tid, arg);
				if (so->streaming && so->nhits >= so->batch_cap)
				{
					SimhashScanPos pos = {0,
										  0,
										  r,
										  (int64) d * SIMHASH_DIR_CAPACITY + p,
										  simhash_entry_key(ent),
										  tid};

					so->pos = pos;
					so->stop = true;
					break;
				}
			}
			UnlockReleaseBuffer(buf);
			if (!current || so->stop)
				return;
		}
	}
}

/* Every non-NULL row once: table 0 of every run and both pending chains. */
static void
scan_all(IndexScanDesc scan, SimhashVisit visit, void *arg)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;
	int				  r;

	for (r = so->resume ? so->pos.r : 0; r < so->meta.list.nruns; r++)
	{
		scan_run(scan, r, visit, arg);
		if (so->stop)
			return;
	}
	scan_chain(scan, so->meta.sealed_head, so->meta.sealed_chain, 0, -1, visit, arg);
	scan_chain(scan, so->meta.pending_head, so->meta.pending_chain, 0, -1, visit, arg);
}

/* ---- collecting answers ------------------------------------------------- */

static void
add_hit(SimhashScanOpaque so, uint64 fp, ItemPointer tid, int dist, bool isnull)
{
	SimhashHit *h;

	if (so->nhits == so->maxhits)
	{
		so->maxhits = Max(64, so->maxhits * 2);
		if (so->hits == NULL)
			so->hits = MemoryContextAllocHuge(so->cxt, so->maxhits * sizeof(SimhashHit));
		else
			so->hits = repalloc_huge(so->hits, so->maxhits * sizeof(SimhashHit));
	}
	h = &so->hits[so->nhits++];
	h->tid = *tid;
	h->fp = fp;
	h->dist = (int16) dist;
	h->isnull = isnull;
}

/* qsort order of hits: distance, then heap TID. */
static int
hit_cmp(const void *a, const void *b)
{
	const SimhashHit *x = a, *y = b;

	if (x->dist != y->dist)
		return x->dist < y->dist ? -1 : 1;
	return ItemPointerCompare((ItemPointer) &x->tid, (ItemPointer) &y->tid);
}

/*
 * Every table's probes (the prefixes up to `flips` bits away), then the
 * pending rows within radius of q, sealed chain first.  The visitors of both
 * callers keep no row farther than radius from q (radius scans: q and radius
 * are one of the conditions; KNN: the band ends at radius).
 */
static void
probe_all(IndexScanDesc scan, uint64 q, int radius, int flips, SimhashVisit visit)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;
	int				  t;

	for (t = so->resume ? so->pos.t : 0; t < so->ntables; t++)
	{
		CHECK_FOR_INTERRUPTS();
		probe_table(scan, t, q, radius, flips, false, visit, NULL);
		if (so->stop)
			return;
	}
	/* the pending rows, at most twice pending_pages pages: in one batch */
	scan_chain(scan, so->meta.sealed_head, so->meta.sealed_chain, q, radius, visit, NULL);
	scan_chain(scan, so->meta.pending_head, so->meta.pending_chain, q, radius, visit, NULL);
}

/* ---- KNN's exact steps: one table's prefixes at one level, page by page -- */

/*
 * The first entry from e on (of the n on a run page) whose key is > hi
 * (*done set) or within radius of qkey; n if none.  The loop every entry of
 * a KNN step goes through: popcount inline, not through pg_popcount64's
 * function pointer.  On x86-64 it is compiled twice, with the POPCNT
 * instruction (chosen once when the CPU has it) and without (a bit-parallel
 * count).
 */
static pg_attribute_always_inline int
next_candidate_body(Page page, int e, int n, uint64 hi, uint64 qkey, int radius, bool *done,
					bool hw)
{
	for (; e < n; e++)
	{
		uint64 key = simhash_entry_key(SimhashPageEntry(page, e));
		uint64 x = key ^ qkey;
		int	   d;

		if (key > hi)
		{
			*done = true;
			return e;
		}
#if defined(__GNUC__) || defined(__clang__)
		if (hw)
			d = __builtin_popcountll(x);
		else
#endif
			d = simhash_popcount_swar(x);
		if (d <= radius)
			return e;
	}
	return n;
}

#ifdef SIMHASH_POPCNT_DISPATCH
bool
simhash_cpu_has_popcnt(void)
{
	static int has_popcnt = -1;

	if (has_popcnt < 0)
	{
		__builtin_cpu_init();
		has_popcnt = __builtin_cpu_supports("popcnt") ? 1 : 0;
	}
	return has_popcnt;
}

static int
next_candidate_swar(Page page, int e, int n, uint64 hi, uint64 qkey, int radius, bool *done)
{
	return next_candidate_body(page, e, n, hi, qkey, radius, done, false);
}

__attribute__((target("popcnt"))) static int
next_candidate_popcnt(Page page, int e, int n, uint64 hi, uint64 qkey, int radius, bool *done)
{
	return next_candidate_body(page, e, n, hi, qkey, radius, done, true);
}

static int
next_candidate(Page page, int e, int n, uint64 hi, uint64 qkey, int radius, bool *done)
{
	return simhash_cpu_has_popcnt() ? next_candidate_popcnt(page, e, n, hi, qkey, radius, done)
									: next_candidate_swar(page, e, n, hi, qkey, radius, done);
}
#else
static inline int
next_candidate(Page page, int e, int n, uint64 hi, uint64 qkey, int radius, bool *done)
{
#if defined(__GNUC__) || defined(__clang__)
	/* POPCNT allowed by the compiler's flags, or not x86 (a native count) */
	return next_candidate_body(page, e, n, hi, qkey, radius, done, true);
#else
	return next_candidate_body(page, e, n, hi, qkey, radius, done, false);
#endif
}
#endif

/* At most this many prefixes of a step are listed (else: probe_exact_sorted). */
#define KNN_MAX_PREFIXES 65536

/*
 * The prefixes (key bits above the table's prefix mask) exactly `left` bits
 * away from qkey's in bits b on, the bits before b being lo's, appended to
 * out[] in increasing order (the order of probe_exact_sorted).
 */
static void
list_exact_prefixes(const sh_table *tab, uint64 qkey, int b, int left, uint64 lo, uint64 *out,
					int *n)
{
	uint64 bit;

	if (left == 0)
	{
		out[(*n)++] = lo | (qkey & tab->prefix_key_mask & (PG_UINT64_MAX >> b));
		return;
	}
	if (left > tab->prefix_bits - b)
		return;
	bit = UINT64CONST(1) << (63 - b);
	if (qkey & bit)
	{
		list_exact_prefixes(tab, qkey, b + 1, left - 1, lo, out, n);
		list_exact_prefixes(tab, qkey, b + 1, left, lo | bit, out, n);
	}
	else
	{
		list_exact_prefixes(tab, qkey, b + 1, left, lo, out, n);
		list_exact_prefixes(tab, qkey, b + 1, left - 1, lo | bit, out, n);
	}
}

/*
 * Run pages a KNN step pins ahead of the one it reads (see knn_probe_run).
 * With the page it reads and the heap page the executor holds, at most 8
 * pins: a backend tracks its first 8 pins in an array and any more in a hash
 * table, whose lookups cost every pin and unpin a hash probe.
 */
#define KNN_AHEAD 6
/* Ranges ahead whose page is prefetched through its remembered buffer. */
#define KNN_HINT_AHEAD 16

/* Where range lo is expected on run page p of a cached directory, in [0, 1]. */
static inline double
dir_where(const SimhashDirCache *cache, int p, uint64 lo)
{
	uint64 below = p > 0 ? cache->hikeys[p - 1] : 0;

	if (lo > below && cache->hikeys[p] > below)
		return Min((double) (lo - below) / (double) (cache->hikeys[p] - below), 1.0);
	return 0;
}

/*
 * Run page p of a cached directory, pinned: through the buffer it was last
 * found in when the directory is the backend's (ReadRecentBuffer: no lookup
 * in the buffer mapping table, which cost a quarter of a KNN query), else by
 * ReadBuffer, remembering the buffer.  The page is checked by the caller as
 * any other (page_current), whichever way it came.
 */
static Buffer
read_listed_page(Relation index, SimhashDirCache *cache, int p)
{
	Buffer buf;

	if (cache->recent == NULL)
		return ReadBuffer(index, cache->blocks[p]);
	buf = cache->recent[p];
	if (BufferIsValid(buf) &&
		ReadRecentBuffer(SimhashRelationFile(index), MAIN_FORKNUM, cache->blocks[p], buf))
		return buf;
	buf = ReadBuffer(index, cache->blocks[p]);
	cache->recent[p] = buf;
	return buf;
}

/*
 * Prefetch into the CPU cache, with no pin, what reading run page p will
 * touch first: its buffer's descriptor (the pin's), header, trailer and the
 * cache lines where `where` expects the range, when the directory remembers
 * the shared buffer it was last found in.  A buffer that since holds another
 * page costs a wasted prefetch, nothing else: the page is pinned and checked
 * when read.
 */
static inline void
prefetch_listed_page(const SimhashDirCache *cache, int p, double where, int lines)
{
	Buffer buf;
	Page   page;
	char  *guess;

	if (cache->recent == NULL || cache->recent[p] <= 0) /* none, or a local buffer */
		return;
	buf = cache->recent[p];
	__builtin_prefetch(GetBufferDescriptor(buf - 1));
	page = BufferGetPage(buf);
	__builtin_prefetch(page);
	__builtin_prefetch((char *) SimhashPageGetOpaque(page));
	guess = (char *) PageGetContents(page) +
			(Size) (where * (SIMHASH_PAGE_CAPACITY - 1)) * SIMHASH_ENTRY_SIZE;
	for (int l = 0; l < lines; l++)
		__builtin_prefetch(guess + (Size) l * 64);
}

/*
 * One run's ranges [los[i], his[i]], disjoint and in increasing order,
 * through its cached directory: the run page of each range is found in
 * memory first; then the pages are read in order, each locked once for all
 * the ranges on it, and the next KNN_AHEAD of them pinned ahead with their
 * header, trailer and expected entries prefetched into the CPU cache (a step
 * reads a few hundred pages scattered over the run, and each first touch
 * would otherwise wait for memory).  The entries of a range are filtered by
 * distance in a tight loop; the rare entries within c->radius are then
 * checked for their owner (owned_at) and visited.  Returns false when the
 * directory is not cached (the caller probes range by range).
 */
static bool
knn_probe_run(ProbeCtx *c, const uint64 *los, const uint64 *his, int nlos)
{
	SimhashScanOpaque so = (SimhashScanOpaque) c->scan->opaque;
	Relation		  index = c->scan->indexRelation;
	const SimhashRun *run = &so->meta.list.runs[c->r];
	SimhashDirCache	 *cache;
	uint64			  qkey = c->qkey;
	int				  radius = c->radius;
	Buffer			  buf = InvalidBuffer;
	Page			  page = NULL;
	int				  bpage = -1, n = 0, a = 0;
	int				 *first;
	Buffer			  ahead[KNN_AHEAD];
	int				  ahead_p[KNN_AHEAD];
	int				  ahead_h = 0, ahead_n = 0, next_i = 0, last_pinned = -1;
	bool			  stale = false;
	int				  prefetch_lines;

	/* the cache lines a range is expected to span (its rows per prefix), 2 to 8 */
	prefetch_lines =
		c->tab->prefix_bits >= 63
			? 2
			: (int) Min(Max((run->count >> c->tab->prefix_bits) * SIMHASH_ENTRY_SIZE / 64 + 1, 2),
						8);
	cache = dir_cache_get(c);
	/*
	 * A directory is cached at its second probe: KNN's steps probe each
	 * (run, table) at every level, so it is cached at the first.
	 */
	if (cache == NULL && !so->stale)
		cache = dir_cache_get(c);
	if (cache == NULL)
		return false;
	/* the first run page whose hikey is >= lo, for each range in turn */
	first = palloc(sizeof(int) * Max(nlos, 1));
	for (int i = 0; i < nlos; i++)
	{
		a = dir_first_from(cache, a, los[i]);
		first[i] = a;
	}
	for (int i = 0; i < nlos && first[i] < cache->n && !stale; i++)
	{
		uint64 lo = los[i], hi = his[i];

		/* prefetch further ahead through the remembered buffers */
		if (i + KNN_HINT_AHEAD < nlos && first[i + KNN_HINT_AHEAD] < cache->n)
			prefetch_listed_page(cache, first[i + KNN_HINT_AHEAD],
								 dir_where(cache, first[i + KNN_HINT_AHEAD],
										   los[i + KNN_HINT_AHEAD]),
								 prefetch_lines);
		/* pin the next pages ahead, and prefetch what will be read first */
		if (next_i <= i)
			next_i = i + 1;
		while (ahead_n < KNN_AHEAD && next_i < nlos && first[next_i] < cache->n)
		{
			int	  p = first[next_i];
			Page  pp;
			int	  k;
			char *guess;

			if (p == last_pinned || p == bpage)
			{
				next_i++;
				continue;
			}
			k = (ahead_h + ahead_n) % KNN_AHEAD;
			ahead[k] = read_listed_page(index, cache, p);
			ahead_p[k] = p;
			ahead_n++;
			last_pinned = p;
			pp = BufferGetPage(ahead[k]);
			guess = (char *) PageGetContents(pp) +
					(Size) (dir_where(cache, p, los[next_i]) * (SIMHASH_PAGE_CAPACITY - 1)) *
						SIMHASH_ENTRY_SIZE;
			__builtin_prefetch(pp);
			__builtin_prefetch((char *) SimhashPageGetOpaque(pp));
			for (int l = 0; l < prefetch_lines; l++)
				__builtin_prefetch(guess + (Size) l * 64);
			next_i++;
		}
		for (int p = first[i]; p < cache->n; p++)
		{
			int	 e;
			bool done = false;

			if (p != bpage)
			{
				if (BufferIsValid(buf))
					UnlockReleaseBuffer(buf);
				CHECK_FOR_INTERRUPTS();
				/* a page pinned ahead: the ring holds increasing pages */
				while (ahead_n > 0 && ahead_p[ahead_h] < p)
				{
					ReleaseBuffer(ahead[ahead_h]);
					ahead_h = (ahead_h + 1) % KNN_AHEAD;
					ahead_n--;
				}
				if (ahead_n > 0 && ahead_p[ahead_h] == p)
				{
					buf = ahead[ahead_h];
					ahead_h = (ahead_h + 1) % KNN_AHEAD;
					ahead_n--;
				}
				else
					buf = read_listed_page(index, cache, p);
				LockBuffer(buf, BUFFER_LOCK_SHARE);
				bpage = p;
				if (!page_current(c->scan, buf, SIMHASH_RUN, run->gen, c->t))
				{
					stale = true; /* so->stale: the scan starts over */
					break;
				}
				page = BufferGetPage(buf);
				n = run_page_nentries(index, buf, run, p);
			}
			e = p == first[i]
					? first_at_least(page, n, lo, Min((int) (dir_where(cache, p, lo) * n), n))
					: 0;
			for (;;)
			{
				const char *ent;
				uint64		fp;

				e = next_candidate(page, e, n, hi, qkey, radius, &done);
				if (e >= n || done)
					break;
				ent = SimhashPageEntry(page, e);
				fp = sh_table_unpermute(c->tab, simhash_entry_key(ent));
				if (owned_at(so, c->t, fp ^ c->q, c->flips))
				{
					ItemPointerData tid;

					simhash_entry_tid(ent, &tid);
					c->visit(so, fp, &tid, c->arg);
				}
				e++;
			}
			/* the page's hikey: its last key when written, an upper bound */
			if (done || SimhashPageGetOpaque(page)->hikey > hi)
				break;
		}
	}
	if (BufferIsValid(buf))
		UnlockReleaseBuffer(buf);
	while (ahead_n > 0)
	{
		ReleaseBuffer(ahead[ahead_h]);
		ahead_h = (ahead_h + 1) % KNN_AHEAD;
		ahead_n--;
	}
	pfree(first);
	return true;
}

/*
 * KNN's step of table t at level `flips` (see simhash_probe_table_exact):
 * the prefixes listed once, then each run read page by page.  Returns false
 * (nothing visited) when the level has too many prefixes to list; a run
 * whose directory is not cached is probed range by range.
 */
static bool
knn_probe_table(IndexScanDesc scan, int t, uint64 q, int radius, int flips, SimhashVisit visit)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;
	const sh_table	 *tab = &so->tables[t];
	ProbeCtx		  c;
	uint64			 *los, *his, *prefixes;
	int				  nprefixes = 0, nlos = 0;
	uint64			  own0, rest;

	if (flips > tab->prefix_bits || sh_binomial(tab->prefix_bits, flips) > KNN_MAX_PREFIXES)
		return false;
	if (so->meta.list.nruns == 0)
		return true;
	memset(&c, 0, sizeof(c));
	c.scan = scan;
	c.tab = tab;
	c.t = t;
	c.q = q;
	c.qkey = sh_table_permute(tab, q);
	c.radius = radius;
	c.flips = flips;
	c.exact = true;
	c.visit = visit;
	c.buf = InvalidBuffer;
	c.blkno = InvalidBlockNumber;
	prefixes = palloc(sizeof(uint64) * Max(sh_binomial(tab->prefix_bits, flips), 1));
	list_exact_prefixes(tab, c.qkey, 0, flips, 0, prefixes, &nprefixes);
	/*
	 * Rows whose table-0 prefix equals the query's belong to table 0 at every
	 * level (owned_at).  When that prefix follows table t's in its key, they
	 * are one sub-range of each range, skipped: a band of thousands of equal
	 * fingerprints is then read in table 0 only.
	 */
	own0 = t > 0 ? sh_table_permute(tab, so->tables[0].prefix_orig_mask) : 0;
	rest = ~(tab->prefix_key_mask | own0);
	if ((own0 & tab->prefix_key_mask) != 0 || own0 == 0 || (rest & (rest + 1)) != 0 ||
		((tab->prefix_key_mask | own0) & rest) != 0)
		own0 = 0; /* not right after the prefix: nothing skipped */
	los = palloc(sizeof(uint64) * 2 * Max(nprefixes, 1));
	his = palloc(sizeof(uint64) * 2 * Max(nprefixes, 1));
	for (int i = 0; i < nprefixes; i++)
	{
		uint64 lo = prefixes[i], hi = lo | ~tab->prefix_key_mask;

		if (own0 != 0)
		{
			uint64 skip_lo = lo | (c.qkey & own0), skip_hi = skip_lo | rest;

			if (skip_lo > lo)
			{
				los[nlos] = lo;
				his[nlos++] = skip_lo - 1;
			}
			if (skip_hi < hi)
			{
				los[nlos] = skip_hi + 1;
				his[nlos++] = hi;
			}
			continue;
		}
		los[nlos] = lo;
		his[nlos++] = hi;
	}
	for (c.r = 0; c.r < so->meta.list.nruns && !so->stale; c.r++)
	{
		BlockNumber dstart = simhash_meta_dir(&so->meta, c.r, t);

		/* a run that does not hold this table (a merge is switching tables over) */
		if (!BlockNumberIsValid(dstart))
			continue;
		check_dir_link(scan, c.r, dstart);
		c.dir_hint = 0;
		if (!knn_probe_run(&c, los, his, nlos))
		{
			for (int i = 0; i < nlos && !so->stale; i++)
			{
				CHECK_FOR_INTERRUPTS();
				range_scan(&c, los[i], his[i]);
			}
		}
	}
	if (BufferIsValid(c.buf))
		ReleaseBuffer(c.buf);
	pfree(prefixes);
	pfree(los);
	pfree(his);
	return true;
}

/* The primitives knn.c builds on (scan_int.h). */
void
simhash_probe_all(IndexScanDesc scan, uint64 q, int radius, int flips, SimhashVisit visit)
{
	probe_all(scan, q, radius, flips, visit);
}

/*
 * A step of KNN's levels: the rows of table t's runs within radius whose
 * fewest flipped prefix bits over the tables is exactly `flips`, table t
 * being the first with that few (see owned_at: each row is met at one step).
 */
void
simhash_probe_table_exact(IndexScanDesc scan, int t, uint64 q, int radius, int flips,
						  SimhashVisit visit)
{
	CHECK_FOR_INTERRUPTS();
	if (!knn_probe_table(scan, t, q, radius, flips, visit))
		probe_table(scan, t, q, radius, flips, true, visit, NULL);
}

/* Every pending row, sealed chain first. */
void
simhash_scan_pending(IndexScanDesc scan, SimhashVisit visit)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;

	scan_chain(scan, so->meta.sealed_head, so->meta.sealed_chain, 0, -1, visit, NULL);
	scan_chain(scan, so->meta.pending_head, so->meta.pending_chain, 0, -1, visit, NULL);
}

/* Every row of the index (one table of the runs, and the pending rows). */
void
simhash_scan_all(IndexScanDesc scan, SimhashVisit visit)
{
	scan_all(scan, visit, NULL);
}

/* A hit for knn.c, which shares the scan's hit array. */
void
simhash_add_hit(SimhashScanOpaque so, uint64 fp, ItemPointer tid, int dist, bool isnull)
{
	add_hit(so, fp, tid, dist, isnull);
}

/* The hits in the order hit_cmp gives (distance, then TID). */
void
simhash_sort_hits(SimhashScanOpaque so)
{
	qsort(so->hits, so->nhits, sizeof(SimhashHit), hit_cmp);
}

/* The wrappers scan.c needs besides those above. */
void
simhash_corrupt_block(Relation index, BlockNumber blkno, const char *detail)
{
	corrupt_block(index, blkno, detail);
}

void
simhash_check_stale(IndexScanDesc scan)
{
	check_stale(scan);
}

void
simhash_dir_cache_reset(SimhashScanOpaque so)
{
	dir_cache_reset(so);
}

/*
 * The next batch of the NULLs chain: its pages from so->nulls_pos on, until
 * the hits reach limit.  NULLs pages are never recycled nor unlinked (VACUUM
 * compacts them in place), so the next batch starts at a page boundary.
 */
void
simhash_scan_nulls(IndexScanDesc scan, SimhashVisit visit, int64 limit)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;

	scan_chain_from(scan, &so->nulls_pos, 0, 0, -1, visit, NULL, limit);
}
