/*
 * knn.c — exact k-nearest-neighbour order (ORDER BY fp <~> q) by probe
 * levels, in the manner of multi-index hashing (Norouzi, Punjani and Fleet,
 * "Fast Exact Search in Hamming Space with Multi-Index Hashing", 2014).
 *
 * Level f probes the prefixes exactly f bits away from the query's, one table
 * at a time: a step.  Each row is met at one step only (probe_int.h, simhash_owned_at):
 * the first table of the level of its fewest flipped prefix bits.  Once the
 * steps up to table t of level f are probed, every row within
 * sh_table_covered_radius_partial(f, t + 1) of the query has been met (with
 * one prefix block per table, each step covers one more bit), so a step
 * returns, complete and sorted, the rows of its band: distances above the
 * previous step's covered radius, up to its own.  The rows a step meets beyond
 * its band are kept, by distance, for the step whose band holds them (the
 * carry), up to carry_radius; the pending rows are read by the first step.
 * The executor stops asking once it has its LIMIT: at the first step whose
 * covered radius reaches the k-th distance.  Should a band reach beyond
 * carry_radius, or the carry outgrow half of work_mem, the carry is dropped
 * and the later levels probe every prefix within f bits again, keeping only
 * their band.  When the next level would cost more than a linear pass
 * (cost.c), linear passes finish the order: each sweeps the index
 * (sweep.c) and keeps the `batch` nearest rows after the last one returned
 * (order: distance, then heap TID) in at most twice that memory, so memory
 * stays bounded and ties are returned in TID order as by the probe steps.  A band is held whole only while it fits in
 * band_cap rows (half of work_mem): a step whose band holds more (many rows
 * at one distance) keeps its first band_cap rows in the same bounded heap
 * and drops the carry; whole-level passes then return the rest of the band
 * band_cap rows at a time, in (distance, TID) order, each keeping the next
 * rows after the last returned.  A band or pass of more than KNN_SORT_ALL
 * rows is not sorted whole: batches of growing size are selected from it
 * (the pool), each then sorted.  A radius scan with ORDER BY (scan.c) keeps
 * its rows the same way, as one band: passes over its probes, each keeping
 * the next band_cap rows.
 */
#include "simhash_am.h"
#include "scan_int.h"
#include "probe.h"
#include "probe_int.h"
#include "knn.h"
#include "hits.h"

#include "miscadmin.h"
#include "port/pg_bitutils.h"

#define KNN_FIRST_BATCH 1000
#define KNN_SWEEP_BATCH 100 /* the first pass of a KNN scan that sweeps from the start */
/*
 * ... either, when the backend may keep the keys (cost.c's keyed share): a
 * pass then costs its visits more than its keys (it reads about a page for
 * each row of its batch, and looks the row up there), and a LIMIT 10 or
 * LIMIT 1 needs no more: 10 rows read about 25 pages at 1M rows, 32 read 46
 */
#define KNN_KEYED_BATCH 10
#define KNN_CARRY_ROWS	100

#define KNN_SORT_ALL 2048 /* a band or pass of at most this many rows is sorted whole */

/* The first linear pass's batch: `batch`, or KNN_KEYED_BATCH over kept keys. */
static int64
first_pass_batch(SimhashScanOpaque so, int64 batch)
{
	return so->model->keyed >= 0.5 ? KNN_KEYED_BATCH : batch;
}

/* ---- KNN's exact steps: one table's prefixes at one level, page by page -- */

/* At most this many prefixes of a step are listed (else: probe_exact_sorted). */
#define KNN_MAX_PREFIXES 65536

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
	simhash_probe_ctx_init(&c, scan, t, q, radius, flips, true, visit, NULL);
	prefixes = palloc(sizeof(uint64) * Max(sh_binomial(tab->prefix_bits, flips), 1));
	simhash_list_prefixes(tab, c.qkey, 0, flips, true, 0, prefixes, &nprefixes);
	/*
	 * Rows whose table-0 prefix equals the query's belong to table 0 at every
	 * level (simhash_owned_at).  When that prefix follows table t's in its key, they
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
		simhash_scan_check_dir_link(scan, c.r, dstart);
		c.dir_hint = 0;
		if (!simhash_probe_listed(&c, los, his, nlos))
		{
			for (int i = 0; i < nlos && !so->stale; i++)
			{
				CHECK_FOR_INTERRUPTS();
				simhash_range_scan(&c, los[i], his[i]);
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

/*
 * A step of KNN's levels: the rows of table t's runs within radius whose
 * fewest flipped prefix bits over the tables is exactly `flips`, table t
 * being the first with that few (see owned_at: each row is met at one step).
 */
