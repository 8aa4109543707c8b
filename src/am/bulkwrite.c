/*
 * bulkwrite.c — a bulk build writes the new index's pages outside shared
 * buffers, as nbtree's build does: each page is filled in private memory,
 * WAL-logged with others in one record (log_newpages), written to the file
 * with smgr calls, and the file is made durable at the end.  Through shared
 * buffers each new page cost an extension (a zeroed write), a buffer lookup
 * and locks, and the whole index was read back to WAL-log it at the end.
 *
 * Since PostgreSQL 17 the server's bulk writer does it; before, the same
 * steps are done here.  Either syncs the file at the end only if a
 * checkpoint started during the build: such a checkpoint cannot know of
 * pages that never were in shared buffers, and a crash after it would
 * replay WAL from after their records.  Otherwise the file's segments are
 * handed to the checkpointer, whose next checkpoint (its redo point past
 * all of the build's WAL) syncs them, as it does for pages written through
 * shared buffers.  nbtree's build on 15 and 16 always syncs: for a 4.4M-row
 * index (246 MB) that was 0.5-0.7 s of a 4.5 s build with 2 workers.
 */
#include "simhash_am.h"
#include "page.h"

#include "access/xlog.h"
#include "access/xloginsert.h"
#include "storage/proc.h"
#include "storage/smgr.h"
#include "utils/rel.h"

#ifdef SIMHASH_HAVE_BULK_WRITE
#include "storage/bulk_write.h"

struct SimhashBulkWriter
{
	BulkWriteState *state;
};

SimhashBulkWriter *
simhash_bulk_begin(Relation index)
{
	SimhashBulkWriter *b = palloc(sizeof(SimhashBulkWriter));

	b->state = smgr_bulk_start_rel(index, MAIN_FORKNUM);
	return b;
}

Page
simhash_bulk_page(SimhashBulkWriter *b)
{
	return (Page) smgr_bulk_get_buf(b->state)->data;
}

void
simhash_bulk_write(SimhashBulkWriter *b, BlockNumber blkno, Page page)
{
	/* the page is the buffer smgr_bulk_get_buf() returned, which it takes */
	smgr_bulk_write(b->state, blkno, (BulkWriteBuffer) page, true);
}

void
simhash_bulk_finish(SimhashBulkWriter *b)
{
	smgr_bulk_finish(b->state);
	pfree(b);
}

#else /* !SIMHASH_HAVE_BULK_WRITE */

/* Pages per WAL record (log_newpages puts at most XLR_MAX_BLOCK_ID in one). */
#define BULK_BATCH 32

struct SimhashBulkWriter
{
	Relation		 index;
	bool			 use_wal;
	XLogRecPtr		 start_redo; /* the redo point when the writer began */
	BlockNumber		 relsize;	 /* blocks in the file */
	BlockNumber		*segblk;	 /* a block it wrote in each segment, or invalid */
	int				 nseg;
	int				 npending;
	BlockNumber		 blknos[BULK_BATCH];
	Page			 pages[BULK_BATCH];
	PGIOAlignedBlock buf[BULK_BATCH]; /* pages[i] is buf[i] */
};

SimhashBulkWriter *
simhash_bulk_begin(Relation index)
{
	SimhashBulkWriter *b = simhash_palloc_io_aligned(sizeof(SimhashBulkWriter));

	b->index = index;
	b->use_wal = RelationNeedsWAL(index);
	b->start_redo = GetRedoRecPtr();
	b->relsize = smgrnblocks(RelationGetSmgr(index), MAIN_FORKNUM);
	b->segblk = NULL;
	b->nseg = 0;
	b->npending = 0;
	for (int i = 0; i < BULK_BATCH; i++)
		b->pages[i] = b->buf[i].data;
	return b;
}

/* Remember a block written in blkno's segment (the first one). */
static void
note_segment(SimhashBulkWriter *b, BlockNumber blkno)
{
	int seg = (int) (blkno / RELSEG_SIZE);

	if (seg >= b->nseg)
	{
		int n = Max(seg + 1, 2 * b->nseg);

		b->segblk = b->segblk == NULL ? palloc(n * sizeof(BlockNumber))
									  : repalloc(b->segblk, n * sizeof(BlockNumber));
		for (int j = b->nseg; j < n; j++)
			b->segblk[j] = InvalidBlockNumber;
		b->nseg = n;
	}
	if (b->segblk[seg] == InvalidBlockNumber)
		b->segblk[seg] = blkno;
}

