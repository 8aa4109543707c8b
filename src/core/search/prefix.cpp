// prefix.cpp — prefix tokens of shingle sets in one fixed global order (see
// prefix.h).
#include "prefix.h"

#include "boundary.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>
#include <vector>

namespace
{

// The built-in list of frequent shingles: {hash, rank}, ascending by hash.
struct Frequent
{
    uint64_t hash;
    uint32_t rank;
};
const Frequent kFrequent[] = {
#include "prefix_frequent.inc"
};
constexpr size_t kFrequentCount = sizeof(kFrequent) / sizeof(kFrequent[0]);

// A bijective 64-bit mix (the finalizer of splitmix64).
uint64_t mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

// The position of h in the global order (ties, which need two hashes whose
// mixes differ in the lowest bit only, go by the hash): the caller's listed
// shingles last, before them the built-in frequent ones, each list's most
// frequent last; all others first, by their mix.
uint64_t order_key(uint64_t h, const sh_prefix_order *order)
{
    constexpr uint64_t kListed = uint64_t{1} << 63, kCaller = uint64_t{1} << 62;
    if (order != nullptr && order->n > 0)
    {
        const uint64_t *end = order->hashes + order->n;
        const uint64_t *c = std::lower_bound(order->hashes, end, h);
        if (c != end && *c == h)
            return kListed | kCaller | (uint64_t{0xFFFFFFFF} - order->ranks[c - order->hashes]);
    }
    const Frequent *end = kFrequent + kFrequentCount;
    const Frequent *f =
        std::lower_bound(kFrequent, end, h, [](const Frequent &e, uint64_t v) { return e.hash < v; });
    if (f != end && f->hash == h)
        return kListed | (uint64_t{0xFFFFFFFF} - f->rank);
    return mix(h) >> 1;
}

uint64_t token(uint64_t h, uint32_t size_class)
{
    return mix(h ^ mix(0x9e3779b97f4a7c15ULL * (uint64_t{size_class} + 1)));
}

// The second token of a hash of a small set (see prefix.h): bijective in h
// for a class, as token() is.
uint64_t second_token(uint64_t first)
{
    return mix(first ^ 0x5365636f6e64746bULL);  // "Secondtk"
}

constexpr uint64_t kEmptyToken = 0x656d707479207365ULL;  // "empty se": the empty set's first token

bool threshold_valid(double t)
{
    return t > 0 && t <= 1;
}

// The sizes a set may have to reach J >= t with a set of n: t n .. n / t.
std::pair<size_t, size_t> size_range(size_t n, double t)
{
    double f = t - SH_PREFIX_SLACK;
    double lo = std::ceil(f * static_cast<double>(n));
    double hi = std::floor(static_cast<double>(n) / f);
    return {lo < 1 ? 1 : static_cast<size_t>(lo), static_cast<size_t>(hi)};
}

// A set of n small enough that a similar set may share a single hash with
// it (J = 1 / (n + m - 1) >= t needs n <= 1 / t): its tokens come twice.
bool small_set(size_t n, double t)
{
    return (t - SH_PREFIX_SLACK) * static_cast<double>(n) <= 1.0;
}

// The number of leading hashes whose tokens are stored or probed: one more
// than the prefix, so that a pair with two or more common hashes shares two
// of them (at most n).
size_t kept(size_t n, double t)
{
    return std::min(n, sh_prefix_length(n, t) + 1);
}

// Appends the token of each of the first p hashes of prefix in class c, and
// the second token too for a small set.
void tag(const std::vector<uint64_t> &prefix, size_t p, uint32_t c, bool twice, std::vector<uint64_t> &tokens)
{
    for (size_t i = 0; i < p && i < prefix.size(); i++)
    {
        uint64_t first = token(prefix[i], c);
        tokens.push_back(first);
        if (twice)
            tokens.push_back(second_token(first));
    }
}

// The smallest set size of size class c (the inverse of sh_prefix_size_class).
size_t class_min(uint32_t c)
{
    if (c < 8)
        return c;
    if (c < 24)  // classes 8 to 23 hold no size: 8 is class 24
        return 8;
    uint32_t e = c / 8;
    return static_cast<size_t>(8 + c % 8) << (e - 3);
}

// The first p hashes of set in the global order, into prefix (in that order
// when ordered is set).
void leading(const uint64_t *set, size_t n, size_t p, const sh_prefix_order *order, bool ordered,
             std::vector<uint64_t> &prefix)
{
    std::vector<std::pair<uint64_t, uint64_t>> keyed(n);
    for (size_t i = 0; i < n; i++)
        keyed[i] = {order_key(set[i], order), set[i]};
    auto mid = keyed.begin() + static_cast<std::ptrdiff_t>(p);
    std::nth_element(keyed.begin(), mid - 1, keyed.end());
    if (ordered)
        std::sort(keyed.begin(), mid);
    prefix.clear();
    for (auto it = keyed.begin(); it != mid; ++it)
        prefix.push_back(it->second);
}

sh_status emit(std::vector<uint64_t> &tokens, uint64_t *out, size_t cap, size_t *nout)
{
    std::sort(tokens.begin(), tokens.end());
    tokens.erase(std::unique(tokens.begin(), tokens.end()), tokens.end());
    *nout = tokens.size();
    if (tokens.size() > cap)
        return SH_ERR_RANGE;
    if (!tokens.empty())
        std::memcpy(out, tokens.data(), tokens.size() * sizeof(uint64_t));
    return SH_OK;
}

// A lookup's tokens: its kept hashes (prefix, in the global order) tagged
// with every size class a set similar to one of n may have.
void probe_tags(const std::vector<uint64_t> &prefix, size_t n, double t, std::vector<uint64_t> &tokens)
{
    auto range = size_range(n, t);
    uint32_t first = sh_prefix_size_class(range.first), last = sh_prefix_size_class(range.second);
    tokens.reserve(sh_prefix_probe_room(n, t));
    for (uint32_t c = first; c <= last; c++)
    {
        if (c >= 8 && c < 24)  // no size has these classes
            continue;
        // a stored set of m > n hashes with J >= t shares at
        // least ceil(t m) with this one, so its second common
        // hash lies within the first n - ceil(t m) + 2 of ours
        size_t m = class_min(c), p = prefix.size();
        if (m > n)
        {
            double common = std::ceil((t - SH_PREFIX_SLACK) * static_cast<double>(m));
            double within = static_cast<double>(n) + 2 - common;
            p = within < static_cast<double>(p) ? static_cast<size_t>(std::max(within, 0.0)) : p;
        }
        tag(prefix, p, c, small_set(n, t), tokens);
    }
}

// The tokens of a set: those it is stored under, or (probe) those a lookup
// of it probes with (sh_prefix_tokens, sh_prefix_probe).
sh_status tokens_of(const uint64_t *set, size_t n, double t, const sh_prefix_order *order, bool probe,
                    uint64_t *out, size_t cap, size_t *nout) noexcept
{
    *nout = 0;
    if (!threshold_valid(t))
        return SH_ERR_ARGUMENT;
    return sh::guard(
        [&]
        {
            std::vector<uint64_t> tokens;
            if (n == 0)
            {
                tokens.push_back(kEmptyToken);
                tokens.push_back(second_token(kEmptyToken));
            }
            else
            {
                std::vector<uint64_t> prefix;
                leading(set, n, kept(n, t), order, probe, prefix);
                if (probe)
                    probe_tags(prefix, n, t, tokens);
                else
                    tag(prefix, prefix.size(), sh_prefix_size_class(n), small_set(n, t), tokens);
            }
            return emit(tokens, out, cap, nout);
        });
}

}  // namespace

