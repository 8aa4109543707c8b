// The input reader of simhash-find-all / simhash-find-clusters (HashLines in
// src/cli/batch_cli.hpp): the input, cut into blocks at places the first bytes
// choose, gives the hashes (or the first malformed line) of a reference
// reader written here that splits the whole input at once.
#include "batch_cli.hpp"
#include "fuzz.hpp"

#include <string>
#include <vector>

namespace
{

// One line: optional trailing '\r', then 1+ decimal digits worth at most 2^64 - 1.
bool reference_line(std::string l, uint64_t *out)
{
    if (!l.empty() && l.back() == '\r')
        l.pop_back();
    if (l.empty())
        return false;
    unsigned __int128 v = 0;
    for (char c : l)
    {
        if (c < '0' || c > '9')
            return false;
        v = v * 10 + static_cast<unsigned>(c - '0');
        if (v > UINT64_MAX)
            return false;
    }
    *out = static_cast<uint64_t>(v);
    return true;
}

// The hashes, and the 1-based number of the first bad line (0: none).
size_t reference(const std::string &all, std::vector<uint64_t> &h)
{
    size_t line = 0, at = 0;
    while (at < all.size())
    {
        size_t nl = all.find('\n', at);
        std::string l = all.substr(at, nl == std::string::npos ? std::string::npos : nl - at);
        line++;
        uint64_t v;
        if (!reference_line(l, &v))
            return line;
        h.push_back(v);
        if (nl == std::string::npos)
            break;
        at = nl + 1;
    }
    return 0;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    FuzzBytes in{data, size};
    size_t cuts[4];
    for (size_t &c : cuts)
        c = in.take();
    const std::string all(reinterpret_cast<const char *>(in.data), in.size);
    std::vector<uint64_t> want;
    size_t want_bad = reference(all, want);

    batch_cli::HashLines lines("<fuzz>");
    size_t at = 0;
    for (size_t k = 0; at < all.size() && lines.ok(); k++)
    {
        size_t n = std::min(all.size() - at, 1 + cuts[k % 4] * (k % 3 == 2 ? 37 : 1));
        lines.feed(all.data() + at, n);
        at += n;
    }
    lines.finish();
    FUZZ_CHECK(lines.bad_line() == want_bad);
    if (want_bad == 0)
        FUZZ_CHECK(lines.hashes() == want);
    else
        FUZZ_CHECK(lines.error().find("<fuzz>:" + std::to_string(want_bad) + ": ") == 0);
    return 0;
}