static void
simhash_probe_table_exact(IndexScanDesc scan, int t, uint64 q, int radius, int flips,
						  SimhashVisit visit)
{
	CHECK_FOR_INTERRUPTS();
	if (!knn_probe_table(scan, t, q, radius, flips, visit))
		simhash_probe_table(scan, t, q, radius, flips, 0, true, visit, NULL);
}

static void keep_nearest(SimhashScanOpaque so, uint64 fp, ItemPointer tid, int d);
static void band_release(SimhashScanOpaque so);

/*
 * Rows of the current band [band_lo, band_hi] (once the carry was lost):
 * the next band_cap after (after_dist, after_tid).
 */
static void
visit_level(SimhashScanOpaque so, uint64 fp, ItemPointer tid, void *arg)
{
	int d = simhash_hamming(fp, so->order_q);

	if (d >= so->band_lo && d <= so->band_hi)
		keep_nearest(so, fp, tid, d);
}

/* Forget the carried rows: from now on, whole levels probe everything. */
static void
carry_drop(SimhashScanOpaque so)
{
	for (int d = 0; d <= 64; d++)
	{
		if (so->carry[d])
			pfree(so->carry[d]);
		so->carry[d] = NULL;
		so->ncarry[d] = so->maxcarry[d] = 0;
	}
	so->carry_bytes = 0;
	so->carry_lost = true;
}

/* Keep a row for a later step's band, while the carry fits its memory. */
static void
carry_add(SimhashScanOpaque so, uint64 fp, ItemPointer tid, int d)
{
	SimhashHit *h;

	if (so->carry_lost)
		return;
	if (so->ncarry[d] == so->maxcarry[d])
	{
		int64 cap = Max(64, so->maxcarry[d] * 2);
		Size  more = (Size) (cap - so->maxcarry[d]) * sizeof(SimhashHit);

		if (so->carry_bytes + more > (Size) work_mem * 1024 / 2)
		{
			carry_drop(so);
			return;
		}
		if (so->carry[d] == NULL)
			so->carry[d] = MemoryContextAllocHuge(so->cxt, cap * sizeof(SimhashHit));
		else
			so->carry[d] = repalloc_huge(so->carry[d], cap * sizeof(SimhashHit));
		so->maxcarry[d] = cap;
		so->carry_bytes += more;
	}
	h = &so->carry[d][so->ncarry[d]++];
	h->tid = *tid;
	h->fp = fp;
	h->dist = (int16) d;
	h->isnull = false;
}

/*
 * A row of the step's band: appended while the band fits in band_cap rows;
 * beyond, the hits become a max-heap that keeps the band's band_cap first
 * rows in (distance, TID) order (after_dist is band_lo - 1 during a step).
 */
static void
band_add(SimhashScanOpaque so, uint64 fp, ItemPointer tid, int d)
{
	if (!so->band_heap && so->nhits < so->band_cap)
	{
		simhash_add_hit(so, fp, tid, d, false);
		return;
	}
	if (!so->band_heap)
	{
		for (int64 i = so->nhits / 2 - 1; i >= 0; i--)
			simhash_hits_sift_down(so->hits, so->nhits, i);
		so->band_heap = true;
	}
	simhash_keep_after(so, fp, tid, d, so->band_cap);
}

/* Rows met once over the steps: this band's, or carried for a later band. */
static void
visit_step(SimhashScanOpaque so, uint64 fp, ItemPointer tid, void *arg)
{
	int d = simhash_hamming(fp, so->order_q);

	if (d > so->band_hi)
	{
		if (d <= so->carry_radius)
			carry_add(so, fp, tid, d);
	}
	else if (d >= so->band_lo)
		band_add(so, fp, tid, d);
}

/* The radius covered once the next step is probed. */
static int
step_radius(SimhashScanOpaque so)
{
	return sh_table_covered_radius_partial(so->meta.blocks, so->meta.bits, so->level,
										   so->step_table + 1);
}

/*
 * The next step: table step_table at level `level`, whose band ends at the
 * radius covered once it is probed; or, once the carry was lost, the rest of
 * the level: every table and the pending rows again, keeping only the band.
 */
