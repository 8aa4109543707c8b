/*
 * simhash_am.h — the "simhash" index access method: shared declarations.
 *
 * On-disk layout (format version 3)
 * ---------------------------------
 * Block 0 is the metapage, block 1 the RUNLIST (the list of runs, apart so
 * that the metapage each INSERT updates stays small).  The index is
 * log-structured: every indexed row is in exactly one place, a RUN or the
 * pending buffer.
 *
 *   RUN      a run is a set of rows, stored once per table t as pages of
 *            packed (table t's permuted key, heap TID) entries in (key, TID)
 *            order; the opaque area holds the table, the run's generation
 *            and hikey, the last key on the page when it was written.  Only
 *            VACUUM changes a run page, removing dead entries in place (the
 *            page counts them in opaque->removed; hikey stays, an upper
 *            bound).  A run's pages may lie anywhere in the file.
 *   DIR      each (run, table) has a directory: contiguous pages of
 *            (hikey, block) pairs, one per run page in key order, so a probe
 *            binary-searches the directory (a page or two) and then reads
 *            the run pages that can hold its key range.  The run list
 *            holds every run's generation, rows and pages per table, and
 *            the first directory block of each (run, table).
 *   PENDING  the pending buffer: an unsorted chain of (fingerprint, TID)
 *            entries appended by aminsert; scans read it linearly.  It is
 *            bounded by the reloption pending_pages (default 4): the INSERT
 *            that fills it flushes it into a new small run.
 *   NULLS    a chain of heap TIDs of rows whose key is NULL; only a scan
 *            without quals (full or ORDER BY) returns them, last.
 *   DELETED  no longer referenced; content kept intact until safexid is
 *            older than every snapshot of the database, then the page is
 *            recycled through the FSM.
 * Entries are SIMHASH_ENTRY_SIZE bytes (8-byte key + 6-byte TID, unaligned,
 * read with memcpy) from PageGetContents() up to pd_lower.  Every page ends
 * with SimhashPageOpaqueData, whose last two bytes are SIMHASH_PAGE_ID.
 *
 * Runs and merges (runs.c)
 * ------------------------
 * A run's level is floor(log4(rows / pending rows)), SIMHASH_TIER_RATIO = 4.
 * - Flush (aminsert, when the pending buffer holds pending_pages pages; or
 *   VACUUM): the pending chain is sealed, its entries (at most a few pages)
 *   are sorted per table in memory and written as a new run.
 * - Tier merge (aminsert, right after a flush): when SIMHASH_TIER_RATIO runs
 *   share a level and their merge stays small (SIMHASH_INSERT_MERGE_PAGES
 *   pages over all tables), they are merged into one run of the next level;
 *   so no INSERT does more than a small, bounded amount of work.  Larger
 *   levels accumulate runs until VACUUM compacts them.
 * - Compaction (VACUUM, autovacuum): the runs sorted by size, largest first,
 *   are kept while each holds at least SIMHASH_TIER_RATIO times the rows of
 *   all smaller runs together; the smaller ones are merged into one run.
 *   Afterwards run sizes grow geometrically, so a table holds at most
 *   log5(rows / pending rows) + 1 runs, and a VACUUM rewrites at most a
 *   quarter of the index unless the runs were of similar size.
 * - VACUUM's bulk delete removes dead TIDs from the run pages in place, so
 *   deletes make no new copy of anything, and compacts the pending buffer
 *   and the NULLs chain in place.  A run being cleaned is flagged uneven in
 *   the run list first: after a crash its tables may differ by dead entries
 *   (merges skip it, the check does not compare its counts) until the next
 *   bulk delete, handed the same dead TIDs, has cleaned it whole.  VACUUM's
 *   cleanup rewrites a run whose pages are less than half full.
 * Every merge is a streaming k-way merge of already-sorted runs, table by
 * table: it holds one page per input run and 12 bytes per output page (the
 * directory), whatever the number of rows, so its memory stays far below
 * maintenance_work_mem.  Each table is switched over as soon as it is
 * written (the run list then holds the new run for the tables written and
 * the inputs for the others; a run does not hold a table whose directory
 * slot is InvalidBlockNumber), and the inputs' pages of that table are
 * retired at once.  A merge that a cancel, an error or a crash
 * interrupted is taken over by the next writer that holds the merge lock
 * (see "Marks of running operations" below).  VACUUM's merges reuse the pages they retired as soon
 * as every transaction that had a snapshot then has ended (a virtual xid
 * check, SimhashPagePool), so even a merge of the whole index needs new
 * pages for one table only.  A bulk build writes one run.
 *
 * A scan copies the metapage once, then for a radius query probes every run
 * of every table (binary search in the run's directory, then the run pages
 * it lists) and reads the pending buffer; its cost grows with the number of
 * runs, which is logarithmic in the rows.  A scan copies each directory it
 * probes more than once (KNN: at its first probe) into memory: the
 * backend's, kept across scans (dirstore.c: a directory never changes under
 * its run's generation; dropped on any relcache invalidation of the index;
 * at most a quarter of work_mem, with the buffer each run page was last
 * found in, for ReadRecentBuffer), else the scan's own (within a quarter of
 * work_mem; a larger one is read from its pages); the run pages it then
 * reads are checked for their run's generation as always.  A backend keeps,
 * across scans and in memory only (rd_amcache, probe.c), a bitmap of the
 * first key bits of each small run (at most 16 pages per table) it met in a
 * second scan, and skips such a run for a prefix it lacks: runs only lose
 * entries and a generation names one run for the index's life, so nothing
 * on disk changes.  The pending rows are tested against the query before
 * anything else is done with them.
 * A radius scan (and a scan without conditions) returns its rows in batches
 * of at most half of work_mem in hits, each resuming after the last entry the
 * previous one met (SimhashScanPos in scan_int.h); a bitmap scan adds each row
 * to the bitmap as it meets it; a KNN step whose band outgrows half of
 * work_mem keeps its first rows in a bounded heap and returns the rest by
 * bounded passes over its level (knn.c), and so does a radius scan with
 * ORDER BY over its probes; the NULLs chain is read in batches of whole
 * pages (its pages are never recycled nor unlinked).
 *
 * Lock order
 * ----------
 * Heavyweight locks (lock tags, not buffer locks):
 *   flush lock (LockPage block 0) and merge lock (LockPage block 1): never
 *   held together; each is taken while no buffer lock is held.  Under
 *   either, no other heavyweight lock is taken but the relation extension
 *   lock (PostgreSQL asserts it of page locks): VACUUM's truncation takes
 *   AccessExclusiveLock only after releasing the merge lock.
 *   The relation extension lock is innermost: nothing else is locked while
 *   it is held but the new pages it adds.
 * Buffer content locks:
 *   metapage -> run list -> one page at a time (a chain's tail, then a new
 *   tail page; a run or directory page is copied and released before the
 *   next).  Pages taken from the FSM or the pool are locked conditionally.
 * Between the two: never wait for a heavyweight lock while holding a buffer
 * lock.  Allocation under the metapage lock (aminsert's new tail page) only
 * tries: the FSM, then ConditionalLockRelationForExtension; if the
 * extension lock is busy, aminsert releases the metapage and tail, waits for
 * a page with no buffer locked, and locks the metapage again while holding
 * that page.  This one exception (a new page before the metapage) cannot
 * deadlock: nothing links to the page yet, so no backend that holds the
 * metapage or a page waits for it (allocators lock FSM pages conditionally;
 * VACUUM's sweep, which may wait for it, holds no buffer lock then).
 *
 * Marks of running operations
 * ---------------------------
 * meta->merge_gen names the run a merge is writing; every merge holds the
 * merge lock from the record that sets it to the one that clears it.  So a
 * backend that holds the merge lock and finds merge_gen set knows its owner
 * is gone (cancelled, failed, or crashed) and takes it over before merging:
 * an INSERT's merges and VACUUM alike (simhash_take_over_merge: forget a
 * merge that switched no table; merge the half-switched run and the inputs
 * again into a new run otherwise).  meta->flush_gen and the sealed chain,
 * left by a flush that did not finish, need no owner check: every flush
 * holds the flush lock, and the next one flushes the sealed chain that is
 * still there under a new generation (the pages the abandoned one wrote
 * are referenced by nothing and VACUUM's sweep retires them).
 * simhash.debug_pause_merge (superuser, a testing aid) stops a merge after
 * its first table is switched over until the backend is cancelled or
 * terminated, so that tests interrupt a merge midway deterministically.
 *
 * Locking protocol
 * ----------------
 * - The metapage content lock protects the metapage and the run list (taken
 *   in that order).  Scans take both shared just long enough to copy them;
 *   they then read pages one at a time under a share lock, copying what they
 *   need before releasing it.
 * - aminsert takes the metapage lock exclusively, then the tail page of the
 *   pending (or NULLs) chain; a new tail page is allocated (from the FSM,
 *   never waiting for a page lock, or by extending the relation, waiting
 *   for the extension lock only with no buffer locked: see the lock order),
 *   initialised and linked under the metapage lock, all in one GenericXLog
 *   record.
 * - Flushes are serialised by the heavyweight page lock on block 0
 *   (SIMHASH_FLUSH_LOCK), merges by the one on block 1 (SIMHASH_MERGE_LOCK);
 *   these are lock tags, not buffer locks.  An INSERT tries them
 *   conditionally (it waits for the flush lock only when the pending buffer
 *   is twice over its limit); VACUUM waits.  A flush seals the pending chain
 *   (new inserts start a fresh chain) and records its run's generation in
 *   meta->flush_gen; a merge records its generation in meta->merge_gen.
 *   Either writes its run to pages nobody references, then in one WAL
 *   record adds it to the metapage (a flush also drops the sealed chain; a
 *   merge does this table by table, and drops its input runs with the
 *   last), and only then marks the replaced pages DELETED with safexid =
 *   next full xid.  A flush never takes the last free run slot, which is
 *   kept for the new run of a merge (listed beside its inputs).
 * - VACUUM's in-place removal holds the merge lock, so no merge reads a run
 *   it changes; scans copy a run page under its share lock.
 * - Page allocation (pages.c): pages come from the FSM or by extending the
 *   relation (directories of more than one page, which must be contiguous,
 *   always extend); a page taken from the FSM is locked conditionally and
 *   re-checked recyclable, so two backends never both take it.  A DELETED
 *   page is recyclable once GlobalVisCheckRemovableFullXid(heap, safexid)
 *   says no snapshot of this database can still read it (the heap's own
 *   horizon: a transaction in another database does not hold it back).
 *   The pages a flush or an INSERT's merge retires are offered to the FSM
 *   by the same backend's next flush or merge once they are recyclable;
 *   the allocator puts back a page the FSM offers that is not recyclable
 *   yet.  VACUUM records recyclable pages in the
 *   FSM again, retires pages a crash left unreferenced (RUN/DIR/PENDING
 *   pages of a generation that is neither current nor being written), and,
 *   once it has released the merge lock, truncates free pages at the end of
 *   the file under a conditional AccessExclusiveLock (not in a parallel
 *   VACUUM).
 * - On a hot standby the primary's horizon does not cover standby
 *   snapshots, so every page a scan reads is also checked against the
 *   generation it expects (opaque->gen): a recycled page makes the scan
 *   start over from the current metapage (or, once rows were returned,
 *   fail with 40001).
 * - The scan/VACUUM interlock.  A scan copies what it reads and holds no pin
 *   between calls, so nothing stops VACUUM from removing an entry whose TID
 *   the scan still has to return, and the heap from reusing the TID.  An
 *   index scan under an MVCC snapshot needs no more: the executor visits
 *   the heap tuple, a removed one is gone and a tuple that reuses its slot
 *   was inserted after the scan's snapshot, so it is invisible.  An
 *   index-only scan skips the heap visit on all-visible pages, and VACUUM
 *   sets the pages all-visible once it has removed the index entries, so it
 *   would return a removed row; a scan under a non-MVCC snapshot (exclusion
 *   constraints) could see the new tuple.  Such scans (xs_want_itup, or a
 *   non-MVCC snapshot) hold a ShareLock on the interlock tag
 *   (SIMHASH_INTERLOCK_*) from before they read an entry until they have
 *   returned every TID they read: a radius scan per batch (released when
 *   the batch is used up, before the next is read), KNN for the scan's life
 *   (its carry holds TIDs read by earlier steps); endscan and rescan
 *   release it.  ambulkdelete, once it has removed entries and released its
 *   buffer and page locks, takes and releases the ExclusiveLock on the tag:
 *   it waits for every scan that may hold a removed TID, as nbtree's VACUUM
 *   waits for the pin of a scan on a leaf page (an open index-only cursor
 *   makes VACUUM wait until it moves past its batch or closes).  A scan
 *   taking the interlock and VACUUM waiting for it hold no page lock
 *   (PostgreSQL allows no heavyweight lock to be taken under a page lock),
 *   so the deadlock detector sees every wait.  Bitmap scans need no
 *   interlock.  A hot standby has none (replay waits for no scan; nbtree's
 *   replay waits for the pins), so during recovery amcanreturn says no and
 *   the standby runs plain index scans, whose heap visit decides.
 * - Every page change is WAL-logged: GenericXLog for inserts, flushes and
 *   merges, log_newpages() of every page a bulk build writes (bulkwrite.c).
 */
