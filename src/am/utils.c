/*
 * utils.c — handler, reloptions, table layout, metapage reading, probe
 * planning.
 */
#include "simhash_am.h"

#include "access/reloptions.h"
#include "catalog/index.h"
#include "commands/progress.h"
#include "commands/vacuum.h"
#include "utils/builtins.h"

relopt_kind simhash_relopt_kind;

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
	am->amoptionalkey = true;	/* ORDER BY without WHERE; NULLs are indexed */
	am->amsearcharray = false;
	am->amsearchnulls = false;
	am->amstorage = false;
	am->amclusterable = false;
	am->ampredlocks = false;
	am->amcanparallel = false;
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

	PG_RETURN_POINTER(am);
}

void
simhash_init_reloptions(void)
{
	simhash_relopt_kind = add_reloption_kind();
	add_int_reloption(simhash_relopt_kind, "bits",
					  "Largest radius answered by probing the permuted tables",
					  SIMHASH_DEFAULT_BITS, 1, SH_MAX_BLOCKS - 1, AccessExclusiveLock);
	add_int_reloption(simhash_relopt_kind, "blocks",
					  "Number of blocks the 64 bits are cut into (0: bits + 1)",
					  0, 0, 16, AccessExclusiveLock);
	add_int_reloption(simhash_relopt_kind, "pending_pages",
					  "Pages of the pending buffer; an insert that fills it turns it into a sorted run",
					  SIMHASH_DEFAULT_PENDING_PAGES, 1, 1024, ShareUpdateExclusiveLock);
}

/* The pair (bits, blocks) must give between 1 and SIMHASH_MAX_TABLES tables. */
static void
simhash_check_layout(int bits, int blocks)
{
	int			ntables;

	if (blocks <= bits || blocks > SH_MAX_BLOCKS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid value for parameter \"blocks\": %d", blocks),
				 errdetail("With bits = %d, blocks must be between %d and %d.",
						   bits, bits + 1, SH_MAX_BLOCKS)));
	ntables = sh_table_count(blocks, bits);
	if (ntables < 1 || ntables > SIMHASH_MAX_TABLES)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("bits = %d and blocks = %d need %d tables, more than the limit of %d",
						bits, blocks, ntables, SIMHASH_MAX_TABLES),
				 errhint("Use fewer blocks, or fewer bits.")));
}

bytea *
simhash_options(Datum reloptions, bool validate)
{
	static const relopt_parse_elt tab[] = {
		{"bits", RELOPT_TYPE_INT, offsetof(SimhashOptions, bits)},
		{"blocks", RELOPT_TYPE_INT, offsetof(SimhashOptions, blocks)},
		{"pending_pages", RELOPT_TYPE_INT, offsetof(SimhashOptions, pending_pages)},
	};
	SimhashOptions *opts;

	opts = (SimhashOptions *) build_reloptions(reloptions, validate,
											   simhash_relopt_kind,
											   sizeof(SimhashOptions),
											   tab, lengthof(tab));
	if (opts && validate)
		simhash_check_layout(opts->bits,
							 opts->blocks ? opts->blocks : opts->bits + SIMHASH_DEFAULT_EXTRA_BLOCKS);
	return (bytea *) opts;
}

void
simhash_options_resolve(Relation index, int *bits, int *blocks)
{
	SimhashOptions *opts = (SimhashOptions *) index->rd_options;

	*bits = opts ? opts->bits : SIMHASH_DEFAULT_BITS;
	*blocks = opts && opts->blocks ? opts->blocks : *bits + SIMHASH_DEFAULT_EXTRA_BLOCKS;
	simhash_check_layout(*bits, *blocks);
}

/* The pending buffer's size in pages (reloption pending_pages). */
int
simhash_pending_pages(Relation index)
{
	SimhashOptions *opts = (SimhashOptions *) index->rd_options;

	return opts && opts->pending_pages > 0 ? opts->pending_pages : SIMHASH_DEFAULT_PENDING_PAGES;
}

sh_table *
simhash_layout(int blocks, int bits, int *ntables)
{
	sh_table   *tables;

	*ntables = sh_table_count(blocks, bits);
	if (*ntables < 1 || *ntables > SIMHASH_MAX_TABLES)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("simhash index layout bits = %d, blocks = %d is invalid", bits, blocks)));
	tables = palloc(sizeof(sh_table) * *ntables);
	SH_CHECK(sh_table_layout(blocks, bits, tables, *ntables), "sh_table_layout");
	return tables;
}

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
 * A metapage this code can read: the magic number, then the format version
 * (an index written by an older release must be rebuilt).
 */
void
simhash_check_meta(Relation index, const SimhashMetaPageData *meta)
{
	if (meta->magic != SIMHASH_MAGIC)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" is not a simhash index: bad metapage",
						RelationGetRelationName(index))));
	if (meta->version != SIMHASH_VERSION)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("simhash index \"%s\" has on-disk format version %u, this release reads version %d",
						RelationGetRelationName(index), meta->version, SIMHASH_VERSION),
				 errhint("REINDEX INDEX %s; to rebuild it in the current format.",
						 quote_identifier(RelationGetRelationName(index)))));
	if (meta->ntables < 1 || meta->ntables > SIMHASH_MAX_TABLES)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("simhash index \"%s\": metapage says %d tables",
						RelationGetRelationName(index), meta->ntables),
				 errhint("REINDEX the index.")));
}

/* The run list (block 1) into copy->list; the caller holds the metapage lock. */
static void
read_runlist(Relation index, SimhashMetaPageData *copy)
{
	Buffer		buf = ReadBuffer(index, SIMHASH_RUNLIST_BLKNO);
	Page		page;
	bool		ok;

	LockBuffer(buf, BUFFER_LOCK_SHARE);
	page = BufferGetPage(buf);
	ok = !PageIsNew(page) && (SimhashPageGetOpaque(page)->flags & SIMHASH_RUNLIST);
	if (ok)
		memcpy(&copy->list, SimhashPageGetRunList(page), sizeof(SimhashRunList));
	UnlockReleaseBuffer(buf);
	if (!ok || copy->list.nruns < 0 || copy->list.nruns > simhash_max_runs(copy->ntables))
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("simhash index \"%s\": block %u is not a valid run list",
						RelationGetRelationName(index), SIMHASH_RUNLIST_BLKNO),
				 errhint("REINDEX the index.")));
}

/* A copy of the metapage, checked. */
void
simhash_read_meta(Relation index, SimhashMetaPageData *copy)
{
	Buffer		buf = ReadBuffer(index, SIMHASH_METAPAGE_BLKNO);
	Page		page;

	LockBuffer(buf, BUFFER_LOCK_SHARE);
	page = BufferGetPage(buf);
	memset(copy, 0, sizeof(SimhashMetaPageData));
	if (!PageIsNew(page))
		memcpy(copy, SimhashPageGetMeta(page), SIMHASH_META_SIZE);
	/* an error releases the buffer with the transaction */
	simhash_check_meta(index, copy);
	read_runlist(index, copy);
	UnlockReleaseBuffer(buf);
}

bool
simhash_canreturn(Relation index, int attno)
{
	return true;
}
