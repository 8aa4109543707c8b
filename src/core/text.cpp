// text.cpp — the default text fingerprint: Unicode tokens, case folding,
// word shingles, XXH3 feature hashes, majority bit vote (see fingerprint.h).
#include "fingerprint.h"

#include <unicode/uchar.h>
#include <unicode/utf8.h>
#include <xxhash.h>

#include <string>

namespace {

constexpr uint32_t kTokenMask = U_GC_L_MASK | U_GC_N_MASK;
constexpr uint32_t kMarkMask = U_GC_M_MASK;

// Counts, per bit, how many features have it set.
struct BitVote
{
    uint64_t counts[SH_BITS] = {0};
    uint64_t features = 0;

    void add(uint64_t feature)
    {
        for (int i = 0; i < SH_BITS; i++)
            counts[i] += (feature >> i) & 1;
        features++;
    }

    uint64_t result() const
    {
        uint64_t r = 0;
        for (int i = 0; i < SH_BITS; i++)
            if (counts[i] * 2 > features)
                r |= uint64_t{1} << i;
        return r;
    }
};

// Turns a stream of token hashes into shingle features: each feature is the
// hash of `k` consecutive token hashes (a single token's hash when k == 1).
class Shingler
{
public:
    Shingler(int k, BitVote &vote) : k_(k), vote_(vote) {}

    void token(uint64_t h)
    {
        ring_[seen_ % k_] = h;
        seen_++;
        if (seen_ >= static_cast<uint64_t>(k_))
            emit(static_cast<int>(k_));
    }

    // A document with fewer tokens than a shingle is one feature of all of them.
    void finish()
    {
        if (seen_ > 0 && seen_ < static_cast<uint64_t>(k_))
            emit(static_cast<int>(seen_));
    }

private:
    void emit(int n)
    {
        if (n == 1 && k_ == 1)
        {
            vote_.add(ring_[(seen_ - 1) % k_]);
            return;
        }
        // Little-endian bytes of the hashes in document order, so the value
        // does not depend on the machine.
        unsigned char bytes[8 * SH_MAX_SHINGLE];
        uint64_t first = seen_ - static_cast<uint64_t>(n);
        for (int i = 0; i < n; i++)
        {
            uint64_t h = ring_[(first + i) % k_];
            for (int b = 0; b < 8; b++)
                bytes[8 * i + b] = static_cast<unsigned char>(h >> (8 * b));
        }
        vote_.add(XXH3_64bits(bytes, 8 * static_cast<size_t>(n)));
    }

    int k_;
    BitVote &vote_;
    uint64_t ring_[SH_MAX_SHINGLE] = {0};
    uint64_t seen_ = 0;
};

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
