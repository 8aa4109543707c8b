/*
 * build_sort.c — the sorting both builds share: a table's permuted pairs
 * sorted in memory (simhash_permute_sorted), and the k-way merge of sorted
 * chunks in temporary files into a run writer (simhash_merge_chunks), used
 * by the serial build when it spills and by the parallel build's merges.
 */
#include "simhash_am.h"
#include "runs.h"

#include "build_sort.h"

#include "commands/progress.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/buffile.h"

/* Items a merge input reads from its file at a time: one block's worth. */
#define MERGE_BATCH (BLCKSZ / (int) sizeof(SimhashItem))

/*
 * (key, TID) order with the TID as one number (block, then offset:
 * ItemPointerCompare's order), inline rather than a call on equal keys.
 */
static inline uint64
item_tid_number(const SimhashItem *it)
{
	return ((uint64) ItemPointerGetBlockNumberNoCheck(&it->tid) << 16) |
		   ItemPointerGetOffsetNumberNoCheck(&it->tid);
}

static inline int
item_cmp(const SimhashItem *a, const SimhashItem *b)
{
	uint64 ta, tb;

	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	ta = item_tid_number(a);
	tb = item_tid_number(b);
	return ta < tb ? -1 : ta > tb ? 1 : 0;
}

#define ST_SORT			 sort_bucket
#define ST_ELEMENT_TYPE	 SimhashItem
#define ST_COMPARE(a, b) item_cmp(a, b)
#define ST_SCOPE		 static
#define ST_DEFINE
#include "lib/sort_template.h"

/*
 * keys = items permuted for table tab, in (key, TID) order: a most
 * significant digit radix sort of two digits, then a comparison sort of each
 * sub-bucket.  The items are distributed by the top 8 bits of their permuted
 * key (a counting pass, then each item put straight into its bucket's place
 * in keys); each bucket, in cache, is distributed the same way by the next
 * digit into a scratch array and each sub-bucket sorted there, then copied
 * back.  256 buckets keep the first scatter's write streams within the
 * caches and TLB (65,536 made it miss on every write: a serial 4M-row build
 * took 14.8 s against 7.3-8.9 s with 256, on 15).  The second digit is as
 * wide as the bucket needs for sub-buckets of about 4 items (up to 12 bits:
 * its counts stay in the first-level cache), which an insertion sort puts in
 * order; with a fixed 8-bit digit the quicksorts of sub-buckets of 20-70
 * items were 13% of a 2-worker 4.4M-row build's CPU (perf, 18).  A bucket
 * larger than the scratch array (skewed keys) is sorted by comparison
 * alone; the order is the same whatever the bits.
 */
#define SORT_DIGIT_BITS	 8
#define SORT_BUCKETS	 (1 << SORT_DIGIT_BITS)
#define SORT_SUB_BITS	 12				 /* the widest second digit */
#define SORT_SCRATCH_MIN ((int64) 65536) /* items: 1 MB */
#define SORT_INSERTION	 16				 /* sub-buckets up to this size: insertion sort */

/* Fingerprint -> table key (sh_table_permute, inline in the sort's loops). */
static inline uint64
permute_key(const sh_table *tab, uint64 fp)
{
	uint64 key = 0;

	for (int b = 0; b < tab->nblocks; b++)
		key |= ((fp >> tab->src_shift[b]) & tab->width_mask[b]) << tab->dst_shift[b];
	return key;
}

/* Insertion sort of a few items by (key, TID). */
static inline void
insertion_sort(SimhashItem *a, int64 n)
{
	for (int64 i = 1; i < n; i++)
	{
		SimhashItem x = a[i];
		int64		j = i;

		while (j > 0 && item_cmp(&x, &a[j - 1]) < 0)
		{
			a[j] = a[j - 1];
			j--;
		}
		a[j] = x;
	}
}

/* Bits of the second digit for a bucket of n items: sub-buckets of about 4. */
static inline int
sub_digit_bits(int64 n)
{
	int bits = 1;

	while (bits < SORT_SUB_BITS && ((int64) 4 << bits) < n)
		bits++;
	return bits;
}

/* Sort bucket b (n items) by its second digit and then by comparison. */
static void
sort_bucket_by_digit(SimhashItem *b, int64 n, SimhashItem *scratch, uint32 *start)
{
	const int	 bits = sub_digit_bits(n);
	const int	 shift = 64 - SORT_DIGIT_BITS - bits;
	const uint64 mask = ((uint64) 1 << bits) - 1;
	const int	 nsub = 1 << bits;
	uint32		 from = 0;

	memset(start, 0, (nsub + 1) * sizeof(uint32));
	for (int64 i = 0; i < n; i++)
		start[((b[i].key >> shift) & mask) + 1]++;
	for (int i = 1; i <= nsub; i++)
		start[i] += start[i - 1];
	for (int64 i = 0; i < n; i++)
		memcpy(&scratch[start[(b[i].key >> shift) & mask]++], &b[i], sizeof(SimhashItem));
	/* start[d] is now the end of sub-bucket d */
	for (int d = 0; d < nsub; d++)
	{
		uint32 len = start[d] - from;

		if (len > SORT_INSERTION)
			sort_bucket(scratch + from, len);
		else if (len > 1)
			insertion_sort(scratch + from, len);
		from = start[d];
	}
	memcpy(b, scratch, n * sizeof(SimhashItem));
}

void
simhash_permute_sorted(const SimhashItem *items, int64 n, const sh_table *tab, SimhashItem *keys)
{
	int64		*start = palloc0((SORT_BUCKETS + 1) * sizeof(int64));
	uint32		*sub = palloc(((1 << SORT_SUB_BITS) + 1) * sizeof(uint32));
	int64		 scratch_n = 0;
	SimhashItem *scratch;
	int64		 i;

	for (i = 0; i < n; i++)
		start[(permute_key(tab, items[i].key) >> (64 - SORT_DIGIT_BITS)) + 1]++;
	/*
	 * The scratch array holds the largest bucket, up to twice the mean
	 * bucket (at least 1 MB): a larger one comes from skewed keys.
	 */
	for (i = 1; i <= SORT_BUCKETS; i++)
		scratch_n = Max(scratch_n, start[i]);
	scratch_n = Min(scratch_n, Max(SORT_SCRATCH_MIN, 2 * n / SORT_BUCKETS));
	scratch = MemoryContextAllocHuge(CurrentMemoryContext, Max(scratch_n, 1) * sizeof(SimhashItem));
	for (i = 1; i <= SORT_BUCKETS; i++)
		start[i] += start[i - 1];
	for (i = 0; i < n; i++)
	{
		uint64 key = permute_key(tab, items[i].key);
		int64  at = start[key >> (64 - SORT_DIGIT_BITS)]++;

		keys[at].key = key;
		keys[at].tid = items[i].tid;
	}
	/* start[b] is now the end of bucket b, the start of bucket b + 1 */
	for (i = 0; i < SORT_BUCKETS; i++)
	{
		int64 from = i == 0 ? 0 : start[i - 1];
		int64 len = start[i] - from;

		if (len > scratch_n)
			sort_bucket(keys + from, len);
		else if (len > 1)
			sort_bucket_by_digit(keys + from, len, scratch, sub);
		if ((i & 15) == 0)
			CHECK_FOR_INTERRUPTS();
	}
	pfree(scratch);
	pfree(sub);
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
