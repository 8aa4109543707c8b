/*
 * cost.c — what a scan reads, in planner cost units: amcostestimate, and the
 * same model for the scan's own choice between probing and a linear pass.
 *
 * A radius r is answered by probing every table with the prefixes within f
 * flipped bits of the query's, for the least f whose covered radius (below)
 * reaches r, or by one linear pass over table 0 when that is cheaper.  KNN
 * probes the prefixes exactly f = 0, 1, 2, ... bits away, table by table,
 * and stops at the step that covers the k-th distance (knn.c).  Pending
 * entries are read whole by every pass (by KNN once).
 *
 * Costs: a page of the sweep (sweep.c: table 0's run pages read in order,
 * their keys filtered in a tight loop) costs SWEEP_PAGE_COST, a page touched
 * by a probe (directory or run) PROBE_PAGE_COST (the index is small and its
 * directory hot), every entry a probe compares cpu_operator_cost, every hit
 * returned HIT_COST.  Calibrated at 1M rows, bits 3 (4 tables of 16-bit
 * prefixes, 1,725 pages a table), CPU time on a loaded machine (load 8-18,
 * bench/limit.sh): a range probed cost 0.8-1.1 us (2,788 probes at radius
 * 13: 2.3-3.0 ms; 10,068 at radius 16: 6.4-8.0 ms), a sweep 1.2-1.9 us a
 * page (2.2-3.3 ms; memory-bound, 14-byte entries): a probe of one run (four
 * page touches, 0.24) is charged half a sweep page, so SWEEP_PAGE_COST = 0.5
 * of seq_page_cost.  KNN_PASS_FACTOR: KNN's linear pass costs 1.25-1.5
 * sweeps (it keeps its nearest rows), and a KNN step is cheaper than its
 * prefixes times a probe (it reads each page once for all the prefixes on
 * it: level 4 at 1M touches fewer pages than a sweep reads, 2.3 ms against
 * 2.75 ms for levels 0-3 and a pass), which the factor absorbs: 2.5.
 */
#include "simhash_am.h"
#include "page.h"
#include "dirstore.h"

#include <math.h>

#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "utils/lsyscache.h"
#include "utils/selfuncs.h"

/* The cost of an index the planner must not choose while anything else will do. */
#define PRICED_OUT 1.0e10

/* a page touched by a probe, in units of seq_page_cost */
#define PROBE_PAGE_COST 0.06
/* a page of the sweep, its entries filtered, in units of seq_page_cost */
#define SWEEP_PAGE_COST 0.5
/*
 * a page of the sweep whose keys the backend keeps (dirstore.c): its 581
 * keys filtered from a packed array, the page itself read only for a key
 * in range.  Measured (CPU, bench/limit.sh, load 4-5): 0.41 us a page at 1M
 * rows, 0.52 us at 4M (the keys outgrow the CPU caches), against a probed
 * range's 0.7 and 1.1 us (0.28 and 0.52 here)
 */
#define SWEEP_KEYED_PAGE_COST 0.2
/*
 * a range probed over kept keys (probe_list.c), beyond filtering its keys as
 * a kept page's are: its bucket entries and first keys, fetched from memory,
 * in kept pages.  Measured (CPU, paired sessions, load 1): at 1M rows
 * (64MB), radius 13 probes 1,668 ranges of ~15 keys in 0.17-0.22 ms, each
 * range two bucket loads (buckets as wide as the prefixes) and its keys
 * filtered under a mask, against 0.41 us a kept page: 0.25-0.32 pages a
 * range, 0.03 of them its keys; radius 16 (4,608 ranges) probed 0.61-0.65
 * ms, swept 0.92-1.26.  At 100k rows radius 10 probed 0.063-0.073 ms, swept
 * 0.067-0.079; radius 13 probed 0.15-0.16, swept 0.08.  0.3 gives those
 * plans and no other change in bench/limit.sh's.  At 10M rows with every
 * table's keys kept a range costs more (~0.4 pages beyond its keys: the keys
 * outgrow the CPU's caches), where every radius probes anyway.  KNN's steps
 * are priced as page probes even so (simhash_step_cost): priced as kept
 * ranges, KNN-10 probed level 3 at 1M rows and level 4 at 4M instead of a
 * linear pass over kept keys, and took 35-50% more and twice as long.
 */
