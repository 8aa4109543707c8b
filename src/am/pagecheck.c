/*
 * pagecheck.c — the page layer's checked reads: what a link read from a
 * page says before it is followed, what a page is before a byte of it is
 * used, and the walk along a chain.  Every reader uses them (scans, the
 * read-ahead reader, run cursors, flushes, VACUUM, simhash_pairs), and they
 * use nothing of the access method's but its page layout.
 */
#include "simhash_am.h"
#include "page.h"

#include "commands/vacuum.h"
#include "miscadmin.h"

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

/* index_corrupted naming the block, with what is wrong with it. */
void
simhash_corrupt_block(Relation index, BlockNumber blkno, const char *detail)
{
	ereport(ERROR, (errcode(ERRCODE_INDEX_CORRUPTED),
					errmsg("simhash index \"%s\" is corrupted at block %u",
						   RelationGetRelationName(index), blkno),
					errdetail_internal("%s", detail),
					errhint("REINDEX the index; simhash_index_check() describes the damage.")));
}

/* The page kinds of a mask, for messages. */
static const char *
kinds_name(uint16 kinds)
{
	switch (kinds)
	{
		case SIMHASH_RUN:
			return "run";
		case SIMHASH_DIR:
			return "directory";
		case SIMHASH_PENDING:
			return "pending";
		case SIMHASH_NULLS:
			return "NULLs";
		case SIMHASH_PENDING | SIMHASH_NULLS:
			return "pending or NULLs";
		default:
			return "expected";
	}
}

/*
 * Is page a page of this index of one of the kinds (exactly one flag set),
 * of generation gen (< 0: any) and table `table` (< 0: any)?  With `retired`,
 * a DELETED page that kept that generation and table is one too.
 */
static bool
page_is(Page page, uint16 kinds, int64 gen, int table, bool retired)
{
	SimhashPageOpaque o = SimhashPageGetOpaque(page);
	uint16			  f = o->flags;

	if (PageIsNew(page) || o->page_id != SIMHASH_PAGE_ID)
		return false;
	if (!(f != 0 && (f & (f - 1)) == 0 && ((f & kinds) != 0 || (retired && f == SIMHASH_DELETED))))
		return false;
	return (gen < 0 || o->gen == (uint32) gen) && (table < 0 || o->table == table);
}

/*
 * The one check of a page's identity, made before a byte of it is used:
 * is it a page of one of the kinds, of generation gen and table `table`
 * (either < 0: any)?  What a page that is not says depends on the reader:
 * - SIMHASH_PAGE_LIVE: it must be live (a writer, or a reader under the lock
 *   that keeps it so): index_corrupted otherwise.
 * - SIMHASH_PAGE_READABLE: a reader that holds no merge lock also reads a
 *   page of that run that a merge has since retired (DELETED, generation
 *   and table kept); one recycled for another run of the same kind (a hot
 *   standby's reader outlives the primary's horizon) means the index changed
 *   under the reader: a serialization failure, to be run again.
 * - SIMHASH_PAGE_RETRY: live or retired; anything else is a serialization
 *   failure (a chain read without the flush lock, whose pages a flush
 *   retires and a standby may see recycled as any kind).
 * - SIMHASH_PAGE_TRY: live or retired, else false, and the caller decides
 *   (a scan starts over); the page's special space must be where this access
 *   method puts it.
 * Returns true, or false in SIMHASH_PAGE_TRY mode only.
 */
