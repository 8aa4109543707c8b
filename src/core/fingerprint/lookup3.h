/*
 * lookup3.h — Bob Jenkins' lookup3 hashlittle2 (public domain algorithm,
 * May 2006), written from its description for the seomoz-compatible text
 * fingerprint.  The result does not depend on the machine's byte order or
 * on the key's alignment: the key is read as little-endian 32-bit words, as
 * hashlittle2 does on the little-endian machines the seomoz library ran on.
 */
#ifndef SIMHASH_LOOKUP3_H
#define SIMHASH_LOOKUP3_H

#include "simhash_core.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * hashlittle2: *pc and *pb are the primary and secondary initial values on
 * entry and the primary and secondary 32-bit hashes on return.
 */
void		sh_hashlittle2(const void *key, size_t length, uint32_t *pc, uint32_t *pb) SH_NOEXCEPT;

/* seomoz simhash-cpp's 64-bit token hash: hashlittle2 with both initial
 * values 0, primary result in the high half: (c << 32) | b. */
uint64_t	sh_jenkins64(const void *key, size_t length) SH_NOEXCEPT;

#ifdef __cplusplus
}
#endif

#endif							/* SIMHASH_LOOKUP3_H */
