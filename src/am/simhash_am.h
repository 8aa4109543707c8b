/*
 * simhash_am.h — the "simhash" index access method: shared declarations.
 *
 * On-disk layout
 * --------------
 * Block 0 is the metapage.  Every other page is one of:
 *   RUN      part of one table's sorted run: packed (permuted key, heap TID)
 *            entries in key order; the opaque area holds the table number and
 *            hikey, the last key written on the page.  Table t's run is the
 *            contiguous block range [meta->run_start[t], + meta->run_npages).
 *            Every table holds every indexed row once, so all runs have the
 *            same length.
 *   DIR      right after each run, SimhashDirPages(run_npages) pages holding
 *            the hikey of every run page in order (8 bytes each), so a probe
 *            binary-searches a page or two instead of the run itself.
 *   PENDING  an unsorted chain of (fingerprint, heap TID) entries written by
 *            aminsert; a scan reads it linearly.  A merge turns it into runs.
 *   NULLS    a chain of heap TIDs of rows whose key is NULL; only a scan
 *            without quals (full or ORDER BY) returns them, last.
 *   DELETED  no longer referenced; content kept intact until safexid is
 *            older than every snapshot, then the page goes to the FSM.
 * Entries are SIMHASH_ENTRY_SIZE bytes (8-byte key + 6-byte TID, unaligned,
 * read with memcpy) from PageGetContents() up to pd_lower.
 *
 * Locking protocol
 * ----------------
 * - The metapage content lock protects the metapage.  Scans take it shared
 *   just long enough to copy the run directory and chain heads; they then
 *   read run/pending pages one at a time under a share lock, copying what
 *   they need before releasing it.  No scan holds two page locks.
 * - aminsert takes the metapage lock exclusively, then the tail page of the
 *   pending (or NULLs) chain; a new tail page is allocated (always by
 *   extending the relation), initialised and linked under the metapage
 *   lock, all in one GenericXLog record.
 * - A merge (VACUUM, or aminsert when the pending list outgrows its limit)
 *   holds the heavyweight page lock on block 0 (ExclusiveLock; inserts try it
 *   conditionally) so that only one merge runs.  It seals the pending chain
 *   (moves it to meta->sealed_head; new inserts start a fresh chain), reads
 *   table 0's run and the sealed chain, writes new runs to fresh pages,
 *   switches the metapage to them in one WAL record, and only then marks the
 *   old pages DELETED with safexid = next full xid.  A scan that copied the
 *   old directory keeps reading intact old pages; they are recycled (FSM) by
 *   a later VACUUM once GlobalVisCheckRemovableFullXid(safexid) says no such
 *   scan can remain.  On a hot standby the primary's horizon does not cover
 *   standby snapshots, so every page a scan reads is also checked against
 *   the generation it expects (opaque->gen); a recycled page makes the scan
 *   start over from the current metapage (or, once rows were returned,
 *   fail with 40001).  Only merges take pages from the FSM (and only one
 *   merge runs at a time), re-checking that each page really is recyclable;
 *   each merge first moves newly recyclable pages into the FSM.
 * - Every page change is WAL-logged: GenericXLog for incremental changes and
 *   merges, log_newpage_range() after a bulk build.
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
#include "utils/relcache.h"

#include "simhash.h"
#include "tables.h"

#define SIMHASH_MAGIC			0x53484958	/* "SHIX" */
#define SIMHASH_VERSION			2
#define SIMHASH_METAPAGE_BLKNO	0
#define SIMHASH_MAX_TABLES		256
#define SIMHASH_PAGE_ID			0xFF83

/* Strategies and support of the operator classes. */
#define SIMHASH_WITHIN_GUC_STRATEGY		1	/* a % b: radius simhash.max_distance */
#define SIMHASH_WITHIN_QUERY_STRATEGY	2	/* a %@ simhash_query(b, radius) */
#define SIMHASH_DISTANCE_STRATEGY		3	/* ORDER BY a <~> b */
#define SIMHASH_PAIR_STRATEGY			4	/* simhash_query @%@ simhash_query
											 * (exclusion constraints) */
#define SIMHASH_NSTRATEGIES				4
#define SIMHASH_NPROC					0

