/*
 * build_sort.c — the sorting both builds share: a table's permuted pairs
 * sorted in memory (simhash_permute_sorted), and the k-way merge of sorted
 * chunks in temporary files into a run writer (simhash_merge_chunks), used
 * by the serial build when it spills and by the parallel build's merges.
 */
#include "simhash_am.h"

#include "build_sort.h"

#include "commands/progress.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/buffile.h"

/* Items a merge input reads from its file at a time: one block's worth. */
#define MERGE_BATCH (BLCKSZ / (int) sizeof(SimhashItem))

/*
 * keys = items permuted for table tab, in (key, TID) order.  The items are
 * distributed by the top SORT_BUCKET_BITS bits of their permuted key (a
 * counting pass, then each item put straight into its bucket's place in
 * keys) and each bucket is sorted with the (key, TID) comparator, in cache:
 * on uniform fingerprints 4M items make buckets of 16K.  256 buckets keep
 * the scatter's write streams within the caches and TLB (65,536 made the
 * scatter miss on every write: a serial 4M-row build took 14.8 s against
 * 7.3-8.9 s with 256, on 15).  Skewed keys fall back to the comparison sort
 * within their bucket; the order is the same whatever the bits.
 */
#define SORT_BUCKET_BITS 8
#define SORT_BUCKETS	 (1 << SORT_BUCKET_BITS)

void
simhash_permute_sorted(const SimhashItem *items, int64 n, const sh_table *tab, SimhashItem *keys)
{
	int64 *start = palloc0((SORT_BUCKETS + 1) * sizeof(int64));
	int64  i;

	for (i = 0; i < n; i++)
		start[(sh_table_permute(tab, items[i].key) >> (64 - SORT_BUCKET_BITS)) + 1]++;
	for (i = 1; i <= SORT_BUCKETS; i++)
		start[i] += start[i - 1];
	for (i = 0; i < n; i++)
	{
		uint64 key = sh_table_permute(tab, items[i].key);
		int64  at = start[key >> (64 - SORT_BUCKET_BITS)]++;

		keys[at].key = key;
		keys[at].tid = items[i].tid;
	}
	/* start[b] is now the end of bucket b, the start of bucket b + 1 */
	for (i = 0; i < SORT_BUCKETS; i++)
	{
		int64 from = i == 0 ? 0 : start[i - 1];

		if (start[i] - from > 1)
			simhash_sort_items(keys + from, start[i] - from);
		if ((i & 1023) == 0)
			CHECK_FOR_INTERRUPTS();
	}
	pfree(start);
}

/* One sorted chunk being merged. */
typedef struct MergeInput
{
	BufFile	   *file;
	int64		blk;  /* a serial chunk: the block its next batch starts at; -1: read on */
	int64		left; /* a serial chunk: items not yet read; -1: to the file's end */
	int			i, n;
	SimhashItem items[MERGE_BATCH];
} MergeInput;

static bool
input_fill(MergeInput *in)
{
	size_t want = sizeof(in->items), got;

	if (in->left >= 0)
	{
		want = Min(want, (size_t) in->left * sizeof(SimhashItem));
		if (want > 0 && BufFileSeekBlock(in->file, in->blk) != 0)
			ereport(ERROR, (errcode_for_file_access(),
							errmsg("simhash build: could not seek to block " INT64_FORMAT
								   " of a sorted chunk",
								   in->blk)));
	}
	got = want > 0 ? BufFileRead(in->file, in->items, want) : 0;
	if (got % sizeof(SimhashItem) != 0 || (in->left >= 0 && got != want))
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("simhash build: could not read a sorted chunk: read %zu bytes", got)));
	in->i = 0;
	in->n = (int) (got / sizeof(SimhashItem));
	if (in->left >= 0)
	{
		in->left -= in->n;
		in->blk++;
	}
	return in->n > 0;
}

/*
 * A merge input in the heap, with its current item's order inline: the
 * key, and the TID as one number (block, then offset: ItemPointerCompare's
 * order), so a comparison touches no input's buffer.
 */
typedef struct MergeHead
{
	uint64		key;
	uint64		tid;
	MergeInput *in;
} MergeHead;

static inline void
head_load(MergeHead *h, MergeInput *in)
{
	const SimhashItem *it = &in->items[in->i];

	h->key = it->key;
	h->tid = ((uint64) ItemPointerGetBlockNumberNoCheck(&it->tid) << 16) |
			 ItemPointerGetOffsetNumberNoCheck(&it->tid);
	h->in = in;
}

static inline bool
head_less(const MergeHead *a, const MergeHead *b)
{
	return a->key < b->key || (a->key == b->key && a->tid < b->tid);
}

/* Restore the min-heap of inputs (by their current item) below position i. */
static inline void
heap_sift_down(MergeHead *h, int n, int i)
{
	MergeHead x = h[i];

	for (;;)
	{
		int l = 2 * i + 1, m;

		if (l >= n)
			break;
		m = (l + 1 < n && head_less(&h[l + 1], &h[l])) ? l + 1 : l;
		if (!head_less(&h[m], &x))
			break;
		h[i] = h[m];
		i = m;
	}
	h[i] = x;
}

/*
 * Table t of the run (n entries): the k-way merge of the sorted chunks into
 * a run writer whose pages go to the sink.  The caller reports the entries
 * written after progress_base (-1: not reported).
 */
void
simhash_merge_chunks(Relation index, const SimhashChunk *chunks, int nchunks, int t, int64 n,
					 SimhashPageSink *sink, int64 progress_base)
{
	int				 k = 0;
	MergeInput		*inputs = palloc(sizeof(MergeInput) * Max(nchunks, 1));
	MergeHead		*h = palloc(sizeof(MergeHead) * Max(nchunks, 1));
	SimhashRunWriter w;

	for (int j = 0; j < nchunks; j++)
	{
		inputs[j].file = chunks[j].file;
		inputs[j].blk = chunks[j].blk;
		inputs[j].left = chunks[j].n;
		if (input_fill(&inputs[j]))
			head_load(&h[k++], &inputs[j]);
	}
	/* the heap holds the inputs that have an item */
	for (int j = k / 2 - 1; j >= 0; j--)
		heap_sift_down(h, k, j);

	simhash_run_begin_sink(&w, index, sink, t, 1);
	while (k > 0)
	{
		MergeInput *top = h[0].in;

		simhash_run_add(&w, h[0].key, &top->items[top->i].tid);
		if (progress_base >= 0 && (w.count & 65535) == 0)
			pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_DONE,
										 progress_base + (int64) w.count);
		if (++top->i < top->n || input_fill(top))
			head_load(&h[0], top);
		else
			h[0] = h[--k];
		heap_sift_down(h, k, 0);
	}
	(void) simhash_run_finish(&w);
	if (w.count != (uint64) n)
		elog(ERROR, "simhash build: table %d got " UINT64_FORMAT " entries, expected " INT64_FORMAT,
			 t, w.count, n);
	pfree(inputs);
	pfree(h);
}
