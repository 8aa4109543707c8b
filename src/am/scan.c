/*
 * scan.c — index scans: radius queries by probing the permuted tables,
 * linear passes above `bits`, exact k-nearest-neighbour ordering.
 *
 * A scan copies the metapage once (see the locking protocol in
 * simhash_am.h), collects its answers into an array, and returns them.
 * KNN's order beyond the first probe level is knn.c's.
 */
#include "simhash_am.h"
#include "scan_int.h"

#include "access/relscan.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "port/pg_bitutils.h"
#include "storage/lmgr.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"

static void dir_cache_reset(SimhashScanOpaque so);

/* ---- the scan/VACUUM interlock (simhash_am.h) ---------------------------- */

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
	dir_cache_reset(so);
	so->started = false;
	so->hits = NULL;
	so->nhits = so->maxhits = so->next = 0;
	so->phase = SIMHASH_PHASE_DONE;
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

	if (((PageHeader) page)->pd_special != BLCKSZ - MAXALIGN(sizeof(SimhashPageOpaqueData)))
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
 * (see simhash_am.h): the page itself is wrong.
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

/* The metapage copy must describe the layout it names. */
static void
check_meta(IndexScanDesc scan)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;
	int				  r;

	if (so->meta.ntables != so->ntables)
		corrupt_block(scan->indexRelation, SIMHASH_METAPAGE_BLKNO,
					  "The metapage's table count does not match its layout.");
	/* pages may hold fewer entries than they were written with (VACUUM) */
	for (r = 0; r < so->meta.list.nruns; r++)
		if (so->meta.list.runs[r].npages == 0 ||
			so->meta.list.runs[r].count >
				(uint64) so->meta.list.runs[r].npages * SIMHASH_PAGE_CAPACITY)
			corrupt_block(scan->indexRelation, SIMHASH_RUNLIST_BLKNO,
						  "A run's page count does not match its entry count.");
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
		if (simhash_hamming(key, c->qkey) > c->radius)
			continue;
		fp = sh_table_unpermute(c->tab, key);
		if (c->exact ? !owned_at(so, c->t, fp ^ c->q, c->flips)
					 : !sh_table_first_match_flips(so->tables, c->t, fp, c->q, c->flips))
			continue;
		simhash_entry_tid(ent, &tid);
		c->visit(so, fp, &tid, c->arg);
	}
	/* the page's hikey: its last key when written, now an upper bound */
	if (current && SimhashPageGetOpaque(page)->hikey > hi)
		more = false;
	LockBuffer(buf, BUFFER_LOCK_UNLOCK);
	return more;
}

/*
 * The directory of run c->r, table c->t, copied into scan memory by its
 * second probe (a scan that probes it once, as a radius query up to `bits`
 * does, reads the pages it needs); NULL before that, when it does not fit in what is left of the cache's budget (a
 * quarter of work_mem) or a page of it was recycled (then so->stale is set:
 * the scan starts over from a fresh metapage with an empty cache, or fails).
 * The copy stays good for the scan: a run page is only read after checking
 * its generation and table, as the pages of the directory were.
 */
