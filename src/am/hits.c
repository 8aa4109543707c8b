/*
 * hits.c — the answers a scan collects (SimhashHit, scan_int.h): the array
 * a batch fills, sorted by (distance, heap TID), and for KNN the bounded
 * max-heap that keeps the nearest rows after the last returned and the
 * selection of a pool's first rows.
 */
#include "simhash_am.h"
#include "scan_int.h"
#include "hits.h"

#include "utils/memutils.h"

void
simhash_add_hit(SimhashScanOpaque so, uint64 fp, ItemPointer tid, int dist, bool isnull)
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

/* The hits in the order hit_cmp gives (distance, then TID). */
void
simhash_sort_hits(SimhashScanOpaque so)
{
	qsort(so->hits, so->nhits, sizeof(SimhashHit), hit_cmp);
}

/* Restore the heap order (the worst hit at the root) below position i. */
void
simhash_hits_sift_down(SimhashHit *h, int64 n, int64 i)
{
	for (;;)
	{
		int64	   l = 2 * i + 1, worst = i;
		SimhashHit tmp;

		if (l < n && simhash_hit_after(h[l].dist, &h[l].tid, h[worst].dist, &h[worst].tid))
			worst = l;
		if (l + 1 < n &&
			simhash_hit_after(h[l + 1].dist, &h[l + 1].tid, h[worst].dist, &h[worst].tid))
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

		if (!simhash_hit_after(h[i].dist, &h[i].tid, h[p].dist, &h[p].tid))
			return;
		tmp = h[i];
		h[i] = h[p];
		h[p] = tmp;
		i = p;
	}
}

/* Keep the `limit` nearest rows after (after_dist, after_tid) in a max-heap. */
void
simhash_keep_after(SimhashScanOpaque so, uint64 fp, ItemPointer tid, int d, int64 limit)
{
	SimhashHit *root;

	if (!simhash_hit_after(d, tid, so->after_dist, &so->after_tid))
		return;
	if (so->nhits < limit)
	{
		simhash_add_hit(so, fp, tid, d, false);
		sift_up(so->hits, so->nhits - 1);
		return;
	}
	root = &so->hits[0];
	if (!simhash_hit_after(root->dist, &root->tid, d, tid))
		return;
	root->tid = *tid;
	root->fp = fp;
	root->dist = (int16) d;
	simhash_hits_sift_down(so->hits, so->nhits, 0);
}

/* simhash_hit_after for two hits. */
static inline bool
hit_gt(const SimhashHit *a, const SimhashHit *b)
{
	return simhash_hit_after(a->dist, (ItemPointer) &a->tid, b->dist, (ItemPointer) &b->tid);
}

/*
 * Reorder h[0 .. n) so that its k first rows (k < n) are the k first in
 * (distance, TID) order, in no particular order (quickselect, Hoare's
 * partition around a median of three).
 */
void
simhash_select_first(SimhashHit *h, int64 n, int64 k)
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
