// bits.cpp — Hamming distance, hex text form, bit voting, and the helpers every
// part of the core shares (status messages, sh_free, sh_binomial).
#include "simhash_core.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace
{

// sum + err += x, err gathering the rounding error of each addition (Neumaier).
void neumaier_add(double &sum, double &err, double x)
{
    const double t = sum + x;
    err += std::fabs(sum) >= std::fabs(x) ? (sum - t) + x : (x - t) + sum;
    sum = t;
}

}  // namespace

extern "C"
{
    const char *sh_status_message(sh_status status) noexcept
    {
        switch (status)
        {
            case SH_OK:
                return "success";
            case SH_ERR_SYNTAX:
                return "invalid syntax";
            case SH_ERR_RANGE:
                return "value out of range";
            case SH_ERR_ARGUMENT:
                return "invalid argument";
            case SH_ERR_NOMEM:
                return "out of memory";
            case SH_ERR_INTERNAL:
                return "internal error in simhash core";
            case SH_ERR_INTERRUPTED:
                return "canceled";
        }
        return "unknown status";
    }

    void sh_free(void *p) noexcept
    {
        std::free(p);
    }

    int64_t sh_binomial(int n, int k) noexcept
    {
        if (n < 0 || n > 64)
            return -1;
        if (k < 0 || k > n)
            return 0;
        // r = C(n - k + i, i) after step i, exact; the product before the
        // division can exceed 64 bits (C(63, 31) * 64), the result cannot.
        unsigned __int128 r = 1;
        for (int i = 1; i <= k; i++)
            r = r * static_cast<unsigned>(n - k + i) / static_cast<unsigned>(i);
        return static_cast<int64_t>(r);
    }

    int sh_distance(uint64_t a, uint64_t b) noexcept
    {
        return __builtin_popcountll(a ^ b);
    }

    // The value of a hex digit, -1 for any other character.
    static int hex_value(unsigned char c) noexcept
    {
        if (c >= '0' && c <= '9')
            return c - '0';
        if (c >= 'a' && c <= 'f')
            return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
            return c - 'A' + 10;
        return -1;
    }

    // C locale white space, which sh_parse_hex skips around the digits.
    static bool is_space(unsigned char c) noexcept
    {
        return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
    }

    sh_status sh_parse_hex(const char *text, size_t len, uint64_t *out) noexcept
    {
        size_t begin = 0, end = len;
        while (begin < end && is_space(static_cast<unsigned char>(text[begin])))
            begin++;
        while (end > begin && is_space(static_cast<unsigned char>(text[end - 1])))
            end--;
        if (end - begin >= 2 && text[begin] == '0' && (text[begin + 1] == 'x' || text[begin + 1] == 'X'))
            begin += 2;
        size_t digits = end - begin;
        if (digits == 0 || digits > 16)
            return SH_ERR_SYNTAX;
        uint64_t value = 0;
        for (size_t i = begin; i < end; i++)
        {
            int v = hex_value(static_cast<unsigned char>(text[i]));
            if (v < 0)
                return SH_ERR_SYNTAX;
            value = (value << 4) | static_cast<uint64_t>(v);
        }
        *out = value;
        return SH_OK;
    }

    void sh_format_hex(uint64_t value, char *out) noexcept
    {
        static const char digits[] = "0123456789abcdef";
        for (int i = 15; i >= 0; i--)
        {
            out[i] = digits[value & 0xF];
            value >>= 4;
        }
        out[16] = '\0';
    }

    void sh_vote_add(double *sums, uint64_t feature, double weight) noexcept
    {
        for (int i = 0; i < SH_BITS; i++)
            sums[i] += ((feature >> i) & 1) ? weight : -weight;
    }

    uint64_t sh_vote_result(const double *sums) noexcept
    {
        uint64_t result = 0;
        for (int i = 0; i < SH_BITS; i++)
            if (sums[i] > 0)
                result |= uint64_t{1} << i;
        return result;
    }

    void sh_vote_sums_add(sh_vote_sums *v, uint64_t feature, double weight) noexcept
    {
        const double w = std::ldexp(weight, -64);
        for (int i = 0; i < SH_BITS; i++)
            neumaier_add(v->hi[i], v->lo[i], ((feature >> i) & 1) ? w : -w);
    }

    void sh_vote_sums_merge(sh_vote_sums *into, const sh_vote_sums *from) noexcept
    {
        for (int i = 0; i < SH_BITS; i++)
        {
            neumaier_add(into->hi[i], into->lo[i], from->hi[i]);
            neumaier_add(into->hi[i], into->lo[i], from->lo[i]);
        }
    }

    uint64_t sh_vote_sums_result(const sh_vote_sums *v) noexcept
    {
        uint64_t result = 0;
        for (int i = 0; i < SH_BITS; i++)
            if (v->hi[i] + v->lo[i] > 0)
                result |= uint64_t{1} << i;
        return result;
    }

    uint64_t sh_compute(const uint64_t *features, size_t n) noexcept
    {
        // Integer counts keep this exact for any n.
        uint64_t counts[SH_BITS] = {0};
        for (size_t f = 0; f < n; f++)
            for (int i = 0; i < SH_BITS; i++)
                counts[i] += (features[f] >> i) & 1;
        uint64_t result = 0;
        for (int i = 0; i < SH_BITS; i++)
            if (counts[i] * 2 > n)
                result |= uint64_t{1} << i;
        return result;
    }

}  // extern "C"