#define KEPT_RANGE_PAGES 0.3
/* KNN's linear pass, in sweeps */
#define KNN_PASS_FACTOR 2.5
/*
 * ... over kept keys: 1.2 (the pass counts the keys first and reads only
 * the pages of its rows; 1M rows, CPU a query, three paired rounds at a
 * load of 3.6: a KNN-10 pass 0.96-1.85 ms, a radius-16 sweep 0.88-1.31 ms)
 */
#define KNN_KEYED_PASS_FACTOR 1.2

/* KNN's linear pass, in planner units. */
static double
knn_pass_cost(const SimhashReadModel *m)
{
	return simhash_linear_cost(m) *
		   (m->keyed * KNN_KEYED_PASS_FACTOR + (1 - m->keyed) * KNN_PASS_FACTOR);
}
/*
 * a hit collected, sorted and handed out, in units of cpu_operator_cost
 * (measured at 1M rows: 0.28 us a hit, a linear pass 11 ms)
 */
#define HIT_COST 20

/* With `flips` flipped prefix bits, every row this near is reached (tables.h). */
int
simhash_covered_radius(int bits, int blocks, int flips)
{
	return sh_table_covered_radius(blocks, bits, flips);
}

/*
 * The share of `sorted` rows (table 0 of the runs) whose keys a backend may
 * keep for the sweep (dirstore.c): none when their directories do not fit in
 * the store's quarter of work_mem, else what simhash.sweep_cache_size holds
 * (8 bytes a key, 4 a page).
 */
static double
simhash_keyed_share(double sorted)
{
	double pages = ceil(sorted / SIMHASH_PAGE_CAPACITY);

	if (sorted <= 0 || simhash_dirstore_dir_bytes(pages) > simhash_dirstore_budget())
		return 0;
	return Min(1.0, (double) simhash_sweep_cache_size * 1024 /
						(sorted * sizeof(uint64) + pages * sizeof(uint32)));
}

/*
 * How many of ntables tables of `sorted` rows a backend may keep the keys of
 * whole, for the listed probes (dirstore.c): none when their directories do
 * not fit in the store's quarter of work_mem, else as many as
 * simhash.sweep_cache_size holds (8 bytes a key and half a byte of bucket
 * index, 4 a page).
 */
static int
simhash_kept_tables(double sorted, int ntables)
{
	double pages = ceil(sorted / SIMHASH_PAGE_CAPACITY);

	if (sorted <= 0 || simhash_dirstore_dir_bytes(pages) * ntables > simhash_dirstore_budget())
		return 0;
	return (int) Min((double) ntables,
					 floor((double) simhash_sweep_cache_size * 1024 /
						   (sorted * (sizeof(uint64) + 0.5) + pages * sizeof(uint32))));
}

/*
 * What the cost model needs from a metapage copy: rows, pending entries,
 * runs, the layout and each table's prefix bits.
 */
void
simhash_read_model(const SimhashMetaPageData *meta, SimhashReadModel *m)
{
	sh_table *tables;
	int		  t;

	m->rows = simhash_meta_rows(meta);
	m->pending = simhash_meta_pending(meta);
	m->runs = simhash_meta_runs(meta);
	m->bits = meta->bits;
	m->blocks = meta->blocks;
	tables = simhash_layout(meta->blocks, meta->bits, &m->ntables);
	for (t = 0; t < m->ntables; t++)
		m->prefix_bits[t] = tables[t].prefix_bits;
	pfree(tables);
	m->keyed = simhash_keyed_share(Max(m->rows - m->pending, 0.0));
	m->kept_tables = simhash_kept_tables(Max(m->rows - m->pending, 0.0), m->ntables);
}

/* The least flip count whose probes cover radius; -1 when none does. */
int
simhash_flips_for(const SimhashReadModel *m, int radius)
{
	int f;

	for (f = 0; f <= 64; f++)
		if (simhash_covered_radius(m->bits, m->blocks, f) >= radius)
			return f;
	return -1;
}

/* Pages that hold `entries` packed entries. */
static double
pages_of(double entries)
{
	return ceil(Max(entries, 0.0) / SIMHASH_PAGE_CAPACITY);
}

