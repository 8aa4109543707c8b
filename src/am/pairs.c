/*
 * pairs.c — simhash_pairs through a simhash index on the fingerprint column.
 *
 * Each table of the index is already sorted by its permuted key: the runs'
 * pages of that table, merged, plus the pending rows permuted and sorted,
 * stream the rows in prefix order, so each group of rows sharing the
 * table's prefix comes whole, once, with no sort of the table.  Every pair
 * of a group within the radius whose first table agreeing on the prefix is
 * this one (tables.h) is a candidate: both heap rows are fetched under the
 * statement's snapshot (dead or invisible ones skipped, the heap's
 * fingerprint checked against the entry's), and the pair is returned with
 * its keys as text in "C" order, as the join path of simhash_pairs returns
 * it.  The group is held in memory: one larger than work_mem ends the call
 * with 53200 before any row is returned, and simhash_pairs then joins.
 */
#include "simhash_am.h"
#include "runs.h"
#include "popcount.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/relation.h"
#include "access/table.h"
#include "access/tableam.h"
#include "catalog/index.h"
#include "catalog/pg_am.h"
#include "catalog/pg_index.h"
#include "catalog/pg_type.h"
#include "commands/defrem.h"
#include "executor/tuptable.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "parser/parse_coerce.h"
#include "port/pg_bitutils.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/rls.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"

/* ---- which index, if any ------------------------------------------------ */

/*
 * Why the index cannot serve the pairs of its table's column fpatt at this
 * radius, or NULL when it can: a valid simhash index whose single key is
 * that column (no expression, no predicate) and whose bits cover the radius.
 */
static const char *
index_unusable(Relation index, AttrNumber fpatt, int radius)
{
	SimhashMetaPageData meta;

	if (index->rd_rel->relam != get_index_am_oid("simhash", false))
		return "not a simhash index";
	if (!index->rd_index->indisvalid)
		return "the index is not valid";
	if (!heap_attisnull(index->rd_indextuple, Anum_pg_index_indpred, NULL))
		return "the index is partial";
	if (index->rd_index->indnatts != 1 || index->rd_index->indkey.values[0] != fpatt)
		return "the index's key is not the column";
	simhash_read_meta(index, &meta);
	if (radius > meta.bits)
		return psprintf("radius %d is above the index's bits %d", radius, meta.bits);
	return NULL;
}

/* Why simhash_pairs must join on this table, or NULL when it may read an index. */
static const char *
table_unusable(Relation heap)
{
	if (heap->rd_rel->relkind != RELKIND_RELATION)
		return "not a plain table";
	if (check_enable_rls(RelationGetRelid(heap), InvalidOid, true) == RLS_ENABLED)
		return "row-level security applies";
	return NULL;
}

/*
 * May the caller read these columns of relid?  Asked before any lock is
 * taken, from the catalogs, as for a query.
 */
static bool
may_read(Oid relid, AttrNumber att1, AttrNumber att2)
{
	Oid user = GetUserId();

	return pg_class_aclcheck(relid, user, ACL_SELECT) == ACLCHECK_OK ||
		   (pg_attribute_aclcheck(relid, att1, user, ACL_SELECT) == ACLCHECK_OK &&
			pg_attribute_aclcheck(relid, att2, user, ACL_SELECT) == ACLCHECK_OK);
}

/*
 * simhash_pairs_index_for(rel, fp, radius): the index simhash_pairs reads
 * for these arguments, or NULL (a DEBUG1 line says which and why).
 */
PG_FUNCTION_INFO_V1(simhash_pairs_index_for);
Datum
simhash_pairs_index_for(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	Name		fp = PG_GETARG_NAME(1);
	int32		radius = PG_GETARG_INT32(2);
	Relation	heap;
	AttrNumber	fpatt;
	const char *why;
	Oid			found = InvalidOid;

	simhash_check_radius(radius, "radius");
	fpatt = get_attnum(relid, NameStr(*fp));
	if (fpatt <= 0 || !may_read(relid, fpatt, fpatt))
	{
		ereport(DEBUG1, (errmsg_internal("simhash_pairs: join path (%s)",
										 fpatt <= 0 ? "no such column" : "permission denied")));
		PG_RETURN_NULL();
	}
	heap = relation_open(relid, AccessShareLock);
	why = table_unusable(heap);
	if (why == NULL)
	{
		List	 *indexes = RelationGetIndexList(heap);
		ListCell *lc;

		why = "no simhash index on the column";
		foreach (lc, indexes)
		{
			Relation	index = index_open(lfirst_oid(lc), AccessShareLock);
			const char *reason = index_unusable(index, fpatt, radius);

			/* the most telling reason: of an index on the column, if any */
			if (reason != NULL && index->rd_rel->relam == get_index_am_oid("simhash", false) &&
				index->rd_index->indkey.values[0] == fpatt)
				why = reason;
			index_close(index, AccessShareLock);
			if (reason == NULL)
			{
				found = lfirst_oid(lc);
				break;
			}
		}
		list_free(indexes);
	}
	relation_close(heap, AccessShareLock);
	if (!OidIsValid(found))
	{
		ereport(DEBUG1, (errmsg_internal("simhash_pairs: join path (%s)", why)));
		PG_RETURN_NULL();
	}
	ereport(DEBUG1,
			(errmsg_internal("simhash_pairs: index path through \"%s\"", get_rel_name(found))));
	PG_RETURN_OID(found);
}

