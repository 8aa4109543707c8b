/*
 * near_duplicates.h — what the two halves of simhash_near_duplicates share:
 * the state of one call (simhash_near_duplicates.c reads the rows and joins
 * in memory; near_duplicates_spill.c joins in batches on disk when the sets
 * outgrow work_mem).  Internal to src/batch.
 */
#ifndef SIMHASH_NEAR_DUPLICATES_H
#define SIMHASH_NEAR_DUPLICATES_H

#include "postgres.h"

#include "fmgr.h"
#include "funcapi.h"
#include "lib/stringinfo.h"

#include "neardup.h"

struct NearDupSpill;

typedef struct NearDupCall
{
	MemoryContext  cxt; /* everything the call holds */
	double		   threshold;
	size_t		   budget; /* bytes of work_mem the join may take (the rest: the pairs) */
	ReturnSetInfo *rsinfo;
	uint64		   rows;	   /* rows read (with a key and a body) */
	uint64		   empty_rows; /* of those, with no shingle */
	uint64		   key_chars;  /* bytes of their keys */
	uint64		   body_chars; /* bytes of their bodies */
	uint64		   emitted;	   /* pairs of rows returned */
	uint64		   candidates; /* candidate pairs of sets verified */
	uint64		   similar;	   /* of those, similar */

	/* in memory: the core's join and the keys by row */
	sh_nd  *nd;
	char  **keys;
	uint32 *keylen;
	size_t	maxkeys;
	size_t	key_bytes;

	/* on disk, once spilled */
	struct NearDupSpill	 *spill;
	MemoryContextCallback release;
} NearDupCall;

/* simhash_near_duplicates.c */
extern void nd_put_pair(NearDupCall *call, const char *ka, uint32 alen, const char *kb, uint32 blen,
						double similarity);
extern void nd_check_result_pairs(double pairs);
extern size_t nd_result_kb(void);
extern double nd_work_mem_kb(double bytes);

/* near_duplicates_spill.c */
extern void nd_spill_begin(NearDupCall *call);
extern void
nd_spill_add(NearDupCall *call, const uint64_t *hashes, size_t n, const char *key, uint32 keylen);
extern void	  nd_check_text(NearDupCall *call, size_t n, const char *key, uint32 keylen);
extern void	  nd_spill_join(NearDupCall *call);
extern void	  nd_spill_release(NearDupCall *call);
extern uint64 nd_spill_chunk_load(NearDupCall *call, uint64 start, uint32 *placed);
extern void	  nd_spill_chunk_own(NearDupCall *call);
extern void	  nd_spill_chunk_probe(NearDupCall *call, uint64 from, uint64 to);

#endif /* SIMHASH_NEAR_DUPLICATES_H */
