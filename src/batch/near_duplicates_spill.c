/*
 * near_duplicates_spill.c — simhash_near_duplicates beyond work_mem: the
 * verified join in batches over temporary files, as a hash join partitions
 * its rows (the core's side is neardup_batch.h, which says why no pair is
 * lost or repeated).
 *
 * While the rows are read, each distinct shingle set is written once to a
 * file of sets (identical sets are found by a 128-bit digest), each key to a
 * file of keys, and the sets' hashes are counted in a sketch of a quarter of
 * work_mem that fixes the global token order.  Then one sequential pass over
 * the sets writes each set's prefix entries to the batch of its token; the
 * number of batches is chosen so that one batch's join fits in what work_mem
 * leaves.  Each batch is joined in memory, its candidates read back from the
 * file of sets and verified exactly, and each pair returned by the batch that
 * owns it.
 *
 * Memory: besides the batch, about 40 bytes per row and 60 per distinct set
 * (positions in the files, the rows of each set, the digests), and the
 * sketch.  The files count against temp_file_limit.
 */
#include "simhash.h"

#include <math.h>

#include "miscadmin.h"
#include "storage/buffile.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"

#include "near_duplicates.h"
#include "neardup_batch.h"

#define MAX_BATCHES		1024
#define HEAD_MAX		((size_t) 8)
#define ENTRY_CHUNK		4096
#define PAIR_CHUNK		4096
#define MIN_BATCH_BYTES ((size_t) 64 << 10)

typedef struct DigestEntry
{
	uint64 digest[2];
	uint32 n; /* the key: digest and size */
	uint32 set;
} DigestEntry;

typedef struct NearDupSpill
{
	BufFile		 *sets;		  /* the distinct sets' hashes, one after another */
	BufFile		 *keys;		  /* the keys, one after another */
	BufFile		 *prefixes;	  /* the sets' prefix entries, one set after another */
	uint64		 *set_pos;	  /* by set: where it starts in sets */
	uint32		 *set_len;	  /* by set: its hashes */
	uint64		 *prefix_pos; /* by set: where its prefix entries start */
	uint32		 *prefix_len; /* by set: how many */
	uint32		  nsets, maxsets;
	uint64		 *key_pos; /* by row: where its key starts in keys */
	uint32		 *key_len; /* by row */
	uint32		 *row_set; /* by row: its set */
	uint64		  nrows, maxrows;
	uint64		  key_bytes;
	HTAB		 *digests;
	sh_ndo		 *order;
	sh_ndb		 *batch;
	uint64		  hashes;		/* of the distinct sets */
	uint64		  prefix_bound; /* prefix entries, at most */
	uint32		 *rows_at;		/* by set: start in rows (one more at the end) */
	uint32		 *rows;			/* row ids grouped by set */
	uint64		 *abuf, *bbuf;	/* two sets read back */
	size_t		  acap, bcap;
	sh_ndb_entry *heads;	/* by set: its first head_k prefix entries */
	uint8		 *head_len; /* by set: how many of them */
	uint32		  head_k;
	sh_ndb_entry *apre, *bpre; /* two sets' prefix entries read back */
	size_t		  apcap, bpcap;
} NearDupSpill;

static uint64
file_tell(BufFile *file)
{
	int	  fileno;
	off_t offset;

	BufFileTell(file, &fileno, &offset);
	return ((uint64) fileno << 32) | (uint64) offset;
}

static void
file_seek(BufFile *file, uint64 pos)
{
	if (BufFileSeek(file, (int) (pos >> 32), (off_t) (pos & 0xFFFFFFFF), SEEK_SET) != 0)
		ereport(ERROR, (errcode_for_file_access(),
						errmsg("could not seek in a temporary file of simhash_near_duplicates")));
}

static void
file_read(BufFile *file, void *data, size_t len)
{
	if (len > 0 && BufFileRead(file, data, len) != len)
		ereport(ERROR, (errcode_for_file_access(),
						errmsg("could not read a temporary file of simhash_near_duplicates")));
}

/* n - ceil(t n) + 1 within 0..n, with t a hair below the threshold (as the core). */
static uint32
prefix_length(uint32 n, double threshold)
{
	double p = (double) n - ceil((threshold - 1e-9) * (double) n) + 1;

	return p < 0 ? 0 : (p > n ? n : (uint32) p);
}

