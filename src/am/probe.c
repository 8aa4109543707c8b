/*
 * probe.c — the radius probes of index scans (scan.c), which KNN's exact
 * steps (knn.c) build on: probing the permuted tables of every run for the
 * keys near a query, and reading whole runs and chains.  Pages are read
 * through the scan's checked reads (scanpage.c); the directory cache is
 * dirstore.c's, the prefix filters filter.c's, the hits hits.c's.
 */
#include "simhash_am.h"
#include "page.h"
#include "scan_int.h"
#include "probe.h"
#include "probe_int.h"

#include "access/relscan.h"
#include "miscadmin.h"
#include "utils/memutils.h"

static inline int
so_nruns(IndexScanDesc scan)
{
	return ((SimhashScanOpaque) scan->opaque)->meta.list.nruns;
}

/* The last hikey of directory page d of a run (for the binary search). */
static uint64
dir_page_hikey(IndexScanDesc scan, BlockNumber blkno, uint32 gen, int t)
{
	Buffer buf = ReadBuffer(scan->indexRelation, blkno);
	uint64 hikey = PG_UINT64_MAX;

	LockBuffer(buf, BUFFER_LOCK_SHARE);
	if (simhash_scan_page_current(scan, buf, SIMHASH_DIR, gen, t))
		hikey = SimhashPageGetOpaque(BufferGetPage(buf))->hikey;
	UnlockReleaseBuffer(buf);
	return hikey;
}

/*
 * Visit the matches on one run page: entries in [lo, hi] within radius and
 * not reachable from an earlier table (there, the prefix differs from the
 * query's in more than `flips` bits), so each match is emitted once.
 * `where` in [0, 1] is where lo is expected among the page's keys (its
 * position between the previous page's hikey and this one's), -1 if unknown.
 * cache: the run's directory in memory (the page is read through the buffer
 * it remembers), or NULL.  Returns false when the range ends on this page.
 */
