// simhash-find-clusters — the connected components (two or more hashes) of
// the graph of input hashes within --distance bits, as seomoz simhash-cpp's
// binary of the same name writes them: "[a, b, c]" per line.  Our members are
// ascending and clusters ordered by their smallest member; seomoz's order is
// that of its hash sets, so compare outputs sorted.  See batch_cli.hpp.
#include "batch_cli.hpp"

#include <new>

namespace
{

// Reads the input, finds the clusters and writes each as [a, b, ...].
void find_clusters(const batch_cli::Options &o)
{
    using namespace batch_cli;
    const std::vector<uint64_t> h = read_hashes(o.input, o.format);
    uint32_t *members = nullptr;
    size_t *bounds = nullptr, nc = 0;
    check(sh_find_clusters(h.data(), h.size(), o.blocks, o.distance, o.threads, nullptr, nullptr, &members,
                           &bounds, &nc));
    Writer out(o.output);
    std::vector<uint64_t> values;
    for (size_t c = 0; c < nc; c++)
    {
        values.clear();
        for (size_t k = bounds[c]; k < bounds[c + 1]; k++)
            values.push_back(h[members[k]]);
        out.array(values.data(), values.size());
    }
    sh_free(members);
    sh_free(bounds);
    out.commit();
}

}  // namespace

// simhash-find-clusters: every cluster (connected component) of the input.
int main(int argc, char **argv)
{
    using namespace batch_cli;
    g_prog = "simhash-find-clusters";
    const Options o =
        parse_args(argc, argv, Tool{"every cluster (connected component) as [a, b, ...]", false});
    try
    {
        find_clusters(o);
    }
    catch (const std::bad_alloc &)
    {
        die(1, "out of memory");
    }
    return 0;
}
