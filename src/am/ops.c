/*
 * ops.c — the "within radius" operators and function, the simhash_query
 * composite that carries an explicit radius to the index, the planner
 * support function that makes simhash_within() indexable, and selectivity.
 */
#include "simhash_am.h"

#include "access/htup_details.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "funcapi.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "nodes/supportnodes.h"
#include "optimizer/optimizer.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/selfuncs.h"
#include "utils/syscache.h"

/* a % b (simhash or bigint): within simhash.max_distance */
PG_FUNCTION_INFO_V1(simhash_similar);
Datum
simhash_similar(PG_FUNCTION_ARGS)
{
	uint64 a = PG_GETARG_SIMHASH(0);
	uint64 b = PG_GETARG_SIMHASH(1);

	PG_RETURN_BOOL(simhash_hamming(a, b) <= simhash_max_distance);
}

/* simhash_within(a, b, radius): Hamming distance at most radius. */
PG_FUNCTION_INFO_V1(simhash_within);
Datum
simhash_within(PG_FUNCTION_ARGS)
{
	uint64 a = PG_GETARG_SIMHASH(0);
	uint64 b = PG_GETARG_SIMHASH(1);
	int32  radius = PG_GETARG_INT32(2);

	simhash_check_radius(radius, "radius");
	PG_RETURN_BOOL(simhash_hamming(a, b) <= radius);
}

/* simhash_query(fp, radius): the right operand of %@ */
PG_FUNCTION_INFO_V1(simhash_query_make);
Datum
simhash_query_make(PG_FUNCTION_ARGS)
{
	TupleDesc desc;
	Datum	  values[2];
	bool	  nulls[2] = {false, false};

	simhash_check_radius(PG_GETARG_INT32(1), "radius");
	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "simhash_query must return a composite type");
	desc = BlessTupleDesc(desc);
	values[0] = PG_GETARG_DATUM(0);
	values[1] = PG_GETARG_DATUM(1);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(desc, values, nulls)));
}

/* The radius of a simhash_query and its fingerprint; -1 when a field is NULL. */
int
simhash_query_radius(Datum query, uint64 *fp)
{
	HeapTupleHeader th = DatumGetHeapTupleHeader(query);
	bool			isnull;
	Datum			d;
	int				radius;

	d = GetAttributeByNum(th, 1, &isnull);
	if (isnull)
		return -1;
	*fp = DatumGetSimhash(d);
	d = GetAttributeByNum(th, 2, &isnull);
	if (isnull)
		return -1;
	radius = DatumGetInt32(d);
	simhash_check_radius(radius, "radius");
	return radius;
}

/* a %@ q: within q's radius of q's fingerprint */
PG_FUNCTION_INFO_V1(simhash_within_query);
Datum
simhash_within_query(PG_FUNCTION_ARGS)
{
	uint64 a = PG_GETARG_SIMHASH(0);
	uint64 q;
	int	   radius = simhash_query_radius(PG_GETARG_DATUM(1), &q);

	if (radius < 0)
		PG_RETURN_NULL();
	PG_RETURN_BOOL(simhash_hamming(a, q) <= radius);
}

/* Share of uniformly random fingerprint pairs within radius: binomial CDF. */
double
simhash_random_within(int radius)
{
	double sum = 0.0;

	if (radius >= 64)
		return 1.0;
	for (int k = 0; k <= radius; k++)
		sum += (double) sh_binomial(64, k);
	return sum / 18446744073709551616.0;
}

/*
 * Estimated selectivity of "within radius": random pairs plus a floor for
 * the near-duplicates that make an index worth having (1 in 10,000 rows per
 * unit of radius), capped at 1.
 */
static double
within_selectivity(int radius)
{
	double s;

	/* a radius of 64 or more matches every row; a negative one fails at run time */
	radius = Max(0, Min(radius, 64));
	s = simhash_random_within(radius) + 1e-4 * (radius + 1);

	return Min(1.0, s);
}

/* The radius of an index condition's right operand when it is a constant. */
static int
estimate_radius(Node *arg, int fallback)
{
	if (arg == NULL)
		return fallback;
	if (IsA(arg, FuncExpr) && list_length(((FuncExpr *) arg)->args) == 2)
	{
		Node *r = lsecond(((FuncExpr *) arg)->args);

		if (IsA(r, Const) && !((Const *) r)->constisnull)
			return DatumGetInt32(((Const *) r)->constvalue);
	}
	if (IsA(arg, Const) && !((Const *) arg)->constisnull && ((Const *) arg)->consttype != INT8OID)
	{
		uint64 q;
		int	   r = simhash_query_radius(((Const *) arg)->constvalue, &q);

		if (r >= 0)
			return r;
	}
	return fallback;
}

/*
 * The radius an index clause asks for: simhash_query's, or the setting
 * simhash.max_distance for %.
 */
int
simhash_clause_radius(Node *rightop, bool is_query)
{
	return is_query ? estimate_radius(rightop, 3) : simhash_max_distance;
}

/*
 * Restriction selectivity of %: the share of random pairs within
 * simhash.max_distance.
 */
PG_FUNCTION_INFO_V1(simhash_similar_sel);
Datum
simhash_similar_sel(PG_FUNCTION_ARGS)
{
	PG_RETURN_FLOAT8(within_selectivity(simhash_max_distance));
}

