// text.cpp — the default text fingerprint: Unicode tokens, case folding,
// word shingles, XXH3 feature hashes, majority bit vote (see fingerprint.h).
//
// Speed (bench/fingerprint_bench, bench/fingerprint_bench.sh): text is
// classified 64 bytes at a time (SSE2 on x86-64, plain C elsewhere); runs of
// ASCII letters and digits become tokens straight from a folded copy of the
// block, with no per-character work and no ICU calls.  Two-byte code points
// come from a table; only the others go one by one through ICU.  Token hashes
// are shingled a batch at a time and the vote counts sixteen features at once
// with carry-save adders.  The values are those of the plain pipeline
// (test/golden/text_reference.py); bench/fingerprint_bench checks that on
// real and random documents against a straightforward reference.
#include "text.h"

#include "boundary.hpp"

#include <unicode/uchar.h>
#include <unicode/utf8.h>
// XXH3 inlined from Debian's libxxhash-dev header: token hashes are short,
// and a call through the shared library costs more than the hash itself.
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#if defined(__SSE2__) && !defined(SH_TEXT_NO_SIMD)
#include <emmintrin.h>
#define SH_TEXT_SSE2 1
#endif

namespace
{

constexpr uint32_t kTokenMask = U_GC_L_MASK | U_GC_N_MASK;
constexpr uint32_t kMarkMask = U_GC_M_MASK;
constexpr int kBlock = 64;  // bytes classified at once: one bit each in a uint64_t

// The index of x's lowest set bit; x != 0.
int lowest_bit(uint64_t x)  // x != 0
{
    return __builtin_ctzll(x);
}

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

// The hash of n consecutive token hashes: XXH3 of their little-endian bytes,
// so the value does not depend on the machine.  Common shingle sizes get a
// constant length, which lets the compiler drop XXH3's length dispatch.
inline uint64_t shingle_hash(const uint64_t *window, int n)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    switch (n)
    {
        case 2:
            return XXH3_64bits(window, 16);
        case 3:
            return XXH3_64bits(window, 24);
        case 4:
            return XXH3_64bits(window, 32);
        default:
            return XXH3_64bits(window, 8 * static_cast<size_t>(n));
    }
#else
    unsigned char bytes[8 * SH_MAX_SHINGLE];
    for (int i = 0; i < n; i++)
        for (int b = 0; b < 8; b++)
            bytes[8 * i + b] = static_cast<unsigned char>(window[i] >> (8 * b));
    return XXH3_64bits(bytes, 8 * static_cast<size_t>(n));
#endif
}

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

// Turns a stream of token hashes into shingle features: each feature is the
// hash of `k` consecutive token hashes (a single token's hash when k == 1).
// Hashes gather in h_ behind the last k - 1 of the previous batch, so every
// window is contiguous, and a batch's windows are hashed in one loop.  Sink
// takes the features: add(f), add16(f[16]) when between_batches().
template <class Sink>
class Shingler
{
public:
    Shingler(int k, Sink &vote) : k_(k), vote_(vote) {}

    // The next token's hash.
    void token(uint64_t h)
    {
        if (n_ == kCapacity)
            drain();
        h_[n_++] = h;
    }

    // A document with fewer tokens than a shingle is one feature of all of
    // them (still in h_: fewer than k are always kept).
    void finish()
    {
        drain();
        if (seen_ > 0 && seen_ < static_cast<uint64_t>(k_))
            vote_.add(shingle_hash(h_, static_cast<int>(seen_)));
    }

private:
    static constexpr int kCapacity = SH_MAX_SHINGLE + 512;