#ifndef SIMHASH_AM_H
#define SIMHASH_AM_H

#include "postgres.h"

#include "access/amapi.h"
#include "access/generic_xlog.h"
#include "access/itup.h"
#include "access/reloptions.h"
#include "access/transam.h"
#include "nodes/pathnodes.h"
#include "storage/bufmgr.h"
#include "storage/lock.h"
#include "utils/relcache.h"

#include "simhash.h"
#include "tables.h"

#define SIMHASH_MAGIC		   0x53484958 /* "SHIX" */
#define SIMHASH_VERSION		   3
#define SIMHASH_METAPAGE_BLKNO 0
#define SIMHASH_RUNLIST_BLKNO  1
#define SIMHASH_MAX_TABLES	   256
#define SIMHASH_PAGE_ID		   0xFF53 /* last two bytes of every page */

/* Heavyweight lock tags (LockPage on these block numbers). */
#define SIMHASH_FLUSH_LOCK 0
#define SIMHASH_MERGE_LOCK 1
/*
 * The scan/VACUUM interlock: a tuple lock (LockTuple) on this TID of the
 * index relation.  No tuple of an index relation is ever locked otherwise
 * (row locks name heap relations), so it collides with nothing.
 */
#define SIMHASH_INTERLOCK_BLKNO 0
#define SIMHASH_INTERLOCK_OFFNO 1

