/*
 * simhash.c — what every part of the shim shares: the simhash.* settings of
 * the operators, and the two halves of the boundary to the C++ core: a core
 * status becomes an ERROR, and the core's interrupt callback reads
 * PostgreSQL's interrupt flags.  The module's entry point is module.c.
 */
#include "simhash.h"

#include <limits.h>

#include "utils/builtins.h"
#include "utils/guc.h"

/* simhash.max_distance: the radius of the % and ~% operators. */
int simhash_max_distance = 3;

/*
 * simhash.html_memory_limit: the most memory (kB) one HTML parse may take;
 * -1 for the parser's own bound (256 MB + 32 bytes per input byte).
 */
int simhash_html_memory_limit = -1;

/* Defines the shim's simhash.* settings (from _PG_init). */
void
simhash_define_settings(void)
{
	DefineCustomIntVariable("simhash.max_distance",
							"Radius of the % and ~% operators (Hamming distance).",
							"Rows within this many differing bits are similar.",
							&simhash_max_distance, 3, 0, SH_MAX_RADIUS, PGC_USERSET, 0, NULL, NULL,
							NULL);
	DefineCustomIntVariable("simhash.near_duplicates_progress",
							"Rows read and sets joined between progress NOTICEs of "
							"simhash_near_duplicates.",
							"0 reports only the counts of each stage.",
							&simhash_near_duplicates_progress, 100000, 0, INT_MAX, PGC_USERSET, 0,
							NULL, NULL, NULL);
	DefineCustomIntVariable("simhash.html_memory_limit",
							"Most memory one html_text or simhash_html parse may take.",
							"-1 leaves the parser's own bound: 256 MB plus 32 bytes per input "
							"byte.",
							&simhash_html_memory_limit, -1, -1, MAX_KILOBYTES, PGC_SUSET,
							GUC_UNIT_KB, NULL, NULL, NULL);
}

/* The one range check of a radius (see simhash.h). */
void
simhash_check_radius(int32 radius, const char *what)
{
	if (!sh_radius_valid(radius))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s %d is out of range 0..%d", what, radius, SH_MAX_RADIUS),
				 errhint("A radius is a number of differing bits, 0 to %d.", SH_MAX_RADIUS)));
}

/* The one range check of a Jaccard threshold (see simhash.h). */
void
simhash_check_threshold(double threshold)
{
	if (!(threshold > 0 && threshold <= 1))
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						errmsg("threshold %g is out of range", threshold),
						errhint("threshold is a Jaccard similarity above 0 and at most 1.")));
}

/*
 * Raise the ERROR of a non-OK core status (SQLSTATE by kind of failure);
 * "what" names the failing call in the message.  Returns only for SH_OK.
 */
void
simhash_report_status(sh_status status, const char *what)
{
	int code;

	switch (status)
	{
		case SH_OK:
			return;
		case SH_ERR_SYNTAX:
			code = ERRCODE_INVALID_TEXT_REPRESENTATION;
			break;
		case SH_ERR_RANGE:
			code = ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE;
			break;
		case SH_ERR_ARGUMENT:
			code = ERRCODE_INVALID_PARAMETER_VALUE;
			break;
		case SH_ERR_NOMEM:
			code = ERRCODE_OUT_OF_MEMORY;
			break;
		case SH_ERR_INTERRUPTED:
			code = ERRCODE_QUERY_CANCELED;
			break;
		default:
			code = ERRCODE_INTERNAL_ERROR;
			break;
	}
	ereport(ERROR, (errcode(code), errmsg("%s: %s", what, sh_status_message(status))));
}

/* The shim's sh_interrupt_fn (see simhash.h). */
int
simhash_interrupt_pending(void *arg)
{
	return INTERRUPTS_PENDING_CONDITION() && INTERRUPTS_CAN_BE_PROCESSED();
}

/*
 * simhash_raise(sqlstate text, message text, hint text): the argument errors
 * of the extension's PL/pgSQL functions.  A RAISE there, or an error of a
 * function it calls, carries one to four CONTEXT lines naming the
 * function's internals; this raises the error without them (the context
 * callbacks are dropped for this one error: every catcher of an ERROR
 * restores error_context_stack from its own saved copy).
 */
PG_FUNCTION_INFO_V1(simhash_raise);
Datum
simhash_raise(PG_FUNCTION_ARGS)
{
	const char *state;
	const char *hint = PG_ARGISNULL(2) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(2));

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
						errmsg("simhash_raise: the SQLSTATE and the message must not be NULL")));
	state = text_to_cstring(PG_GETARG_TEXT_PP(0));
	if (strlen(state) != 5 || strspn(state, "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ") != 5)
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						errmsg("simhash_raise: invalid SQLSTATE \"%s\"", state),
						errhint("A SQLSTATE is 5 digits or upper-case letters.")));
	error_context_stack = NULL;
	ereport(ERROR, (errcode(MAKE_SQLSTATE(state[0], state[1], state[2], state[3], state[4])),
					errmsg_internal("%s", text_to_cstring(PG_GETARG_TEXT_PP(1))),
					hint ? errhint("%s", hint) : 0));
	PG_RETURN_VOID();
}
