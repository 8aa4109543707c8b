/*
 * popcount.c — whether the CPU has the POPCNT instruction, and AVX2 (popcount.h).
 */
#include "postgres.h"

#include "popcount.h"

#ifdef SIMHASH_AVX2_DISPATCH
bool
simhash_cpu_has_avx2(void)
{
	static int has_avx2 = -1;

	if (has_avx2 < 0)
	{
		__builtin_cpu_init();
		has_avx2 = __builtin_cpu_supports("avx2") ? 1 : 0;
	}
	return has_avx2;
}
#endif

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