    // Votes for every window ending at a hash gathered since the last drain.
    void drain()
    {
        // The windows that end at a new hash: kept_ <= k - 1 always.
        const int from = k_ - 1;
        switch (k_)
        {
            case 1:
                windows<1>(from);
                break;
            case 2:
                windows<2>(from);
                break;
            case 3:
                windows<3>(from);
                break;
            case 4:
                windows<4>(from);
                break;
            default:
                for (int e = from; e < n_; e++)
                    vote_.add(shingle_hash(h_ + e - k_ + 1, k_));
        }
        seen_ += static_cast<uint64_t>(n_ - kept_);
        const int keep = n_ < k_ - 1 ? n_ : k_ - 1;
        memmove(h_, h_ + n_ - keep, sizeof(uint64_t) * static_cast<size_t>(keep));
        n_ = kept_ = keep;
    }

    // The feature of the K hashes ending at h_[end].
    template <int K>
    uint64_t window(int end) const
    {
        return K == 1 ? h_[end] : shingle_hash(h_ + end - K + 1, K);
    }

    // Features of the windows ending at from .. n_ - 1, mostly sixteen at a
    // time straight into the vote.
    template <int K>
    void windows(int from)
    {
        int e = from;
        while (e < n_ && !vote_.between_batches())
            vote_.add(window<K>(e++));
        for (; e + 16 <= n_; e += 16)
        {
            uint64_t f[16];
            for (int j = 0; j < 16; j++)
                f[j] = window<K>(e + j);
            vote_.add16(f);
        }
        while (e < n_)
            vote_.add(window<K>(e++));
    }

    int k_;
    Sink &vote_;
    uint64_t h_[kCapacity] = {};
    int n_ = 0;          // hashes in h_
    int kept_ = 0;       // of which carried over from the previous batch
    uint64_t seen_ = 0;  // hashes drained so far
};

// One block's classes: bit i describes byte i.
struct BlockClass
{
    uint64_t alnum;     // ASCII letter or digit
    uint64_t nonascii;  // byte >= 0x80
};

#ifdef SH_TEXT_SSE2
// Classifies 64 bytes at p and writes them to out, ASCII upper case folded
// when fold is set.  Signed compares: bytes >= 0x80 are negative, so they
// are never letters or digits here.
BlockClass classify(const uint8_t *p, uint8_t *out, bool fold)
{
    const __m128i upper_lo = _mm_set1_epi8('A' - 1), upper_hi = _mm_set1_epi8('Z' + 1);
    const __m128i lower_lo = _mm_set1_epi8('a' - 1), lower_hi = _mm_set1_epi8('z' + 1);
    const __m128i digit_lo = _mm_set1_epi8('0' - 1), digit_hi = _mm_set1_epi8('9' + 1);
    const __m128i case_bit = _mm_set1_epi8(0x20);
    BlockClass c{0, 0};
    for (size_t q = 0; q < kBlock / 16; q++)
    {
        __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i *>(p + 16 * q));
        __m128i upper = _mm_and_si128(_mm_cmpgt_epi8(v, upper_lo), _mm_cmplt_epi8(v, upper_hi));
        __m128i lower = _mm_or_si128(v, _mm_and_si128(upper, case_bit));
        __m128i alpha = _mm_and_si128(_mm_cmpgt_epi8(lower, lower_lo), _mm_cmplt_epi8(lower, lower_hi));
        __m128i digit = _mm_and_si128(_mm_cmpgt_epi8(v, digit_lo), _mm_cmplt_epi8(v, digit_hi));
        _mm_storeu_si128(reinterpret_cast<__m128i *>(out + 16 * q), fold ? lower : v);
        auto alnum = static_cast<uint32_t>(_mm_movemask_epi8(_mm_or_si128(alpha, digit)));
        auto high = static_cast<uint32_t>(_mm_movemask_epi8(v));
        c.alnum |= uint64_t{alnum} << (16 * q);
        c.nonascii |= uint64_t{high} << (16 * q);
    }
    return c;
}
#else
// The portable classify (see the SSE2 one above).
BlockClass classify(const uint8_t *p, uint8_t *out, bool fold)
{
    BlockClass c{0, 0};
    for (int i = 0; i < kBlock; i++)
    {
        uint8_t b = p[i];
        bool upper = b >= 'A' && b <= 'Z';
        uint8_t lower = upper ? static_cast<uint8_t>(b | 0x20) : b;
        bool alnum = (lower >= 'a' && lower <= 'z') || (b >= '0' && b <= '9');
        out[i] = fold ? lower : b;
        c.alnum |= uint64_t{alnum} << i;
        c.nonascii |= uint64_t{b >= 0x80} << i;
    }
    return c;
}
#endif

