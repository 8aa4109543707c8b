/*
 * format.h — the on-disk format of a simhash index: block numbers, page
 * kinds, the special space every page ends with, the packed entries of run,
 * chain and directory pages, the metapage and the run list, and their
 * accessors.  The design behind it is in src/am/README; the offsets are
 * mirrored by t/021_index_corruption.pl, which must change with this file.
 * Nothing here reads a buffer: the checked reads are the page layer's
 * (page.h).
 */
#ifndef SIMHASH_FORMAT_H
#define SIMHASH_FORMAT_H

#include "postgres.h"

#include "access/transam.h"
#include "storage/block.h"
#include "storage/bufpage.h"
#include "storage/itemptr.h"

#define SIMHASH_MAGIC		   0x53484958 /* "SHIX" */
#define SIMHASH_VERSION		   3
#define SIMHASH_METAPAGE_BLKNO 0
#define SIMHASH_RUNLIST_BLKNO  1
#define SIMHASH_MAX_TABLES	   256
#define SIMHASH_PAGE_ID		   0xFF53 /* last two bytes of every page */

/* Bounds of the run list (block 1). */
#define SIMHASH_MAX_RUNS  64
#define SIMHASH_RUN_SLOTS 1536 /* (run, table) directory heads */

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
#define SIMHASH_SPECIAL_OFFSET	   (BLCKSZ - MAXALIGN(sizeof(SimhashPageOpaqueData)))
#define SimhashPageGetOpaque(page) ((SimhashPageOpaque) ((char *) (page) + SIMHASH_SPECIAL_OFFSET))

/* Bytes of a page between its header and its special space. */
#define SIMHASH_PAGE_USABLE (SIMHASH_SPECIAL_OFFSET - MAXALIGN(SizeOfPageHeaderData))

/* Packed entry: key or fingerprint, then the heap TID. */
#define SIMHASH_ENTRY_SIZE	  (sizeof(uint64) + sizeof(ItemPointerData))
#define SIMHASH_PAGE_CAPACITY ((int) (SIMHASH_PAGE_USABLE / SIMHASH_ENTRY_SIZE))

/* Directory entry: a run page's hikey, then its block number (packed). */
#define SIMHASH_DIR_ENTRY_SIZE (sizeof(uint64) + sizeof(BlockNumber))
#define SIMHASH_DIR_CAPACITY   ((int) (SIMHASH_PAGE_USABLE / SIMHASH_DIR_ENTRY_SIZE))
#define SimhashDirPages(run_npages) \
	(((run_npages) + SIMHASH_DIR_CAPACITY - 1) / SIMHASH_DIR_CAPACITY)

#define SimhashPageEntry(page, i) ((char *) PageGetContents(page) + (Size) (i) *SIMHASH_ENTRY_SIZE)
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

StaticAssertDecl(sizeof(SimhashRunList) <= SIMHASH_PAGE_USABLE, "the run list must fit in a page");

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

#endif /* SIMHASH_FORMAT_H */
