/*
 * utils.c — handler, reloptions, page initialisation and allocation.
 */
#include "simhash_am.h"

#include "access/reloptions.h"
#include "catalog/index.h"
#include "commands/progress.h"
#include "commands/vacuum.h"
#include "storage/indexfsm.h"
#include "storage/lmgr.h"
#include "utils/snapmgr.h"

#define ST_SORT simhash_sort_items
#define ST_ELEMENT_TYPE SimhashItem
#define ST_COMPARE(a, b) \
	((a)->fp < (b)->fp ? -1 : (a)->fp > (b)->fp ? 1 : \
	 ItemPointerCompare((ItemPointer) &(a)->tid, (ItemPointer) &(b)->tid))
#define ST_SCOPE
#define ST_DEFINE
#include "lib/sort_template.h"

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

void
simhash_init_page(Page page, uint16 flags)
{
	SimhashPageOpaque opaque;

	PageInit(page, BLCKSZ, sizeof(SimhashPageOpaqueData));
	opaque = SimhashPageGetOpaque(page);
	opaque->flags = flags;
	opaque->next = InvalidBlockNumber;
	opaque->page_id = SIMHASH_PAGE_ID;
}

void
simhash_init_metapage(Page page, int bits, int blocks, int ntables)
{
	SimhashMetaPage meta;
	int			i;

	simhash_init_page(page, SIMHASH_META);
	meta = SimhashPageGetMeta(page);
	memset(meta, 0, sizeof(SimhashMetaPageData));
	meta->magic = SIMHASH_MAGIC;
	meta->version = SIMHASH_VERSION;
	meta->bits = bits;
	meta->blocks = blocks;
	meta->ntables = ntables;
	meta->pending_head = meta->pending_tail = InvalidBlockNumber;
	meta->sealed_head = InvalidBlockNumber;
	meta->nulls_head = meta->nulls_tail = InvalidBlockNumber;
	for (i = 0; i < SIMHASH_MAX_TABLES; i++)
		meta->run_start[i] = InvalidBlockNumber;
	((PageHeader) page)->pd_lower = (char *) meta + sizeof(SimhashMetaPageData) - (char *) page;
}

bool
simhash_page_recyclable(Page page)
{
	SimhashPageOpaque opaque;

	if (PageIsNew(page))
		return true;
	opaque = SimhashPageGetOpaque(page);
	return (opaque->flags & SIMHASH_DELETED) != 0 &&
		GlobalVisCheckRemovableFullXid(NULL, opaque->safexid);
}

/*
 * A new page for a pending or NULLs chain, exclusively locked, by extending
 * the relation.  Only merges (one at a time, under the merge lock) take
 * pages from the FSM, so a recycled page can never be handed out twice.
 */
Buffer
simhash_new_buffer(Relation index)
{
	Buffer		buf;

	LockRelationForExtension(index, ExclusiveLock);
	buf = ReadBuffer(index, P_NEW);
	LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
	UnlockRelationForExtension(index, ExclusiveLock);
	return buf;
}

uint64
simhash_datum_fp(Datum d)
{
	return (uint64) DatumGetInt64(d);
}

void
simhash_read_meta(Relation index, SimhashMetaPageData *copy)
{
	Buffer		buf = ReadBuffer(index, SIMHASH_METAPAGE_BLKNO);
	Page		page;
	SimhashMetaPage meta;

	LockBuffer(buf, BUFFER_LOCK_SHARE);
	page = BufferGetPage(buf);
	meta = SimhashPageGetMeta(page);
	if (PageIsNew(page) || meta->magic != SIMHASH_MAGIC ||
		((PageHeader) page)->pd_special != BLCKSZ - MAXALIGN(sizeof(SimhashPageOpaqueData)) ||
		SimhashPageGetOpaque(page)->page_id != SIMHASH_PAGE_ID ||
		SimhashPageGetOpaque(page)->flags != SIMHASH_META)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" is not a simhash index: bad metapage at block %u",
						RelationGetRelationName(index), SIMHASH_METAPAGE_BLKNO)));
	if (meta->version != SIMHASH_VERSION)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("simhash index \"%s\" has version %u, expected %d",
						RelationGetRelationName(index), meta->version, SIMHASH_VERSION),
				 errhint("REINDEX the index.")));
	memcpy(copy, meta, sizeof(SimhashMetaPageData));
	UnlockReleaseBuffer(buf);
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
		*fp = simhash_datum_fp(value);
		return true;
	}
	return simhash_query_radius(value, fp) >= 0;
}

/* The index holds the fingerprint only: it can return a simhash or bigint. */
bool
simhash_canreturn(Relation index, int attno)
{
	return TupleDescAttr(RelationGetDescr(index), attno - 1)->attbyval;
}

/*
 * How a radius is answered: the number of prefix bits a probe may flip
 * (0 up to `bits`; radius - bits above it, as long as the probes stay well
 * cheaper than reading table 0), or -1 for a linear pass.  *nprobes gets
 * the number of range probes over all tables.
 */
int
simhash_probe_flips(const SimhashMetaPageData *meta, int radius, double *nprobes)
{
	int			flips = radius - meta->bits;
	int			prefix_bits = 64 - 64 * meta->bits / Max(meta->blocks, 1);
	double		variants = 0,
				c = 1;
	int			f;

	if (flips < 0)
		flips = 0;
	for (f = 0; f <= flips && f <= prefix_bits; f++)
	{
		variants += c;
		c = c * (prefix_bits - f) / (f + 1);
	}
	if (nprobes)
		*nprobes = variants * meta->ntables;
	if (flips == 0)
		return 0;
	/* a probe costs a few page reads; linear reads run_npages pages */
	if (flips > 3 || variants * meta->ntables * 4 > (double) meta->run_npages)
		return -1;
	return flips;
}

void
simhash_items_push(SimhashItemArray *a, uint64 fp, ItemPointer tid)
{
	if (a->n == a->cap)
	{
		a->cap = Max(1024, a->cap * 2);
		a->items = a->items ? repalloc_huge(a->items, a->cap * sizeof(SimhashItem))
			: MemoryContextAllocHuge(CurrentMemoryContext, a->cap * sizeof(SimhashItem));
	}
	a->items[a->n].fp = fp;
	a->items[a->n].tid = *tid;
	a->n++;
}
