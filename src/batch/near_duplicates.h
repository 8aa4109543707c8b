/*
 * near_duplicates.h — what the files of simhash_near_duplicates share: the
 * state of one call, and each file's functions.  Internal to src/batch.
 *
 * The files call downwards only, in this order:
 *   simhash_near_duplicates.c   the SQL functions: reads the rows, joins in
 *                               memory, or on disk with or without workers
 *   near_duplicates_parallel.c  the disk join's parts shared with workers
 *   near_duplicates_spill.c     the disk join: the file of the sets in join
 *                               order and its chunks
 *   near_duplicates_result.c    where the pairs go; the result's checks
 * Beside them: simhash_near_duplicates_citus.c (the entry hands it a Citus
 * table) and simhash_near_duplicates_of.c (the lookup's functions, whose
 * frequent-list order the Citus join uses too).
 */
#ifndef SIMHASH_NEAR_DUPLICATES_H
#define SIMHASH_NEAR_DUPLICATES_H

#include "postgres.h"

#include "fmgr.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "storage/buffile.h"
#include "storage/fileset.h"

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

	/* parallel workers (near_duplicates_parallel.c) */
	FileSet *fileset;	/* the files workers read, when workers may join */
	BufFile *pair_sink; /* in a worker: where its pairs of keys go */
} NearDupCall;

/* near_duplicates_result.c */
extern void nd_put_pair(NearDupCall *call, const char *ka, uint32 alen, const char *kb, uint32 blen,
						double similarity);
extern void nd_put_file_pairs(NearDupCall *call, BufFile *file, uint64 npairs);
extern void nd_check_result_pairs(double pairs);
extern size_t nd_result_kb(void);
extern double nd_work_mem_kb(double bytes);

/* What a parallel worker needs of the disk join (near_duplicates_spill.c). */
typedef struct NdExport
{
	int64  bytes;	/* of the file in join order */
	size_t room;	/* bytes a chunk may take */
	uint32 max_len; /* the largest set */
} NdExport;

/* A part of the disk join: a chunk, with itself or not, probed by a run of the sets after it. */
typedef struct NdPart
{
	uint64 chunk; /* where the chunk starts in the file in join order */
	uint64 next;  /* where the set after it starts (PG_UINT64_MAX: none) */
	uint64 from;  /* where the first set that probes it starts */
	uint64 to;	  /* where the sets that probe it end (PG_UINT64_MAX: the end) */
	bool   own;	  /* the chunk is joined with itself too */
} NdPart;

/* near_duplicates_parallel.c */
extern void	  nd_parallel_fileset(NearDupCall *call);
extern uint32 nd_parallel_join(NearDupCall *call);

/* near_duplicates_spill.c */
extern void nd_spill_begin(NearDupCall *call);
extern void
nd_spill_add(NearDupCall *call, const uint64_t *hashes, size_t n, const char *key, uint32 keylen);
extern void	  nd_check_text(NearDupCall *call, size_t n, const char *key, uint32 keylen);
extern void	  nd_spill_write_joined(NearDupCall *call);
extern uint32 nd_spill_join_chunks(NearDupCall *call);
extern void	  nd_spill_close_joined(NearDupCall *call);
extern void	  nd_spill_release(NearDupCall *call);
extern uint64 nd_spill_chunk_load(NearDupCall *call, uint64 start, uint32 *placed);
extern void	  nd_spill_chunk_own(NearDupCall *call);
extern void	  nd_spill_chunk_probe(NearDupCall *call, uint64 from, uint64 to);
extern void	  nd_spill_export(NearDupCall *call, NdExport *out);
extern NdPart *
nd_spill_plan_parts(NearDupCall *call, int participants, uint32 *nchunks, uint32 *nparts);
extern void nd_spill_import(NearDupCall *call, const NdExport *in);
extern void nd_spill_import_end(NearDupCall *call);
extern void nd_spill_join_part(NearDupCall *call, const NdPart *part);

/* simhash_near_duplicates_of.c */
struct sh_prefix_order;
extern const struct sh_prefix_order *
simhash_frequent_order(FunctionCallInfo fcinfo, int argno, const char *what);

/* simhash_near_duplicates_citus.c */
extern bool nd_citus_join(FunctionCallInfo fcinfo);

#endif /* SIMHASH_NEAR_DUPLICATES_H */
