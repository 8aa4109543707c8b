/*
 * dirstore.c — run directories kept by a backend across scans.
 *
 * A KNN query probes every (run, table) directory, and copying them into
 * scan memory (12 bytes per run page: 340 kB at 4M rows) cost more than a
 * tenth of a LIMIT 10 query, plus the page faults of allocating that much
 * afresh each time.  A directory never changes once written: a run's
 * generation names it for the life of the index (merges and flushes write
 * new runs under new generations; VACUUM removes entries from run pages in
 * place, leaving hikeys as upper bounds).  So the copy made by one scan
 * serves the next scans of the same backend, keyed by the index's OID, its
 * file, the run's generation, the table and the directory's first block;
 * every run page read through it is still checked for its generation and
 * table, as always.
 *
 * The store drops an index's directories on any relcache invalidation of it
 * (DROP, REINDEX, TRUNCATE, VACUUM's statistics), so a later index that
 * reuses the OID or the file never meets them.  It holds at most a quarter
 * of work_mem (as a scan's own copies did); beyond, it evicts the least
 * recently used directories of runs other scans' metapages no longer list,
 * or of other indexes, never those of the runs the asking scan lists: that
 * scan keeps its own copy instead.  A scan keeps pointers into the store
 * only within one call of the access method; across calls it checks the
 * store's epoch, which every removal advances.
 *
 * Each directory also keeps, per run page, the buffer it was last found in,
 * for ReadRecentBuffer(): a pin without the buffer mapping table's lookup,
 * which was a quarter of a KNN query's time.
 *
 * The directory of a run's table may also keep the keys of its run pages,
 * 8 bytes a row, packed in page order (simhash_dirstore_load_keys): table 0's
 * for the sweep (sweep.c), as its first sweep reads them (reading a run page
 * cost 1.2-1.9 us at 1M rows, filtering its 581 keys from a packed array a
 * fifth of that), and any table's for the listed probes (probe_list.c) once
 * the probes of that run and table have read as many pages as it has
 * (simhash_dirstore_probed: keeping them costs at most what the probes have
 * spent), all of them or none.  The keys are a copy of
 * the pages as they were read; VACUUM removes entries in place and nothing
 * adds any, so the copy holds every entry still on those pages, and the
 * sweep looks up on the page the keys it finds in range.  All keys kept
 * count against simhash.sweep_cache_size, apart from the directories'
 * quarter of work_mem; beyond it the least recently used keys of runs the
 * asking scan does not list go first, and a run whose keys do not all fit
 * keeps those of its first pages.
 */
#include "simhash_am.h"
#include "scan_int.h"
#include "dirstore.h"
#include "probe_int.h"

#include "utils/inval.h"
#include "utils/memutils.h"

#include <sys/mman.h>

typedef struct StoredDir
{
	Oid				relid;
	SimhashRelFile	file;
	uint32			gen;
	int				table;
	BlockNumber		dstart;
	uint64			used; /* the store's clock at the last lookup */
	Size			bytes;
	Size			key_bytes; /* dir.keys and dir.kstart */
	bool			keys_tried;
	uint64			probed; /* run pages its listed probes read (simhash_dirstore_probed) */
	SimhashDirCache dir;
} StoredDir;

static MemoryContext store_cxt = NULL;
static StoredDir   **stored = NULL;
static int			 nstored = 0, maxstored = 0;
static Size			 store_bytes = 0;
static Size			 store_key_bytes = 0;
static uint64		 store_clock = 0;
static uint64		 store_epoch = 1;

/* The bytes the store charges for a directory of npages run pages. */
Size
simhash_dirstore_dir_bytes(double npages)
{
	return (Size) (npages * (sizeof(uint64) + sizeof(BlockNumber) + sizeof(Buffer)));
}

/* What the store's directories may take: a quarter of work_mem. */
Size
simhash_dirstore_budget(void)
{
	return (Size) work_mem * 1024 / 4;
}

/* Forget the keys directory s keeps (scans that copied it see the epoch move). */
static void
store_drop_keys(StoredDir *s)
{
	if (s->dir.keys != NULL)
		pfree(unconstify(uint64 *, s->dir.keys));
	if (s->dir.kstart != NULL)
		pfree(unconstify(uint32 *, s->dir.kstart));
	if (s->dir.kbucket != NULL)
		pfree(unconstify(uint32 *, s->dir.kbucket));
	s->dir.keys = NULL;
	s->dir.kstart = NULL;
	s->dir.kbucket = NULL;
	s->dir.nkeyed = 0;
	store_key_bytes -= s->key_bytes;
	s->key_bytes = 0;
	store_epoch++;
}

