/*
 * popcount.h — counting bits in a hot loop without pg_popcount64's function
 * pointer: the loops over a listed probe's entries (probe_list.c) and a pairs group's
 * rows (pairs.c), and the filter over kept keys (popcount.c).  On x86-64 built without POPCNT such a loop is compiled
 * twice, with the instruction and with a bit-parallel count, and one copy is
 * chosen at each call by whether the CPU has it (asked once); elsewhere the
 * compiler's own count is used.
 */
#ifndef SIMHASH_POPCOUNT_H
#define SIMHASH_POPCOUNT_H

#include "postgres.h"

/*
 * simhash.debug_simd, a testing aid: false, the loops below run their
 * portable forms (no POPCNT, no AVX2), as on a CPU without them.
 */
extern bool simhash_debug_simd;

/* The bit-parallel count. */
static inline int
simhash_popcount_swar(uint64 x)
{
	x = x - ((x >> 1) & UINT64CONST(0x5555555555555555));
	x = (x & UINT64CONST(0x3333333333333333)) + ((x >> 2) & UINT64CONST(0x3333333333333333));
	x = (x + (x >> 4)) & UINT64CONST(0x0f0f0f0f0f0f0f0f);
	return (int) ((x * UINT64CONST(0x0101010101010101)) >> 56);
}

/* The count inside a loop body compiled with (hw) or without the instruction. */
static pg_attribute_always_inline int
simhash_popcount_as(uint64 x, bool hw)
{
#if defined(__GNUC__) || defined(__clang__)
	if (hw)
		return __builtin_popcountll(x);
#endif
	return simhash_popcount_swar(x);
}

#define SIMHASH_ARGS_(...) __VA_ARGS__

/*
 * SIMHASH_POPCOUNT_LOOP(ret, name, params, args) defines `static ret
 * name params`, which runs name##_body(args, hw): a function the caller
 * defines pg_attribute_always_inline, whose last parameter says whether
 * simhash_popcount_as may use the instruction.  params and args are
 * parenthesised lists: (const T *a, int n) and (a, n).
 */
#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__) && !defined(__POPCNT__)
#define SIMHASH_POPCNT_DISPATCH 1
extern bool simhash_cpu_has_popcnt(void);

#define SIMHASH_POPCOUNT_LOOP(ret, name, params, args) \
	__attribute__((target("popcnt"))) static ret name##_popcnt params \
	{ \
		return name##_body(SIMHASH_ARGS_ args, true); \
	} \
	static ret name params \
	{ \
		return simhash_cpu_has_popcnt() ? name##_popcnt args \
										: name##_body(SIMHASH_ARGS_ args, false); \
	}
#elif defined(__GNUC__) || defined(__clang__)
/* POPCNT allowed by the compiler's flags, or not x86 (a native count) */
#define SIMHASH_POPCOUNT_LOOP(ret, name, params, args) \
	static inline ret name params \
	{ \
		return name##_body(SIMHASH_ARGS_ args, true); \
	}
#else
#define SIMHASH_POPCOUNT_LOOP(ret, name, params, args) \
	static inline ret name params \
	{ \
		return name##_body(SIMHASH_ARGS_ args, false); \
	}
#endif

/*
 * x86-64 with GCC or clang: loops may also be compiled for AVX2
 * (target("avx2")) and chosen at each call by whether the CPU has it.
 */
#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
#define SIMHASH_AVX2_DISPATCH 1
#include <immintrin.h>

extern bool simhash_cpu_has_avx2(void);

/* The bit counts of the four 64-bit lanes of x, one a lane. */
__attribute__((target("avx2"))) static inline __m256i
simhash_popcount_lanes_avx2(__m256i x)
{
	const __m256i nibbles = _mm256_setr_epi8(0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4, 0, 1,
											 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4);
	const __m256i low4 = _mm256_set1_epi8(0x0f);
	__m256i		  c =
		_mm256_add_epi8(_mm256_shuffle_epi8(nibbles, _mm256_and_si256(x, low4)),
						_mm256_shuffle_epi8(nibbles,
											_mm256_and_si256(_mm256_srli_epi64(x, 4), low4)));

	return _mm256_sad_epu8(c, _mm256_setzero_si256());
}

/* The bit counts of four keys xor q, one a 64-bit lane. */
__attribute__((target("avx2"))) static inline __m256i
simhash_popcount4_avx2(const uint64 *keys, __m256i q)
{
	return simhash_popcount_lanes_avx2(
		_mm256_xor_si256(_mm256_loadu_si256((const __m256i *) keys), q));
}

/*
 * The bit counts of sixteen keys xor q, four a vector (*c0 .. *c3), and
 * their least in each lane (three vpminuw): a step of the kept-key loops
 * from distance 0.  Inlined, the vectors stay in registers.
 */
__attribute__((target("avx2"), always_inline)) static inline __m256i
simhash_popcount16_least_avx2(const uint64 *keys, __m256i q, __m256i *c0, __m256i *c1, __m256i *c2,
							  __m256i *c3)
{
	*c0 = simhash_popcount4_avx2(keys, q);
	*c1 = simhash_popcount4_avx2(keys + 4, q);
	*c2 = simhash_popcount4_avx2(keys + 8, q);
	*c3 = simhash_popcount4_avx2(keys + 12, q);
	return _mm256_min_epu16(_mm256_min_epu16(*c0, *c1), _mm256_min_epu16(*c2, *c3));
}
#endif

/*
 * The first of the n keys within [lo, lo + span] bits of qkey (n when none):
 * the filter over kept keys of the sweep (a fixed band over one long array)
 * and of listed probes (a range's keys, from distance 0).
 */
extern int simhash_keys_first(const uint64 *keys, int n, uint64 qkey, int lo, int span);

#endif /* SIMHASH_POPCOUNT_H */