static void
probe_step(IndexScanDesc scan)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;
	int				  f = so->level, t = so->step_table;

	if (!so->carry_lost && step_radius(so) > so->carry_radius)
		carry_drop(so);
	if (!so->carry_lost)
	{
		so->band_hi = step_radius(so);
		/* the rows met by earlier steps that fall in this band */
		so->band_heap = false;
		so->after_dist = so->band_lo - 1;
		ItemPointerSet(&so->after_tid, MaxBlockNumber, MaxOffsetNumber);
		for (int d = so->band_lo; d <= so->band_hi; d++)
		{
			for (int64 i = 0; i < so->ncarry[d]; i++)
				band_add(so, so->carry[d][i].fp, &so->carry[d][i].tid, d);
			if (so->carry[d])
				pfree(so->carry[d]);
			so->carry_bytes -= (Size) so->maxcarry[d] * sizeof(SimhashHit);
			so->carry[d] = NULL;
			so->ncarry[d] = so->maxcarry[d] = 0;
		}
		/* a carry lost during this step loses only later steps' rows */
		simhash_probe_table_exact(scan, t, so->order_q, so->carry_radius, f, visit_step);
		/* the pending rows, once: what is beyond this band is carried */
		if (f == 0 && t == 0)
			simhash_scan_pending(scan, visit_step);
		if (so->band_heap)
		{
			/*
			 * More than band_cap rows in this band: the hits are its first
			 * band_cap rows (every row of the band was met: the carry was
			 * whole); the rest comes from whole-level passes after the
			 * last of them, the heap's root.
			 */
			carry_drop(so);
			so->after_dist = so->hits[0].dist;
			so->after_tid = so->hits[0].tid;
			band_release(so);
			return;
		}
		t++;
	}
	else
	{
		so->band_hi = simhash_covered_radius(so->meta.bits, so->meta.blocks, f);
		simhash_probe_all(scan, so->order_q, so->band_hi, f, so->ntables, visit_level);
		/* the hits are a max-heap (simhash_keep_after): its root is the last row */
		if (so->nhits == so->band_cap)
		{
			/* the band's next rows: the same level again, after these */
			so->after_dist = so->hits[0].dist;
			so->after_tid = so->hits[0].tid;
			band_release(so);
			return;
		}
		so->after_dist = so->band_hi;
		ItemPointerSet(&so->after_tid, MaxBlockNumber, MaxOffsetNumber);
		t = so->ntables;
	}
	band_release(so);
	so->band_lo = Max(so->band_lo, so->band_hi + 1);
	so->level = t == so->ntables ? f + 1 : f;
	so->step_table = t == so->ntables ? 0 : t;
	if (so->band_lo > 64)
		so->phase = SIMHASH_PHASE_NULLS;
}

/* A band pass (carry lost): the band's next band_cap rows. */
static void
keep_nearest(SimhashScanOpaque so, uint64 fp, ItemPointer tid, int d)
{
	simhash_keep_after(so, fp, tid, d, so->band_cap);
}

/*
 * The next batch of the pool into the hits, sorted: its pool_batch first
 * rows (selected, then sorted), the batch doubling each time.
 */
static void
pool_next(SimhashScanOpaque so)
{
	SimhashHit *base = so->pool + so->pool_off;
	int64		left = so->npool - so->pool_off;
	int64		b = Min(so->pool_batch, left);

	if (b < left)
		simhash_select_first(base, left, b);
	so->nhits = 0;
	for (int64 i = 0; i < b; i++)
		simhash_add_hit(so, base[i].fp, &base[i].tid, base[i].dist, false);
	simhash_sort_hits(so);
	so->pool_off += b;
	/* batches stay within an eighth of the band's memory */
	so->pool_batch = Max(KNN_SORT_ALL, Min(so->pool_batch * 2, so->band_cap / 8));
	if (so->pool_off == so->npool)
	{
		pfree(so->pool);
		so->pool = NULL;
		so->npool = so->maxpool = so->pool_off = 0;
	}
}

/*
 * The hits of a finished step or pass, to be returned in order: sorted
 * whole when few; otherwise moved to the pool, from which batches of
 * increasing size are selected (an ORDER BY ... LIMIT 10 over a band of a
 * million equal distances sorts a few thousand rows, not the million).
 */
