/*
 * insert.c — aminsert: append to the pending buffer (or the NULLs chain);
 * when the buffer is full, flush it into a new run and do the small tier
 * merges that follow.
 */
#include "simhash_am.h"
#include "runs.h"

#include "nodes/execnodes.h"
#include "storage/lmgr.h"
#include "utils/memutils.h"

/*
 * Append one entry to the chain whose head/tail/count the metapage holds.
 * A new tail page is allocated under the metapage lock only if that needs no
 * wait (from the FSM, or the relation extension lock free at once); else the
 * metapage lock is let go, the page allocated, and the metapage locked again
 * (the page, which nothing links to yet, held meanwhile: see the lock order
 * in src/am/README).  A page the chain no longer needs then goes back to the
 * FSM.
 */
static void
append_entry(Relation index, Relation heap, bool nulls, uint64 fp, ItemPointer tid, int64 *npending)
{
	Buffer			  metabuf = ReadBuffer(index, SIMHASH_METAPAGE_BLKNO);
	Buffer			  tailbuf = InvalidBuffer;
	Buffer			  newbuf = InvalidBuffer;
	Buffer			  spare = InvalidBuffer;
	GenericXLogState *state;
	SimhashMetaPage	  meta;
	BlockNumber		  tail;
	Page			  page;
	int				  nentries;
	bool			  need_page;

	for (;;)
	{
		LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
		meta = SimhashPageGetMeta(BufferGetPage(metabuf));
		simhash_check_meta(index, meta);
		tail = nulls ? meta->nulls_tail : meta->pending_tail;
		need_page = !BlockNumberIsValid(tail);
		if (!need_page)
		{
			tailbuf = ReadBuffer(index, tail);
			LockBuffer(tailbuf, BUFFER_LOCK_EXCLUSIVE);
			need_page =
				SimhashPageEntries(index, tail, BufferGetPage(tailbuf)) >= SIMHASH_PAGE_CAPACITY;
		}
		if (!need_page || BufferIsValid(spare))
			break;
		spare = simhash_alloc_buffer_nowait(index, heap);
		if (BufferIsValid(spare))
			break;
		/* never wait for the relation extension lock under a buffer lock */
		if (BufferIsValid(tailbuf))
			UnlockReleaseBuffer(tailbuf);
		tailbuf = InvalidBuffer;
		LockBuffer(metabuf, BUFFER_LOCK_UNLOCK);
		spare = simhash_alloc_buffer(index, heap, true);
	}
	if (need_page)
		newbuf = spare;
	else if (BufferIsValid(spare))
		simhash_free_unused(index, spare);

	state = GenericXLogStart(index);
	meta = SimhashPageGetMeta(GenericXLogRegisterBuffer(state, metabuf, 0));
	if (BufferIsValid(newbuf))
	{
		BlockNumber newblk = BufferGetBlockNumber(newbuf);

		page = GenericXLogRegisterBuffer(state, newbuf, GENERIC_XLOG_FULL_IMAGE);
		simhash_init_page(page, nulls ? SIMHASH_NULLS : SIMHASH_PENDING);
		if (!nulls && !BufferIsValid(tailbuf))
			meta->pending_chain = ++meta->gen_seq;
		if (!nulls)
			SimhashPageGetOpaque(page)->gen = meta->pending_chain;
		if (BufferIsValid(tailbuf))
		{
			Page tp = GenericXLogRegisterBuffer(state, tailbuf, 0);

			SimhashPageGetOpaque(tp)->next = newblk;
		}
		else if (nulls)
			meta->nulls_head = newblk;
		else
			meta->pending_head = newblk;
		if (nulls)
			meta->nulls_tail = newblk;
		else
			meta->pending_tail = newblk;
	}
	else
		page = GenericXLogRegisterBuffer(state, tailbuf, 0);

	nentries =
		SimhashPageEntries(index, BufferGetBlockNumber(BufferIsValid(newbuf) ? newbuf : tailbuf),
						   page);
	simhash_entry_set(SimhashPageEntry(page, nentries), fp, tid);
	((PageHeader) page)->pd_lower += SIMHASH_ENTRY_SIZE;
	if (nulls)
		meta->nnulls++;
	else
		meta->npending++;
	*npending = (int64) meta->npending;
	GenericXLogFinish(state);

	if (BufferIsValid(newbuf))
		UnlockReleaseBuffer(newbuf);
	if (BufferIsValid(tailbuf))
		UnlockReleaseBuffer(tailbuf);
	UnlockReleaseBuffer(metabuf);
}

/*
 * aminsert: append to the pending buffer; the INSERT that fills it flushes
 * it into a run and may merge runs of one level (see src/am/README).
 */
bool
simhash_insert(Relation index, Datum *values, bool *isnull, ItemPointer ht_ctid, Relation heapRel,
			   IndexUniqueCheck checkUnique, bool indexUnchanged, IndexInfo *indexInfo)
{
	int64  npending, limit = simhash_pending_limit(index);
	bool   flushed = false;
	uint64 fp = 0;
	bool   null_key = isnull[0] || !simhash_index_value(index, values[0], &fp);

	append_entry(index, heapRel, null_key, fp, ht_ctid, &npending);
	if (null_key || npending < limit)
		return false;

	/*
	 * The buffer is full: flush it, unless another backend is flushing (it
	 * seals the chain, so ours starts afresh).  Wait for that flush only when
	 * the buffer is twice over its limit, to keep it bounded.
	 */
	if (ConditionalLockPage(index, SIMHASH_FLUSH_LOCK, ExclusiveLock))
		flushed = true;
	else if (npending >= 2 * limit)
	{
		LockPage(index, SIMHASH_FLUSH_LOCK, ExclusiveLock);
		flushed = true;
	}
	if (flushed)
	{
		SimhashMetaPageData meta;

		simhash_read_meta(index, &meta);
		if (meta.npending >= (uint64) limit || BlockNumberIsValid(meta.sealed_head))
			flushed = simhash_flush(index, heapRel, NULL, NULL, NULL);
		else
			flushed = false;
		UnlockPage(index, SIMHASH_FLUSH_LOCK, ExclusiveLock);
	}
	/* after a flush, or when the run list is full: the small merges */
	if (flushed || npending >= 2 * limit)
		simhash_insert_merges(index, heapRel);
	return false;
}
