/*
 * check.c — simhash_index_check(regclass): verify every page, the order and
 * directory of each run in each table, the per-run counts, that no page is
 * used twice, and that every heap row the index must hold is present
 * exactly once per table (in one run or the pending buffer).  Any failure raises
 * ERRCODE_INDEX_CORRUPTED naming the block and table.
 *
 * The heap is locked in ShareLock (no concurrent writers) for the check;
 * who may run it, and as whom, is decided in check_access.c.
 */
#include "simhash_am.h"
#include "runs.h"

#include "access/table.h"
#include "access/tableam.h"
#include "catalog/index.h"
#include "catalog/pg_am.h"
#include "catalog/pg_class.h"
#include "commands/defrem.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#define CORRUPT(index, ...) \
	ereport(ERROR, (errcode(ERRCODE_INDEX_CORRUPTED), \
					errmsg("simhash index \"%s\": " FIRST_ARG(__VA_ARGS__), \
						   RelationGetRelationName(index) REST_ARGS(__VA_ARGS__))))
#define FIRST_ARG(f, ...) f
#define REST_ARGS(f, ...) , ##__VA_ARGS__

/*
 * A private copy of block blkno, checked to be an initialised page of this
 * index (bounds, page id); reports corruption otherwise.
 */
static Page
read_page(Relation index, BlockNumber blkno, PGAlignedBlock *copy, BlockNumber nblocks)
{
	Buffer			  buf;
	PageHeader		  ph;
	SimhashPageOpaque opaque;

	if (blkno >= nblocks)
		CORRUPT(index, "block %u is beyond the end of the index (%u blocks)", blkno, nblocks);
	buf = ReadBuffer(index, blkno);
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	memcpy(copy->data, BufferGetPage(buf), BLCKSZ);
	UnlockReleaseBuffer(buf);
	ph = (PageHeader) copy->data;
	if (PageIsNew(copy->data))
		CORRUPT(index, "block %u is an uninitialised page where data was expected", blkno);
	if (ph->pd_special != SIMHASH_SPECIAL_OFFSET)
		CORRUPT(index, "block %u has special space at %u, not a simhash page", blkno,
				ph->pd_special);
	opaque = SimhashPageGetOpaque(copy->data);
	if (opaque->page_id != SIMHASH_PAGE_ID)
		CORRUPT(index, "block %u has page id %04x, expected %04x", blkno, opaque->page_id,
				SIMHASH_PAGE_ID);
	if (ph->pd_lower < MAXALIGN(SizeOfPageHeaderData) || ph->pd_lower > ph->pd_upper ||
		(!(opaque->flags & (SIMHASH_META | SIMHASH_RUNLIST)) &&
		 (ph->pd_lower - MAXALIGN(SizeOfPageHeaderData)) %
				 ((opaque->flags & SIMHASH_DIR) ? SIMHASH_DIR_ENTRY_SIZE : SIMHASH_ENTRY_SIZE) !=
			 0))
		CORRUPT(index, "block %u has invalid bounds pd_lower %u, pd_upper %u", blkno, ph->pd_lower,
				ph->pd_upper);
	return copy->data;
}

/* The entries of a chain; checks flags and length. */
static void
check_chain(Relation index, BlockNumber blkno, uint16 flag, uint32 chain, const char *what,
			uint64 expected, SimhashItemArray *out, BlockNumber nblocks)
{
	PGAlignedBlock copy;
	uint64		   n = 0;
	BlockNumber	   steps = 0;

	while (BlockNumberIsValid(blkno))
	{
		Page page = read_page(index, blkno, &copy, nblocks);
		int	 i, k = SimhashPageEntries(index, blkno, page);

		CHECK_FOR_INTERRUPTS();
		if (SimhashPageGetOpaque(page)->flags != flag)
			CORRUPT(index, "block %u of the %s chain has flags %04x, expected %04x", blkno, what,
					SimhashPageGetOpaque(page)->flags, flag);
		if (chain != 0 && SimhashPageGetOpaque(page)->gen != chain)
			CORRUPT(index, "block %u of the %s chain has chain id %u, expected %u", blkno, what,
					SimhashPageGetOpaque(page)->gen, chain);
		if (++steps > nblocks)
			CORRUPT(index, "the %s chain loops (at block %u)", what, blkno);
		for (i = 0; i < k; i++)
		{
			ItemPointerData tid;

			simhash_entry_tid(SimhashPageEntry(page, i), &tid);
			if (!ItemPointerIsValid(&tid))
				CORRUPT(index, "block %u entry %d of the %s chain has an invalid heap TID", blkno,
						i, what);
			if (out)
				simhash_items_push(out, simhash_entry_key(SimhashPageEntry(page, i)), &tid);
		}
		n += k;
		blkno = SimhashPageGetOpaque(page)->next;
	}
	if (n != expected)
		CORRUPT(index,
				"the %s chain holds " UINT64_FORMAT " entries, the metapage says " UINT64_FORMAT,
				what, n, expected);
}

