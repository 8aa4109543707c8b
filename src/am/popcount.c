/*
 * popcount.c — whether the CPU has the POPCNT instruction, and AVX2 (popcount.h),
 * unless simhash.debug_simd is off; the filter over kept keys.
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

/* simhash_keys_first without AVX2. */
static pg_attribute_always_inline int
keys_first_scalar_body(const uint64 *keys, int n, uint64 qkey, int lo, int span, bool hw)
{
	int e = 0;

	while (e < n && (unsigned) (simhash_popcount_as(keys[e] ^ qkey, hw) - lo) > (unsigned) span)
		e++;
	return e;
}

SIMHASH_POPCOUNT_LOOP(int, keys_first_scalar,
					  (const uint64 *keys, int n, uint64 qkey, int lo, int span),
					  (keys, n, qkey, lo, span))

#ifdef SIMHASH_AVX2_DISPATCH
/*
 * simhash_keys_first() with AVX2: from distance 0, sixteen keys a step, their least
 * count (three vpminuw) compared with the band's end; else eight a step,
 * each count compared with both ends.  One test a step; the step that holds
 * a key in the band is searched key by key.
 */
__attribute__((target("avx2"))) static int
keys_first_avx2(const uint64 *keys, int n, uint64 qkey, int lo, int span)
{
	const __m256i q = _mm256_set1_epi64x((long long) qkey);
	const __m256i below = _mm256_set1_epi64x(lo - 1);				 /* count > lo - 1 */
	const __m256i above = _mm256_set1_epi64x((int64) lo + span + 1); /* count < lo + span + 1 */
	int			  e = 0;

	if (lo == 0)
	{
		/* sixteen keys a step: their least count compared */
		for (; e + 16 <= n; e += 16)
		{
			__m256i least =
				_mm256_min_epu16(_mm256_min_epu16(simhash_popcount4_avx2(keys + e, q),
												  simhash_popcount4_avx2(keys + e + 4, q)),
								 _mm256_min_epu16(simhash_popcount4_avx2(keys + e + 8, q),
												  simhash_popcount4_avx2(keys + e + 12, q)));
			__m256i in = _mm256_cmpgt_epi64(above, least);

			if (!_mm256_testz_si256(in, in))
				break;
		}
	}
	else
	{
		for (; e + 8 <= n; e += 8)
		{
			__m256i p0 = simhash_popcount4_avx2(keys + e, q),
					p1 = simhash_popcount4_avx2(keys + e + 4, q);
			__m256i in = _mm256_or_si256(_mm256_and_si256(_mm256_cmpgt_epi64(p0, below),
														  _mm256_cmpgt_epi64(above, p0)),
										 _mm256_and_si256(_mm256_cmpgt_epi64(p1, below),
														  _mm256_cmpgt_epi64(above, p1)));

			if (!_mm256_testz_si256(in, in))
				break;
		}
	}
	return e + keys_first_scalar(keys + e, n - e, qkey, lo, span);
}

int
simhash_keys_first(const uint64 *keys, int n, uint64 qkey, int lo, int span)
{
	return simhash_cpu_has_avx2() ? keys_first_avx2(keys, n, qkey, lo, span)
								  : keys_first_scalar(keys, n, qkey, lo, span);
}
#else
int
simhash_keys_first(const uint64 *keys, int n, uint64 qkey, int lo, int span)
{
	return keys_first_scalar(keys, n, qkey, lo, span);
}
#endif
