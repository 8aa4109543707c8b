/*
 * text.h — the text fingerprint pipeline of simhash(text) (C API of
 * the core; see simhash_core.h for conventions).
 *
 * tokenize -> normalize -> shingle -> hash -> vote.  Input is UTF-8 (the shim
 * converts from the server encoding); invalid sequences are replaced, never
 * trusted.
 */
#ifndef SIMHASH_TEXT_H
#define SIMHASH_TEXT_H

#include "simhash_core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum sh_token_mode
{
	SH_TOKENS_WORDS = 0,		/* maximal runs of Unicode letters and digits */
	SH_TOKENS_CHARS = 1			/* every letter or digit is a token (CJK, Thai...) */
} sh_token_mode;

typedef struct sh_text_options
{
	int			shingle;		/* tokens per feature, 1 .. SH_MAX_SHINGLE */
	int			tokens;			/* an sh_token_mode */
	int			casefold;		/* non-zero: Unicode case folding */
} sh_text_options;

#define SH_MAX_SHINGLE 64
#define SH_DEFAULT_SHINGLE 3

void		sh_text_options_default(sh_text_options *opts) SH_NOEXCEPT;

/* The fingerprint of UTF-8 text; SH_ERR_ARGUMENT for bad options. */
sh_status	sh_fingerprint_text(const char *utf8, size_t len,
								const sh_text_options *opts, uint64_t *out) SH_NOEXCEPT;

/*
 * The distinct shingle hashes of UTF-8 text, ascending (unsigned): the
 * features simhash(text) votes with under the same options, each once.
 * Writes at most cap of them to out and their number to *n; SH_ERR_RANGE
 * (with *n set) when more than cap, SH_ERR_ARGUMENT for bad options.
 */
sh_status	sh_text_shingle_set(const char *utf8, size_t len, const sh_text_options *opts,
								uint64_t *out, size_t cap, size_t *n) SH_NOEXCEPT;

/*
 * The Jaccard similarity |A and B| / |A or B| of the distinct shingle-hash
 * sets of two texts (sh_text_shingle_set); 1 when both are empty.  Shingles
 * are compared by their 64-bit hashes: two different shingles of the pair
 * collide with probability about (|A| + |B|)^2 / 2^65.
 */
sh_status	sh_text_similarity(const char *a, size_t alen, const char *b, size_t blen,
							   const sh_text_options *opts, double *out) SH_NOEXCEPT;

/*
 * sh_text_similarity holding at most max_hashes shingle hashes (8 bytes
 * each) of the two texts at a time: SH_ERR_RANGE, with no result, when more
 * than half of them are distinct shingles of one text.
 */
sh_status	sh_text_similarity_bounded(const char *a, size_t alen, const char *b, size_t blen,
									   const sh_text_options *opts, size_t max_hashes,
									   double *out) SH_NOEXCEPT;

/* The Jaccard similarity of two ascending, distinct hash sets; 1 when both are empty. */
double		sh_sorted_jaccard(const uint64_t *a, size_t na, const uint64_t *b, size_t nb) SH_NOEXCEPT;

/*
 * Corpus-aware shingle weights (boilerplate weighting, simhash_weighted):
 * the weight of each shingle hash listed, and one weight for every shingle
 * not listed.  Filled by the caller, then checked once by
 * sh_shingle_weights_prepare; the arrays must outlive their use.
 */
typedef struct sh_shingle_weights
{
	const uint64_t *hashes;		/* ascending (unsigned) and distinct */
	const float *weights;		/* weights[i] of hashes[i]: finite, >= 0 */
	size_t		n;
	float		other;			/* the weight of a shingle not in hashes */
	double		scale;			/* set by sh_shingle_weights_prepare */
	int			prepared;		/* set by sh_shingle_weights_prepare */
} sh_shingle_weights;

/*
 * Checks w (SH_ERR_ARGUMENT: hashes not ascending and distinct, or a weight
 * negative or not finite) and readies it for sh_fingerprint_text_weighted.
 */
sh_status	sh_shingle_weights_prepare(sh_shingle_weights *w) SH_NOEXCEPT;

/*
 * sh_fingerprint_text with each shingle's vote weighted by w: the same
 * shingles in the same order, each adding its weight to the bits it has and
 * subtracting it from the others; a bit is set when its sum is positive.
 * Weights are votes in units of 2^-24 of the largest weight (exact integer
 * sums, so the result does not depend on rounding or order): equal weights
 * give sh_fingerprint_text exactly, a weight of 0 (or below 2^-25 of the
 * largest) is no vote, and a text whose every shingle weighs 0 gets 0.
 * SH_ERR_ARGUMENT for bad options or a w not prepared.
 */
sh_status	sh_fingerprint_text_weighted(const char *utf8, size_t len, const sh_text_options *opts,
										 const sh_shingle_weights *w, uint64_t *out) SH_NOEXCEPT;

/*
 * The weight of a shingle found in df of docs documents: 0 when df exceeds
 * max_df * docs (boilerplate: no vote); below that 1, or with idf its
 * smoothed inverse document frequency ln((1 + docs) / (1 + df)), which is
 * largest for a shingle of no document.  df < 0 counts as 0; docs <= 0 gives
 * 1 (no corpus: no weighting).
 */
double		sh_df_weight(int64_t df, int64_t docs, double max_df, int idf) SH_NOEXCEPT;

/* The 64-bit hash of one feature's bytes, as used by the text pipeline. */
uint64_t	sh_feature_hash(const void *data, size_t len) SH_NOEXCEPT;

/*
 * sh_vote_add (simhash_core.h) for n features with their weights, in order:
 * the same additions, so the same sums bit for bit, without a branch on
 * each bit (those mispredict half the time on hash bits).
 */
void		sh_vote_add_many(double *sums, const uint64_t *features,
							 const double *weights, size_t n) SH_NOEXCEPT;

#ifdef __cplusplus
}
#endif

#endif							/* SIMHASH_TEXT_H */
