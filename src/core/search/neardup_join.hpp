// neardup_join.hpp — the step both forms of the verified join share: a set
// probes the inverted lists of its prefix tokens (Bayardo et al.'s prefix
// filter), counts its prefix overlap with each earlier set under PPJoin's
// length and positional filters, then verifies the candidates exactly.
// neardup.cpp runs it over ranks with one index of every set (in memory);
// neardup_batch.cpp over hashes with one index per chunk of sets (on disk).
#ifndef SIMHASH_NEARDUP_JOIN_HPP
#define SIMHASH_NEARDUP_JOIN_HPP

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace sh::nd
{

constexpr double kSlack = 1e-9;  // the filters' bound lies this far below t

// n - ceil(f n) + 1, within 0..n: the prefix that must hold a common token.
inline uint32_t prefix_length(uint32_t n, double f)
{
    const double keep = std::ceil(f * static_cast<double>(n));
    const double p = static_cast<double>(n) - keep + 1;
    if (p < 0)
        return 0;
    return p > n ? n : static_cast<uint32_t>(p);
}

// The probe prefix (a pair with J >= t shares a token in both) and the
// indexed one (enough when the probing set is the larger).
inline uint32_t probe_length(uint32_t n, double t)
{
    return prefix_length(n, t);
}
inline uint32_t index_length(uint32_t n, double t)
{
    return prefix_length(n, 2 * t / (1 + t));
}

struct Posting  // an indexed prefix token of an earlier set
{
    uint32_t set;  // the set's place in the index's join order
    uint32_t pos;  // the token's position in that set
};

// Common elements of two ascending arrays.
template <class T>
size_t sorted_overlap(const T *a, size_t na, const T *b, size_t nb)
{
    size_t x = 0, y = 0, common = 0;
    while (x < na && y < nb)
    {
        if (a[x] < b[y])
            x++;
        else if (b[y] < a[x])
            y++;
        else
        {
            common++;
            x++;
            y++;
        }
    }
    return common;
}

// The Jaccard similarity from the overlap, as sh_sorted_jaccard computes it.
inline double jaccard_of(size_t common, size_t na, size_t nb)
{
    return na + nb == 0 ? 1.0 : static_cast<double>(common) / static_cast<double>(na + nb - common);
}

// The state of one probing set's pass over an index.
struct Probe
{
    std::vector<int32_t> count;  // by indexed set: prefix overlap so far, -1 pruned
    std::vector<uint32_t> cand;  // indexed sets touched by this probe
};

// Set y (ny tokens) probes with its prefix tokens 0..nprobe-1.  list(j, lo,
// end, pos) gives token j's list as postings[*lo .. end) and its position in
// y, or false when the token has no list; size(s) is an indexed set's size.
// Lists hold sets in join order (nondecreasing size) and the probes come in
// nondecreasing size, so the entries too small for y are dropped for good by
// advancing *lo.  Postings of sets at or after `limit` are not earlier than y.
template <class ListOf, class SizeOf>
void probe(Probe &p, uint32_t ny, uint32_t nprobe, double t, uint32_t limit, const Posting *postings,
           ListOf &&list, SizeOf &&size)
{
    const double minsize = t * ny;
    const double overlap_factor = t / (1 + t);
    for (uint32_t j = 0; j < nprobe; j++)
    {
        uint64_t *lo = nullptr;
        uint64_t end = 0;
        uint32_t pos = 0;
        if (!list(j, lo, end, pos))
            continue;
        while (*lo < end && static_cast<double>(size(postings[*lo].set)) < minsize)
            (*lo)++;
        for (uint64_t e = *lo; e < end; e++)
        {
            const Posting &x = postings[e];
            if (x.set >= limit)
                break;
            int32_t &c = p.count[x.set];
            if (c < 0)
                continue;
            if (c == 0)
                p.cand.push_back(x.set);  // touched: reset after y, whatever happens below
            const uint32_t nx = size(x.set);
            const double alpha = std::ceil(overlap_factor * (static_cast<double>(nx) + ny));
            const uint32_t rest = std::min(ny - pos - 1, nx - x.pos - 1);
            if (static_cast<double>(c) + 1 + rest >= alpha)
                c++;
            else
                c = -1;  // pruned: cannot reach the overlap J >= t needs
        }
    }
}

// Verifies the candidates of the last probe: jaccard(x) is the exact
// similarity of indexed set x and the probing set; found(x, j) gets those at
// or above the threshold.  Returns the candidates verified; resets p.
template <class JaccardOf, class Found>
uint64_t verify(Probe &p, double threshold, JaccardOf &&jaccard, Found &&found)
{
    uint64_t verified = 0;
    for (uint32_t x : p.cand)
    {
        if (p.count[x] > 0)
        {
            verified++;
            const double j = jaccard(x);
            if (j >= threshold)
                found(x, j);
        }
        p.count[x] = 0;
    }
    p.cand.clear();
    return verified;
}

}  // namespace sh::nd

#endif  // SIMHASH_NEARDUP_JOIN_HPP
