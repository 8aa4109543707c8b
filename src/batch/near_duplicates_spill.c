/*
 * near_duplicates_spill.c — simhash_near_duplicates beyond work_mem: the
 * verified join by chunks of sets over temporary files, as a block nested
 * loop join runs (the core's side is neardup_batch.h).
 *
 * While the rows are read, each row's shingle set goes to a file of sets (a
 * set the in-memory join already held, once), its hashes are counted in a
 * sketch of a quarter of work_mem that fixes the global token order, and a
 * tuple (size, 128-bit digest of the set, where the set is, key) goes to a
 * tuplesort, which keeps a quarter of work_mem and spills the rest.  Sorted,
 * those tuples bring identical sets together in join order (ascending size):
 * each distinct set is then written once, with its prefix and the keys of
 * its rows, to one file in join order.  That file is cut into chunks that
 * fit in what work_mem leaves; each chunk is indexed in memory, joined with
 * itself, and probed by the later sets, read sequentially until they are too
 * large to reach it.  Every pair is found once, in the chunk of its earlier
 * set, with the in-memory join's filters, and its rows' keys are at hand in
 * the chunk and in the probing set's record.
 *
 * Memory: the sketch and the sort while reading, then the chunk; nothing
 * grows with the rows or sets.  One text whose join would need more than
 * work_mem and 32 MB raises 53200.  The files count against temp_file_limit.
 */
#include "simhash.h"

#include <math.h>

#include "catalog/pg_operator_d.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "storage/buffile.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/tuplesort.h"

#include "near_duplicates.h"
#include "neardup_batch.h"

#define MIN_CHUNK_BYTES ((size_t) 32 << 10)
/* one text may take this much beyond work_mem before it is refused */
#define SET_SLACK_BYTES ((size_t) 32 << 20)
#define MAX_KEY_SHOWN	64
#define SEGMENT_BYTES	((off_t) 1 << 30) /* a BufFile's segment (buffile.c) */
#define EMIT_POLL		1024
#define JOINED_NAME		"joined" /* the file in join order, in the call's FileSet */

/* The columns of a row's tuple in the sort. */
enum
{
	COL_SIZE = 1,
	COL_DIGEST0,
	COL_DIGEST1,
	COL_SET_POS,
	COL_KEY,
	NCOLS = COL_KEY
};

typedef struct NearDupSpill
{
	BufFile		   *sets;	/* the rows' sets' hashes, one after another */
	BufFile		   *joined; /* the distinct sets with prefixes and keys, in join order */
	Tuplesortstate *sort;	/* a tuple per row, to be sorted by (size, digest) */
	TupleDesc		desc;
	TupleTableSlot *in, *out;
	sh_ndo		   *order;
	sh_ndc		   *chunk;
	uint64			nrows;
	uint64			key_bytes;					/* of the rows' keys */
	uint32			nsets;						/* distinct sets (once joined is written) */
	uint64			hashes;						/* of the distinct sets (likewise) */
	uint32			max_len;					/* the largest set */
	char			max_key[MAX_KEY_SHOWN + 1]; /* its row's key (the start of it) */
	uint64		   *hbuf;						/* a set's hashes read back */
	uint64		   *tokens;						/* its prefix tokens */
	uint32		   *pos;						/* and their positions */
	size_t			cap;						/* of the three buffers */
	StringInfoData	keys;	 /* the keys of that set's rows: (uint32 length, bytes) each */
	StringInfoData	ckeys;	 /* the keys of the chunk's sets, one set after another */
	uint32		   *ckey_at; /* by set of the chunk: start in ckeys (one more at the end) */
	uint32		   *ckey_n;	 /* by set of the chunk: its rows */
	uint32			ckey_cap;
	uint32			first; /* the chunk's first set id */
	size_t			room;  /* bytes a chunk may take */
} NearDupSpill;

/*
 * A set in the file in join order: this header, m prefix tokens, m
 * positions, n hashes, then key_bytes of keys of its rows.
 */
