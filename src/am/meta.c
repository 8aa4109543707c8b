/*
 * meta.c — reading the metapage and the run list: a checked copy, or an
 * error naming what is wrong (corruption, or an older on-disk format that
 * needs REINDEX).
 */
#include "simhash_am.h"
#include "page.h"

#include "utils/builtins.h"

/*
 * A metapage this code can read: the magic number, then the format version
 * (an index written by an older release must be rebuilt).
 */
void
simhash_check_meta(Relation index, const SimhashMetaPageData *meta)
{
	if (meta->magic != SIMHASH_MAGIC)
		ereport(ERROR, (errcode(ERRCODE_INDEX_CORRUPTED),
						errmsg("index \"%s\" is not a simhash index: bad metapage",
							   RelationGetRelationName(index))));
	if (meta->version != SIMHASH_VERSION)
		ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
						errmsg("simhash index \"%s\" has on-disk format version %u, this release "
							   "reads version %d",
							   RelationGetRelationName(index), meta->version, SIMHASH_VERSION),
						errhint("REINDEX INDEX %s; to rebuild it in the current format.",
								quote_identifier(RelationGetRelationName(index)))));
	if (meta->ntables < 1 || meta->ntables > SIMHASH_MAX_TABLES)
		ereport(ERROR, (errcode(ERRCODE_INDEX_CORRUPTED),
						errmsg("simhash index \"%s\": metapage says %d tables",
							   RelationGetRelationName(index), meta->ntables),
						errhint("REINDEX the index.")));
}

/*
 * The run list (block 1) into copy->list: the runs it lists, their
 * directory heads and flags (the slots past them are left unset: nothing
 * reads a run past nruns); the caller holds the metapage lock.
 */
static void
read_runlist(Relation index, SimhashMetaPageData *copy)
{
	Buffer buf = ReadBuffer(index, SIMHASH_RUNLIST_BLKNO);
	Page   page;
	bool   ok;

	LockBuffer(buf, BUFFER_LOCK_SHARE);
	page = BufferGetPage(buf);
	/* its trailer where this access method puts it, before its flags are read */
	ok = !PageIsNew(page) && ((PageHeader) page)->pd_special == SIMHASH_SPECIAL_OFFSET &&
		 SimhashPageGetOpaque(page)->page_id == SIMHASH_PAGE_ID &&
		 (SimhashPageGetOpaque(page)->flags & SIMHASH_RUNLIST);
	if (ok)
	{
		const SimhashRunList *list = SimhashPageGetRunList(page);
		int					  nruns = list->nruns;

		ok = nruns >= 0 && nruns <= simhash_max_runs(copy->ntables);
		copy->list.nruns = nruns;
		copy->list.unused = list->unused;
		if (ok)
		{
			memcpy(copy->list.runs, list->runs, sizeof(SimhashRun) * nruns);
			memcpy(copy->list.run_dir, list->run_dir, sizeof(BlockNumber) * nruns * copy->ntables);
			memcpy(copy->list.uneven, list->uneven, sizeof(uint8) * nruns);
		}
	}
	UnlockReleaseBuffer(buf);
	if (!ok)
		ereport(ERROR, (errcode(ERRCODE_INDEX_CORRUPTED),
						errmsg("simhash index \"%s\": block %u is not a valid run list",
							   RelationGetRelationName(index), SIMHASH_RUNLIST_BLKNO),
						errhint("REINDEX the index.")));
}

/*
 * The special space of the pages of release 1.0 (on-disk format 2), and its
 * page id: enough to tell its metapage from a damaged one of ours.
 */
typedef struct SimhashOpaqueFormat2
{
	uint64			  hikey;
	FullTransactionId safexid;
	BlockNumber		  next;
	uint16			  table;
	uint16			  flags;
	uint16			  unused;
	uint16			  page_id;
	uint32			  gen;
} SimhashOpaqueFormat2;

#define SIMHASH_FORMAT2_PAGE_ID 0xFF83

/*
 * Whether block 0 (its metapage fields copied into meta) is the metapage of
 * an older release's index: its magic and version, and that release's page
 * layout, so that damage to our own metapage is never taken for it.
 */
static bool
older_format(Page page, const SimhashMetaPageData *meta)
{
	PageHeader			  hdr = (PageHeader) page;
	SimhashOpaqueFormat2 *opaque;

	if (PageIsNew(page) || meta->magic != SIMHASH_MAGIC || meta->version != 2 ||
		hdr->pd_special != BLCKSZ - MAXALIGN(sizeof(SimhashOpaqueFormat2)))
		return false;
	opaque = (SimhashOpaqueFormat2 *) PageGetSpecialPointer(page);
	return opaque->page_id == SIMHASH_FORMAT2_PAGE_ID && (opaque->flags & SIMHASH_META);
}

/*
 * A copy of the metapage, checked; false (and no error) only when old_ok and
 * the index is in an older release's format.
 */
static bool
read_meta(Relation index, SimhashMetaPageData *copy, bool old_ok)
{
	Buffer buf = ReadBuffer(index, SIMHASH_METAPAGE_BLKNO);
	Page   page;

	LockBuffer(buf, BUFFER_LOCK_SHARE);
	page = BufferGetPage(buf);
	/* the run list is read_runlist()'s: only the runs it lists are copied */
	memset(copy, 0, SIMHASH_META_SIZE);
	copy->list.nruns = 0;
	if (!PageIsNew(page))
		memcpy(copy, SimhashPageGetMeta(page), SIMHASH_META_SIZE);
	if (older_format(page, copy))
	{
		UnlockReleaseBuffer(buf);
		if (old_ok)
			return false;
		simhash_check_meta(index, copy); /* 55000, REINDEX */
	}
	if (!PageIsNew(page) && copy->magic == SIMHASH_MAGIC &&
		(((PageHeader) page)->pd_special != SIMHASH_SPECIAL_OFFSET ||
		 SimhashPageGetOpaque(page)->page_id != SIMHASH_PAGE_ID ||
		 SimhashPageGetOpaque(page)->flags != SIMHASH_META))
		ereport(ERROR, (errcode(ERRCODE_INDEX_CORRUPTED),
						errmsg("simhash index \"%s\": block %u is not a valid metapage",
							   RelationGetRelationName(index), SIMHASH_METAPAGE_BLKNO),
						errhint("REINDEX the index.")));
	/* an error releases the buffer with the transaction */
	simhash_check_meta(index, copy);
	read_runlist(index, copy);
	UnlockReleaseBuffer(buf);
	return true;
}

/* A copy of the metapage, checked. */
void
simhash_read_meta(Relation index, SimhashMetaPageData *copy)
{
	(void) read_meta(index, copy, false);
}

/*
 * As simhash_read_meta, but an index of an older release's format (which
 * needs REINDEX) is false instead of an error: for the planner.
 */
bool
simhash_read_meta_current(Relation index, SimhashMetaPageData *copy)
{
	return read_meta(index, copy, true);
}

/* qsort order of runs (SimhashRun): most entries first, then by generation. */
int
simhash_run_cmp_desc(const void *a, const void *b)
{
	const SimhashRun *x = a, *y = b;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return x->gen < y->gen ? -1 : x->gen > y->gen ? 1 : 0;
}