size_t sh_prefix_length(size_t n, double t) noexcept
{
    if (n == 0)
        return 0;
    double keep = std::ceil((t - SH_PREFIX_SLACK) * static_cast<double>(n));
    if (keep < 1)
        keep = 1;
    if (keep > static_cast<double>(n))
        keep = static_cast<double>(n);
    return n - static_cast<size_t>(keep) + 1;
}

uint32_t sh_prefix_size_class(size_t n) noexcept
{
    if (n < 8)
        return static_cast<uint32_t>(n);
    int e = 63 - __builtin_clzll(static_cast<unsigned long long>(n));
    return static_cast<uint32_t>(8 * e) + static_cast<uint32_t>((n >> (e - 3)) & 7);
}

size_t sh_prefix_tokens_room(size_t n, double t) noexcept
{
    if (n == 0 || !threshold_valid(t))
        return 2;
    return kept(n, t) * (small_set(n, t) ? 2 : 1);
}

size_t sh_prefix_probe_room(size_t n, double t) noexcept
{
    if (n == 0 || !threshold_valid(t))
        return 2;
    auto range = size_range(n, t);
    size_t classes = sh_prefix_size_class(range.second) - sh_prefix_size_class(range.first) + 1;
    return sh_prefix_tokens_room(n, t) * classes;
}

sh_status sh_prefix_order_build(const uint64_t *by_frequency, size_t n, uint64_t *hashes, uint32_t *ranks,
                                size_t *nout) noexcept
{
    *nout = 0;
    if (n > UINT32_MAX)
        return SH_ERR_RANGE;
    return sh::guard(
        [&]
        {
            std::vector<std::pair<uint64_t, uint32_t>> v(n);
            for (size_t i = 0; i < n; i++)
                v[i] = {by_frequency[i], static_cast<uint32_t>(i)};
            std::sort(v.begin(), v.end());  // equal hashes: the first rank first
            size_t m = 0;
            for (size_t i = 0; i < n; i++)
                if (m == 0 || hashes[m - 1] != v[i].first)
                {
                    hashes[m] = v[i].first;
                    ranks[m] = v[i].second;
                    m++;
                }
            *nout = m;
            return SH_OK;
        });
}

sh_status sh_prefix_tokens(const uint64_t *set, size_t n, double t, const sh_prefix_order *order,
                           uint64_t *out, size_t cap, size_t *nout) noexcept
{
    return tokens_of(set, n, t, order, false, out, cap, nout);
}

sh_status sh_prefix_probe(const uint64_t *set, size_t n, double t, const sh_prefix_order *order,
                          uint64_t *out, size_t cap, size_t *nout) noexcept
{
    return tokens_of(set, n, t, order, true, out, cap, nout);
}

sh_status sh_prefix_ordered(const uint64_t *set, size_t n, double t, size_t overlap,
                            const sh_prefix_order *order, uint64_t *out, size_t cap, size_t *nout) noexcept
{
    *nout = 0;
    if (!threshold_valid(t) || overlap == 0)
        return SH_ERR_ARGUMENT;
    size_t p = n == 0 ? 0 : std::min(n, sh_prefix_length(n, t) + overlap - 1);
    *nout = p;
    if (p > cap)
        return SH_ERR_RANGE;
    return sh::guard(
        [&]
        {
            std::vector<std::pair<uint64_t, uint64_t>> keyed(n);
            for (size_t i = 0; i < n; i++)
                keyed[i] = {order_key(set[i], order), set[i]};
            auto mid = keyed.begin() + static_cast<std::ptrdiff_t>(p);
            std::partial_sort(keyed.begin(), mid, keyed.end());
            for (size_t i = 0; i < p; i++)
                out[i] = keyed[i].second;
            return SH_OK;
        });
}
