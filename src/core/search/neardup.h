/*
 * neardup.h — every pair of shingle sets whose Jaccard similarity reaches a
 * threshold, exactly, in memory (C API of the core; see simhash_core.h).
 * simhash_near_duplicates uses it when the work fits in work_mem, else the
 * partitioned form of neardup_batch.h.
 *
 * The caller adds one ascending, distinct hash set per row (what
 * sh_text_shingle_set returns); rows with identical sets share one set.
 * sh_nd_prepare then replaces every hash by its rank in one global order,
 * rarest first (document frequency over the distinct sets, then hash), and
 * sh_nd_next runs a prefix-filtering similarity join (Bayardo et al.'s
 * all-pairs with the positional filter of Xiao et al.'s PPJoin): sets in
 * ascending size, each probes an inverted index of the shorter sets' prefix
 * tokens with its own first |x| - ceil(t |x|) + 1 tokens, and indexes its
 * first |x| - ceil(2t / (1 + t) |x|) + 1.  No pair with J >= t is missed
 * (the filters use a bound a hair below t); every candidate is verified by a
 * merge of the two rank arrays, which is the exact Jaccard of the hash sets.
 *
 * Memory: 8 bytes per hash of the distinct sets while adding; sh_nd_prepare
 * peaks at about 8 + 8 + 4 bytes per hash plus 12 per distinct hash, and
 * keeps 4 per hash plus an index of at most 8 per hash.  A budget passed to
 * sh_nd_prepare is checked before each allocation that could pass it.
 */
#ifndef SIMHASH_NEARDUP_H
#define SIMHASH_NEARDUP_H

#include "simhash_core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sh_nd sh_nd;

/* Counters of a join, for progress reports and the memory check. */
typedef struct sh_nd_stats
{
	uint64_t	rows;			/* sets added (one per row) */
	uint64_t	sets;			/* distinct sets */
	uint64_t	hashes;			/* hashes of the distinct sets */
	uint64_t	distinct;		/* distinct hashes (after prepare) */
	uint64_t	shared;			/* of those, in two or more sets */
	uint64_t	indexed;		/* inverted index entries */
	uint64_t	joined;			/* sets that have probed the index */
	uint64_t	candidates;		/* candidate pairs of sets verified */
	uint64_t	pairs;			/* verified pairs of distinct sets */
	uint64_t	bytes;			/* memory held now */
	uint64_t	needed;			/* bytes the last refused step needed */
} sh_nd_stats;

/* A verified pair of sets (a == b: the rows that share set a, similarity 1). */
typedef struct sh_nd_pair
{
	uint32_t	a;
	uint32_t	b;
	double		similarity;
} sh_nd_pair;

sh_status	sh_nd_create(sh_nd **nd) SH_NOEXCEPT;
void		sh_nd_free(sh_nd *nd) SH_NOEXCEPT;

/*
 * Adds the next row's set: n ascending, distinct hashes (unsigned order).
 * SH_ERR_ARGUMENT when they are not, SH_ERR_RANGE beyond 2^32 - 1 rows.
 */
sh_status	sh_nd_add(sh_nd *nd, const uint64_t *hashes, size_t n) SH_NOEXCEPT;

/* The counters so far. */
void		sh_nd_get_stats(const sh_nd *nd, sh_nd_stats *stats) SH_NOEXCEPT;

/*
 * Ranks the hashes and builds the join for threshold in (0, 1]; once, after
 * the last sh_nd_add.  SH_ERR_NOMEM (stats.needed set) when a step would hold
 * more than budget bytes; a refused or interrupted call leaves the sets as
 * they were.
 */
sh_status	sh_nd_prepare(sh_nd *nd, double threshold, size_t budget,
						  sh_interrupt_fn interrupt, void *interrupt_arg) SH_NOEXCEPT;

/*
 * The next verified pairs: up to cap of them into out, their number into *n,
 * after joining at most max_sets more sets (so a caller can report progress);
 * *done is set once every pair has been handed out.  The pairs of rows
 * sharing a set come first.  Interruptible between sets: a call that returns
 * SH_ERR_INTERRUPTED can be repeated and goes on where it stopped.
 */
sh_status	sh_nd_next(sh_nd *nd, sh_nd_pair *out, size_t cap, uint32_t max_sets, size_t *n,
					   int *done, sh_interrupt_fn interrupt, void *interrupt_arg) SH_NOEXCEPT;

/*
 * Before sh_nd_prepare (or after it refused): the hashes of set s (*n of
 * them), and the set of row r; so a caller can move the sets it added to the
 * partitioned join (neardup_batch.h) when they outgrow its memory.
 */
const uint64_t *sh_nd_set_hashes(const sh_nd *nd, uint32_t s, size_t *n) SH_NOEXCEPT;
uint32_t	sh_nd_set_of_row(const sh_nd *nd, uint32_t r) SH_NOEXCEPT;

/*
 * An upper bound of the bytes the whole in-memory join of that many hashes
 * (of distinct sets), distinct sets and rows needs at its peak.
 */
uint64_t	sh_nd_memory_needed(uint64_t hashes, uint64_t sets, uint64_t rows) SH_NOEXCEPT;

/* The rows (0-based, in the order added) that have set s: *n of them. */
const uint32_t *sh_nd_rows_of(const sh_nd *nd, uint32_t s, size_t *n) SH_NOEXCEPT;

#ifdef __cplusplus
}
#endif

#endif							/* SIMHASH_NEARDUP_H */