/* Marks a block as referenced; a block referenced twice is corruption. */
static void
mark_used(Relation index, bool *used, BlockNumber blkno)
{
	if (used[blkno])
		CORRUPT(index, "block %u is referenced twice", blkno);
	used[blkno] = true;
}

/*
 * Table t of run r: its directory (contiguous pages of (hikey, block) in
 * order) and the run pages it lists (flags, table, generation, pages
 * written full but the last, with the entries VACUUM removed in place
 * counted on the page; keys in (key, TID) order, at most the page's hikey,
 * which matches the directory), the run's page and entry counts (not for an
 * uneven run, whose tables may differ by dead entries).  Appends the
 * entries, unpermuted, to have.
 */
static void
check_run(Relation index, const SimhashMetaPageData *meta, int r, int t, const sh_table *tab,
		  BlockNumber nblocks, bool *used, SimhashItemArray *have)
{
	const SimhashRun *run = &meta->list.runs[r];
	BlockNumber		  dstart = simhash_meta_dir(meta, r, t);
	BlockNumber		  ndir = SimhashDirPages(run->npages);
	BlockNumber		  d, p = 0;
	uint64			  count = 0, prev = 0, floor = 0; /* the previous page's high key */
	ItemPointerData	  prevtid;
	PGAlignedBlock	  dcopy, copy;

	ItemPointerSetInvalid(&prevtid);
	if (run->npages == 0 || (run->count == 0 && !meta->list.uneven[r]))
		CORRUPT(index, "run %d (generation %u) is empty", r, run->gen);
	for (d = 0; d < ndir; d++)
	{
		BlockNumber		  dblk = dstart + d;
		Page			  dpage = read_page(index, dblk, &dcopy, nblocks);
		SimhashPageOpaque dop = SimhashPageGetOpaque(dpage);
		int				  nd =
			(int) Min((BlockNumber) SIMHASH_DIR_CAPACITY, run->npages - d * SIMHASH_DIR_CAPACITY);
		int e;

		mark_used(index, used, dblk);
		if (dop->flags != SIMHASH_DIR || dop->table != t || dop->gen != run->gen)
			CORRUPT(index,
					"block %u should be directory page %u of table %d of run %d (generation %u) "
					"but has flags %04x, table %u, generation %u",
					dblk, d, t, r, run->gen, dop->flags, dop->table, dop->gen);
		if (SimhashDirEntries(index, dblk, dpage) != nd)
			CORRUPT(index, "directory block %u (table %d, run %d) holds %d entries, expected %d",
					dblk, t, r, SimhashDirEntries(index, dblk, dpage), nd);
		if (dop->hikey != simhash_entry_key(SimhashDirEntry(dpage, nd - 1)))
			CORRUPT(index,
					"directory block %u (table %d, run %d) has high key %016llx, last entry "
					"%016llx",
					dblk, t, r, (unsigned long long) dop->hikey,
					(unsigned long long) simhash_entry_key(SimhashDirEntry(dpage, nd - 1)));
		for (e = 0; e < nd; e++, p++)
		{
			BlockNumber		  blkno = simhash_dir_block(SimhashDirEntry(dpage, e));
			uint64			  dirkey = simhash_entry_key(SimhashDirEntry(dpage, e));
			Page			  page;
			SimhashPageOpaque opaque;
			int				  k, i;

			CHECK_FOR_INTERRUPTS();
			if (blkno <= SIMHASH_RUNLIST_BLKNO || blkno >= nblocks)
				CORRUPT(index,
						"directory block %u (table %d, run %d) entry %d points to block %u of %u",
						dblk, t, r, e, blkno, nblocks);
			page = read_page(index, blkno, &copy, nblocks);
			opaque = SimhashPageGetOpaque(page);
			mark_used(index, used, blkno);
			k = SimhashPageEntries(index, blkno, page);
			if (opaque->flags != SIMHASH_RUN || opaque->table != t || opaque->gen != run->gen)
				CORRUPT(index,
						"block %u should be page %u of table %d of run %d (generation %u) but has "
						"flags %04x, table %u, generation %u",
						blkno, p, t, r, run->gen, opaque->flags, opaque->table, opaque->gen);
			if (k + opaque->removed == 0 || k + opaque->removed > SIMHASH_PAGE_CAPACITY ||
				(p + 1 < run->npages && k + opaque->removed != SIMHASH_PAGE_CAPACITY))
				CORRUPT(index, "block %u (table %d, run %d) holds %d entries and %d removed ones",
						blkno, t, r, k, opaque->removed);
			for (i = 0; i < k; i++)
			{
				const char	   *ent = SimhashPageEntry(page, i);
				uint64			key = simhash_entry_key(ent);
				ItemPointerData tid;

				simhash_entry_tid(ent, &tid);
				if (!ItemPointerIsValid(&tid))
					CORRUPT(index, "block %u (table %d, run %d) entry %d has an invalid heap TID",
							blkno, t, r, i);
				if (count > 0 &&
					(key < prev || (key == prev && ItemPointerCompare(&tid, &prevtid) <= 0)))
					CORRUPT(index, "block %u (table %d, run %d) entry %d is out of order", blkno, t,
							r, i);
				prev = key;
				prevtid = tid;
				count++;
				simhash_items_push(have, sh_table_unpermute(tab, key), &tid);
			}
			/* the hikey was the last key; after VACUUM removed some, a bound */
			if (opaque->hikey != dirkey || dirkey < floor ||
				(k > 0 &&
				 (simhash_entry_key(SimhashPageEntry(page, 0)) < floor || prev > dirkey)) ||
				(opaque->removed == 0 && prev != dirkey))
				CORRUPT(index,
						"block %u (table %d, run %d) has high key %016llx and directory key "
						"%016llx, keys from %016llx to %016llx",
						blkno, t, r, (unsigned long long) opaque->hikey,
						(unsigned long long) dirkey,
						(unsigned long long) (k > 0 ? simhash_entry_key(SimhashPageEntry(page, 0))
													: floor),
						(unsigned long long) prev);
			floor = dirkey;
		}
	}
	if (count != run->count && !meta->list.uneven[r])
		CORRUPT(index,
				"table %d of run %d holds " UINT64_FORMAT
				" entries, the metapage says " UINT64_FORMAT,
				t, r, count, run->count);
}

