/*
 * module.c — what PostgreSQL sees of the library as a whole: PG_MODULE_MAGIC
 * and _PG_init, which runs the init hooks of the parts (declared in
 * simhash.h), so that no part depends on another to be set up.
 */
#include "simhash.h"

#include "utils/guc.h"

PG_MODULE_MAGIC;

void _PG_init(void);

/* Defines the simhash.* settings and the index's reloptions. */
void
_PG_init(void)
{
	simhash_define_settings();
	simhash_am_init();
	MarkGUCPrefixReserved("simhash");
}
