/*
 * scan.c — index scans: radius queries by probing the permuted tables,
 * linear passes above `bits`, exact k-nearest-neighbour ordering.
 *
 * A scan copies the metapage once (see the locking protocol in
 * src/am/README), collects its answers by the probes of probe.c into an
 * array, a batch at a time (or straight into a bitmap), and returns them.
 * KNN's order is knn.c's, and so is a radius scan's with ORDER BY (bounded
 * passes over its probes).
 */
#include "simhash_am.h"
#include "page.h"
#include "scan_int.h"
#include "probe.h"
#include "knn.h"
#include "hits.h"
#include "dirstore.h"

#include "access/relscan.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "port/pg_bitutils.h"
#include "storage/lmgr.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"

/* ---- the scan/VACUUM interlock (src/am/README) ---------------------------- */

/*
 * Does the scan return TIDs that VACUUM could have removed and the heap
 * reused unseen?  An index-only scan (no heap visit on all-visible pages),
 * or one under a snapshot that could see a tuple inserted in a reused slot.
 */
static bool
needs_interlock(IndexScanDesc scan)
{
	return scan->xs_want_itup || scan->xs_snapshot == InvalidSnapshot ||
		   !IsMVCCSnapshot(scan->xs_snapshot);
}

static void
interlock_take(IndexScanDesc scan)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;
	ItemPointerData	  tag;

	if (so->interlocked || !needs_interlock(scan))
		return;
	ItemPointerSet(&tag, SIMHASH_INTERLOCK_BLKNO, SIMHASH_INTERLOCK_OFFNO);
	LockTuple(scan->indexRelation, &tag, ShareLock);
	so->interlocked = true;
}

/* Every TID read under the interlock has been returned (or never will be). */
static void
interlock_release(IndexScanDesc scan)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;
	ItemPointerData	  tag;

	if (!so->interlocked)
		return;
	ItemPointerSet(&tag, SIMHASH_INTERLOCK_BLKNO, SIMHASH_INTERLOCK_OFFNO);
	UnlockTuple(scan->indexRelation, &tag, ShareLock);
	so->interlocked = false;
}

/*
 * VACUUM, once it has removed entries (holding no buffer or page lock):
 * wait until no scan that may have read them still holds their TIDs.
 */
void
simhash_vacuum_wait_for_scans(Relation index)
{
	ItemPointerData tag;

	ItemPointerSet(&tag, SIMHASH_INTERLOCK_BLKNO, SIMHASH_INTERLOCK_OFFNO);
	LockTuple(index, &tag, ExclusiveLock);
	UnlockTuple(index, &tag, ExclusiveLock);
}

/* ambeginscan: the scan's state and its memory context. */
IndexScanDesc
simhash_beginscan(Relation index, int nkeys, int norderbys)
{
	IndexScanDesc	  scan = RelationGetIndexScan(index, nkeys, norderbys);
	SimhashScanOpaque so = palloc0(sizeof(SimhashScanOpaqueData));

	so->cxt = AllocSetContextCreate(CurrentMemoryContext, "simhash scan", SIMHASH_CONTEXT_SIZES);
	scan->opaque = so;
	if (norderbys > 0)
	{
		scan->xs_orderbyvals = palloc0(sizeof(Datum) * norderbys);
		scan->xs_orderbynulls = palloc(sizeof(bool) * norderbys);
	}
	scan->xs_itupdesc = RelationGetDescr(index);
	return scan;
}

/*
 * amrescan: the scan keys as conditions (query fingerprint, radius), the
 * ORDER BY operand; nothing is read until the first tuple is asked for.
 */
