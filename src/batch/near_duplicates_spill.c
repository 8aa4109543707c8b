/*
 * near_duplicates_spill.c — simhash_near_duplicates beyond work_mem: the
 * verified join by chunks of sets over temporary files, as a block nested
 * loop join runs (the core's side is neardup_batch.h).
 *
 * While the rows are read, each distinct shingle set is written once to a
 * file of sets (identical sets are found by a 128-bit digest), each key to a
 * file of keys, and the sets' hashes are counted in a sketch of a quarter of
 * work_mem that fixes the global token order.  Then the sets are written
 * again, each with its prefix, to one file in join order (ascending size),
 * and the sketch and digests are freed.  That file is cut into chunks that
 * fit in what work_mem leaves; each chunk is indexed in memory, joined with
 * itself, and probed by the later sets, read sequentially until they are too
 * large to reach it.  Every pair is found once, in the chunk of its earlier
 * set, with the in-memory join's filters.
 *
 * Memory: besides the chunk, 16 bytes per row (where its key is, and which
 * rows each set has) and 4 per distinct set; while reading, 12 more per set
 * and the digests (about 60 per set).  One text whose join would need more
 * than work_mem and 32 MB raises 53200.  The files count against
 * temp_file_limit.
 */
#include "simhash.h"

#include <math.h>

#include "miscadmin.h"
#include "storage/buffile.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"

#include "near_duplicates.h"
#include "neardup_batch.h"

#define MIN_CHUNK_BYTES ((size_t) 32 << 10)
/* one text may take this much beyond work_mem before it is refused */
#define SET_SLACK_BYTES ((size_t) 32 << 20)

typedef struct DigestEntry
{
	uint64 digest[2];
	uint32 n; /* the key: digest and size */
	uint32 set;
} DigestEntry;

typedef struct NearDupSpill
{
	BufFile *sets;	  /* the distinct sets' hashes, one after another */
	BufFile *keys;	  /* the keys, one after another */
	BufFile *joined;  /* the sets with their prefixes, in join order */
	uint64	*set_pos; /* by set: where it starts in sets (until joined is written) */
	uint32	*set_len; /* by set: its hashes (likewise) */
	uint32	 nsets, maxsets;
	uint64	*key_pos; /* by row: where its key starts in keys */
	uint32	*key_len; /* by row */
	uint32	*row_set; /* by row: its set (until grouped) */
	uint64	 nrows, maxrows;
	uint64	 key_bytes;
	HTAB	*digests;
	sh_ndo	*order;
	sh_ndc	*chunk;
	uint64	 hashes;  /* of the distinct sets */
	uint32	 max_len; /* the largest set */
	uint32	*rows_at; /* by set: start in rows (one more at the end) */
	uint32	*rows;	  /* row ids grouped by set */
	uint64	*hbuf;	  /* a set's hashes read back */
	uint64	*tokens;  /* its prefix tokens */
	uint32	*pos;	  /* and their positions */
	size_t	 cap;	  /* of the three buffers */
	size_t	 room;	  /* bytes a chunk may take */
} NearDupSpill;

/* A set in the file in join order: this header, m tokens, m positions, n hashes. */
typedef struct JoinedSet
{
	uint32 set;
	uint32 n;
	uint32 m;
} JoinedSet;

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
	sp->max_len = Max(sp->max_len, (uint32) n);
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

	sp->sets = BufFileCreateTemp(false);
	sp->keys = BufFileCreateTemp(false);
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
	sh_ndc_free(sp->chunk);
	sp->chunk = NULL;
}

