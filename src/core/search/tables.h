/*
 * tables.h — the permuted-table layout shared by the index and the batch
 * algorithms (C API of the core; see simhash_core.h for conventions).
 *
 * The 64 bits are cut into `blocks` contiguous blocks, most significant
 * first; the first 64 % blocks blocks are one bit wider than the rest.  For a
 * radius `bits`, there is one table per choice of blocks - bits "prefix"
 * blocks, in lexicographic order of the chosen block numbers.  Table t's key
 * is the fingerprint with its prefix blocks moved, in order, to the most
 * significant end and the other blocks following in order.  Two fingerprints
 * within `bits` differing bits agree on every prefix block of at least one
 * table (pigeonhole), so their keys share that table's prefix_bits high bits.
 * Permuting is a bijection that preserves Hamming distance.
 */
#ifndef SIMHASH_TABLES_H
#define SIMHASH_TABLES_H

#include "simhash_core.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SH_MAX_BLOCKS 16

typedef struct sh_table
{
	int			nblocks;
	int			prefix_bits;	/* width of the exact-match prefix of the key */
	uint64_t	prefix_key_mask;	/* the prefix_bits high bits of a key */
	uint64_t	prefix_orig_mask;	/* the prefix blocks, in fingerprint bit space */
	uint8_t		src_shift[SH_MAX_BLOCKS];	/* block i's lowest bit in the fingerprint */
	uint8_t		dst_shift[SH_MAX_BLOCKS];	/* block i's lowest bit in the key */
	uint64_t	width_mask[SH_MAX_BLOCKS];	/* block i's width, as low-order ones */
} sh_table;

/* Number of tables, C(blocks, bits); 0 when the pair is not valid. */
int			sh_table_count(int blocks, int bits) SH_NOEXCEPT;

/*
 * Fill tables[0 .. sh_table_count(blocks, bits) - 1].  SH_ERR_ARGUMENT unless
 * 1 <= bits < blocks <= SH_MAX_BLOCKS and blocks <= 64.
 */
sh_status	sh_table_layout(int blocks, int bits, sh_table *tables, int ntables) SH_NOEXCEPT;

/*
 * The width of the narrowest prefix among the tables of (blocks, bits): the
 * narrow blocks (64 / blocks bits, the last ones) chosen first; 0 unless
 * 1 <= bits < blocks.
 */
int			sh_table_min_prefix_bits(int blocks, int bits) SH_NOEXCEPT;

/* Fingerprint -> table key, and back. */
uint64_t	sh_table_permute(const sh_table *table, uint64_t fingerprint) SH_NOEXCEPT;
uint64_t	sh_table_unpermute(const sh_table *table, uint64_t key) SH_NOEXCEPT;

/*
 * True when fingerprint fp, a match for query q found in table t, is not
 * also reachable in an earlier table (one whose prefix blocks agree with q),
 * so that a probe of every table reports each match exactly once.
 */
int			sh_table_first_match(const sh_table *tables, int t, uint64_t fp, uint64_t q) SH_NOEXCEPT;

/*
 * Multi-probe generalisation for a radius up to bits + flips: a table
 * "reaches" fp when fp's prefix blocks differ from q's in at most flips bits
 * (a probe of every prefix within flips bits of q's).  Any fp within
 * bits + flips of q is reached by some table; this is true only for the
 * first table (in order) that reaches it.  flips = 0 is sh_table_first_match.
 */
int			sh_table_first_match_flips(const sh_table *tables, int t, uint64_t fp, uint64_t q,
									   int flips) SH_NOEXCEPT;

/*
 * The prefix bits table t's probes flip at most when a level of `flips` is
 * split at table `split`: flips before it, flips - 1 from it on (-1: the
 * table is not probed).
 */
static inline int
sh_table_split_flips(int t, int flips, int split)
{
	return t < split ? flips : flips - 1;
}

/*
 * The same for probes split part-way through a level: tables 0 .. split - 1
 * probed with up to `flips` flipped prefix bits, the others with up to
 * flips - 1 (not at all when flips = 0); this is true only for the first
 * table (in order) that reaches fp.  split = the table count is
 * sh_table_first_match_flips.
 */
int			sh_table_first_match_split(const sh_table *tables, int t, uint64_t fp, uint64_t q,
									   int flips, int split) SH_NOEXCEPT;

/*
 * The radius that probes with up to `flips` flipped prefix bits are sure to
 * cover: every fingerprint within it of q is reached by some table.  One that
 * no table reaches differs in >= flips + 1 bits in any blocks - bits blocks,
 * so in the p = blocks - bits least different, the largest of which differs
 * in >= ceil((flips + 1) / p) bits, as does each of the other `bits` blocks:
 * its distance is >= flips + 1 + bits * ceil((flips + 1) / p).  Capped at 64.
 * flips = 0 gives bits; blocks = bits + 1 gives blocks * (flips + 1) - 1, the
 * bound of multi-index hashing.  -1 when the pair is not a valid layout.
 */
int			sh_table_covered_radius(int blocks, int bits, int flips) SH_NOEXCEPT;

/*
 * The covered radius part-way through a level: tables 0 .. tables_done - 1
 * probed with up to `flips` flipped prefix bits, the others with up to
 * flips - 1 (not at all when flips = 0).  With one prefix block per table
 * (blocks = bits + 1) the prefixes split the 64 bits, so a fingerprint no
 * table reaches differs in >= flips + 1 bits in each of the first tables'
 * blocks and >= flips in the others': the radius is
 * blocks * flips + tables_done - 1, each table adding one (multi-index
 * hashing's bound).  Otherwise the prefixes overlap and this is the covered
 * radius of flips - 1 until every table is done.  Capped at 64; -1 when
 * nothing is covered or the arguments are not valid.
 */
int			sh_table_covered_radius_partial(int blocks, int bits, int flips,
											int tables_done) SH_NOEXCEPT;

#ifdef __cplusplus
}
#endif

#endif							/* SIMHASH_TABLES_H */
