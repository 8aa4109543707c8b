/*
 * simhash_am.h — what the files of the simhash index access method share,
 * grouped by role: lock tags and tuning constants, reloptions, the page
 * layer (checked reads, allocation, chains, bulk writing, readahead), runs
 * and merges, the cost model, the AM callbacks.  The on-disk format is in
 * format.h, the design (page formats, lock order, the scan/VACUUM protocol)
 * in src/am/README.
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

#include "format.h"

/* ---- Locks and tuning constants (README: lock order, runs and merges) ---- */

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

/* Runs: size ratio between levels. */
#define SIMHASH_TIER_RATIO 4
/* The largest merge an INSERT does: pages written over all tables (16 MB). */
#define SIMHASH_INSERT_MERGE_PAGES 2048

/* Strategies and support of the operator classes. */
#define SIMHASH_WITHIN_GUC_STRATEGY	  1 /* a % b: radius simhash.max_distance */
#define SIMHASH_WITHIN_QUERY_STRATEGY 2 /* a %@ simhash_query(b, radius) */
#define SIMHASH_DISTANCE_STRATEGY	  3 /* ORDER BY a <~> b */
#define SIMHASH_PAIR_STRATEGY		  4 /* query @%@ query (exclusion) */
#define SIMHASH_NSTRATEGIES			  4
#define SIMHASH_NPROC				  0

/* ---- The cost model (cost.c) ---------------------------------------------- */

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
	double keyed;		/* the share of the sweep's rows whose keys the backend may keep */
	int	   kept_tables; /* tables whose keys the backend may keep whole, for probes */
} SimhashReadModel;

/* Read-cost model (cost.c) */
extern int	  simhash_covered_radius(int bits, int blocks, int flips);
extern void	  simhash_read_model(const SimhashMetaPageData *meta, SimhashReadModel *m);
extern int	  simhash_flips_for(const SimhashReadModel *m, int radius);
extern double simhash_pending_cost(const SimhashReadModel *m);
extern double simhash_linear_cost(const SimhashReadModel *m);
extern double simhash_probe_cost(const SimhashReadModel *m, int flips, int split);
extern double simhash_step_cost(const SimhashReadModel *m, int t, int flips);
extern int	  simhash_probe_level(const SimhashReadModel *m, int radius, int *split);
extern int	  simhash_radius_plan(const SimhashReadModel *m, int radius, double *cost, int *split);
extern bool	  simhash_knn_level_worth(const SimhashReadModel *m, int flips);
extern int	  simhash_knn_expected_radius(const SimhashReadModel *m, double k);
/* KNN sweeps from the start when probing cannot reach this row (cost.c) */
#define SIMHASH_KNN_SWEEP_ROWS 10
extern bool simhash_knn_sweep_first(const SimhashReadModel *m);

/* ---- Reloptions and settings (options.c) ---------------------------------- */

/*
 * simhash.debug_sweep, a testing aid: whether radius and KNN scans choose
 * between the sweep and the probes by cost (auto), always sweep, or never do
 * when probes can answer (scan.c, knn.c).
 */
#define SIMHASH_SWEEP_AUTO	 0
#define SIMHASH_SWEEP_ALWAYS 1
#define SIMHASH_SWEEP_NEVER	 2
extern int simhash_debug_sweep;

/*
 * simhash.sweep_cache_size (kB): the sorted keys of table 0 a backend keeps
 * for the sweep (dirstore.c), which the cost model counts on (cost.c).
 */
extern int simhash_sweep_cache_size;

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

/* Reloptions and layout (options.c) */
extern relopt_kind simhash_relopt_kind;
extern void		   simhash_options_resolve(Relation index, int *bits, int *blocks);
extern int		   simhash_pending_pages(Relation index);
extern sh_table	  *simhash_layout(int blocks, int bits, int *ntables);

/* Indexed values (handler.c) */
extern bool simhash_index_value(Relation index, Datum value, uint64 *fp);

/* ---- The access method's callbacks and SQL helpers ----------------------- */

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

/* Progress phases of CREATE INDEX */
#define SIMHASH_PHASE_SCAN	2
#define SIMHASH_PHASE_SORT	3
#define SIMHASH_PHASE_WRITE 4

#endif /* SIMHASH_AM_H */