/* Forget directory i (the last one takes its place). */
static void
store_remove(int i)
{
	StoredDir *s = stored[i];

	store_drop_keys(s);
	store_bytes -= s->bytes;
	pfree(s->dir.hikeys);
	pfree(s->dir.blocks);
	pfree(s->dir.recent);
	pfree(s);
	stored[i] = stored[--nstored];
	store_epoch++;
}

/* A relcache invalidation: the directories of relid (InvalidOid: all). */
static void
store_invalidate(Datum arg, Oid relid)
{
	for (int i = nstored - 1; i >= 0; i--)
		if (!OidIsValid(relid) || stored[i]->relid == relid)
			store_remove(i);
}

uint64
simhash_dirstore_epoch(void)
{
	return store_epoch;
}

/* The stored directory of (gen, table) of this index, or NULL. */
SimhashDirCache *
simhash_dirstore_get(Relation index, uint32 gen, int table, BlockNumber dstart, BlockNumber npages)
{
	for (int i = 0; i < nstored; i++)
	{
		StoredDir *s = stored[i];

		if (s->gen == gen && s->table == table && s->relid == RelationGetRelid(index) &&
			s->dstart == dstart && s->dir.n == (int) npages &&
			SimhashRelFileEquals(s->file, SimhashRelationFile(index)))
		{
			s->used = ++store_clock;
			return &s->dir;
		}
	}
	return NULL;
}

/* Does the scan's metapage copy list run `gen`? */
static bool
listed(const SimhashMetaPageData *meta, uint32 gen)
{
	for (int r = 0; r < meta->list.nruns; r++)
		if (meta->list.runs[r].gen == gen)
			return true;
	return false;
}

/*
 * The least recently used directory (with keys kept, when keyed) that is not
 * of a run the scan's metapage copy lists (any, when index is NULL); -1 when
 * there is none.
 */
static int
lru_victim(Relation index, const SimhashMetaPageData *meta, bool keyed)
{
	int victim = -1;

	for (int i = 0; i < nstored; i++)
	{
		StoredDir *s = stored[i];

		if ((keyed && s->key_bytes == 0) ||
			(index != NULL && s->relid == RelationGetRelid(index) && listed(meta, s->gen)))
			continue;
		if (victim < 0 || s->used < stored[victim]->used)
			victim = i;
	}
	return victim;
}

/*
 * Room for `bytes` more: the least recently used directories that are not
 * of a run the scan's metapage copy lists go first.  False if there is not.
 */
static bool
store_make_room(Relation index, const SimhashMetaPageData *meta, Size bytes, Size budget)
{
	while (store_bytes + bytes > budget)
	{
		int victim = lru_victim(index, meta, false);

		if (victim < 0)
			return false;
		store_remove(victim);
	}
	return true;
}

/*
 * Keep a copy of a directory the scan has read (n pages, checked); returns
 * the stored copy, or NULL when it does not fit.
 */
SimhashDirCache *
simhash_dirstore_put(Relation index, const SimhashMetaPageData *meta, uint32 gen, int table,
					 BlockNumber dstart, const SimhashDirCache *dir)
{
	Size		  bytes = simhash_dirstore_dir_bytes(dir->n);
	Size		  budget = simhash_dirstore_budget();
	StoredDir	 *s;
	MemoryContext old;
	static bool	  registered = false;

	if (bytes > budget || !store_make_room(index, meta, bytes, budget))
		return NULL;
	if (store_cxt == NULL)
		store_cxt = AllocSetContextCreate(TopMemoryContext, "simhash run directories",
										  SIMHASH_CONTEXT_SIZES);
	if (!registered)
	{
		CacheRegisterRelcacheCallback(store_invalidate, (Datum) 0);
		registered = true;
	}
	old = MemoryContextSwitchTo(store_cxt);
	if (nstored == maxstored)
	{
		maxstored = Max(16, maxstored * 2);
		stored = stored == NULL ? palloc(sizeof(StoredDir *) * maxstored)
								: repalloc(stored, sizeof(StoredDir *) * maxstored);
	}
	s = palloc0(sizeof(StoredDir));
	s->relid = RelationGetRelid(index);
	s->file = SimhashRelationFile(index);
	s->gen = gen;
	s->table = table;
	s->dstart = dstart;
	s->bytes = bytes;
	s->used = ++store_clock;
	s->dir.loaded = true;
	s->dir.n = dir->n;
	s->dir.hikeys = palloc(sizeof(uint64) * Max(dir->n, 1));
	s->dir.blocks = palloc(sizeof(BlockNumber) * Max(dir->n, 1));
	s->dir.recent = palloc0(sizeof(Buffer) * Max(dir->n, 1));
	memcpy(s->dir.hikeys, dir->hikeys, sizeof(uint64) * dir->n);
	memcpy(s->dir.blocks, dir->blocks, sizeof(BlockNumber) * dir->n);
	MemoryContextSwitchTo(old);
	stored[nstored++] = s;
	store_bytes += bytes;
	return &s->dir;
}

