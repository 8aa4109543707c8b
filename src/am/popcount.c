/*
 * popcount.c — whether the CPU has the POPCNT instruction (popcount.h).
 */
#include "postgres.h"

#include "popcount.h"

#ifdef SIMHASH_POPCNT_DISPATCH
bool
simhash_cpu_has_popcnt(void)
{
	static int has_popcnt = -1;

	if (has_popcnt < 0)
	{
		__builtin_cpu_init();
		has_popcnt = __builtin_cpu_supports("popcnt") ? 1 : 0;
	}
	return has_popcnt;
}
#endif
