/*
 * knn.c — exact k-nearest-neighbour order (ORDER BY fp <~> q) by probe
 * levels, in the manner of multi-index hashing (Norouzi, Punjani and Fleet,
 * "Fast Exact Search in Hamming Space with Multi-Index Hashing", 2014).
 *
 * Level f probes the prefixes exactly f bits away from the query's, one table
 * at a time: a step.  Each row is met at one step only (probe.c, owned_at):
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
 * (cost.c), linear passes finish the order: each keeps the `batch` nearest
 * rows after the last one returned in a bounded max-heap (order: distance,
 * then heap TID), so memory stays bounded and ties are returned in TID order
 * as by the probe steps.  A band is held whole only while it fits in
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
#include "knn.h"

#include "miscadmin.h"
#include "port/pg_bitutils.h"

#define KNN_FIRST_BATCH 1000
#define KNN_CARRY_ROWS	100

#define KNN_SORT_ALL 2048 /* a band or pass of at most this many rows is sorted whole */

static void		   keep_nearest(SimhashScanOpaque so, uint64 fp, ItemPointer tid, int d);
static inline bool hit_after(int d, ItemPointer tid, int e, ItemPointer etid);
static void		   keep_after(SimhashScanOpaque so, uint64 fp, ItemPointer tid, int d, int64 limit);
static void		   sift_down(SimhashHit *h, int64 n, int64 i);
static void		   band_release(SimhashScanOpaque so);

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
			sift_down(so->hits, so->nhits, i);
		so->band_heap = true;
	}
	keep_after(so, fp, tid, d, so->band_cap);
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
		simhash_probe_all(scan, so->order_q, so->band_hi, f, visit_level);
		/* the hits are a max-heap (keep_after): its root is the last row */
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

/* (d, tid) after (e, etid) in the order returned? */
static inline bool
hit_after(int d, ItemPointer tid, int e, ItemPointer etid)
{
	return d != e ? d > e : ItemPointerCompare(tid, etid) > 0;
}

/* Restore the heap order (the worst hit at the root) below position i. */
static void
sift_down(SimhashHit *h, int64 n, int64 i)
{
	for (;;)
	{
		int64	   l = 2 * i + 1, worst = i;
		SimhashHit tmp;

		if (l < n && hit_after(h[l].dist, &h[l].tid, h[worst].dist, &h[worst].tid))
			worst = l;
		if (l + 1 < n && hit_after(h[l + 1].dist, &h[l + 1].tid, h[worst].dist, &h[worst].tid))
			worst = l + 1;
		if (worst == i)
			return;
		tmp = h[i];
		h[i] = h[worst];
		h[worst] = tmp;
		i = worst;
	}
}

/* Restore the heap order above position i, after an append. */
static void
sift_up(SimhashHit *h, int64 i)
{
	while (i > 0)
	{
		int64	   p = (i - 1) / 2;
		SimhashHit tmp;

		if (!hit_after(h[i].dist, &h[i].tid, h[p].dist, &h[p].tid))
			return;
		tmp = h[i];
		h[i] = h[p];
		h[p] = tmp;
		i = p;
	}
}

/* Keep the `limit` nearest rows after (after_dist, after_tid) in a max-heap. */
static void
keep_after(SimhashScanOpaque so, uint64 fp, ItemPointer tid, int d, int64 limit)
{
	SimhashHit *root;

	if (!hit_after(d, tid, so->after_dist, &so->after_tid))
		return;
	if (so->nhits < limit)
	{
		simhash_add_hit(so, fp, tid, d, false);
		sift_up(so->hits, so->nhits - 1);
		return;
	}
	root = &so->hits[0];
	if (!hit_after(root->dist, &root->tid, d, tid))
		return;
	root->tid = *tid;
	root->fp = fp;
	root->dist = (int16) d;
	sift_down(so->hits, so->nhits, 0);
}

/* A band pass (carry lost): the band's next band_cap rows. */
static void
keep_nearest(SimhashScanOpaque so, uint64 fp, ItemPointer tid, int d)
{
	keep_after(so, fp, tid, d, so->band_cap);
}

/* hit_after for two hits. */
static inline bool
hit_gt(const SimhashHit *a, const SimhashHit *b)
{
	return hit_after(a->dist, (ItemPointer) &a->tid, b->dist, (ItemPointer) &b->tid);
}

/*
 * Reorder h[0 .. n) so that its k first rows (k < n) are the k first in
 * (distance, TID) order, in no particular order (quickselect, Hoare's
 * partition around a median of three).
 */
static void
select_first(SimhashHit *h, int64 n, int64 k)
{
	int64 l = 0, r = n - 1;

	while (r > l)
	{
		int64	   m = l + (r - l) / 2, i = l, j = r;
		SimhashHit pivot, tmp;

		/* the median of h[l], h[m], h[r] as pivot */
		if (hit_gt(&h[l], &h[m]))
		{
			tmp = h[l];
			h[l] = h[m];
			h[m] = tmp;
		}
		if (hit_gt(&h[m], &h[r]))
		{
			tmp = h[m];
			h[m] = h[r];
			h[r] = tmp;
			if (hit_gt(&h[l], &h[m]))
			{
				tmp = h[l];
				h[l] = h[m];
				h[m] = tmp;
			}
		}
		pivot = h[m];
		while (i <= j)
		{
			while (hit_gt(&pivot, &h[i]))
				i++;
			while (hit_gt(&h[j], &pivot))
				j--;
			if (i <= j)
			{
				tmp = h[i];
				h[i] = h[j];
				h[j] = tmp;
				i++;
				j--;
			}
		}
		/* h[l .. j] <= pivot <= h[i .. r], and j < i */
		if (k - 1 <= j)
			r = j;
		else if (k - 1 >= i)
			l = i;
		else
			return;
	}
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
		select_first(base, left, b);
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

/* A linear pass: keep the `batch` nearest rows after the last returned. */
static void
visit_linear(SimhashScanOpaque so, uint64 fp, ItemPointer tid, void *arg)
{
	keep_after(so, fp, tid, simhash_hamming(fp, so->order_q), so->batch);
}

/*
 * Beyond the last level worth probing: one pass over every row, keeping
 * the next `batch` rows of the order (after the last returned) in a heap;
 * each later pass doubles the batch, within work_mem.
 */
static void
linear_pass(IndexScanDesc scan)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;
	SimhashHit		 *last;
	int64			  cap = (int64) work_mem * 1024 / (int64) sizeof(SimhashHit);

	simhash_scan_all(scan, visit_linear);
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
	band_start(so);
	for (f = 1; simhash_knn_level_worth(so->model, f); f++)
		;
	last = simhash_covered_radius(so->meta.bits, so->meta.blocks, f - 1);
	f = simhash_flips_for(so->model, simhash_knn_expected_radius(so->model, KNN_CARRY_ROWS));
	so->carry_radius =
		f < 0 ? last : Min(last, simhash_covered_radius(so->meta.bits, so->meta.blocks, f));
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
	if (hit_after(d, tid, so->after_dist, &so->after_tid))
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
		if (so->level == 0 || simhash_knn_level_worth(so->model, so->level))
		{
			probe_step(scan);
			return;
		}
		/* everything nearer than band_lo has been returned */
		carry_drop(so);
		so->phase = SIMHASH_PHASE_LINEAR;
		so->after_dist = so->band_lo - 1;
		ItemPointerSet(&so->after_tid, MaxBlockNumber, MaxOffsetNumber);
		so->batch = KNN_FIRST_BATCH;
	}
	linear_pass(scan);
}
