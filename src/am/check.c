/*
 * check.c — simhash_index_check(regclass): verify every page, the order of
 * each run, the per-table counts, and that every heap row the index must
 * hold is present exactly once per table.  Any failure raises
 * ERRCODE_INDEX_CORRUPTED naming the block and table.
 *
 * The heap is locked in ShareLock (no concurrent writers) for the check;
 * who may run it, and as whom, is decided in check_access.c.
 */
#include "simhash_am.h"

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

static Page
read_page(Relation index, BlockNumber blkno, PGAlignedBlock *copy, BlockNumber nblocks)
{
	Buffer		buf;
	PageHeader	ph;
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
	if (ph->pd_special != BLCKSZ - MAXALIGN(sizeof(SimhashPageOpaqueData)))
		CORRUPT(index, "block %u has special space at %u, not a simhash page", blkno, ph->pd_special);
	opaque = SimhashPageGetOpaque(copy->data);
	if (opaque->page_id != SIMHASH_PAGE_ID)
		CORRUPT(index, "block %u has page id %04x, expected %04x", blkno, opaque->page_id, SIMHASH_PAGE_ID);
	if (ph->pd_lower < MAXALIGN(SizeOfPageHeaderData) || ph->pd_lower > ph->pd_upper ||
		(!(opaque->flags & SIMHASH_META) &&
		 (ph->pd_lower - MAXALIGN(SizeOfPageHeaderData)) %
		 ((opaque->flags & SIMHASH_DIR) ? sizeof(uint64) : SIMHASH_ENTRY_SIZE) != 0))
		CORRUPT(index, "block %u has invalid bounds pd_lower %u, pd_upper %u", blkno,
				ph->pd_lower, ph->pd_upper);
	return copy->data;
}

/* The entries of a chain; checks flags and length. */
static void
check_chain(Relation index, BlockNumber blkno, uint16 flag, uint32 chain, const char *what,
			uint64 expected, SimhashItemArray *out, BlockNumber nblocks)
{
	PGAlignedBlock copy;
	uint64		n = 0;
	BlockNumber steps = 0;

	while (BlockNumberIsValid(blkno))
	{
		Page		page = read_page(index, blkno, &copy, nblocks);
		int			i,
					k = SimhashPageEntries(page);

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
				CORRUPT(index, "block %u entry %d of the %s chain has an invalid heap TID", blkno, i, what);
			if (out)
				simhash_items_push(out, simhash_entry_key(SimhashPageEntry(page, i)), &tid);
		}
		n += k;
		blkno = SimhashPageGetOpaque(page)->next;
	}
	if (n != expected)
		CORRUPT(index, "the %s chain holds " UINT64_FORMAT " entries, the metapage says " UINT64_FORMAT,
				what, n, expected);
}