/* Runs: size ratio between levels; bounds of the metapage's run list. */
#define SIMHASH_TIER_RATIO 4
#define SIMHASH_MAX_RUNS   64
#define SIMHASH_RUN_SLOTS  1536 /* (run, table) directory heads */
/* The largest merge an INSERT does: pages written over all tables (16 MB). */
#define SIMHASH_INSERT_MERGE_PAGES 2048

/* Strategies and support of the operator classes. */
#define SIMHASH_WITHIN_GUC_STRATEGY	  1 /* a % b: radius simhash.max_distance */
#define SIMHASH_WITHIN_QUERY_STRATEGY 2 /* a %@ simhash_query(b, radius) */
#define SIMHASH_DISTANCE_STRATEGY	  3 /* ORDER BY a <~> b */
#define SIMHASH_PAIR_STRATEGY		  4 /* query @%@ query (exclusion) */
#define SIMHASH_NSTRATEGIES			  4
#define SIMHASH_NPROC				  0

/* Page flags (opaque->flags). */
#define SIMHASH_META	(1 << 0)
#define SIMHASH_RUN		(1 << 1)
#define SIMHASH_PENDING (1 << 2)
#define SIMHASH_NULLS	(1 << 3)
#define SIMHASH_DELETED (1 << 4)
#define SIMHASH_DIR		(1 << 5)
#define SIMHASH_RUNLIST (1 << 6)