/* Makes the set buffers hold a set of n hashes (never more than the largest set). */
static void
reserve(NearDupCall *call, size_t n)
{
	NearDupSpill *sp = call->spill;
	size_t		  cap;

	if (n <= sp->cap && sp->hbuf != NULL)
		return;
	cap = Max(n, Min(Max(sp->cap * 2, 1024), (size_t) sp->max_len));
	if (sp->hbuf != NULL)
	{
		pfree(sp->hbuf);
		pfree(sp->tokens);
		pfree(sp->pos);
	}
	sp->hbuf = MemoryContextAllocExtended(call->cxt, sizeof(uint64) * Max(cap, 1), MCXT_ALLOC_HUGE);
	sp->tokens =
		MemoryContextAllocExtended(call->cxt, sizeof(uint64) * Max(cap, 1), MCXT_ALLOC_HUGE);
	sp->pos = MemoryContextAllocExtended(call->cxt, sizeof(uint32) * Max(cap, 1), MCXT_ALLOC_HUGE);
	sp->cap = cap;
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

/* Bytes one set of n hashes takes in a chunk and in the buffers, at most. */
static double
set_bytes(uint32 n)
{
	return (double) sh_ndc_set_bytes(n, n) + (double) n * 20;
}

/*
 * One text whose join needs more than work_mem and the slack the chunks
 * allow is refused before the join starts, naming its row.
 */
static void
check_largest(NearDupCall *call)
{
	NearDupSpill *sp = call->spill;
	double		  need = set_bytes(sp->max_len);
	uint32		  len;
	const char	 *key;

	if (need <= (double) call->budget + (double) SET_SLACK_BYTES)
		return;
	for (uint32 s = 0; s < sp->nsets; s++)
		if (sp->set_len[s] == sp->max_len)
		{
			key = nd_spill_key(call, sp->rows[sp->rows_at[s]], &call->key_a, &len);
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("the text of key \"%.*s\" has %u distinct shingles, more than "
							"simhash_near_duplicates joins within work_mem (%d kB)",
							(int) Min(len, 64), key, sp->max_len, work_mem),
					 errhint("Set work_mem to at least %.0f kB for this call, or leave that row "
							 "out.",
							 nd_work_mem_kb(need - (double) SET_SLACK_BYTES))));
		}
}

static int
join_order_cmp(const void *a, const void *b, void *arg)
{
	const uint32 *len = arg;
	uint32		  x = *(const uint32 *) a, y = *(const uint32 *) b;

	if (len[x] != len[y])
		return len[x] < len[y] ? -1 : 1;
	return (x > y) - (x < y);
}

/*
 * Writes every set, with its prefix, to the file in join order (ascending
 * size, then id); then frees what only the reading needed.
 */
static void
write_joined(NearDupCall *call)
{
	NearDupSpill *sp = call->spill;
	uint32		 *ord;
	MemoryContext old = MemoryContextSwitchTo(call->cxt);

	ord = palloc_extended(sizeof(uint32) * Max(sp->nsets, 1), MCXT_ALLOC_HUGE);
	sp->joined = nd_spill_file(call, "joined");
	MemoryContextSwitchTo(old);
	for (uint32 s = 0; s < sp->nsets; s++)
		ord[s] = s;
	qsort_arg(ord, sp->nsets, sizeof(uint32), join_order_cmp, sp->set_len);
	for (uint32 i = 0; i < sp->nsets; i++)
	{
		uint32	  s = ord[i];
		JoinedSet h;
		size_t	  m;

		h.set = s;
		h.n = sp->set_len[s];
		reserve(call, h.n);
		file_seek(sp->sets, sp->set_pos[s]);
		file_read(sp->sets, sp->hbuf, sizeof(uint64) * h.n);
		SH_CHECK(sh_ndo_prefix(sp->order, sp->hbuf, h.n, call->threshold, sp->tokens, sp->pos, &m),
				 "simhash_near_duplicates");
		h.m = (uint32) m;
		BufFileWrite(sp->joined, &h, sizeof(h));
		BufFileWrite(sp->joined, sp->tokens, sizeof(uint64) * m);
		BufFileWrite(sp->joined, sp->pos, sizeof(uint32) * m);
		BufFileWrite(sp->joined, sp->hbuf, sizeof(uint64) * h.n);
		if ((i & 1023) == 0)
			CHECK_FOR_INTERRUPTS();
	}
	pfree(ord);
	BufFileClose(sp->sets);
	sp->sets = NULL;
	pfree(sp->set_pos);
	pfree(sp->set_len);
	sp->set_pos = NULL;
	sp->set_len = NULL;
	sh_ndo_free(sp->order);
	sp->order = NULL;
	hash_destroy(sp->digests);
	sp->digests = NULL;
}

/* Reads the next set of the file in join order into *h and the buffers; false at its end. */
static bool
read_joined(NearDupCall *call, JoinedSet *h)
{
	NearDupSpill *sp = call->spill;
	size_t		  got = BufFileRead(sp->joined, h, sizeof(JoinedSet));

	if (got == 0)
		return false;
	if (got != sizeof(JoinedSet))
		ereport(ERROR, (errcode_for_file_access(),
						errmsg("could not read a temporary file of simhash_near_duplicates")));
	reserve(call, h->n);
	file_read(sp->joined, sp->tokens, sizeof(uint64) * h->m);
	file_read(sp->joined, sp->pos, sizeof(uint32) * h->m);
	file_read(sp->joined, sp->hbuf, sizeof(uint64) * h->n);
	return true;
}

