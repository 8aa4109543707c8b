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