/* ---- keys as text, as the join path's (key)::text ------------------------- */

typedef struct KeyCast
{
	CoercionPathType path;
	FmgrInfo		 fn; /* the cast function, or the type's output function */
	int				 nargs;
} KeyCast;

static void
key_cast_init(KeyCast *kc, Oid typid, const char *column)
{
	Oid base = getBaseType(typid);
	Oid funcid = InvalidOid;

	kc->path = find_coercion_pathway(TEXTOID, base, COERCION_EXPLICIT, &funcid);
	kc->nargs = 0;
	if (kc->path == COERCION_PATH_FUNC)
	{
		fmgr_info(funcid, &kc->fn);
		kc->nargs = get_func_nargs(funcid);
	}
	else if (kc->path == COERCION_PATH_COERCEVIAIO)
	{
		bool varlena;

		getTypeOutputInfo(base, &funcid, &varlena);
		fmgr_info(funcid, &kc->fn);
	}
	else if (kc->path != COERCION_PATH_RELABELTYPE)
		ereport(ERROR, (errcode(ERRCODE_CANNOT_COERCE),
						errmsg("column \"%s\" of type %s cannot be cast to text", column,
							   format_type_be(typid))));
}

/* The key as a text of its own (in CurrentMemoryContext). */
static text *
key_cast(KeyCast *kc, Datum value)
{
	switch (kc->path)
	{
		case COERCION_PATH_FUNC:
			if (kc->nargs >= 3)
				value = FunctionCall3(&kc->fn, value, Int32GetDatum(-1), BoolGetDatum(true));
			else if (kc->nargs == 2)
				value = FunctionCall2(&kc->fn, value, Int32GetDatum(-1));
			else
				value = FunctionCall1(&kc->fn, value);
			break;
		case COERCION_PATH_COERCEVIAIO:
			return cstring_to_text(OutputFunctionCall(&kc->fn, value));
		default:
			break;
	}
	return DatumGetTextPCopy(value);
}

/* ---- the state of one call -------------------------------------------- */

/* A row of a group: its key in the table, fingerprint, TID, and heap row. */
typedef struct GroupRow
{
	uint64			key;
	uint64			fp;
	ItemPointerData tid;
	int8			state; /* 0 not fetched, 1 visible (k set), -1 skipped */
	text		   *k;
} GroupRow;

typedef struct PairsState
{
	Relation			 heap;
	Relation			 index;
	AttrNumber			 fpatt;
	AttrNumber			 keyatt;
	KeyCast				 cast;
	int					 radius;
	const sh_table		*tables;
	int					 t; /* the table being read */
	Snapshot			 snapshot;
	IndexFetchTableData *fetch;
	TupleTableSlot		*slot;
	MemoryContext		 groupcxt; /* the group's keys, reset after each group */
	GroupRow			*rows;
	int64				 nrows, cap;
	Size				 budget; /* work_mem, in bytes */
	ReturnSetInfo		*rsinfo;
	int64				 pairs;
} PairsState;

