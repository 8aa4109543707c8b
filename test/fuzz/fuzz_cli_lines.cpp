// The input reader of simhash-find-all / simhash-find-clusters (HashLines in
// src/cli/batch_cli.hpp): the input, cut into blocks at places the first bytes
// choose and read in the form the next byte chooses, gives the hashes (or the
// first malformed line, or "undecided") of a reference reader written here
// that splits the whole input at once.
#include "batch_cli.hpp"
#include "fuzz.hpp"

#include <string>
#include <vector>

namespace
{

using batch_cli::Format;

enum class Kind
{
    kBad,
    kDecimal,
    kHex,
    kEither
};

// One line's hash: the text before a tab, or the line less a trailing '\r';
// 1+ decimal digits worth at most 2^64 - 1, or exactly 16 hex digits.
Kind reference_field(const std::string &line, uint64_t *dec, uint64_t *hex)
{
    std::string f = line;
    size_t tab = f.find('\t');
    if (tab != std::string::npos)
        f.resize(tab);
    else if (!f.empty() && f.back() == '\r')
        f.pop_back();
    if (f.empty())
        return Kind::kBad;
    bool digits = true, hexdigits = true;
    unsigned __int128 d = 0, x = 0;
    for (char c : f)
    {
        int dv = c >= '0' && c <= '9' ? c - '0' : -1;
        int xv = dv >= 0                ? dv
                 : c >= 'a' && c <= 'f' ? c - 'a' + 10
                 : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                        : -1;
        digits = digits && dv >= 0;
        hexdigits = hexdigits && xv >= 0;
        if (digits && d <= UINT64_MAX)
            d = d * 10 + static_cast<unsigned>(dv);
        if (hexdigits)
            x = x * 16 + static_cast<unsigned>(xv);
    }
    *dec = static_cast<uint64_t>(d);
    *hex = static_cast<uint64_t>(x);
    if (digits && d <= UINT64_MAX)
        return f.size() == 16 ? Kind::kEither : Kind::kDecimal;
    return f.size() == 16 && hexdigits ? Kind::kHex : Kind::kBad;
}

struct Reference
{
    std::vector<uint64_t> h;
    size_t bad_line = 0;     // 1-based; 0: none
    bool undecided = false;  // only 16-digit lines, in form auto
};

Reference reference(const std::string &all, Format form)
{
    Reference r;
    std::vector<uint64_t> as_hex;  // every line's hex reading, for lines that waited
    size_t line = 0, at = 0, waiting = 0;
    while (at < all.size())
    {
        size_t nl = all.find('\n', at);
        std::string l = all.substr(at, nl == std::string::npos ? std::string::npos : nl - at);
        line++;
        uint64_t dec = 0, hex = 0;
        Kind k = reference_field(l, &dec, &hex);
        if (k == Kind::kBad || (k == Kind::kHex && form == Format::kDecimal) ||
            (k == Kind::kDecimal && form == Format::kHex))
        {
            r.bad_line = line;
            return r;
        }
        if (form == Format::kAuto && k != Kind::kEither)
        {
            form = k == Kind::kHex ? Format::kHex : Format::kDecimal;
            if (form == Format::kHex)
                for (size_t i = 0; i < r.h.size(); i++)
                    r.h[i] = as_hex[i];
        }
        waiting += form == Format::kAuto;
        r.h.push_back(k == Kind::kHex || (k == Kind::kEither && form == Format::kHex) ? hex : dec);
        as_hex.push_back(hex);
        if (nl == std::string::npos)
            break;
        at = nl + 1;
    }
    r.undecided = form == Format::kAuto && waiting > 0;
    return r;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    FuzzBytes in{data, size};
    size_t cuts[4];
    for (size_t &c : cuts)
        c = in.take();
    const Format form = static_cast<Format>(in.take() % 3);
    const std::string all(reinterpret_cast<const char *>(in.data), in.size);
    const Reference want = reference(all, form);

    batch_cli::HashLines lines("<fuzz>", form);
    size_t at = 0;
    for (size_t k = 0; at < all.size() && lines.ok(); k++)
    {
        size_t n = std::min(all.size() - at, 1 + cuts[k % 4] * (k % 3 == 2 ? 37 : 1));
        lines.feed(all.data() + at, n);
        at += n;
    }
    lines.finish();
    FUZZ_CHECK(lines.bad_line() == want.bad_line);
    FUZZ_CHECK(lines.ok() == (want.bad_line == 0 && !want.undecided));
    if (lines.ok())
        FUZZ_CHECK(lines.hashes() == want.h);
    else if (want.bad_line)
        FUZZ_CHECK(lines.error().find("<fuzz>:" + std::to_string(want.bad_line) + ": ") == 0);
    else
        FUZZ_CHECK(lines.error().find("<fuzz>: every hash is 16 decimal digits") == 0);
    return 0;
}
