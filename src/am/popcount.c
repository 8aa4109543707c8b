/*
 * popcount.c — whether the CPU has the POPCNT instruction, and AVX2 (popcount.h),
 * unless simhash.debug_simd is off; the filter over kept keys.
 */
#include "postgres.h"

#include "popcount.h"

#include "port/pg_bitutils.h"

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
/* The lanes (a bit each) of four counts in the band: below < c < above. */
__attribute__((target("avx2"))) static inline unsigned
lanes_in_band(__m256i c, __m256i below, __m256i above)
{
	__m256i in = _mm256_and_si256(_mm256_cmpgt_epi64(c, below), _mm256_cmpgt_epi64(above, c));

	return (unsigned) _mm256_movemask_pd(_mm256_castsi256_pd(in));
}

/*
 * The counts of four keys of which only the first t are loaded (t < 4: the
 * others' lanes are left out by the caller's mask): a range's last keys
 * without a scalar loop, and without reading past them.
 */
__attribute__((target("avx2"))) static inline __m256i
popcount4_first(const uint64 *keys, int t, __m256i q)
{
	const __m256i load = _mm256_cmpgt_epi64(_mm256_set1_epi64x(t), _mm256_setr_epi64x(0, 1, 2, 3));

	return simhash_popcount_lanes_avx2(
		_mm256_xor_si256(_mm256_maskload_epi64((const long long *) keys, load), q));
}

/* Of sixteen counts, four a vector, the keys' bits (one a key) in the band. */
__attribute__((target("avx2"))) static inline unsigned
keys_in_band16(__m256i c0, __m256i c1, __m256i c2, __m256i c3, __m256i below, __m256i above)
{
	return lanes_in_band(c0, below, above) | lanes_in_band(c1, below, above) << 4 |
		   lanes_in_band(c2, below, above) << 8 | lanes_in_band(c3, below, above) << 12;
}

/*
 * simhash_keys_first() with AVX2: sixteen keys a step.  From distance 0
 * their least count (three vpminuw) is compared with the band's end, else
 * each count with both ends; a step with a key in the band gives its first
 * by the lanes' bits.  The last (fewer than sixteen) keys are loaded under
 * a mask: a range of the kept keys at 1M rows holds about sixteen.  The
 * counts are named variables, not an array, which GCC would keep in memory.
 */
__attribute__((target("avx2"))) static int
keys_first_avx2(const uint64 *keys, int n, uint64 qkey, int lo, int span)
{
	const __m256i q = _mm256_set1_epi64x((long long) qkey);
	const __m256i below = _mm256_set1_epi64x(lo - 1);				 /* count > lo - 1 */
	const __m256i above = _mm256_set1_epi64x((int64) lo + span + 1); /* count < lo + span + 1 */
	__m256i		  c0, c1, c2, c3;
	unsigned	  in;
	int			  e = 0, t;

	if (lo <= 0)
	{
		for (; e + 16 <= n; e += 16)
		{
			__m256i least = simhash_popcount16_least_avx2(keys + e, q, &c0, &c1, &c2, &c3);
			__m256i hit = _mm256_cmpgt_epi64(above, least);
			if (likely(_mm256_testz_si256(hit, hit)))
				continue;
			in = keys_in_band16(c0, c1, c2, c3, below, above);
			if (in != 0)
				return e + pg_rightmost_one_pos32(in);
		}
	}
	else
	{
		for (; e + 16 <= n; e += 16)
		{
			c0 = simhash_popcount4_avx2(keys + e, q);
			c1 = simhash_popcount4_avx2(keys + e + 4, q);
			c2 = simhash_popcount4_avx2(keys + e + 8, q);
			c3 = simhash_popcount4_avx2(keys + e + 12, q);
			in = keys_in_band16(c0, c1, c2, c3, below, above);
			if (in != 0)
				return e + pg_rightmost_one_pos32(in);
		}
	}
	if (e == n)
		return n;
	t = n - e;
	c0 = popcount4_first(keys + e, t, q);
	c1 = t > 4 ? popcount4_first(keys + e + 4, t - 4, q) : c0;
	c2 = t > 8 ? popcount4_first(keys + e + 8, t - 8, q) : c0;
	c3 = t > 12 ? popcount4_first(keys + e + 12, t - 12, q) : c0;
	in = keys_in_band16(c0, c1, c2, c3, below, above) & ((1U << t) - 1);
	return in != 0 ? e + pg_rightmost_one_pos32(in) : n;
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
