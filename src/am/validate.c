/*
 * validate.c — amvalidate: the operator classes of the simhash AM must
 * provide exactly the known strategies with the right signatures: 1-3 for
 * a 64-bit type (simhash, bigint), 4 alone for the composite simhash_query
 * of exclusion constraints.
 */
#include "simhash_am.h"

#include "access/amvalidate.h"
#include "access/htup_details.h"
#include "catalog/pg_amop.h"
#include "catalog/pg_amproc.h"
#include "catalog/pg_opclass.h"
#include "catalog/pg_type.h"
#include "utils/lsyscache.h"
#include "utils/regproc.h"
#include "utils/syscache.h"

/* Does an operator class of this kind (pair or 64-bit) have the strategy? */
static bool
strategy_of_kind(int strategy, bool pair)
{
	return pair ? strategy == SIMHASH_PAIR_STRATEGY
				: strategy >= 1 && strategy <= SIMHASH_NSTRATEGIES &&
					  strategy != SIMHASH_PAIR_STRATEGY;
}

/*
 * amvalidate: the operator class's operators, strategies and types are
 * those the access method knows; reports each problem found as an INFO.
 */
bool
simhash_validate(Oid opclassoid)
{
	bool			result = true;
	HeapTuple		classtup;
	Form_pg_opclass classform;
	Oid				opfamilyoid, opcintype;
	char		   *opclassname;
	CatCList	   *oprlist, *proclist;
	int				i;
	bool			seen[SIMHASH_NSTRATEGIES + 1] = {false};
	bool			pair;
	bool			hint_only;

	classtup = SearchSysCache1(CLAOID, ObjectIdGetDatum(opclassoid));
	if (!HeapTupleIsValid(classtup))
		elog(ERROR, "cache lookup failed for operator class %u", opclassoid);
	classform = (Form_pg_opclass) GETSTRUCT(classtup);
	opfamilyoid = classform->opcfamily;
	opcintype = classform->opcintype;
	opclassname = NameStr(classform->opcname);
	pair = get_typtype(opcintype) == TYPTYPE_COMPOSITE;
	/* simhash_text_ops: no operators, only the build's error (build.c) */
	hint_only = opcintype == TEXTOID;

	if (!pair && !hint_only && opcintype != INT8OID && get_typlen(opcintype) != 8)
	{
		ereport(INFO,
				(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
				 errmsg("simhash operator class \"%s\" must index a 64-bit type", opclassname)));
		result = false;
	}

	proclist = SearchSysCacheList1(AMPROCNUM, ObjectIdGetDatum(opfamilyoid));
	for (i = 0; i < proclist->n_members; i++)
	{
		Form_pg_amproc procform = (Form_pg_amproc) GETSTRUCT(&proclist->members[i]->tuple);

		ereport(INFO, (errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
					   errmsg("simhash operator family contains support function %s, but the "
							  "simhash access method has none",
							  format_procedure(procform->amproc))));
		result = false;
	}

	oprlist = SearchSysCacheList1(AMOPSTRATEGY, ObjectIdGetDatum(opfamilyoid));
	for (i = 0; i < oprlist->n_members; i++)
	{
		Form_pg_amop op = (Form_pg_amop) GETSTRUCT(&oprlist->members[i]->tuple);
		bool		 ok = true;

		if (hint_only || !strategy_of_kind(op->amopstrategy, pair))
			ok = false;
		else if (op->amopstrategy == SIMHASH_DISTANCE_STRATEGY)
			ok = op->amoppurpose == AMOP_ORDER &&
				 check_amop_signature(op->amopopr, INT4OID, op->amoplefttype, op->amoprighttype);
		else
			ok = op->amoppurpose == AMOP_SEARCH &&
				 check_amop_signature(op->amopopr, BOOLOID, op->amoplefttype, op->amoprighttype);
		if (ok && op->amopstrategy != SIMHASH_WITHIN_QUERY_STRATEGY &&
			op->amoplefttype != op->amoprighttype)
			ok = false;
		if (!ok)
		{
			ereport(INFO, (errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
						   errmsg("simhash operator family contains invalid operator %s with "
								  "strategy number %d",
								  format_operator(op->amopopr), op->amopstrategy)));
			result = false;
		}
		else if (op->amoplefttype == opcintype)
			seen[op->amopstrategy] = true;
	}
	for (i = 1; i <= SIMHASH_NSTRATEGIES; i++)
		if (!hint_only && strategy_of_kind(i, pair) && !seen[i])
		{
			ereport(INFO,
					(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
					 errmsg("simhash operator class \"%s\" is missing the operator of strategy %d",
							opclassname, i)));
			result = false;
		}

	ReleaseCatCacheList(proclist);
	ReleaseCatCacheList(oprlist);
	ReleaseSysCache(classtup);
	return result;
}