static void *
grow(void *array, size_t elem, uint64 *max)
{
	*max *= 2;
	return repalloc_huge(array, elem * *max);
}

/* Writes a new distinct set and returns its id. */
static uint32
new_set(NearDupCall *call, const uint64_t *hashes, size_t n)
{
	NearDupSpill *sp = call->spill;

	if (sp->nsets == sp->maxsets)
	{
		uint64 max = sp->maxsets;

		if (max >= PG_UINT32_MAX / 2)
			ereport(ERROR, (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
							errmsg("simhash_near_duplicates takes at most %u distinct texts",
								   PG_UINT32_MAX / 2)));
		sp->set_pos = grow(sp->set_pos, sizeof(uint64), &max);
		max = sp->maxsets;
		sp->set_len = grow(sp->set_len, sizeof(uint32), &max);
		sp->maxsets = (uint32) max;
	}
	sp->set_pos[sp->nsets] = file_tell(sp->sets);
	sp->set_len[sp->nsets] = (uint32) n;
	BufFileWrite(sp->sets, (void *) hashes, n * sizeof(uint64_t));
	sh_ndo_count(sp->order, hashes, n);
	sp->hashes += n;
	sp->prefix_bound += prefix_length((uint32) n, call->threshold);
	return sp->nsets++;
}

/* The set of these hashes: an earlier identical one, or a new one. */
static uint32
set_of(NearDupCall *call, const uint64_t *hashes, size_t n)
{
	NearDupSpill *sp = call->spill;
	DigestEntry	  probe, *found;
	bool		  exists;

	memset(&probe, 0, sizeof(probe));
	sh_ndo_digest(hashes, n, probe.digest);
	probe.n = (uint32) n;
	found = hash_search(sp->digests, &probe, HASH_ENTER, &exists);
	if (!exists)
		found->set = new_set(call, hashes, n);
	return found->set;
}

static void
add_key(NearDupSpill *sp, uint32 set, const char *key, uint32 len)
{
	if (sp->nrows == sp->maxrows)
	{
		uint64 max = sp->maxrows;

		sp->key_pos = grow(sp->key_pos, sizeof(uint64), &max);
		max = sp->maxrows;
		sp->key_len = grow(sp->key_len, sizeof(uint32), &max);
		max = sp->maxrows;
		sp->row_set = grow(sp->row_set, sizeof(uint32), &max);
		sp->maxrows = max;
	}
	sp->key_pos[sp->nrows] = file_tell(sp->keys);
	sp->key_len[sp->nrows] = len;
	sp->row_set[sp->nrows] = set;
	sp->nrows++;
	sp->key_bytes += len;
	BufFileWrite(sp->keys, (void *) key, len);
}

/*
 * Moves the call to disk: the sets and keys the core holds go to the files,
 * and the core is freed.
 */
