/*
 * probe_list.c — probing a listed set of prefix ranges of one run, page by
 * page: KNN's exact steps (knn.c) and the radius probes of scans that return
 * their rows in one batch (probe.c).  The prefixes are listed in increasing
 * order, the run page of each range found in the run's cached directory, and
 * the pages read in order, each locked once for all the ranges on it, with
 * the next ones pinned and prefetched ahead.
 */
#include "simhash_am.h"
#include "scan_int.h"
#include "probe_int.h"
#include "popcount.h"
#include "dirstore.h"

#include "miscadmin.h"
#include "storage/buf_internals.h"

/*
 * The first entry from e on (of the n on a run page) whose key is > hi
 * (*done set) or within radius of qkey; n if none.  The loop every entry of
 * a KNN step goes through (popcount.h).
 */
static pg_attribute_always_inline int
next_candidate_body(Page page, int e, int n, uint64 hi, uint64 qkey, int radius, bool *done,
					bool hw)
{
	for (; e < n; e++)
	{
		uint64 key = simhash_entry_key(SimhashPageEntry(page, e));

		if (key > hi)
		{
			*done = true;
			return e;
		}
		if (simhash_popcount_as(key ^ qkey, hw) <= radius)
			return e;
	}
	return n;
}

SIMHASH_POPCOUNT_LOOP(int, next_candidate,
					  (Page page, int e, int n, uint64 hi, uint64 qkey, int radius, bool *done),
					  (page, e, n, hi, qkey, radius, done))

/*
 * The prefixes (key bits above the table's prefix mask) `left` bits away
 * from qkey's in bits b on (exactly, or with !exact at most), the bits
 * before b being lo's, appended to out[] in increasing order: the ranges
 * then come in page order.
 */
void
simhash_list_prefixes(const sh_table *tab, uint64 qkey, int b, int left, bool exact, uint64 lo,
					  uint64 *out, int *n)
{
	uint64 bit;

	if (left == 0 || (!exact && b >= tab->prefix_bits))
	{
		/* the remaining bits are the query's */
		out[(*n)++] = lo | (qkey & tab->prefix_key_mask & (PG_UINT64_MAX >> b));
		return;
	}
	if (left > tab->prefix_bits - b && exact)
		return;
	bit = UINT64CONST(1) << (63 - b);
	/* the prefixes with a 0 at bit b first */
	if (qkey & bit)
	{
		simhash_list_prefixes(tab, qkey, b + 1, left - 1, exact, lo, out, n);
		simhash_list_prefixes(tab, qkey, b + 1, left, exact, lo | bit, out, n);
	}
	else
	{
		simhash_list_prefixes(tab, qkey, b + 1, left, exact, lo, out, n);
		simhash_list_prefixes(tab, qkey, b + 1, left - 1, exact, lo | bit, out, n);
	}
}

/*
 * Run pages a listed probe pins ahead of the one it reads (see
 * simhash_probe_listed).
 * With the page it reads and the heap page the executor holds, at most 8
 * pins: a backend tracks its first 8 pins in an array and any more in a hash
 * table, whose lookups cost every pin and unpin a hash probe.
 */
#define PROBE_AHEAD 6
/* Ranges ahead whose page is prefetched through its remembered buffer. */
#define PROBE_HINT_AHEAD 16

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
 * The cache lines a range of a run is expected to span (its rows per prefix,
 * row_bytes each), within [least, most].
 */
static int
range_lines(const ProbeCtx *c, const SimhashRun *run, Size row_bytes, int least, int most)
{
	if (c->tab->prefix_bits >= 63)
		return least;
	return (int) Min(Max((run->count >> c->tab->prefix_bits) * row_bytes / 64 + 1, (uint64) least),
					 (uint64) most);
}

/*
 * The position of the first kept key >= lo (cache->kbucket's count of keys
 * when none is): its bucket's first key when lo starts the bucket, else
 * searched by halving within the bucket.
 */
static inline uint32
kept_first_at_least(const SimhashDirCache *cache, uint64 lo)
{
	uint64 b = lo >> cache->kshift;

	if ((b << cache->kshift) == lo)
		return cache->kbucket[b];
	return simhash_first_u64_at_least(cache->keys, cache->kbucket[b], cache->kbucket[b + 1], lo);
}

/*
 * The run page of kept key g: the last p with kstart[p] <= g.  Run pages are
 * about equally full, so g's share of the keys is a close guess, walked
 * from a few pages; VACUUM may have emptied some, then the pages are
 * searched by halving.
 */
static inline int
kept_page_of(const SimhashDirCache *cache, uint32 g)
{
	uint32 nkeys = cache->kstart[cache->n];
	int	   p = (int) Min((uint64) g * (uint64) cache->n / Max(nkeys, 1), (uint64) cache->n - 1);
	int	   l, r;

	for (int walk = 0; walk < 4; walk++)
	{
		if (cache->kstart[p] > g)
			p--;
		else if (cache->kstart[p + 1] <= g)
			p++;
		else
			return p;
	}
	/* kstart[l] <= g < kstart[r] */
	l = 0;
	r = cache->n;
	while (r - l > 1)
	{
		int mid = l + (r - l) / 2;

		if (cache->kstart[mid] <= g)
			l = mid;
		else
			r = mid;
	}
	return l;
}