/* Reading the pending buffer, which every scan does. */
double
simhash_pending_cost(const SimhashReadModel *m)
{
	return pages_of(m->pending) * seq_page_cost + m->pending * cpu_operator_cost;
}

/* The sweep: one pass over table 0's sorted entries (pending not included). */
double
simhash_linear_cost(const SimhashReadModel *m)
{
	double sorted = Max(m->rows - m->pending, 0.0);

	return pages_of(sorted) *
		   (m->keyed * SWEEP_KEYED_PAGE_COST + (1 - m->keyed) * SWEEP_PAGE_COST) * seq_page_cost;
}

/*
 * One probe of table t: a directory search and a run page in every run, and
 * the prefix's entries; or, when `kept` and the backend may keep the table's
 * keys, a range of kept keys in every run (with one run, less than a probe
 * of pages at any size: two page touches cost 0.12, a range 0.06).
 */
static double
probe_unit_cost(const SimhashReadModel *m, int t, bool kept)
{
	double sorted = Max(m->rows - m->pending, 0.0);
	double run_pages = Max(pages_of(sorted / Max(m->runs, 1)), 1.0);
	double dir_reads = ceil(log2(Max(run_pages / SIMHASH_DIR_CAPACITY, 1.0))) + 1;
	double per_probe = ldexp(sorted, -m->prefix_bits[t]); /* sorted / 2^prefix_bits */
	double pages = (m->runs * (dir_reads + 1) + per_probe / SIMHASH_PAGE_CAPACITY) *
					   PROBE_PAGE_COST * seq_page_cost +
				   per_probe * cpu_operator_cost;
	double keys = (m->runs * KEPT_RANGE_PAGES + per_probe / SIMHASH_PAGE_CAPACITY) *
				  SWEEP_KEYED_PAGE_COST * seq_page_cost;

	return kept && t < m->kept_tables ? keys : pages;
}

/* C(n, k) as a double (0 outside 0 <= k <= n). */
static double
binomial(int n, int k)
{
	double c = 1;

	if (k < 0 || k > n)
		return 0;
	for (int i = 0; i < k; i++)
		c = c * (n - i) / (i + 1);
	return c;
}

/*
 * Every table probed with the prefixes within `flips` bits, those from table
 * `split` on within flips - 1 (pending not included).
 */
double
simhash_probe_cost(const SimhashReadModel *m, int flips, int split)
{
	double total = 0;

	for (int t = 0; t < m->ntables; t++)
	{
		int	   top = Min(sh_table_split_flips(t, flips, split), m->prefix_bits[t]);
		double unit, c = 1; /* C(prefix_bits, f), as binomial() computes it */

		if (top < 0)
			continue;
		unit = probe_unit_cost(m, t, true);
		for (int f = 0; f <= top; f++)
		{
			total += c * unit;
			c = c * (m->prefix_bits[t] - f) / (f + 1);
		}
	}
	return total;
}

/*
 * A KNN step: table t probed with the prefixes exactly `flips` bits away
 * (priced as page probes, kept keys or not: KEPT_RANGE_PAGES).
 */
double
simhash_step_cost(const SimhashReadModel *m, int t, int flips)
{
	return binomial(m->prefix_bits[t], flips) * probe_unit_cost(m, t, false);
}

/*
 * The fewest probes that cover radius: the least level (flips), and the
 * fewest tables probed at it (*split), the others at flips - 1, whose
 * covered radius reaches it (generalised pigeonhole: with one prefix block
 * a table, a row no probe reaches differs in flips + 1 bits in each of the
 * first split tables' blocks and flips in the others').  Radius 13 on the
 * default layout: two tables at 3 flipped bits and two at 2, 1,668 prefixes
 * instead of 2,788.  -1 when no level does.
 */
static int
probe_level_of(const SimhashReadModel *m, int radius, int *split)
{
	*split = m->ntables;
	for (int f = 0; f <= 64; f++)
		for (int s = 1; s <= m->ntables; s++)
			if (sh_table_covered_radius_partial(m->blocks, m->bits, f, s) >= radius)
			{
				*split = s;
				return f;
			}
	return -1;
}