/* Heap scan callback of the check: every indexed fingerprint and its TID. */
static void
check_callback(Relation index, ItemPointer tid, Datum *values, bool *isnull, bool tupleIsAlive,
			   void *arg)
{
	SimhashItemArray *heap = (SimhashItemArray *) arg;
	uint64			  fp;

	if (!isnull[0] && simhash_index_value(index, values[0], &fp))
		simhash_items_push(heap, fp, tid);
}

/*
 * The structural check proper.  The caller (check_access.c) has checked the
 * permission, holds ShareLock on both relations and runs as the table owner.
 */
void
simhash_check_index(Relation heap, Relation index)
{
	SimhashMetaPageData meta;
	BlockNumber			nblocks;
	sh_table		   *tables;
	int					ntables, t;
	SimhashItemArray	pending = {0}, expect = {0};
	PGAlignedBlock		copy;
	bool			   *used;
	MemoryContext		cxt =
		AllocSetContextCreate(CurrentMemoryContext, "simhash check", SIMHASH_CONTEXT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(cxt);
	int64		  i, j;

	nblocks = RelationGetNumberOfBlocks(index);
	simhash_read_meta(index, &meta);
	read_page(index, SIMHASH_METAPAGE_BLKNO, &copy, nblocks);
	if (!(SimhashPageGetOpaque(copy.data)->flags & SIMHASH_META))
		CORRUPT(index, "block 0 is not flagged as the metapage");
	read_page(index, SIMHASH_RUNLIST_BLKNO, &copy, nblocks);
	if (SimhashPageGetOpaque(copy.data)->flags != SIMHASH_RUNLIST)
		CORRUPT(index, "block %u is not flagged as the run list", SIMHASH_RUNLIST_BLKNO);
	tables = simhash_layout(meta.blocks, meta.bits, &ntables);
	if (ntables != meta.ntables)
		CORRUPT(index, "metapage says %d tables, bits = %d and blocks = %d give %d", meta.ntables,
				meta.bits, meta.blocks, ntables);
	for (i = 0; i < meta.list.nruns; i++)
		for (j = 0; j < i; j++)
			if (meta.list.runs[i].gen == meta.list.runs[j].gen)
				CORRUPT(index, "runs %d and %d have the same generation %u", (int) j, (int) i,
						meta.list.runs[i].gen);

	check_chain(index, meta.pending_head, SIMHASH_PENDING, meta.pending_chain, "pending",
				meta.npending, &pending, nblocks);
	check_chain(index, meta.sealed_head, SIMHASH_PENDING, meta.sealed_chain, "sealed pending",
				meta.nsealed, &pending, nblocks);
	check_chain(index, meta.nulls_head, SIMHASH_NULLS, 0, "NULLs", meta.nnulls, NULL, nblocks);

	/* what the index must hold: every heap row the build scan reports */
	table_index_build_scan(heap, index, BuildIndexInfo(index), true, false, check_callback, &expect,
						   NULL);
	simhash_sort_items(expect.items, expect.n);

	used = palloc0(nblocks);
	used[SIMHASH_METAPAGE_BLKNO] = used[SIMHASH_RUNLIST_BLKNO] = true;
	for (t = 0; t < ntables; t++)
	{
		SimhashItemArray have = {0};
		int				 r;

		for (r = 0; r < meta.list.nruns; r++)
			if (simhash_run_has(&meta, r, t))
				check_run(index, &meta, r, t, &tables[t], nblocks, used, &have);
		for (i = 0; i < pending.n; i++)
			simhash_items_push(&have, pending.items[i].key, &pending.items[i].tid);
		simhash_sort_items(have.items, have.n);
		for (i = 1; i < have.n; i++)
			if (have.items[i].key == have.items[i - 1].key &&
				ItemPointerEquals(&have.items[i].tid, &have.items[i - 1].tid))
				CORRUPT(index, "table %d holds heap row (%u,%u) with fingerprint %016llx twice", t,
						ItemPointerGetBlockNumber(&have.items[i].tid),
						ItemPointerGetOffsetNumber(&have.items[i].tid),
						(unsigned long long) have.items[i].key);
		for (i = 0, j = 0; i < expect.n; i++)
		{
			if (i > 0 && expect.items[i].key == expect.items[i - 1].key &&
				ItemPointerEquals(&expect.items[i].tid, &expect.items[i - 1].tid))
				continue; /* a HOT chain reports its root more than once */
			while (j < have.n &&
				   (have.items[j].key < expect.items[i].key ||
					(have.items[j].key == expect.items[i].key &&
					 ItemPointerCompare(&have.items[j].tid, &expect.items[i].tid) < 0)))
				j++;
			if (j >= have.n || have.items[j].key != expect.items[i].key ||
				!ItemPointerEquals(&have.items[j].tid, &expect.items[i].tid))
				CORRUPT(index, "heap row (%u,%u) with fingerprint %016llx is missing from table %d",
						ItemPointerGetBlockNumber(&expect.items[i].tid),
						ItemPointerGetOffsetNumber(&expect.items[i].tid),
						(unsigned long long) expect.items[i].key, t);
		}
		if (have.items)
			pfree(have.items);
	}

	MemoryContextSwitchTo(old);
	MemoryContextDelete(cxt);
}