// The token being built: bytes in a fixed buffer, moved to the heap only
// for the rare token longer than that.  Appends are mostly one code point.
class TokenBuffer
{
public:
    bool empty() const
    {
        return len_ == 0;
    }

    size_t size() const
    {
        return len_;
    }

    const uint8_t *data() const
    {
        return heap_.empty() ? local_ : heap_.data();
    }

    void clear()
    {
        len_ = 0;
        heap_.clear();
    }

    void append(const uint8_t *bytes, size_t n)
    {
        if (heap_.empty() && len_ + n <= sizeof local_)
        {
            if (n <= U8_MAX_LENGTH)
                for (size_t k = 0; k < n; k++)
                    local_[len_ + k] = bytes[k];
            else
                memcpy(local_ + len_, bytes, n);
        }
        else
        {
            if (heap_.empty())
                heap_.assign(local_, local_ + len_);
            heap_.insert(heap_.end(), bytes, bytes + n);
        }
        len_ += n;
    }

private:
    uint8_t local_[256] = {};
    size_t len_ = 0;
    std::vector<uint8_t> heap_;
};

// The tokenizer: feeds token hashes to the shingler (Out: token(hash)).  A
// token that may go on past what has been seen (across a block or into
// non-ASCII text) waits in pending_ until its end is known.
template <class Out>
class Tokenizer
{
public:
    Tokenizer(const sh_text_options &opts, Out &out)
        : chars_(opts.tokens == SH_TOKENS_CHARS), fold_(opts.casefold != 0), out_(out)
    {
    }

    // Tokenizes the whole text: ASCII a block at a time, other code points one by one.
    void run(const uint8_t *s, size_t n)
    {
        alignas(16) uint8_t folded[kBlock];
        alignas(16) uint8_t tail[kBlock];
        size_t i = 0;
        while (i < n)
        {
            const uint8_t *p = s + i;
            size_t avail = n - i;
            uint64_t stop = 0;  // bytes not to take from this block
            if (avail < kBlock)
            {
                memcpy(tail, p, avail);
                memset(tail + avail, 0, kBlock - avail);
                p = tail;
                stop = ~uint64_t{0} << avail;
            }
            BlockClass c = classify(p, folded, fold_);
            stop |= c.nonascii;
            int limit = stop ? lowest_bit(stop) : kBlock;
            if (limit > 0)
            {
                uint64_t alnum = limit == kBlock ? c.alnum : c.alnum & ((uint64_t{1} << limit) - 1);
                Edge edge = static_cast<size_t>(limit) == avail ? Edge::kEnd
                            : limit == kBlock                   ? Edge::kBlock
                                                                : Edge::kNonAscii;
                i += static_cast<size_t>(chars_ ? ascii_chars(folded, alnum, limit, edge)
                                                : ascii_words(folded, alnum, limit, edge));
            }
            while (i < n && s[i] >= 0x80)
                code_point(s, i, n);
        }
        flush();
    }

private:
    // A complete token, hashed for the shingler.
    void emit(const uint8_t *token, size_t len)
    {
        out_.token(XXH3_64bits(token, len));
    }

    // The hash of a one-byte token, from a table (tokens=>'chars' on ASCII).
    static uint64_t byte_hash(uint8_t b)
    {
        static const auto table = []
        {
            struct T
            {
                uint64_t v[256];
            } t{};
            for (int c = 0; c < 256; c++)
            {
                const auto byte = static_cast<uint8_t>(c);
                t.v[c] = XXH3_64bits(&byte, 1);
            }
            return t;
        }();
        return table.v[b];
    }

