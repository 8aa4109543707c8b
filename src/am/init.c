/*
 * init.c — module initialisation: the simhash.* GUCs and the index
 * reloptions.
 */
#include "simhash_am.h"

#include "utils/guc.h"

void		_PG_init(void);

void
_PG_init(void)
{
	DefineCustomIntVariable("simhash.max_distance",
							"Radius of the % and ~% operators (Hamming distance).",
							"Rows within this many differing bits are similar.",
							&simhash_max_distance, 3, 0, 64,
							PGC_USERSET, 0, NULL, NULL, NULL);
	MarkGUCPrefixReserved("simhash");
	simhash_init_reloptions();
}
