/*
 * sweep.c — the sweep: every row of a run read once, from table 0's run
 * pages in key order, for the linear passes of radius scans, full scans and
 * KNN (simhash_scan_all, below).
 *
 * A sweep costs what reading the packed keys costs: no key is un-permuted
 * (the query is permuted instead, the distance being the same) and no entry
 * is handed to a visitor unless its distance lies in the band the caller
 * still wants.  Each page's keys go through one tight loop (popcount.h)
 * that lists the entries within the band; only those are un-permuted and
 * visited.  The pages are read in the directory's order, through the buffer
 * each was last found in when the backend keeps the directory
 * (ReadRecentBuffer, as KNN's steps), the next page's buffer prefetched into
 * the CPU cache while this one is filtered.
 *
 * When the backend keeps the keys of a run's pages (dirstore.c,
 * simhash.sweep_cache_size), the sweep filters those instead, from one
 * packed array, and reads only the pages that hold a key in the band: at
 * large radii and for KNN's later passes, hardly any.
 */
#include "simhash_am.h"
#include "page.h"
#include "scan_int.h"
#include "probe.h"
#include "probe_int.h"
#include "popcount.h"
#include "dirstore.h"

#include "miscadmin.h"
#include "storage/buf_internals.h"

/*
 * The keys e (of the n stored `stride` bytes apart from `base`) that lie
 * within [lo, lo + span] bits of qkey, listed in out[] in order; returns how
 * many.  No branch on the distance: the position is written, and kept by
 * advancing the count.
 */
static pg_attribute_always_inline int
filter_keys_at(const char *base, Size stride, int n, uint64 qkey, int lo, int span, uint16 *out,
			   bool hw)
{
	int k = 0;

	for (int e = 0; e < n; e++)
	{
		uint64 key;

		memcpy(&key, base + (Size) e * stride, sizeof(key));
		out[k] = (uint16) e;
		k += (unsigned) (simhash_popcount_as(key ^ qkey, hw) - lo) <= (unsigned) span;
	}
	return k;
}

/* ... over a run page's entries (key, then TID) */
static pg_attribute_always_inline int
sweep_filter_body(const char *ents, int n, uint64 qkey, int lo, int span, uint16 *out, bool hw)
{
	return filter_keys_at(ents, SIMHASH_ENTRY_SIZE, n, qkey, lo, span, out, hw);
}

SIMHASH_POPCOUNT_LOOP(int, sweep_filter,
					  (const char *ents, int n, uint64 qkey, int lo, int span, uint16 *out),
					  (ents, n, qkey, lo, span, out))

/*
 * ... over packed keys (a run's keys the backend keeps).  At large radii
 * most chunks hold no key in the band: keys_any() says so first, without
 * stores or a carried count.
 */
static pg_attribute_always_inline int
sweep_filter_keys_body(const uint64 *keys, int n, uint64 qkey, int lo, int span, uint16 *out,
					   bool hw)
{
	return filter_keys_at((const char *) keys, sizeof(uint64), n, qkey, lo, span, out, hw);
}

/* Is any of the n keys within [lo, lo + span] bits of qkey?  Four independent ORs a step. */
static pg_attribute_always_inline bool
keys_any_scalar_body(const uint64 *keys, int n, uint64 qkey, int lo, int span, bool hw)
{
	unsigned any0 = 0, any1 = 0, any2 = 0, any3 = 0;
	int		 e = 0;

	for (; e + 4 <= n; e += 4)
	{
		any0 |= (unsigned) (simhash_popcount_as(keys[e] ^ qkey, hw) - lo) <= (unsigned) span;
		any1 |= (unsigned) (simhash_popcount_as(keys[e + 1] ^ qkey, hw) - lo) <= (unsigned) span;
		any2 |= (unsigned) (simhash_popcount_as(keys[e + 2] ^ qkey, hw) - lo) <= (unsigned) span;
		any3 |= (unsigned) (simhash_popcount_as(keys[e + 3] ^ qkey, hw) - lo) <= (unsigned) span;
	}
	for (; e < n; e++)
		any0 |= (unsigned) (simhash_popcount_as(keys[e] ^ qkey, hw) - lo) <= (unsigned) span;
	return (any0 | any1 | any2 | any3) != 0;
}