/* Join selectivity of %, as its restriction selectivity. */
PG_FUNCTION_INFO_V1(simhash_similar_joinsel);
Datum
simhash_similar_joinsel(PG_FUNCTION_ARGS)
{
	PG_RETURN_FLOAT8(within_selectivity(simhash_max_distance));
}

/*
 * Restriction selectivity of %@: from the radius of a constant
 * simhash_query, or of radius 3 when it is not known at plan time.
 */
PG_FUNCTION_INFO_V1(simhash_query_sel);
Datum
simhash_query_sel(PG_FUNCTION_ARGS)
{
	List *args = (List *) PG_GETARG_POINTER(2);

	PG_RETURN_FLOAT8(
		within_selectivity(estimate_radius(list_length(args) == 2 ? lsecond(args) : NULL, 3)));
}

/*
 * simhash_within(a, b, radius) with a or b the indexed column becomes the
 * exact index condition  column %@ simhash_query(other, radius).
 */
static Node *
within_index_condition(SupportRequestIndexCondition *req)
{
	FuncExpr *fexpr = (FuncExpr *) req->node;
	Node	 *other, *radius, *query;
	Oid		  nsp = get_func_namespace(fexpr->funcid);
	Oid		  querytype, ctor, op;
	Oid		  argtypes[2];
	Oid		  coltype;

	if (!IsA(fexpr, FuncExpr) || list_length(fexpr->args) != 3 || req->indexarg > 1)
		return NULL;
	other = (Node *) list_nth(fexpr->args, 1 - req->indexarg);
	radius = (Node *) lthird(fexpr->args);
	if (!is_pseudo_constant_for_index(req->root, other, req->index) ||
		!is_pseudo_constant_for_index(req->root, radius, req->index))
		return NULL;

	querytype = GetSysCacheOid2(TYPENAMENSP, Anum_pg_type_oid, CStringGetDatum("simhash_query"),
								ObjectIdGetDatum(nsp));
	coltype = exprType((Node *) list_nth(fexpr->args, req->indexarg));
	if (!OidIsValid(querytype))
		return NULL;
	op = get_opfamily_member(req->opfamily, coltype, querytype, SIMHASH_WITHIN_QUERY_STRATEGY);
	if (!OidIsValid(op))
		return NULL;
	argtypes[0] = exprType(other);
	argtypes[1] = INT4OID;
	/* nsp.simhash_query(other's type, int4) exactly, straight from the catalog cache */
	ctor = GetSysCacheOid3(PROCNAMEARGSNSP, Anum_pg_proc_oid, CStringGetDatum("simhash_query"),
						   PointerGetDatum(buildoidvector(argtypes, 2)), ObjectIdGetDatum(nsp));
	if (!OidIsValid(ctor))
		return NULL;
	query = (Node *) makeFuncExpr(ctor, querytype, list_make2(other, radius), InvalidOid,
								  InvalidOid, COERCE_EXPLICIT_CALL);
	req->lossy = false;
	return (Node *) make_opclause(op, BOOLOID, false, (Expr *) list_nth(fexpr->args, req->indexarg),
								  (Expr *) query, InvalidOid, InvalidOid);
}

/*
 * Planner support of simhash_within(): turns it into an index condition
 * (column %@ simhash_query(other, radius)) and estimates its selectivity
 * from the radius.
 */
PG_FUNCTION_INFO_V1(simhash_within_support);
Datum
simhash_within_support(PG_FUNCTION_ARGS)
{
	Node *rawreq = (Node *) PG_GETARG_POINTER(0);

	if (IsA(rawreq, SupportRequestIndexCondition))
	{
		SupportRequestIndexCondition *req = (SupportRequestIndexCondition *) rawreq;
		Node						 *clause = within_index_condition(req);

		if (clause)
			PG_RETURN_POINTER(list_make1(clause));
	}
	else if (IsA(rawreq, SupportRequestSelectivity))
	{
		SupportRequestSelectivity *req = (SupportRequestSelectivity *) rawreq;
		Node					  *r = list_length(req->args) == 3 ? lthird(req->args) : NULL;
		int						   radius = 3;

		if (r && IsA(r, Const) && !((Const *) r)->constisnull)
			radius = DatumGetInt32(((Const *) r)->constvalue);
		req->selectivity = within_selectivity(radius);
		PG_RETURN_POINTER(req);
	}
	PG_RETURN_POINTER(NULL);
}

/*
 * a @%@ b (two simhash_query values): the fingerprints differ in at most the
 * smaller of the two radii.  Commutative, and independent of any setting, so
 * an exclusion constraint on simhash_query(fp, r) WITH @%@ holds the radius r
 * written in its definition for every session and across dump and restore.
 */
PG_FUNCTION_INFO_V1(simhash_query_pair_within);
Datum
simhash_query_pair_within(PG_FUNCTION_ARGS)
{
	uint64 a, b;
	int	   ra = simhash_query_radius(PG_GETARG_DATUM(0), &a);
	int	   rb = simhash_query_radius(PG_GETARG_DATUM(1), &b);

	if (ra < 0 || rb < 0)
		PG_RETURN_NULL();
	PG_RETURN_BOOL(simhash_hamming(a, b) <= Min(ra, rb));
}
