/*
 * options.c — the access method's settings: reloptions (bits, blocks,
 * pending_pages) and the table layout they give, the memory a backend may
 * keep for sweeps (simhash.sweep_cache_size), and its simhash.* settings
 * for tests (simhash.debug_pause_merge, simhash.debug_sweep, simhash.debug_simd).
 */
#include "simhash_am.h"
#include "runs.h"
#include "popcount.h"

#include "access/reloptions.h"
#include "utils/guc.h"
#include "utils/memutils.h"

relopt_kind simhash_relopt_kind;

int simhash_debug_sweep = SIMHASH_SWEEP_AUTO;
int simhash_sweep_cache_size = 65536; /* kB */

static const struct config_enum_entry sweep_options[] = {
	{"auto", SIMHASH_SWEEP_AUTO, false},
	{"always", SIMHASH_SWEEP_ALWAYS, false},
	{"never", SIMHASH_SWEEP_NEVER, false},
	{NULL, 0, false},
};

/* Registers the reloptions of access method "simhash". */
static void
init_reloptions(void)
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

/* The access method's part of _PG_init (declared in simhash.h). */
void
simhash_am_init(void)
{
	init_reloptions();
	DefineCustomBoolVariable(
		"simhash.debug_pause_merge",
		"Testing aid: a merge of this session waits after switching its first table.",
		"The merge then waits, in wait event Extension, until the backend is cancelled or "
		"terminated, so that tests can interrupt a merge midway.  Superuser only.",
		&simhash_debug_pause_merge, false, PGC_SUSET, 0, NULL, NULL, NULL);
	DefineCustomEnumVariable(
		"simhash.debug_sweep",
		"Testing aid: when index scans sweep the index instead of probing it.",
		"auto (the default) chooses by cost; always sweeps for every radius and KNN query; never "
		"probes whenever probes can answer.  The answers are the same in every mode.",
		&simhash_debug_sweep, SIMHASH_SWEEP_AUTO, sweep_options, PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomBoolVariable(
		"simhash.debug_simd",
		"Testing aid: off, index scans count bits without the POPCNT and AVX2 instructions.",
		"Their loops then run in the portable form used on CPUs without them.  The answers are "
		"the same either way; only the time differs.",
		&simhash_debug_simd, true, PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable(
		"simhash.sweep_cache_size",
		"Memory a backend may keep the sorted keys of simhash indexes in, for linear passes.",
		"A scan that reads an index linearly (large radii, KNN of small and mid-sized indexes) "
		"keeps the keys of the run pages it read, 8 bytes a row, and the next linear passes of "
		"the backend filter them there, reading only the pages that hold a row in range.  Per "
		"backend, across statements, the least recently used dropped first; 0 turns it off.",
		&simhash_sweep_cache_size, 65536, 0, MAX_KILOBYTES, PGC_SUSET, GUC_UNIT_KB, NULL, NULL,
		NULL);
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

/*
 * The permuted tables of a (blocks, bits) layout, palloc'ed.  The backend
 * keeps the last layout computed: every scan and every plan asks for it
 * (computing it was 3% of a radius-0 query at 100k rows), and it depends on
 * the pair alone.
 */
sh_table *
simhash_layout(int blocks, int bits, int *ntables)
{
	static sh_table *last = NULL;
	static int		 last_blocks = -1, last_bits = -1, last_n = 0, last_cap = 0;
	sh_table		*tables;

	*ntables = sh_table_count(blocks, bits);
	if (*ntables < 1 || *ntables > SIMHASH_MAX_TABLES)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("simhash index layout bits = %d, blocks = %d is invalid", bits, blocks)));
	tables = palloc(sizeof(sh_table) * *ntables);
	if (last != NULL && blocks == last_blocks && bits == last_bits && *ntables == last_n)
	{
		memcpy(tables, last, sizeof(sh_table) * *ntables);
		return tables;
	}
	SH_CHECK(sh_table_layout(blocks, bits, tables, *ntables), "sh_table_layout");
	if (last_cap < *ntables)
	{
		if (last != NULL)
			pfree(last);
		last = NULL;
		last_cap = 0;
		last = MemoryContextAlloc(TopMemoryContext, sizeof(sh_table) * *ntables);
		last_cap = *ntables;
	}
	memcpy(last, tables, sizeof(sh_table) * *ntables);
	last_blocks = blocks;
	last_bits = bits;
	last_n = *ntables;
	return tables;
}