typedef struct SimhashPageOpaqueData
{
	uint64			  hikey;   /* RUN: last key on the page; DIR: last hikey */
	FullTransactionId safexid; /* DELETED: recyclable once all-visible */
	BlockNumber		  next;	   /* PENDING/NULLS: next page of the chain */
	/*
	 * RUN/DIR: its run's generation; PENDING: its chain's.  Kept when DELETED,
	 * so a scan can tell a recycled page.
	 */
	uint32 gen;
	uint16 table; /* RUN/DIR: table number */
	uint16 flags;
	/* RUN: entries VACUUM removed in place (the page was written with entries + removed) */
	uint16 removed;
	uint16 page_id; /* SIMHASH_PAGE_ID: the page's last 2 bytes */
} SimhashPageOpaqueData;

typedef SimhashPageOpaqueData *SimhashPageOpaque;

/*
 * Where this access method puts the special space of every page, whatever
 * pd_special says: PageGetSpecialPointer() asserts a valid pd_special, and a
 * new (zeroed) page, which VACUUM's sweep and the allocators meet after a
 * crash, or a damaged one, must give its flags (zeroes) or a corruption
 * error, not an assertion failure (simhash_page_nentries checks pd_special).
 */
#define SimhashPageGetOpaque(page) \
	((SimhashPageOpaque) ((char *) (page) + BLCKSZ - MAXALIGN(sizeof(SimhashPageOpaqueData))))