static void
band_release(SimhashScanOpaque so)
{
	if (so->nhits <= KNN_SORT_ALL)
	{
		simhash_sort_hits(so);
		return;
	}
	/* the pool was used up (pool_next freed it): the hits become the pool */
	Assert(so->pool == NULL);
	so->pool = so->hits;
	so->maxpool = so->maxhits;
	so->hits = NULL;
	so->maxhits = 0;
	so->npool = so->nhits;
	so->pool_off = 0;
	so->pool_batch = KNN_SORT_ALL;
	so->nhits = 0;
	pool_next(so);
}

/*
 * A linear pass's rows: the first `batch` of them after the last returned,
 * of those kept (up to twice the batch, then selected down to it).
 */
static void
linear_select(SimhashScanOpaque so)
{
	SimhashHit *worst;

	simhash_select_first(so->hits, so->nhits, so->batch);
	so->nhits = so->batch;
	worst = &so->hits[0];
	memset(so->linear_count, 0, sizeof(so->linear_count));
	for (int64 i = 0; i < so->nhits; i++)
	{
		so->linear_count[so->hits[i].dist]++;
		if (simhash_hit_after(so->hits[i].dist, &so->hits[i].tid, worst->dist, &worst->tid))
			worst = &so->hits[i];
	}
	so->linear_worst = *worst;
	so->linear_full = true;
	so->linear_d = worst->dist;
	so->linear_upto = so->nhits;
}

/*
 * A linear pass: keep the rows after the last returned that may be among
 * the next `batch`: none farther than linear_d, the least distance that
 * `batch` rows kept reach (lowered as rows come, from a count per
 * distance), nor after the worst row of the last selection; at twice the
 * batch, the first `batch` are selected.  No heap: a pass over N rows keeps
 * about batch * ln(N / batch) of them, and a heap would order each.
 */
static void
visit_linear(SimhashScanOpaque so, uint64 fp, ItemPointer tid, void *arg)
{
	int d = simhash_hamming(fp, so->order_q);

	if (d > so->linear_d || !simhash_hit_after(d, tid, so->after_dist, &so->after_tid))
		return;
	if (so->linear_full && !simhash_hit_after(so->linear_worst.dist, &so->linear_worst.tid, d, tid))
		return;
	simhash_add_hit(so, fp, tid, d, false);
	so->linear_count[d]++;
	so->linear_upto++;
	/* the rows below linear_d are enough already: lower it */
	while (so->linear_d > 0 && so->linear_upto - so->linear_count[so->linear_d] >= so->batch)
		so->linear_upto -= so->linear_count[so->linear_d--];
	if (so->nhits >= 2 * so->batch)
		linear_select(so);
}

/*
 * A linear pass's sweep bound: nothing farther than the batch's reach, nor
 * than the kept keys' (sweep.c counts them).
 */
static int
linear_bound(SimhashScanOpaque so)
{
	return so->keycount ? Min(so->linear_d, so->keycount->d1) : so->linear_d;
}

/*
 * A pass that found fewer rows than the kept keys it counted (VACUUM
 * removed some of them since they were kept): it has met every row up to
 * the keys' reach d, and returns those; the next pass goes on after d.
 * False when it found none: the caller passes again.
 */
static bool
linear_short(SimhashScanOpaque so, int d)
{
	int64 n = 0;

	for (int64 i = 0; i < so->nhits; i++)
		if (so->hits[i].dist <= d)
			so->hits[n++] = so->hits[i];
	so->nhits = n;
	so->after_dist = d;
	ItemPointerSet(&so->after_tid, MaxBlockNumber, MaxOffsetNumber);
	if (n == 0)
		return false;
	simhash_sort_hits(so);
	return true;
}

/*
 * A counting pass notes the pages of this many batches' keys, for the passes
 * after it: with the keyed batch of 10, those of 10, 20, 40 and 80 rows (a
 * LIMIT 100 counts once).
 */
#define KNN_NOTED_BATCHES 16

/*
 * The bound of a pass over the pages the last counting pass noted: the
 * least distance at which its counts reach `batch` keys after the last row
 * returned, if within that pass's reach; -1 if not (the pass counts again).
 */
static int
noted_reach(SimhashScanOpaque so)
{
	SimhashKeyNoted *a = &so->noted;
	int64			 sum = 0;

	if (!a->valid || so->after_dist < a->kc.after)
		return -1;
	for (int d = so->after_dist + 1; d <= a->kc.d; d++)
	{
		sum += a->kc.count[d];
		if (sum >= so->batch)
			return d;
	}
	return -1;
}

