/*
 * fingerprint_html.c — html_text(html) and simhash_html(html, options...):
 * the visible text of a web page and its simhash(text) fingerprint (core:
 * src/core/fingerprint/html.cpp).
 *
 * The page is converted from the server encoding to UTF-8 for the parser;
 * html_text converts its result back, and a character the server encoding
 * cannot represent (say &#x4e2d; in a LATIN1 database, or the U+FFFD that
 * replaces a control character) becomes "?", while simhash_html, which never
 * leaves UTF-8, fingerprints it.
 */
#include "simhash.h"

#include "catalog/namespace.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "mb/pg_wchar.h"
#include "utils/builtins.h"
#include "utils/memutils.h"

#include "html.h"

/*
 * The parser polls simhash_interrupt_pending: a pending cancel or termination
 * stops it, so a pathological page (deep nesting is quadratic in gumbo) obeys
 * statement_timeout.
 */

/*
 * UTF-8 text in the server encoding, each character the server encoding
 * lacks replaced by "?".  The conversion runs in windows of the output
 * buffer; a window that converts nothing starts with such a character.
 */
static text *
utf8_to_server_text(const char *utf8, size_t len)
{
	int					 enc = GetDatabaseEncoding();
	Oid					 proc;
	StringInfoData		 out;
	unsigned char		 buf[65536];
	const unsigned char *src = (const unsigned char *) utf8;
	size_t				 left = len;
	text				*result;

	if (enc == PG_UTF8 || enc == PG_SQL_ASCII)
	{
		char *server = pg_any_to_server(utf8, (int) len, PG_UTF8);

		return cstring_to_text_with_len(server, server == utf8 ? (int) len : (int) strlen(server));
	}
	proc = FindDefaultConversionProc(PG_UTF8, enc);
	if (!OidIsValid(proc))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_FUNCTION),
				 errmsg("default conversion function for encoding \"%s\" to \"%s\" does not exist",
						pg_encoding_to_char(PG_UTF8), pg_encoding_to_char(enc))));
	initStringInfo(&out);
	while (left > 0)
	{
		int window = (int) Min(left, (size_t) 16384);
		int done = pg_do_encoding_conversion_buf(proc, PG_UTF8, enc, (unsigned char *) src, window,
												 buf, sizeof(buf), true);

		appendStringInfoString(&out, (const char *) buf);
		if (done == 0)
		{
			done = Min(pg_utf_mblen(src), (int) left);
			appendStringInfoChar(&out, '?');
		}
		src += done;
		left -= done;
		CHECK_FOR_INTERRUPTS();
	}
	result = cstring_to_text_with_len(out.data, out.len);
	pfree(out.data);
	return result;
}

/* The parser's budget: simhash.html_memory_limit, or 0 for the core's own. */
static size_t
html_memory_limit(void)
{
	return simhash_html_memory_limit < 0 ? 0 : (size_t) simhash_html_memory_limit * 1024;
}

/* Raises the error of a core status; 53200 names the setting that bounds the parse. */
static void
html_report_status(sh_status st, const char *what, size_t len)
{
	if (st == SH_ERR_NOMEM)
		ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY),
						errmsg("%s: out of memory parsing a page of %zu bytes", what, len),
						simhash_html_memory_limit >= 0
							? errhint("The parse may take simhash.html_memory_limit = %d kB; a "
									  "superuser can raise it.",
									  simhash_html_memory_limit)
							: errhint("The parse may take 256 MB plus 32 bytes per input byte; "
									  "simhash.html_memory_limit can lower it.")));
	simhash_report_status(st, what);
}

/* html_text(html): the visible text of a page, in the server encoding. */
PG_FUNCTION_INFO_V1(simhash_html_text);
Datum
simhash_html_text(PG_FUNCTION_ARGS)
{
	size_t len, out_len = 0;
	char  *utf8 = simhash_text_to_utf8(PG_GETARG_TEXT_PP(0), &len);
	char  *core_text = NULL;
	char  *copy;

	sh_status st;

	while ((st = sh_html_text(utf8, len, html_memory_limit(), simhash_interrupt_pending, NULL,
							  &core_text, &out_len)) == SH_ERR_INTERRUPTED)
		CHECK_FOR_INTERRUPTS();
	if (st != SH_OK)
		html_report_status(st, "html_text(text)", len);

	/* core_text is malloc'ed: copy it out before anything can ereport. */
	copy =
		out_len < MaxAllocSize - VARHDRSZ ? palloc_extended(out_len + 1, MCXT_ALLOC_NO_OOM) : NULL;
	if (copy != NULL)
		memcpy(copy, core_text, out_len + 1);
	sh_free(core_text);
	if (copy == NULL)
		ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY),
						errmsg("html_text(text): out of memory for %zu bytes of text", out_len)));

	PG_RETURN_TEXT_P(utf8_to_server_text(copy, out_len));
}

/* simhash_html(html, shingle, tokens, casefold) = simhash(html_text(html), ...) */
PG_FUNCTION_INFO_V1(simhash_html);
Datum
simhash_html(PG_FUNCTION_ARGS)
{
	sh_text_options opts;
	size_t			len;
	char		   *utf8;
	uint64_t		fp;
	sh_status		st;

	utf8 = simhash_text_arguments(fcinfo, &opts, &len);
	while ((st = sh_fingerprint_html(utf8, len, html_memory_limit(), &opts,
									 simhash_interrupt_pending, NULL, &fp)) == SH_ERR_INTERRUPTED)
		CHECK_FOR_INTERRUPTS();
	if (st != SH_OK)
		html_report_status(st, "simhash_html(text)", len);
	PG_RETURN_SIMHASH(fp);
}
