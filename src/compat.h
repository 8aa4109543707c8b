/*
 * compat.h — what differs between the PostgreSQL major versions the
 * extension builds against (tested: 15 and 18; 16 and 17 lie between), each
 * difference behind one small named macro, type or inline function.  This is
 * the only file that tests PG_VERSION_NUM: code elsewhere calls the names
 * below, written as the newest server spells the call where it can.
 *
 * Included by simhash.h, so by every file of the C shim and the access method.
 */
#ifndef SIMHASH_COMPAT_H
#define SIMHASH_COMPAT_H

#include "postgres.h"
#include "fmgr.h"

#if PG_VERSION_NUM < 150000
#error "simhash needs PostgreSQL 15 or later"
#endif

/*
 * Varlena macros (VARDATA_ANY, SET_VARSIZE, ...): since 16 in varatt.h,
 * which postgres.h no longer includes.
 */
#if PG_VERSION_NUM >= 160000
#include "varatt.h"
#endif

/*
 * The module's magic block.  Since 18 it can carry the module's name and
 * version, which pg_get_loaded_modules() reports; SIMHASH_EXTVERSION comes
 * from the Makefile (EXTVERSION).
 */
#ifndef SIMHASH_EXTVERSION
#define SIMHASH_EXTVERSION "unknown"
#endif
#if PG_VERSION_NUM >= 180000
#define SIMHASH_MODULE_MAGIC PG_MODULE_MAGIC_EXT(.name = "simhash", .version = SIMHASH_EXTVERSION)
#else
#define SIMHASH_MODULE_MAGIC PG_MODULE_MAGIC
#endif

/*
 * The physical identity of a relation (its tablespace, database and file
 * number): RelFileNode until 15, RelFileLocator since 16 (rd_node became
 * rd_locator, smgr_rnode.node became smgr_rlocator.locator).
 */
#if PG_VERSION_NUM >= 160000
#include "storage/relfilelocator.h"
typedef RelFileLocator SimhashRelFile;
#define SimhashRelationFile(rel)   ((rel)->rd_locator)
#define SimhashSmgrFile(smgr)	   ((smgr)->smgr_rlocator.locator)
#define SimhashRelFileEquals(a, b) RelFileLocatorEquals(a, b)
#else
#include "storage/relfilenode.h"
typedef RelFileNode SimhashRelFile;
#define SimhashRelationFile(rel)   ((rel)->rd_node)
#define SimhashSmgrFile(smgr)	   ((smgr)->smgr_rnode.node)
#define SimhashRelFileEquals(a, b) RelFileNodeEquals(a, b)
#endif

/*
 * A page image written with smgrwrite()/smgrextend(): since 16 it must be
 * aligned for direct I/O (PG_IO_ALIGN_SIZE, asserted in md.c), which
 * PGIOAlignedBlock is and PGAlignedBlock is not (memory holding such pages:
 * simhash_palloc_io_aligned).  15 has no such type and no such requirement.
 */
#if PG_VERSION_NUM < 160000
typedef PGAlignedBlock PGIOAlignedBlock;
#define simhash_palloc_io_aligned(size) palloc(size)
#else
#define simhash_palloc_io_aligned(size) palloc_aligned((size), PG_IO_ALIGN_SIZE, 0)
#endif

/*
 * Whether a role owns a relation: pg_class_ownercheck() until 15, the
 * generic object_ownercheck() since 16 (the caller includes utils/acl.h and
 * catalog/pg_class.h).
 */
#if PG_VERSION_NUM >= 160000
#define simhash_class_ownercheck(relid, roleid) object_ownercheck(RelationRelationId, relid, roleid)
#else
#define simhash_class_ownercheck(relid, roleid) pg_class_ownercheck(relid, roleid)
#endif

/*
 * VACUUM's cost-based delay, from the index's own loops: 18 added the
 * argument is_analyze (false: this is VACUUM's work).  The caller includes
 * commands/vacuum.h.
 */
#if PG_VERSION_NUM >= 180000
#define simhash_vacuum_delay_point() vacuum_delay_point(false)
#else
#define simhash_vacuum_delay_point() vacuum_delay_point()
#endif