/* A counting pass begins: nothing noted. */
static void
noted_start(SimhashScanOpaque so)
{
	SimhashKeyNoted *a = &so->noted;

	a->valid = false;
	a->npages = 0;
	if (a->epochs == NULL)
		a->epochs = MemoryContextAlloc(so->cxt, sizeof(uint64) * Max(so->meta.list.nruns, 1));
	memset(a->epochs, 0, sizeof(uint64) * Max(so->meta.list.nruns, 1));
}

/* A counting pass ended: the pages with a key within its reach, and its counts, kept. */
static void
noted_end(SimhashScanOpaque so, const SimhashKeyCount *kc)
{
	SimhashKeyNoted *a = &so->noted;
	int64			 n = 0;

	for (int64 i = 0; i < a->npages; i++)
		if (a->pages[i].least <= kc->d)
			a->pages[n++] = a->pages[i];
	a->npages = n;
	a->kc = *kc;
	a->valid = !so->stale;
}

/*
 * Beyond the last level worth probing: one pass over every row, keeping
 * the next `batch` rows of the order (after the last returned), in at most
 * twice that memory; each later pass doubles the batch, within work_mem.
 */
static void
linear_pass(IndexScanDesc scan)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;
	SimhashHit		 *last;
	/* twice the batch is kept: within half of work_mem */
	int64			 cap = (int64) work_mem * 1024 / (int64) sizeof(SimhashHit) / 4;
	SimhashKeyCount *kc = &so->keycount_data;

	do
	{
		int noted = noted_reach(so);

		so->nhits = 0;
		so->linear_full = false;
		memset(so->linear_count, 0, sizeof(so->linear_count));
		so->linear_d = 64;
		so->linear_upto = 0;
		memset(kc, 0, sizeof(*kc));
		kc->after = so->after_dist;
		kc->batch = so->batch;
		if (noted >= 0)
		{
			/* the pages an earlier pass noted hold this one's rows */
			kc->noted = true;
			kc->d = kc->d1 = noted;
		}
		else
		{
			kc->want = KNN_NOTED_BATCHES * so->batch;
			kc->d = kc->d1 = 64;
			noted_start(so);
		}
		so->keycount = kc;
		simhash_scan_all(scan, so->order_q, so->after_dist, 64, linear_bound, visit_linear);
		so->keycount = NULL;
		if (!kc->noted)
			noted_end(so, kc);
		if (so->nhits > so->batch)
			linear_select(so);
		else if (so->nhits < so->batch && kc->d1 < 64)
		{
			if (linear_short(so, kc->d1))
				return;
			CHECK_FOR_INTERRUPTS();
		}
	} while (so->nhits == 0 && kc->d1 < 64 && !so->stale);
	simhash_sort_hits(so);
	if (so->nhits < so->batch)
	{
		/* nothing is left after these */
		so->phase = SIMHASH_PHASE_NULLS;
		return;
	}
	last = &so->hits[so->nhits - 1];
	so->after_dist = last->dist;
	so->after_tid = last->tid;
	/* fewer passes for long orders, within work_mem */
	so->batch = Max(so->batch, Min(so->batch * 2, cap));
}

/* The band memory of a KNN or ordered radius scan, before its first row. */
static void
band_start(SimhashScanOpaque so)
{
	so->band_cap = Max((int64) work_mem * 1024 / (int64) sizeof(SimhashHit) / 2, 1000);
	so->band_heap = false;
	so->pool = NULL;
	so->npool = so->maxpool = so->pool_off = 0;
	so->pool_batch = KNN_SORT_ALL;
	so->after_dist = -1;
	ItemPointerSet(&so->after_tid, MaxBlockNumber, MaxOffsetNumber);
}

/*
 * The first step: level 0 of table 0, the rows nearest the query.  Rows are
 * carried up to the covered radius of the level that holds the expected
 * distance of the KNN_CARRY_ROWS-th nearest row (and of the last level worth
 * probing): beyond, far more rows would be carried than a LIMIT of that size
 * needs, so a longer order re-probes whole levels instead.
 */
