/*
 * fingerprint_weighted.c — simhash_weighted(doc text, weights regclass,
 * max_df float8, idf bool): the text fingerprint without the votes of the
 * shingles that more than max_df of a corpus's documents share, and with
 * idf the others weighted by how rare they are (boilerplate weighting).
 *
 * The weights come from a document-frequency table that simhash_df_build
 * writes (src/install/47_boilerplate.sql): rows (shingle bigint, df) and one row
 * whose shingle is NULL and whose df is the number of documents.  The table
 * is read once per call site and statement (fn_extra) into sorted arrays
 * within work_mem, turned into weights (sh_df_weight) and handed to the
 * core, which never sees PostgreSQL.  Reading a table makes the function
 * STABLE, not IMMUTABLE.
 */
#include "simhash.h"

#include <math.h>

#include "access/relation.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "text.h"

/* One row of the weights table. */
typedef struct DfEntry
{
	uint64 shingle;
	int64  df;
} DfEntry;

/*
 * The weights of one call site, kept in fn_extra.  A call site may outlive
 * its statement (PL/pgSQL keeps simple expressions for the transaction), so
 * the weights are reloaded when the command counter moved: a later statement
 * sees the table as it is then, as a STABLE function must.
 */
typedef struct WeightsCache
{
	CommandId		   cid;
	Oid				   relid;
	double			   max_df;
	bool			   idf;
	int64			   docs;
	uint64			  *hashes;
	float			  *weights;
	sh_shingle_weights w;
} WeightsCache;

/* Rows fetched from the weights table at a time. */
#define DF_FETCH_ROWS 10000

static int
df_entry_cmp(const void *a, const void *b)
{
	uint64 x = ((const DfEntry *) a)->shingle, y = ((const DfEntry *) b)->shingle;

	return x < y ? -1 : x > y ? 1 : 0;
}

/*
 * The attribute number of column `name` of rel, checked to be of one of the
 * integer types given; ERROR (42703 / 42804) naming the table otherwise.
 */
static AttrNumber
weights_column(Relation rel, const char *table, const char *name, Oid type1, Oid type2)
{
	TupleDesc desc = RelationGetDescr(rel);

	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		if (att->attisdropped || strcmp(NameStr(att->attname), name) != 0)
			continue;
		if (att->atttypid != type1 && att->atttypid != type2)
			ereport(ERROR, (errcode(ERRCODE_DATATYPE_MISMATCH),
							errmsg("column \"%s\" of weights table %s is of type %s, not %s", name,
								   table, format_type_be(att->atttypid), format_type_be(type1)),
							errhint("Build the weights table with simhash_df_build.")));
		return att->attnum;
	}
	ereport(ERROR, (errcode(ERRCODE_UNDEFINED_COLUMN),
					errmsg("weights table %s has no column \"%s\"", table, name),
					errhint("A weights table has columns shingle bigint and df bigint; build it "
							"with simhash_df_build.")));
	return InvalidAttrNumber; /* keep compiler quiet */
}

/*
 * Opens the weights table for reading: it exists, the caller may SELECT it,
 * it is a table and has the two columns (in that order, so that a caller
 * without the privilege learns nothing of its columns).  Returns its
 * qualified name for a query; the AccessShareLock is kept until the end of
 * the transaction.
 */
static char *
open_weights_table(Oid relid)
{
	bool	  missing = false;
	AclResult acl = pg_class_aclcheck_ext(relid, GetUserId(), ACL_SELECT, &missing);
	Relation  rel;
	char	 *qualified;

	rel = missing ? NULL : try_relation_open(relid, AccessShareLock);
	if (rel == NULL)
		ereport(ERROR, (errcode(ERRCODE_UNDEFINED_TABLE),
						errmsg("weights table with OID %u does not exist", relid)));
	if (acl != ACLCHECK_OK)
		aclcheck_error(acl, get_relkind_objtype(rel->rd_rel->relkind),
					   RelationGetRelationName(rel));
	qualified = quote_qualified_identifier(get_namespace_name(RelationGetNamespace(rel)),
										   RelationGetRelationName(rel));
	if (rel->rd_rel->relkind != RELKIND_RELATION && rel->rd_rel->relkind != RELKIND_MATVIEW &&
		rel->rd_rel->relkind != RELKIND_PARTITIONED_TABLE)
		ereport(ERROR, (errcode(ERRCODE_WRONG_OBJECT_TYPE), errmsg("%s is not a table", qualified),
						errhint("Pass the table simhash_df_build wrote.")));
	weights_column(rel, qualified, "shingle", INT8OID, INT8OID);
	weights_column(rel, qualified, "df", INT8OID, INT4OID);
	table_close(rel, NoLock);
	return qualified;
}