static void
check_callback(Relation index, ItemPointer tid, Datum *values, bool *isnull,
			   bool tupleIsAlive, void *arg)
{
	SimhashItemArray	   *heap = (SimhashItemArray *) arg;
	uint64		fp;

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
	BlockNumber nblocks;
	sh_table   *tables;
	int			ntables,
				t;
	SimhashItemArray		pending = {0},
				expect = {0};
	PGAlignedBlock copy;
	MemoryContext cxt = AllocSetContextCreate(CurrentMemoryContext, "simhash check",
											  SIMHASH_CONTEXT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(cxt);
	int64		i,
				j;

	nblocks = RelationGetNumberOfBlocks(index);
	simhash_read_meta(index, &meta);
	read_page(index, SIMHASH_METAPAGE_BLKNO, &copy, nblocks);
	if (!(SimhashPageGetOpaque(copy.data)->flags & SIMHASH_META))
		CORRUPT(index, "block 0 is not flagged as the metapage");
	tables = simhash_layout(meta.blocks, meta.bits, &ntables);
	if (ntables != meta.ntables)
		CORRUPT(index, "metapage says %d tables, bits = %d and blocks = %d give %d",
				meta.ntables, meta.bits, meta.blocks, ntables);
	if (meta.run_npages != (meta.run_count + SIMHASH_PAGE_CAPACITY - 1) / SIMHASH_PAGE_CAPACITY)
		CORRUPT(index, "metapage says %u pages per run for " UINT64_FORMAT " entries",
				meta.run_npages, meta.run_count);

	check_chain(index, meta.pending_head, SIMHASH_PENDING, meta.pending_chain, "pending",
				meta.npending, &pending, nblocks);
	check_chain(index, meta.sealed_head, SIMHASH_PENDING, meta.sealed_chain, "sealed pending",
				meta.nsealed, &pending, nblocks);
	check_chain(index, meta.nulls_head, SIMHASH_NULLS, 0, "NULLs", meta.nnulls, NULL, nblocks);

	/* what the index must hold: every heap row the build scan reports */
	table_index_build_scan(heap, index, BuildIndexInfo(index), true, false,
						   check_callback, &expect, NULL);
	simhash_sort_items(expect.items, expect.n);

	for (t = 0; t < ntables; t++)
	{
		SimhashItemArray		have = {0};
		uint64		prev = 0;
		ItemPointerData prevtid;
		BlockNumber p;
		uint64		count = 0;

		uint64	   *hik = palloc(sizeof(uint64) * Max(meta.run_npages, 1));
		BlockNumber d;

		ItemPointerSetInvalid(&prevtid);
		for (p = 0; p < meta.run_npages; p++)
		{
			BlockNumber blkno = meta.run_start[t] + p;
			Page		page = read_page(index, blkno, &copy, nblocks);
			SimhashPageOpaque opaque = SimhashPageGetOpaque(page);
			int			k = SimhashPageEntries(page),
						e;

			CHECK_FOR_INTERRUPTS();
			if (opaque->flags != SIMHASH_RUN || opaque->table != t ||
				opaque->gen != (uint32) meta.merges)
				CORRUPT(index, "block %u should be page %u of table %d's run (generation %u) but has flags %04x, table %u, generation %u",
						blkno, p, t, (uint32) meta.merges, opaque->flags, opaque->table, opaque->gen);
			if (k == 0 || (p + 1 < meta.run_npages && k != SIMHASH_PAGE_CAPACITY))
				CORRUPT(index, "block %u (table %d) holds %d entries", blkno, t, k);
			for (e = 0; e < k; e++)
			{
				const char *ent = SimhashPageEntry(page, e);
				uint64		key = simhash_entry_key(ent);
				ItemPointerData tid;

				simhash_entry_tid(ent, &tid);
				if (count > 0 && (key < prev ||
								  (key == prev && ItemPointerCompare(&tid, &prevtid) <= 0)))
					CORRUPT(index, "block %u (table %d) entry %d is out of order", blkno, t, e);
				prev = key;
				prevtid = tid;
				count++;
				simhash_items_push(&have, sh_table_unpermute(&tables[t], key), &tid);
			}
			if (opaque->hikey != prev)
				CORRUPT(index, "block %u (table %d) has high key %016llx, last key %016llx",
						blkno, t, (unsigned long long) opaque->hikey, (unsigned long long) prev);
			hik[p] = prev;
		}
		/* the directory after the run: every run page's high key, in order */
		for (d = 0; d < SimhashDirPages(meta.run_npages); d++)
		{
			BlockNumber blkno = meta.run_start[t] + meta.run_npages + d;
			Page		page = read_page(index, blkno, &copy, nblocks);
			SimhashPageOpaque opaque = SimhashPageGetOpaque(page);
			BlockNumber d0 = d * SIMHASH_DIR_CAPACITY;
			int			nd = (int) Min((BlockNumber) SIMHASH_DIR_CAPACITY, meta.run_npages - d0);
			int			have_nd = (int) ((((PageHeader) page)->pd_lower - MAXALIGN(SizeOfPageHeaderData)) /
										 sizeof(uint64));
			const uint64 *keys = (const uint64 *) PageGetContents(page);
			int			e;

			if (opaque->flags != SIMHASH_DIR || opaque->table != t || opaque->gen != (uint32) meta.merges)
				CORRUPT(index, "block %u should be directory page %u of table %d but has flags %04x, table %u, generation %u",
						blkno, d, t, opaque->flags, opaque->table, opaque->gen);
			if (have_nd != nd)
				CORRUPT(index, "directory block %u (table %d) holds %d keys, expected %d", blkno, t, have_nd, nd);
			for (e = 0; e < nd; e++)
				if (keys[e] != hik[d0 + e])
					CORRUPT(index, "directory block %u (table %d) entry %d does not match the high key of run block %u",
							blkno, t, e, meta.run_start[t] + d0 + e);
		}
		pfree(hik);
		if (count != meta.run_count)
			CORRUPT(index, "table %d holds " UINT64_FORMAT " entries, the metapage says " UINT64_FORMAT,
					t, count, meta.run_count);
		for (i = 0; i < pending.n; i++)
			simhash_items_push(&have, pending.items[i].fp, &pending.items[i].tid);
		simhash_sort_items(have.items, have.n);
		for (i = 1; i < have.n; i++)
			if (have.items[i].fp == have.items[i - 1].fp &&
				ItemPointerEquals(&have.items[i].tid, &have.items[i - 1].tid))
				CORRUPT(index, "table %d holds heap row (%u,%u) with fingerprint %016llx twice",
						t, ItemPointerGetBlockNumber(&have.items[i].tid),
						ItemPointerGetOffsetNumber(&have.items[i].tid), (unsigned long long) have.items[i].fp);
		for (i = 0, j = 0; i < expect.n; i++)
		{
			if (i > 0 && expect.items[i].fp == expect.items[i - 1].fp &&
				ItemPointerEquals(&expect.items[i].tid, &expect.items[i - 1].tid))
				continue;		/* a HOT chain reports its root more than once */
			while (j < have.n && (have.items[j].fp < expect.items[i].fp ||
								  (have.items[j].fp == expect.items[i].fp &&
								   ItemPointerCompare(&have.items[j].tid, &expect.items[i].tid) < 0)))
				j++;
			if (j >= have.n || have.items[j].fp != expect.items[i].fp ||
				!ItemPointerEquals(&have.items[j].tid, &expect.items[i].tid))
				CORRUPT(index, "heap row (%u,%u) with fingerprint %016llx is missing from table %d",
						ItemPointerGetBlockNumber(&expect.items[i].tid),
						ItemPointerGetOffsetNumber(&expect.items[i].tid), (unsigned long long) expect.items[i].fp, t);
		}
		if (have.items)
			pfree(have.items);
	}

	MemoryContextSwitchTo(old);
	MemoryContextDelete(cxt);
}