void
simhash_knn_start(IndexScanDesc scan)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;
	int				  f, last;

	so->model = palloc(sizeof(SimhashReadModel));
	simhash_read_model(&so->meta, so->model);
	so->level = 0;
	so->step_table = 0;
	so->band_lo = 0;
	for (int d = 0; d <= 64; d++)
	{
		so->carry[d] = NULL;
		so->ncarry[d] = so->maxcarry[d] = 0;
	}
	so->carry_bytes = 0;
	so->carry_lost = false;
	memset(&so->noted, 0, sizeof(so->noted));
	band_start(so);
	for (f = 1; simhash_knn_level_worth(so->model, f); f++)
		;
	last = simhash_covered_radius(so->meta.bits, so->meta.blocks, f - 1);
	f = simhash_flips_for(so->model, simhash_knn_expected_radius(so->model, KNN_CARRY_ROWS));
	so->carry_radius =
		f < 0 ? last : Min(last, simhash_covered_radius(so->meta.bits, so->meta.blocks, f));
	if (simhash_debug_sweep == SIMHASH_SWEEP_ALWAYS ||
		(simhash_debug_sweep == SIMHASH_SWEEP_AUTO && simhash_knn_sweep_first(so->model)))
	{
		/*
		 * No probe: linear passes from the nearest row on, the first of
		 * KNN_SWEEP_BATCH rows (a LIMIT 10 sorts 100 rows, not 1,000).
		 */
		so->phase = SIMHASH_PHASE_LINEAR;
		so->batch = first_pass_batch(so, KNN_SWEEP_BATCH);
		linear_pass(scan);
		return;
	}
	so->phase = SIMHASH_PHASE_LEVELS;
	probe_step(scan);
}

/*
 * A radius scan in (distance, TID) order (scan.c): passes over the probes of
 * its conditions, each keeping, like the band of a step, the next band_cap
 * rows after the last one returned (appended while they fit, then in the
 * bounded heap) and returning them through the pool.  A radius query's rows
 * are one band [0, radius]: one pass when it fits in half of work_mem.
 */
void
simhash_knn_ordered_start(IndexScanDesc scan)
{
	band_start((SimhashScanOpaque) scan->opaque);
}

/* A pass begins: no rows kept yet. */
void
simhash_knn_ordered_begin(IndexScanDesc scan)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;

	Assert(so->pool == NULL);
	so->nhits = 0;
	so->band_heap = false;
}

/* A row of the pass, at distance d from the order's operand. */
void
simhash_knn_ordered_add(SimhashScanOpaque so, uint64 fp, ItemPointer tid, int d)
{
	if (simhash_hit_after(d, tid, so->after_dist, &so->after_tid))
		band_add(so, fp, tid, d);
}

/*
 * A pass ended: its rows go out in order (band_release); false when they
 * are the last ones, true when rows after them are left for another pass.
 */
bool
simhash_knn_ordered_end(IndexScanDesc scan)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;
	bool			  more = so->band_heap;

	/* the heap's root is the last of the band_cap rows kept */
	if (more)
	{
		so->after_dist = so->hits[0].dist;
		so->after_tid = so->hits[0].tid;
	}
	band_release(so);
	return more;
}

/*
 * Is level f probed rather than left to linear passes?  Level 0 always; then
 * while cheaper than a linear pass (cost.c), or with simhash.debug_sweep =
 * never, while the level before covers less than every distance.
 */
static bool
level_worth(SimhashScanOpaque so, int f)
{
	if (f == 0)
		return true;
	if (simhash_debug_sweep == SIMHASH_SWEEP_NEVER)
		return simhash_covered_radius(so->meta.bits, so->meta.blocks, f - 1) < 64;
	return simhash_knn_level_worth(so->model, f);
}

/* The next step, or a linear pass once probing costs more. */
void
simhash_knn_next(IndexScanDesc scan)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;

	/* the rest of the last step's or pass's rows first */
	if (!simhash_pool_used_up(so))
	{
		pool_next(so);
		return;
	}
	if (so->phase == SIMHASH_PHASE_LEVELS)
	{
		if (level_worth(so, so->level))
		{
			probe_step(scan);
			return;
		}
		/* everything nearer than band_lo has been returned */
		carry_drop(so);
		so->phase = SIMHASH_PHASE_LINEAR;
		so->after_dist = so->band_lo - 1;
		ItemPointerSet(&so->after_tid, MaxBlockNumber, MaxOffsetNumber);
		so->batch = first_pass_batch(so, KNN_FIRST_BATCH);
	}
	linear_pass(scan);
}