static SimhashDirCache *
dir_cache_get(ProbeCtx *c)
{
	SimhashScanOpaque so = (SimhashScanOpaque) c->scan->opaque;
	Relation		  index = c->scan->indexRelation;
	const SimhashRun *run = &so->meta.list.runs[c->r];
	BlockNumber		  dstart = simhash_meta_dir(&so->meta, c->r, c->t);
	BlockNumber		  ndir = SimhashDirPages(run->npages);
	SimhashDirCache	 *d;
	Size			  bytes = (Size) run->npages * (sizeof(uint64) + sizeof(BlockNumber));
	BlockNumber		  p;
	int				  n = 0;

	if (so->dirs == NULL)
		so->dirs = MemoryContextAllocZero(so->cxt, sizeof(SimhashDirCache) * so->meta.list.nruns *
													   so->ntables);
	d = &so->dirs[c->r * so->ntables + c->t];
	if (d->loaded)
		return d->n >= 0 ? d : NULL;
	if (d->probes++ == 0)
		return NULL;
	d->loaded = true;
	d->n = -1;
	if (bytes > so->dir_budget)
		return NULL;
	d->hikeys = MemoryContextAlloc(so->cxt, sizeof(uint64) * Max(run->npages, 1));
	d->blocks = MemoryContextAlloc(so->cxt, sizeof(BlockNumber) * Max(run->npages, 1));
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
	check_dir_link(c->scan, c->r, dstart);
	cache = dir_cache_get(c);
	if (cache != NULL)
	{
		int a = c->dir_hint, b = cache->n, step = 1;

		/*
		 * The first run page whose hikey is >= lo, searched from the page of
		 * the previous range, by doubling steps, then by halving: probes come
		 * in key order (exact levels), usually a few pages apart.
		 */
		if (a > cache->n || (a > 0 && cache->hikeys[a - 1] >= lo))
			a = 0;
		else
		{
			for (b = a; b < cache->n && cache->hikeys[b] < lo; step *= 2)
			{
				a = b + 1;
				b = Min(b + step, cache->n);
			}
		}
		while (a < b)
		{
			int mid = a + (b - a) / 2;

			if (cache->hikeys[mid] < lo)
				a = mid + 1;
			else
				b = mid;
		}
		c->dir_hint = a;
		for (; more && a < cache->n; a++)
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

			/* read the run page without holding the directory page's lock */
			LockBuffer(dbuf, BUFFER_LOCK_UNLOCK);
			check_link(c->scan, dstart + l, blkno);
			more = scan_run_page(c, blkno, l * SIMHASH_DIR_CAPACITY + i, lo, hi, -1);
			LockBuffer(dbuf, BUFFER_LOCK_SHARE);
			if (!page_current(c->scan, dbuf, SIMHASH_DIR, run->gen, c->t))
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
	uint64 lo = (c->qkey ^ flip) & c->tab->prefix_key_mask;
	int	   b;

	CHECK_FOR_INTERRUPTS();
	for (c->r = 0; c->r < so_nruns(c->scan); c->r++)
		range_scan(c, lo, lo | ~c->tab->prefix_key_mask);
	if (left == 0)
		return;
	for (b = from; b < c->tab->prefix_bits; b++)
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

/* Every entry of a chain (pending, sealed or NULLs) starting at blkno. */
static void
scan_chain(IndexScanDesc scan, BlockNumber blkno, uint32 chain, SimhashVisit visit, void *arg)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;
	BlockNumber		  nblocks = 0;
	BlockNumber		  steps = 0;
	BlockNumber		  prev = SIMHASH_METAPAGE_BLKNO;

	while (BlockNumberIsValid(blkno))
	{
		Buffer buf;
		Page   page;
		int	   n, i;

		simhash_check_link(scan->indexRelation, prev, blkno, 0, &nblocks);
		buf = ReadBuffer(scan->indexRelation, blkno);

		CHECK_FOR_INTERRUPTS();
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buf);
		/* NULLs pages (chain 0) are compacted in place, never recycled */
		if (chain != 0 && !page_current(scan, buf, SIMHASH_PENDING, chain, -1))
		{
			UnlockReleaseBuffer(buf);
			break;
		}
		check_chain_page(scan->indexRelation, buf, chain, ++steps, nblocks);
		n = page_nentries(scan->indexRelation, buf, SIMHASH_ENTRY_SIZE);
		for (i = 0; i < n; i++)
		{
			const char	   *ent = SimhashPageEntry(page, i);
			ItemPointerData tid;

			simhash_entry_tid(ent, &tid);
			visit(so, simhash_entry_key(ent), &tid, arg);
		}
		prev = blkno;
		blkno = SimhashPageGetOpaque(page)->next;
		UnlockReleaseBuffer(buf);
	}
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

	/* a merge's input whose table 0 the new run holds already */
	if (!BlockNumberIsValid(dstart))
		return;
	check_dir_link(scan, r, dstart);

	for (d = 0; d < SimhashDirPages(run->npages); d++)
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
		for (p = 0; p < n; p++)
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
			for (i = 0; i < k; i++)
			{
				const char	   *ent = SimhashPageEntry(page, i);
				ItemPointerData tid;

				simhash_entry_tid(ent, &tid);
				visit(so, sh_table_unpermute(tab, simhash_entry_key(ent)), &tid, arg);
			}
			UnlockReleaseBuffer(buf);
			if (!current)
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

	for (r = 0; r < so->meta.list.nruns; r++)
		scan_run(scan, r, visit, arg);
	scan_chain(scan, so->meta.sealed_head, so->meta.sealed_chain, visit, arg);
	scan_chain(scan, so->meta.pending_head, so->meta.pending_chain, visit, arg);
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
	add_hit(so, fp, tid, so->has_order && !so->order_null ? simhash_hamming(fp, so->order_q) : -1,
			false);
}