/*
 * Room for `bytes` more keys within `budget`: the least recently used keys of
 * runs the scan's metapage copy does not list go first (their directories
 * stay).  Stops when none is left to drop.
 */
static void
keys_make_room(Relation index, const SimhashMetaPageData *meta, Size bytes, Size budget)
{
	while (store_key_bytes + bytes > budget)
	{
		int victim = lru_victim(index, meta, true);

		if (victim < 0)
			return;
		store_drop_keys(stored[victim]);
		stored[victim]->keys_tried = false;
	}
}

/*
 * The stored directory a scan's copy d is of, if the store still holds it
 * (d's epoch is the store's: nothing was removed since d was copied); NULL
 * if not.
 */
static StoredDir *
stored_of(const SimhashDirCache *d)
{
	if (!d->stored || d->epoch != store_epoch)
		return NULL;
	for (int i = 0; i < nstored; i++)
		if (stored[i]->dir.hikeys == d->hikeys)
			return stored[i];
	return NULL;
}

/*
 * Ask the kernel to back the whole 2 MB pages of a key array with huge pages
 * (Linux, transparent huge pages in "madvise" or "always" mode): the probes
 * of simhash_probe_listed touch the keys of a few hundred ranges scattered
 * over hundreds of megabytes, and with 4 kB pages each first touch of a
 * range also missed the TLB.  A hint: nothing changes where it is refused.
 */
static void
keys_huge_pages(void *keys, Size bytes)
{
#if defined(MADV_HUGEPAGE)
	const uintptr_t huge = (uintptr_t) 2 * 1024 * 1024;
	uintptr_t		from = ((uintptr_t) keys + huge - 1) & ~(huge - 1);
	uintptr_t		to = ((uintptr_t) keys + bytes) & ~(huge - 1);

	if (to > from)
		(void) madvise((void *) from, to - from, MADV_HUGEPAGE);
#else
	(void) keys;
	(void) bytes;
#endif
}

/*
 * The prefix bits of kept keys' bucket index (SimhashDirCache.kbucket) for
 * up to cap keys of a table whose keys' prefixes are prefix_bits wide: 32 to
 * 64 keys a bucket, and up to the prefix's width while a bucket holds 8 to
 * 16 (then every prefix range starts and ends on a bucket's edge: two loads,
 * no search); 1 to 24 bits (4 bytes a bucket, at most half a byte a key: a
 * quarter at 1M rows, a tenth at 10M).
 */
static int
kbucket_bits(Size cap, int prefix_bits)
{
	int bits = 1;

	while (bits < 24 &&
		   (((Size) 64 << bits) < cap || (bits < prefix_bits && ((Size) 16 << bits) < cap)))
		bits++;
	return bits;
}

/* The bytes of a bucket index of `bits` bits. */
static Size
kbucket_bytes(int bits)
{
	return sizeof(uint32) * (((Size) 1 << bits) + 1);
}

/*
 * The bucket index of s's kept keys (every page's, in increasing order), in
 * bytes already charged to the store; false when it cannot be allocated
 * (the probes then read the pages).
 */
static bool
kbucket_build(StoredDir *s, uint32 used, int bits)
{
	Size	nb = (Size) 1 << bits;
	int		shift = 64 - bits;
	uint32 *kb = MemoryContextAllocExtended(store_cxt, kbucket_bytes(bits),
											MCXT_ALLOC_HUGE | MCXT_ALLOC_NO_OOM);
	uint32	g = 0;

	if (kb == NULL)
		return false;
	for (Size b = 0; b <= nb; b++)
	{
		while (g < used && (s->dir.keys[g] >> shift) < b)
			g++;
		kb[b] = g;
	}
	s->dir.kbucket = kb;
	s->dir.kshift = shift;
	return true;
}

/*
 * Keep the keys of run r's table whose directory the scan's copy d lists
 * (the backend's: d->stored): every run page read in order, as the sweep
 * does, and its keys copied, for as many pages as simhash.sweep_cache_size
 * leaves room for (the sweep), or, when `whole`, all of them or none (the
 * probes).  Tried once per stored directory (again after its keys
 * were dropped).  A page recycled since the scan's metapage copy stops it
 * (so->stale: the scan starts over); the keys of the pages before stay.
 */
