// simhash-find-all — every pair of input hashes within --distance bits, as
// seomoz simhash-cpp's binary of the same name writes them: "[a, b]" per
// line with a < b.  Pairs are written as they are found, so memory does not
// grow with their number; like seomoz's (that of its hash set), their order
// is unspecified: compare outputs sorted.  A repeated hash is one hash, as in
// seomoz; --exact-copies first writes [a, a] once for each repeated a.
// Named input (simhash-fingerprint's "hash<TAB>file") gives "name_a<TAB>
// name_b<TAB>distance" lines instead, name_a from the earlier line.  See
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

// The input's hashes alone: seomoz's output.
void find_all_hashes(const batch_cli::Options &o, std::vector<uint64_t> &&lines)
{
    using namespace batch_cli;
    std::vector<uint64_t> copies;
    const std::vector<uint64_t> h = distinct_hashes(std::move(lines), o.exact_copies ? &copies : nullptr);
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

struct NamedOutput
{
    const batch_cli::Groups *g;
    const std::vector<std::string> *names;
    bool every_line;
    batch_cli::Writer *out;
};

void write_named(const NamedOutput &o, uint32_t a, uint32_t b, int distance)
{
    if (a > b)
        std::swap(a, b);
    o.out->line((*o.names)[a] + '\t' + (*o.names)[b] + '\t' + std::to_string(distance));
}

// Batch callback for named input: the lines of both hashes, paired.
int write_named_pairs(const sh_pair *pairs, size_t n, void *arg)
{
    const auto *o = static_cast<const NamedOutput *>(arg);
    const batch_cli::Groups &g = *o->g;
    for (size_t i = 0; i < n; i++)
    {
        const size_t a = pairs[i].a, b = pairs[i].b;
        const int d = sh_distance(g.hashes[a], g.hashes[b]);
        const size_t a_end = o->every_line ? g.start[a + 1] : g.start[a] + 1;
        const size_t b_end = o->every_line ? g.start[b + 1] : g.start[b] + 1;
        for (size_t x = g.start[a]; x < a_end; x++)
            for (size_t y = g.start[b]; y < b_end; y++)
                write_named(*o, g.lines[x], g.lines[y], d);
    }
    return 0;
}

// Named input: pairs of names; exact copies are pairs at distance 0 with
// --exact-copies, else only each hash's first line takes part.
void find_all_named(const batch_cli::Options &o, batch_cli::HashLines &lines)
{
    using namespace batch_cli;
    const Groups g = group_lines(lines.hashes());
    lines.hashes().clear();
    lines.hashes().shrink_to_fit();
    if (!o.exact_copies)
        report_copies(g);
    Writer out(o.output);
    NamedOutput to{&g, &lines.names(), o.exact_copies, &out};
    if (o.exact_copies)
        for (size_t k = 0; k < g.hashes.size(); k++)
            for (size_t x = g.start[k]; x < g.start[k + 1]; x++)
                for (size_t y = x + 1; y < g.start[k + 1]; y++)
                    write_named(to, g.lines[x], g.lines[y], 0);
    check(sh_find_all_each(g.hashes.data(), g.hashes.size(), o.blocks, o.distance, o.threads, nullptr,
                           nullptr, 1 << 16, write_named_pairs, &to));
    out.commit();
}

}  // namespace

// simhash-find-all: every pair within --distance bits of the input fingerprints.
int main(int argc, char **argv)
{
    using namespace batch_cli;
    g_prog = "simhash-find-all";
    const Options o = parse_args(
        argc, argv,
        Tool{"every pair within DISTANCE bits as [a, b]", "\"name_a<TAB>name_b<TAB>distance\" per pair",
             "a repeated hash is also a pair with\n"
             "itself, [a, a] once per hash (named: every two lines holding it, distance 0)."});
    try
    {
        HashLines lines = read_lines(o.input, o.format);
        if (lines.named() && !o.hashes)
            find_all_named(o, lines);
        else
            find_all_hashes(o, std::move(lines.hashes()));
    }
    catch (const std::bad_alloc &)
    {
        die(1, "out of memory");
    }
    return 0;
}
