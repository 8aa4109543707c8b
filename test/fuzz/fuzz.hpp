// fuzz.hpp — what the libFuzzer targets share: a check that aborts (libFuzzer
// then saves the input as a crash) and a byte reader for target options.
#ifndef SIMHASH_FUZZ_HPP
#define SIMHASH_FUZZ_HPP

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#define FUZZ_CHECK(cond)                                                                  \
    do                                                                                    \
    {                                                                                     \
        if (!(cond))                                                                      \
        {                                                                                 \
            std::fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
            std::abort();                                                                 \
        }                                                                                 \
    } while (0)

// Takes option bytes off the front of the input (zeros once it is used up).
struct FuzzBytes
{
    const uint8_t *data;
    size_t size;

    uint8_t take()
    {
        if (size == 0)
            return 0;
        size--;
        return *data++;
    }
};

// Whether [p, p + n) is well-formed UTF-8 (no overlongs, surrogates or
// code points above U+10FFFF).
inline bool valid_utf8(const unsigned char *p, size_t n)
{
    size_t i = 0;
    while (i < n)
    {
        unsigned c = p[i];
        size_t len;
        uint32_t cp, min;
        if (c < 0x80)
        {
            i++;
            continue;
        }
        if ((c & 0xE0) == 0xC0)
            len = 2, cp = c & 0x1F, min = 0x80;
        else if ((c & 0xF0) == 0xE0)
            len = 3, cp = c & 0x0F, min = 0x800;
        else if ((c & 0xF8) == 0xF0)
            len = 4, cp = c & 0x07, min = 0x10000;
        else
            return false;
        if (i + len > n)
            return false;
        for (size_t k = 1; k < len; k++)
        {
            if ((p[i + k] & 0xC0) != 0x80)
                return false;
            cp = (cp << 6) | (p[i + k] & 0x3F);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return false;
        i += len;
    }
    return true;
}

#endif  // SIMHASH_FUZZ_HPP