/*
 * The queries below name the table qualified and their operators with
 * OPERATOR(pg_catalog.x); pinning search_path to pg_catalog, pg_temp for
 * their length also keeps anything else they resolve (casts' functions, a
 * column type's operators) out of reach of a schema the caller lists first.
 * Returns the GUC nest level to pass to AtEOXact_GUC.
 */
static int
pin_search_path(void)
{
	int level = NewGUCNestLevel();

	(void) set_config_option("search_path", "pg_catalog, pg_temp", PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SAVE, true, 0, false);
	return level;
}

/* The document count: the df of the one row whose shingle is NULL. */
static int64
weights_documents(const char *name)
{
	int64 docs;
	bool  isnull;

	if (SPI_execute(psprintf("SELECT df::pg_catalog.int8 FROM %s WHERE shingle IS NULL", name),
					true, 0) != SPI_OK_SELECT)
		elog(ERROR, "SPI_execute failed on weights table %s", name);
	if (SPI_processed != 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("weights table %s has %llu document-count rows (shingle IS NULL), not 1",
						name, (unsigned long long) SPI_processed),
				 errhint("Rebuild it with simhash_df_build.")));
	docs = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	if (isnull || docs < 0)
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						errmsg("weights table %s has document count %s", name,
							   isnull ? "NULL" : psprintf(INT64_FORMAT, docs)),
						errhint("Rebuild it with simhash_df_build.")));
	SPI_freetuptable(SPI_tuptable);
	return docs;
}

/*
 * Reads the rows of the weights table whose df exceeds above (and any with
 * a df below 1, to refuse them) into a palloc'd array in the current
 * context (all rows with idf), the document count into *docs.  ERROR
 * when the rows take more than work_mem, or the table is not what
 * simhash_df_build writes.
 */
static DfEntry *
read_weights_table(Oid relid, double max_df, bool idf, size_t *n, int64 *docs, char **table)
{
	char	  *name = open_weights_table(relid);
	Size	   limit = (Size) work_mem * 1024;
	size_t	   cap = 1024, count = 0;
	DfEntry	  *rows = palloc(sizeof(DfEntry) * cap);
	Portal	   portal;
	SPIPlanPtr plan;
	Oid		   argtype = INT8OID;
	Datum	   above;
	int		   guc_level;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	guc_level = pin_search_path();
	*docs = weights_documents(name);
	/*
	 * Without idf every shingle up to max_df weighs what an unlisted one
	 * does: only those above it (the boilerplate) need memory.
	 */
	above = Int64GetDatum(idf ? 0 : (int64) floor(max_df * (double) *docs));
	plan = SPI_prepare(psprintf("SELECT shingle::pg_catalog.int8, df::pg_catalog.int8 FROM %s "
								"WHERE shingle IS NOT NULL AND (df::pg_catalog.int8 "
								"OPERATOR(pg_catalog.>) $1 OR df::pg_catalog.int8 "
								"OPERATOR(pg_catalog.<) 1::pg_catalog.int8 OR df IS NULL)",
								name),
					   1, &argtype);
	if (plan == NULL)
		elog(ERROR, "SPI_prepare failed: %s", SPI_result_code_string(SPI_result));
	portal = SPI_cursor_open(NULL, plan, &above, NULL, true);
	for (;;)
	{
		SPI_cursor_fetch(portal, true, DF_FETCH_ROWS);
		if (SPI_processed == 0)
			break;
		for (uint64 r = 0; r < SPI_processed; r++)
		{
			HeapTuple tup = SPI_tuptable->vals[r];
			bool	  shingle_null, df_null;
			Datum	  shingle = SPI_getbinval(tup, SPI_tuptable->tupdesc, 1, &shingle_null);
			Datum	  df = SPI_getbinval(tup, SPI_tuptable->tupdesc, 2, &df_null);

			if (df_null || DatumGetInt64(df) < 1)
				ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
								errmsg("weights table %s has df %s for shingle " INT64_FORMAT, name,
									   df_null ? "NULL" : psprintf(INT64_FORMAT, DatumGetInt64(df)),
									   DatumGetInt64(shingle)),
								errhint("Rebuild it with simhash_df_build.")));
			if (count == cap)
			{
				if (sizeof(DfEntry) * cap * 2 > limit)
					ereport(ERROR,
							(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
							 errmsg("weights table %s has more shingles than work_mem (%d kB) "
									"holds",
									name, work_mem),
							 errhint("Rebuild it with a larger min_df, or raise work_mem (%zu "
									 "bytes per shingle).",
									 sizeof(DfEntry))));
				cap *= 2;
				rows = repalloc_huge(rows, sizeof(DfEntry) * cap);
			}
			rows[count].shingle = (uint64) DatumGetInt64(shingle);
			rows[count].df = DatumGetInt64(df);
			count++;
		}
		SPI_freetuptable(SPI_tuptable);
		CHECK_FOR_INTERRUPTS();
	}
	SPI_cursor_close(portal);
	AtEOXact_GUC(false, guc_level);
	SPI_finish();
	*n = count;
	*table = name;
	return rows;
}