    // Ends the pending token, if any.
    void flush()
    {
        if (!pending_.empty())
        {
            emit(pending_.data(), pending_.size());
            pending_.clear();
        }
    }

    // Adds bytes to the pending token.
    void hold(const uint8_t *bytes, size_t len)
    {
        pending_.append(bytes, len);
    }

    // What follows the ASCII bytes of a block: the end of the text, more
    // text not yet classified, or a non-ASCII code point.
    enum class Edge
    {
        kEnd,
        kBlock,
        kNonAscii
    };

    // The token [a, b) of the folded block, after what is pending if a == 0.
    void complete(const uint8_t *folded, int a, int b)
    {
        if (a == 0 && !pending_.empty())
        {
            hold(folded, static_cast<size_t>(b));
            flush();
        }
        else
            emit(folded + a, static_cast<size_t>(b - a));
    }

    // A token that reaches the edge of the ASCII bytes at `limit`.  Returns
    // the bytes consumed: at a block edge the next block starts at the token
    // (unless it fills the block), so tokens are rarely copied to pending_.
    int at_edge(const uint8_t *folded, int a, int limit, Edge edge)
    {
        if (edge == Edge::kEnd)
            complete(folded, a, limit);
        else if (edge == Edge::kBlock && a > 0)
            return a;
        else
            hold(folded + a, static_cast<size_t>(limit - a));  // may go on
        return limit;
    }

    // Word tokens in the first `limit` ASCII bytes of a folded block; `alnum`
    // has no bits at or above limit.  Returns the bytes consumed.  The runs
    // that continue a pending token or reach the edge are taken out first,
    // so the loop over the others has no special cases: run k starts at the
    // k-th bit of `starts` and ends at the k-th bit of `ends`.
    int ascii_words(const uint8_t *folded, uint64_t alnum, int limit, Edge edge)
    {
        if (!(alnum & 1))
            flush();  // byte 0 separates
        else if (!pending_.empty())
        {
            uint64_t gaps = ~alnum;
            int b = gaps ? lowest_bit(gaps) : kBlock;
            if (b >= limit || b >= kBlock)  // limit <= kBlock: the second says so to the analyzer
                return at_edge(folded, 0, limit, edge);
            complete(folded, 0, b);
            alnum &= ~uint64_t{0} << b;
        }
        int last = -1;  // start of the run that reaches the edge
        if ((alnum >> (limit - 1)) & 1)
        {
            uint64_t gaps_before = ~alnum & ((uint64_t{1} << (limit - 1)) - 1);
            last = gaps_before ? 64 - __builtin_clzll(gaps_before) : 0;
            alnum &= (uint64_t{1} << last) - 1;
        }
        uint64_t starts = alnum & ~(alnum << 1), ends = alnum & ~(alnum >> 1);
        while (starts)
        {
            int a = lowest_bit(starts), b = lowest_bit(ends) + 1;
            emit(folded + a, static_cast<size_t>(b - a));
            starts &= starts - 1;
            ends &= ends - 1;
        }
        return last >= 0 ? at_edge(folded, last, limit, edge) : limit;
    }

    // Every ASCII letter or digit is a token; the one at limit - 1 may still
    // take combining marks.  Returns the bytes consumed.
    int ascii_chars(const uint8_t *folded, uint64_t alnum, int limit, Edge edge)
    {
        flush();  // byte 0 is ASCII: a separator or a new token
        while (alnum)
        {
            int a = lowest_bit(alnum);
            if (a == limit - 1)
                return at_edge(folded, a, limit, edge);
            out_.token(byte_hash(folded[a]));
            alnum &= alnum - 1;
        }
        return limit;
    }

    // What a code point does to tokens.
    enum Role : uint8_t
    {
        kSeparator,
        kLetter,  // letter or digit
        kMark     // combining mark: part of a token it follows
    };