/* Packed entry: key or fingerprint, then the heap TID. */
#define SIMHASH_ENTRY_SIZE (sizeof(uint64) + sizeof(ItemPointerData))
#define SIMHASH_PAGE_CAPACITY \
	((int) ((BLCKSZ - MAXALIGN(SizeOfPageHeaderData) - MAXALIGN(sizeof(SimhashPageOpaqueData))) / \
			SIMHASH_ENTRY_SIZE))

/* Directory entry: a run page's hikey, then its block number (packed). */
#define SIMHASH_DIR_ENTRY_SIZE (sizeof(uint64) + sizeof(BlockNumber))
#define SIMHASH_DIR_CAPACITY \
	((int) ((BLCKSZ - MAXALIGN(SizeOfPageHeaderData) - MAXALIGN(sizeof(SimhashPageOpaqueData))) / \
			SIMHASH_DIR_ENTRY_SIZE))
#define SimhashDirPages(run_npages) \
	(((run_npages) + SIMHASH_DIR_CAPACITY - 1) / SIMHASH_DIR_CAPACITY)

/*
 * The entries of an entry page (run, pending, NULLs) or a directory page,
 * checked: a page whose bounds are damaged raises index_corrupted (pages.c).
 */
#define SimhashPageEntries(index, blkno, page) \
	simhash_page_nentries(index, blkno, page, SIMHASH_ENTRY_SIZE)
#define SimhashPageEntry(page, i) ((char *) PageGetContents(page) + (Size) (i) *SIMHASH_ENTRY_SIZE)
#define SimhashDirEntries(index, blkno, page) \
	simhash_page_nentries(index, blkno, page, SIMHASH_DIR_ENTRY_SIZE)
#define SimhashDirEntry(page, i) \
	((char *) PageGetContents(page) + (Size) (i) *SIMHASH_DIR_ENTRY_SIZE)

static inline uint64
simhash_entry_key(const char *e)
{
	uint64 k;

	memcpy(&k, e, sizeof(k));
	return k;
}

static inline void
simhash_entry_tid(const char *e, ItemPointer tid)
{
	memcpy(tid, e + sizeof(uint64), sizeof(ItemPointerData));
}

static inline void
simhash_entry_set(char *e, uint64 key, ItemPointer tid)
{
	memcpy(e, &key, sizeof(key));
	memcpy(e + sizeof(uint64), tid, sizeof(ItemPointerData));
}

static inline BlockNumber
simhash_dir_block(const char *e)
{
	BlockNumber b;

	memcpy(&b, e + sizeof(uint64), sizeof(b));
	return b;
}

