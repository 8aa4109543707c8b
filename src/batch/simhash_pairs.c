/*
 * simhash_pairs.c — the permuted-table prefixes that simhash_pairs and
 * simhash_clusters (src/install/45_pairs.sql) join on.
 *
 * Two fingerprints within `radius` bits agree on every prefix block of at
 * least one table of the layout (tables.h), so an equi-join of the rows on
 * (table, fingerprint & prefix mask) meets every near pair, in groups a hash
 * or merge join can stream, and on a distributed table each group can live
 * on one node.  A pair is kept only from the first table whose mask it
 * agrees on.
 */
#include "simhash.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "utils/array.h"

#include "batch.h"
#include "tables.h"

/*
 * A join of n rows costs about ROW_COST pair tests per row and table (scan,
 * hash or sort, emit); the groups of a table with p prefix bits hold about
 * n^2 / 2^(p+1) candidate pairs of random fingerprints.  At most MAX_TABLES
 * tables: each is one more pass over the rows.
 */
#define ROW_COST   20.0
#define MAX_TABLES 64

/* The block count of the cheapest layout, or 0 for one group of all pairs. */
static int
choose_blocks(double n, int radius)
{
	double best = n * (n - 1) / 2;
	int	   choice = 0;

	for (int b = radius + 1; b <= SH_MAX_BLOCKS; b++)
	{
		int	   nt = sh_table_count(b, radius);
		double cost;

		if (nt <= 0 || nt > MAX_TABLES)
			continue;
		cost =
			nt * (n * ROW_COST + n * (n - 1) / 2 / ldexp(1.0, sh_table_min_prefix_bits(b, radius)));
		if (cost < best)
		{
			best = cost;
			choice = b;
		}
	}
	return choice;
}

/* simhash_prefix_masks(radius, nrows): the prefix mask of each table of the cheapest layout. */
PG_FUNCTION_INFO_V1(simhash_prefix_masks);
Datum
simhash_prefix_masks(PG_FUNCTION_ARGS)
{
	int32	  radius = PG_GETARG_INT32(0);
	int64	  nrows = PG_GETARG_INT64(1);
	int		  blocks;
	int		  ntables;
	sh_table *tables;
	Datum	 *masks;

	simhash_check_radius(radius, "radius");
	if (nrows < 0)
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						errmsg("row count " INT64_FORMAT " is negative", nrows)));

	/* distance 0: one table keyed by the whole fingerprint */
	if (radius == 0)
	{
		Datum all = Int64GetDatum(-1);

		PG_RETURN_ARRAYTYPE_P(
			construct_array(&all, 1, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
	}
	blocks = choose_blocks((double) nrows, radius);
	/* no layout pays: one group where every pair is compared */
	if (blocks <= 0)
	{
		Datum none = Int64GetDatum(0);

		PG_RETURN_ARRAYTYPE_P(
			construct_array(&none, 1, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
	}
	ntables = sh_table_count(blocks, radius);
	tables = palloc(sizeof(sh_table) * ntables);
	SH_CHECK(sh_table_layout(blocks, radius, tables, ntables), "simhash_prefix_masks");
	masks = palloc(sizeof(Datum) * ntables);
	for (int t = 0; t < ntables; t++)
		masks[t] = Int64GetDatum((int64) tables[t].prefix_orig_mask);
	PG_RETURN_ARRAYTYPE_P(
		construct_array(masks, ntables, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
}