/* ... remembered for radii 0 to 64 of the last layout asked (planner and scan ask alike) */
int
simhash_probe_level(const SimhashReadModel *m, int radius, int *split)
{
	static int	 known_blocks = -1, known_bits = -1;
	static bool	 known[65];
	static int8	 known_flips[65];
	static int16 known_split[65];

	if (radius < 0 || radius > 64)
		return probe_level_of(m, radius, split);
	if (m->blocks != known_blocks || m->bits != known_bits)
	{
		memset(known, 0, sizeof(known));
		known_blocks = m->blocks;
		known_bits = m->bits;
	}
	if (!known[radius])
	{
		int s;

		known_flips[radius] = (int8) probe_level_of(m, radius, &s);
		known_split[radius] = (int16) s;
		known[radius] = true;
	}
	*split = known_split[radius];
	return known_flips[radius];
}

/*
 * How a scan answers radius: the level to probe at (and *split, as
 * simhash_probe_level), or -1 for a linear pass; *cost is what it reads,
 * pending entries included.
 */
int
simhash_radius_plan(const SimhashReadModel *m, int radius, double *cost, int *split)
{
	int	   flips = simhash_probe_level(m, radius, split);
	double linear = simhash_linear_cost(m);
	double probe = flips >= 0 ? simhash_probe_cost(m, flips, *split) : linear + 1;

	if (cost)
		*cost = Min(probe, linear) + simhash_pending_cost(m);
	return probe <= linear ? flips : -1;
}

/*
 * KNN's probe levels: is probing level `flips` (every table, the prefixes
 * exactly `flips` bits away, table by table) cheaper than finishing with a
 * linear pass?  knn.c asks before each level; the cost model below follows
 * the same rule.
 */
bool
simhash_knn_level_worth(const SimhashReadModel *m, int flips)
{
	double level = 0;

	if (flips > 0 && simhash_covered_radius(m->bits, m->blocks, flips - 1) >= 64)
		return false;
	for (int t = 0; t < m->ntables; t++)
		level += simhash_step_cost(m, t, flips);
	/* the alternative: a linear pass for the next rows */
	return level <= knn_pass_cost(m);
}

/*
 * The distance of a random query's k-th nearest row: the least r with
 * rows * P(distance <= r) >= k (64 at most).
 */
int
simhash_knn_expected_radius(const SimhashReadModel *m, double k)
{
	double within = 0, c = 1;
	int	   r;

	for (r = 0; r < 64; r++)
	{
		within += c / 18446744073709551616.0; /* C(64, r) / 2^64 */
		if (m->rows * within >= k)
			break;
		c = c * (64 - r) / (r + 1);
	}
	return r;
}

/*
 * Does KNN sweep from the start?  When the levels worth probing cannot reach
 * the distance of a random query's SIMHASH_KNN_SWEEP_ROWS-th row, the order
 * ends in a linear pass anyway, and the probes before it are wasted (small
 * indexes: at 100k rows, levels 0-2 cover 11 bits, the 10th row lies ~17
 * away).  knn.c and the cost below ask the same question.
 */
bool
simhash_knn_sweep_first(const SimhashReadModel *m)
{
	int f;

	for (f = 1; simhash_knn_level_worth(m, f); f++)
		;
	return simhash_covered_radius(m->bits, m->blocks, f - 1) <
		   simhash_knn_expected_radius(m, SIMHASH_KNN_SWEEP_ROWS);
}

/*
 * Cost of the first k rows of ORDER BY fp <~> q for a query whose distances
 * to the rows are random (planted neighbours only make it cheaper): knn.c's
 * steps up to the one that covers the k-th distance, then linear passes; or
 * linear passes only (simhash_knn_sweep_first).
 */
static double
knn_cost(const SimhashReadModel *m, double k)
{
	double cost = simhash_pending_cost(m), linear = knn_pass_cost(m) + simhash_pending_cost(m);
	int	   r = simhash_knn_expected_radius(m, k), f;

	if (simhash_knn_sweep_first(m))
		return cost + linear * Max(1.0, ceil(log2(Max(k, 1.0) / 1000.0 + 1.0)));
	for (f = 0; f == 0 || simhash_knn_level_worth(m, f); f++)
		for (int t = 0; t < m->ntables; t++)
		{
			cost += simhash_step_cost(m, t, f);
			if (sh_table_covered_radius_partial(m->blocks, m->bits, f, t + 1) >= r)
				return cost;
		}
	/* linear passes of 1000, 2000, 4000, ... rows (knn.c) */
	return cost + linear * Max(1.0, ceil(log2(Max(k, 1.0) / 1000.0 + 1.0)));
}

