// text.cpp — the default text fingerprint: Unicode tokens, case folding,
// word shingles, XXH3 feature hashes, majority bit vote (see fingerprint.h).
#include "fingerprint.h"

#include <unicode/uchar.h>
#include <unicode/utf8.h>
// XXH3 inlined from Debian's libxxhash-dev header: token hashes are short,
// and a call through the shared library costs more than the hash itself.
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <cstring>
#include <string>

namespace {

constexpr uint32_t kTokenMask = U_GC_L_MASK | U_GC_N_MASK;
constexpr uint32_t kMarkMask = U_GC_M_MASK;

// Counts, per bit, how many features have it set.  Bits are counted eight
// at a time in byte lanes (a table spreads a byte's bits over the lanes of a
// word), and the lanes are flushed into wide counters before they overflow.
class BitVote
{
public:
    void add(uint64_t feature)
    {
        for (int k = 0; k < 8; k++)
            lanes_[k] += spread()[(feature >> (8 * k)) & 0xFF];
        if (++pending_ == 255)
            flush();
        features_++;
    }

    uint64_t result()
    {
        flush();
        uint64_t r = 0;
        for (int i = 0; i < SH_BITS; i++)
            if (counts_[i] * 2 > features_)
                r |= uint64_t{1} << i;
        return r;
    }

private:
    static const uint64_t *spread()
    {
        static const auto table = [] {
            struct T { uint64_t v[256]; } t{};
            for (int b = 0; b < 256; b++)
                for (int j = 0; j < 8; j++)
                    if (b & (1 << j))
                        t.v[b] |= uint64_t{1} << (8 * j);
            return t;
        }();
        return table.v;
    }

    void flush()
    {
        for (int k = 0; k < 8; k++)
        {
            for (int j = 0; j < 8; j++)
                counts_[8 * k + j] += (lanes_[k] >> (8 * j)) & 0xFF;
            lanes_[k] = 0;
        }
        pending_ = 0;
    }

    uint64_t counts_[SH_BITS] = {0};
    uint64_t lanes_[8] = {0};
    uint64_t features_ = 0;
    int pending_ = 0;
};

// Turns a stream of token hashes into shingle features: each feature is the
// hash of `k` consecutive token hashes (a single token's hash when k == 1).
class Shingler
{
public:
    Shingler(int k, BitVote &vote) : k_(k), vote_(vote) {}

    void token(uint64_t h)
    {
        if (seen_ < k_)
            window_[seen_++] = h;
        else
        {
            for (int i = 1; i < k_; i++)
                window_[i - 1] = window_[i];
            window_[k_ - 1] = h;
        }
        if (seen_ == k_)
            emit(k_);
    }

    // A document with fewer tokens than a shingle is one feature of all of them.
    void finish()
    {
        if (seen_ > 0 && seen_ < k_)
            emit(seen_);
    }

private:
    void emit(int n)
    {
        if (k_ == 1)
        {
            vote_.add(window_[0]);
            return;
        }
        // The little-endian bytes of the hashes in document order, so the
        // value does not depend on the machine.
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        vote_.add(XXH3_64bits(window_, 8 * static_cast<size_t>(n)));
#else
        unsigned char bytes[8 * SH_MAX_SHINGLE];
        for (int i = 0; i < n; i++)
            for (int b = 0; b < 8; b++)
                bytes[8 * i + b] = static_cast<unsigned char>(window_[i] >> (8 * b));
        vote_.add(XXH3_64bits(bytes, 8 * static_cast<size_t>(n)));
#endif
    }

    int k_;
    BitVote &vote_;
    uint64_t window_[SH_MAX_SHINGLE] = {0};
    int seen_ = 0;
};

bool ascii_is_alnum(uint8_t b)
{
    return static_cast<uint8_t>(b - '0') < 10 || static_cast<uint8_t>((b | 0x20) - 'a') < 26;
}

uint8_t ascii_fold(uint8_t b)
{
    return (b >= 'A' && b <= 'Z') ? static_cast<uint8_t>(b + 32) : b;
}

uint64_t fingerprint(const char *utf8, size_t len, const sh_text_options &opts)
{
    BitVote vote;
    Shingler shingler(opts.shingle, vote);
    std::string token;
    const auto *s = reinterpret_cast<const uint8_t *>(utf8);
    int32_t i = 0, n = static_cast<int32_t>(len);

    auto flush = [&]() {
        if (!token.empty())
        {
            shingler.token(XXH3_64bits(token.data(), token.size()));
            token.clear();
        }
    };

    while (i < n)
    {
        // ASCII fast path: a whole run of ASCII letters and digits at once,
        // with no decoding and no ICU calls.
        if (s[i] < 0x80)
        {
            if (!ascii_is_alnum(s[i]))
            {
                flush();
                i++;
                continue;
            }
            if (opts.tokens == SH_TOKENS_CHARS)
            {
                flush();
                token.push_back(static_cast<char>(opts.casefold ? ascii_fold(s[i]) : s[i]));
                i++;
                continue;
            }
            int32_t start = i;
            while (i < n && s[i] < 0x80 && ascii_is_alnum(s[i]))
                i++;
            size_t old = token.size();
            token.append(reinterpret_cast<const char *>(s + start), static_cast<size_t>(i - start));
            if (opts.casefold)
                for (size_t j = old; j < token.size(); j++)
                    token[j] = static_cast<char>(ascii_fold(static_cast<uint8_t>(token[j])));
            continue;
        }
        UChar32 c;
        U8_NEXT(s, i, n, c);   // c < 0 for an ill-formed sequence: a separator
        uint32_t gc = c < 0 ? 0 : U_GET_GC_MASK(c);
        bool part_of_word = (gc & kTokenMask) || ((gc & kMarkMask) && !token.empty());
        if (!part_of_word)
        {
            flush();
            continue;
        }
        if (opts.tokens == SH_TOKENS_CHARS && (gc & kTokenMask))
            flush();           // every letter or digit starts a token; marks stay attached
        if (opts.casefold)
            c = u_foldCase(c, U_FOLD_CASE_DEFAULT);
        char buf[U8_MAX_LENGTH];
        int32_t w = 0;
        U8_APPEND_UNSAFE(buf, w, c);
        token.append(buf, static_cast<size_t>(w));
    }
    flush();
    shingler.finish();
    return vote.result();
}

}  // namespace

extern "C" {

void sh_text_options_default(sh_text_options *opts) noexcept
{
    opts->shingle = SH_DEFAULT_SHINGLE;
    opts->tokens = SH_TOKENS_WORDS;
    opts->casefold = 1;
}

sh_status sh_fingerprint_text(const char *utf8, size_t len, const sh_text_options *opts,
                              uint64_t *out) noexcept
{
    if (opts->shingle < 1 || opts->shingle > SH_MAX_SHINGLE ||
        (opts->tokens != SH_TOKENS_WORDS && opts->tokens != SH_TOKENS_CHARS))
        return SH_ERR_ARGUMENT;
    if (len > static_cast<size_t>(INT32_MAX))
        return SH_ERR_RANGE;
    try
    {
        *out = fingerprint(utf8, len, *opts);
        return SH_OK;
    }
    catch (const std::bad_alloc &)
    {
        return SH_ERR_NOMEM;
    }
    catch (...)
    {
        return SH_ERR_INTERNAL;
    }
}

uint64_t sh_feature_hash(const void *data, size_t len) noexcept
{
    return XXH3_64bits(data, len);
}

}  // extern "C"