/* Load the heap row of r once: visible, fingerprint unchanged, key not NULL. */
static bool
fetch_row(PairsState *s, GroupRow *r)
{
	bool		  call_again = false, all_dead = false, isnull;
	Datum		  value;
	MemoryContext old;

	if (r->state != 0)
		return r->state > 0;
	r->state = -1;
	if (!table_index_fetch_tuple(s->fetch, &r->tid, s->snapshot, s->slot, &call_again, &all_dead))
		return false;
	value = slot_getattr(s->slot, s->fpatt, &isnull);
	if (isnull || (uint64) DatumGetInt64(value) != r->fp)
	{
		ExecClearTuple(s->slot);
		return false;
	}
	value = slot_getattr(s->slot, s->keyatt, &isnull);
	if (!isnull)
	{
		old = MemoryContextSwitchTo(s->groupcxt);
		r->k = key_cast(&s->cast, value);
		MemoryContextSwitchTo(old);
		r->state = 1;
	}
	ExecClearTuple(s->slot);
	if (MemoryContextMemAllocated(s->groupcxt, true) + s->cap * sizeof(GroupRow) > s->budget)
		ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY),
						errmsg("a group of " INT64_FORMAT " rows of simhash index \"%s\" "
							   "passes work_mem",
							   s->nrows, RelationGetRelationName(s->index)),
						errhint("simhash_pairs() joins the rows instead; a larger work_mem lets it "
								"read the index.")));
	return r->state > 0;
}

/* "C" order of two keys: memcmp, then length. */
static int
key_cmp(const text *a, const text *b)
{
	int la = VARSIZE_ANY_EXHDR(a), lb = VARSIZE_ANY_EXHDR(b);
	int c = memcmp(VARDATA_ANY(a), VARDATA_ANY(b), Min(la, lb));

	return c != 0 ? c : (la > lb) - (la < lb);
}

static void
emit_pair(PairsState *s, const GroupRow *a, const GroupRow *b, int distance)
{
	int	  c = key_cmp(a->k, b->k);
	Datum values[3];
	bool  nulls[3] = {false, false, false};

	if (c == 0)
		return; /* equal keys are never paired */
	if (c > 0)
	{
		const GroupRow *x = a;

		a = b;
		b = x;
	}
	values[0] = PointerGetDatum(a->k);
	values[1] = PointerGetDatum(b->k);
	values[2] = Int32GetDatum(distance);
	tuplestore_putvalues(s->rsinfo->setResult, s->rsinfo->setDesc, values, nulls);
	s->pairs++;
}

/*
 * The first row of g from j on (of n) whose key is within radius of key; n
 * if none.  The loop every pair of a group goes through (popcount.h).
 */
static pg_attribute_always_inline int64
next_near_body(const GroupRow *g, int64 j, int64 n, uint64 key, int radius, bool hw)
{
	for (; j < n; j++)
		if (simhash_popcount_as(g[j].key ^ key, hw) <= radius)
			return j;
	return n;
}

SIMHASH_POPCOUNT_LOOP(int64, next_near,
					  (const GroupRow *g, int64 j, int64 n, uint64 key, int radius),
					  (g, j, n, key, radius))

/*
 * Every pair of the group within the radius whose first table agreeing on
 * the prefix is this one.  Permuting preserves distance, so the keys' xor
 * counts it; the fingerprints' xor tells the earlier tables.
 */
static void
pair_group(PairsState *s)
{
	GroupRow *g = s->rows;
	int64	  n = s->nrows;

	for (int64 i = 0; i + 1 < n; i++)
	{
		CHECK_FOR_INTERRUPTS();
		for (int64 j = i + 1; (j = next_near(g, j, n, g[i].key, s->radius)) < n; j++)
		{
			int	   d = pg_popcount64(g[i].key ^ g[j].key);
			uint64 x = g[i].fp ^ g[j].fp;
			bool   earlier = false;

			for (int u = 0; u < s->t && !earlier; u++)
				earlier = (x & s->tables[u].prefix_orig_mask) == 0;
			if (earlier)
				continue;
			if (!fetch_row(s, &g[i]))
				break;
			if (!fetch_row(s, &g[j]))
				continue;
			emit_pair(s, &g[i], &g[j], d);
		}
	}
	s->nrows = 0;
	MemoryContextReset(s->groupcxt);
}

static void
group_add(PairsState *s, uint64 key, ItemPointer tid)
{
	GroupRow *r;

	if (s->nrows == s->cap)
	{
		if ((Size) s->cap * 2 * sizeof(GroupRow) > s->budget)
			ereport(ERROR,
					(errcode(ERRCODE_OUT_OF_MEMORY),
					 errmsg("a group of more than " INT64_FORMAT
							" rows of simhash index \"%s\" passes work_mem",
							s->nrows, RelationGetRelationName(s->index)),
					 errhint("simhash_pairs() joins the rows instead; a larger work_mem lets "
							 "it read the index.")));
		s->cap *= 2;
		s->rows = repalloc_huge(s->rows, s->cap * sizeof(GroupRow));
	}
	r = &s->rows[s->nrows++];
	r->key = key;
	r->fp = sh_table_unpermute(&s->tables[s->t], key);
	r->tid = *tid;
	r->state = 0;
	r->k = NULL;
}

