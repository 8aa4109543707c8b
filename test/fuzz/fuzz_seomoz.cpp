// The seomoz simhash-cpp fingerprint (simhash_seomoz): any bytes give SH_OK,
// the same value twice, and no memory error.
#include "fuzz.hpp"
#include "seomoz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = reinterpret_cast<const char *>(data);
    uint64_t fp1 = 0, fp2 = 0;
    FUZZ_CHECK(sh_fingerprint_seomoz(text, size, &fp1) == SH_OK);
    FUZZ_CHECK(sh_fingerprint_seomoz(text, size, &fp2) == SH_OK);
    FUZZ_CHECK(fp1 == fp2);
    return 0;
}