/* Page flags (opaque->flags). */
#define SIMHASH_META		(1 << 0)
#define SIMHASH_RUN			(1 << 1)
#define SIMHASH_PENDING		(1 << 2)
#define SIMHASH_NULLS		(1 << 3)
#define SIMHASH_DELETED		(1 << 4)
#define SIMHASH_DIR			(1 << 5)

typedef struct SimhashPageOpaqueData
{
	uint64		hikey;			/* RUN: last key written on the page */
	FullTransactionId safexid;	/* DELETED: recyclable once all-visible */
	BlockNumber next;			/* PENDING/NULLS: next page of the chain */
	uint16		table;			/* RUN: table number */
	uint16		flags;
	uint16		unused;
	uint16		page_id;		/* SIMHASH_PAGE_ID, for tools */
	uint32		gen;			/* RUN/DIR: merge count of the runs it belongs to;
								 * PENDING: its chain's id.  Kept when DELETED,
								 * so a scan can tell a recycled page. */
} SimhashPageOpaqueData;

typedef SimhashPageOpaqueData *SimhashPageOpaque;

#define SimhashPageGetOpaque(page) \
	((SimhashPageOpaque) PageGetSpecialPointer(page))

/* Packed entry: key or fingerprint, then the heap TID. */
#define SIMHASH_ENTRY_SIZE	(sizeof(uint64) + sizeof(ItemPointerData))
#define SIMHASH_PAGE_CAPACITY \
	((int) ((BLCKSZ - MAXALIGN(SizeOfPageHeaderData) - \
			 MAXALIGN(sizeof(SimhashPageOpaqueData))) / SIMHASH_ENTRY_SIZE))

#define SIMHASH_DIR_CAPACITY \
	((int) ((BLCKSZ - MAXALIGN(SizeOfPageHeaderData) - \
			 MAXALIGN(sizeof(SimhashPageOpaqueData))) / sizeof(uint64)))
#define SimhashDirPages(run_npages) \
	(((run_npages) + SIMHASH_DIR_CAPACITY - 1) / SIMHASH_DIR_CAPACITY)
/* Pages of one table's extent: its run and the run's directory. */
#define SimhashExtentPages(run_npages) \
	((run_npages) + SimhashDirPages(run_npages))

#define SimhashPageEntries(page) \
	((int) ((((PageHeader) (page))->pd_lower - MAXALIGN(SizeOfPageHeaderData)) / \
			SIMHASH_ENTRY_SIZE))
#define SimhashPageEntry(page, i) \
	((char *) PageGetContents(page) + (Size) (i) * SIMHASH_ENTRY_SIZE)

