// seomoz.cpp — seomoz simhash-cpp compatible text fingerprint (see seomoz.h).
#include "seomoz.h"

#include "lookup3.h"

namespace
{

// Rotate left by k bits (0 < k < 64).
inline uint64_t rotl(uint64_t v, int k)
{
    return (v << k) | (v >> (64 - k));
}

// Is b an ASCII letter (either case)?
inline bool ascii_letter(unsigned char b)
{
    return static_cast<unsigned char>((b | 0x20) - 'a') < 26;
}

// Per-bit counts of the features, eight bits at a time in byte lanes that
// are flushed to wide counters before they can overflow.
class Counts
{
public:
    void add(uint64_t f)
    {
        for (int j = 0; j < 8; j++)
            lanes_[j] += (f >> j) & kLaneOnes;
        if (++pending_ == 255)
            flush();
        n_++;
    }

    // Bit 63-j is set when more than half of the features have bit j.
    uint64_t reversed_majority()
    {
        flush();
        uint64_t r = 0;
        for (int i = 0; i < 64; i++)
            if (counts_[i] * 2 > n_)
                r |= uint64_t{1} << (63 - i);
        return r;
    }

private:
    static constexpr uint64_t kLaneOnes = 0x0101010101010101ULL;

    void flush()
    {
        // lanes_[j] byte k counts bit 8k + j.
        for (int j = 0; j < 8; j++)
        {
            for (int k = 0; k < 8; k++)
                counts_[8 * k + j] += (lanes_[j] >> (8 * k)) & 0xFF;
            lanes_[j] = 0;
        }
        pending_ = 0;
    }

    uint64_t counts_[64] = {0};
    uint64_t lanes_[8] = {0};
    uint64_t n_ = 0;
    int pending_ = 0;
};

}  // namespace

extern "C" sh_status sh_fingerprint_seomoz(const char *text, size_t len, uint64_t *out) noexcept
{
    const auto *s = reinterpret_cast<const unsigned char *>(text);
    uint64_t window[SH_SEOMOZ_WINDOW] = {0, 0, 0};
    int oldest = 0;
    uint64_t feature = 0;
    Counts counts;
    size_t i = 0;
    while (i < len)
    {
        if (!ascii_letter(s[i]))
        {
            i++;
            continue;
        }
        size_t start = i;
        while (i < len && ascii_letter(s[i]))
            i++;
        uint64_t h = sh_jenkins64(s + start, i - start);
        feature = rotl(feature, 1) ^ rotl(window[oldest], SH_SEOMOZ_WINDOW) ^ h;
        window[oldest] = h;
        oldest = (oldest + 1) % SH_SEOMOZ_WINDOW;
        counts.add(feature);
    }
    *out = counts.reversed_majority();
    return SH_OK;
}
