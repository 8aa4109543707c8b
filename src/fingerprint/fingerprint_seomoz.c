/*
 * fingerprint_seomoz.c — simhash_seomoz(text): the text fingerprint of the
 * classic seomoz simhash-cpp library (core: src/core/fingerprint/seomoz.cpp).
 *
 * The core reads bytes and only ASCII letters make tokens.  Every server
 * encoding is a superset of ASCII whose other characters are made of bytes
 * >= 0x80, so the text is fingerprinted as stored, without conversion, and
 * gives the same value in every database encoding.
 */
#include "simhash.h"

#include "seomoz.h"

/* simhash_seomoz(text): the seomoz fingerprint of the bytes as stored. */
PG_FUNCTION_INFO_V1(simhash_seomoz);
Datum
simhash_seomoz(PG_FUNCTION_ARGS)
{
	text	*doc = PG_GETARG_TEXT_PP(0);
	uint64_t fp;

	SH_CHECK(sh_fingerprint_seomoz(VARDATA_ANY(doc), VARSIZE_ANY_EXHDR(doc), &fp),
			 "simhash_seomoz(text)");
	PG_RETURN_SIMHASH(fp);
}