static void
emit_pairs(NearDupCall *call, const sh_nd_pair *pairs, size_t n)
{
	for (size_t i = 0; i < n; i++)
	{
		call->similar++;
		nd_pair(call, pairs[i].a, pairs[i].b, pairs[i].similarity);
	}
}

/*
 * Loads the chunk that starts at offset `start` of the file in join order:
 * the sets from there that fit in sp->room (at least one), indexed.  Returns
 * where the next chunk starts, or PG_UINT64_MAX after the last; *placed gets
 * the chunk's sets.
 */
static uint64
chunk_load(NearDupCall *call, uint64 start, uint32 *placed)
{
	NearDupSpill *sp = call->spill;
	uint64		  next = PG_UINT64_MAX;
	JoinedSet	  h;
	double		  bytes = 0;

	if (sp->chunk == NULL)
		SH_CHECK(sh_ndc_create(call->threshold, &sp->chunk), "simhash_near_duplicates");
	sh_ndc_reset(sp->chunk);
	file_seek(sp->joined, start);
	for (;;)
	{
		uint64 at = file_tell(sp->joined);
		double need;

		if (!read_joined(call, &h))
			break;
		need = (double) sh_ndc_set_bytes(h.n, h.m);
		if (sh_ndc_sets(sp->chunk) > 0 && bytes + need > (double) sp->room)
		{
			next = at; /* the first set after the chunk */
			break;
		}
		SH_CHECK(sh_ndc_add(sp->chunk, h.set, sp->hbuf, h.n, sp->tokens, sp->pos, h.m),
				 "simhash_near_duplicates");
		bytes += need;
	}
	SH_CHECK(sh_ndc_build(sp->chunk), "simhash_near_duplicates");
	*placed = sh_ndc_sets(sp->chunk);
	return next;
}

/* The loaded chunk joined with itself. */
static void
chunk_own(NearDupCall *call)
{
	NearDupSpill *sp = call->spill;
	uint32		  nlocal = sh_ndc_sets(sp->chunk);

	for (uint32 l = 0; l < nlocal; l++)
	{
		const sh_nd_pair *pairs;
		size_t			  n;

		SH_CHECK(sh_ndc_probe_own(sp->chunk, l, &pairs, &n), "simhash_near_duplicates");
		emit_pairs(call, pairs, n);
		if ((l & 255) == 0)
			CHECK_FOR_INTERRUPTS();
	}
}

/*
 * The loaded chunk probed by at most `count` sets of the file from offset
 * `from` (a set's start after the chunk), while they may reach one of its
 * sets.
 */
static void
chunk_probe(NearDupCall *call, uint64 from, uint32 count)
{
	NearDupSpill *sp = call->spill;
	JoinedSet	  h;
	bool		  have;

	file_seek(sp->joined, from);
	have = count > 0 && read_joined(call, &h);
	for (uint32 probed = 0; have && sh_ndc_reaches(sp->chunk, h.n);)
	{
		size_t ncand;

		SH_CHECK(sh_ndc_probe(sp->chunk, h.n, sp->tokens, sp->pos, h.m, &ncand),
				 "simhash_near_duplicates");
		if (ncand > 0)
		{
			const sh_nd_pair *pairs;
			size_t			  n;

			SH_CHECK(sh_ndc_verify(sp->chunk, h.set, sp->hbuf, h.n, &pairs, &n),
					 "simhash_near_duplicates");
			emit_pairs(call, pairs, n);
		}
		if ((probed & 255) == 0)
			CHECK_FOR_INTERRUPTS();
		have = ++probed < count && read_joined(call, &h);
	}
}

/*
 * Joins the chunk that starts at offset `start` of the file in join order:
 * it takes the sets from there that fit in sp->room (at least one), is joined
 * with itself, then probed by the sets after it while they may reach one of
 * its sets.  Each pair goes to nd_pair.  Returns where the next chunk starts,
 * or PG_UINT64_MAX after the last; *placed gets the chunk's sets.  Chunks are
 * independent: each needs only the file and its start (and parts of one, see
 * nd_spill_join_part).
 */