typedef struct JoinedSet
{
	uint32 set;
	uint32 n;
	uint32 m;
	uint32 nrows;
	uint32 key_bytes;
} JoinedSet;

static uint64
file_tell(BufFile *file)
{
	int	  fileno;
	off_t offset;

	BufFileTell(file, &fileno, &offset);
	/* the end of a full segment is the start of the next: one place, one value */
	if (offset == SEGMENT_BYTES)
	{
		fileno++;
		offset = 0;
	}
	return ((uint64) fileno << 32) | (uint64) offset;
}

static void
file_seek(BufFile *file, uint64 pos)
{
	if (BufFileSeek(file, (int) (pos >> 32), (off_t) (pos & 0xFFFFFFFF), SEEK_SET) != 0)
		ereport(ERROR, (errcode_for_file_access(),
						errmsg("could not seek in a temporary file of simhash_near_duplicates")));
}

/* Moves len bytes on from where the file is. */
static void
file_skip(BufFile *file, off_t len)
{
	if (BufFileSeek(file, 0, len, SEEK_CUR) != 0)
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

/* Sorts a row: its set (n hashes, at pos in the file of sets) and its key. */
static void
sort_row(NearDupCall *call, const uint64_t *hashes, size_t n, uint64 pos, const char *key,
		 uint32 keylen)
{
	NearDupSpill   *sp = call->spill;
	TupleTableSlot *slot = sp->in;
	uint64_t		digest[2];
	text		   *k = cstring_to_text_with_len(key, (int) keylen);

	if (n > PG_INT32_MAX)
		ereport(ERROR, (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
						errmsg("a text of simhash_near_duplicates has more than %d shingles",
							   PG_INT32_MAX)));
	sh_ndo_digest(hashes, n, digest);
	ExecClearTuple(slot);
	slot->tts_values[COL_SIZE - 1] = Int32GetDatum((int32) n);
	slot->tts_values[COL_DIGEST0 - 1] = Int64GetDatum((int64) digest[0]);
	slot->tts_values[COL_DIGEST1 - 1] = Int64GetDatum((int64) digest[1]);
	slot->tts_values[COL_SET_POS - 1] = Int64GetDatum((int64) pos);
	slot->tts_values[COL_KEY - 1] = PointerGetDatum(k);
	memset(slot->tts_isnull, 0, sizeof(bool) * NCOLS);
	ExecStoreVirtualTuple(slot);
	tuplesort_puttupleslot(sp->sort, slot);
	pfree(k);
	sp->nrows++;
	sp->key_bytes += keylen;
	if (n > sp->max_len || sp->nrows == 1)
	{
		sp->max_len = (uint32) n;
		memcpy(sp->max_key, key, Min(keylen, MAX_KEY_SHOWN));
		sp->max_key[Min(keylen, MAX_KEY_SHOWN)] = '\0';
	}
}

/* Writes a set to the file of sets and counts it in the sketch; returns where it starts. */
static uint64
write_set(NearDupSpill *sp, const uint64_t *hashes, size_t n)
{
	uint64 pos = file_tell(sp->sets);

	BufFileWrite(sp->sets, (void *) hashes, n * sizeof(uint64_t));
	sh_ndo_count(sp->order, hashes, n);
	return pos;
}

/*
 * Moves the call to disk: the sets and keys the core holds go to the files
 * and the sort, and the core is freed.
 */
void
nd_spill_begin(NearDupCall *call)
{
	MemoryContext old = MemoryContextSwitchTo(call->cxt);
	NearDupSpill *sp = palloc0(sizeof(NearDupSpill));
	AttrNumber	  cols[3] = {COL_SIZE, COL_DIGEST0, COL_DIGEST1};
	Oid			  ops[3] = {Int4LessOperator, Int8LessOperator, Int8LessOperator};
	Oid			  colls[3] = {InvalidOid, InvalidOid, InvalidOid};
	bool		  nulls_first[3] = {false, false, false};
	sh_nd_stats	  stats;
	uint64		 *set_pos;

	sp->sets = BufFileCreateTemp(false);
	sp->desc = CreateTemplateTupleDesc(NCOLS);
	TupleDescInitBuiltinEntry(sp->desc, COL_SIZE, "n", INT4OID, -1, 0);
	TupleDescInitBuiltinEntry(sp->desc, COL_DIGEST0, "d0", INT8OID, -1, 0);
	TupleDescInitBuiltinEntry(sp->desc, COL_DIGEST1, "d1", INT8OID, -1, 0);
	TupleDescInitBuiltinEntry(sp->desc, COL_SET_POS, "pos", INT8OID, -1, 0);
	TupleDescInitBuiltinEntry(sp->desc, COL_KEY, "key", TEXTOID, -1, 0);
	sp->in = MakeSingleTupleTableSlot(sp->desc, &TTSOpsVirtual);
	sp->out = MakeSingleTupleTableSlot(sp->desc, &TTSOpsMinimalTuple);
	sp->sort = tuplesort_begin_heap(sp->desc, 3, cols, ops, colls, nulls_first,
									(int) Max(call->budget / 4 / 1024, 64), NULL, TUPLESORT_NONE);
	initStringInfo(&sp->keys);
	initStringInfo(&sp->ckeys);
	call->spill = sp;
	SH_CHECK(sh_ndo_create(call->budget / 4, &sp->order), "simhash_near_duplicates");

	sh_nd_get_stats(call->nd, &stats);
	set_pos = palloc_extended(sizeof(uint64) * Max(stats.sets, 1), MCXT_ALLOC_HUGE);
	MemoryContextSwitchTo(old);
	for (uint32 s = 0; s < stats.sets; s++)
	{
		size_t			n;
		const uint64_t *h = sh_nd_set_hashes(call->nd, s, &n);

		set_pos[s] = write_set(sp, h, n);
		CHECK_FOR_INTERRUPTS();
	}
	for (uint32 r = 0; r < stats.rows; r++)
	{
		uint32			s = sh_nd_set_of_row(call->nd, r);
		size_t			n;
		const uint64_t *h = sh_nd_set_hashes(call->nd, s, &n);

		sort_row(call, h, n, set_pos[s], call->keys[r], call->keylen[r]);
		pfree(call->keys[r]);
	}
	pfree(set_pos);
	sh_nd_free(call->nd);
	call->nd = NULL;
	call->key_bytes = 0;
}

void
nd_spill_add(NearDupCall *call, const uint64_t *hashes, size_t n, const char *key, uint32 keylen)
{
	NearDupSpill *sp = call->spill;

	sort_row(call, hashes, n, write_set(sp, hashes, n), key, keylen);
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

/* Bytes one set of n hashes takes in a chunk and in the buffers, at most. */
static double
set_bytes(uint32 n)
{
	return (double) sh_ndc_set_bytes(n, n) + (double) n * 20;
}

/* Raises 53200 for the text of that key: n distinct shingles, need bytes to join. */
static void
refuse_text(const char *key, uint32 keylen, size_t n, double need)
{
	ereport(ERROR,
			(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
			 errmsg("the text of key \"%.*s\" has %zu distinct shingles, more than "
					"simhash_near_duplicates joins within work_mem (%d kB)",
					(int) Min(keylen, MAX_KEY_SHOWN), key, n, work_mem),
			 errhint("Set work_mem to at least %.0f kB for this call, or leave that row out.",
					 nd_work_mem_kb(need - (double) SET_SLACK_BYTES))));
}

/*
 * A text of n distinct shingles that neither the in-memory join nor a chunk
 * could hold within work_mem and the slack is refused as soon as it is read.
 */
void
nd_check_text(NearDupCall *call, size_t n, const char *key, uint32 keylen)
{
	double need = set_bytes((uint32) Min(n, PG_UINT32_MAX));

	if ((double) sh_nd_memory_needed(n, 1, 1) <= (double) call->budget ||
		need <= (double) call->budget + (double) SET_SLACK_BYTES)
		return;
	refuse_text(key, keylen, n, need);
}

/*
 * One text whose join by chunks needs more than work_mem and the slack is
 * refused before the join starts (it fitted the in-memory join's budget).
 */
static void
check_largest(NearDupCall *call)
{
	NearDupSpill *sp = call->spill;
	double		  need = set_bytes(sp->max_len);

	if (need > (double) call->budget + (double) SET_SLACK_BYTES)
		refuse_text(sp->max_key, (uint32) strlen(sp->max_key), sp->max_len, need);
}

/* Appends a key to buf as (uint32 length, bytes). */
static void
append_key(StringInfo buf, Datum key)
{
	text  *t = DatumGetTextPP(key);
	uint32 len = VARSIZE_ANY_EXHDR(t);

	appendBinaryStringInfo(buf, (char *) &len, sizeof(len));
	appendBinaryStringInfo(buf, VARDATA_ANY(t), (int) len);
	if ((Pointer) t != DatumGetPointer(key))
		pfree(t);
}

/* Writes one distinct set (h, read from the file of sets), its prefix and its rows' keys. */
static void
write_group(NearDupCall *call, JoinedSet *h, uint64 set_pos)
{
	NearDupSpill *sp = call->spill;
	size_t		  m;

	reserve(call, h->n);
	file_seek(sp->sets, set_pos);
	file_read(sp->sets, sp->hbuf, sizeof(uint64) * h->n);
	SH_CHECK(sh_ndo_prefix(sp->order, sp->hbuf, h->n, call->threshold, sp->tokens, sp->pos, &m),
			 "simhash_near_duplicates");
	h->m = (uint32) m;
	h->key_bytes = (uint32) sp->keys.len;
	BufFileWrite(sp->joined, h, sizeof(*h));
	BufFileWrite(sp->joined, sp->tokens, sizeof(uint64) * m);
	BufFileWrite(sp->joined, sp->pos, sizeof(uint32) * m);
	BufFileWrite(sp->joined, sp->hbuf, sizeof(uint64) * h->n);
	BufFileWrite(sp->joined, sp->keys.data, sp->keys.len);
}

/*
 * Sorts the rows and writes each distinct set once, in join order (ascending
 * size, then digest), to the file for the join; then frees what only the
 * reading needed.  Returns the pairs of rows that share a set.
 */
static double
write_joined(NearDupCall *call)
{
	NearDupSpill *sp = call->spill;
	JoinedSet	  h = {0, 0, 0, 0, 0};
	uint64		  set_pos = 0, d0 = 0, d1 = 0;
	bool		  open = false;
	double		  shared = 0;
	MemoryContext old = MemoryContextSwitchTo(call->cxt);

	/* in the call's FileSet, workers may open it by name (nd_spill_import) */
	sp->joined = call->fileset != NULL ? BufFileCreateFileSet(call->fileset, JOINED_NAME)
									   : BufFileCreateTemp(false);
	MemoryContextSwitchTo(old);
	tuplesort_performsort(sp->sort);
	for (uint64 r = 0;; r++)
	{
		bool  isnull;
		bool  more = tuplesort_gettupleslot(sp->sort, true, false, sp->out, NULL);
		int32 n = more ? DatumGetInt32(slot_getattr(sp->out, COL_SIZE, &isnull)) : 0;
		int64 e0 = more ? DatumGetInt64(slot_getattr(sp->out, COL_DIGEST0, &isnull)) : 0;
		int64 e1 = more ? DatumGetInt64(slot_getattr(sp->out, COL_DIGEST1, &isnull)) : 0;

		if (open && (!more || (uint32) n != h.n || (uint64) e0 != d0 || (uint64) e1 != d1))
		{
			write_group(call, &h, set_pos);
			shared += (double) h.nrows * (h.nrows - 1) / 2;
			sp->hashes += h.n;
			sp->nsets++;
			open = false;
		}
		if (!more)
			break;
		if (!open)
		{
			if (sp->nsets == PG_UINT32_MAX)
				ereport(ERROR, (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
								errmsg("simhash_near_duplicates takes at most %u distinct texts",
									   PG_UINT32_MAX)));
			h.set = sp->nsets;
			h.n = (uint32) n;
			h.nrows = 0;
			d0 = (uint64) e0;
			d1 = (uint64) e1;
			set_pos = (uint64) DatumGetInt64(slot_getattr(sp->out, COL_SET_POS, &isnull));
			resetStringInfo(&sp->keys);
			open = true;
		}
		append_key(&sp->keys, slot_getattr(sp->out, COL_KEY, &isnull));
		h.nrows++;
		if ((r & 1023) == 0)
			CHECK_FOR_INTERRUPTS();
	}
	tuplesort_end(sp->sort);
	sp->sort = NULL;
	ExecDropSingleTupleTableSlot(sp->in);
	ExecDropSingleTupleTableSlot(sp->out);
	BufFileClose(sp->sets);
	sp->sets = NULL;
	sh_ndo_free(sp->order);
	sp->order = NULL;
	return shared;
}

/*
 * Reads the header of the next set of the file in join order into *h and,
 * with body set, the rest of its record into the buffers (its keys into
 * sp->keys); without, skips the rest.  False at the file's end.
 */
static bool
read_joined(NearDupCall *call, JoinedSet *h, bool body)
{
	NearDupSpill *sp = call->spill;
	size_t		  got = BufFileRead(sp->joined, h, sizeof(JoinedSet));

	if (got == 0)
		return false;
	if (got != sizeof(JoinedSet))
		ereport(ERROR, (errcode_for_file_access(),
						errmsg("could not read a temporary file of simhash_near_duplicates")));
	if (!body)
	{
		file_skip(sp->joined, (off_t) (sizeof(uint64) + sizeof(uint32)) * h->m +
								  (off_t) sizeof(uint64) * h->n + (off_t) h->key_bytes);
		return true;
	}
	reserve(call, h->n);
	file_read(sp->joined, sp->tokens, sizeof(uint64) * h->m);
	file_read(sp->joined, sp->pos, sizeof(uint32) * h->m);
	file_read(sp->joined, sp->hbuf, sizeof(uint64) * h->n);
	resetStringInfo(&sp->keys);
	enlargeStringInfo(&sp->keys, (int) h->key_bytes);
	file_read(sp->joined, sp->keys.data, h->key_bytes);
	sp->keys.len = (int) h->key_bytes;
	return true;
}

/*
 * Where the file in join order is cut into chunks, for the load and the
 * plan of parallel parts alike: whether set h starts a chunk, given what the
 * chunk being filled takes so far (*bytes, 0 before the first set); *bytes
 * becomes what the chunk that takes h takes with it.  A chunk takes at least
 * one set, and the sets after it while they fit in sp->room.
 */
static bool
chunk_starts_at(const NearDupSpill *sp, const JoinedSet *h, double *bytes)
{
	double need = (double) sh_ndc_set_bytes(h->n, h->m) + h->key_bytes + 8;
	bool   starts = *bytes == 0 || *bytes + need > (double) sp->room;

	*bytes = (starts ? 0 : *bytes) + need;
	return starts;
}

/* The next key of a list of (uint32 length, bytes); advances *at. */
static const char *
next_key(const char *keys, size_t *at, uint32 *len)
{
	memcpy(len, keys + *at, sizeof(uint32));
	*at += sizeof(uint32) + *len;
	return keys + *at - *len;
}

/*
 * Returns the row pairs of two sets' key lists (a == b: the pairs within
 * one list), with that similarity.
 */
static void
emit_keys(NearDupCall *call, const char *a, uint32 na, const char *b, uint32 nb, bool same,
		  double similarity)
{
	size_t at_a = 0;
	uint32 polled = 0;

	for (uint32 i = 0; i < na; i++)
	{
		uint32		alen;
		const char *ka = next_key(a, &at_a, &alen);
		size_t		at_b = same ? at_a : 0;

		for (uint32 j = same ? i + 1 : 0; j < nb; j++)
		{
			uint32		blen;
			const char *kb = next_key(b, &at_b, &blen);

			nd_put_pair(call, ka, alen, kb, blen, similarity);
			if (++polled == EMIT_POLL)
			{
				polled = 0;
				CHECK_FOR_INTERRUPTS();
			}
		}
	}
}

/* The keys of set `set` of the chunk. */
static const char *
chunk_keys(NearDupSpill *sp, uint32 set, uint32 *nrows)
{
	uint32 l = set - sp->first;

	*nrows = sp->ckey_n[l];
	return sp->ckeys.data + sp->ckey_at[l];
}

/* Keeps the keys just read (sp->keys) as those of the chunk's next set. */
static void
keep_chunk_keys(NearDupCall *call, uint32 nrows)
{
	NearDupSpill *sp = call->spill;
	uint32		  l = sh_ndc_sets(sp->chunk);

	if (l + 1 >= sp->ckey_cap)
	{
		sp->ckey_cap = Max(64, sp->ckey_cap * 2);
		sp->ckey_at = sp->ckey_at == NULL
						  ? MemoryContextAlloc(call->cxt, sizeof(uint32) * sp->ckey_cap)
						  : repalloc(sp->ckey_at, sizeof(uint32) * sp->ckey_cap);
		sp->ckey_n = sp->ckey_n == NULL
						 ? MemoryContextAlloc(call->cxt, sizeof(uint32) * sp->ckey_cap)
						 : repalloc(sp->ckey_n, sizeof(uint32) * sp->ckey_cap);
	}
	sp->ckey_at[l] = (uint32) sp->ckeys.len;
	sp->ckey_n[l] = nrows;
	appendBinaryStringInfo(&sp->ckeys, sp->keys.data, sp->keys.len);
}

/*
 * Loads the chunk that starts at offset `start` of the file in join order:
 * the sets from there that fit in sp->room (at least one), indexed (the
 * pairs of rows within each of its sets come with nd_spill_chunk_own).
 * Returns where the next chunk starts (the first set after it), or
 * PG_UINT64_MAX after the last; *placed gets the chunk's sets.  Chunks are
 * independent: each needs only the file and its start.
 */
uint64
nd_spill_chunk_load(NearDupCall *call, uint64 start, uint32 *placed)
{
	NearDupSpill *sp = call->spill;
	double		  bytes = 0;

	if (sp->chunk == NULL)
		SH_CHECK(sh_ndc_create(call->threshold, &sp->chunk), "simhash_near_duplicates");
	sh_ndc_reset(sp->chunk);
	resetStringInfo(&sp->ckeys);
	file_seek(sp->joined, start);
	for (;;)
	{
		uint64	  at = file_tell(sp->joined);
		JoinedSet h;

		if (!read_joined(call, &h, true))
			break;
		if (chunk_starts_at(sp, &h, &bytes) && sh_ndc_sets(sp->chunk) > 0)
		{
			SH_CHECK(sh_ndc_build(sp->chunk), "simhash_near_duplicates");
			*placed = sh_ndc_sets(sp->chunk);
			return at;
		}
		if (sh_ndc_sets(sp->chunk) == 0)
			sp->first = h.set;
		keep_chunk_keys(call, h.nrows);
		SH_CHECK(sh_ndc_add(sp->chunk, h.set, sp->hbuf, h.n, sp->tokens, sp->pos, h.m),
				 "simhash_near_duplicates");
	}
	SH_CHECK(sh_ndc_build(sp->chunk), "simhash_near_duplicates");
	*placed = sh_ndc_sets(sp->chunk);
	return PG_UINT64_MAX;
}

/* Joins the loaded chunk with itself. */
void
nd_spill_chunk_own(NearDupCall *call)
{
	NearDupSpill *sp = call->spill;
	uint32		  nlocal = sh_ndc_sets(sp->chunk);

	/* the rows within each set (here, not in the load: parts of a chunk load it again) */
	for (uint32 l = 0; l < nlocal; l++)
		if (sp->ckey_n[l] > 1)
			emit_keys(call, sp->ckeys.data + sp->ckey_at[l], sp->ckey_n[l],
					  sp->ckeys.data + sp->ckey_at[l], sp->ckey_n[l], true, 1.0);
	for (uint32 l = 0; l < nlocal; l++)
	{
		const sh_nd_pair *pairs;
		size_t			  n;

		SH_CHECK(sh_ndc_probe_own(sp->chunk, l, &pairs, &n), "simhash_near_duplicates");
		for (size_t i = 0; i < n; i++)
		{
			uint32		na, nb;
			const char *ka = chunk_keys(sp, pairs[i].a, &na);
			const char *kb = chunk_keys(sp, pairs[i].b, &nb);

			call->similar++;
			emit_keys(call, ka, na, kb, nb, false, pairs[i].similarity);
		}
		if ((l & 255) == 0)
			CHECK_FOR_INTERRUPTS();
	}
	call->candidates = sh_ndc_candidates(sp->chunk);
}

/*
 * The sets of the file from offset `from` (a set's start after the loaded
 * chunk) up to offset `to` or its end probe the chunk, until one is too
 * large to reach any set of it (the later ones are larger still).
 */
void
nd_spill_chunk_probe(NearDupCall *call, uint64 from, uint64 to)
{
	NearDupSpill *sp = call->spill;
	JoinedSet	  h;

	file_seek(sp->joined, from);
	for (uint32 probed = 0; file_tell(sp->joined) < to && read_joined(call, &h, true); probed++)
	{
		size_t ncand;

		if (!sh_ndc_reaches(sp->chunk, h.n))
			break;
		SH_CHECK(sh_ndc_probe(sp->chunk, h.n, sp->tokens, sp->pos, h.m, &ncand),
				 "simhash_near_duplicates");
		if (ncand > 0)
		{
			const sh_nd_pair *pairs;
			size_t			  n;

			SH_CHECK(sh_ndc_verify(sp->chunk, h.set, sp->hbuf, h.n, &pairs, &n),
					 "simhash_near_duplicates");
			for (size_t i = 0; i < n; i++)
			{
				uint32		na;
				const char *ka = chunk_keys(sp, pairs[i].a, &na);

				call->similar++;
				emit_keys(call, ka, na, sp->keys.data, h.nrows, false, pairs[i].similarity);
			}
		}
		if ((probed & 255) == 0)
			CHECK_FOR_INTERRUPTS();
	}
	call->candidates = sh_ndc_candidates(sp->chunk);
}

/*
 * The sets once every row is read: sorted, and each distinct set written
 * once to the file in join order (in the call's FileSet when it has one);
 * then the chunks can be joined, by nd_spill_join_chunks or by parts.
 */
void
nd_spill_write_joined(NearDupCall *call)
{
	NearDupSpill *sp = call->spill;
	double		  need, shared;

	check_largest(call);
	shared = write_joined(call);
	nd_check_result_pairs(shared);
	/* besides the chunk: the buffers of one set */
	sp->room = call->budget > (size_t) sp->cap * 20 + MIN_CHUNK_BYTES
				   ? call->budget - (size_t) sp->cap * 20
				   : MIN_CHUNK_BYTES;
	need = (double) sh_nd_memory_needed(sp->hashes, sp->nsets, sp->nrows) + (double) sp->key_bytes +
		   (double) sp->nrows * 56;
	ereport(NOTICE, (errmsg("simhash_near_duplicates: " UINT64_FORMAT
							" rows, %u distinct shingle sets, " UINT64_FORMAT
							" shingles do not fit in work_mem (%d kB); joining on disk in "
							"chunks of %zu kB",
							sp->nrows, sp->nsets, sp->hashes, work_mem, sp->room / 1024),
					 errhint("With work_mem at %.0f kB or more the whole call joins in memory.",
							 nd_work_mem_kb(need))));
}

/* Every chunk, one after another, in this process; returns their number. */
uint32
nd_spill_join_chunks(NearDupCall *call)
{
	NearDupSpill *sp = call->spill;
	uint64		  start = 0;
	uint32		  placed = 0, nchunks = 0;

	while (start != PG_UINT64_MAX)
	{
		uint32 in_chunk;
		uint64 next = nd_spill_chunk_load(call, start, &in_chunk);

		nd_spill_chunk_own(call);
		if (next != PG_UINT64_MAX)
			nd_spill_chunk_probe(call, next, PG_UINT64_MAX);
		start = next;
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

/* Once the chunks are joined: the file in join order is closed. */
void
nd_spill_close_joined(NearDupCall *call)
{
	NearDupSpill *sp = call->spill;

	BufFileClose(sp->joined);
	sp->joined = NULL;
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
 * The work split into parts for `participants` processes: every chunk (cut
 * by chunk_starts_at, as nd_spill_chunk_load cuts), and the sets after it
 * that probe it cut into runs of about equal numbers of the sets that may
 * reach it (its largest set over the threshold: the length filter).  The
 * first part of a chunk also joins it with itself; its last runs to the end
 * of the file, where the length filter stops it, so where the cuts fall
 * changes the balance only, never the pairs.  One pass over the headers; 12
 * bytes a set meanwhile.
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
	uint32	maxchunks = 64, k = 0, np = 0, maxparts;
	uint64	total = 0, target;
	double	bytes = 0;
	NdPart *parts;

	file_seek(sp->joined, 0);
	for (uint32 i = 0; i < sp->nsets; i++)
	{
		JoinedSet h;

		off[i] = file_tell(sp->joined);
		if (!read_joined(call, &h, false))
			ereport(ERROR, (errcode_for_file_access(),
							errmsg("could not read a temporary file of simhash_near_duplicates")));
		len[i] = h.n;
		if (chunk_starts_at(sp, &h, &bytes))
		{
			if (k == maxchunks)
			{
				maxchunks *= 2;
				first = repalloc_huge(first, sizeof(uint32) * maxchunks);
			}
			first[k++] = i;
		}
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
	target = Max(total / (uint64) Max(4 * participants, 1), 1);
	maxparts = k + (uint32) (total / target) + 1;
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
			parts[np].to = last ? PG_UINT64_MAX : off[from + target];
			parts[np].own = from == end;
			np++;
			if (last)
				break;
			from += (uint32) target;
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
	MemoryContext old = MemoryContextSwitchTo(call->cxt);
	NearDupSpill *sp = palloc0(sizeof(NearDupSpill));

	sp->room = in->room;
	sp->max_len = in->max_len;
	initStringInfo(&sp->keys);
	initStringInfo(&sp->ckeys);
	sp->joined = BufFileOpenFileSet(call->fileset, JOINED_NAME, O_RDONLY, false);
	call->spill = sp;
	MemoryContextSwitchTo(old);
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

/* Joins one part (nd_spill_plan_parts); its pairs go to nd_put_pair. */
void
nd_spill_join_part(NearDupCall *call, const NdPart *part)
{
	uint32 placed;

	/* the plan and the load cut alike (chunk_starts_at, the same room), or parts would overlap */
	if (nd_spill_chunk_load(call, part->chunk, &placed) != part->next)
		elog(ERROR, "simhash_near_duplicates: a parallel part does not match its chunk");
	if (part->own)
		nd_spill_chunk_own(call);
	if (part->from != PG_UINT64_MAX)
		nd_spill_chunk_probe(call, part->from, part->to);
}