/*
 * The weights of the table relid under max_df, sorted by shingle and ready
 * for the core, in memory of context cxt.
 */
static WeightsCache *
load_weights(Oid relid, double max_df, bool idf, MemoryContext cxt)
{
	MemoryContext old = MemoryContextSwitchTo(cxt);
	WeightsCache *c = palloc0(sizeof(WeightsCache));
	size_t		  n = 0;
	int64		  docs = 0;
	char		 *table;
	DfEntry		 *rows = read_weights_table(relid, max_df, idf, &n, &docs, &table);

	qsort(rows, n, sizeof(DfEntry), df_entry_cmp);
	for (size_t i = 1; i < n; i++)
		if (rows[i - 1].shingle == rows[i].shingle)
			ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
							errmsg("weights table %s lists shingle %lld more than once", table,
								   (long long) (int64) rows[i].shingle),
							errhint("Rebuild it with simhash_df_build.")));
	c->cid = GetCurrentCommandId(false);
	c->relid = relid;
	c->max_df = max_df;
	c->idf = idf;
	c->docs = docs;
	c->hashes = palloc_extended(sizeof(uint64) * Max(n, 1), MCXT_ALLOC_HUGE);
	c->weights = palloc_extended(sizeof(float) * Max(n, 1), MCXT_ALLOC_HUGE);
	for (size_t i = 0; i < n; i++)
	{
		c->hashes[i] = rows[i].shingle;
		c->weights[i] = (float) sh_df_weight(rows[i].df, docs, max_df, idf);
	}
	pfree(rows);
	pfree(table);
	c->w.hashes = c->hashes;
	c->w.weights = c->weights;
	c->w.n = n;
	c->w.other = (float) sh_df_weight(0, docs, max_df, idf);
	SH_CHECK(sh_shingle_weights_prepare(&c->w), "simhash_weighted");
	MemoryContextSwitchTo(old);
	return c;
}

/* simhash_weighted(doc text, weights regclass, max_df float8, idf bool). */
PG_FUNCTION_INFO_V1(simhash_weighted);
Datum
simhash_weighted(PG_FUNCTION_ARGS)
{
	Oid				relid = PG_GETARG_OID(1);
	double			max_df = PG_GETARG_FLOAT8(2);
	bool			idf = PG_GETARG_BOOL(3);
	WeightsCache   *c = (WeightsCache *) fcinfo->flinfo->fn_extra;
	sh_text_options opts;
	size_t			len;
	char		   *utf8;
	uint64_t		fp;

	if (!(max_df > 0 && max_df <= 1)) /* also NaN */
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("max_df %g is out of range", max_df),
				 errhint("max_df is the fraction of documents above which a shingle has no vote, "
						 "greater than 0 and at most 1.")));
	if (c == NULL || c->relid != relid || c->max_df != max_df || c->idf != idf ||
		c->cid != GetCurrentCommandId(false))
	{
		WeightsCache *fresh = load_weights(relid, max_df, idf, fcinfo->flinfo->fn_mcxt);

		if (c != NULL)
		{
			pfree(c->hashes);
			pfree(c->weights);
			pfree(c);
		}
		fcinfo->flinfo->fn_extra = c = fresh;
	}
	sh_text_options_default(&opts);
	utf8 = simhash_text_to_utf8(PG_GETARG_TEXT_PP(0), &len);
	SH_CHECK(sh_fingerprint_text_weighted(utf8, len, &opts, &c->w, &fp), "simhash_weighted");
	PG_RETURN_SIMHASH(fp);
}
