// The text fingerprint (simhash(text)): any bytes and options give SH_OK or
// SH_ERR_ARGUMENT (bad options only), the same value twice, and no memory
// error (ASan/UBSan).  The first two bytes choose the options.
#include "fuzz.hpp"
#include "text.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    FuzzBytes in{data, size};
    sh_text_options o;
    sh_text_options_default(&o);
    uint8_t a = in.take(), b = in.take();
    o.shingle = a & 0x80 ? a & 0x7F : 1 + a % 8;  // sometimes invalid (0, > 64)
    o.tokens = b & 1 ? SH_TOKENS_CHARS : SH_TOKENS_WORDS;
    o.casefold = (b >> 1) & 1;
    const char *text = reinterpret_cast<const char *>(in.data);
    uint64_t fp1 = 0, fp2 = 0;
    sh_status st = sh_fingerprint_text(text, in.size, &o, &fp1);
    bool valid = o.shingle >= 1 && o.shingle <= SH_MAX_SHINGLE;
    FUZZ_CHECK(st == (valid ? SH_OK : SH_ERR_ARGUMENT));
    if (valid)
    {
        FUZZ_CHECK(sh_fingerprint_text(text, in.size, &o, &fp2) == SH_OK);
        FUZZ_CHECK(fp1 == fp2);
    }
    return 0;
}
