// simhash-find-all — every pair of input hashes within --distance bits, as
// seomoz simhash-cpp's binary of the same name writes them: "[a, b]" per
// line with a < b.  Pairs are written as they are found, so memory does not
// grow with their number; like seomoz's (that of its hash set), their order
// is unspecified: compare outputs sorted.  A repeated hash is one hash, as in
// seomoz; --exact-copies first writes [a, a] once for each repeated a.  See
// batch_cli.hpp for the options.
#include "batch_cli.hpp"

#include <new>

namespace
{

struct Output
{
    const std::vector<uint64_t> *h;
    batch_cli::Writer *out;
};

// Batch callback: each pair of indices written as [a, b] of fingerprints.
int write_pairs(const sh_pair *pairs, size_t n, void *arg)
{
    auto *o = static_cast<Output *>(arg);
    for (size_t i = 0; i < n; i++)
    {
        const uint64_t pair[2] = {(*o->h)[pairs[i].a], (*o->h)[pairs[i].b]};
        o->out->array(pair, 2);
    }
    return 0;
}

}  // namespace

// simhash-find-all: every pair within --distance bits of the input fingerprints.
int main(int argc, char **argv)
{
    using namespace batch_cli;
    g_prog = "simhash-find-all";
    const Options o = parse_args(argc, argv, Tool{"every pair within DISTANCE bits as [a, b]", true});
    try
    {
        std::vector<uint64_t> copies;
        const std::vector<uint64_t> h = read_hashes(o.input, o.format, o.exact_copies ? &copies : nullptr);
        Writer out(o.output);
        for (uint64_t c : copies)
        {
            const uint64_t pair[2] = {c, c};
            out.array(pair, 2);
        }
        Output to{&h, &out};
        check(sh_find_all_each(h.data(), h.size(), o.blocks, o.distance, o.threads, nullptr, nullptr, 1 << 16,
                               write_pairs, &to));
        out.commit();
    }
    catch (const std::bad_alloc &)
    {
        die(1, "out of memory");
    }
    return 0;
}