void
simhash_rescan(IndexScanDesc scan, ScanKey keys, int nkeys, ScanKey orderbys, int norderbys)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;
	MemoryContext	  old;
	int				  i;

	if (keys && scan->numberOfKeys > 0)
		memmove(scan->keyData, keys, scan->numberOfKeys * sizeof(ScanKeyData));
	if (orderbys && scan->numberOfOrderBys > 0)
		memmove(scan->orderByData, orderbys, scan->numberOfOrderBys * sizeof(ScanKeyData));

	interlock_release(scan);
	MemoryContextReset(so->cxt);
	old = MemoryContextSwitchTo(so->cxt);
	simhash_dir_cache_reset(so);
	so->started = false;
	so->hits = NULL;
	so->nhits = so->maxhits = so->next = 0;
	so->pool = NULL;
	so->npool = so->maxpool = so->pool_off = 0;
	so->phase = SIMHASH_PHASE_DONE;
	so->streaming = so->resume = so->stop = false;
	so->tbm = NULL;
	so->ntbm = 0;
	so->never = false;
	so->recheck = false;
	so->nconds = 0;
	so->conds = palloc(sizeof(SimhashCond) * Max(scan->numberOfKeys, 1));
	for (i = 0; i < scan->numberOfKeys; i++)
	{
		ScanKey		 key = &scan->keyData[i];
		SimhashCond *c = &so->conds[so->nconds];

		if (key->sk_flags & SK_ISNULL)
		{
			so->never = true;
			continue;
		}
		if (key->sk_strategy == SIMHASH_WITHIN_GUC_STRATEGY)
		{
			c->q = DatumGetSimhash(key->sk_argument);
			c->radius = simhash_max_distance;
		}
		else if (key->sk_strategy == SIMHASH_WITHIN_QUERY_STRATEGY ||
				 key->sk_strategy == SIMHASH_PAIR_STRATEGY)
		{
			/* a pair matches within the smaller radius: a superset here */
			so->recheck |= key->sk_strategy == SIMHASH_PAIR_STRATEGY;
			c->radius = simhash_query_radius(key->sk_argument, &c->q);
			if (c->radius < 0)
			{
				so->never = true;
				continue;
			}
		}
		else
			elog(ERROR, "simhash index: unexpected strategy %d", key->sk_strategy);
		so->nconds++;
	}
	so->has_order = scan->numberOfOrderBys > 0;
	so->order_null = false;
	if (so->has_order)
	{
		ScanKey ob = &scan->orderByData[0];

		if (ob->sk_flags & SK_ISNULL)
			so->order_null = true;
		else
			so->order_q = DatumGetSimhash(ob->sk_argument);
	}
	MemoryContextSwitchTo(old);
}

/* amendscan: frees everything the scan allocated. */
void
simhash_endscan(IndexScanDesc scan)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;

	interlock_release(scan);
	MemoryContextDelete(so->cxt);
	pfree(so);
}

/* The metapage copy must describe the layout it names. */
static void
check_meta(IndexScanDesc scan)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;
	int				  r;

	if (so->meta.ntables != so->ntables)
		simhash_corrupt_block(scan->indexRelation, SIMHASH_METAPAGE_BLKNO,
							  "The metapage's table count does not match its layout.");
	/* pages may hold fewer entries than they were written with (VACUUM) */
	for (r = 0; r < so->meta.list.nruns; r++)
		if (so->meta.list.runs[r].npages == 0 ||
			so->meta.list.runs[r].count >
				(uint64) so->meta.list.runs[r].npages * SIMHASH_PAGE_CAPACITY)
			simhash_corrupt_block(scan->indexRelation, SIMHASH_RUNLIST_BLKNO,
								  "A run's page count does not match its entry count.");
}

/* ---- collecting answers ------------------------------------------------- */

/* Does a fingerprint meet every condition of the scan? */
static bool
conds_hold(SimhashScanOpaque so, uint64 fp)
{
	int i;

	for (i = 0; i < so->nconds; i++)
		if (simhash_hamming(fp, so->conds[i].q) > so->conds[i].radius)
			return false;
	return true;
}

/* Visitor of radius scans: a hit when every condition holds. */
static void
visit_filtered(SimhashScanOpaque so, uint64 fp, ItemPointer tid, void *arg)
{
	if (!conds_hold(so, fp))
		return;
	if (so->tbm)
	{
		/* amgetbitmap: no hit array; the bitmap goes lossy within work_mem */
		tbm_add_tuples(so->tbm, tid, 1, so->recheck);
		so->ntbm++;
		return;
	}
	if (so->has_order && !so->order_null)
		simhash_knn_ordered_add(so, fp, tid, simhash_hamming(fp, so->order_q));
	else
		simhash_add_hit(so, fp, tid, -1, false);
}

/* Visitor of the NULLs chain: a hit with no distance. */
static void
visit_null(SimhashScanOpaque so, uint64 fp, ItemPointer tid, void *arg)
{
	simhash_add_hit(so, 0, tid, -1, true);
}

/* The scan met reused pages after it had returned rows: a retryable error. */
static void
stale_error(IndexScanDesc scan)
{
	ereport(ERROR,
			(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
			 errmsg("simhash index \"%s\" was rewritten and its pages reused during the scan",
					RelationGetRelationName(scan->indexRelation)),
			 errhint("Retry the query; on a hot standby, hot_standby_feedback avoids this.")));
}

#define STREAM_FIRST_BATCH 1000 /* a streamed scan's first batch (hits) */

static void collect(IndexScanDesc scan);

