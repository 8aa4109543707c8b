// lookup3.cpp — hashlittle2 (see lookup3.h).
#include "lookup3.h"

#include <cstring>

namespace
{

// Rotate left by k bits (0 < k < 32).
inline uint32_t rot(uint32_t x, int k)
{
    return (x << k) | (x >> (32 - k));
}

// Little-endian 32-bit word at p, whatever the host order and alignment.
inline uint32_t le32(const unsigned char *p)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint32_t w;
    std::memcpy(&w, p, 4);
    return w;
#else
    return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
#endif
}

// The first n (< 4) bytes at p as a little-endian word, the rest zero.
inline uint32_t le_partial(const unsigned char *p, size_t n)
{
    uint32_t w = 0;
    for (size_t i = 0; i < n; i++)
        w |= uint32_t{p[i]} << (8 * i);
    return w;
}

// lookup3's mix(): stirs three words together after each 12-byte block.
inline void mix(uint32_t &a, uint32_t &b, uint32_t &c)
{
    a -= c;
    a ^= rot(c, 4);
    c += b;
    b -= a;
    b ^= rot(a, 6);
    a += c;
    c -= b;
    c ^= rot(b, 8);
    b += a;
    a -= c;
    a ^= rot(c, 16);
    c += b;
    b -= a;
    b ^= rot(a, 19);
    a += c;
    c -= b;
    c ^= rot(b, 4);
    b += a;
}

// lookup3's final(): the last, stronger mixing of the three words.
inline void final_mix(uint32_t &a, uint32_t &b, uint32_t &c)
{
    c ^= b;
    c -= rot(b, 14);
    a ^= c;
    a -= rot(c, 11);
    b ^= a;
    b -= rot(a, 25);
    c ^= b;
    c -= rot(b, 16);
    a ^= c;
    a -= rot(c, 4);
    b ^= a;
    b -= rot(a, 14);
    c ^= b;
    c -= rot(b, 24);
}

// Adds the last 0..12 bytes to (a, b, c) as three zero-padded words.
inline void add_tail(const unsigned char *k, size_t n, uint32_t &a, uint32_t &b, uint32_t &c)
{
    uint32_t w[3] = {0, 0, 0};
    for (size_t i = 0; i < 3 && 4 * i < n; i++)
    {
        size_t left = n - 4 * i;
        w[i] = left >= 4 ? le32(k + 4 * i) : le_partial(k + 4 * i, left);
    }
    a += w[0];
    b += w[1];
    c += w[2];
}

}  // namespace

extern "C"
{
    void sh_hashlittle2(const void *key, size_t length, uint32_t *pc, uint32_t *pb) noexcept
    {
        const auto *k = static_cast<const unsigned char *>(key);
        uint32_t a, b, c;
        a = b = c = 0xdeadbeef + static_cast<uint32_t>(length) + *pc;
        c += *pb;

        while (length > 12)
        {
            a += le32(k);
            b += le32(k + 4);
            c += le32(k + 8);
            mix(a, b, c);
            length -= 12;
            k += 12;
        }
        if (length == 0)  // zero-length tails need no mixing
        {
            *pc = c;
            *pb = b;
            return;
        }
        add_tail(k, length, a, b, c);
        final_mix(a, b, c);
        *pc = c;
        *pb = b;
    }

    uint64_t sh_jenkins64(const void *key, size_t length) noexcept
    {
        uint32_t c = 0, b = 0;
        sh_hashlittle2(key, length, &c, &b);
        // (c << 32) | b, written so clang-analyzer does not misread the shift
        return static_cast<uint64_t>(c) * 0x100000000ULL + b;
    }

}  // extern "C"