/*
 * The entries of run page p with the kept key `key` (at kept position guess
 * when VACUUM has removed nothing before it since the keys were kept), when
 * this table owns their row: the page read and checked if it is not the one
 * held in *buf, and each entry visited.  False when the page was recycled
 * (so->stale set, *buf released).
 */
static bool
visit_kept(ProbeCtx *c, SimhashDirCache *cache, Buffer *buf, int *bpage, int *n, int p, uint64 key,
		   int guess)
{
	SimhashScanOpaque so = (SimhashScanOpaque) c->scan->opaque;
	const SimhashRun *run = &so->meta.list.runs[c->r];
	Page			  page;
	uint64			  fp = sh_table_unpermute(c->tab, key);

	if (!(c->exact ? simhash_owned_at(so, c->t, fp ^ c->q, c->flips)
				   : sh_table_first_match_split(so->tables, c->t, fp, c->q, c->level, c->split)))
		return true;
	if (*bpage != p)
	{
		if (BufferIsValid(*buf))
			UnlockReleaseBuffer(*buf);
		CHECK_FOR_INTERRUPTS();
		*buf = simhash_dir_read_page(c->scan->indexRelation, cache, p);
		*bpage = p;
		*n = simhash_scan_lock_run_page(c->scan, *buf, run, c->t, (BlockNumber) p);
		if (*n < 0)
		{
			*buf = InvalidBuffer;
			return false;
		}
	}
	page = BufferGetPage(*buf);
	for (int e = simhash_first_with_key(page, *n, key, guess);
		 e < *n && simhash_entry_key(SimhashPageEntry(page, e)) == key; e++)
	{
		ItemPointerData tid;

		simhash_entry_tid(SimhashPageEntry(page, e), &tid);
		c->visit(so, fp, &tid, c->arg);
	}
	return true;
}

/*
 * Ranges ahead whose kept keys are prefetched, and further ahead whose
 * bucket entries are (the keys' address needs them).
 */
#define KEPT_AHEAD		  16
#define KEPT_BUCKET_AHEAD 32

/*
 * simhash_probe_listed over the kept keys of every page of the run: each
 * range found in the keys' bucket index and its keys filtered in memory, and
 * a run page read only for a key within the radius, where its entries are
 * looked up (VACUUM may have removed some since the keys were kept: they
 * are not found; nothing adds entries to a run page).
 */
static pg_noinline void
probe_listed_kept(ProbeCtx *c, SimhashDirCache *cache, const uint64 *los, const uint64 *his,
				  int nlos)
{
	Buffer buf = InvalidBuffer;
	int	   bpage = -1, n = 0;
	uint32 nkeys = cache->kstart[cache->n];

	for (int i = 0; i < nlos; i++)
	{
		uint32 e, end;

		if (i + KEPT_BUCKET_AHEAD < nlos)
			__builtin_prefetch(&cache->kbucket[los[i + KEPT_BUCKET_AHEAD] >> cache->kshift]);
		if (i + KEPT_AHEAD < nlos)
		{
			uint64		  b = los[i + KEPT_AHEAD] >> cache->kshift;
			const uint64 *at = cache->keys + cache->kbucket[b];
			const uint64 *to =
				cache->keys + cache->kbucket[Min(his[i + KEPT_AHEAD] >> cache->kshift, b + 4) + 1];

			for (; at < to; at += 8)
				__builtin_prefetch(at);
		}
		if ((i & 63) == 0)
			CHECK_FOR_INTERRUPTS();
		e = kept_first_at_least(cache, los[i]);
		end = his[i] == PG_UINT64_MAX ? nkeys : kept_first_at_least(cache, his[i] + 1);
		while ((e += (uint32) simhash_keys_first(cache->keys + e, (int) (end - e), c->qkey, 0,
												 c->radius)) < end)
		{
			uint64 key = cache->keys[e];
			int	   p = kept_page_of(cache, e);
			if (!visit_kept(c, cache, &buf, &bpage, &n, p, key, (int) (e - cache->kstart[p])))
				return;
			/* its entries on page p (the next page may hold more) */
			while (e < end && e < cache->kstart[p + 1] && cache->keys[e] == key)
				e++;
		}
	}
	if (BufferIsValid(buf))
		UnlockReleaseBuffer(buf);
}

