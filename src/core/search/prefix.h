/*
 * prefix.h — the prefix tokens of a shingle set for an index of exact
 * near-duplicate lookups (C API of the core; see simhash_core.h).
 * simhash_prefix_tokens (the indexed expression) and simhash_prefix_probe
 * (the query side of simhash_near_duplicates_of) use it.
 *
 * Prefix filtering in one FIXED global order, so that a stored row's tokens
 * never depend on the other rows: if J(A, B) >= t then A and B share at
 * least ceil(t max(|A|, |B|)) hashes, so the k-th common hash (in that order)
 * lies within the first |A| - ceil(t |A|) + k hashes of A and within the
 * first |B| - ceil(t |B|) + k of B, and t |B| <= |A| <= |B| / t (the length
 * filter).  Tokens are kept for one hash more than the classic prefix
 * (k = 2), so a similar pair with two or more common hashes shares TWO
 * tokens, and a lookup needs a row to meet two of its tokens (the GIN
 * opclass simhash_prefix_ops): a single shared rare shingle no longer makes
 * a candidate.  A pair with one common hash is similar only when
 * |A| + |B| - 1 <= 1 / t, so both sets have at most 1 / t hashes: the
 * hashes of such a small set (the whole set, then) get a second token each,
 * and a single common hash meets twice.  Each token also names the size
 * class of its set (classes grow by at most 9/8), so a probe with the kept
 * hashes of A in every class of the sizes t |A| .. |A| / t meets exactly
 * the stored sets that pass the filters, up to a class's width.  In a class
 * of sets larger than A, whose smallest size is m, A's kept hashes stop at
 * |A| - ceil(t m) + 2: such a set shares ceil(t m) hashes or more.  A set with
 * no hash has two tokens of its own (two empty sets are similar: J = 1).
 * The two tokens of a hash are distinct bijective mixes of it within a
 * class; a first token equal to another hash's second token (a 64-bit
 * coincidence, as a collision of two shingle hashes) could lose a match.
 *
 * The order: every hash ascending by a 64-bit mix of it, except the 10,000
 * shingles of a built-in list of frequent ones (prefix_frequent.inc, made
 * once from real English text and code) and those of an optional list of the
 * caller's (an argument of the index expression, so part of the index's
 * definition: a site's boilerplate, say), which come after all others, the
 * caller's last, each list's most frequent last.  Frequent shingles then
 * stay out of the prefixes and make few candidates; any order gives exact
 * answers.  Changing the mix, the list, the classes or the token mix
 * changes every stored token: an index built before would miss rows.  They
 * are frozen by golden values in test/prefix_test.cpp.
 */
#ifndef SIMHASH_PREFIX_H
#define SIMHASH_PREFIX_H

#include "simhash_core.h"

#ifdef __cplusplus
extern "C"
{
#endif

    /*
     * A list of frequent shingles, ready for lookups: the hashes ascending
     * (unsigned) and distinct, with each one's rank (0 = the most frequent).
     * sh_prefix_order_build makes one from hashes listed most frequent first
     * (a repeated hash keeps its first rank); n == 0 is the plain order.
     */
    typedef struct sh_prefix_order
    {
        const uint64_t *hashes;
        const uint32_t *ranks;
        size_t n;
    } sh_prefix_order;

    /* Fills hashes[n] and ranks[n] from by_frequency[n] and sets *nout (<= n). */
    sh_status sh_prefix_order_build(const uint64_t *by_frequency, size_t n, uint64_t *hashes, uint32_t *ranks,
                                    size_t *nout) SH_NOEXCEPT;

/* Bounds are taken a hair below t (as the verified join does), never above. */
#define SH_PREFIX_SLACK 1e-9

    /*
     * The number of leading hashes of a set of n that a prefix at threshold t
     * holds: n - ceil((t - slack) n) + 1, at least 1 (0 when n is 0).
     */
    size_t sh_prefix_length(size_t n, double t) SH_NOEXCEPT;

    /* The size class of a set of n hashes: monotone in n, width at most n / 8. */
    uint32_t sh_prefix_size_class(size_t n) SH_NOEXCEPT;

    /*
     * The tokens a stored set of n hashes (ascending, distinct: what
     * sh_text_shingle_set returns) is indexed under at threshold t in the order
     * (NULL: the plain order): at most
     * sh_prefix_tokens_room(n, t) of them, at least 2, written ascending (unsigned)
     * and distinct to out (room for cap), their number to *nout.  SH_ERR_RANGE
     * (with *nout set to the room needed) when cap is too small, SH_ERR_ARGUMENT
     * for t outside (0, 1], SH_ERR_NOMEM.
     */
    sh_status sh_prefix_tokens(const uint64_t *set, size_t n, double t, const sh_prefix_order *order,
                               uint64_t *out, size_t cap, size_t *nout) SH_NOEXCEPT;
    size_t sh_prefix_tokens_room(size_t n, double t) SH_NOEXCEPT;

    /*
     * The tokens that probe for the stored sets that may reach J >= t with this
     * set: its kept hashes at t in every size class of t n .. n / t (the empty
     * set's tokens for an empty set); a stored set with J >= t meets two of
     * them.  Same conventions as sh_prefix_tokens; at most
     * sh_prefix_probe_room(n, t) tokens.
     */
    sh_status sh_prefix_probe(const uint64_t *set, size_t n, double t, const sh_prefix_order *order,
                              uint64_t *out, size_t cap, size_t *nout) SH_NOEXCEPT;
    size_t sh_prefix_probe_room(size_t n, double t) SH_NOEXCEPT;

    /*
     * The prefix itself, for a join that needs the positions (the distributed
     * join's filters): the first sh_prefix_length(n, t) + overlap - 1 hashes
     * of the set (all n at most) in the global order (NULL: the plain order),
     * written IN THAT ORDER to out (room for cap); the empty set has none.
     * Two sets with J >= t and at least overlap common hashes share overlap
     * hashes in these prefixes.  Same status codes as sh_prefix_tokens;
     * SH_ERR_ARGUMENT for overlap 0 too.
     */
    sh_status sh_prefix_ordered(const uint64_t *set, size_t n, double t, size_t overlap,
                                const sh_prefix_order *order, uint64_t *out, size_t cap,
                                size_t *nout) SH_NOEXCEPT;

#ifdef __cplusplus
}
#endif

#endif /* SIMHASH_PREFIX_H */
