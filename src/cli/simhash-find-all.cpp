// simhash-find-all — every pair of input hashes within --distance bits, as
// seomoz simhash-cpp's binary of the same name writes them: "[a, b]" per
// line with a < b.  Our lines come sorted by (a, b); seomoz's order is that of
// its hash set, so compare outputs sorted.  See batch_cli.hpp for the options.
#include "batch_cli.hpp"

int main(int argc, char **argv)
{
    using namespace batch_cli;
    g_prog = "simhash-find-all";
    const Options o = parse_args(argc, argv, "every pair within DISTANCE bits as [a, b]");
    const std::vector<uint64_t> h = read_hashes(o.input);

    sh_pair *pairs = nullptr;
    size_t np = 0;
    check(sh_find_all(h.data(), h.size(), o.blocks, o.distance, o.threads, nullptr, nullptr, &pairs, &np));
    Writer out(o.output);
    for (size_t i = 0; i < np; i++)
    {
        const uint64_t pair[2] = {h[pairs[i].a], h[pairs[i].b]};
        out.array(pair, 2);
    }
    sh_batch_free(pairs);
    out.commit();
    return 0;
}
