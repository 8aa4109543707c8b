/*
 * check_access.c — who may run simhash_index_check(), and as whom.
 *
 * The check evaluates the index's expressions and predicate on every heap
 * row, which is running code the table's owner wrote.  So, as REINDEX and
 * amcheck do:
 * - EXECUTE is revoked from PUBLIC (the install script), and the caller must
 *   own the table (or be a member of its owner role, or a superuser).  Both
 *   are decided from the catalogs before any lock is taken, so a role that
 *   may not check the table can neither block its writers nor learn anything
 *   about its rows from an error message;
 * - the heap scan runs as the table's owner, in a security-restricted
 *   operation and with its own GUC nest level, so an index expression can
 *   gain no right of the caller and leaves no setting changed.
 */
#include "page.h"
#include "simhash_am.h"

#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/index.h"
#include "catalog/pg_class.h"
#include "commands/defrem.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/syscache.h"

/* The access method of a relation, from the catalog, without locking it. */
static Oid
relation_am(Oid relid)
{
	HeapTuple tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	Oid		  am;

	if (!HeapTupleIsValid(tup))
		ereport(ERROR, (errcode(ERRCODE_UNDEFINED_TABLE),
						errmsg("relation with OID %u does not exist", relid)));
	am = ((Form_pg_class) GETSTRUCT(tup))->relam;
	ReleaseSysCache(tup);
	return am;
}

/*
 * The table of a simhash index the current user may check; errors otherwise.
 * Reads only the catalogs: no lock on the index or its table.
 */
static Oid
checkable_heap(Oid indexoid)
{
	char relkind = get_rel_relkind(indexoid);
	Oid	 heapoid;
	Oid	 am;

	if (relkind == '\0')
		ereport(ERROR, (errcode(ERRCODE_UNDEFINED_TABLE),
						errmsg("relation with OID %u does not exist", indexoid)));
	if (relkind == RELKIND_PARTITIONED_INDEX)
		ereport(ERROR, (errcode(ERRCODE_WRONG_OBJECT_TYPE),
						errmsg("\"%s\" is a partitioned index", get_rel_name(indexoid)),
						errhint("Check the index of each partition.")));
	if (relkind != RELKIND_INDEX)
		ereport(ERROR, (errcode(ERRCODE_WRONG_OBJECT_TYPE),
						errmsg("\"%s\" is not an index", get_rel_name(indexoid))));
	heapoid = IndexGetRelation(indexoid, true);
	if (!OidIsValid(heapoid))
		ereport(ERROR, (errcode(ERRCODE_UNDEFINED_TABLE),
						errmsg("index with OID %u does not exist", indexoid)));
	if (!simhash_class_ownercheck(heapoid, GetUserId()))
		aclcheck_error(ACLCHECK_NOT_OWNER, get_relkind_objtype(get_rel_relkind(heapoid)),
					   get_rel_name(heapoid));
	am = relation_am(indexoid);
	if (am != get_index_am_oid("simhash", false))
		ereport(ERROR, (errcode(ERRCODE_WRONG_OBJECT_TYPE),
						errmsg("index \"%s\" is not a simhash index", get_rel_name(indexoid)),
						errdetail("It uses the access method \"%s\".", get_am_name(am))));
	return heapoid;
}

/*
 * What a check that found nothing wrong saw: the entries of every table, in
 * how many runs and pending, the NULLs, the pages.
 */
static char *
check_summary(Relation index)
{
	SimhashMetaPageData meta;
	uint64				entries;
	int					r;

	simhash_read_meta(index, &meta);
	entries = meta.npending + meta.nsealed;
	for (r = 0; r < meta.list.nruns; r++)
		entries += meta.list.runs[r].count;
	return psprintf("simhash index \"%s\" is consistent: " UINT64_FORMAT " entries in each of %d "
					"tables (%d sorted run%s, " UINT64_FORMAT " pending), " UINT64_FORMAT
					" NULL%s, %u pages",
					RelationGetRelationName(index), entries, meta.ntables, meta.list.nruns,
					meta.list.nruns == 1 ? "" : "s", meta.npending + meta.nsealed, meta.nnulls,
					meta.nnulls == 1 ? "" : "s", RelationGetNumberOfBlocks(index));
}

/*
 * simhash_index_check(regclass): the structural check of a simhash index,
 * as the table's owner under a restricted security context, both relations
 * ShareLocked (the permission was checked before any lock was taken).
 * Returns a line saying what it checked; damage is an ERROR.
 */
PG_FUNCTION_INFO_V1(simhash_index_check);
Datum
simhash_index_check(PG_FUNCTION_ARGS)
{
	Oid		 indexoid = PG_GETARG_OID(0);
	Oid		 heapoid = checkable_heap(indexoid);
	Relation heap;
	Relation index;
	Oid		 save_userid;
	int		 save_sec_context;
	int		 save_nestlevel;
	char	*summary;

	/* the table first, as every writer locks it before its indexes */
	heap = table_open(heapoid, ShareLock);
	GetUserIdAndSecContext(&save_userid, &save_sec_context);
	SetUserIdAndSecContext(heap->rd_rel->relowner,
						   save_sec_context | SECURITY_RESTRICTED_OPERATION);
	save_nestlevel = NewGUCNestLevel();

	index = index_open(indexoid, ShareLock);
	/* the catalogs were read unlocked: the index may have been replaced since */
	if (IndexGetRelation(indexoid, true) != heapoid ||
		index->rd_rel->relam != get_index_am_oid("simhash", false))
		ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
						errmsg("index \"%s\" was dropped or replaced while the check started",
							   RelationGetRelationName(index)),
						errhint("Run the check again.")));
	if (RELATION_IS_OTHER_TEMP(index))
		ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						errmsg("cannot check temporary indexes of other sessions")));
	if (!index->rd_index->indisvalid)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("cannot check index \"%s\": it is not valid",
						RelationGetRelationName(index)),
				 errhint(
					 "A failed CREATE INDEX CONCURRENTLY leaves an invalid index; REINDEX it.")));

	simhash_check_index(heap, index);
	summary = check_summary(index);

	AtEOXact_GUC(false, save_nestlevel);
	SetUserIdAndSecContext(save_userid, save_sec_context);
	index_close(index, ShareLock);
	table_close(heap, ShareLock);
	PG_RETURN_TEXT_P(cstring_to_text(summary));
}
