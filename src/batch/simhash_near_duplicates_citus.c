/*
 * simhash_near_duplicates_citus.c — the prefixes that the distributed form
 * of simhash_near_duplicates (src/install/49_near_duplicates_citus.sql)
 * repartitions on, and the test that reports each pair at one token only.
 *
 * The global order is the one simhash_shingles returns a set in: ascending
 * hashes as unsigned 64-bit numbers.  It needs no statistics of the table,
 * so every node computes the same prefix of a set by itself.  If J(A, B) >= t
 * then |A and B| >= ceil(t |A|), so A and B share an element within the
 * first |A| - ceil(t |A|) + 1 elements of A, and likewise of B: the pair
 * meets in the group of each token their prefixes share, and is kept only in
 * the group of the smallest one.
 */
#include "simhash.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "utils/array.h"

/*
 * A hair below the threshold: a prefix one element longer (and a looser
 * length filter) only adds candidates, where rounding t * n up across an
 * integer would lose a pair.  The SQL side uses the same margin.
 */
#define THRESHOLD_MARGIN 1e-9

/* The prefix length of a set of n elements at threshold t: n - ceil(t' n) + 1, t' a hair below t. */
static int
prefix_length(int n, float8 threshold)
{
	int need;

	if (n == 0)
		return 0;
	need = (int) ceil((threshold - THRESHOLD_MARGIN) * n);
	return n - Max(need, 1) + 1;
}

/* simhash_prefix(set bigint[], threshold float8): the set's first prefix_length elements. */
PG_FUNCTION_INFO_V1(simhash_prefix);
Datum
simhash_prefix(PG_FUNCTION_ARGS)
{
	ArrayType	   *arr = PG_GETARG_ARRAYTYPE_P(0);
	float8			threshold = PG_GETARG_FLOAT8(1);
	int				n, len;
	const uint64_t *v;
	Datum		   *elems;

	simhash_check_threshold(threshold);
	v = simhash_shingle_set_elements(arr, 1, &n);
	len = prefix_length(n, threshold);
	simhash_check_shingle_order(v, len, 1);
	elems = palloc(sizeof(Datum) * Max(len, 1));
	for (int i = 0; i < len; i++)
		elems[i] = Int64GetDatum((int64) v[i]);
	PG_RETURN_ARRAYTYPE_P(
		construct_array(elems, len, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
}

/*
 * simhash_first_common_prefix_token(a bigint[], b bigint[], threshold
 * float8): the smallest hash in both prefixes, NULL when they share none.
 * A merge of the two prefixes, as unsigned numbers.
 */
PG_FUNCTION_INFO_V1(simhash_first_common_prefix_token);
Datum
simhash_first_common_prefix_token(PG_FUNCTION_ARGS)
{
	float8			threshold = PG_GETARG_FLOAT8(2);
	int				na, nb, la, lb, i = 0, j = 0;
	const uint64_t *a, *b;

	simhash_check_threshold(threshold);
	a = simhash_shingle_set_elements(PG_GETARG_ARRAYTYPE_P(0), 1, &na);
	b = simhash_shingle_set_elements(PG_GETARG_ARRAYTYPE_P(1), 2, &nb);
	la = prefix_length(na, threshold);
	lb = prefix_length(nb, threshold);
	simhash_check_shingle_order(a, la, 1);
	simhash_check_shingle_order(b, lb, 2);
	while (i < la && j < lb)
	{
		if (a[i] == b[j])
			PG_RETURN_INT64((int64) a[i]);
		if (a[i] < b[j])
			i++;
		else
			j++;
	}
	PG_RETURN_NULL();
}