SIMHASH_POPCOUNT_LOOP(bool, keys_any_scalar,
					  (const uint64 *keys, int n, uint64 qkey, int lo, int span),
					  (keys, n, qkey, lo, span))

#ifdef SIMHASH_AVX2_DISPATCH

/*
 * keys_any() with AVX2, where the CPU has it: four keys a vector, each
 * byte's bits counted by a nibble table and summed per key (vpsadbw).  From
 * distance 0 (radius scans, KNN's first pass) the least count is kept (one
 * vpminuw for four keys) and compared once at the end; else each count is
 * compared with both ends of the band.
 */
__attribute__((target("avx2"))) static bool
keys_any_avx2(const uint64 *keys, int n, uint64 qkey, int lo, int span)
{
	const __m256i q = _mm256_set1_epi64x((long long) qkey);
	int			  e = 0;

	if (lo == 0)
	{
		__m256i least0 = _mm256_set1_epi16(64), least1 = least0;

		for (; e + 8 <= n; e += 8)
		{
			least0 = _mm256_min_epu16(least0, simhash_popcount4_avx2(keys + e, q));
			least1 = _mm256_min_epu16(least1, simhash_popcount4_avx2(keys + e + 4, q));
		}
		if (e + 4 <= n)
		{
			least0 = _mm256_min_epu16(least0, simhash_popcount4_avx2(keys + e, q));
			e += 4;
		}
		/* the lanes' counts are in their low 16 bits, the rest zero */
		if (!_mm256_testz_si256(_mm256_cmpgt_epi64(_mm256_set1_epi64x((int64) span + 1),
												   _mm256_min_epu16(least0, least1)),
								_mm256_set1_epi64x(-1)))
			return true;
	}
	else
	{
		const __m256i below = _mm256_set1_epi64x(lo - 1);				 /* count > lo - 1 */
		const __m256i above = _mm256_set1_epi64x((int64) lo + span + 1); /* count < lo + span + 1 */
		__m256i		  hit = _mm256_setzero_si256();

		for (; e + 4 <= n; e += 4)
		{
			__m256i pop = simhash_popcount4_avx2(keys + e, q);

			hit = _mm256_or_si256(hit, _mm256_and_si256(_mm256_cmpgt_epi64(pop, below),
														_mm256_cmpgt_epi64(above, pop)));
		}
		if (!_mm256_testz_si256(hit, hit))
			return true;
	}
	return e < n && keys_any_scalar(keys + e, n - e, qkey, lo, span);
}

static bool
keys_any(const uint64 *keys, int n, uint64 qkey, int lo, int span)
{
	return simhash_cpu_has_avx2() ? keys_any_avx2(keys, n, qkey, lo, span)
								  : keys_any_scalar(keys, n, qkey, lo, span);
}

#else
#define keys_any keys_any_scalar
#endif

/*
 * A reach lowered while the keys counted below it still number `want`:
 * *upto counts those up to *reach (count_keys' d and upto, d1 and upto1).
 * True when it moved.
 */
static pg_attribute_always_inline bool
lower_reach(const int64 *count, int64 *upto, int *reach, int64 want)
{
	int was = *reach;

	while (*reach > 0 && *upto - count[*reach] >= want)
		*upto -= count[(*reach)--];
	return *reach != was;
}

/* One key at distance d: counted (count_keys); its least kept in *least. */
static pg_attribute_always_inline void
count_key(SimhashKeyCount *kc, int d, int lo, int *least)
{
	*least = d >= lo && d < *least ? d : *least;
	if (d <= kc->after || d > kc->d)
		return;
	kc->count[d]++;
	kc->upto++;
	if (d <= kc->d1)
	{
		kc->upto1++;
		lower_reach(kc->count, &kc->upto1, &kc->d1, kc->batch);
	}
	lower_reach(kc->count, &kc->upto, &kc->d, kc->want);
}

/*
 * Count the n keys at distances in (kc->after, kc->d] from qkey, lowering
 * kc->d while the keys below it reach kc->want, and kc->d1 while those below
 * it reach kc->batch (as knn.c's visit_linear does with the rows it keeps);
 * returns the least distance of at least lo of the n keys, 65 if none.
 */