static inline uint64
simhash_entry_key(const char *e)
{
	uint64		k;

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

typedef struct SimhashMetaPageData
{
	uint32		magic;
	uint32		version;
	int32		bits;
	int32		blocks;
	int32		ntables;
	BlockNumber run_npages;		/* pages of each table's run */
	uint64		run_count;		/* entries in each table's run */
	BlockNumber pending_head;	/* chain filled by aminsert */
	BlockNumber pending_tail;
	uint64		npending;
	BlockNumber sealed_head;	/* chain being merged (or left by a crash) */
	BlockNumber nulls_head;
	BlockNumber nulls_tail;
	uint32		pending_chain;	/* id of the pending chain (0: none yet) */
	uint32		sealed_chain;
	uint32		chain_seq;		/* last chain id handed out */
	uint64		nsealed;
	uint64		nnulls;
	uint64		merges;			/* how many merges have completed */
	BlockNumber run_start[SIMHASH_MAX_TABLES];
} SimhashMetaPageData;

typedef SimhashMetaPageData *SimhashMetaPage;

#define SimhashPageGetMeta(page) ((SimhashMetaPage) PageGetContents(page))

/* Reloptions. */
typedef struct SimhashOptions
{
	int32		vl_len_;
	int			bits;
	int			blocks;			/* 0: bits + 2 */
} SimhashOptions;

#define SIMHASH_DEFAULT_BITS	3
#define SIMHASH_DEFAULT_EXTRA_BLOCKS	1	/* blocks = bits + 1: measured best, see README */

/* A row to place: its fingerprint and heap TID. */
typedef struct SimhashItem
{
	uint64		fp;
	ItemPointerData tid;
} SimhashItem;

/* A growable array of items in CurrentMemoryContext (huge allocations allowed). */
typedef struct SimhashItemArray
{
	SimhashItem *items;
	int64		n;
	int64		cap;
} SimhashItemArray;

extern void simhash_items_push(SimhashItemArray *a, uint64 fp, ItemPointer tid);

/* Sorts items by fingerprint, then TID (merges, the self-check). */
extern void simhash_sort_items(SimhashItem *items, size_t n);

/* Callback of a merge: true when the heap TID is dead (VACUUM). */
typedef bool (*SimhashDeadCallback) (ItemPointer tid, void *state);

/* Options and layout (utils.c) */
extern relopt_kind simhash_relopt_kind;
extern int	simhash_max_distance;
extern void simhash_init_reloptions(void);
extern void simhash_options_resolve(Relation index, int *bits, int *blocks);
extern sh_table *simhash_layout(int blocks, int bits, int *ntables);
extern void simhash_init_page(Page page, uint16 flags);
extern void simhash_init_metapage(Page page, int bits, int blocks, int ntables);
extern Buffer simhash_new_buffer(Relation index);
extern bool simhash_page_recyclable(Page page);
extern uint64 simhash_datum_fp(Datum d);
extern bool simhash_index_value(Relation index, Datum value, uint64 *fp);
extern void simhash_read_meta(Relation index, SimhashMetaPageData *copy);
extern int	simhash_probe_flips(const SimhashMetaPageData *meta, int radius, double *nprobes);

/* AM callbacks */
extern bytea *simhash_options(Datum reloptions, bool validate);
extern bool simhash_validate(Oid opclassoid);
extern char *simhash_buildphasename(int64 phasenum);
extern IndexBuildResult *simhash_build(Relation heap, Relation index, struct IndexInfo *indexInfo);
extern void simhash_buildempty(Relation index);
extern bool simhash_insert(Relation index, Datum *values, bool *isnull,
						   ItemPointer ht_ctid, Relation heapRel,
						   IndexUniqueCheck checkUnique, bool indexUnchanged,
						   struct IndexInfo *indexInfo);
extern IndexBulkDeleteResult *simhash_bulkdelete(IndexVacuumInfo *info,
												 IndexBulkDeleteResult *stats,
												 IndexBulkDeleteCallback callback,
												 void *callback_state);
extern IndexBulkDeleteResult *simhash_vacuumcleanup(IndexVacuumInfo *info,
													IndexBulkDeleteResult *stats);
extern bool simhash_canreturn(Relation index, int attno);
extern void simhash_costestimate(PlannerInfo *root, IndexPath *path, double loop_count,
								 Cost *indexStartupCost, Cost *indexTotalCost,
								 Selectivity *indexSelectivity, double *indexCorrelation,
								 double *indexPages);
extern IndexScanDesc simhash_beginscan(Relation index, int nkeys, int norderbys);
extern void simhash_rescan(IndexScanDesc scan, ScanKey keys, int nkeys,
						   ScanKey orderbys, int norderbys);
extern bool simhash_gettuple(IndexScanDesc scan, ScanDirection dir);
extern int64 simhash_getbitmap(IndexScanDesc scan, TIDBitmap *tbm);
extern void simhash_endscan(IndexScanDesc scan);

/* Runs and merges (merge.c) */
extern void simhash_write_runs(Relation index, SimhashItem *items, int64 nitems,
							   const sh_table *tables, int ntables,
							   BlockNumber *run_start, BlockNumber *run_npages,
							   bool use_fsm, uint32 gen);
extern void simhash_merge(Relation index, SimhashDeadCallback dead, void *dead_state,
						  IndexBulkDeleteResult *stats);
extern void simhash_sort_keys(uint64 *keys, ItemPointerData *tids, int64 n);
extern int64 simhash_pending_limit(const SimhashMetaPageData *meta);
extern void simhash_recycle_pages(Relation index, IndexBulkDeleteResult *stats);

/* The self-check (check.c); the caller holds ShareLock on both relations. */
extern void simhash_check_index(Relation heap, Relation index);

/* Query helpers (ops.c) */
extern int	simhash_query_radius(Datum query, uint64 *fp);
extern double simhash_random_within(int radius);
extern int	simhash_clause_radius(Node *rightop, bool is_query);

/* Progress phases of CREATE INDEX */
#define SIMHASH_PHASE_SCAN	2
#define SIMHASH_PHASE_SORT	3
#define SIMHASH_PHASE_WRITE	4

#endif							/* SIMHASH_AM_H */