    // The role of a code point by its general category (ill-formed: a separator).
    static Role role_of(UChar32 c)
    {
        uint32_t gc = c < 0 ? 0 : U_GET_GC_MASK(c);
        return (gc & kTokenMask) ? kLetter : (gc & kMarkMask) ? kMark : kSeparator;
    }

    // A code point of the given role, as `bytes` (UTF-8, folded if asked).
    void take(Role role, const uint8_t *bytes, size_t len)
    {
        if (role == kSeparator || (role == kMark && pending_.empty()))
        {
            flush();
            return;
        }
        if (chars_ && role == kLetter)
            flush();  // every letter or digit starts a token; marks stay attached
        hold(bytes, len);
    }

    // Two-byte code points (U+0080..U+07FF: Latin-1 and Latin extensions,
    // Greek, Cyrillic, Armenian, Hebrew, Arabic...) from a table built once
    // with ICU: role and folded UTF-8 (folding may change the length: U+017F
    // folds to "s", U+023A to U+2C65).
    struct TwoByte
    {
        Role role;
        uint8_t len;
        uint8_t folded[U8_MAX_LENGTH];
    };

    static const TwoByte *two_byte_table()
    {
        static const auto table = []
        {
            struct T
            {
                TwoByte v[0x800 - 0x80];
            } t{};
            for (UChar32 c = 0x80; c < 0x800; c++)
            {
                TwoByte &e = t.v[c - 0x80];
                e.role = role_of(c);
                int32_t w = 0;
                U8_APPEND_UNSAFE(e.folded, w, u_foldCase(c, U_FOLD_CASE_DEFAULT));
                e.len = static_cast<uint8_t>(w);
            }
            return t;
        }();
        return table.v;
    }

    // One code point at s[i], s[i] >= 0x80; i moves past it.
    void code_point(const uint8_t *s, size_t &i, size_t n)
    {
        const uint8_t lead = s[i];
        if (lead >= 0xC2 && lead < 0xE0 && i + 1 < n && (s[i + 1] & 0xC0) == 0x80)
        {
            const TwoByte &e = two_byte_table()[(((lead & 0x1F) << 6) | (s[i + 1] & 0x3F)) - 0x80];
            if (fold_)
                take(e.role, e.folded, e.len);
            else
                take(e.role, s + i, 2);
            i += 2;
            return;
        }
        auto pos = static_cast<int32_t>(i);
        UChar32 c;
        U8_NEXT(s, pos, static_cast<int32_t>(n), c);  // c < 0 for an ill-formed sequence: a separator
        i = static_cast<size_t>(pos);
        const Role role = role_of(c);
        if (role == kSeparator)
        {
            flush();
            return;
        }
        if (fold_)
            c = u_foldCase(c, U_FOLD_CASE_DEFAULT);
        uint8_t buf[U8_MAX_LENGTH];
        int32_t w = 0;
        U8_APPEND_UNSAFE(buf, w, c);
        take(role, buf, static_cast<size_t>(w));
    }

    bool chars_;
    bool fold_;
    Out &out_;
    TokenBuffer pending_;
};

// The one path from text to features, for valid options: every shingle
// hash of the text, in order, into sink.  The fingerprint votes with them and
// the similarity collects them, so the two can never disagree on what a
// shingle is.
template <class Sink>
void shingle_hashes(const char *utf8, size_t len, const sh_text_options &opts, Sink &sink)
{
    Shingler<Sink> shingler(opts.shingle, sink);
    Tokenizer<Shingler<Sink>> tokenizer(opts, shingler);
    tokenizer.run(reinterpret_cast<const uint8_t *>(utf8), len);
    shingler.finish();
}

// sh_fingerprint_text for valid options: tokens -> shingles -> vote.
uint64_t fingerprint(const char *utf8, size_t len, const sh_text_options &opts)
{
    BitVote vote;
    shingle_hashes(utf8, len, opts, vote);
    return vote.result();
}