void
simhash_dirstore_load_keys(IndexScanDesc scan, int r, SimhashDirCache *d, bool whole)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;
	Relation		  index = scan->indexRelation;
	const SimhashRun *run = &so->meta.list.runs[r];
	Size			  budget = (Size) simhash_sweep_cache_size * 1024;
	StoredDir		 *s = budget == 0 ? NULL : stored_of(d);
	Size			  kstart_bytes, room, cap;
	uint64			 *keys;
	uint32			 *kstart;
	uint32			  used = 0;
	int				  bits;

	if (s == NULL || s->keys_tried || s->dir.n <= 0)
		return;
	s->keys_tried = true;
	cap = Min((Size) run->count, (Size) s->dir.n * SIMHASH_PAGE_CAPACITY);
	/* the page offsets, and the bucket index if every page's keys are kept */
	bits = kbucket_bits(cap, so->tables[s->table].prefix_bits);
	kstart_bytes = sizeof(uint32) * (s->dir.n + 1) + kbucket_bytes(bits);
	/* keys that could never fit whole evict nobody's */
	if (whole && kstart_bytes + cap * sizeof(uint64) > budget)
		return;
	keys_make_room(index, &so->meta, kstart_bytes + cap * sizeof(uint64), budget);
	room = budget > store_key_bytes + kstart_bytes ? budget - store_key_bytes - kstart_bytes : 0;
	/* the probes take only a run's keys whole (simhash_probe_listed) */
	if (whole && Min(room, MaxAllocHugeSize) / sizeof(uint64) < cap)
		return;
	cap = Min(cap, Min(room, MaxAllocHugeSize) / sizeof(uint64));
	if (cap < SIMHASH_PAGE_CAPACITY)
		return;
	kstart = MemoryContextAllocExtended(store_cxt, sizeof(uint32) * (s->dir.n + 1),
										MCXT_ALLOC_HUGE | MCXT_ALLOC_NO_OOM);
	keys = kstart == NULL ? NULL
						  : MemoryContextAllocExtended(store_cxt, cap * sizeof(uint64),
													   MCXT_ALLOC_HUGE | MCXT_ALLOC_NO_OOM);
	if (keys == NULL)
	{
		if (kstart != NULL)
			pfree(kstart);
		return;
	}
	keys_huge_pages(keys, cap * sizeof(uint64));
	/* kept as soon as allocated: an error midway leaves the pages done so far */
	kstart[0] = 0;
	s->dir.keys = keys;
	s->dir.kstart = kstart;
	s->dir.nkeyed = 0;
	s->key_bytes = kstart_bytes + cap * sizeof(uint64);
	store_key_bytes += s->key_bytes;
	for (int p = 0; p < s->dir.n; p++)
	{
		Buffer buf;
		Page   page;
		int	   n;

		CHECK_FOR_INTERRUPTS();
		buf = simhash_dir_read_page(index, &s->dir, p);
		n = simhash_scan_lock_run_page(scan, buf, run, s->table, (BlockNumber) p);
		if (n < 0)
			break;
		if (used + (Size) n > cap)
		{
			UnlockReleaseBuffer(buf);
			break;
		}
		page = BufferGetPage(buf);
		for (int e = 0; e < n; e++)
			keys[used + e] = simhash_entry_key(SimhashPageEntry(page, e));
		UnlockReleaseBuffer(buf);
		used += n;
		kstart[p + 1] = used;
		s->dir.nkeyed = p + 1;
	}
	if (s->dir.nkeyed == 0)
	{
		store_drop_keys(s);
		return;
	}
	if (used < cap)
	{
		/* what the pages held: the rest goes back */
		s->dir.keys = repalloc_huge(keys, Max(used, 1) * sizeof(uint64));
		store_key_bytes -= (cap - Max(used, 1)) * sizeof(uint64);
		s->key_bytes -= (cap - Max(used, 1)) * sizeof(uint64);
	}
	if (!(s->dir.nkeyed == s->dir.n && kbucket_build(s, used, bits)))
	{
		/* no bucket index: its bytes go back */
		store_key_bytes -= kbucket_bytes(bits);
		s->key_bytes -= kbucket_bytes(bits);
	}
	d->keys = s->dir.keys;
	d->kstart = s->dir.kstart;
	d->kbucket = s->dir.kbucket;
	d->kshift = s->dir.kshift;
	d->nkeyed = s->dir.nkeyed;
	d->epoch = store_epoch;
	ereport(DEBUG1,
			(errmsg_internal("simhash index \"%s\": keeping the keys of %d of the %d pages "
							 "of a run, %u rows",
							 RelationGetRelationName(index), s->dir.nkeyed, s->dir.n, used)));
}

