// The simhash type's text input (sh_parse_hex, behind simhash_in): against a
// reference parser written here from the documented syntax (1..16 hex digits,
// an optional 0x, surrounding whitespace), and through a round trip with
// sh_format_hex (simhash_out).
#include "fuzz.hpp"
#include "simhash_core.h"

#include <cctype>
#include <cstring>
#include <string>

namespace
{

bool space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

bool reference(std::string s, uint64_t *out)
{
    size_t b = 0, e = s.size();
    while (b < e && space(s[b]))
        b++;
    while (e > b && space(s[e - 1]))
        e--;
    s = s.substr(b, e - b);
    if (s.size() >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
        s = s.substr(2);
    if (s.empty() || s.size() > 16)
        return false;
    uint64_t v = 0;
    for (char c : s)
    {
        if (!std::isxdigit(static_cast<unsigned char>(c)))
            return false;
        v = v * 16 + static_cast<uint64_t>(
                         std::isdigit(static_cast<unsigned char>(c)) ? c - '0' : std::tolower(c) - 'a' + 10);
    }
    *out = v;
    return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = reinterpret_cast<const char *>(data);
    uint64_t got = 0, want = 0;
    sh_status st = sh_parse_hex(text, size, &got);
    FUZZ_CHECK(st == SH_OK || st == SH_ERR_SYNTAX);
    bool ok = reference(std::string(text, size), &want);
    FUZZ_CHECK(ok == (st == SH_OK));
    if (ok)
    {
        FUZZ_CHECK(got == want);
        char buf[17];
        sh_format_hex(got, buf);
        FUZZ_CHECK(std::strlen(buf) == 16);
        uint64_t again = 0;
        FUZZ_CHECK(sh_parse_hex(buf, 16, &again) == SH_OK && again == got);
    }
    return 0;
}