static pg_attribute_always_inline int
count_keys_scalar_body(SimhashKeyCount *kc, const uint64 *keys, int n, uint64 qkey, int lo, bool hw)
{
	int least = 65;

	for (int e = 0; e < n; e++)
		count_key(kc, simhash_popcount_as(keys[e] ^ qkey, hw), lo, &least);
	return least;
}

SIMHASH_POPCOUNT_LOOP(int, count_keys_scalar,
					  (SimhashKeyCount * kc, const uint64 *keys, int n, uint64 qkey, int lo),
					  (kc, keys, n, qkey, lo))

#ifdef SIMHASH_AVX2_DISPATCH
/* A bit for each of four counts below reach (lanes of 64 bits). */
__attribute__((target("avx2"))) static inline unsigned
lanes_below(__m256i reach, __m256i c)
{
	return (unsigned) _mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpgt_epi64(reach, c)));
}

/*
 * count_keys() with AVX2.  Only the keys below kc->d (and not below lo) go
 * through the count: a key at d itself leaves d where it is, so it is not
 * counted once d has fallen to it (the counts are then lower bounds, d and
 * d1 upper bounds: every key within them is still on a page the pass reads
 * or notes).  The least distance of the keys not below lo is kept in the
 * vectors (one vpminuw a vector): all n keys' (65 if none).  The count's
 * state is kept in locals, the bounds lowered once a step.  From distance
 * 0 (lo <= 0: KNN's first passes) sixteen keys a step, tested by their
 * least count (three vpminuw, one compare); else, and for the last keys of
 * a page, eight or four a step, each count compared with both ends.
 */
__attribute__((target("avx2"))) static int
count_keys_avx2(SimhashKeyCount *kc, const uint64 *keys, int n, uint64 qkey, int lo)
{
	const __m256i q = _mm256_set1_epi64x((long long) qkey);
	const __m256i below = _mm256_set1_epi64x(lo - 1);
	const __m256i none = _mm256_set1_epi64x(0xffff); /* above any count, in vpminuw's lanes */
	int64		 *count = kc->count;
	int64		  upto = kc->upto, upto1 = kc->upto1;
	int			  d = kc->d, d1 = kc->d1;
	__m256i		  reach = _mm256_set1_epi64x(d);
	__m256i		  least_v = none;
	__m256i		  c0, c1 = none, c2 = none, c3 = none;
	uint64		  lanes[16];
	int			  e = 0, least = 65;

	for (;;)
	{
		unsigned in = 0;
		int		 step;

		if (lo <= 0 && e + 16 <= n)
		{
			__m256i m = simhash_popcount16_least_avx2(keys + e, q, &c0, &c1, &c2, &c3), hit;

			least_v = _mm256_min_epu16(least_v, m);
			hit = _mm256_cmpgt_epi64(reach, m);
			step = 16;
			if (likely(_mm256_testz_si256(hit, hit)))
			{
				e += step;
				continue;
			}
			in = lanes_below(reach, c0) | lanes_below(reach, c1) << 4 |
				 lanes_below(reach, c2) << 8 | lanes_below(reach, c3) << 12;
		}
		else if (e + 4 <= n)
		{
			/* counts below lo: out of the least and of the count */
			step = e + 8 <= n ? 8 : 4;
			c0 = simhash_popcount4_avx2(keys + e, q);
			c0 = _mm256_or_si256(c0, _mm256_andnot_si256(_mm256_cmpgt_epi64(c0, below), none));
			least_v = _mm256_min_epu16(least_v, c0);
			in = lanes_below(reach, c0);
			if (step == 8)
			{
				c1 = simhash_popcount4_avx2(keys + e + 4, q);
				c1 = _mm256_or_si256(c1, _mm256_andnot_si256(_mm256_cmpgt_epi64(c1, below), none));
				least_v = _mm256_min_epu16(least_v, c1);
				in |= lanes_below(reach, c1) << 4;
			}
		}
		else
			break;
		if (in != 0)
		{
			/* the counts, each in its lane's low bits; those in reach counted */
			_mm256_storeu_si256((__m256i *) lanes, c0);
			_mm256_storeu_si256((__m256i *) (lanes + 4), c1);
			_mm256_storeu_si256((__m256i *) (lanes + 8), c2);
			_mm256_storeu_si256((__m256i *) (lanes + 12), c3);
			do
			{
				int x = (int) (lanes[pg_rightmost_one_pos32(in)] & 0xffff);
				int counted = x > kc->after;

				count[x] += counted;
				upto += counted;
				upto1 += counted & (x <= d1);
				in &= in - 1;
			} while (in != 0);
			lower_reach(count, &upto1, &d1, kc->batch);
			if (lower_reach(count, &upto, &d, kc->want))
				reach = _mm256_set1_epi64x(d);
		}
		e += step;
	}
	_mm256_storeu_si256((__m256i *) lanes, least_v);
	for (int i = 0; i < 4; i++)
		least = Min(least, (int) (lanes[i] & 0xffff));
	kc->upto = upto;
	kc->upto1 = upto1;
	kc->d = d;
	kc->d1 = d1;
	if (e < n)
	{
		int tail = count_keys_scalar(kc, keys + e, n - e, qkey, lo);

		least = Min(least, tail);
	}
	return least;
}