static inline void
simhash_dir_set(char *e, uint64 hikey, BlockNumber blkno)
{
	memcpy(e, &hikey, sizeof(hikey));
	memcpy(e + sizeof(uint64), &blkno, sizeof(blkno));
}

/* One run of the metapage's list. */
typedef struct SimhashRun
{
	uint32		gen;	/* generation of its pages */
	BlockNumber npages; /* run pages per table */
	uint64		count;	/* entries per table */
} SimhashRun;

/*
 * The run list: block 1, so that the metapage an INSERT updates stays small
 * (GenericXLog computes a delta over the page's contents).
 */
typedef struct SimhashRunList
{
	int32	   nruns;
	int32	   unused;
	SimhashRun runs[SIMHASH_MAX_RUNS];
	/* first directory block of (run r, table t): run_dir[r * ntables + t] */
	BlockNumber run_dir[SIMHASH_RUN_SLOTS];
	/*
	 * uneven[r]: VACUUM is removing dead entries of run r in place, or a
	 * crash interrupted it: its tables may hold different numbers of entries
	 * (the dead ones some tables still hold), count is table 0's, and no
	 * merge takes it until a VACUUM has cleaned every table of it.
	 */
	uint8 uneven[SIMHASH_MAX_RUNS];
} SimhashRunList;

/*
 * A copy of the metapage (block 0: every field but the list) and of the
 * run list (block 1).
 */
typedef struct SimhashMetaPageData
{
	uint32		   magic;
	uint32		   version;
	int32		   bits;
	int32		   blocks;
	int32		   ntables;
	uint32		   gen_seq;		 /* last generation handed out (runs, chains) */
	uint32		   flush_gen;	 /* run a flush is writing (0: none) */
	uint32		   merge_gen;	 /* run a merge is writing (0: none) */
	BlockNumber	   pending_head; /* chain filled by aminsert */
	BlockNumber	   pending_tail;
	uint32		   pending_chain; /* generation of the pending chain */
	BlockNumber	   sealed_head;	  /* chain being flushed (or left by a crash) */
	uint32		   sealed_chain;
	BlockNumber	   nulls_head;
	BlockNumber	   nulls_tail;
	uint32		   unused;
	uint64		   npending;
	uint64		   nsealed;
	uint64		   nnulls;
	uint64		   flushes; /* how many flushes have completed */
	uint64		   merges;	/* how many merges have completed */
	SimhashRunList list;	/* on disk: block 1 */
} SimhashMetaPageData;

typedef SimhashMetaPageData *SimhashMetaPage;

/* Bytes of SimhashMetaPageData stored on the metapage. */
#define SIMHASH_META_SIZE offsetof(SimhashMetaPageData, list)

/* The metapage's fields; never touch ->list through this pointer. */
#define SimhashPageGetMeta(page)	((SimhashMetaPage) PageGetContents(page))
#define SimhashPageGetRunList(page) ((SimhashRunList *) PageGetContents(page))

StaticAssertDecl(MAXALIGN(SizeOfPageHeaderData) + sizeof(SimhashRunList) <=
					 BLCKSZ - MAXALIGN(sizeof(SimhashPageOpaqueData)),
				 "the run list must fit in a page");

static inline BlockNumber
simhash_meta_dir(const SimhashMetaPageData *meta, int r, int t)
{
	return meta->list.run_dir[r * meta->ntables + t];
}

/*
 * Does run r hold table t?  While a merge switches tables over one by one,
 * its new run holds the tables written so far and the inputs the others
 * (their directory slots are InvalidBlockNumber for the rest).
 */
static inline bool
simhash_run_has(const SimhashMetaPageData *meta, int r, int t)
{
	return BlockNumberIsValid(simhash_meta_dir(meta, r, t));
}

/* Runs the metapage can list with this many tables. */
static inline int
simhash_max_runs(int ntables)
{
	return Min(SIMHASH_MAX_RUNS, SIMHASH_RUN_SLOTS / Max(ntables, 1));
}

