// The HTML pipeline (html_text, simhash_html): any bytes give valid UTF-8
// text, and the page's fingerprint is the text fingerprint of that text, as
// documented (simhash_html(h) = simhash(html_text(h))).  The first two bytes
// choose the text options.
#include "fuzz.hpp"
#include "html.h"
#include "text.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    FuzzBytes in{data, size};
    sh_text_options o;
    sh_text_options_default(&o);
    uint8_t a = in.take(), b = in.take();
    o.shingle = 1 + a % 4;
    o.tokens = b & 1 ? SH_TOKENS_CHARS : SH_TOKENS_WORDS;
    o.casefold = (b >> 1) & 1;
    const char *html = reinterpret_cast<const char *>(in.data);
    char *text = nullptr;
    size_t len = 0;
    FUZZ_CHECK(sh_html_text(html, in.size, 0, nullptr, nullptr, &text, &len) == SH_OK);
    FUZZ_CHECK(text != nullptr && text[len] == '\0');
    FUZZ_CHECK(valid_utf8(reinterpret_cast<const unsigned char *>(text), len));
    uint64_t from_html = 0, from_text = 0;
    FUZZ_CHECK(sh_fingerprint_html(html, in.size, 0, &o, nullptr, nullptr, &from_html) == SH_OK);
    FUZZ_CHECK(sh_fingerprint_text(text, len, &o, &from_text) == SH_OK);
    FUZZ_CHECK(from_html == from_text);
    sh_free(text);
    return 0;
}
