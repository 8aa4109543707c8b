/*
 * neardup_batch.h — the verified join (neardup.h) by chunks of sets, for when
 * the sets do not fit in memory (C API of the core).
 *
 * The caller keeps the sets on disk and passes them by here:
 *  1. sh_ndo_count for every distinct set: a count sketch of document
 *     frequencies, of a size the caller chooses.  Its estimates never fall
 *     below the true frequency, so they fix one global order of the tokens:
 *     (estimate, hash) ascending, rarest first as far as the sketch can tell.
 *     Any fixed order gives the same pairs; a better one fewer candidates.
 *  2. sh_ndo_prefix for every set: its probe prefix (Bayardo et al.'s first
 *     |x| - ceil(t |x|) + 1 tokens in the global order), without the tokens
 *     the sketch knows no other set has, each with its position.  The caller
 *     writes each set with its prefix to one file in join order: ascending
 *     size, then id.
 *  3. That file is cut into chunks that fit in memory, as a block nested
 *     loop join does.  Per chunk, sh_ndc_add takes its sets (in join order),
 *     sh_ndc_build indexes their prefixes, sh_ndc_probe_own joins the chunk
 *     with itself, and each later set of the file, read sequentially, probes
 *     the chunk (sh_ndc_probe, then sh_ndc_verify with its hashes) until the
 *     length filter says no later set can reach a set of the chunk
 *     (sh_ndc_reaches).  A pair is found once, while the chunk of its earlier
 *     set is in memory, with the in-memory join's filters (neardup_join.hpp),
 *     so each chunk's pairs are independent of every other chunk's.
 */
#ifndef SIMHASH_NEARDUP_BATCH_H
#define SIMHASH_NEARDUP_BATCH_H

#include "neardup.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sh_ndo sh_ndo;

/* A sketch of about `bytes` bytes (at least 64 kB). */
sh_status sh_ndo_create(size_t bytes, sh_ndo **o) SH_NOEXCEPT;
void sh_ndo_free(sh_ndo *o) SH_NOEXCEPT;
size_t sh_ndo_bytes(const sh_ndo *o) SH_NOEXCEPT;

/* Counts one distinct set's n distinct hashes. */
void sh_ndo_count(sh_ndo *o, const uint64_t *hashes, size_t n) SH_NOEXCEPT;

/*
 * The probe prefix of a set (n ascending distinct hashes) at threshold, in
 * the global order: at most n tokens into tokens[], their positions in the
 * set's global order into pos[], their number into *m.  Only tokens some
 * other set may have are written.
 */
sh_status	sh_ndo_prefix(sh_ndo *o, const uint64_t *hashes, uint32_t n, double threshold,
						  uint64_t *tokens, uint32_t *pos, size_t *m) SH_NOEXCEPT;

/* A 128-bit digest of n hashes, for telling identical sets apart on disk. */
void sh_ndo_digest(const uint64_t *hashes, size_t n, uint64_t out[2]) SH_NOEXCEPT;

/* One chunk of sets, indexed by their prefixes. */
typedef struct sh_ndc sh_ndc;

sh_status sh_ndc_create(double threshold, sh_ndc **c) SH_NOEXCEPT;
void sh_ndc_free(sh_ndc *c) SH_NOEXCEPT;

/* Empties the chunk for the next one (keeps its buffers). */
void sh_ndc_reset(sh_ndc *c) SH_NOEXCEPT;

/* Bytes a set of n hashes with m prefix tokens takes in a chunk, at most. */
size_t sh_ndc_set_bytes(uint32_t n, size_t m) SH_NOEXCEPT;

/* Bytes the chunk holds now. */
size_t sh_ndc_bytes(const sh_ndc *c) SH_NOEXCEPT;

/*
 * Adds a set of the chunk (the caller's id, its n hashes, its m prefix
 * tokens and positions from sh_ndo_prefix): in join order, before
 * sh_ndc_build.  The chunk keeps a copy.
 */
sh_status sh_ndc_add(sh_ndc *c, uint32_t set, const uint64_t *hashes, uint32_t n,
					 const uint64_t *tokens, const uint32_t *pos, size_t m) SH_NOEXCEPT;

/* Indexes the chunk's sets, once, after the last sh_ndc_add. */
sh_status sh_ndc_build(sh_ndc *c) SH_NOEXCEPT;

/* The chunk's number of sets. */
uint32_t sh_ndc_sets(const sh_ndc *c) SH_NOEXCEPT;

/* Whether a later set of n hashes may still reach a set of the chunk. */
int sh_ndc_reaches(const sh_ndc *c, uint32_t n) SH_NOEXCEPT;

/*
 * The chunk's own pairs with its set `local` (0-based, in the order added),
 * each (earlier set's id, local's id, similarity): *out points at *npairs of
 * them, valid until the next call.  Locals go in ascending order, before any
 * sh_ndc_probe.
 */
sh_status sh_ndc_probe_own(sh_ndc *c, uint32_t local, const sh_nd_pair **out,
						   size_t *npairs) SH_NOEXCEPT;

/*
 * A later set of n hashes probes the chunk with its prefix: *ncand
 * candidates to verify.  Sets probe in join order.
 */
sh_status sh_ndc_probe(sh_ndc *c, uint32_t n, const uint64_t *tokens, const uint32_t *pos,
					   size_t m, size_t *ncand) SH_NOEXCEPT;

/*
 * Verifies the last probe's candidates with the set's id and hashes: the
 * pairs (chunk set's id, set, similarity) at or above the threshold, as
 * sh_ndc_probe_own hands them out.
 */
sh_status sh_ndc_verify(sh_ndc *c, uint32_t set, const uint64_t *hashes, uint32_t n,
						const sh_nd_pair **out, size_t *npairs) SH_NOEXCEPT;

/* Candidates verified by this chunk object so far (all chunks). */
uint64_t sh_ndc_candidates(const sh_ndc *c) SH_NOEXCEPT;

#ifdef __cplusplus
}
#endif

#endif /* SIMHASH_NEARDUP_BATCH_H */