/*
 * Read streams (storage/read_stream.h, since 17): a sequence of blocks that
 * a callback names ahead of use is read ahead (and neighbouring blocks in
 * one system call), so VACUUM and merges do not wait for each page in turn
 * when the index is not in shared buffers.  src/am/readahead.c uses one
 * when SIMHASH_HAVE_READ_STREAM is defined and reads block by block
 * otherwise; building with -DSIMHASH_NO_READ_STREAM takes the block-by-block
 * path on 17+ too (to measure the difference, bench/vacuum_stream.sh).
 */
#if PG_VERSION_NUM >= 170000 && !defined(SIMHASH_NO_READ_STREAM)
#define SIMHASH_HAVE_READ_STREAM 1
#endif

/*
 * Bulk writes of a new relation (storage/bulk_write.h, since 17): pages
 * written outside shared buffers, WAL-logged in batches, synced at the end
 * only if a checkpoint started meanwhile.  src/am/bulkwrite.c uses them when
 * SIMHASH_HAVE_BULK_WRITE is defined; before 17 it does the same steps
 * itself (smgrextend of private pages, log_newpages batches, and at the end
 * smgrimmedsync only if a checkpoint started meanwhile).
 */
#if PG_VERSION_NUM >= 170000
#define SIMHASH_HAVE_BULK_WRITE 1
#endif

/*
 * Extending a relation by many zeroed blocks in one call (smgrzeroextend,
 * since 16: fallocate where it can).  15 has no such call: bulkwrite.c
 * writes the last block only, and those before it read as zeroes.
 */
#if PG_VERSION_NUM >= 160000
#define SIMHASH_HAVE_ZEROEXTEND 1
#endif

/*
 * The IndexAmRoutine fields newer servers added, set to what simhash is
 * (makeNode zeroes them too: this says so where the handler is read).
 * 16 amsummarizing: false, every row is indexed, so an UPDATE that changes
 *    the fingerprint is never HOT.
 * 17 aminsertcleanup: none, aminsert keeps no state between rows.
 * 18 amgettreeheight: none.  The planner stores the height in IndexOptInfo
 *    for the AM's own cost estimate (btree's descent cost); simhash_costestimate
 *    reads the metapage for the run count, rows and pending entries it needs,
 *    so a height would be one more metapage read per planning, unused.
 * 18 amcanhash, amconsistentequality, amconsistentordering: false, and
 *    amtranslatestrategy/amtranslatecmptype: none.  They describe operator
 *    families whose members are equality or ordering comparisons (btree,
 *    hash; GiST's WITHOUT OVERLAPS); "within distance k" and <~> are neither,
 *    so no merge join, replica-identity lookup or temporal key may use them.
 * amcanbuildparallel (17) is set by the handler with the parallel build.
 */
#if PG_VERSION_NUM >= 180000
#define simhash_am_set_newer_fields(am) \
	do \
	{ \
		(am)->amsummarizing = false; \
		(am)->aminsertcleanup = NULL; \
		(am)->amgettreeheight = NULL; \
		(am)->amcanhash = false; \
		(am)->amconsistentequality = false; \
		(am)->amconsistentordering = false; \
		(am)->amtranslatestrategy = NULL; \
		(am)->amtranslatecmptype = NULL; \
	} while (0)
#elif PG_VERSION_NUM >= 170000
#define simhash_am_set_newer_fields(am) \
	do \
	{ \
		(am)->amsummarizing = false; \
		(am)->aminsertcleanup = NULL; \
	} while (0)
#elif PG_VERSION_NUM >= 160000
#define simhash_am_set_newer_fields(am) ((am)->amsummarizing = false)
#else
#define simhash_am_set_newer_fields(am) ((void) (am))
#endif

/*
 * Parallel CREATE INDEX.  Since 17 an access method says it can build in
 * parallel (amcanbuildparallel) and index_build() plans the workers
 * (ii_ParallelWorkers); until 16 the server plans workers for btree only, so
 * the build plans them itself with the same plan_create_index_workers().
 * Either way ambuild runs its own parallel context.
 */
#if PG_VERSION_NUM >= 170000
#define SIMHASH_SERVER_PLANS_BUILD_WORKERS		true
#define simhash_set_canbuildparallel(am, value) ((am)->amcanbuildparallel = (value))
#else
#define SIMHASH_SERVER_PLANS_BUILD_WORKERS		false
#define simhash_set_canbuildparallel(am, value) ((void) (value))
#endif

#endif /* SIMHASH_COMPAT_H */