/*
 * One run's ranges [los[i], his[i]], disjoint and in increasing order,
 * through its cached directory: the run page of each range is found in
 * memory first; then the pages are read in order, each locked once for all
 * the ranges on it, and the next PROBE_AHEAD of them pinned ahead with their
 * header, trailer and expected entries prefetched into the CPU cache (a step
 * reads a few hundred pages scattered over the run, and each first touch
 * would otherwise wait for memory).  The entries of a range are filtered by
 * distance in a tight loop; the rare entries within c->radius are then
 * checked for their owner (simhash_owned_at for KNN's exact steps, else
 * sh_table_first_match_split) and visited.  A run whose keys the backend
 * keeps, every page's, with their bucket index, is probed in memory
 * (probe_listed_kept); the pages read otherwise count towards keeping them
 * (simhash_dirstore_probed).
 * Returns false when the directory is not cached (the caller probes range
 * by range).
 */
bool
simhash_probe_listed(ProbeCtx *c, const uint64 *los, const uint64 *his, int nlos)
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
	Buffer			  ahead[PROBE_AHEAD];
	int				  ahead_p[PROBE_AHEAD];
	int				  ahead_h = 0, ahead_n = 0, next_i = 0, last_pinned = -1;
	bool			  stale = false;
	int				  prefetch_lines, pages = 0;

	/* the cache lines a range's entries are expected to span, 2 to 8 */
	prefetch_lines = range_lines(c, run, SIMHASH_ENTRY_SIZE, 2, 8);
	cache = simhash_dir_cache_get(c);
	/*
	 * A directory is cached at its second probe: a listed probe reads many
	 * ranges of the run (and KNN's steps each run at every level), so it is
	 * cached at the first.
	 */
	if (cache == NULL && !so->stale)
		cache = simhash_dir_cache_get(c);
	if (cache == NULL)
		return false;
	if (cache->kbucket != NULL && cache->nkeyed == cache->n && cache->n > 0)
	{
		probe_listed_kept(c, cache, los, his, nlos);
		return true;
	}
	/* the first run page whose hikey is >= lo, for each range in turn */
	first = palloc(sizeof(int) * Max(nlos, 1));
	for (int i = 0; i < nlos; i++)
	{
		a = simhash_dir_first_from(cache, a, los[i]);
		first[i] = a;
	}
	for (int i = 0; i < nlos && first[i] < cache->n && !stale; i++)
	{
		uint64 lo = los[i], hi = his[i];

		/* prefetch further ahead through the remembered buffers */
		if (i + PROBE_HINT_AHEAD < nlos && first[i + PROBE_HINT_AHEAD] < cache->n)
			prefetch_listed_page(cache, first[i + PROBE_HINT_AHEAD],
								 dir_where(cache, first[i + PROBE_HINT_AHEAD],
										   los[i + PROBE_HINT_AHEAD]),
								 prefetch_lines);
		/* pin the next pages ahead, and prefetch what will be read first */
		if (next_i <= i)
			next_i = i + 1;
		while (ahead_n < PROBE_AHEAD && next_i < nlos && first[next_i] < cache->n)
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
			k = (ahead_h + ahead_n) % PROBE_AHEAD;
			ahead[k] = simhash_dir_read_page(index, cache, p);
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

			if (p != bpage || page == NULL) /* page: NULL before the first */
			{
				if (BufferIsValid(buf))
					UnlockReleaseBuffer(buf);
				CHECK_FOR_INTERRUPTS();
				/* a page pinned ahead: the ring holds increasing pages */
				while (ahead_n > 0 && ahead_p[ahead_h] < p)
				{
					ReleaseBuffer(ahead[ahead_h]);
					ahead_h = (ahead_h + 1) % PROBE_AHEAD;
					ahead_n--;
				}
				if (ahead_n > 0 && ahead_p[ahead_h] == p)
				{
					buf = ahead[ahead_h];
					ahead_h = (ahead_h + 1) % PROBE_AHEAD;
					ahead_n--;
				}
				else
					buf = simhash_dir_read_page(index, cache, p);
				LockBuffer(buf, BUFFER_LOCK_SHARE);
				bpage = p;
				pages++;
				if (!simhash_scan_page_current(c->scan, buf, SIMHASH_RUN, run->gen, c->t))
				{
					stale = true; /* so->stale: the scan starts over */
					break;
				}
				page = BufferGetPage(buf);
				n = simhash_run_page_nentries(index, buf, run, p);
			}
			e = p == first[i] ? simhash_first_at_least(page, n, lo,
													   Min((int) (dir_where(cache, p, lo) * n), n))
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
				if (c->exact ? simhash_owned_at(so, c->t, fp ^ c->q, c->flips)
							 : sh_table_first_match_split(so->tables, c->t, fp, c->q, c->level,
														  c->split))
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
		ahead_h = (ahead_h + 1) % PROBE_AHEAD;
		ahead_n--;
	}
	pfree(first);
	/* probes that have read as many pages as the run has: its keys kept, if they fit */
	if (!stale && !so->stale && simhash_dirstore_probed(cache, pages))
		simhash_dirstore_load_keys(c->scan, c->r, cache, true);
	return true;
}