uint64
nd_spill_join_chunk(NearDupCall *call, uint64 start, uint32 *placed)
{
	uint64 next = chunk_load(call, start, placed);

	chunk_own(call);
	if (next != PG_UINT64_MAX)
		chunk_probe(call, next, PG_UINT32_MAX);
	call->candidates = sh_ndc_candidates(call->spill->chunk);
	return next;
}

/* Every chunk, one after another; returns their number. */
static uint32
join_chunks(NearDupCall *call)
{
	NearDupSpill *sp = call->spill;
	uint64		  start = 0;
	uint32		  placed = 0, nchunks = 0;

	while (start != PG_UINT64_MAX)
	{
		uint32 in_chunk;

		start = nd_spill_join_chunk(call, start, &in_chunk);
		placed += in_chunk;
		nchunks++;
		if (simhash_near_duplicates_progress > 0 && start != PG_UINT64_MAX)
			ereport(NOTICE, (errmsg("simhash_near_duplicates: chunk %u joined, %u of %u "
									"sets, " UINT64_FORMAT " candidates verified",
									nchunks, placed, sp->nsets, call->candidates)));
	}
	sh_ndc_free(sp->chunk);
	sp->chunk = NULL;
	return nchunks;
}

/* The join on disk, once every row is read. */
void
nd_spill_join(NearDupCall *call)
{
	NearDupSpill *sp = call->spill;
	double		  held, need;
	size_t		  room;
	uint32		  nchunks;

	group_rows(call);
	nd_check_result_size(call, sp->nsets);
	check_largest(call);
	write_joined(call);
	/* what stays besides the chunk: the rows of each set, the keys' places, the buffers */
	held = (double) sp->nsets * 4 + (double) sp->nrows * (4 + 8 + 4) + (double) sp->cap * 20;
	room = (double) call->budget > held + MIN_CHUNK_BYTES ? call->budget - (size_t) held
														  : MIN_CHUNK_BYTES;
	sp->room = room;
	need = (double) sh_nd_memory_needed(sp->hashes, sp->nsets, sp->nrows) + (double) sp->key_bytes +
		   (double) sp->nrows * 56;
	ereport(NOTICE, (errmsg("simhash_near_duplicates: " UINT64_FORMAT
							" rows, %u distinct shingle sets, " UINT64_FORMAT
							" shingles do not fit in work_mem (%d kB); joining on disk in "
							"chunks of %zu kB",
							sp->nrows, sp->nsets, sp->hashes, work_mem, room / 1024),
					 errhint("With work_mem at %.0f kB or more the whole call joins in memory.",
							 nd_work_mem_kb(need))));

	for (uint32 s = 0; s < sp->nsets; s++)
		if (sp->rows_at[s + 1] - sp->rows_at[s] > 1)
			nd_emit_rows(call, s, s, 1.0);

	nchunks = nd_parallel_join(call);
	if (nchunks == 0)
		nchunks = join_chunks(call);
	elog(DEBUG1, "simhash_near_duplicates: %u chunks", nchunks);
	BufFileClose(sp->keys);
	BufFileClose(sp->joined);
	sp->keys = sp->joined = NULL;
}

/*
 * For parallel workers (near_duplicates_parallel.c): the file in join order
 * is complete and may be opened by other processes now; its size and what a
 * worker needs to join parts of it.
 */
void
nd_spill_export(NearDupCall *call, NdExport *out)
{
	NearDupSpill *sp = call->spill;

	BufFileExportFileSet(sp->joined);
	out->bytes = BufFileSize(sp->joined);
	out->room = sp->room;
	out->max_len = sp->max_len;
}

/*
 * The work split into parts for `participants` processes: every chunk (as
 * nd_spill_join_chunk cuts them), and its probing sets cut into parts of
 * about equal numbers of sets that may reach it (its largest set over the
 * threshold, the length filter).  The first part of a chunk also joins it
 * with itself; the last runs to the end of the file, so where the cuts fall
 * changes the balance only, never the pairs.  One pass over the headers.
 */
