/*
 * page.h — the page layer of the simhash access method: the metapage and
 * run list read and checked (meta.c), page identity checks, page
 * allocation, retirement and recycling (pages.c), bulk writing
 * (bulkwrite.c) and reading blocks ahead of use (readahead.c).  The format
 * of the pages is in format.h, the rules in src/am/README.
 */
#ifndef SIMHASH_PAGE_H
#define SIMHASH_PAGE_H

#include "postgres.h"

#include "access/genam.h"
#include "storage/bufmgr.h"
#include "storage/lock.h"
#include "utils/relcache.h"

#include "format.h"

/*
 * The entries of an entry page (run, pending, NULLs) or a directory page,
 * checked: a page whose bounds are damaged raises index_corrupted (pages.c).
 */
#define SimhashPageEntries(index, blkno, page) \
	simhash_page_nentries(index, blkno, page, SIMHASH_ENTRY_SIZE)
#define SimhashDirEntries(index, blkno, page) \
	simhash_page_nentries(index, blkno, page, SIMHASH_DIR_ENTRY_SIZE)

/* The metapage and run list, read and checked (meta.c) */
extern void simhash_read_meta(Relation index, SimhashMetaPageData *copy);
extern bool simhash_read_meta_current(Relation index, SimhashMetaPageData *copy);
extern void simhash_check_meta(Relation index, const SimhashMetaPageData *meta);
extern int	simhash_run_cmp_desc(const void *a, const void *b);

/* Pages: initialisation, allocation, retirement, recycling (pages.c) */
extern void		simhash_check_link(Relation index, BlockNumber from, BlockNumber blkno,
								   BlockNumber steps, BlockNumber *nblocks);
extern int		simhash_page_nentries(Relation index, BlockNumber blkno, Page page, Size size);
extern void		simhash_init_page(Page page, uint16 flags);
extern void		simhash_init_metapage(Page page, int bits, int blocks, int ntables);
extern void		simhash_init_runlist(Page page);
extern Buffer	simhash_extend_buffer(Relation index);
extern Buffer	simhash_alloc_buffer(Relation index, Relation heap, bool use_fsm);
extern Buffer	simhash_alloc_buffer_nowait(Relation index, Relation heap);
extern void		simhash_free_unused(Relation index, Buffer buf);
extern bool		simhash_page_recyclable(Relation heap, Page page);
extern void		simhash_refresh_horizon(Relation heap);
extern void		simhash_fsm_update(Relation index);
extern void		simhash_defer_free(Relation index, BlockNumber blkno, FullTransactionId safexid);
extern void		simhash_record_deferred(Relation index, Relation heap);
extern void		simhash_delete_page(Relation index, BlockNumber blkno, FullTransactionId safexid,
									BufferAccessStrategy strategy);
extern Relation simhash_open_heap(Relation index);

/*
 * Pages a merge run by VACUUM retired, which the same merge reuses once
 * every transaction that had a snapshot when they were retired has ended
 * (VACUUM's own snapshot is not one that reads the index; a backend's own
 * scans may be, so an INSERT's merge does not use a pool).  They are in the
 * FSM too; whoever takes one first, under its exclusive lock, keeps it.
 */
typedef struct SimhashPooledPage
{
	BlockNumber blkno;
	uint32		gen; /* of the run it belonged to */
} SimhashPooledPage;

typedef struct SimhashPagePool
{
	MemoryContext		  cxt; /* where its arrays live (outlives merges) */
	SimhashPooledPage	 *pages;
	int					  n;
	int					  cap;
	VirtualTransactionId *vxids; /* transactions with a snapshot at the
									 * last retirement */
	int					  nvxids;
	bool				  safe; /* they have all ended or dropped that snapshot */
	int					  takes;
} SimhashPagePool;

extern void	  simhash_pool_add(SimhashPagePool *pool, BlockNumber blkno, uint32 gen);
extern void	  simhash_pool_seal(SimhashPagePool *pool);
extern Buffer simhash_pool_take(SimhashPagePool *pool, Relation index);
extern bool	  simhash_pool_free(SimhashPagePool *pool, BlockNumber blkno, Page page);
extern BlockNumber
			simhash_recycle_pages(Relation index, Relation heap, BufferAccessStrategy strategy,
								  SimhashPagePool *pool, IndexBulkDeleteResult *stats);
extern void simhash_truncate_tail(Relation index, Relation heap, SimhashPagePool *pool,
								  BlockNumber last, IndexBulkDeleteResult *stats);

/*
 * Writing the pages of a new index outside shared buffers (bulkwrite.c): a
 * bulk build fills each page in memory and hands it over with its block
 * number; pages are WAL-logged in batches and made durable at the end.  The
 * relation is new and no one else writes it meanwhile, except other bulk
 * writers, each writing blocks of its own: those of a parallel build, begun
 * once simhash_bulk_extend() has made the file long enough for all their
 * blocks (a writer zero-fills any gap below a block past the file's end).
 * One page at a time: the page simhash_bulk_page() returns is filled and
 * passed to simhash_bulk_write() (which takes it) before the next is asked
 * for.
 */
typedef struct SimhashBulkWriter SimhashBulkWriter;