/* WAL-log the pending pages in one record, then write them. */
static void
bulk_flush(SimhashBulkWriter *b)
{
	static const PGIOAlignedBlock zero = {{0}};

	if (b->npending == 0)
		return;
	if (b->use_wal)
		log_newpages(&SimhashRelationFile(b->index), MAIN_FORKNUM, b->npending, b->blknos, b->pages,
					 true);
	for (int i = 0; i < b->npending; i++)
	{
		BlockNumber blkno = b->blknos[i];

		note_segment(b, blkno);
		PageSetChecksumInplace(b->pages[i], blkno);
		/* a block written before those below it: zeroes until they come */
		while (blkno > b->relsize)
			smgrextend(RelationGetSmgr(b->index), MAIN_FORKNUM, b->relsize++, (char *) zero.data,
					   true);
		if (blkno == b->relsize)
			smgrextend(RelationGetSmgr(b->index), MAIN_FORKNUM, b->relsize++, b->pages[i], true);
		else
			smgrwrite(RelationGetSmgr(b->index), MAIN_FORKNUM, blkno, b->pages[i], true);
	}
	b->npending = 0;
}

Page
simhash_bulk_page(SimhashBulkWriter *b)
{
	return b->pages[b->npending];
}

void
simhash_bulk_write(SimhashBulkWriter *b, BlockNumber blkno, Page page)
{
	Assert(page == b->pages[b->npending]);
	b->blknos[b->npending++] = blkno;
	if (b->npending == BULK_BATCH)
		bulk_flush(b);
}

/*
 * Have the checkpointer sync, at its next checkpoint, every segment of the
 * file this writer wrote to: a write with skipFsync false registers its
 * segment (md.c), so one block the writer wrote in each is read and
 * written back as it is.
 */
static void
register_sync(SimhashBulkWriter *b)
{
	SMgrRelation	 smgr = RelationGetSmgr(b->index);
	PGIOAlignedBlock page;

	for (int seg = 0; seg < b->nseg; seg++)
	{
		if (b->segblk[seg] == InvalidBlockNumber)
			continue;
		smgrread(smgr, MAIN_FORKNUM, b->segblk[seg], page.data);
		smgrwrite(smgr, MAIN_FORKNUM, b->segblk[seg], page.data, false);
	}
}

void
simhash_bulk_finish(SimhashBulkWriter *b)
{
	bulk_flush(b);
	if (RelationUsesLocalBuffers(b->index))
		; /* a temporary index is not kept across a crash */
	else if (!b->use_wal)
		/* unlogged, or not WAL-logged at wal_level minimal */
		smgrimmedsync(RelationGetSmgr(b->index), MAIN_FORKNUM);
	else
	{
		/*
		 * No checkpoint may start between the look at the redo point and
		 * the hand-over: it could take the redo point past the writer's WAL
		 * and miss the segments handed over after it began.
		 */
		MyProc->delayChkptFlags |= DELAY_CHKPT_START;
		if (GetRedoRecPtr() != b->start_redo)
		{
			MyProc->delayChkptFlags &= ~DELAY_CHKPT_START;
			smgrimmedsync(RelationGetSmgr(b->index), MAIN_FORKNUM);
		}
		else
		{
			PG_TRY();
			{
				register_sync(b);
			}
			PG_FINALLY();
			{
				MyProc->delayChkptFlags &= ~DELAY_CHKPT_START;
			}
			PG_END_TRY();
		}
	}
	if (b->segblk != NULL)
		pfree(b->segblk);
	pfree(b);
}

#endif /* SIMHASH_HAVE_BULK_WRITE */

/*
 * Make the new index's main fork nblocks long, the blocks added zeroed and
 * not WAL-logged (a bulk writer overwrites each of them before the build
 * ends, and a crash before then leaves no index).  So the bulk writers begun
 * afterwards write every block below nblocks in place: none of them fills a
 * gap that another one writes.
 */
void
simhash_bulk_extend(Relation index, BlockNumber nblocks)
{
	SMgrRelation smgr = RelationGetSmgr(index);
	BlockNumber	 size = smgrnblocks(smgr, MAIN_FORKNUM);

	if (nblocks <= size)
		return;
#ifdef SIMHASH_HAVE_ZEROEXTEND
	smgrzeroextend(smgr, MAIN_FORKNUM, size, nblocks - size, true);
#else
	{
		static const PGIOAlignedBlock zero = {{0}};

		/* the file gets a hole; md.c pads earlier segments to full size */
		smgrextend(smgr, MAIN_FORKNUM, nblocks - 1, (char *) zero.data, true);
	}
#endif
}

/* A page sink that puts its pages into a bulk writer. */
typedef struct BulkSink
{
	SimhashPageSink	   sink;
	SimhashBulkWriter *bulk;
} BulkSink;

static void
bulk_sink_put(SimhashPageSink *sink, BlockNumber blkno, Page image)
{
	BulkSink *s = (BulkSink *) sink;
	Page	  page = simhash_bulk_page(s->bulk);

	memcpy(page, image, BLCKSZ);
	simhash_bulk_write(s->bulk, blkno, page);
}

SimhashPageSink *
simhash_bulk_sink(SimhashBulkWriter *b, BlockNumber first)
{
	BulkSink *s = palloc(sizeof(BulkSink));

	s->sink.put = bulk_sink_put;
	s->sink.next = first;
	s->bulk = b;
	return &s->sink;
}