static int
count_keys(SimhashKeyCount *kc, const uint64 *keys, int n, uint64 qkey, int lo)
{
	return simhash_cpu_has_avx2() ? count_keys_avx2(kc, keys, n, qkey, lo)
								  : count_keys_scalar(kc, keys, n, qkey, lo);
}
#else
#define count_keys count_keys_scalar
#endif

SIMHASH_POPCOUNT_LOOP(int, sweep_filter_keys,
					  (const uint64 *keys, int n, uint64 qkey, int lo, int span, uint16 *out),
					  (keys, n, qkey, lo, span, out))

/* Entries filtered at a time: the bound is asked again after each chunk with hits. */
#define SWEEP_CHUNK 64

/* A sweep of one run: what the page loop needs. */
typedef struct Sweep
{
	IndexScanDesc	  scan;
	SimhashScanOpaque so;
	const SimhashRun *run;
	int				  r;
	const sh_table	 *tab;
	uint64			  qkey; /* the query, permuted as table 0 */
	int				  lo, hi;
	SimhashSweepBound bound;
	SimhashVisit	  visit;
	bool			  after;					   /* resuming after so->pos on its page */
	uint16			  hits[SIMHASH_PAGE_CAPACITY]; /* a page's kept keys at most */
} Sweep;

/* hi lowered to a bound asked once (Min() would ask a bound that wins twice). */
static inline int
sweep_lower(int hi, int bound)
{
	return Min(hi, bound);
}

/* The first entry of a page after (pos.key, pos.tid), where the batch before stopped. */
static int
first_after_pos(SimhashScanOpaque so, Page page, int n)
{
	int i = simhash_first_at_least(page, n, so->pos.key, n / 2);

	while (i < n && simhash_entry_key(SimhashPageEntry(page, i)) == so->pos.key)
	{
		ItemPointerData tid;

		simhash_entry_tid(SimhashPageEntry(page, i), &tid);
		if (ItemPointerCompare(&tid, &so->pos.tid) > 0)
			break;
		i++;
	}
	return i;
}

/*
 * Visit the entry (key, tid) of run page p; false when it fills a stream's
 * batch (so->pos names it, so->stop is set).
 */
static bool
sweep_visit(Sweep *s, int64 p, uint64 key, ItemPointer tid)
{
	SimhashScanOpaque so = s->so;

	s->visit(so, sh_table_unpermute(s->tab, key), tid, NULL);
	if (so->streaming && so->nhits >= so->batch_cap)
	{
		SimhashScanPos pos = {0, 0, s->r, p, key, *tid};

		so->pos = pos;
		so->stop = true;
		return false;
	}
	return true;
}

/*
 * Run page p (block blkno), pinned: its entries within the band visited.
 * Returns false when the scan must stop (a stream's batch is full, or the
 * page was recycled: so->stale).
 */