bool
simhash_page_check(Relation index, Page page, BlockNumber blkno, uint16 kinds, int64 gen, int table,
				   SimhashPageMode mode)
{
	SimhashPageOpaque o = SimhashPageGetOpaque(page);

	switch (mode)
	{
		case SIMHASH_PAGE_TRY:
			if (!PageIsNew(page) && ((PageHeader) page)->pd_special != SIMHASH_SPECIAL_OFFSET)
				simhash_corrupt_block(index, blkno,
									  psprintf("The page's special space starts at %u.",
											   ((PageHeader) page)->pd_special));
			return page_is(page, kinds, gen, table, true);
		case SIMHASH_PAGE_RETRY:
			if (page_is(page, kinds, gen, table, true))
				return true;
			ereport(ERROR,
					(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
					 errmsg("simhash index \"%s\": block %u is no longer a page of %s chain %u",
							RelationGetRelationName(index), blkno, kinds_name(kinds), (uint32) gen),
					 errhint("Run the statement again; if it fails again, simhash_index_check() "
							 "describes the damage.")));
			break;
		case SIMHASH_PAGE_READABLE:
			if (page_is(page, kinds, gen, table, true))
				return true;
			if (!PageIsNew(page) && o->page_id == SIMHASH_PAGE_ID && o->gen != (uint32) gen &&
				((o->flags & kinds) != 0 || o->flags == SIMHASH_DELETED))
				ereport(ERROR, (errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
								errmsg("simhash index \"%s\": block %u of run %u was reused "
									   "while it was being read",
									   RelationGetRelationName(index), blkno, (uint32) gen),
								errhint("Run the statement again.")));
			/* fall through */
		case SIMHASH_PAGE_LIVE:
			if (page_is(page, kinds, gen, table, false))
				return true;
			if (gen < 0)
				ereport(ERROR, (errcode(ERRCODE_INDEX_CORRUPTED),
								errmsg("simhash index \"%s\": block %u of a chain is not a %s page",
									   RelationGetRelationName(index), blkno, kinds_name(kinds)),
								errhint("REINDEX the index.")));
			ereport(ERROR, (errcode(ERRCODE_INDEX_CORRUPTED),
							errmsg("simhash index \"%s\": block %u is not a page of table %d of "
								   "run %u",
								   RelationGetRelationName(index), blkno, table, (uint32) gen),
							errhint("REINDEX the index.")));
	}
	return false;
}

/*
 * Block blkno read through the strategy, locked in lockmode and checked
 * (simhash_page_check).  In SIMHASH_PAGE_TRY mode a page that is not the one
 * expected is released and InvalidBuffer returned.
 */
Buffer
simhash_read_page(Relation index, BlockNumber blkno, BufferAccessStrategy strategy, int lockmode,
				  uint16 kinds, int64 gen, int table, SimhashPageMode mode)
{
	Buffer buf = ReadBufferExtended(index, MAIN_FORKNUM, blkno, RBM_NORMAL, strategy);

	LockBuffer(buf, lockmode);
	if (!simhash_page_check(index, BufferGetPage(buf), blkno, kinds, gen, table, mode))
	{
		UnlockReleaseBuffer(buf);
		return InvalidBuffer;
	}
	return buf;
}

/*
 * Walking a chain (pending, sealed or NULLs) page by page: each link is
 * checked to stay inside the index and the walk to stay shorter than the
 * index (a loop), each page read, locked and checked before it is returned.
 */
void
simhash_chain_begin(SimhashChain *c, Relation index, BufferAccessStrategy strategy,
					BlockNumber head, int lockmode, uint16 kinds, int64 gen, SimhashPageMode mode)
{
	memset(c, 0, sizeof(*c));
	c->index = index;
	c->strategy = strategy;
	c->lockmode = lockmode;
	c->kinds = kinds;
	c->gen = gen;
	c->mode = mode;
	c->next = head;
	c->prev = SIMHASH_METAPAGE_BLKNO;
	c->buf = InvalidBuffer;
	c->blkno = InvalidBlockNumber;
}

/*
 * The next page of the chain, locked (the previous one is released first):
 * NULL at the end, or, in SIMHASH_PAGE_TRY mode, at a page that is no longer
 * the chain's (c->lost set, c->blkno naming it).
 */
Page
simhash_chain_next(SimhashChain *c)
{
	if (BufferIsValid(c->buf))
	{
		c->prev = c->blkno;
		c->next = SimhashPageGetOpaque(BufferGetPage(c->buf))->next;
		UnlockReleaseBuffer(c->buf);
		c->buf = InvalidBuffer;
	}
	if (!BlockNumberIsValid(c->next))
		return NULL;
	if (c->vacuum)
		simhash_vacuum_delay_point();
	CHECK_FOR_INTERRUPTS();
	c->blkno = c->next;
	simhash_check_link(c->index, c->prev, c->blkno, ++c->steps, &c->nblocks);
	c->buf = simhash_read_page(c->index, c->blkno, c->strategy, c->lockmode, c->kinds, c->gen, 0,
							   c->mode);
	if (!BufferIsValid(c->buf))
	{
		c->lost = true;
		c->next = InvalidBlockNumber;
		return NULL;
	}
	return BufferGetPage(c->buf);
}

/* Release the page the walk holds, if any (a walk stopped early). */
void
simhash_chain_end(SimhashChain *c)
{
	if (BufferIsValid(c->buf))
		UnlockReleaseBuffer(c->buf);
	c->buf = InvalidBuffer;
}
