/*
 * near_duplicates_result.c — where the pairs of simhash_near_duplicates go,
 * whichever join found them: the SRF's tuplestore, or in a parallel worker
 * its file of pairs that the leader reads back into the tuplestore.  Also
 * the checks and the work_mem split of the result that the in-memory join
 * (simhash_near_duplicates.c) and the disk join (near_duplicates_spill.c)
 * share.
 *
 * The lowest of the files of simhash_near_duplicates: it calls none of the
 * others (near_duplicates.h gives their order).
 */
#include "simhash.h"

#include <math.h>

#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/tuplestore.h"

#include "near_duplicates.h"

/* simhash.near_duplicates_progress (simhash.c). */
int simhash_near_duplicates_progress = 100000;

/* The pairs' tuplestore takes this share of work_mem (it spills beyond), the join the rest. */
#define RESULT_SHARE 8

/* A pair of keys as a worker hands it to the leader: this, then the two keys. */
typedef struct NdPairRecord
{
	uint32 alen;
	uint32 blen;
	double similarity;
} NdPairRecord;

size_t
nd_result_kb(void)
{
	return (size_t) Max(work_mem / RESULT_SHARE, 8);
}

double
nd_work_mem_kb(double bytes)
{
	return ceil(bytes / 1024.0 * RESULT_SHARE / (RESULT_SHARE - 1));
}

/*
 * The row pairs of rows sharing a set are known before any is written: a
 * result that temp_file_limit could not hold is refused up front rather than
 * after filling the disk.
 */
void
nd_check_result_pairs(double pairs)
{
	double bytes;

	/* a tuple of two short keys and a float8, as the tuplestore writes it */
	bytes = pairs * 48.0;
	if (temp_file_limit >= 0 && bytes > (double) temp_file_limit * 1024.0)
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("simhash_near_duplicates would return at least %.0f pairs of rows with "
						"identical texts, more than temp_file_limit (%d kB) holds",
						pairs, temp_file_limit),
				 errhint("Keep one row of each identical body first (SELECT DISTINCT ON), or "
						 "raise temp_file_limit.")));
}

/* "C" collation order of two keys: bytes, then length. */
static int
key_cmp(const char *a, uint32 alen, const char *b, uint32 blen)
{
	int c = memcmp(a, b, Min(alen, blen));

	if (c == 0)
		c = (alen > blen) - (alen < blen);
	return c;
}

/* In a worker: writes a pair to its file, for the leader (nd_put_file_pairs). */
static void
put_worker_pair(NearDupCall *call, const char *ka, uint32 alen, const char *kb, uint32 blen,
				double similarity)
{
	NdPairRecord r;

	r.alen = alen;
	r.blen = blen;
	r.similarity = similarity;
	BufFileWrite(call->pair_sink, &r, sizeof(r));
	BufFileWrite(call->pair_sink, unconstify(char *, ka), alen);
	BufFileWrite(call->pair_sink, unconstify(char *, kb), blen);
	call->emitted++;
}

/*
 * Returns one pair of rows, as (smaller key, larger key); equal keys are
 * never paired.
 */
void
nd_put_pair(NearDupCall *call, const char *ka, uint32 alen, const char *kb, uint32 blen,
			double similarity)
{
	ReturnSetInfo *rsinfo = call->rsinfo;
	int			   c;
	Datum		   values[3];
	bool		   isnull[3] = {false, false, false};

	if (call->pair_sink != NULL)
	{
		put_worker_pair(call, ka, alen, kb, blen, similarity);
		return;
	}
	c = key_cmp(ka, alen, kb, blen);
	if (c == 0)
		return;
	values[0] = PointerGetDatum(cstring_to_text_with_len(c < 0 ? ka : kb, c < 0 ? alen : blen));
	values[1] = PointerGetDatum(cstring_to_text_with_len(c < 0 ? kb : ka, c < 0 ? blen : alen));
	values[2] = Float8GetDatum(similarity);
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, isnull);
	pfree(DatumGetPointer(values[0]));
	pfree(DatumGetPointer(values[1]));
	call->emitted++;
}

/* In the leader: returns the npairs pairs a worker wrote to file, as rows. */
void
nd_put_file_pairs(NearDupCall *call, BufFile *file, uint64 npairs)
{
	StringInfoData keys;
	NdPairRecord   r;

	initStringInfo(&keys);
	for (uint64 i = 0; i < npairs; i++)
	{
		if (BufFileRead(file, &r, sizeof(r)) != sizeof(r))
			ereport(ERROR, (errcode_for_file_access(),
							errmsg("could not read a temporary file of simhash_near_duplicates")));
		resetStringInfo(&keys);
		enlargeStringInfo(&keys, (int) (r.alen + r.blen));
		if (BufFileRead(file, keys.data, r.alen + r.blen) != r.alen + r.blen)
			ereport(ERROR, (errcode_for_file_access(),
							errmsg("could not read a temporary file of simhash_near_duplicates")));
		nd_put_pair(call, keys.data, r.alen, keys.data + r.alen, r.blen, r.similarity);
		if ((i & 1023) == 0)
			CHECK_FOR_INTERRUPTS();
	}
	pfree(keys.data);
}
