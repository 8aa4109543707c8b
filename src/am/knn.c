/*
 * knn.c — exact k-nearest-neighbour order (ORDER BY fp <~> q) by probe
 * levels, in the manner of multi-index hashing (Norouzi, Punjani and Fleet,
 * "Fast Exact Search in Hamming Space with Multi-Index Hashing", 2014).
 *
 * Levels 0 to f probe every table with the prefixes within f flipped bits of
 * the query's.  Every row within simhash_covered_radius(f) of the query is
 * then reached (tables.h has the bound), so level f returns, complete and
 * sorted, the rows at distances (covered(f - 1), covered(f)].  Level f probes
 * only the prefixes exactly f bits away and meets each row at one level
 * (scan.c, simhash_probe_exact); the rows it meets beyond its band are kept
 * (the carry) for the level whose band holds them.  Should the carry outgrow
 * half of work_mem, it is dropped and the later levels probe every prefix
 * within f bits again, keeping only their band.  The executor stops
 * asking once it has its LIMIT: at the first level whose covered radius
 * reaches the k-th distance.  When the next level would cost more than a
 * linear pass (cost.c), linear passes finish the order: each keeps the
 * `batch` nearest rows after the last one returned in a bounded max-heap
 * (order: distance, then heap TID), so memory stays bounded and ties are
 * returned in TID order as by the probe levels.
 */
#include "simhash_am.h"
#include "scan_int.h"

#include "miscadmin.h"
#include "port/pg_bitutils.h"

#define KNN_FIRST_BATCH 1000

/* Rows of the current level's band [band_lo, band_hi]. */
static void
visit_level(SimhashScanOpaque so, uint64 fp, ItemPointer tid, void *arg)
{
	int d = simhash_hamming(fp, so->order_q);

	if (d >= so->band_lo && d <= so->band_hi)
		simhash_add_hit(so, fp, tid, d, false);
}

/* Keep a row for a later level's band, while the carry fits its memory. */
static void
carry_add(SimhashScanOpaque so, uint64 fp, ItemPointer tid, int d)
{
	SimhashHit *h;

	if (so->carry_lost)
		return;
	if (so->ncarry == so->maxcarry)
	{
		int64 cap = (int64) work_mem * 1024 / 2 / (int64) sizeof(SimhashHit);

		if (so->maxcarry >= cap)
		{
			so->carry_lost = true;
			if (so->carry)
				pfree(so->carry);
			so->carry = NULL;
			so->ncarry = so->maxcarry = 0;
			return;
		}
		so->maxcarry = Min(Max(1024, so->maxcarry * 2), cap);
		if (so->carry == NULL)
			so->carry = MemoryContextAllocHuge(so->cxt, so->maxcarry * sizeof(SimhashHit));
		else
			so->carry = repalloc_huge(so->carry, so->maxcarry * sizeof(SimhashHit));
	}
	h = &so->carry[so->ncarry++];
	h->tid = *tid;
	h->fp = fp;
	h->dist = (int16) d;
	h->isnull = false;
}

/* Rows of the runs met once over the levels: this band's, or carried. */
static void
visit_level_once(SimhashScanOpaque so, uint64 fp, ItemPointer tid, void *arg)
{
	int d = simhash_hamming(fp, so->order_q);

	if (d > so->band_hi)
		carry_add(so, fp, tid, d);
	else if (d >= so->band_lo)
		simhash_add_hit(so, fp, tid, d, false);
}

static void
probe_level(IndexScanDesc scan)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;
	int				  f = so->level;

	so->band_hi = simhash_covered_radius(so->meta.bits, so->meta.blocks, f);
	if (!so->carry_lost)
	{
		int64 i, kept = 0;

		/* the rows met by earlier levels that fall in this band */
		for (i = 0; i < so->ncarry; i++)
		{
			SimhashHit *h = &so->carry[i];

			if (h->dist <= so->band_hi)
				simhash_add_hit(so, h->fp, &h->tid, h->dist, false);
			else
				so->carry[kept++] = *h;
		}
		so->ncarry = kept;
		/* a carry lost during this level loses only later levels' rows */
		simhash_probe_exact(scan, so->order_q, so->last_radius, f, visit_level_once, visit_level);
	}
	else
		simhash_probe_all(scan, so->order_q, so->band_hi, f, visit_level);
	simhash_sort_hits(so);
	so->band_lo = so->band_hi + 1;
	so->level = f + 1;
	if (so->band_lo > 64)
		so->phase = SIMHASH_PHASE_NULLS;
}

/* (d, tid) after (e, etid) in the order returned? */
static inline bool
hit_after(int d, ItemPointer tid, int e, ItemPointer etid)
{
	return d != e ? d > e : ItemPointerCompare(tid, etid) > 0;
}

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

/* A linear pass: keep the `batch` nearest rows after the last returned. */
static void
visit_linear(SimhashScanOpaque so, uint64 fp, ItemPointer tid, void *arg)
{
	int			d = simhash_hamming(fp, so->order_q);
	SimhashHit *root;

	if (!hit_after(d, tid, so->after_dist, &so->after_tid))
		return;
	if (so->nhits < so->batch)
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

/* The first level: the rows within `bits`, like a radius query's probes. */
void
simhash_knn_start(IndexScanDesc scan)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;
	int				  f;

	so->model = palloc(sizeof(SimhashReadModel));
	simhash_read_model(&so->meta, so->model);
	so->level = 0;
	so->band_lo = 0;
	so->carry = NULL;
	so->ncarry = so->maxcarry = 0;
	so->carry_lost = false;
	/* the levels to probe (see simhash_knn_next): no farther row is carried */
	for (f = 1; simhash_knn_level_worth(so->model, f); f++)
		;
	so->last_radius = simhash_covered_radius(so->meta.bits, so->meta.blocks, f - 1);
	so->phase = SIMHASH_PHASE_LEVELS;
	probe_level(scan);
}

/* The next level, or a linear pass once probing costs more. */
void
simhash_knn_next(IndexScanDesc scan)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;

	if (so->phase == SIMHASH_PHASE_LEVELS)
	{
		if (simhash_knn_level_worth(so->model, so->level))
		{
			probe_level(scan);
			return;
		}
		/* everything nearer than band_lo has been returned */
		if (so->carry)
			pfree(so->carry);
		so->carry = NULL;
		so->ncarry = so->maxcarry = 0;
		so->carry_lost = true;
		so->phase = SIMHASH_PHASE_LINEAR;
		so->after_dist = so->band_lo - 1;
		ItemPointerSet(&so->after_tid, MaxBlockNumber, MaxOffsetNumber);
		so->batch = KNN_FIRST_BATCH;
	}
	linear_pass(scan);
}