static bool
sweep_page(Sweep *s, Buffer buf, int64 p)
{
	SimhashScanOpaque so = s->so;
	Page			  page;
	int				  n, from = 0, k;

	n = simhash_scan_lock_run_page(s->scan, buf, s->run, 0, (BlockNumber) p);
	if (n < 0)
		return false;
	page = BufferGetPage(buf);
	if (s->after)
	{
		from = first_after_pos(so, page, n);
		s->after = false;
	}
	/* chunk by chunk, so that a falling bound (KNN's heap) filters the rest of the page */
	for (int c = from; c < n && !so->stop; c += SWEEP_CHUNK)
	{
		int m = Min(n - c, SWEEP_CHUNK);

		k = s->hi < s->lo ? 0
						  : sweep_filter(SimhashPageEntry(page, c), m, s->qkey, s->lo,
										 s->hi - s->lo, s->hits);
		for (int i = 0; i < k; i++)
		{
			const char	   *ent = SimhashPageEntry(page, c + s->hits[i]);
			ItemPointerData tid;

			simhash_entry_tid(ent, &tid);
			if (!sweep_visit(s, p, simhash_entry_key(ent), &tid))
				break;
		}
		if (k > 0 && s->bound)
			s->hi = sweep_lower(s->hi, s->bound(so));
	}
	UnlockReleaseBuffer(buf);
	return !so->stop;
}

/*
 * Visit the entries of `page` (n of them) whose key is `key`, after so->pos
 * when resuming on this page.  False when a stream's batch is full.
 */
static bool
visit_key(Sweep *s, Page page, int n, uint64 key, int guess, int64 p)
{
	SimhashScanOpaque so = s->so;
	int				  first;

	if (s->after && key < so->pos.key)
		return true;
	if (s->after && key == so->pos.key)
		first = first_after_pos(so, page, n);
	else
		first = simhash_first_with_key(page, n, key, guess);
	for (int e = first; e < n && simhash_entry_key(SimhashPageEntry(page, e)) == key; e++)
	{
		ItemPointerData tid;

		simhash_entry_tid(SimhashPageEntry(page, e), &tid);
		if (!sweep_visit(s, p, key, &tid))
			return false;
	}
	return true;
}

/*
 * Run page p, whose keys the backend keeps: the keys filtered, and the page
 * read only when one is in the band, to visit its entries with those keys
 * (some may have been removed by VACUUM since the keys were read: they are
 * not met on the page).  Returns false when the scan must stop, as
 * sweep_page.
 */
static bool
sweep_keyed_page(Sweep *s, SimhashDirCache *cache, int p)
{
	SimhashScanOpaque so = s->so;
	Relation		  index = s->scan->indexRelation;
	const uint64	 *keys = cache->keys + cache->kstart[p];
	int				  nkeys = (int) (cache->kstart[p + 1] - cache->kstart[p]);
	Buffer			  buf = InvalidBuffer;
	Page			  page = NULL;
	int				  n = 0;
	bool			  have_prev = false;
	uint64			  prev = 0;
	/* a fixed band (no bound to lower as rows come) is tested a page at a time */
	int chunk = s->bound ? SWEEP_CHUNK : SIMHASH_PAGE_CAPACITY;

	for (int c = 0; c < nkeys && !so->stop; c += chunk)
	{
		int m = Min(nkeys - c, chunk);
		int k = s->hi < s->lo || !keys_any(keys + c, m, s->qkey, s->lo, s->hi - s->lo)
					? 0
					: sweep_filter_keys(keys + c, m, s->qkey, s->lo, s->hi - s->lo, s->hits);

		if (k == 0)
			continue;
		if (!BufferIsValid(buf))
		{
			buf = simhash_dir_read_page(index, cache, p);
			n = simhash_scan_lock_run_page(s->scan, buf, s->run, 0, (BlockNumber) p);
			if (n < 0)
				return false;
			page = BufferGetPage(buf);
		}
		/* equal keys are neighbours: each key's entries visited once */
		for (int i = 0; i < k; i++)
		{
			uint64 key = keys[c + s->hits[i]];

			if (have_prev && key == prev)
				continue;
			have_prev = true;
			prev = key;
			if (!visit_key(s, page, n, key, c + s->hits[i], p))
				break;
		}
		if (s->bound)
			s->hi = sweep_lower(s->hi, s->bound(so));
	}
	s->after = false;
	if (BufferIsValid(buf))
		UnlockReleaseBuffer(buf);
	return !so->stop;
}

