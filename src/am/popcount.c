/*
 * popcount.c — whether the CPU has the POPCNT instruction, and AVX2 (popcount.h),
 * unless simhash.debug_simd is off.
 */
#include "postgres.h"

#include "popcount.h"

/* simhash.debug_simd (options.c): off, the loops run as on a CPU without POPCNT or AVX2 */
bool simhash_debug_simd = true;

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
	return has_avx2 && simhash_debug_simd;
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
	return has_popcnt && simhash_debug_simd;
}
#endif
