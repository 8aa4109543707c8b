/*
 * scanpage.c — the checked reads of an index scan: links and pages checked
 * against the scan's copy of the metapage (through the page layer), and
 * what a page that is no longer the one the copy names means (a recycled
 * page: the scan starts over; an unchanged metapage: corruption).  Used by
 * the probes (probe.c), KNN's steps (knn.c), the directory cache
 * (dirstore.c) and the prefix filters (filter.c); and the search for a key
 * among a run page's entries (probes, listed probes, sweeps).
 */
#include "simhash_am.h"
#include "page.h"
#include "scan_int.h"
#include "probe.h"
#include "probe_int.h"

#include "access/relscan.h"

/*
 * A block number read from page `from` (the run list, a directory page)
 * must lie inside the index before it is read: InvalidBlockNumber is P_NEW,
 * which would extend the file.
 */
void
simhash_scan_check_link(IndexScanDesc scan, BlockNumber from, BlockNumber blkno)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;

	simhash_check_link(scan->indexRelation, from, blkno, 0, &so->nblocks);
}

/* The directory pages of run r, table t (contiguous), inside the index. */
void
simhash_scan_check_dir_link(IndexScanDesc scan, int r, BlockNumber dstart)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;
	BlockNumber		  ndir = SimhashDirPages(so->meta.list.runs[r].npages);

	simhash_scan_check_link(scan, SIMHASH_RUNLIST_BLKNO, dstart);
	if (ndir > 1)
		simhash_scan_check_link(scan, SIMHASH_RUNLIST_BLKNO,
								dstart + ndir - 1 < dstart ? InvalidBlockNumber
														   : dstart + ndir - 1);
}


/*
 * Is this still the page the copied metapage points to?  A page keeps its
 * kind's flag or DELETED, and its generation, until it is recycled
 * (simhash_page_check); one that is not marks the scan stale.
 */
bool
simhash_scan_page_current(IndexScanDesc scan, Buffer buf, uint16 kind, uint32 gen, int table)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;

	if (simhash_page_check(scan->indexRelation, BufferGetPage(buf), BufferGetBlockNumber(buf), kind,
						   gen, table, SIMHASH_PAGE_TRY))
		return true;
	so->stale = true;
	so->stale_blkno = BufferGetBlockNumber(buf);
	return false;
}

/*
 * Run page p of table t of run `run`, pinned in buf, share-locked and
 * checked: its entries, or -1 when it is no longer that page (the buffer
 * then released, so->stale set: the scan starts over).
 */
int
simhash_scan_lock_run_page(IndexScanDesc scan, Buffer buf, const SimhashRun *run, int t,
						   BlockNumber p)
{
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	if (!simhash_scan_page_current(scan, buf, SIMHASH_RUN, run->gen, t))
	{
		UnlockReleaseBuffer(buf);
		return -1;
	}
	return simhash_run_page_nentries(scan->indexRelation, buf, run, p);
}

/*
 * The entries of page p of a run: every page but the last was written full,
 * and VACUUM counts on the page the entries it removed in place, so a
 * damaged page cannot hide rows.
 */
int
simhash_run_page_nentries(Relation index, Buffer buf, const SimhashRun *run, BlockNumber p)
{
	int n = simhash_buf_nentries(index, buf, SIMHASH_ENTRY_SIZE);
	int written = n + SimhashPageGetOpaque(BufferGetPage(buf))->removed;

	if (p + 1 < run->npages ? written != SIMHASH_PAGE_CAPACITY
							: written < 1 || written > SIMHASH_PAGE_CAPACITY)
		simhash_corrupt_block(index, BufferGetBlockNumber(buf),
							  "The run page holds fewer or more entries than the run list accounts "
							  "for.");
	return n;
}

/*
 * A page was not the one the metapage copy points to.  If the metapage still
 * names the same runs and chains, no flush or merge can have recycled it
 * (see src/am/README): the page itself is wrong.
 */
void
simhash_check_stale(IndexScanDesc scan)
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
	simhash_corrupt_block(scan->indexRelation, so->stale_blkno,
						  "The page is not the run, directory or pending page the metapage points "
						  "to.");
}

/*
 * The first of the n entries of a run page whose key is >= lo, searched from
 * entry `guess` outwards by doubling steps, then by halving the bracket.
 * Keys are near uniform between two hikeys, so a guess by interpolation
 * lands a few entries away, and the search touches a few cache lines of the
 * page where a plain binary search touches a dozen.
 */
int
simhash_first_at_least(Page page, int n, uint64 lo, int guess)
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
 * The first of a run page's n entries whose key is `key`, or where it would
 * be: a kept key's place among the page's kept keys (guess) is its place on
 * the page while VACUUM has removed nothing before it, else it is searched.
 */
int
simhash_first_with_key(Page page, int n, uint64 key, int guess)
{
	int first;

	if (guess < 0 || guess >= n || simhash_entry_key(SimhashPageEntry(page, guess)) != key)
		return simhash_first_at_least(page, n, key, Min(Max(guess, 0), n));
	first = guess;
	while (first > 0 && simhash_entry_key(SimhashPageEntry(page, first - 1)) == key)
		first--;
	return first;
}