/* ---- reading the index ------------------------------------------------- */

/*
 * The entries of a pending chain (fingerprint, TID).  A page the chain's
 * flush retired meanwhile keeps its entries and link; one recycled since (a
 * hot standby) ends the call with a serialization failure.
 */
static void
read_chain(Relation index, BufferAccessStrategy strategy, BlockNumber blkno, uint32 chain,
		   SimhashItemArray *out)
{
	SimhashChain walk;
	Page		 page;

	simhash_chain_begin(&walk, index, strategy, blkno, BUFFER_LOCK_SHARE, SIMHASH_PENDING, chain,
						SIMHASH_PAGE_RETRY);
	while ((page = simhash_chain_next(&walk)) != NULL)
	{
		int n = SimhashPageEntries(index, walk.blkno, page);

		for (int i = 0; i < n; i++)
		{
			const char	   *e = SimhashPageEntry(page, i);
			ItemPointerData tid;

			simhash_entry_tid(e, &tid);
			simhash_items_push(out, simhash_entry_key(e), &tid);
		}
	}
}

/* One source of a table's merge: a run cursor, or the sorted pending rows. */
typedef struct Source
{
	SimhashRunCursor *cur; /* NULL: the pending rows */
	bool			  valid;
	uint64			  key;
	ItemPointerData	  tid;
} Source;

static void
source_load(Source *src, const SimhashItem *pend, int64 npend, int64 *pi)
{
	if (src->cur != NULL)
		src->valid = simhash_run_cursor_peek(src->cur, &src->key, &src->tid);
	else if ((src->valid = *pi < npend))
	{
		src->key = pend[*pi].key;
		src->tid = pend[*pi].tid;
	}
}

/* Table t: the runs that hold it and the pending rows, merged, in groups of one prefix. */
static void
pair_table(PairsState *s, const SimhashMetaPageData *meta, const SimhashItemArray *pending,
		   BufferAccessStrategy strategy)
{
	const sh_table	 *tab = &s->tables[s->t];
	SimhashRunCursor *cursors = palloc(sizeof(SimhashRunCursor) * Max(meta->list.nruns, 1));
	Source			 *srcs = palloc(sizeof(Source) * (meta->list.nruns + 1));
	SimhashItem		 *pend = palloc(sizeof(SimhashItem) * Max(pending->n, 1));
	int64			  pi = 0, steps = 0;
	int				  nsrc = 0;
	uint64			  prefix = 0;

	for (int64 i = 0; i < pending->n; i++)
	{
		pend[i].key = sh_table_permute(tab, pending->items[i].key);
		pend[i].tid = pending->items[i].tid;
	}
	simhash_sort_items(pend, pending->n);
	for (int r = 0; r < meta->list.nruns; r++)
	{
		if (!simhash_run_has(meta, r, s->t))
			continue;
		simhash_run_cursor_open(&cursors[nsrc], s->index, strategy, meta, r, s->t);
		srcs[nsrc].cur = &cursors[nsrc];
		source_load(&srcs[nsrc], pend, pending->n, &pi);
		nsrc++;
	}
	srcs[nsrc].cur = NULL;
	source_load(&srcs[nsrc], pend, pending->n, &pi);
	nsrc++;

	for (;;)
	{
		int best = -1;

		for (int j = 0; j < nsrc; j++)
			if (srcs[j].valid && (best < 0 || srcs[j].key < srcs[best].key))
				best = j;
		if (best < 0)
			break;
		if (s->nrows > 0 && (srcs[best].key & tab->prefix_key_mask) != prefix)
			pair_group(s);
		prefix = srcs[best].key & tab->prefix_key_mask;
		group_add(s, srcs[best].key, &srcs[best].tid);
		if (srcs[best].cur != NULL)
			srcs[best].cur->i++;
		else
			pi++;
		source_load(&srcs[best], pend, pending->n, &pi);
		if ((++steps & 4095) == 0)
			CHECK_FOR_INTERRUPTS();
	}
	if (s->nrows > 0)
		pair_group(s);
	for (int j = 0; j < nsrc; j++)
		if (srcs[j].cur != NULL)
			simhash_run_cursor_close(srcs[j].cur);
	pfree(cursors);
	pfree(srcs);
	pfree(pend);
}