extern void				  simhash_bulk_extend(Relation index, BlockNumber nblocks);
extern SimhashBulkWriter *simhash_bulk_begin(Relation index);
extern Page				  simhash_bulk_page(SimhashBulkWriter *b);
extern void				  simhash_bulk_write(SimhashBulkWriter *b, BlockNumber blkno, Page page);
extern void				  simhash_bulk_finish(SimhashBulkWriter *b);

/*
 * Where a bulk build puts its pages: put() takes a page image (the callee
 * copies it) and the block it goes to; next is the block the next page
 * goes to, which the writers of runs and chains take in turn.
 * simhash_bulk_sink() puts them into a bulk writer.
 */
typedef struct SimhashPageSink
{
	void (*put)(struct SimhashPageSink *sink, BlockNumber blkno, Page image);
	BlockNumber next;
} SimhashPageSink;

extern SimhashPageSink *simhash_bulk_sink(SimhashBulkWriter *b, BlockNumber first);

/*
 * Reading blocks named ahead of use (readahead.c): a read stream where the
 * server has them (compat.h), block by block otherwise.  next returns the
 * next block to read, InvalidBlockNumber at the end; it may read other
 * pages itself (a directory) and raise errors.  simhash_reader_next returns
 * each block's buffer pinned, not locked, InvalidBuffer at the end.
 */
typedef BlockNumber (*SimhashNextBlock)(void *arg);
typedef struct SimhashReader SimhashReader;
typedef struct SimhashBlockRange
{
	BlockNumber next;
	BlockNumber end; /* exclusive */
} SimhashBlockRange;

extern SimhashReader *simhash_reader_begin(Relation index, BufferAccessStrategy strategy,
										   SimhashNextBlock next, void *arg);
extern Buffer		  simhash_reader_next(SimhashReader *r);
extern void			  simhash_reader_end(SimhashReader *r);
extern BlockNumber	  simhash_block_range_next(void *arg);

/* The run pages of table t of run r, in key order (readahead.c). */
typedef struct SimhashDirWalk
{
	Relation			 index;
	BufferAccessStrategy strategy;
	uint32				 gen;
	int					 table;
	BlockNumber			 next_dir;	 /* next directory block to read */
	BlockNumber			 pages_left; /* run pages not named yet */
	BlockNumber			 nblocks;	 /* the index's size, for simhash_check_link */
	int					 dir_i, dir_n;
	bool				 retired_ok; /* a page a merge retired is still read */
	PGAlignedBlock		 dirpage;
} SimhashDirWalk;

extern void simhash_dir_walk_init(SimhashDirWalk *w, Relation index, BufferAccessStrategy strategy,
								  const SimhashMetaPageData *meta, int r, int t);
extern BlockNumber simhash_dir_walk_next(void *arg);

/* A private copy of block blkno, read under a share lock through the strategy. */
extern void
simhash_read_copy(Relation index, BlockNumber blkno, BufferAccessStrategy strategy, Page copy);

/*
 * The checked reads of the page layer (pagecheck.c): a page's identity
 * (kinds: a mask of page flags; gen, table: < 0 for any), what a reader
 * does with a page that is not what it expects (mode), and a chain's walk.
 */
typedef enum SimhashPageMode
{
	SIMHASH_PAGE_LIVE,	   /* a live page, else index_corrupted */
	SIMHASH_PAGE_READABLE, /* or retired by a merge; reused: 40001 */
	SIMHASH_PAGE_RETRY,	   /* live or retired, else 40001 */
	SIMHASH_PAGE_TRY	   /* live or retired, else false */
} SimhashPageMode;

extern void simhash_corrupt_block(Relation index, BlockNumber blkno, const char *detail);
extern bool simhash_page_check(Relation index, Page page, BlockNumber blkno, uint16 kinds,
							   int64 gen, int table, SimhashPageMode mode);
extern Buffer
simhash_read_page(Relation index, BlockNumber blkno, BufferAccessStrategy strategy, int lockmode,
				  uint16 kinds, int64 gen, int table, SimhashPageMode mode);

typedef struct SimhashChain
{
	Relation			 index;
	BufferAccessStrategy strategy;
	int					 lockmode;
	uint16				 kinds;
	int64				 gen;
	SimhashPageMode		 mode;
	bool				 vacuum; /* a vacuum delay point before each page */
	BlockNumber			 next;	 /* the next page to read */
	BlockNumber			 prev;	 /* the page that links to it */
	BlockNumber			 steps;	 /* pages read: the loop check */
	BlockNumber			 nblocks;
	BlockNumber			 blkno; /* the page returned last */
	Buffer				 buf;	/* and its buffer, locked */
	bool				 lost;	/* TRY: a page that is no longer the chain's */
} SimhashChain;

extern void
			simhash_chain_begin(SimhashChain *c, Relation index, BufferAccessStrategy strategy,
								BlockNumber head, int lockmode, uint16 kinds, int64 gen, SimhashPageMode mode);
extern Page simhash_chain_next(SimhashChain *c);
extern void simhash_chain_end(SimhashChain *c);

#endif /* SIMHASH_PAGE_H */
