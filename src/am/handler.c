/*
 * handler.c — the access method's handler, and what it says about indexed
 * values: the fingerprint stored for a column value, index-only scans,
 * the names of CREATE INDEX's progress phases.
 */
#include "simhash_am.h"

#include "access/xlog.h"
#include "commands/progress.h"
#include "commands/vacuum.h"

/* The callbacks and properties of access method "simhash". */
PG_FUNCTION_INFO_V1(simhash_am_handler);

Datum
simhash_am_handler(PG_FUNCTION_ARGS)
{
	IndexAmRoutine *am = makeNode(IndexAmRoutine);

	am->amstrategies = SIMHASH_NSTRATEGIES;
	am->amsupport = SIMHASH_NPROC;
	am->amoptsprocnum = 0;
	am->amcanorder = false;
	am->amcanorderbyop = true;
	am->amcanbackward = false;
	am->amcanunique = false;
	am->amcanmulticol = false;
	am->amoptionalkey = true; /* ORDER BY without WHERE; NULLs are indexed */
	am->amsearcharray = false;
	am->amsearchnulls = false;
	/* true only for simhash_text_ops (text, STORAGE simhash), which exists to
	 * refuse a text column at build with a hint (build.c); every other class
	 * stores its input type */
	am->amstorage = true;
	am->amclusterable = false;
	am->ampredlocks = false;
	am->amcanparallel = false;
	simhash_set_canbuildparallel(am, true); /* build.c: parallel CREATE INDEX */
	am->amcaninclude = false;
	am->amusemaintenanceworkmem = false;
	am->amparallelvacuumoptions = VACUUM_OPTION_PARALLEL_BULKDEL | VACUUM_OPTION_PARALLEL_CLEANUP;
	am->amkeytype = InvalidOid;

	am->ambuild = simhash_build;
	am->ambuildempty = simhash_buildempty;
	am->aminsert = simhash_insert;
	am->ambulkdelete = simhash_bulkdelete;
	am->amvacuumcleanup = simhash_vacuumcleanup;
	am->amcanreturn = simhash_canreturn;
	am->amcostestimate = simhash_costestimate;
	am->amoptions = simhash_options;
	am->amproperty = NULL;
	am->ambuildphasename = simhash_buildphasename;
	am->amvalidate = simhash_validate;
	am->amadjustmembers = NULL;
	am->ambeginscan = simhash_beginscan;
	am->amrescan = simhash_rescan;
	am->amgettuple = simhash_gettuple;
	am->amgetbitmap = simhash_getbitmap;
	am->amendscan = simhash_endscan;
	am->ammarkpos = NULL;
	am->amrestrpos = NULL;
	am->amestimateparallelscan = NULL;
	am->aminitparallelscan = NULL;
	am->amparallelrescan = NULL;
	simhash_am_set_newer_fields(am); /* compat.h: what 16-18 added, and why so */

	PG_RETURN_POINTER(am);
}

/* The names of CREATE INDEX's sub-phases (pg_stat_progress_create_index). */
char *
simhash_buildphasename(int64 phasenum)
{
	switch (phasenum)
	{
		case PROGRESS_CREATEIDX_SUBPHASE_INITIALIZE:
			return "initializing";
		case SIMHASH_PHASE_SCAN:
			return "scanning table";
		case SIMHASH_PHASE_SORT:
			return "sorting tables";
		case SIMHASH_PHASE_WRITE:
			return "writing runs";
		default:
			return NULL;
	}
}

/*
 * The fingerprint an index stores for a column value: the value itself
 * (simhash, bigint), or the fingerprint of a simhash_query (the operator
 * class of exclusion constraints, whose radius is the constraint's and is
 * rechecked on the heap row).  false when there is none (a NULL field): the
 * row then goes with the NULLs.
 */
bool
simhash_index_value(Relation index, Datum value, uint64 *fp)
{
	if (TupleDescAttr(RelationGetDescr(index), 0)->attbyval)
	{
		*fp = DatumGetSimhash(value);
		return true;
	}
	return simhash_query_radius(value, fp) >= 0;
}

/*
 * The index holds the fingerprint only: it can return a simhash or bigint.
 * Not on a hot standby: an index-only scan relies on the scan/VACUUM
 * interlock (see src/am/README), and replay of the primary's VACUUM waits for
 * no scan of the standby, so such a scan could return a row the primary
 * removed once the heap page became all-visible.  The standby plans plain
 * index scans instead, whose heap visit decides.  (The planner asks at plan
 * time; a promoted standby plans index-only scans again.)
 */
bool
simhash_canreturn(Relation index, int attno)
{
	if (RecoveryInProgress())
		return false;
	return TupleDescAttr(RelationGetDescr(index), attno - 1)->attbyval;
}
