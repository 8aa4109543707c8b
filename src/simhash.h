/*
 * simhash.h — shared declarations of the C shim.
 *
 * A simhash is an unsigned 64-bit value passed by value; on the SQL side it
 * has the size and alignment of bigint, so Datum conversions are bit-exact.
 */
#ifndef SIMHASH_H
#define SIMHASH_H

#include "postgres.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "port/pg_bitutils.h"

#include "compat.h"

#include "simhash_core.h"

typedef uint64 simhash;

#define DatumGetSimhash(X)	 ((simhash) DatumGetInt64(X))
#define SimhashGetDatum(X)	 Int64GetDatum((int64) (X))
#define PG_GETARG_SIMHASH(n) DatumGetSimhash(PG_GETARG_DATUM(n))
#define PG_RETURN_SIMHASH(x) return SimhashGetDatum(x)

/* Hamming distance: the number of differing bits (0..64). */
static inline int
simhash_hamming(simhash a, simhash b)
{
	return pg_popcount64(a ^ b);
}

/* simhash.max_distance (simhash.c): the radius of the % and ~% operators. */
extern int simhash_max_distance;
extern int simhash_html_memory_limit;

/*
 * simhash.near_duplicates_progress (batch/near_duplicates_result.c): rows
 * read and sets joined between the progress NOTICEs of
 * simhash_near_duplicates; 0 for none.
 */
extern int simhash_near_duplicates_progress;

/*
 * ERROR (22023) unless radius is 0..SH_MAX_RADIUS; "what" names the argument
 * (radius, max_distance) in the message.  Every SQL-level radius goes here.
 */
extern void simhash_check_radius(int32 radius, const char *what);

/*
 * The elements of a shingle-set argument (what simhash_shingles returns):
 * ERROR 22023 unless it is one-dimensional (or empty) bigint without NULLs;
 * argno names the argument.  simhash_check_shingle_order: ERROR 22023 unless
 * the first len elements ascend strictly as unsigned numbers.
 * (fingerprint_similarity.c)
 */
struct ArrayType;
extern const uint64 *simhash_shingle_set_elements(struct ArrayType *arr, int argno, int *n);
extern void			 simhash_check_shingle_order(const uint64 *v, int len, int argno);

/* ERROR (22023) unless 0 < threshold <= 1: the Jaccard threshold of the verified joins. */
extern void simhash_check_threshold(double threshold);

/*
 * The init hooks _PG_init (module.c) runs: the shim's simhash.* settings
 * (simhash.c), and the index access method's reloptions and settings
 * (am/options.c).  Declared here, where the module sees them, so that the
 * module depends on no header of the access method.
 */
extern void simhash_define_settings(void);
extern void simhash_am_init(void);

/* Turn a non-OK core status into an ERROR; "what" names the failing call. */
extern void simhash_report_status(sh_status status, const char *what);

/*
 * The shim's sh_interrupt_fn (simhash_core.h), passed to every interruptible
 * core call: nonzero when a cancel or termination is pending and may be
 * served here.  Reads flags only; never calls into PostgreSQL.
 */
extern int simhash_interrupt_pending(void *arg);

/* fingerprint_text.c: helpers shared by the text fingerprint functions. */
struct sh_text_options;
extern char *
simhash_text_arguments(FunctionCallInfo fcinfo, struct sh_text_options *opts, size_t *len);
extern char *simhash_text_to_utf8(struct varlena *t, size_t *len);
extern void
simhash_text_options(FunctionCallInfo fcinfo, int first_arg, struct sh_text_options *opts);

/*
 * Sizes of the extension's own memory contexts.  They are deliberately not
 * one of the allocator's two free-list classes (default, small), so deleting
 * a context gives its blocks back to malloc at once instead of keeping it for
 * reuse: under valgrind memcheck (make valgrind, stock server without
 * USE_VALGRIND) a use of memory after MemoryContextDelete() is then a read of
 * freed memory and is reported.  The cost is one malloc per context.
 */
#define SIMHASH_CONTEXT_SIZES 0, (Size) 16 * 1024, (Size) 8 * 1024 * 1024

#define SH_CHECK(call, what) \
	do \
	{ \
		sh_status sh_check_status_ = (call); \
		if (sh_check_status_ != SH_OK) \
			simhash_report_status(sh_check_status_, (what)); \
	} while (0)

/*
 * SH_CHECK for a core call given simhash_interrupt_pending.  When the core
 * stopped for an interrupt, the interrupt is served here, after every C++
 * frame has returned (normally raising the cancel or termination error); if
 * it turns out to be harmless, the call runs again from the start.
 */
#define SH_CHECK_INTERRUPTIBLE(call, what) \
	do \
	{ \
		sh_status sh_check_status_; \
		while ((sh_check_status_ = (call)) == SH_ERR_INTERRUPTED) \
			CHECK_FOR_INTERRUPTS(); \
		if (sh_check_status_ != SH_OK) \
			simhash_report_status(sh_check_status_, (what)); \
	} while (0)

#endif /* SIMHASH_H */
