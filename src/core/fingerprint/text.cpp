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
#include "text_sinks.h"

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

using namespace sh::text;

constexpr uint32_t kTokenMask = U_GC_L_MASK | U_GC_N_MASK;
constexpr uint32_t kMarkMask = U_GC_M_MASK;
constexpr int kBlock = 64;  // bytes classified at once: one bit each in a uint64_t

// The index of x's lowest set bit; x != 0.
int lowest_bit(uint64_t x)  // x != 0
{
    return __builtin_ctzll(x);
}

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
