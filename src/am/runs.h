/*
 * runs.h — sorted runs: rows to place, reading a run in key order, writing
 * one (runs.c), and the flushes and merges that make them (merge.c).
 * README: "Runs and merges".
 */
#ifndef SIMHASH_RUNS_H
#define SIMHASH_RUNS_H

#include "page.h"

#include "tables.h"

/* A row to place: its fingerprint, or a table's permuted key, and heap TID. */
typedef struct SimhashItem
{
	uint64			key;
	ItemPointerData tid;
} SimhashItem;

/* A growable array of items in CurrentMemoryContext (huge allocations allowed). */
typedef struct SimhashItemArray
{
	SimhashItem *items;
	int64		 n;
	int64		 cap;
} SimhashItemArray;

extern void simhash_items_push(SimhashItemArray *a, uint64 key, ItemPointer tid);

/* Sorts items by key, then TID (runs, the self-check). */
extern void simhash_sort_items(SimhashItem *items, size_t n);

/* Callback of a merge: true when the heap TID is dead (VACUUM). */
typedef bool (*SimhashDeadCallback)(ItemPointer tid, void *state);

/*
 * simhash.debug_pause_merge (merge.c; the setting is defined in options.c): a testing aid,
 * superuser only.  A merge of a session that sets it waits after switching
 * its first table over, until the backend is cancelled or terminated.
 */
extern bool simhash_debug_pause_merge;

/*
 * Reading one (run, table) page by page in key order (runs.c): merges, and
 * simhash_pairs through simhash_run_cursor_*, which also reads the pages of
 * a run a concurrent merge retired (intact while its snapshot lives).
 */
typedef struct SimhashRunCursor
{
	Relation	   index;
	SimhashDirWalk walk;
	SimhashReader *reader; /* NULL until the first page is asked for */
	bool		   done;
	bool		   retired_ok;
	int			   i, n;
	PGAlignedBlock page;
} SimhashRunCursor;

extern void
simhash_run_cursor_open(SimhashRunCursor *c, Relation index, BufferAccessStrategy strategy,
						const SimhashMetaPageData *meta, int r, int t);
extern void
simhash_run_cursor_init(SimhashRunCursor *c, Relation index, BufferAccessStrategy strategy,
						const SimhashMetaPageData *meta, int r, int t);
extern bool simhash_run_cursor_next_page(SimhashRunCursor *c);
extern void simhash_run_cursor_close(SimhashRunCursor *c);

/* The current entry, or false at the end. */
static inline bool
simhash_run_cursor_peek(SimhashRunCursor *c, uint64 *key, ItemPointer tid)
{
	const char *e;

	if (c->i >= c->n && !simhash_run_cursor_next_page(c))
		return false;
	e = SimhashPageEntry(c->page.data, c->i);
	*key = simhash_entry_key(e);
	simhash_entry_tid(e, tid);
	return true;
}

/* Writing one table's run, page by page (runs.c): build, flush, merge. */
typedef struct SimhashRunWriter
{
	Relation				index;
	Relation				heap;
	bool					concurrent; /* WAL-log each page, take free pages */
	int						table;
	uint32					gen;
	PGAlignedBlock			image; /* the page being filled */
	int						n;	   /* entries on it */
	uint64					count;
	char				   *dir; /* directory entries, one per page */
	BlockNumber				npages;
	BlockNumber				dircap;
	SimhashPagePool		   *pool; /* pages to take first, or NULL */
	struct SimhashPageSink *sink; /* a bulk build's: takes every page, or NULL */
} SimhashRunWriter;

extern void simhash_run_begin(SimhashRunWriter *w, Relation index, Relation heap, bool concurrent,
							  int table, uint32 gen);
extern void simhash_run_begin_sink(SimhashRunWriter *w, Relation index,
								   struct SimhashPageSink *sink, int table, uint32 gen);
extern void simhash_run_add(SimhashRunWriter *w, uint64 key, ItemPointer tid);
extern BlockNumber simhash_run_finish(SimhashRunWriter *w);
extern void
simhash_write_sorted_runs(Relation index, Relation heap, SimhashItem *items, int64 nitems,
						  const sh_table *tables, int ntables, bool concurrent, uint32 gen,
						  BlockNumber *dir, BlockNumber *npages, bool progress);

/* Flushes and merges (merge.c) */
extern bool simhash_flush(Relation index, Relation heap, SimhashDeadCallback dead, void *dead_state,
						  IndexBulkDeleteResult *stats);
extern void simhash_insert_merges(Relation index, Relation heap);
extern void simhash_clear_interrupted(Relation index);
extern void simhash_take_over_merge(Relation index, Relation heap, BufferAccessStrategy strategy,
									SimhashPagePool *pool);
extern void simhash_compact(Relation index, Relation heap, BufferAccessStrategy strategy,
							SimhashPagePool *pool);
extern void simhash_clean_begin(Relation index, uint32 gen);
extern void simhash_clean_end(Relation index, Relation heap, uint32 gen, uint64 count, bool uneven,
							  BufferAccessStrategy strategy);
extern int64 simhash_pending_limit(Relation index);
extern int	 simhash_run_level(uint64 count, int64 pending_rows);

#endif /* SIMHASH_RUNS_H */