NdPart *
nd_spill_plan_parts(NearDupCall *call, int participants, uint32 *nchunks, uint32 *nparts)
{
	NearDupSpill *sp = call->spill;
	uint64		 *off =
		MemoryContextAllocExtended(call->cxt, sizeof(uint64) * Max(sp->nsets, 1), MCXT_ALLOC_HUGE);
	uint32 *len =
		MemoryContextAllocExtended(call->cxt, sizeof(uint32) * Max(sp->nsets, 1), MCXT_ALLOC_HUGE);
	uint32 *first = palloc(sizeof(uint32) * 64), *reach;
	uint32	maxchunks = 64, k = 0, total = 0, target, np = 0, maxparts;
	double	bytes = 0;
	NdPart *parts;

	file_seek(sp->joined, 0);
	for (uint32 i = 0; i < sp->nsets; i++)
	{
		JoinedSet h;
		double	  need;

		off[i] = file_tell(sp->joined);
		file_read(sp->joined, &h, sizeof(h));
		if (BufFileSeek(sp->joined, 0, (off_t) h.m * 12 + (off_t) h.n * 8, SEEK_CUR) != 0)
			ereport(ERROR,
					(errcode_for_file_access(),
					 errmsg("could not seek in a temporary file of simhash_near_duplicates")));
		len[i] = h.n;
		need = (double) sh_ndc_set_bytes(h.n, h.m);
		if (i == 0 || bytes + need > (double) sp->room)
		{
			if (k == maxchunks)
			{
				maxchunks *= 2;
				first = repalloc_huge(first, sizeof(uint32) * maxchunks);
			}
			first[k++] = i;
			bytes = 0;
		}
		bytes += need;
		if ((i & 4095) == 0)
			CHECK_FOR_INTERRUPTS();
	}
	/* by chunk: the end of the sets that may reach it */
	reach = palloc(sizeof(uint32) * Max(k, 1));
	for (uint32 c = 0; c < k; c++)
	{
		uint32 end = c + 1 < k ? first[c + 1] : sp->nsets;
		double limit = (double) len[end - 1] / (call->threshold - 1e-9) + 1;
		uint32 lo = end, hi = sp->nsets;

		while (lo < hi)
		{
			uint32 mid = lo + (hi - lo) / 2;

			if ((double) len[mid] > limit)
				hi = mid;
			else
				lo = mid + 1;
		}
		reach[c] = lo;
		total += lo - end;
	}
	target = Max(total / (uint32) Max(4 * participants, 1), 1);
	maxparts = k + total / target + 1;
	parts = palloc(sizeof(NdPart) * maxparts);
	for (uint32 c = 0; c < k; c++)
	{
		uint32 end = c + 1 < k ? first[c + 1] : sp->nsets;
		uint32 from = end;

		for (;;)
		{
			bool last = end >= sp->nsets || from + target >= reach[c];

			Assert(np < maxparts);
			parts[np].chunk = off[first[c]];
			parts[np].next = end < sp->nsets ? off[end] : PG_UINT64_MAX;
			parts[np].from = from < sp->nsets ? off[from] : PG_UINT64_MAX;
			parts[np].count = end >= sp->nsets ? 0 : last ? PG_UINT32_MAX : target;
			parts[np].own = from == end;
			np++;
			if (last)
				break;
			from += target;
		}
	}
	pfree(off);
	pfree(len);
	pfree(first);
	pfree(reach);
	*nchunks = k;
	*nparts = np;
	return parts;
}

/* In a worker: the file in join order, opened; then parts can be joined. */
void
nd_spill_import(NearDupCall *call, const NdExport *in)
{
	NearDupSpill *sp = MemoryContextAllocZero(call->cxt, sizeof(NearDupSpill));

	sp->room = in->room;
	sp->max_len = in->max_len;
	sp->joined = BufFileOpenFileSet(call->fileset, "joined", O_RDONLY, false);
	call->spill = sp;
}

/* In a worker, at its end. */
void
nd_spill_import_end(NearDupCall *call)
{
	NearDupSpill *sp = call->spill;

	BufFileClose(sp->joined);
	sp->joined = NULL;
	nd_spill_release(call);
}

/* Joins one part (nd_spill_plan_parts); its pairs go to nd_pair. */
void
nd_spill_join_part(NearDupCall *call, const NdPart *part)
{
	uint32 placed;

	/* the plan cut the chunks as chunk_load does, or the parts would overlap */
	if (chunk_load(call, part->chunk, &placed) != part->next)
		elog(ERROR, "simhash_near_duplicates: a parallel part does not match its chunk");
	if (part->own)
		chunk_own(call);
	if (part->count > 0)
		chunk_probe(call, part->from, part->count);
	call->candidates = sh_ndc_candidates(call->spill->chunk);
}