/* The next batch's size: doubling, up to half of work_mem in hits. */
static void
stream_grow(SimhashScanOpaque so)
{
	/* the hit array doubles: half of work_mem in hits keeps it within work_mem */
	int64 cap_max = Max((int64) work_mem * 1024 / (int64) sizeof(SimhashHit) / 2, 1000);

	so->batch_cap = Min(so->batch_cap * 2, cap_max);
}

/* The rows of the conditions: their probes, or a full pass (no conditions). */
static void
probe_conds(IndexScanDesc scan)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;

	if (so->flips >= 0)
		simhash_probe_all(scan, so->conds[so->driver].q, so->conds[so->driver].radius, so->flips,
						  so->split, visit_filtered);
	else if (so->nconds > 0)
		simhash_scan_all(scan, so->conds[so->driver].q, 0, so->conds[so->driver].radius, NULL,
						 visit_filtered);
	else
		simhash_scan_all(scan, 0, 0, 64, NULL, visit_filtered);
}

/*
 * The next batch of a streamed scan: the probes (or the full pass) from
 * where the last batch stopped, until batch_cap hits, then the pending rows.
 * Each row comes from one place (a table's probes by the first-table rule,
 * or table 0 of a run), so the batches need no memory of what they returned.
 */
static void
stream_batch(IndexScanDesc scan)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;

	so->stop = false;
	probe_conds(scan);
	so->resume = so->stop;
	if (so->stop)
	{
		so->phase = SIMHASH_PHASE_STREAM;
		stream_grow(so);
	}
	else
		so->phase = so->after_stream;
}

/*
 * A pass of a radius scan in distance order: the probes whole, knn.c keeping
 * the next rows of the order within half of work_mem; another pass follows
 * while rows are left after those.
 */
static void
ordered_pass(IndexScanDesc scan)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;

	simhash_knn_ordered_begin(scan);
	probe_conds(scan);
	/* the phase stays: the pool may still hold this pass's rows */
	so->ordered_more = simhash_knn_ordered_end(scan);
	so->phase = SIMHASH_PHASE_ORDERED;
}

/* The next batch of the NULLs chain: pages until batch_cap hits. */
static void
nulls_batch(IndexScanDesc scan)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;

	simhash_scan_nulls(scan, visit_null, so->batch_cap);
	if (BlockNumberIsValid(so->nulls_pos.next))
		stream_grow(so);
	else
		so->phase = SIMHASH_PHASE_DONE;
}

/*
 * Collect the first answers from a fresh copy of the metapage; start over if
 * a page turned out recycled (possible on a hot standby, see src/am/README).
 */
static void
start_scan(IndexScanDesc scan)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;
	int				  attempt;

	so->started = true;
	pgstat_count_index_scan(scan->indexRelation);
	for (attempt = 0;; attempt++)
	{
		so->stale = false;
		so->nhits = so->next = 0;
		so->resume = so->stop = false;
		collect(scan);
		if (!so->stale)
			return;
		simhash_check_stale(scan);
		if (attempt == 4)
			stale_error(scan);
	}
}

/*
 * The scan's first answers from a fresh copy of the metapage: radius
 * conditions by probes (or a full pass when cheaper), an order by KNN steps,
 * or the NULLs; sets the phase that next_batch() continues from.
 */
static void
collect(IndexScanDesc scan)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;
	MemoryContext	  old = MemoryContextSwitchTo(so->cxt);

	simhash_read_meta(scan->indexRelation, &so->meta);
	so->nblocks = 0; /* read again by the first link checked */
	so->tables = simhash_layout(so->meta.blocks, so->meta.bits, &so->ntables);
	check_meta(scan);
	simhash_dir_cache_reset(so);
	so->nulls_pos.next = so->meta.nulls_head;
	so->nulls_pos.prev = SIMHASH_METAPAGE_BLKNO;
	so->nulls_pos.steps = 0;
	so->batch_cap = STREAM_FIRST_BATCH;

	if (so->never)
		so->phase = SIMHASH_PHASE_DONE;
	else if (so->nconds > 0)
	{
		SimhashReadModel m;
		int				 driver = 0, i, flips, split;

		for (i = 1; i < so->nconds; i++)
			if (so->conds[i].radius < so->conds[driver].radius)
				driver = i;
		simhash_read_model(&so->meta, &m);
		flips = simhash_radius_plan(&m, so->conds[driver].radius, NULL, &split);
		/* simhash.debug_sweep: the sweep, or the probes whenever some cover the radius */
		if (simhash_debug_sweep == SIMHASH_SWEEP_ALWAYS)
			flips = -1;
		else if (simhash_debug_sweep == SIMHASH_SWEEP_NEVER && flips < 0)
			flips = simhash_probe_level(&m, so->conds[driver].radius, &split);
		so->flips = flips;
		so->split = split;
		so->driver = driver;
		so->after_stream = SIMHASH_PHASE_DONE;
		if (so->tbm == NULL && so->has_order && !so->order_null)
		{
			/* rows in distance order: bounded passes (knn.c) */
			so->streaming = false;
			simhash_knn_ordered_start(scan);
			ordered_pass(scan);
		}
		else
		{
			so->streaming = so->tbm == NULL;
			stream_batch(scan);
		}
	}
	else if (so->has_order && !so->order_null)
		simhash_knn_start(scan);
	else
	{
		/* full scan: every row, in batches, NULLs last */
		so->flips = -1;
		so->split = so->ntables;
		so->after_stream = SIMHASH_PHASE_NULLS;
		so->streaming = so->tbm == NULL;
		stream_batch(scan);
	}
	MemoryContextSwitchTo(old);
}

