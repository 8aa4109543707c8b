// text_sinks.h — what a stream of shingle features goes into (text.cpp): the
// fingerprint's exact bit vote, the list and the bounded set of hashes that
// shingle sets and similarities take, and the weighted vote.  Each takes
// add(f) for one feature and add16(f) for sixteen.  Internal to the core's
// text fingerprint.
#ifndef SIMHASH_TEXT_SINKS_H
#define SIMHASH_TEXT_SINKS_H

#include "text.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace sh::text
{

// Counts, per bit, how many features have it set, exactly.  Features are
// taken sixteen at a time through a tree of carry-save adders (the
// Harley-Seal scheme): ones_, twos_, fours_ and eights_ hold each bit's count
// in binary, and every sixteen features yield one word of "sixteens" that is
// counted per bit in byte lanes (a table spreads a byte's bits over the lanes
// of a word), flushed into wide counters before a lane can overflow.
class BitVote
{
public:
    // One feature's vote; features are absorbed sixteen at a time.
    void add(uint64_t feature)
    {
        batch_[batched_++] = feature;
        if (batched_ == 16)
        {
            absorb(batch_);
            batched_ = 0;
        }
    }

    // True when no feature waits for its batch of sixteen (add16 may be used).
    bool between_batches() const
    {
        return batched_ == 0;
    }

    // Sixteen features at once; only between batches of add().
    void add16(const uint64_t *f)
    {
        absorb(f);
    }

    // Bit i set when more than half of the features have it.
    uint64_t result()
    {
        flush_lanes();
        uint64_t features = 16 * absorbed_ + static_cast<uint64_t>(batched_);
        uint64_t r = 0;
        for (int i = 0; i < SH_BITS; i++)
        {
            uint64_t count = 16 * sixteens_[i] + ((ones_ >> i) & 1) + 2 * ((twos_ >> i) & 1) +
                             4 * ((fours_ >> i) & 1) + 8 * ((eights_ >> i) & 1);
            for (int f = 0; f < batched_; f++)
                count += (batch_[f] >> i) & 1;
            if (count * 2 > features)
                r |= uint64_t{1} << i;
        }
        return r;
    }

private:
    // a + b + c = 2 * carry + sum, bit by bit.
    static void csa(uint64_t &carry, uint64_t &sum, uint64_t a, uint64_t b, uint64_t c)
    {
        const uint64_t u = a ^ b;
        carry = (a & b) | (u & c);
        sum = u ^ c;
    }

    // Adds sixteen features to the carry-save counters and the byte lanes.
    void absorb(const uint64_t *f)
    {
        uint64_t ones = ones_, twos = twos_, fours = fours_, eights = eights_;
        uint64_t twos_a, twos_b, fours_a, fours_b, eights_a, eights_b, sixteens;
        csa(twos_a, ones, ones, f[0], f[1]);
        csa(twos_b, ones, ones, f[2], f[3]);
        csa(fours_a, twos, twos, twos_a, twos_b);
        csa(twos_a, ones, ones, f[4], f[5]);
        csa(twos_b, ones, ones, f[6], f[7]);
        csa(fours_b, twos, twos, twos_a, twos_b);
        csa(eights_a, fours, fours, fours_a, fours_b);
        csa(twos_a, ones, ones, f[8], f[9]);
        csa(twos_b, ones, ones, f[10], f[11]);
        csa(fours_a, twos, twos, twos_a, twos_b);
        csa(twos_a, ones, ones, f[12], f[13]);
        csa(twos_b, ones, ones, f[14], f[15]);
        csa(fours_b, twos, twos, twos_a, twos_b);
        csa(eights_b, fours, fours, fours_a, fours_b);
        csa(sixteens, eights, eights, eights_a, eights_b);
        ones_ = ones, twos_ = twos, fours_ = fours, eights_ = eights;

        const uint64_t *t = spread();
        for (int k = 0; k < 8; k++)
            lanes_[k] += t[(sixteens >> (8 * k)) & 0xFF];
        if (++lane_adds_ == 255)
            flush_lanes();
        absorbed_++;
    }

    // table[b]: byte b's bit j moved to the low bit of byte lane j.
    static const uint64_t *spread()
    {
        static const auto table = []
        {
            struct T
            {
                uint64_t v[256];
            } t{};
            for (int b = 0; b < 256; b++)
                for (int j = 0; j < 8; j++)
                    if (b & (1 << j))
                        t.v[b] |= uint64_t{1} << (8 * j);
            return t;
        }();
        return table.v;
    }

    // Moves the byte lanes into the per-bit counters before a lane overflows.
    void flush_lanes()
    {
        for (int k = 0; k < 8; k++)
        {
            for (int j = 0; j < 8; j++)
                sixteens_[8 * k + j] += (lanes_[k] >> (8 * j)) & 0xFF;
            lanes_[k] = 0;
        }
        lane_adds_ = 0;
    }

    uint64_t batch_[16] = {};
    int batched_ = 0;
    uint64_t ones_ = 0, twos_ = 0, fours_ = 0, eights_ = 0;
    uint64_t lanes_[8] = {0};
    int lane_adds_ = 0;
    uint64_t sixteens_[SH_BITS] = {0};
    uint64_t absorbed_ = 0;  // batches of sixteen
};

// Collects shingle hashes in order (duplicates included): the sink of
// sh_text_shingle_set and sh_text_similarity, where BitVote is that of the
// fingerprint.  Both take the same calls from the same Shingler.
class HashList
{
public:
    void add(uint64_t feature)
    {
        hashes.push_back(feature);
    }

    bool between_batches() const
    {
        return true;
    }

    void add16(const uint64_t *f)
    {
        hashes.insert(hashes.end(), f, f + 16);
    }

    std::vector<uint64_t> hashes;
};

// A HashList that holds at most `cap` hashes: when full it keeps only the
// distinct ones, and throws TooManyShingles when more than half of the
// room is distinct shingles.
struct TooManyShingles
{
};

class BoundedHashSet
{
public:
    explicit BoundedHashSet(size_t cap) : cap_(cap < 64 ? 64 : cap) {}

    void add(uint64_t feature)
    {
        if (hashes.size() == cap_)
            compact();
        else if (hashes.size() == hashes.capacity())
            hashes.reserve(std::min(cap_, std::max<size_t>(64, 2 * hashes.capacity())));
        hashes.push_back(feature);
    }

    bool between_batches() const
    {
        return true;
    }

    void add16(const uint64_t *f)
    {
        for (int k = 0; k < 16; k++)
            add(f[k]);
    }

    // The distinct hashes, ascending.
    std::vector<uint64_t> &set()
    {
        std::sort(hashes.begin(), hashes.end());
        hashes.erase(std::unique(hashes.begin(), hashes.end()), hashes.end());
        return hashes;
    }

    std::vector<uint64_t> hashes;

private:
    void compact()
    {
        set();
        if (hashes.size() > cap_ / 2)
            throw TooManyShingles();
    }

    size_t cap_;
};

// The weighted vote of sh_fingerprint_text_weighted: each feature adds its
// weight, in units of 2^-24 of the largest weight, to the bits it has and
// subtracts it from the others.  Integer sums are exact, so equal weights
// are the plain majority vote and a zero weight is no vote at all.
class WeightedVote
{
public:
    explicit WeightedVote(const sh_shingle_weights &w) : w_(w) {}

    void add(uint64_t feature)
    {
        const int64_t q = units(feature);
        const int64_t twice = 2 * q;
        for (int i = 0; i < SH_BITS; i++)
            sums_[i] += static_cast<int64_t>((feature >> i) & 1) * twice - q;
    }

    bool between_batches() const
    {
        return true;
    }

    void add16(const uint64_t *f)
    {
        for (int j = 0; j < 16; j++)
            add(f[j]);
    }

    // Bit i set when sum i is positive.
    uint64_t result() const
    {
        uint64_t r = 0;
        for (int i = 0; i < SH_BITS; i++)
            if (sums_[i] > 0)
                r |= uint64_t{1} << i;
        return r;
    }

private:
    // The feature's weight in vote units: listed, or the weight of the others.
    int64_t units(uint64_t feature) const
    {
        const uint64_t *end = w_.hashes + w_.n;
        const uint64_t *p = std::lower_bound(w_.hashes, end, feature);
        const float weight = (p != end && *p == feature) ? w_.weights[p - w_.hashes] : w_.other;
        return std::llround(static_cast<double>(weight) * w_.scale);
    }

    const sh_shingle_weights &w_;
    int64_t sums_[SH_BITS] = {0};
};

}  // namespace sh::text

#endif  // SIMHASH_TEXT_SINKS_H
