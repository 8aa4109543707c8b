/*
 * options.c — reloptions (bits, blocks, pending_pages) and the table layout
 * they give.
 */
#include "simhash_am.h"

#include "access/reloptions.h"

relopt_kind simhash_relopt_kind;

/* Registers the reloptions of access method "simhash" (from _PG_init). */
void
simhash_init_reloptions(void)
{
	simhash_relopt_kind = add_reloption_kind();
	add_int_reloption(simhash_relopt_kind, "bits",
					  "Largest radius answered by probing the permuted tables",
					  SIMHASH_DEFAULT_BITS, 1, SH_MAX_BLOCKS - 1, AccessExclusiveLock);
	add_int_reloption(simhash_relopt_kind, "blocks",
					  "Number of blocks the 64 bits are cut into (0: bits + 1)", 0, 0, 16,
					  AccessExclusiveLock);
	add_int_reloption(simhash_relopt_kind, "pending_pages",
					  "Pages of the pending buffer; an insert that fills it turns it into a sorted "
					  "run",
					  SIMHASH_DEFAULT_PENDING_PAGES, 1, 1024, ShareUpdateExclusiveLock);
}

/* The pair (bits, blocks) must give between 1 and SIMHASH_MAX_TABLES tables. */
static void
simhash_check_layout(int bits, int blocks)
{
	int ntables;

	if (blocks <= bits || blocks > SH_MAX_BLOCKS)
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						errmsg("invalid value for parameter \"blocks\": %d", blocks),
						errdetail("With bits = %d, blocks must be between %d and %d.", bits,
								  bits + 1, SH_MAX_BLOCKS)));
	ntables = sh_table_count(blocks, bits);
	if (ntables < 1 || ntables > SIMHASH_MAX_TABLES)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("bits = %d and blocks = %d need %d tables, more than the limit of %d", bits,
						blocks, ntables, SIMHASH_MAX_TABLES),
				 errhint("Use fewer blocks, or fewer bits.")));
}

/* amoptions: parses and validates the reloptions. */
bytea *
simhash_options(Datum reloptions, bool validate)
{
	static const relopt_parse_elt tab[] = {
		{"bits", RELOPT_TYPE_INT, offsetof(SimhashOptions, bits)},
		{"blocks", RELOPT_TYPE_INT, offsetof(SimhashOptions, blocks)},
		{"pending_pages", RELOPT_TYPE_INT, offsetof(SimhashOptions, pending_pages)},
	};
	SimhashOptions *opts;

	opts = (SimhashOptions *) build_reloptions(reloptions, validate, simhash_relopt_kind,
											   sizeof(SimhashOptions), tab, lengthof(tab));
	if (opts && validate)
		simhash_check_layout(opts->bits, opts->blocks ? opts->blocks
													  : opts->bits + SIMHASH_DEFAULT_EXTRA_BLOCKS);
	return (bytea *) opts;
}

/* The index's (bits, blocks), defaults applied and checked. */
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

/* The permuted tables of a (blocks, bits) layout, palloc'ed. */
sh_table *
simhash_layout(int blocks, int bits, int *ntables)
{
	sh_table *tables;

	*ntables = sh_table_count(blocks, bits);
	if (*ntables < 1 || *ntables > SIMHASH_MAX_TABLES)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("simhash index layout bits = %d, blocks = %d is invalid", bits, blocks)));
	tables = palloc(sizeof(sh_table) * *ntables);
	SH_CHECK(sh_table_layout(blocks, bits, tables, *ntables), "sh_table_layout");
	return tables;
}
