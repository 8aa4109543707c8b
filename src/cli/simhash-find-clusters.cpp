// simhash-find-clusters — the connected components (two or more hashes) of
// the graph of input hashes within --distance bits, as seomoz simhash-cpp's
// binary of the same name writes them: "[a, b, c]" per line.  Our members are
// ascending and clusters ordered by their smallest member; seomoz's order is
// that of its hash sets, so compare outputs sorted.  With --exact-copies a
// hash is written once per line holding it, and a repeated hash alone is a
// cluster.  Named input (simhash-fingerprint's "hash<TAB>file") gives the
// names of each cluster's lines, tab-separated, in input order, clusters
// ordered by their first line.  See batch_cli.hpp.
#include "batch_cli.hpp"

#include <new>

namespace
{

// The clusters of the distinct hashes of g, as lists of group numbers;
// with every_line, a group of two or more lines outside any cluster is a
// cluster of its own.
std::vector<std::vector<size_t>> clusters_of(const batch_cli::Options &o, const batch_cli::Groups &g,
                                             bool every_line)
{
    using namespace batch_cli;
    uint32_t *members = nullptr;
    size_t *bounds = nullptr, nc = 0;
    check(sh_find_clusters(g.hashes.data(), g.hashes.size(), o.blocks, o.distance, o.threads, nullptr,
                           nullptr, &members, &bounds, &nc));
    std::vector<std::vector<size_t>> out(nc);
    std::vector<bool> in_cluster(g.hashes.size());
    for (size_t c = 0; c < nc; c++)
        for (size_t k = bounds[c]; k < bounds[c + 1]; k++)
        {
            out[c].push_back(members[k]);
            in_cluster[members[k]] = true;
        }
    sh_free(members);
    sh_free(bounds);
    if (every_line)
        for (size_t k = 0; k < g.hashes.size(); k++)
            if (!in_cluster[k] && g.size(k) > 1)
                out.push_back({k});
    return out;
}

// The input's hashes alone: seomoz's output ([a, a, b] for a repeated a
// with --exact-copies).
void find_clusters_hashes(const batch_cli::Options &o, std::vector<uint64_t> &&lines)
{
    using namespace batch_cli;
    Groups g;
    if (o.exact_copies)
        g = group_lines(lines);
    else
    {
        g.hashes = distinct_hashes(std::move(lines));
        for (size_t k = 0; k <= g.hashes.size(); k++)
            g.start.push_back(k);
    }
    std::vector<std::vector<size_t>> clusters = clusters_of(o, g, o.exact_copies);
    std::sort(clusters.begin(), clusters.end());  // members ascend: by smallest member
    Writer out(o.output);
    std::vector<uint64_t> values;
    for (const auto &c : clusters)
    {
        values.clear();
        for (size_t k : c)
            values.insert(values.end(), g.size(k), g.hashes[k]);
        out.array(values.data(), values.size());
    }
    out.commit();
}

// Named input: the names of each cluster's lines (each hash's first line
// only, unless --exact-copies).
void find_clusters_named(const batch_cli::Options &o, batch_cli::HashLines &lines)
{
    using namespace batch_cli;
    const Groups g = group_lines(lines.hashes());
    lines.hashes().clear();
    lines.hashes().shrink_to_fit();
    if (!o.exact_copies)
        report_copies(g);
    std::vector<std::vector<uint32_t>> clusters;
    for (const auto &c : clusters_of(o, g, o.exact_copies))
    {
        std::vector<uint32_t> members;
        for (size_t k : c)
            members.insert(members.end(), g.lines.begin() + static_cast<std::ptrdiff_t>(g.start[k]),
                           g.lines.begin() +
                               static_cast<std::ptrdiff_t>(o.exact_copies ? g.start[k + 1] : g.start[k] + 1));
        std::sort(members.begin(), members.end());
        clusters.push_back(std::move(members));
    }
    std::sort(clusters.begin(), clusters.end());
    Writer out(o.output);
    const std::vector<std::string> &names = lines.names();
    for (const auto &c : clusters)
    {
        std::string text;
        for (size_t i = 0; i < c.size(); i++)
            text += (i ? "\t" : "") + names[c[i]];
        out.line(text);
    }
    out.commit();
}

}  // namespace

// simhash-find-clusters: every cluster (connected component) of the input.
int main(int argc, char **argv)
{
    using namespace batch_cli;
    g_prog = "simhash-find-clusters";
    const Options o = parse_args(argc, argv,
                                 Tool{"every cluster (connected component) as [a, b, ...]",
                                      "the names of each cluster's lines, tab-separated",
                                      "a hash is written once per\n"
                                      "line holding it, and a repeated hash alone is a cluster ([a, a])."});
    try
    {
        HashLines lines = read_lines(o.input, o.format);
        if (lines.named() && !o.hashes)
            find_clusters_named(o, lines);
        else
            find_clusters_hashes(o, std::move(lines.hashes()));
    }
    catch (const std::bad_alloc &)
    {
        die(1, "out of memory");
    }
    return 0;
}
