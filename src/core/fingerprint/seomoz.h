/*
 * seomoz.h — the text fingerprint of the classic seomoz simhash-cpp library
 * (Simhash::hash_text<jenkins, Strspn>, kept bit-exact by its own test on the
 * Jabberwocky, 0x041379A587C66880), for users migrating stored fingerprints.
 *
 *   tokens   maximal runs of ASCII letters [A-Za-z], case kept; every other
 *            byte (digits, punctuation, non-ASCII bytes, NUL) separates
 *   hash     sh_jenkins64(token): lookup3 hashlittle2, seeds 0, (c << 32) | b
 *   window   a cyclic (rolling) hash of the last 3 token hashes:
 *            f = rotl(f, 1) ^ rotl(h[i-3], 3) ^ h[i], with h[i] = 0 before the
 *            first token, so the first two features are h1 and rotl(h1,1)^h2
 *            and every later one is rotl(h[i-2],2) ^ rotl(h[i-1],1) ^ h[i]
 *   vote     one feature per token; bit 63-j of the result is set when more
 *            than half of the features have bit j set (the library counted
 *            bits from the top: its output is bit-reversed against compute())
 *
 * No tokens gives 0.  Input is bytes: any ASCII-compatible encoding works.
 */
#ifndef SIMHASH_SEOMOZ_H
#define SIMHASH_SEOMOZ_H

#include "simhash_core.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SH_SEOMOZ_WINDOW 3

sh_status	sh_fingerprint_seomoz(const char *text, size_t len, uint64_t *out) SH_NOEXCEPT;

#ifdef __cplusplus
}
#endif

#endif							/* SIMHASH_SEOMOZ_H */