void
nd_spill_begin(NearDupCall *call)
{
	MemoryContext old = MemoryContextSwitchTo(call->cxt);
	NearDupSpill *sp = palloc0(sizeof(NearDupSpill));
	HASHCTL		  ctl;
	sh_nd_stats	  stats;

	nd_parallel_begin(call);
	sp->sets = nd_spill_file(call, "sets");
	sp->keys = BufFileCreateTemp(false);
	sp->prefixes = nd_spill_file(call, "prefixes");
	sp->maxsets = 1024;
	sp->set_pos = palloc(sizeof(uint64) * sp->maxsets);
	sp->set_len = palloc(sizeof(uint32) * sp->maxsets);
	sp->maxrows = 1024;
	sp->key_pos = palloc(sizeof(uint64) * sp->maxrows);
	sp->key_len = palloc(sizeof(uint32) * sp->maxrows);
	sp->row_set = palloc(sizeof(uint32) * sp->maxrows);
	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = offsetof(DigestEntry, set);
	ctl.entrysize = sizeof(DigestEntry);
	ctl.hcxt = call->cxt;
	sp->digests = hash_create("simhash_near_duplicates digests", 1024, &ctl,
							  HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	call->spill = sp;
	SH_CHECK(sh_ndo_create(call->budget / 4, &sp->order), "simhash_near_duplicates");
	MemoryContextSwitchTo(old);

	sh_nd_get_stats(call->nd, &stats);
	for (uint32 s = 0; s < stats.sets; s++)
	{
		size_t			n;
		const uint64_t *h = sh_nd_set_hashes(call->nd, s, &n);

		(void) set_of(call, h, n);
		CHECK_FOR_INTERRUPTS();
	}
	for (uint32 r = 0; r < stats.rows; r++)
	{
		add_key(sp, sh_nd_set_of_row(call->nd, r), call->keys[r], call->keylen[r]);
		pfree(call->keys[r]);
	}
	sh_nd_free(call->nd);
	call->nd = NULL;
	call->key_bytes = 0;
}

void
nd_spill_add(NearDupCall *call, const uint64_t *hashes, size_t n, const char *key, uint32 keylen)
{
	add_key(call->spill, set_of(call, hashes, n), key, keylen);
}

const uint32 *
nd_spill_rows_of(NearDupCall *call, uint32 s, size_t *n)
{
	NearDupSpill *sp = call->spill;

	*n = sp->rows_at[s + 1] - sp->rows_at[s];
	return sp->rows + sp->rows_at[s];
}

const char *
nd_spill_key(NearDupCall *call, uint32 row, StringInfo buf, uint32 *len)
{
	NearDupSpill *sp = call->spill;

	*len = sp->key_len[row];
	resetStringInfo(buf);
	enlargeStringInfo(buf, (int) *len + 1);
	file_seek(sp->keys, sp->key_pos[row]);
	file_read(sp->keys, buf->data, *len);
	return buf->data;
}

void
nd_spill_release(NearDupCall *call)
{
	NearDupSpill *sp = call->spill;

	if (sp == NULL)
		return;
	sh_ndo_free(sp->order);
	sp->order = NULL;
	sh_ndb_free(sp->batch);
	sp->batch = NULL;
}

/* Reads set s back into *buf (grown as needed). */
static const uint64_t *
read_set(NearDupCall *call, uint32 s, uint64 **buf, size_t *cap)
{
	NearDupSpill *sp = call->spill;
	size_t		  n = sp->set_len[s];

	if (n > *cap)
	{
		*cap = Max(n, *cap * 2);
		if (*buf != NULL)
			pfree(*buf);
		*buf = MemoryContextAllocExtended(call->cxt, sizeof(uint64) * *cap, MCXT_ALLOC_HUGE);
	}
	file_seek(sp->sets, sp->set_pos[s]);
	file_read(sp->sets, *buf, n * sizeof(uint64));
	return *buf;
}

/* Reads set s's prefix entries back into *buf (grown as needed). */
static const sh_ndb_entry *
read_prefix(NearDupCall *call, uint32 s, sh_ndb_entry **buf, size_t *cap)
{
	NearDupSpill *sp = call->spill;
	size_t		  n = sp->prefix_len[s];

	if (n > *cap || *buf == NULL)
	{
		*cap = Max(n, Max(*cap * 2, 64));
		if (*buf != NULL)
			pfree(*buf);
		*buf = MemoryContextAllocExtended(call->cxt, sizeof(sh_ndb_entry) * *cap, MCXT_ALLOC_HUGE);
	}
	file_seek(sp->prefixes, sp->prefix_pos[s]);
	file_read(sp->prefixes, *buf, n * sizeof(sh_ndb_entry));
	return *buf;
}

/* The rows of each set, grouped (rows_at, rows). */
static void
group_rows(NearDupCall *call)
{
	NearDupSpill *sp = call->spill;
	uint32		 *fill;

	sp->rows_at = MemoryContextAllocZero(call->cxt, sizeof(uint32) * ((size_t) sp->nsets + 1));
	sp->rows =
		MemoryContextAllocExtended(call->cxt, sizeof(uint32) * Max(sp->nrows, 1), MCXT_ALLOC_HUGE);
	for (uint64 r = 0; r < sp->nrows; r++)
		sp->rows_at[sp->row_set[r] + 1]++;
	for (uint32 s = 0; s < sp->nsets; s++)
		sp->rows_at[s + 1] += sp->rows_at[s];
	fill = palloc(sizeof(uint32) * Max(sp->nsets, 1));
	memcpy(fill, sp->rows_at, sizeof(uint32) * sp->nsets);
	for (uint64 r = 0; r < sp->nrows; r++)
		sp->rows[fill[sp->row_set[r]]++] = (uint32) r;
	pfree(fill);
	pfree(sp->row_set);
	sp->row_set = NULL;
}

/* Writes every set's prefix entries to the file of its batch. */
static void
partition(NearDupCall *call, BufFile **files, uint64 *counts, uint32 nbatches)
{
	NearDupSpill *sp = call->spill;
	size_t		  cap = 64;
	sh_ndb_entry *ents = MemoryContextAlloc(call->cxt, sizeof(sh_ndb_entry) * cap);

	sp->prefix_pos =
		MemoryContextAllocExtended(call->cxt, sizeof(uint64) * Max(sp->nsets, 1), MCXT_ALLOC_HUGE);
	sp->prefix_len =
		MemoryContextAllocExtended(call->cxt, sizeof(uint32) * Max(sp->nsets, 1), MCXT_ALLOC_HUGE);
	sp->heads =
		MemoryContextAllocExtended(call->cxt,
								   sizeof(sh_ndb_entry) * Max((size_t) sp->nsets * sp->head_k, 1),
								   MCXT_ALLOC_HUGE);
	sp->head_len = MemoryContextAllocExtended(call->cxt, Max(sp->nsets, 1), MCXT_ALLOC_HUGE);
	file_seek(sp->sets, 0);
	for (uint32 s = 0; s < sp->nsets; s++)
	{
		size_t n = sp->set_len[s], m;

		if (n > sp->acap)
		{
			sp->acap = Max(n, sp->acap * 2);
			if (sp->abuf != NULL)
				pfree(sp->abuf);
			sp->abuf =
				MemoryContextAllocExtended(call->cxt, sizeof(uint64) * sp->acap, MCXT_ALLOC_HUGE);
		}
		file_read(sp->sets, sp->abuf, n * sizeof(uint64));
		if (n > cap)
		{
			cap = Max(n, cap * 2);
			pfree(ents);
			ents =
				MemoryContextAllocExtended(call->cxt, sizeof(sh_ndb_entry) * cap, MCXT_ALLOC_HUGE);
		}
		SH_CHECK(sh_ndo_prefix(sp->order, sp->abuf, (uint32) n, call->threshold, s, ents, &m),
				 "simhash_near_duplicates");
		sp->prefix_pos[s] = file_tell(sp->prefixes);
		sp->prefix_len[s] = (uint32) m;
		sp->head_len[s] = (uint8) Min(m, sp->head_k);
		if (m > 0)
		{
			memcpy(sp->heads + (size_t) s * sp->head_k, ents,
				   sizeof(sh_ndb_entry) * sp->head_len[s]);
			BufFileWrite(sp->prefixes, ents, m * sizeof(sh_ndb_entry));
		}
		for (size_t i = 0; i < m; i++)
		{
			uint32 b = sh_ndo_batch(ents[i].token, nbatches);

			BufFileWrite(files[b], &ents[i], sizeof(sh_ndb_entry));
			counts[b]++;
		}
		if ((s & 1023) == 0)
			CHECK_FOR_INTERRUPTS();
	}
	pfree(ents);
}

/* Joins batch b: its candidates, verified, each pair returned here if b owns it. */
void
nd_spill_join_batch(NearDupCall *call, BufFile *file, uint64 count, uint32 b, uint32 nbatches)
{
	NearDupSpill *sp = call->spill;
	sh_ndb_entry *ents = palloc(sizeof(sh_ndb_entry) * ENTRY_CHUNK);
	uint32		 *pairs = palloc(sizeof(uint32) * 2 * PAIR_CHUNK);
	uint32		  loaded = PG_UINT32_MAX, loaded_prefix = PG_UINT32_MAX;
	int			  done = 0;

	SH_CHECK(sh_ndb_create(call->threshold, &sp->batch), "simhash_near_duplicates");
	file_seek(file, 0);
	for (uint64 read = 0; read < count;)
	{
		size_t n = (size_t) Min(count - read, ENTRY_CHUNK);

		file_read(file, ents, n * sizeof(sh_ndb_entry));
		SH_CHECK(sh_ndb_add(sp->batch, ents, n), "simhash_near_duplicates");
		read += n;
	}
	pfree(ents);
	for (;;)
	{
		size_t	  n;
		sh_status st =
			sh_ndb_next(sp->batch, pairs, PAIR_CHUNK, &n, &done, simhash_interrupt_pending, NULL);

		if (st == SH_ERR_INTERRUPTED)
		{
			CHECK_FOR_INTERRUPTS();
			continue;
		}
		SH_CHECK(st, "simhash_near_duplicates");
		for (size_t i = 0; i < n; i++)
		{
			uint32				x = pairs[2 * i], y = pairs[2 * i + 1];
			const sh_ndb_entry *px;
			uint32				owner;
			double				j;

			/*
			 * The owner from the prefixes alone, most often from their heads
			 * in memory: a pair met in another batch costs little.
			 */
			owner = sh_ndo_owner_head(sp->heads + (size_t) x * sp->head_k, sp->head_len[x],
									  sp->prefix_len[x] <= sp->head_k,
									  sp->heads + (size_t) y * sp->head_k, sp->head_len[y],
									  sp->prefix_len[y] <= sp->head_k, nbatches);
			if (owner == SH_NDO_UNKNOWN)
			{
				if (y != loaded_prefix)
				{
					read_prefix(call, y, &sp->bpre, &sp->bpcap);
					loaded_prefix = y;
				}
				px = read_prefix(call, x, &sp->apre, &sp->apcap);
				owner = sh_ndo_owner(px, sp->prefix_len[x], sp->bpre, sp->prefix_len[y], nbatches);
			}
			if (owner != b)
				continue; /* another batch reports it, or it cannot reach the threshold */
			if (y != loaded)
			{
				read_set(call, y, &sp->bbuf, &sp->bcap);
				loaded = y;
			}
			read_set(call, x, &sp->abuf, &sp->acap);
			j = sh_ndo_jaccard(sp->abuf, sp->set_len[x], sp->bbuf, sp->set_len[y]);
			call->candidates++;
			if (j >= call->threshold)
			{
				call->similar++;
				nd_pair(call, x, y, j);
			}
		}
		CHECK_FOR_INTERRUPTS();
		if (done)
			break;
	}
	sh_ndb_free(sp->batch);
	sp->batch = NULL;
	pfree(pairs);
}

/* The join on disk, once every row is read. */
void
nd_spill_join(NearDupCall *call)
{
	NearDupSpill *sp = call->spill;
	size_t		  held, room;
	double		  need;
	uint32		  nbatches;
	int			  nworkers;
	BufFile		**files;
	uint64		 *counts;
	MemoryContext old;

	group_rows(call);
	nd_check_result_size(call, sp->nsets);
	/* the first prefix entries of every set stay in memory, within a quarter of work_mem */
	sp->head_k = (uint32) Min(HEAD_MAX, call->budget / 4 /
											((size_t) Max(sp->nsets, 1) * sizeof(sh_ndb_entry)));
	held = (size_t) sp->nsets * (12 + 12 + 4 + 48 + 1 + sp->head_k * sizeof(sh_ndb_entry)) +
		   (size_t) sp->nrows * (8 + 4 + 4) + sh_ndo_bytes(sp->order);
	room = call->budget > held + MIN_BATCH_BYTES ? call->budget - held : MIN_BATCH_BYTES;
	nbatches =
		(uint32) Min((double) MAX_BATCHES, Max(1.0, ceil((double) sp->prefix_bound *
														 SH_NDB_BYTES_PER_ENTRY / (double) room)));
	/* enough batches for every participant to take a few */
	nworkers = nd_parallel_workers(call, sp->hashes * sizeof(uint64));
	if (nworkers > 0)
		nbatches = Max(nbatches, (uint32) Min(MAX_BATCHES, 2 * (nworkers + 1)));
	need = (double) sh_nd_memory_needed(sp->hashes, sp->nsets, sp->nrows) + (double) sp->key_bytes +
		   (double) sp->nrows * 56;
	ereport(NOTICE, (errmsg("simhash_near_duplicates: " UINT64_FORMAT
							" rows, %u distinct shingle sets, " UINT64_FORMAT
							" shingles do not fit in work_mem (%d kB); joining on disk in "
							"%u batches%s",
							sp->nrows, sp->nsets, sp->hashes, work_mem, nbatches,
							nworkers > 0 ? psprintf(" with %d parallel workers", nworkers) : ""),
					 errhint("With work_mem at %.0f kB or more the whole call joins in memory.",
							 ceil(need / 1024.0))));

	for (uint32 s = 0; s < sp->nsets; s++)
		if (sp->rows_at[s + 1] - sp->rows_at[s] > 1)
			nd_emit_rows(call, s, s, 1.0);

	old = MemoryContextSwitchTo(call->cxt);
	files = palloc(sizeof(BufFile *) * nbatches);
	counts = palloc0(sizeof(uint64) * nbatches);
	for (uint32 b = 0; b < nbatches; b++)
		files[b] = nd_spill_file(call, psprintf("b%u", b));
	MemoryContextSwitchTo(old);
	partition(call, files, counts, nbatches);
	/* with workers every batch is joined there, else here */
	for (uint32 b = nd_parallel_join(call, nworkers, files, counts, nbatches); b < nbatches; b++)
	{
		nd_spill_join_batch(call, files[b], counts[b], b, nbatches);
		BufFileClose(files[b]);
		if (simhash_near_duplicates_progress > 0 && b + 1 < nbatches)
			ereport(NOTICE,
					(errmsg("simhash_near_duplicates: %u of %u batches joined, " UINT64_FORMAT
							" candidates verified",
							b + 1, nbatches, call->candidates)));
	}
	BufFileClose(sp->sets);
	BufFileClose(sp->keys);
	BufFileClose(sp->prefixes);
	sp->sets = sp->keys = sp->prefixes = NULL;
}

/*
 * For parallel workers (near_duplicates_parallel.c): the files of sets and
 * prefix entries are complete, and what a batch's join needs in memory (the
 * positions, lengths and heads of every set) goes to the file "meta".
 */
void
nd_spill_export(NearDupCall *call, uint32 *nsets, uint32 *head_k)
{
	NearDupSpill *sp = call->spill;
	BufFile		 *meta = nd_spill_file(call, "meta");
	size_t		  n = sp->nsets;

	BufFileExportFileSet(sp->sets);
	BufFileExportFileSet(sp->prefixes);
	BufFileWrite(meta, sp->set_pos, sizeof(uint64) * n);
	BufFileWrite(meta, sp->set_len, sizeof(uint32) * n);
	BufFileWrite(meta, sp->prefix_pos, sizeof(uint64) * n);
	BufFileWrite(meta, sp->prefix_len, sizeof(uint32) * n);
	BufFileWrite(meta, sp->head_len, n);
	BufFileWrite(meta, sp->heads, sizeof(sh_ndb_entry) * n * sp->head_k);
	BufFileClose(meta);
	*nsets = sp->nsets;
	*head_k = sp->head_k;
}

static void *
read_array(NearDupCall *call, BufFile *file, size_t bytes)
{
	void *a = MemoryContextAllocExtended(call->cxt, Max(bytes, 1), MCXT_ALLOC_HUGE);

	file_read(file, a, bytes);
	return a;
}

/* In a worker: what nd_spill_export wrote, read back; then batches can be joined. */
void
nd_spill_import(NearDupCall *call, uint32 nsets, uint32 head_k)
{
	NearDupSpill *sp = MemoryContextAllocZero(call->cxt, sizeof(NearDupSpill));
	BufFile		 *meta = BufFileOpenFileSet(call->fileset, "meta", O_RDONLY, false);
	size_t		  n = nsets;

	sp->nsets = sp->maxsets = nsets;
	sp->head_k = head_k;
	sp->set_pos = read_array(call, meta, sizeof(uint64) * n);
	sp->set_len = read_array(call, meta, sizeof(uint32) * n);
	sp->prefix_pos = read_array(call, meta, sizeof(uint64) * n);
	sp->prefix_len = read_array(call, meta, sizeof(uint32) * n);
	sp->head_len = read_array(call, meta, n);
	sp->heads = read_array(call, meta, sizeof(sh_ndb_entry) * n * head_k);
	BufFileClose(meta);
	sp->sets = BufFileOpenFileSet(call->fileset, "sets", O_RDONLY, false);
	sp->prefixes = BufFileOpenFileSet(call->fileset, "prefixes", O_RDONLY, false);
	call->spill = sp;
}

/* In a worker, at its end: the files nd_spill_import opened. */
void
nd_spill_import_end(NearDupCall *call)
{
	NearDupSpill *sp = call->spill;

	BufFileClose(sp->sets);
	BufFileClose(sp->prefixes);
	sp->sets = sp->prefixes = NULL;
	nd_spill_release(call);
}