/*
 * What the cost model reads from the metapage: indexed non-NULL rows
 * (pending included), pending entries (read whole by every scan), and sorted
 * runs per table (each probe searches every run).
 */
static inline double
simhash_meta_pending(const SimhashMetaPageData *meta)
{
	return (double) meta->npending + (double) meta->nsealed;
}

static inline double
simhash_meta_rows(const SimhashMetaPageData *meta)
{
	double n = simhash_meta_pending(meta);

	for (int r = 0; r < meta->list.nruns; r++)
		if (simhash_run_has(meta, r, 0))
			n += (double) meta->list.runs[r].count;
	return n;
}

static inline int
simhash_meta_runs(const SimhashMetaPageData *meta)
{
	return meta->list.nruns;
}

/* Pages of one table over all runs (what a linear pass reads). */
static inline uint64
simhash_meta_run_pages(const SimhashMetaPageData *meta)
{
	uint64 n = 0;

	for (int r = 0; r < meta->list.nruns; r++)
		if (simhash_run_has(meta, r, 0))
			n += meta->list.runs[r].npages;
	return n;
}

/* The read-cost model of a scan (cost.c), shared by the planner and the scan. */
typedef struct SimhashReadModel
{
	double rows;
	double pending;
	int	   runs;
	int	   bits;
	int	   blocks;
	int	   ntables;
	int	   prefix_bits[SIMHASH_MAX_TABLES];
} SimhashReadModel;

/* Reloptions. */
typedef struct SimhashOptions
{
	int32 vl_len_;
	int	  bits;
	int	  blocks;		 /* 0: bits + 1 */
	int	  pending_pages; /* pages of the pending buffer */
} SimhashOptions;

#define SIMHASH_DEFAULT_BITS		  3
#define SIMHASH_DEFAULT_EXTRA_BLOCKS  1 /* blocks = bits + 1: measured best, see README */
#define SIMHASH_DEFAULT_PENDING_PAGES 4

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
 * simhash.debug_pause_merge (runs.c; defined in options.c): a testing aid,
 * superuser only.  A merge of a session that sets it waits after switching
 * its first table over, until the backend is cancelled or terminated.
 */
extern bool simhash_debug_pause_merge;

/* Reloptions and layout (options.c) */
extern relopt_kind simhash_relopt_kind;
extern void		   simhash_options_resolve(Relation index, int *bits, int *blocks);
extern int		   simhash_pending_pages(Relation index);
extern sh_table	  *simhash_layout(int blocks, int bits, int *ntables);

/* Indexed values (handler.c) */
extern bool simhash_index_value(Relation index, Datum value, uint64 *fp);

/* The metapage and run list, read and checked (meta.c) */
extern void simhash_read_meta(Relation index, SimhashMetaPageData *copy);
extern bool simhash_read_meta_current(Relation index, SimhashMetaPageData *copy);
extern void simhash_check_meta(Relation index, const SimhashMetaPageData *meta);
extern int	simhash_run_cmp_desc(const void *a, const void *b);

/* Read-cost model (cost.c) */
extern int	  simhash_covered_radius(int bits, int blocks, int flips);
extern void	  simhash_read_model(const SimhashMetaPageData *meta, SimhashReadModel *m);
extern int	  simhash_flips_for(const SimhashReadModel *m, int radius);
extern double simhash_pending_cost(const SimhashReadModel *m);
extern double simhash_linear_cost(const SimhashReadModel *m);
extern double simhash_probe_cost(const SimhashReadModel *m, int flips);
extern double simhash_step_cost(const SimhashReadModel *m, int t, int flips);
extern int	  simhash_radius_plan(const SimhashReadModel *m, int radius, double *cost);
extern bool	  simhash_knn_level_worth(const SimhashReadModel *m, int flips);
extern int	  simhash_knn_expected_radius(const SimhashReadModel *m, double k);

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
	bool				  safe; /* they have all ended */
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
 * relation must be empty and nothing else may write it meanwhile.  One page
 * at a time: the page simhash_bulk_page() returns is filled and passed to
 * simhash_bulk_write() (which takes it) before the next is asked for.
 */