/* The smallest radius among the index conditions; 65 when there is none. */
static int
path_radius(IndexPath *path)
{
	IndexOptInfo *index = path->indexinfo;
	int			  radius = 65;
	ListCell	 *lc;

	foreach (lc, path->indexclauses)
	{
		IndexClause *ic = lfirst_node(IndexClause, lc);
		ListCell	*lc2;

		foreach (lc2, ic->indexquals)
		{
			RestrictInfo *ri = lfirst_node(RestrictInfo, lc2);
			OpExpr		 *op = (OpExpr *) ri->clause;
			int			  strat, r;
			Oid			  lefttype, righttype;

			if (!IsA(op, OpExpr))
				continue;
			get_op_opfamily_properties(op->opno, index->opfamily[0], false, &strat, &lefttype,
									   &righttype);
			r = simhash_clause_radius(list_length(op->args) == 2 ? lsecond(op->args) : NULL,
									  strat == SIMHASH_WITHIN_QUERY_STRATEGY ||
										  strat == SIMHASH_PAIR_STRATEGY);
			radius = Min(radius, Min(r, 64));
		}
	}
	return radius;
}

/*
 * amcostestimate: prices what a scan of this path reads (probes, flipped-
 * prefix probes, a linear pass or KNN steps, plus the pending buffer) from the
 * index's metapage, through PostgreSQL's generic index costs.
 */
void
simhash_costestimate(PlannerInfo *root, IndexPath *path, double loop_count, Cost *indexStartupCost,
					 Cost *indexTotalCost, Selectivity *indexSelectivity, double *indexCorrelation,
					 double *indexPages)
{
	IndexOptInfo	   *index = path->indexinfo;
	Relation			rel = index_open(index->indexoid, AccessShareLock);
	SimhashMetaPageData meta;
	SimhashReadModel	m;
	GenericCosts		costs = {0};
	int					radius = path_radius(path);
	int					split;
	double				read;

	if (!simhash_read_meta_current(rel, &meta))
	{
		/*
		 * An index of an older release's format (REINDEX makes it usable):
		 * planning must not fail, so a query it could serve still runs on
		 * another path.  Priced as a disabled path (PostgreSQL 15's
		 * disable_cost, 1e10; 18 counts disabled paths instead of pricing
		 * them, and its planner still prefers an enabled path by cost), a
		 * plan uses it only when every other is disabled too, and its scan
		 * then raises 55000 with the REINDEX hint.
		 */
		index_close(rel, AccessShareLock);
		genericcostestimate(root, path, loop_count, &costs);
		*indexStartupCost = PRICED_OUT;
		*indexTotalCost = PRICED_OUT;
		*indexSelectivity = costs.indexSelectivity;
		*indexCorrelation = 0;
		*indexPages = costs.numIndexPages;
		return;
	}
	index_close(rel, AccessShareLock);
	simhash_read_model(&meta, &m);
	/* an index built on an empty table: trust the table's statistics */
	m.rows = Max(m.rows, index->tuples);

	genericcostestimate(root, path, loop_count, &costs);

	if (radius <= 64)
	{
		(void) simhash_radius_plan(&m, radius, &read, &split);
		/* answers are collected before the first is returned */
		*indexStartupCost = read;
		*indexTotalCost = read;
	}
	else if (path->indexorderbys != NIL)
	{
		double k = root->limit_tuples > 0 ? root->limit_tuples : 1;

		/* up to the LIMIT's row, as LIMIT interpolates from startup to total */
		*indexStartupCost = knn_cost(&m, Min(k, m.rows));
		*indexTotalCost = Max(knn_cost(&m, m.rows), *indexStartupCost);
	}
	else
	{
		/* a full scan: every row */
		read = simhash_linear_cost(&m) + simhash_pending_cost(&m);
		*indexStartupCost = 0;
		*indexTotalCost = read;
	}
	*indexTotalCost += costs.numIndexTuples * (cpu_index_tuple_cost + HIT_COST * cpu_operator_cost);
	*indexPages = pages_of(m.rows);
	*indexSelectivity = costs.indexSelectivity;
	*indexCorrelation = 0;
}