/* Note run page p, whose least distance is `least`, for the next passes. */
static void
note_page(SimhashScanOpaque so, int r, int p, int least)
{
	SimhashKeyNoted *a = &so->noted;

	if (a->npages == a->maxpages)
	{
		a->maxpages = Max(64, a->maxpages * 2);
		a->pages = a->pages == NULL
					   ? MemoryContextAlloc(so->cxt, sizeof(SimhashKeyPage) * a->maxpages)
					   : repalloc(a->pages, sizeof(SimhashKeyPage) * a->maxpages);
	}
	a->pages[a->npages].r = r;
	a->pages[a->npages].p = p;
	a->pages[a->npages++].least = (uint8) least;
}

/*
 * KNN's linear pass over the pages whose keys the backend keeps (the first
 * nkeyed of the run): the keys are counted first (count_keys), page by page,
 * each page noted (note_page) when its least distance lies within the
 * count's reach then; then only the noted pages whose least distance lies
 * within the sweep's bound (which the count lowered) are read.  A pass of a
 * LIMIT 10 thus reads the few pages that hold its rows instead of every
 * page met with a row nearer than those kept so far.  Returns false when
 * the scan must stop.
 */
static bool
sweep_counted(Sweep *s, SimhashDirCache *cache)
{
	SimhashScanOpaque so = s->so;
	SimhashKeyCount	 *kc = so->keycount;
	int64			  first = so->noted.npages;
	bool			  go_on = true;

	so->noted.epochs[s->r] = cache->epoch;
	for (int p = 0; p < cache->nkeyed; p++)
	{
		const uint64 *keys = cache->keys + cache->kstart[p];
		int			  nkeys = (int) (cache->kstart[p + 1] - cache->kstart[p]);
		int			  d;

		CHECK_FOR_INTERRUPTS();
		d = count_keys(kc, keys, nkeys, s->qkey, s->lo);
		if (d <= kc->d)
			note_page(so, s->r, p, d);
	}
	s->hi = sweep_lower(s->hi, s->bound(so));
	for (int64 i = first; i < so->noted.npages && go_on; i++)
		if (so->noted.pages[i].least <= s->hi)
			go_on = sweep_keyed_page(s, cache, so->noted.pages[i].p);
	return go_on;
}

/*
 * A later pass over the pages an earlier one noted (its bound within that
 * one's reach): those of this run whose least distance lies within the
 * bound (the caller sweeps every kept page of a run whose keys the backend
 * no longer keeps as they were counted).  Returns false when the scan must
 * stop.
 */
static bool
sweep_noted(Sweep *s, SimhashDirCache *cache)
{
	SimhashKeyNoted *a = &s->so->noted;

	for (int64 i = 0; i < a->npages; i++)
	{
		CHECK_FOR_INTERRUPTS();
		if (a->pages[i].r == s->r && a->pages[i].least <= s->hi &&
			!sweep_keyed_page(s, cache, a->pages[i].p))
			return false;
	}
	return true;
}

/* Kept keys tested between checks for interrupts by a fixed band's sweep. */
#define SWEEP_KEYS_STEP 65536

/*
 * Run page p, whose kept keys from h on (h: the first in the band) are
 * tested: the page read once, its entries with the keys in the band
 * visited.  Returns false when the scan must stop, as sweep_page.
 */
static bool
sweep_keyed_hits(Sweep *s, SimhashDirCache *cache, int p, uint32 h)
{
	const uint64 *keys = cache->keys;
	uint32		  first = cache->kstart[p], end = cache->kstart[p + 1];
	Buffer		  buf = simhash_dir_read_page(s->scan->indexRelation, cache, p);
	int			  n = simhash_scan_lock_run_page(s->scan, buf, s->run, 0, (BlockNumber) p);
	Page		  page;

	if (n < 0)
		return false;
	page = BufferGetPage(buf);
	for (uint32 k = h; k < end;)
	{
		uint32 next;

		/* equal keys are neighbours: each key's entries visited once */
		if (!visit_key(s, page, n, keys[k], (int) (k - first), p))
			break;
		next = k + 1;
		while (next < end && keys[next] == keys[k])
			next++;
		k = next + (uint32) simhash_keys_first(keys + next, (int) (end - next), s->qkey, s->lo,
											   s->hi - s->lo);
	}
	s->after = false;
	UnlockReleaseBuffer(buf);
	return !s->so->stop;
}

