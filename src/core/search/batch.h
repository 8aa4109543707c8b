/*
 * batch.h — all pairs within a radius of k bits, and their connected
 * components, over an in-memory array of fingerprints (C API of the core; see
 * simhash_core.h).
 *
 * Method: for each permuted table of tables.h, build (prefix, position)
 * records, radix-sort them on the prefix, and compare every pair of records
 * that share the whole prefix.  A pair is reported only from the first table
 * whose prefix blocks it agrees on (sh_table_first_match), so no global set
 * of pairs is needed.  Two special layouts complete the range: radius 0 uses
 * one table whose prefix is the whole fingerprint, and a radius with no
 * useful layout (or a small input) compares all pairs in one group.
 *
 * Positions are 0-based indexes into the input; equal fingerprints at two
 * positions are a pair at distance 0.  At most 2^32 - 1 fingerprints.
 *
 * Memory, besides the caller's input (8 bytes per hash): each worker thread
 * holds two 8-byte records per hash (one table at a time, sorted with a
 * scratch copy), i.e. 16 bytes per hash per thread, and scratch lists for the
 * group being tested, which stay within n entries; clustering adds a 4-byte
 * union-find parent per hash per thread, plus 4 bytes per hash for the
 * result.  sh_batch_memory bounds it all.  sh_find_all_each hands pairs out
 * in chunks, so its memory does not depend on how many pairs there are;
 * sh_find_all collects them all (8 bytes per pair).
 *
 * threads <= 1 runs on the caller's thread.  With more, worker threads scan
 * tables concurrently (at most one per table); they start with every signal
 * blocked and never call the interrupt callback, which only ever runs on the
 * caller's thread, about every few milliseconds of work.  When it returns
 * nonzero the call stops and returns SH_ERR_INTERRUPTED with no output.
 */
#ifndef SIMHASH_BATCH_H
#define SIMHASH_BATCH_H

#include "simhash_core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sh_pair
{
	uint32_t	a;				/* a < b, 0-based positions */
	uint32_t	b;
} sh_pair;

/*
 * The block count the automatic choice (blocks = 0) would use for n hashes
 * and this radius, from a cost model of sorting versus comparing; 0 means
 * one group of all pairs (no tables), which is also the choice for radius
 * 0, where the blocks play no part.  -1 for an invalid radius.
 */
int			sh_batch_auto_blocks(size_t n, int radius) SH_NOEXCEPT;

/*
 * Every pair of positions within `radius` (0..64) differing bits, sorted by
 * (a, b), in a malloc'd array released with sh_free.  blocks is 0
 * (automatic) or radius < blocks <= SH_MAX_BLOCKS (ignored for radius 0);
 * it changes only the speed.  *pairs is NULL when *npairs is 0.
 */
sh_status	sh_find_all(const uint64_t *hashes, size_t n, int blocks, int radius,
						int threads, sh_interrupt_fn interrupt, void *interrupt_arg,
						sh_pair **pairs, size_t *npairs) SH_NOEXCEPT;

/*
 * Receives the next chunk of pairs (1..chunk of them, sorted by (a, b) within
 * the chunk, in no order across chunks); nonzero stops the search, which then
 * returns SH_ERR_INTERRUPTED.  With threads > 1 it is called from any of the
 * threads, never two at a time.
 */
typedef int (*sh_pairs_fn)(const sh_pair *pairs, size_t npairs, void *arg);

/*
 * The pairs of sh_find_all, streamed: every pair once, handed to emit in
 * chunks of at most `chunk` pairs (held per thread: 8 bytes a pair).
 */
sh_status	sh_find_all_each(const uint64_t *hashes, size_t n, int blocks, int radius,
							 int threads, sh_interrupt_fn interrupt, void *interrupt_arg,
							 size_t chunk, sh_pairs_fn emit, void *emit_arg) SH_NOEXCEPT;

/*
 * An upper bound of the bytes a call for n hashes allocates besides the
 * caller's arrays: sh_find_all_each (clusters = 0; add its chunks) or
 * sh_cluster_labels / sh_find_clusters (clusters = 1).  SIZE_MAX for invalid
 * arguments.
 */
size_t		sh_batch_memory(size_t n, int blocks, int radius, int threads,
							int clusters) SH_NOEXCEPT;

/*
 * labels[i] (caller-provided, n entries) := the smallest position of the
 * connected component of position i in the graph of pairs within radius;
 * a position with no neighbour is its own label.
 */
sh_status	sh_cluster_labels(const uint64_t *hashes, size_t n, int blocks, int radius,
							  int threads, sh_interrupt_fn interrupt, void *interrupt_arg,
							  uint32_t *labels) SH_NOEXCEPT;

/*
 * The components of two or more positions: cluster c is members[bounds[c]
 * .. bounds[c + 1]), ascending; clusters are ordered by their smallest member.
 * Both arrays are malloc'd (release with sh_free); bounds has
 * *nclusters + 1 entries.
 */
sh_status	sh_find_clusters(const uint64_t *hashes, size_t n, int blocks, int radius,
							 int threads, sh_interrupt_fn interrupt, void *interrupt_arg,
							 uint32_t **members, size_t **bounds,
							 size_t *nclusters) SH_NOEXCEPT;

#ifdef __cplusplus
}
#endif

#endif							/* SIMHASH_BATCH_H */
