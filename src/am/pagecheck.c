/*
 * pagecheck.c — checks of what a page or a link read from one says, before
 * it is followed: every reader (the read-ahead reader, runs, chains) uses
 * them, and they use nothing of the access method's but its page layout.
 */
#include "simhash_am.h"
#include "page.h"

/*
 * Reports index_corrupted unless blkno, a link read from block `from` of the
 * index (a chain's next page, a directory entry), is a block of the index,
 * and unless `steps`, the pages of a chain walked so far, stays within the
 * relation's size, which only a loop could exceed.  *nblocks caches the size
 * for the caller's walk (start it at 0): it is read again only when a link or
 * the step count passes it, since a page linked after the walk started was
 * allocated before its link, so the cached size is a lower bound.
 */
void
simhash_check_link(Relation index, BlockNumber from, BlockNumber blkno, BlockNumber steps,
				   BlockNumber *nblocks)
{
	if (blkno < *nblocks && steps <= *nblocks)
		return;
	*nblocks = RelationGetNumberOfBlocks(index);
	if (blkno >= *nblocks || steps > *nblocks)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("simhash index \"%s\": block %u links to block %u, %s",
						RelationGetRelationName(index), from, blkno,
						blkno >= *nblocks ? "beyond the end of the index" : "closing a loop"),
				 errhint("REINDEX the index.")));
}

/*
 * Reports corruption unless page is a live page of the given kind, run
 * generation and table.
 */
void
simhash_expect_page(Relation index, Page page, BlockNumber blkno, uint16 flags, uint32 gen,
					int table)
{
	SimhashPageOpaque o = SimhashPageGetOpaque(page);

	if (PageIsNew(page) || o->page_id != SIMHASH_PAGE_ID || o->flags != flags || o->gen != gen ||
		o->table != table)
		ereport(ERROR, (errcode(ERRCODE_INDEX_CORRUPTED),
						errmsg("simhash index \"%s\": block %u is not a page of table %d of run %u",
							   RelationGetRelationName(index), blkno, table, gen),
						errhint("REINDEX the index.")));
}

/*
 * As simhash_expect_page, for a reader that holds no merge lock: a page of
 * that run that a merge has since retired (DELETED, generation and table
 * kept) is read too; one recycled for another run (a hot standby's reader
 * outlives the primary's horizon) means the index changed under the reader:
 * a serialization failure, to be run again.
 */
void
simhash_expect_readable(Relation index, Page page, BlockNumber blkno, uint16 flags, uint32 gen,
						int table)
{
	SimhashPageOpaque o = SimhashPageGetOpaque(page);

	if (!PageIsNew(page) && o->page_id == SIMHASH_PAGE_ID && o->flags == SIMHASH_DELETED &&
		o->gen == gen && o->table == table)
		return;
	if (!PageIsNew(page) && o->page_id == SIMHASH_PAGE_ID && o->gen != gen &&
		(o->flags == flags || o->flags == SIMHASH_DELETED))
		ereport(ERROR, (errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
						errmsg("simhash index \"%s\": block %u of run %u was reused while it "
							   "was being read",
							   RelationGetRelationName(index), blkno, gen),
						errhint("Run the statement again.")));
	simhash_expect_page(index, page, blkno, flags, gen, table);
}