/*
 * A fixed band (no bound) over the kept keys of run pages [from, nkeyed):
 * the keys tested as one long array, and only the pages that hold a key in
 * the band read (sweep_keyed_hits), from their first such key.  Returns
 * false when the scan must stop, as sweep_page.
 */
static bool
sweep_keyed_band(Sweep *s, SimhashDirCache *cache, int from)
{
	int	   p = from;
	uint32 end = cache->kstart[cache->nkeyed];
	uint32 i = cache->kstart[from];

	if (s->hi < s->lo)
		return true;
	while (i < end)
	{
		uint32 n = Min(end - i, SWEEP_KEYS_STEP);
		uint32 h;

		CHECK_FOR_INTERRUPTS();
		h = i +
			(uint32) simhash_keys_first(cache->keys + i, (int) n, s->qkey, s->lo, s->hi - s->lo);
		if (h == i + n)
		{
			i += n;
			continue;
		}
		/* the page of key h: the pages before it hold no key in the band */
		while (cache->kstart[p + 1] <= h)
			p++;
		if (p != from)
			s->after = false; /* resuming on a page with no key left in the band */
		if (!sweep_keyed_hits(s, cache, p, h))
			return false;
		i = cache->kstart[++p];
	}
	s->after = false;
	return true;
}

/* Prefetch into the CPU cache the buffer a cached directory remembers for page p. */
static inline void
prefetch_recent(const SimhashDirCache *cache, int p)
{
	Buffer buf;

	if (cache->recent == NULL || p >= cache->n || cache->recent[p] <= 0)
		return;
	buf = cache->recent[p];
	__builtin_prefetch(GetBufferDescriptor(buf - 1));
	__builtin_prefetch(BufferGetPage(buf));
	__builtin_prefetch((char *) BufferGetPage(buf) + 64);
}

/*
 * The run's pages through its directory kept in memory: those whose keys the
 * backend keeps by them, the others read.  A sweep of table 0 from the start
 * has the backend keep its keys first, when it keeps the directory.
 */
static void
sweep_cached(Sweep *s, SimhashDirCache *cache, int from)
{
	Relation index = s->scan->indexRelation;

	if (from == 0 && cache->stored && cache->keys == NULL)
	{
		simhash_dirstore_load_keys(s->scan, s->r, cache, false);
		if (s->so->stale)
			return;
	}
	if (s->so->keycount != NULL && from == 0 && !s->after && s->bound != NULL &&
		cache->nkeyed > 0 && (!s->so->keycount->noted || s->so->noted.epochs[s->r] == cache->epoch))
	{
		if (!(s->so->keycount->noted ? sweep_noted(s, cache) : sweep_counted(s, cache)))
			return;
		from = cache->nkeyed;
	}
	else if (s->bound == NULL && from < cache->nkeyed)
	{
		if (!sweep_keyed_band(s, cache, from))
			return;
		from = cache->nkeyed;
	}
	for (int p = from; p < cache->n; p++)
	{
		CHECK_FOR_INTERRUPTS();
		if (p < cache->nkeyed)
		{
			if (!sweep_keyed_page(s, cache, p))
				return;
			continue;
		}
		prefetch_recent(cache, p + 1);
		if (!sweep_page(s, simhash_dir_read_page(index, cache, p), p))
			return;
	}
}