/*
 * A listed probe read `pages` run pages through the stored directory d:
 * true once the probes of that run and table have read
 * as many pages as the run has, and its keys are not kept yet (nor tried),
 * so that keeping them (reading every page once) costs at most what the
 * probes have already spent; the caller then keeps them
 * (simhash_dirstore_load_keys), when simhash.sweep_cache_size holds them.
 */
bool
simhash_dirstore_probed(const SimhashDirCache *d, int pages)
{
	StoredDir *s = simhash_sweep_cache_size == 0 ? NULL : stored_of(d);

	if (s == NULL || s->keys_tried || s->dir.keys != NULL)
		return false;
	s->probed += (uint64) pages;
	return s->probed >= (uint64) s->dir.n;
}

/*
 * simhash.sweep_cache_size lowered below the keys kept: the least recently
 * used go first, until the rest fit (the scans that copied them see the
 * epoch move, and read or keep again within the new size).
 */
static void
keys_trim(void)
{
	int dropped = 0;

	while (store_key_bytes > (Size) simhash_sweep_cache_size * 1024)
	{
		int victim = lru_victim(NULL, NULL, true);

		if (victim < 0)
			break;
		store_drop_keys(stored[victim]);
		stored[victim]->keys_tried = false;
		dropped++;
	}
	ereport(DEBUG1, (errmsg_internal("simhash: kept keys over simhash.sweep_cache_size (%d kB) "
									 "dropped, runs: %d",
									 simhash_sweep_cache_size, dropped)));
}

/* ---- a scan's directories: its own copies, or the backend's ------------- */

/*
 * The first directory entry at or after a whose hikey is >= lo (cache->n when
 * none is): hikeys ascend and every entry before a is known to be below lo.
 * Searched from a by doubling steps, then by halving the bracket, so a probe
 * a few pages after the previous one costs a few comparisons.
 */
int
simhash_dir_first_from(const SimhashDirCache *cache, int a, uint64 lo)
{
	int b = a;

	for (int step = 1; b < cache->n && cache->hikeys[b] < lo; step *= 2)
	{
		a = b + 1;
		b = Min(b + step, cache->n);
	}
	return (int) simhash_first_u64_at_least(cache->hikeys, (uint32) a, (uint32) b, lo);
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
SimhashDirCache *
simhash_dir_cache_get(ProbeCtx *c)
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
	if (store_key_bytes > (Size) simhash_sweep_cache_size * 1024)
		keys_trim();
	d = &so->dirs[c->r * so->ntables + c->t];
	if (d->loaded && d->stored && d->epoch != simhash_dirstore_epoch())
	{
		/* the store removed something: look again */
		d->loaded = d->stored = false;
		d->keys = NULL;
		d->kstart = NULL;
		d->kbucket = NULL;
		d->nkeyed = 0;
	}
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
		if (!simhash_scan_page_current(c->scan, buf, SIMHASH_DIR, run->gen, c->t))
		{
			UnlockReleaseBuffer(buf);
			pfree(d->hikeys);
			pfree(d->blocks);
			return NULL;
		}
		k = Min(simhash_buf_nentries(index, buf, SIMHASH_DIR_ENTRY_SIZE), (int) run->npages - n);
		for (e = 0; e < k; e++)
		{
			const char *ent = SimhashDirEntry(page, e);

			d->hikeys[n] = simhash_entry_key(ent);
			d->blocks[n] = simhash_dir_block(ent);
			n++;
		}
		UnlockReleaseBuffer(buf);
		for (e = n - k; e < n; e++)
			simhash_scan_check_link(c->scan, dstart + p, d->blocks[e]);
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

/*
 * Run page p of a cached directory, pinned: through the buffer it was last
 * found in when the directory is the backend's (ReadRecentBuffer: no lookup
 * in the buffer mapping table, which cost a quarter of a KNN query), else by
 * ReadBuffer, remembering the buffer.  The page is checked by the caller as
 * any other (simhash_scan_page_current), whichever way it came.
 */
Buffer
simhash_dir_read_page(Relation index, SimhashDirCache *cache, int p)
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

/* Forget the cached directories (they belong to the metapage copy). */
void
simhash_dir_cache_reset(SimhashScanOpaque so)
{
	so->dirs = NULL;
	so->dir_budget = simhash_dirstore_budget();
}