typedef struct SimhashBulkWriter SimhashBulkWriter;

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
extern bool simhash_run_cursor_peek(SimhashRunCursor *c, uint64 *key, ItemPointer tid);
extern void simhash_run_cursor_close(SimhashRunCursor *c);

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

/* Flushes and merges (runs.c) */
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
extern void simhash_expect_page(Relation index, Page page, BlockNumber blkno, uint16 flags,
								uint32 gen, int table);
extern void simhash_expect_readable(Relation index, Page page, BlockNumber blkno, uint16 flags,
									uint32 gen, int table);
extern int64 simhash_pending_limit(Relation index);
extern int	 simhash_run_level(uint64 count, int64 pending_rows);

/* AM callbacks */
extern bytea			*simhash_options(Datum reloptions, bool validate);
extern bool				 simhash_validate(Oid opclassoid);
extern char				*simhash_buildphasename(int64 phasenum);
extern IndexBuildResult *simhash_build(Relation heap, Relation index, struct IndexInfo *indexInfo);
extern void				 simhash_buildempty(Relation index);
extern bool
simhash_insert(Relation index, Datum *values, bool *isnull, ItemPointer ht_ctid, Relation heapRel,
			   IndexUniqueCheck checkUnique, bool indexUnchanged, struct IndexInfo *indexInfo);
extern IndexBulkDeleteResult *
simhash_bulkdelete(IndexVacuumInfo *info, IndexBulkDeleteResult *stats,
				   IndexBulkDeleteCallback callback, void *callback_state);
extern IndexBulkDeleteResult			 *
simhash_vacuumcleanup(IndexVacuumInfo *info, IndexBulkDeleteResult *stats);
extern bool simhash_canreturn(Relation index, int attno);
extern void
simhash_costestimate(PlannerInfo *root, IndexPath *path, double loop_count, Cost *indexStartupCost,
					 Cost *indexTotalCost, Selectivity *indexSelectivity, double *indexCorrelation,
					 double *indexPages);
extern IndexScanDesc simhash_beginscan(Relation index, int nkeys, int norderbys);
extern void
simhash_rescan(IndexScanDesc scan, ScanKey keys, int nkeys, ScanKey orderbys, int norderbys);
extern bool	 simhash_gettuple(IndexScanDesc scan, ScanDirection dir);
extern int64 simhash_getbitmap(IndexScanDesc scan, TIDBitmap *tbm);
extern void	 simhash_endscan(IndexScanDesc scan);
extern void	 simhash_vacuum_wait_for_scans(Relation index);

/* The self-check (check.c); the caller holds ShareLock on both relations. */
extern void simhash_check_index(Relation heap, Relation index);

/* Query helpers (ops.c) */
extern int	  simhash_query_radius(Datum query, uint64 *fp);
extern double simhash_random_within(int radius);
extern int	  simhash_clause_radius(Node *rightop, bool is_query);

/*
 * Counting bits in a hot loop without pg_popcount64's function pointer
 * (probe.c, pairs.c): the bit-parallel count, and on x86-64 built without
 * POPCNT (SIMHASH_POPCNT_DISPATCH) whether the CPU has the instruction, so
 * that such a loop is compiled twice and one copy chosen once.
 */
static inline int
simhash_popcount_swar(uint64 x)
{
	x = x - ((x >> 1) & UINT64CONST(0x5555555555555555));
	x = (x & UINT64CONST(0x3333333333333333)) + ((x >> 2) & UINT64CONST(0x3333333333333333));
	x = (x + (x >> 4)) & UINT64CONST(0x0f0f0f0f0f0f0f0f);
	return (int) ((x * UINT64CONST(0x0101010101010101)) >> 56);
}
#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__) && !defined(__POPCNT__)
#define SIMHASH_POPCNT_DISPATCH 1
extern bool simhash_cpu_has_popcnt(void);
#endif

/* Progress phases of CREATE INDEX */
#define SIMHASH_PHASE_SCAN	2
#define SIMHASH_PHASE_SORT	3
#define SIMHASH_PHASE_WRITE 4

#endif /* SIMHASH_AM_H */
