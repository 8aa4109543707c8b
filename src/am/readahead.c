/*
 * readahead.c — reading a sequence of the index's blocks that is known
 * ahead of use: VACUUM's sweep of the whole file, the run pages VACUUM's
 * bulk delete cleans and those a merge reads, in directory order.  Since
 * PostgreSQL 17 a read stream issues the reads ahead (asynchronously on 18)
 * and combines neighbouring blocks; before, each block is read when it is
 * asked for, as the loops did by themselves.  The caller sees one interface:
 * pinned, unlocked buffers in the order its callback named their blocks.
 */
#include "simhash_am.h"
#include "page.h"

#ifdef SIMHASH_HAVE_READ_STREAM
#include "storage/read_stream.h"
#endif

struct SimhashReader
{
	SimhashNextBlock next;
	void			*arg;
#ifdef SIMHASH_HAVE_READ_STREAM
	ReadStream *stream;
#else
	Relation			 index;
	BufferAccessStrategy strategy;
#endif
};

#ifdef SIMHASH_HAVE_READ_STREAM

static BlockNumber
stream_next_block(ReadStream *stream, void *private_data, void *per_buffer_data)
{
	SimhashReader *r = (SimhashReader *) private_data;

	return r->next(r->arg);
}

SimhashReader *
simhash_reader_begin(Relation index, BufferAccessStrategy strategy, SimhashNextBlock next,
					 void *arg)
{
	SimhashReader *r = palloc0(sizeof(SimhashReader));

	r->next = next;
	r->arg = arg;
	/* MAINTENANCE: maintenance_io_concurrency, as VACUUM's own streams */
	r->stream = read_stream_begin_relation(READ_STREAM_MAINTENANCE, strategy, index, MAIN_FORKNUM,
										   stream_next_block, r, 0);
	return r;
}

Buffer
simhash_reader_next(SimhashReader *r)
{
	return read_stream_next_buffer(r->stream, NULL);
}

void
simhash_reader_end(SimhashReader *r)
{
	read_stream_end(r->stream);
	pfree(r);
}

#else /* block by block */

SimhashReader *
simhash_reader_begin(Relation index, BufferAccessStrategy strategy, SimhashNextBlock next,
					 void *arg)
{
	SimhashReader *r = palloc0(sizeof(SimhashReader));

	r->next = next;
	r->arg = arg;
	r->index = index;
	r->strategy = strategy;
	return r;
}

Buffer
simhash_reader_next(SimhashReader *r)
{
	BlockNumber blkno = r->next(r->arg);

	if (!BlockNumberIsValid(blkno))
		return InvalidBuffer;
	return ReadBufferExtended(r->index, MAIN_FORKNUM, blkno, RBM_NORMAL, r->strategy);
}

void
simhash_reader_end(SimhashReader *r)
{
	pfree(r);
}

#endif

/* The callback of a range of blocks, start .. end - 1 (SimhashBlockRange). */
BlockNumber
simhash_block_range_next(void *arg)
{
	SimhashBlockRange *range = (SimhashBlockRange *) arg;

	if (range->next >= range->end)
		return InvalidBlockNumber;
	return range->next++;
}

/*
 * A walk over the run pages of table t of run r in key order (the order of
 * its directory), for a SimhashReader: it holds a copy of one directory page
 * at a time and checks each link before it names the block.
 */
void
simhash_dir_walk_init(SimhashDirWalk *w, Relation index, BufferAccessStrategy strategy,
					  const SimhashMetaPageData *meta, int r, int t)
{
	w->index = index;
	w->strategy = strategy;
	w->gen = meta->list.runs[r].gen;
	w->table = t;
	w->next_dir = simhash_meta_dir(meta, r, t);
	/* a run a merge switched over already holds no entries of this table */
	w->pages_left = simhash_run_has(meta, r, t) ? meta->list.runs[r].npages : 0;
	w->nblocks = 0;
	w->dir_i = w->dir_n = 0;
	w->retired_ok = false;
}

BlockNumber
simhash_dir_walk_next(void *arg)
{
	SimhashDirWalk *w = (SimhashDirWalk *) arg;
	BlockNumber		blkno;

	if (w->pages_left == 0)
		return InvalidBlockNumber;
	if (w->dir_i >= w->dir_n)
	{
		BlockNumber dirblk = w->next_dir;
		Buffer		buf;

		simhash_check_link(w->index, SIMHASH_RUNLIST_BLKNO, dirblk, 0, &w->nblocks);
		buf = ReadBufferExtended(w->index, MAIN_FORKNUM, dirblk, RBM_NORMAL, w->strategy);
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		memcpy(w->dirpage.data, BufferGetPage(buf), BLCKSZ);
		UnlockReleaseBuffer(buf);
		simhash_page_check(w->index, w->dirpage.data, dirblk, SIMHASH_DIR, w->gen, w->table,
						   w->retired_ok ? SIMHASH_PAGE_READABLE : SIMHASH_PAGE_LIVE);
		w->next_dir++;
		w->dir_i = 0;
		w->dir_n = SimhashDirEntries(w->index, dirblk, w->dirpage.data);
		if (w->dir_n == 0)
		{
			w->pages_left = 0;
			return InvalidBlockNumber;
		}
	}
	blkno = simhash_dir_block(SimhashDirEntry(w->dirpage.data, w->dir_i));
	w->dir_i++;
	w->pages_left--;
	simhash_check_link(w->index, w->next_dir - 1, blkno, 0, &w->nblocks);
	return blkno;
}
