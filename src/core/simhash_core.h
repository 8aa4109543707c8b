/*
 * simhash_core.h — the C face of the C++ core.
 *
 * Everything here is callable from C, never throws, never calls back into
 * PostgreSQL, and reports failure through an sh_status.  Memory the core hands
 * back is either caller-provided or released by a matching sh_*_free call.
 */
#ifndef SIMHASH_CORE_H
#define SIMHASH_CORE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
#define SH_NOEXCEPT noexcept
extern "C" {
#else
#define SH_NOEXCEPT
#endif

typedef enum sh_status
{
	SH_OK = 0,
	SH_ERR_SYNTAX,		/* malformed input text */
	SH_ERR_RANGE,		/* value out of range */
	SH_ERR_ARGUMENT,	/* invalid option or parameter */
	SH_ERR_NOMEM,		/* allocation failed */
	SH_ERR_INTERNAL,	/* unexpected exception inside the core */
	SH_ERR_INTERRUPTED	/* the caller's interrupt callback asked to stop */
} sh_status;

/* A short English description of a status, for error messages. */
const char *sh_status_message(sh_status status) SH_NOEXCEPT;

/*
 * The one interrupt protocol of the core.  A long computation polls this
 * callback now and then (with the caller's arg) on the caller's thread only;
 * when it returns nonzero the computation stops and returns
 * SH_ERR_INTERRUPTED with no output.  The callback must only read state (the
 * shim reads PostgreSQL's interrupt flags); the caller serves the interrupt
 * after the call returned.  May be NULL: never stop.
 */
typedef int (*sh_interrupt_fn) (void *arg);

/* Releases a buffer the core returned (every one is malloc'ed); NULL is fine. */
void		sh_free(void *p) SH_NOEXCEPT;

/*
 * The binomial coefficient C(n, k) for 0 <= n <= 64 (exact: C(64, 32) fits
 * in 63 bits); 0 when k < 0 or k > n, -1 when n is outside 0..64.
 */
int64_t		sh_binomial(int n, int k) SH_NOEXCEPT;

/* ---- bits ---------------------------------------------------------------- */

/* Hamming distance: popcount(a ^ b). */
int			sh_distance(uint64_t a, uint64_t b) SH_NOEXCEPT;

/*
 * A radius (the most differing bits a match may have) is 0..SH_MAX_RADIUS
 * everywhere: SQL functions and operators, settings, the batch core and the
 * command-line tools all apply this one rule.
 */
#define SH_MAX_RADIUS 64
static inline int
sh_radius_valid(int radius)
{
	return radius >= 0 && radius <= SH_MAX_RADIUS;
}

/*
 * Parse 1..16 hex digits, with an optional 0x/0X prefix and surrounding
 * whitespace.  Returns SH_ERR_SYNTAX for anything else.
 */
sh_status	sh_parse_hex(const char *text, size_t len, uint64_t *out) SH_NOEXCEPT;

/* Write 16 lowercase hex digits and a NUL terminator into out[17]. */
void		sh_format_hex(uint64_t value, char *out) SH_NOEXCEPT;

/* ---- bit voting ---------------------------------------------------------- */

/*
 * A vote is 64 per-bit sums: each feature adds its weight to bit i when the
 * feature's bit i is set and subtracts it otherwise.  The fingerprint has bit
 * i set when sum i is strictly positive (a strict majority).
 */
#define SH_BITS 64

void		sh_vote_add(double *sums, uint64_t feature, double weight) SH_NOEXCEPT;
uint64_t	sh_vote_result(const double *sums) SH_NOEXCEPT;

/*
 * Vote sums for weights of any finite size: each sum is compensated
 * (Neumaier: hi plus the rounding errors gathered in lo) over the weights
 * scaled by 2^-64, so no sum of fewer than 2^63 finite weights overflows and
 * a small weight beside big ones still counts.  The result can depend on the
 * order of the weights only when a sum cancels to within about 2^-100 of its
 * largest weight.  (Weights below 2^-958 in magnitude are rounded by the
 * scaling.)
 */
typedef struct sh_vote_sums
{
	double		hi[SH_BITS];
	double		lo[SH_BITS];
} sh_vote_sums;

void		sh_vote_sums_add(sh_vote_sums *v, uint64_t feature, double weight) SH_NOEXCEPT;
void		sh_vote_sums_merge(sh_vote_sums *into, const sh_vote_sums *from) SH_NOEXCEPT;
uint64_t	sh_vote_sums_result(const sh_vote_sums *v) SH_NOEXCEPT;

/*
 * The classic compute() on raw feature hashes: every feature weighs one,
 * bit i is set when more than half of the features have it.
 */
uint64_t	sh_compute(const uint64_t *features, size_t n) SH_NOEXCEPT;

#ifdef __cplusplus
}
#endif

#endif							/* SIMHASH_CORE_H */
