/*
 * module.c — what PostgreSQL sees of the library as a whole: the magic block
 * and _PG_init, which runs the init hooks of the parts (declared in
 * simhash.h), so that no part depends on another to be set up.
 */
#include "simhash.h"

#include "utils/guc.h"

SIMHASH_MODULE_MAGIC;

void _PG_init(void);

/* Defines the simhash.* settings and the index's reloptions. */
void
_PG_init(void)
{
	simhash_define_settings();
	simhash_am_init();
	MarkGUCPrefixReserved("simhash");
}