// The distinct shingle hashes of the text, ascending.
std::vector<uint64_t> shingle_set(const char *utf8, size_t len, const sh_text_options &opts)
{
    HashList list;
    shingle_hashes(utf8, len, opts, list);
    std::vector<uint64_t> h = std::move(list.hashes);
    std::sort(h.begin(), h.end());
    h.erase(std::unique(h.begin(), h.end()), h.end());
    return h;
}

// |A and B| of two ascending sets.
size_t intersection_size(const uint64_t *a, size_t na, const uint64_t *b, size_t nb)
{
    size_t i = 0, j = 0, common = 0;
    while (i < na && j < nb)
    {
        if (a[i] < b[j])
            i++;
        else if (b[j] < a[i])
            j++;
        else
            common++, i++, j++;
    }
    return common;
}

// The status of options and a length that sh_fingerprint_text refuses.
sh_status check_options(const sh_text_options *opts, size_t len)
{
    if (opts->shingle < 1 || opts->shingle > SH_MAX_SHINGLE ||
        (opts->tokens != SH_TOKENS_WORDS && opts->tokens != SH_TOKENS_CHARS))
        return SH_ERR_ARGUMENT;
    if (len > static_cast<size_t>(INT32_MAX))
        return SH_ERR_RANGE;
    return SH_OK;
}

}  // namespace