/* The index can serve: the table is plain, no row-level security, the index fits. */
static void
check_usable(Relation heap, Relation index, AttrNumber fpatt, int radius)
{
	const char *why = table_unusable(heap);

	if (why == NULL)
		why = index_unusable(index, fpatt, radius);
	if (why != NULL)
		ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						errmsg("simhash index \"%s\" cannot give the pairs of \"%s\": %s",
							   RelationGetRelationName(index), RelationGetRelationName(heap), why),
						errhint("simhash_pairs() joins the table's rows instead.")));
}

/*
 * simhash_pairs_index(index, key, radius): the rows of simhash_pairs(table,
 * the index's column, key, radius), read through the index.
 */
PG_FUNCTION_INFO_V1(simhash_pairs_index);
Datum
simhash_pairs_index(PG_FUNCTION_ARGS)
{
	Oid					 indexoid = PG_GETARG_OID(0);
	Name				 key = PG_GETARG_NAME(1);
	int32				 radius = PG_GETARG_INT32(2);
	Oid					 heapoid;
	PairsState			 s = {0};
	SimhashMetaPageData *meta;
	SimhashItemArray	 pending = {0};
	BufferAccessStrategy strategy;
	int					 ntables;

	simhash_check_radius(radius, "radius");
	heapoid = IndexGetRelation(indexoid, true);
	if (!OidIsValid(heapoid))
		ereport(ERROR, (errcode(ERRCODE_WRONG_OBJECT_TYPE),
						errmsg("relation with OID %u is not an index", indexoid)));
	s.keyatt = get_attnum(heapoid, NameStr(*key));
	if (s.keyatt <= 0)
		ereport(ERROR, (errcode(ERRCODE_UNDEFINED_COLUMN),
						errmsg("column \"%s\" of relation %s does not exist", NameStr(*key),
							   get_rel_name(heapoid))));
	{
		/* the index's column, from the catalogs: the privileges come before any lock */
		HeapTuple tup = SearchSysCache1(INDEXRELID, ObjectIdGetDatum(indexoid));

		if (!HeapTupleIsValid(tup))
			elog(ERROR, "cache lookup failed for index %u", indexoid);
		s.fpatt = ((Form_pg_index) GETSTRUCT(tup))->indkey.values[0];
		ReleaseSysCache(tup);
	}
	/* an expression's column 0 has no privileges: the key's, then the check below refuses */
	if (!may_read(heapoid, AttributeNumberIsValid(s.fpatt) ? s.fpatt : s.keyatt, s.keyatt))
		ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
						errmsg("permission denied for relation %s", get_rel_name(heapoid))));
	s.heap = table_open(heapoid, AccessShareLock);
	s.index = index_open(indexoid, AccessShareLock);
	check_usable(s.heap, s.index, s.fpatt, radius);
	key_cast_init(&s.cast, get_atttype(heapoid, s.keyatt), NameStr(*key));

	InitMaterializedSRF(fcinfo, 0);
	s.rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	s.radius = radius;
	s.budget = (Size) work_mem * 1024;
	meta = palloc(sizeof(SimhashMetaPageData));
	simhash_read_meta(s.index, meta);
	s.tables = simhash_layout(meta->blocks, meta->bits, &ntables);
	s.snapshot = GetActiveSnapshot();
	s.fetch = table_index_fetch_begin(s.heap);
	s.slot = table_slot_create(s.heap, NULL);
	s.groupcxt =
		AllocSetContextCreate(CurrentMemoryContext, "simhash_pairs group", SIMHASH_CONTEXT_SIZES);
	s.cap = 1024;
	s.rows = palloc(s.cap * sizeof(GroupRow));
	strategy = GetAccessStrategy(BAS_BULKREAD);

	read_chain(s.index, strategy, meta->sealed_head, meta->sealed_chain, &pending);
	read_chain(s.index, strategy, meta->pending_head, meta->pending_chain, &pending);
	/* equal fingerprints agree on every prefix: table 0 meets every pair at radius 0 */
	for (s.t = 0; s.t < (radius == 0 ? 1 : ntables); s.t++)
		pair_table(&s, meta, &pending, strategy);

	ExecDropSingleTupleTableSlot(s.slot);
	table_index_fetch_end(s.fetch);
	FreeAccessStrategy(strategy);
	MemoryContextDelete(s.groupcxt);
	index_close(s.index, AccessShareLock);
	table_close(s.heap, AccessShareLock);
	return (Datum) 0;
}
