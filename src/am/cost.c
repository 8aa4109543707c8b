/*
 * cost.c — amcostestimate.  A radius up to `bits` costs one binary search
 * and a short read per table; a larger radius, or ORDER BY without a radius,
 * is a linear pass over table 0's entries, costed like a sequential scan of
 * that many rows (so the planner keeps the heap's seqscan for wide radii).
 */
#include "simhash_am.h"

#include <math.h>

#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "utils/lsyscache.h"
#include "utils/selfuncs.h"

void
simhash_costestimate(PlannerInfo *root, IndexPath *path, double loop_count,
					 Cost *indexStartupCost, Cost *indexTotalCost,
					 Selectivity *indexSelectivity, double *indexCorrelation,
					 double *indexPages)
{
	IndexOptInfo *index = path->indexinfo;
	Relation	rel = index_open(index->indexoid, AccessShareLock);
	SimhashMetaPageData meta;
	GenericCosts costs = {0};
	ListCell   *lc;
	int			radius = 65;
	double		rows,
				entries_per_page = SIMHASH_PAGE_CAPACITY,
				table0_pages,
				pending_pages,
				probe,
				one_probe,
				pending,
				nprobes,
				linear;
	int			flips;

	simhash_read_meta(rel, &meta);
	index_close(rel, AccessShareLock);

	foreach(lc, path->indexclauses)
	{
		IndexClause *ic = lfirst_node(IndexClause, lc);
		ListCell   *lc2;

		foreach(lc2, ic->indexquals)
		{
			RestrictInfo *ri = lfirst_node(RestrictInfo, lc2);
			OpExpr	   *op = (OpExpr *) ri->clause;
			int			strat,
						r;
			Oid			lefttype,
						righttype;

			if (!IsA(op, OpExpr))
				continue;
			get_op_opfamily_properties(op->opno, index->opfamily[0], false,
									   &strat, &lefttype, &righttype);
			r = simhash_clause_radius(list_length(op->args) == 2 ? lsecond(op->args) : NULL,
									  strat == SIMHASH_WITHIN_QUERY_STRATEGY ||
									  strat == SIMHASH_PAIR_STRATEGY);
			radius = Min(radius, r);
		}
	}

	genericcostestimate(root, path, loop_count, &costs);

	rows = Max((double) simhash_meta_rows(&meta), index->tuples);
	table0_pages = ceil(rows / entries_per_page);
	pending_pages = ceil((double) simhash_meta_pending(&meta) / entries_per_page);
	pending = pending_pages * seq_page_cost +
		(double) simhash_meta_pending(&meta) * cpu_operator_cost;
	/* a linear pass reads every entry, as a sequential scan reads every row */
	linear = table0_pages * random_page_cost + rows * (cpu_tuple_cost + cpu_operator_cost) + pending;
	flips = simhash_probe_flips(&meta, Min(radius, meta.bits), &nprobes);
	if (radius <= 64)
		flips = simhash_probe_flips(&meta, radius, &nprobes);
	{
		int			prefix_bits = 64 - 64 * meta.bits / Max(meta.blocks, 1);
		double		per_probe = rows / pow(2.0, prefix_bits) + costs.numIndexTuples / Max(nprobes, 1);
		double		descent = ceil(log2(Max(table0_pages / SIMHASH_DIR_CAPACITY, 1.0)) + 2) *
			50.0 * cpu_operator_cost;

		/* each probe: in every run, a directory search and (usually) one run page */
		one_probe = (random_page_cost + descent) * Max(simhash_meta_runs(&meta), 1) +
			(per_probe / entries_per_page) * random_page_cost + per_probe * cpu_operator_cost;
		probe = nprobes * one_probe + pending;
	}

	/*
	 * Startup is one probe: the rest accrues as tables are read, which lets
	 * EXISTS and LIMIT plans see a cheap first row.
	 */
	if (radius <= 64 && flips >= 0)
	{
		*indexStartupCost = one_probe;
		*indexTotalCost = probe;
		*indexPages = nprobes + pending_pages;
	}
	else if (radius <= 64)
	{
		*indexStartupCost = linear;
		*indexTotalCost = linear;
		*indexPages = table0_pages + pending_pages;
	}
	else
	{
		/* no radius: ORDER BY (KNN starts with the probes) or a full scan */
		*indexStartupCost = path->indexorderbys != NIL ? one_probe : 0;
		*indexTotalCost = probe + linear;
		*indexPages = table0_pages + pending_pages;
	}
	*indexTotalCost += costs.numIndexTuples * cpu_index_tuple_cost;
	*indexSelectivity = costs.indexSelectivity;
	*indexCorrelation = 0;
}