/* Visitor of the NULLs chain: a hit with no distance. */
static void
visit_null(SimhashScanOpaque so, uint64 fp, ItemPointer tid, void *arg)
{
	add_hit(so, 0, tid, -1, true);
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
 * Every table's probes (the prefixes up to `flips` bits away), then every
 * pending row, sealed chain first.
 */
static void
probe_all(IndexScanDesc scan, uint64 q, int radius, int flips, SimhashVisit visit)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;
	int				  t;

	for (t = 0; t < so->ntables; t++)
	{
		CHECK_FOR_INTERRUPTS();
		probe_table(scan, t, q, radius, flips, false, visit, NULL);
	}
	scan_chain(scan, so->meta.sealed_head, so->meta.sealed_chain, visit, NULL);
	scan_chain(scan, so->meta.pending_head, so->meta.pending_chain, visit, NULL);
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
	probe_table(scan, t, q, radius, flips, true, visit, NULL);
}

/* Every pending row, sealed chain first. */
void
simhash_scan_pending(IndexScanDesc scan, SimhashVisit visit)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;

	scan_chain(scan, so->meta.sealed_head, so->meta.sealed_chain, visit, NULL);
	scan_chain(scan, so->meta.pending_head, so->meta.pending_chain, visit, NULL);
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

static void collect(IndexScanDesc scan);

/*
 * Collect the first answers from a fresh copy of the metapage; start over if
 * a page turned out recycled (possible on a hot standby, see simhash_am.h).
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
		collect(scan);
		if (!so->stale)
			return;
		check_stale(scan);
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
	dir_cache_reset(so);

	if (so->never)
		so->phase = SIMHASH_PHASE_DONE;
	else if (so->nconds > 0)
	{
		SimhashReadModel m;
		int				 driver = 0, i, flips;

		for (i = 1; i < so->nconds; i++)
			if (so->conds[i].radius < so->conds[driver].radius)
				driver = i;
		simhash_read_model(&so->meta, &m);
		flips = simhash_radius_plan(&m, so->conds[driver].radius, NULL);
		if (flips >= 0)
			probe_all(scan, so->conds[driver].q, so->conds[driver].radius, flips, visit_filtered);
		else
			scan_all(scan, visit_filtered, NULL);
		if (so->has_order && !so->order_null)
			qsort(so->hits, so->nhits, sizeof(SimhashHit), hit_cmp);
		so->phase = SIMHASH_PHASE_DONE;
	}
	else if (so->has_order && !so->order_null)
		simhash_knn_start(scan);
	else
	{
		/* full scan: every row, NULLs last */
		scan_all(scan, visit_filtered, NULL);
		so->phase = SIMHASH_PHASE_NULLS;
	}
	MemoryContextSwitchTo(old);
}

/* Refill the hit array: KNN's next rows (knn.c), then the NULLs. */
static void
next_batch(IndexScanDesc scan)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;
	MemoryContext	  old = MemoryContextSwitchTo(so->cxt);

	so->nhits = so->next = 0;
	while (so->nhits == 0 && so->phase != SIMHASH_PHASE_DONE)
	{
		if (so->phase == SIMHASH_PHASE_NULLS)
		{
			scan_chain(scan, so->meta.nulls_head, 0, visit_null, NULL);
			so->phase = SIMHASH_PHASE_DONE;
		}
		else
			simhash_knn_next(scan);
	}
	if (so->stale)
	{
		check_stale(scan);
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
		 * carry holds TIDs of earlier steps, so it keeps the interlock.
		 */
		if (so->phase == SIMHASH_PHASE_NULLS)
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

	if (!so->started)
		start_scan(scan);
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