/*
 * Refill the hit array: a stream's or an ordered radius scan's next batch,
 * KNN's next rows (knn.c), then the NULLs.  KNN and ordered passes return
 * the rest of their last pool first.
 */
static void
next_batch(IndexScanDesc scan)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;
	MemoryContext	  old = MemoryContextSwitchTo(so->cxt);

	so->nhits = so->next = 0;
	while (so->nhits == 0 && so->phase != SIMHASH_PHASE_DONE)
	{
		if (so->phase == SIMHASH_PHASE_STREAM)
			stream_batch(scan);
		else if (so->phase == SIMHASH_PHASE_ORDERED && simhash_pool_used_up(so))
		{
			if (so->ordered_more)
				ordered_pass(scan);
			else
				so->phase = SIMHASH_PHASE_DONE;
		}
		else if (so->phase == SIMHASH_PHASE_NULLS && simhash_pool_used_up(so))
			nulls_batch(scan);
		else
			simhash_knn_next(scan);
	}
	if (so->stale)
	{
		simhash_check_stale(scan);
		stale_error(scan);
	}
	MemoryContextSwitchTo(old);
}

/*
 * amgettuple: the next hit (in distance order when ordered), collecting
 * more when the batch is used up.
 */
bool
simhash_gettuple(IndexScanDesc scan, ScanDirection dir)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;
	SimhashHit		 *h;

	if (!so->started)
	{
		interlock_take(scan);
		start_scan(scan);
	}
	if (so->next >= so->nhits)
	{
		if (so->phase == SIMHASH_PHASE_DONE)
		{
			interlock_release(scan);
			return false;
		}
		/*
		 * The batch is returned: a VACUUM waiting for it goes first.  KNN's
		 * carry holds TIDs of earlier steps, so it keeps the interlock, and
		 * so do ordered radius passes (their pool holds TIDs to return), and
		 * a KNN scan whose last band is still in its pool when the order
		 * reaches the NULL keys.
		 */
		if (so->phase == SIMHASH_PHASE_STREAM ||
			(so->phase == SIMHASH_PHASE_NULLS && simhash_pool_used_up(so)))
		{
			interlock_release(scan);
			interlock_take(scan);
		}
		next_batch(scan);
		if (so->next >= so->nhits)
		{
			interlock_release(scan);
			return false;
		}
	}
	h = &so->hits[so->next++];
	scan->xs_heaptid = h->tid;
	scan->xs_recheck = so->recheck;
	if (scan->numberOfOrderBys > 0)
	{
		scan->xs_recheckorderby = false;
		scan->xs_orderbyvals[0] = Int32GetDatum(h->dist);
		scan->xs_orderbynulls[0] = h->dist < 0;
	}
	if (scan->xs_want_itup)
	{
		Datum value = Int64GetDatum((int64) h->fp);
		bool  isnull = h->isnull;

		if (scan->xs_itup)
			pfree(scan->xs_itup);
		scan->xs_itup = index_form_tuple(RelationGetDescr(scan->indexRelation), &value, &isnull);
	}
	return true;
}

/*
 * amgetbitmap: every hit into the bitmap, marked for recheck with the
 * exclusion operator class (@%@), as amgettuple does.
 */
int64
simhash_getbitmap(IndexScanDesc scan, TIDBitmap *tbm)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;
	int64			  n = 0;

	so->tbm = tbm;
	if (!so->started)
		start_scan(scan);
	n = so->ntbm;
	for (;;)
	{
		for (; so->next < so->nhits; so->next++)
		{
			tbm_add_tuples(tbm, &so->hits[so->next].tid, 1, so->recheck);
			n++;
		}
		if (so->phase == SIMHASH_PHASE_DONE)
			break;
		next_batch(scan);
		if (so->nhits == 0)
			break;
	}
	return n;
}