extern "C"
{
    void sh_text_options_default(sh_text_options *opts) noexcept
    {
        opts->shingle = SH_DEFAULT_SHINGLE;
        opts->tokens = SH_TOKENS_WORDS;
        opts->casefold = 1;
    }

    sh_status sh_fingerprint_text(const char *utf8, size_t len, const sh_text_options *opts,
                                  uint64_t *out) noexcept
    {
        sh_status st = check_options(opts, len);
        if (st != SH_OK)
            return st;
        return sh::guard(
            [&]
            {
                *out = fingerprint(utf8, len, *opts);
                return SH_OK;
            });
    }

    sh_status sh_text_shingle_set(const char *utf8, size_t len, const sh_text_options *opts, uint64_t *out,
                                  size_t cap, size_t *n) noexcept
    {
        sh_status st = check_options(opts, len);
        if (st != SH_OK)
            return st;
        return sh::guard(
            [&]
            {
                std::vector<uint64_t> set = shingle_set(utf8, len, *opts);
                *n = set.size();
                if (set.size() > cap)
                    return SH_ERR_RANGE;
                std::copy(set.begin(), set.end(), out);
                return SH_OK;
            });
    }

    sh_status sh_text_similarity(const char *a, size_t alen, const char *b, size_t blen,
                                 const sh_text_options *opts, double *out) noexcept
    {
        sh_status st = check_options(opts, alen > blen ? alen : blen);
        if (st != SH_OK)
            return st;
        return sh::guard(
            [&]
            {
                std::vector<uint64_t> sa = shingle_set(a, alen, *opts);
                std::vector<uint64_t> sb = shingle_set(b, blen, *opts);
                *out = sh_sorted_jaccard(sa.data(), sa.size(), sb.data(), sb.size());
                return SH_OK;
            });
    }

    sh_status sh_text_similarity_bounded(const char *a, size_t alen, const char *b, size_t blen,
                                         const sh_text_options *opts, size_t max_hashes, double *out) noexcept
    {
        sh_status st = check_options(opts, alen > blen ? alen : blen);
        if (st != SH_OK)
            return st;
        return sh::guard(
            [&]
            {
                try
                {
                    BoundedHashSet sa(max_hashes / 2), sb(max_hashes / 2);
                    shingle_hashes(a, alen, *opts, sa);
                    shingle_hashes(b, blen, *opts, sb);
                    const std::vector<uint64_t> &x = sa.set(), &y = sb.set();
                    *out = sh_sorted_jaccard(x.data(), x.size(), y.data(), y.size());
                    return SH_OK;
                }
                catch (const TooManyShingles &)
                {
                    return SH_ERR_RANGE;
                }
            });
    }

    sh_status sh_shingle_weights_prepare(sh_shingle_weights *w) noexcept
    {
        w->prepared = 0;
        float largest = w->other;
        if (!std::isfinite(w->other) || w->other < 0)
            return SH_ERR_ARGUMENT;
        for (size_t i = 0; i < w->n; i++)
        {
            if (!std::isfinite(w->weights[i]) || w->weights[i] < 0 ||
                (i > 0 && w->hashes[i - 1] >= w->hashes[i]))
                return SH_ERR_ARGUMENT;
            largest = std::max(largest, w->weights[i]);
        }
        // The largest weight is 2^24 units: votes stay exact integers far
        // below 2^63 for the at most 2^31 shingles of a text.
        w->scale = largest > 0 ? 16777216.0 / static_cast<double>(largest) : 0.0;
        w->prepared = 1;
        return SH_OK;
    }

    sh_status sh_fingerprint_text_weighted(const char *utf8, size_t len, const sh_text_options *opts,
                                           const sh_shingle_weights *w, uint64_t *out) noexcept
    {
        sh_status st = check_options(opts, len);
        if (st != SH_OK)
            return st;
        if (!w->prepared)
            return SH_ERR_ARGUMENT;
        return sh::guard(
            [&]
            {
                WeightedVote vote(*w);
                shingle_hashes(utf8, len, *opts, vote);
                *out = vote.result();
                return SH_OK;
            });
    }

    double sh_df_weight(int64_t df, int64_t docs, double max_df, int idf) noexcept
    {
        if (docs <= 0)
            return 1.0;
        if (df < 0)
            df = 0;
        if (static_cast<double>(df) > max_df * static_cast<double>(docs))
            return 0.0;
        if (!idf)
            return 1.0;
        return std::max(0.0, std::log((1.0 + static_cast<double>(docs)) / (1.0 + static_cast<double>(df))));
    }

    double sh_sorted_jaccard(const uint64_t *a, size_t na, const uint64_t *b, size_t nb) noexcept
    {
        if (na == 0 && nb == 0)
            return 1.0;
        const size_t common = intersection_size(a, na, b, nb);
        return static_cast<double>(common) / static_cast<double>(na + nb - common);
    }

    uint64_t sh_feature_hash(const void *data, size_t len) noexcept
    {
        return XXH3_64bits(data, len);
    }

    // sums[i] += bit i ? w : -w, for each feature in turn.  -w differs from w
    // only in the sign bit, so the sign is flipped with an XOR mask picked by
    // the feature's bits, two bits (two sums) per SSE2 operation.
    void sh_vote_add_many(double *sums, const uint64_t *features, const double *weights, size_t n) noexcept
    {
#ifdef SH_TEXT_SSE2
        const __m128d neg = _mm_set1_pd(-0.0);
        // Sign masks for two bits, low bit in the low lane: a clear bit negates.
        const __m128d flip[4] = {neg, _mm_set_pd(-0.0, 0.0), _mm_set_pd(0.0, -0.0), _mm_setzero_pd()};
        for (size_t f = 0; f < n; f++)
        {
            const __m128d w = _mm_set1_pd(weights[f]);
            const uint64_t bits = features[f];
            for (int i = 0; i < SH_BITS; i += 2)
            {
                __m128d s = _mm_loadu_pd(sums + i);
                s = _mm_add_pd(s, _mm_xor_pd(w, flip[(bits >> i) & 3]));
                _mm_storeu_pd(sums + i, s);
            }
        }
#else
        for (size_t f = 0; f < n; f++)
        {
            const double plus_minus[2] = {-weights[f], weights[f]};
            for (int i = 0; i < SH_BITS; i++)
                sums[i] += plus_minus[(features[f] >> i) & 1];
        }
#endif
    }

}  // extern "C"
