/*
 * neardup_batch.h — the partitioned form of the verified join (neardup.h)
 * for when the sets do not fit in memory (C API of the core).
 *
 * The caller keeps the sets on disk and passes them by here three times:
 *  1. sh_ndo_count for every distinct set: a count sketch of document
 *     frequencies, of a size the caller chooses.  Its estimates never fall
 *     below the true frequency, so they fix one global order of the tokens:
 *     (estimate, hash) ascending, rarest first as far as the sketch can tell.
 *     Any fixed order gives the same pairs; a better one fewer candidates.
 *  2. sh_ndo_prefix for every set: the prefix tokens (Bayardo et al.'s
 *     first |x| - ceil(t |x|) + 1 in the global order), without those the
 *     sketch knows no other set has.  The caller writes each to the batch
 *     sh_ndo_batch names, as a hash join partitions its rows.
 *  3. per batch, sh_ndb joins that batch's prefix entries in memory (PPJoin's
 *     length and positional filters) and hands out candidate pairs of sets;
 *     sh_ndo_owner names the batch that owns a pair: that of their first
 *     common token in the global order, and the caller reads both sets back
 *     for sh_ndo_jaccard only in that batch.  A pair with J >= t meets in that
 *     batch (its first common token lies in both prefixes) and is reported
 *     there only, so no pair is lost or repeated and no set of seen pairs is
 *     kept.  The owner is found from the two prefixes alone (the first
 *     common token lies in both), so a pair met in another batch costs a
 *     short merge, not a read of both sets.  Within the owner batch the positional filter sees every common
 *     token before the one it tests; elsewhere it may drop a candidate, which
 *     that batch would not report anyway.
 */
#ifndef SIMHASH_NEARDUP_BATCH_H
#define SIMHASH_NEARDUP_BATCH_H

#include "simhash_core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One prefix token of a set, as written to and read from a batch. */
typedef struct sh_ndb_entry
{
	uint64_t	token;			/* the shingle hash */
	uint32_t	set;			/* the set's id (the caller's) */
	uint32_t	size;			/* the set's size */
	uint32_t	pos;			/* the token's position in the global order of the set */
	uint32_t	est;			/* the token's estimated frequency: its place in the order */
} sh_ndb_entry;

typedef struct sh_ndo sh_ndo;

/* A sketch of about `bytes` bytes (at least 64 kB). */
sh_status sh_ndo_create(size_t bytes, sh_ndo **o) SH_NOEXCEPT;
void sh_ndo_free(sh_ndo *o) SH_NOEXCEPT;
size_t sh_ndo_bytes(const sh_ndo *o) SH_NOEXCEPT;

/* Counts one distinct set's n distinct hashes. */
void sh_ndo_count(sh_ndo *o, const uint64_t *hashes, size_t n) SH_NOEXCEPT;

/*
 * The prefix entries of set `set` (n ascending distinct hashes) at threshold,
 * in the global order: at most n of them into out (*m written).  Only tokens
 * some other set may have are written; with their positions and estimates
 * they are also what sh_ndo_owner needs of the set.
 */
sh_status	sh_ndo_prefix(sh_ndo *o, const uint64_t *hashes, uint32_t n, double threshold,
						  uint32_t set, sh_ndb_entry *out, size_t *m) SH_NOEXCEPT;

/* A 128-bit digest of n hashes, for telling identical sets apart on disk. */
void sh_ndo_digest(const uint64_t *hashes, size_t n, uint64_t out[2]) SH_NOEXCEPT;

/* The batch (0 .. nbatches - 1) of a token. */
uint32_t sh_ndo_batch(uint64_t token, uint32_t nbatches) SH_NOEXCEPT;

/*
 * The batch that owns a candidate pair: that of the first common token of
 * the two sets' prefix entries (sh_ndo_prefix), in the global order;
 * UINT32_MAX when they share none, so that the pair cannot reach the
 * threshold.  Stops at the first common token.
 */
uint32_t	sh_ndo_owner(const sh_ndb_entry *a, size_t na, const sh_ndb_entry *b, size_t nb,
						 uint32_t nbatches) SH_NOEXCEPT;

/*
 * The same from the first na and nb prefix entries only: the owner, or
 * UINT32_MAX when they share none, or SH_NDO_UNKNOWN when one ran out first
 * (the rest of the entries decide).
 */
#define SH_NDO_UNKNOWN (UINT32_MAX - 1)
uint32_t	sh_ndo_owner_head(const sh_ndb_entry *a, size_t na, int a_whole, const sh_ndb_entry *b,
							  size_t nb, int b_whole, uint32_t nbatches) SH_NOEXCEPT;

/* The Jaccard similarity of two ascending hash sets, as sh_sorted_jaccard computes it. */
double		sh_ndo_jaccard(const uint64_t *a, size_t na, const uint64_t *b, size_t nb) SH_NOEXCEPT;

typedef struct sh_ndb sh_ndb;

/* Bytes a batch holds per entry added, at most (for sizing the batches). */
#define SH_NDB_BYTES_PER_ENTRY 72

sh_status sh_ndb_create(double threshold, sh_ndb **b) SH_NOEXCEPT;
void sh_ndb_free(sh_ndb *b) SH_NOEXCEPT;

/* Adds entries of the batch (any order), before sh_ndb_next is first called. */
sh_status sh_ndb_add(sh_ndb *b, const sh_ndb_entry *e, size_t n) SH_NOEXCEPT;

/*
 * The next candidate pairs of sets: up to cap pairs into out (2 ids each:
 * the earlier set in the join order, then the later), *n of them; pairs come
 * grouped by their second set.  *done once all are out.  Interruptible
 * between sets; a call that returns SH_ERR_INTERRUPTED can be repeated.
 */
sh_status sh_ndb_next(sh_ndb *b, uint32_t *out, size_t cap, size_t *n, int *done,
	                  sh_interrupt_fn interrupt, void *interrupt_arg) SH_NOEXCEPT;

#ifdef __cplusplus
}
#endif

#endif /* SIMHASH_NEARDUP_BATCH_H */