/* The run's pages through its directory's pages (a directory too large to keep). */
static void
sweep_dir_pages(Sweep *s, BlockNumber dstart, int64 from)
{
	Relation	index = s->scan->indexRelation;
	BlockNumber blocks[SIMHASH_DIR_CAPACITY];

	for (BlockNumber d = (BlockNumber) (from / SIMHASH_DIR_CAPACITY);
		 d < SimhashDirPages(s->run->npages); d++)
	{
		Buffer buf = ReadBuffer(index, dstart + d);
		Page   page;
		int	   n = 0;

		LockBuffer(buf, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buf);
		if (simhash_scan_page_current(s->scan, buf, SIMHASH_DIR, s->run->gen, 0))
			n = simhash_buf_nentries(index, buf, SIMHASH_DIR_ENTRY_SIZE);
		for (int p = 0; p < n; p++)
			blocks[p] = simhash_dir_block(SimhashDirEntry(page, p));
		UnlockReleaseBuffer(buf);
		if (n == 0)
			return;
		for (int p = d == from / SIMHASH_DIR_CAPACITY ? (int) (from % SIMHASH_DIR_CAPACITY) : 0;
			 p < n; p++)
		{
			CHECK_FOR_INTERRUPTS();
			simhash_scan_check_link(s->scan, dstart + d, blocks[p]);
			if (!sweep_page(s, ReadBuffer(index, blocks[p]), (int64) d * SIMHASH_DIR_CAPACITY + p))
				return;
		}
	}
}

/*
 * Every entry of run r (table 0, in key order) at a distance from q within
 * [lo, hi], hi lowered after each page to bound(so) when bound is given: the
 * visitor must drop every row outside, so that skipping them changes
 * nothing.  A stream (so->streaming) stops once its batch is full, so->pos
 * naming the last entry visited; with so->resume it starts after it.
 */
void
simhash_sweep_run(IndexScanDesc scan, int r, uint64 q, int lo, int hi, SimhashSweepBound bound,
				  SimhashVisit visit)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;
	BlockNumber		  dstart = simhash_meta_dir(&so->meta, r, 0);
	SimhashDirCache	 *cache;
	ProbeCtx		  c;
	Sweep			 *s;
	int64			  from = 0;

	/* a merge's input whose table 0 the new run holds already */
	if (!BlockNumberIsValid(dstart))
		return;
	simhash_scan_check_dir_link(scan, r, dstart);
	s = palloc(sizeof(Sweep));
	s->scan = scan;
	s->so = so;
	s->run = &so->meta.list.runs[r];
	s->r = r;
	s->tab = &so->tables[0];
	s->qkey = sh_table_permute(s->tab, q);
	s->lo = Max(lo, 0);
	s->hi = Min(hi, 64);
	s->bound = bound;
	s->visit = visit;
	s->after = so->resume && so->pos.r == r;
	if (s->after)
		from = so->pos.p;
	if (bound)
		s->hi = sweep_lower(s->hi, bound(so));
	/* the directory: the backend's copy, or the scan's (asked twice: loaded at once) */
	simhash_probe_ctx_init(&c, scan, 0, q, 64, 0, false, visit, NULL);
	c.r = r;
	cache = simhash_dir_cache_get(&c);
	if (cache == NULL && !so->stale)
		cache = simhash_dir_cache_get(&c);
	if (cache != NULL)
		sweep_cached(s, cache, (int) from);
	else if (!so->stale)
		sweep_dir_pages(s, dstart, from);
	pfree(s);
}

/*
 * Every row of the index once, the NULLs apart (table 0 of every run, by the
 * sweep, and both pending chains), at a distance from q within [lo, hi] (hi
 * lowered to bound(so) as the sweep goes, when given): the visitor must drop
 * every other row.  lo = 0 and hi = 64: every row.
 */
void
simhash_scan_all(IndexScanDesc scan, uint64 q, int lo, int hi, SimhashSweepBound bound,
				 SimhashVisit visit)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;
	int				  r;

	for (r = so->resume ? so->pos.r : 0; r < so->meta.list.nruns; r++)
	{
		simhash_sweep_run(scan, r, q, lo, hi, bound, visit);
		if (so->stop || so->stale)
			return;
	}
	/* the pending rows, at most twice pending_pages pages: a radius test, the visitor the rest */
	if (bound)
		hi = sweep_lower(hi, bound(so));
	simhash_scan_chain(scan, so->meta.sealed_head, so->meta.sealed_chain, q, hi < 64 ? hi : -1,
					   visit, NULL);
	simhash_scan_chain(scan, so->meta.pending_head, so->meta.pending_chain, q, hi < 64 ? hi : -1,
					   visit, NULL);
}
