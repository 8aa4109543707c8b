/*
 * bulkwrite.c — a bulk build writes the new index's pages outside shared
 * buffers, as nbtree's build does: each page is filled in private memory,
 * WAL-logged with others in one record (log_newpages), written to the file
 * with smgr calls, and the file is made durable at the end.  Through shared
 * buffers each new page cost an extension (a zeroed write), a buffer lookup
 * and locks, and the whole index was read back to WAL-log it at the end.
 *
 * Since PostgreSQL 17 the server's bulk writer does it (and syncs the file
 * only if a checkpoint started meanwhile); before, the same steps are done
 * here and the file is synced at the end, as nbtree's build did on those
 * servers: a checkpoint that began during the build cannot know of pages
 * that never were in shared buffers, and a crash after it would replay
 * WAL from after their records.
 */
#include "simhash_am.h"
#include "page.h"

#include "access/xloginsert.h"
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
	BlockNumber		 relsize; /* blocks in the file */
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
	b->relsize = smgrnblocks(RelationGetSmgr(index), MAIN_FORKNUM);
	b->npending = 0;
	for (int i = 0; i < BULK_BATCH; i++)
		b->pages[i] = b->buf[i].data;
	return b;
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

void
simhash_bulk_finish(SimhashBulkWriter *b)
{
	bulk_flush(b);
	/* a temporary index is not kept across a crash */
	if (!RelationUsesLocalBuffers(b->index))
		smgrimmedsync(RelationGetSmgr(b->index), MAIN_FORKNUM);
	pfree(b);
}

#endif /* SIMHASH_HAVE_BULK_WRITE */

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