static bool
scan_run_page(ProbeCtx *c, SimhashDirCache *cache, BlockNumber blkno, BlockNumber p, uint64 lo,
			  uint64 hi, double where)
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
		/* through the buffer a cached directory remembers: no buffer-mapping lookup */
		c->buf = buf = cache != NULL ? simhash_dir_read_page(c->scan->indexRelation, cache, (int) p)
									 : ReadBuffer(c->scan->indexRelation, blkno);
		c->blkno = blkno;
	}
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	page = BufferGetPage(buf);
	current = simhash_scan_page_current(c->scan, buf, SIMHASH_RUN, gen, c->t);
	n = current ? simhash_run_page_nentries(c->scan->indexRelation, buf, run, p) : 0;
	if (!current)
		more = false;
	/* the first entry >= lo: (key, TID) order holds on a run page */
	i = simhash_first_at_least(page, n, lo, where < 0 ? n / 2 : Min((int) (where * n), n));
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
		if (c->exact ? !simhash_owned_at(so, c->t, fp ^ c->q, c->flips)
					 : !sh_table_first_match_split(so->tables, c->t, fp, c->q, c->level, c->split))
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
void
simhash_range_scan(ProbeCtx *c, uint64 lo, uint64 hi)
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
	if (!simhash_filter_may_hold(c, lo))
		return;
	simhash_scan_check_dir_link(c->scan, c->r, dstart);
	cache = simhash_dir_cache_get(c);
	if (c->after)
		lo = so->pos.key; /* a stream's next batch, from run page pos.p */
	if (cache != NULL && c->after)
	{
		for (int a = (int) so->pos.p; more && a < cache->n && !so->stop; a++)
		{
			more = scan_run_page(c, cache, cache->blocks[a], a, lo, hi, -1);
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
		a = simhash_dir_first_from(cache, a, lo);
		c->dir_hint = a;
		for (; more && a < cache->n && !so->stop; a++)
		{
			uint64 below = a > 0 ? cache->hikeys[a - 1] : 0;
			double where = 0;

			if (lo > below && cache->hikeys[a] > below)
				where = Min((double) (lo - below) / (double) (cache->hikeys[a] - below), 1.0);
			more = scan_run_page(c, cache, cache->blocks[a], a, lo, hi, where);
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
		if (!simhash_scan_page_current(c->scan, dbuf, SIMHASH_DIR, run->gen, c->t))
		{
			UnlockReleaseBuffer(dbuf);
			return;
		}
		n = simhash_buf_nentries(index, dbuf, SIMHASH_DIR_ENTRY_SIZE);
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
			simhash_scan_check_link(c->scan, dstart + l, blkno);
			more = scan_run_page(c, NULL, blkno, l * SIMHASH_DIR_CAPACITY + i, lo, hi, where);
			lo = 0; /* the next page: from its first entry */
			LockBuffer(dbuf, BUFFER_LOCK_SHARE);
			if (!simhash_scan_page_current(c->scan, dbuf, SIMHASH_DIR, run->gen, c->t) || so->stop)
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
		simhash_range_scan(c, lo, lo | ~c->tab->prefix_key_mask);
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
		simhash_range_scan(c, lo, lo | ~c->tab->prefix_key_mask);
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

/* At most this many prefixes of a table's radius probes are listed. */
#define PROBE_MAX_LISTED 65536

/*
 * Table c->t's radius probes when the scan returns its rows in one batch (a
 * bitmap or an ordered pass: nothing stops and resumes them): every prefix
 * within c->flips bits of the query's listed in increasing order, then each
 * run read page by page (probe_list.c), or range by range when its directory
 * is not cached.  False (nothing read) when there are too many to list.
 */
static bool
probe_listed(ProbeCtx *c)
{
	SimhashScanOpaque so = (SimhashScanOpaque) c->scan->opaque;
	int64			  count = 0;
	uint64			 *los, *his;
	int				  n = 0;

	for (int k = 0; k <= c->flips && k <= c->tab->prefix_bits; k++)
		count += sh_binomial(c->tab->prefix_bits, k);
	if (c->tab->prefix_bits >= 63 || count > PROBE_MAX_LISTED)
		return false;
	los = palloc(sizeof(uint64) * count);
	his = palloc(sizeof(uint64) * count);
	simhash_list_prefixes(c->tab, c->qkey, 0, c->flips, false, 0, los, &n);
	Assert(n == count);
	for (int i = 0; i < n; i++)
		his[i] = los[i] | ~c->tab->prefix_key_mask;
	for (c->r = 0; c->r < so_nruns(c->scan) && !so->stale; c->r++)
	{
		BlockNumber dstart = simhash_meta_dir(&so->meta, c->r, c->t);

		/* a run that does not hold this table (a merge is switching tables over) */
		if (!BlockNumberIsValid(dstart))
			continue;
		simhash_scan_check_dir_link(c->scan, c->r, dstart);
		c->dir_hint = 0;
		if (!simhash_probe_listed(c, los, his, n))
		{
			for (int i = 0; i < n && !so->stale; i++)
			{
				CHECK_FOR_INTERRUPTS();
				simhash_range_scan(c, los[i], his[i]);
			}
		}
	}
	pfree(los);
	pfree(his);
	return true;
}

/* A table's probe context, no page read yet, from the first run on. */
void
simhash_probe_ctx_init(ProbeCtx *c, IndexScanDesc scan, int t, uint64 q, int radius, int flips,
					   bool exact, SimhashVisit visit, void *arg)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;

	memset(c, 0, sizeof(*c));
	c->scan = scan;
	c->tab = &so->tables[t];
	c->t = t;
	c->q = q;
	c->qkey = sh_table_permute(c->tab, q);
	c->radius = radius;
	c->flips = flips;
	c->exact = exact;
	c->level = flips;
	c->split = so->ntables;
	c->visit = visit;
	c->arg = arg;
	c->buf = InvalidBuffer;
	c->blkno = InvalidBlockNumber;
}

/*
 * Table t's matches within radius in every run: every key whose prefix
 * differs from the query's in at most `flips` bits (0 when radius <= bits;
 * flips - 1 for the tables from `split` on, none when that is negative), or
 * with `exact`, in exactly `flips` bits (see simhash_owned_at; split unused).
 */
void
simhash_probe_table(IndexScanDesc scan, int t, uint64 q, int radius, int flips, int split,
					bool exact, SimhashVisit visit, void *arg)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;
	int				  own = exact ? flips : sh_table_split_flips(t, flips, split);
	ProbeCtx		  c;

	if (so->meta.list.nruns == 0 || own < 0)
		return;
	simhash_probe_ctx_init(&c, scan, t, q, radius, own, exact, visit, arg);
	c.level = flips;
	c.split = exact ? so->ntables : split;
	c.resuming = !exact && so->resume && so->pos.t == t;
	c.after = false;
	if (exact)
	{
		for (c.r = 0; c.r < so->meta.list.nruns; c.r++)
		{
			c.dir_hint = 0;
			probe_exact_sorted(&c, 0, own, 0);
		}
	}
	/* one prefix: probe_variants reads the pages it needs, caching no directory */
	else if (so->streaming || c.resuming || own == 0 || !probe_listed(&c))
		probe_variants(&c, 0, own, 0);
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
	SimhashChain	  walk;
	Page			  page;

	/* NULLs pages (chain 0) are compacted in place, never recycled */
	if (chain == 0)
		simhash_chain_begin(&walk, scan->indexRelation, NULL, pos->next, BUFFER_LOCK_SHARE,
							SIMHASH_NULLS, -1, SIMHASH_PAGE_LIVE);
	else
		simhash_chain_begin(&walk, scan->indexRelation, NULL, pos->next, BUFFER_LOCK_SHARE,
							SIMHASH_PENDING, chain, SIMHASH_PAGE_TRY);
	walk.prev = pos->prev;
	walk.steps = pos->steps;
	while ((page = simhash_chain_next(&walk)) != NULL)
	{
		int n = simhash_buf_nentries(scan->indexRelation, walk.buf, SIMHASH_ENTRY_SIZE);

		for (int i = 0; i < n; i++)
		{
			const char	   *ent = SimhashPageEntry(page, i);
			uint64			fp = simhash_entry_key(ent);
			ItemPointerData tid;

			if (radius >= 0 && simhash_hamming(fp, q) > radius)
				continue;
			simhash_entry_tid(ent, &tid);
			visit(so, fp, &tid, arg);
		}
		pos->prev = walk.blkno;
		pos->next = SimhashPageGetOpaque(page)->next;
		pos->steps = walk.steps;
		if (limit >= 0 && so->nhits >= limit)
			break;
	}
	simhash_chain_end(&walk);
	if (walk.lost)
	{
		so->stale = true;
		so->stale_blkno = walk.blkno;
		pos->next = InvalidBlockNumber;
	}
}

/* Every entry of a chain starting at blkno (see scan_chain_from). */
void
simhash_scan_chain(IndexScanDesc scan, BlockNumber blkno, uint32 chain, uint64 q, int radius,
				   SimhashVisit visit, void *arg)
{
	SimhashChainPos pos = {blkno, SIMHASH_METAPAGE_BLKNO, 0};

	scan_chain_from(scan, &pos, chain, q, radius, visit, arg, -1);
}

/*
 * Every table's probes (the prefixes up to `flips` bits away, flips - 1 from
 * table `split` on), then the pending rows within radius of q, sealed chain
 * first.  The visitors of both callers keep no row farther than radius from
 * q (radius scans: q and radius are one of the conditions; KNN: the band ends
 * at radius).
 */
void
simhash_probe_all(IndexScanDesc scan, uint64 q, int radius, int flips, int split,
				  SimhashVisit visit)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;
	int				  t;

	for (t = so->resume ? so->pos.t : 0; t < so->ntables; t++)
	{
		CHECK_FOR_INTERRUPTS();
		simhash_probe_table(scan, t, q, radius, flips, split, false, visit, NULL);
		if (so->stop)
			return;
	}
	/* the pending rows, at most twice pending_pages pages: in one batch */
	simhash_scan_chain(scan, so->meta.sealed_head, so->meta.sealed_chain, q, radius, visit, NULL);
	simhash_scan_chain(scan, so->meta.pending_head, so->meta.pending_chain, q, radius, visit, NULL);
}

/* ---- reading chains and whole runs for scan.c and knn.c ----------------- */

/* Every pending row, sealed chain first. */
void
simhash_scan_pending(IndexScanDesc scan, SimhashVisit visit)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;

	simhash_scan_chain(scan, so->meta.sealed_head, so->meta.sealed_chain, 0, -1, visit, NULL);
	simhash_scan_chain(scan, so->meta.pending_head, so->meta.pending_chain, 0, -1, visit, NULL);
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
