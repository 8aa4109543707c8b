/*
 * simhash.c — the module: what PostgreSQL sees of the library as a whole
 * (PG_MODULE_MAGIC), and the two halves of the boundary to the C++ core that
 * every part of the shim shares: a core status becomes an ERROR, and the
 * core's interrupt callback reads PostgreSQL's interrupt flags.
 */
#include "simhash.h"

PG_MODULE_MAGIC;

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
