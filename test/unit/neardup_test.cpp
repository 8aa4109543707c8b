// Unit tests of the in-memory set-similarity join (neardup.h) and of its
// form by chunks (neardup_batch.h): every result is checked against the
// Jaccard of every pair of rows, computed here by a plain merge; the budget
// refuses before anything is built; an interrupted join resumes where it
// stopped; every chunk size gives each pair once.
#include "neardup.h"
#include "neardup_batch.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <utility>
#include <vector>

namespace
{

using Set = std::vector<uint64_t>;
using Found = std::map<std::pair<uint32_t, uint32_t>, double>;

double jaccard(const Set &a, const Set &b)
{
    if (a.empty() && b.empty())
        return 1.0;
    size_t i = 0, j = 0, common = 0;
    while (i < a.size() && j < b.size())
    {
        if (a[i] < b[j])
            i++;
        else if (a[i] > b[j])
            j++;
        else
        {
            common++;
            i++;
            j++;
        }
    }
    return static_cast<double>(common) / static_cast<double>(a.size() + b.size() - common);
}

// Rows: random sets over a small universe (frequent tokens), each with some
// edited copies (tokens dropped or added), exact copies and empty sets.
std::vector<Set> corpus(unsigned seed)
{
    std::mt19937_64 rng(seed);
    std::vector<Set> rows;
    for (int base = 0; base < 60; base++)
    {
        std::uniform_int_distribution<int> len(0, base % 7 == 0 ? 3 : 120);
        Set s;
        int n = len(rng);
        for (int i = 0; i < n; i++)
            s.push_back(rng() % (base % 3 == 0 ? 400 : 1u << 30) * 0x9E3779B97F4A7C15ull);
        std::sort(s.begin(), s.end());
        s.erase(std::unique(s.begin(), s.end()), s.end());
        rows.push_back(s);
        for (int c = 0; c < 3; c++)
        {
            Set e;
            for (uint64_t h : rows.back())
                if (rng() % 10 != 0)
                    e.push_back(h);
            for (int k = 0; k < static_cast<int>(rng() % 4); k++)
                e.push_back(rng());
            std::sort(e.begin(), e.end());
            e.erase(std::unique(e.begin(), e.end()), e.end());
            rows.push_back(e);
        }
        if (base % 5 == 0)
            rows.push_back(s);
    }
    return rows;
}

// Row pairs (a < b) of a finished join, expanded from its pairs of sets.
Found run(const std::vector<Set> &rows, double t, size_t budget, sh_status *prepared,
          sh_interrupt_fn interrupt = nullptr, void *arg = nullptr, uint32_t max_sets = 3)
{
    sh_nd *nd = nullptr;
    Found found;
    EXPECT_EQ(sh_nd_create(&nd), SH_OK);
    for (const Set &s : rows)
        EXPECT_EQ(sh_nd_add(nd, s.data(), s.size()), SH_OK);
    *prepared = sh_nd_prepare(nd, t, budget, nullptr, nullptr);
    if (*prepared != SH_OK)
    {
        sh_nd_free(nd);
        return found;
    }
    sh_nd_pair out[7];
    for (int done = 0; !done;)
    {
        size_t n = 0;
        sh_status st = sh_nd_next(nd, out, 7, max_sets, &n, &done, interrupt, arg);
        if (st == SH_ERR_INTERRUPTED)
            continue;
        EXPECT_EQ(st, SH_OK);
        for (size_t i = 0; i < n; i++)
        {
            size_t na, nb;
            const uint32_t *ra = sh_nd_rows_of(nd, out[i].a, &na);
            const uint32_t *rb = sh_nd_rows_of(nd, out[i].b, &nb);
            for (size_t x = 0; x < na; x++)
                for (size_t y = out[i].a == out[i].b ? x + 1 : 0; y < nb; y++)
                {
                    auto key = std::make_pair(std::min(ra[x], rb[y]), std::max(ra[x], rb[y]));
                    EXPECT_EQ(found.count(key), 0u) << "pair reported twice";
                    found[key] = out[i].similarity;
                }
        }
    }
    sh_nd_free(nd);
    return found;
}

TEST(NearDup, EqualsBruteForceAtEveryThreshold)
{
    for (unsigned seed : {1u, 2u, 3u})
    {
        std::vector<Set> rows = corpus(seed);
        for (double t : {0.1, 0.3, 0.5, 0.7, 0.8, 0.9, 0.95, 1.0})
        {
            Found want;
            for (uint32_t a = 0; a < rows.size(); a++)
                for (uint32_t b = a + 1; b < rows.size(); b++)
                {
                    double j = jaccard(rows[a], rows[b]);
                    if (j >= t)
                        want[{a, b}] = j;
                }
            ASSERT_GT(want.size(), 10u) << "seed " << seed << " t " << t;
            sh_status st;
            Found got = run(rows, t, SIZE_MAX, &st);
            ASSERT_EQ(st, SH_OK);
            EXPECT_EQ(got, want) << "seed " << seed << " t " << t;
        }
    }
}

Found brute_force(const std::vector<Set> &rows, double t)
{
    Found want;
    for (uint32_t a = 0; a < rows.size(); a++)
        for (uint32_t b = a + 1; b < rows.size(); b++)
        {
            double j = jaccard(rows[a], rows[b]);
            if (j >= t)
                want[{a, b}] = j;
        }
    return want;
}

// The join by chunks as the shim runs it: distinct sets, a sketch, the sets
// with their prefixes in join order, cut into chunks of at most `per_chunk`
// sets; each chunk joined with itself, then probed by every later set while
// one may reach it.
Found run_chunks(const std::vector<Set> &rows, double t, uint32_t per_chunk)
{
    std::map<Set, uint32_t> ids;
    std::vector<Set> sets;
    std::vector<std::vector<uint32_t>> rows_of;
    for (uint32_t r = 0; r < rows.size(); r++)
    {
        auto it = ids.emplace(rows[r], static_cast<uint32_t>(sets.size()));
        if (it.second)
        {
            sets.push_back(rows[r]);
            rows_of.emplace_back();
        }
        rows_of[it.first->second].push_back(r);
    }
    sh_ndo *order = nullptr;
    EXPECT_EQ(sh_ndo_create(0, &order), SH_OK);
    for (const Set &s : sets)
        sh_ndo_count(order, s.data(), s.size());
    std::vector<uint32_t> ord(sets.size());
    for (uint32_t s = 0; s < sets.size(); s++)
        ord[s] = s;
    std::sort(ord.begin(), ord.end(),
              [&](uint32_t a, uint32_t b)
              { return sets[a].size() != sets[b].size() ? sets[a].size() < sets[b].size() : a < b; });
    std::vector<std::vector<uint64_t>> tokens(sets.size());
    std::vector<std::vector<uint32_t>> pos(sets.size());
    for (uint32_t s = 0; s < sets.size(); s++)
    {
        tokens[s].resize(sets[s].size() + 1);
        pos[s].resize(sets[s].size() + 1);
        size_t m = 0;
        EXPECT_EQ(sh_ndo_prefix(order, sets[s].data(), static_cast<uint32_t>(sets[s].size()), t,
                                tokens[s].data(), pos[s].data(), &m),
                  SH_OK);
        tokens[s].resize(m);
        pos[s].resize(m);
    }
    Found found;
    auto report = [&](uint32_t x, uint32_t y, double j)
    {
        EXPECT_DOUBLE_EQ(j, jaccard(sets[x], sets[y]));
        for (size_t a = 0; a < rows_of[x].size(); a++)
            for (size_t b = x == y ? a + 1 : 0; b < rows_of[y].size(); b++)
            {
                uint32_t ra = rows_of[x][a], rb = rows_of[y][b];
                auto key = std::make_pair(std::min(ra, rb), std::max(ra, rb));
                EXPECT_EQ(found.count(key), 0u) << "pair reported twice";
                found[key] = j;
            }
    };
    for (uint32_t s = 0; s < sets.size(); s++)
        report(s, s, 1.0);
    sh_ndc *chunk = nullptr;
    EXPECT_EQ(sh_ndc_create(t, &chunk), SH_OK);
    for (size_t start = 0; start < ord.size(); start += per_chunk)
    {
        sh_ndc_reset(chunk);
        const size_t stop = std::min(ord.size(), start + per_chunk);
        for (size_t i = start; i < stop; i++)
        {
            const uint32_t s = ord[i];
            EXPECT_EQ(sh_ndc_add(chunk, s, sets[s].data(), static_cast<uint32_t>(sets[s].size()),
                                 tokens[s].data(), pos[s].data(), tokens[s].size()),
                      SH_OK);
        }
        EXPECT_EQ(sh_ndc_build(chunk), SH_OK);
        EXPECT_EQ(sh_ndc_sets(chunk), stop - start);
        const sh_nd_pair *pairs = nullptr;
        size_t n = 0;
        for (uint32_t l = 0; l < stop - start; l++)
        {
            EXPECT_EQ(sh_ndc_probe_own(chunk, l, &pairs, &n), SH_OK);
            for (size_t i = 0; i < n; i++)
                report(pairs[i].a, pairs[i].b, pairs[i].similarity);
        }
        for (size_t i = stop; i < ord.size(); i++)
        {
            const uint32_t s = ord[i];
            const auto ns = static_cast<uint32_t>(sets[s].size());
            if (!sh_ndc_reaches(chunk, ns))
                break;
            size_t ncand = 0;
            EXPECT_EQ(sh_ndc_probe(chunk, ns, tokens[s].data(), pos[s].data(), tokens[s].size(), &ncand),
                      SH_OK);
            if (ncand == 0)
                continue;
            EXPECT_EQ(sh_ndc_verify(chunk, s, sets[s].data(), ns, &pairs, &n), SH_OK);
            for (size_t p = 0; p < n; p++)
                report(pairs[p].a, pairs[p].b, pairs[p].similarity);
        }
    }
    sh_ndc_free(chunk);
    sh_ndo_free(order);
    return found;
}

TEST(NearDupChunks, EqualsBruteForceForEveryChunkSize)
{
    for (unsigned seed : {1u, 2u, 5u})
    {
        std::vector<Set> rows = corpus(seed);
        for (double t : {0.1, 0.5, 0.8, 0.9, 1.0})
        {
            Found want = brute_force(rows, t);
            ASSERT_GT(want.size(), 10u);
            for (uint32_t per_chunk : {1u, 2u, 7u, 64u, 100000u})
                EXPECT_EQ(run_chunks(rows, t, per_chunk), want)
                    << "seed " << seed << " t " << t << " sets per chunk " << per_chunk;
        }
    }
}

TEST(NearDupChunks, PrefixIsRarestFirstWithoutSingletons)
{
    sh_ndo *order = nullptr;
    ASSERT_EQ(sh_ndo_create(0, &order), SH_OK);
    const uint64_t a[] = {10, 20, 30, 60}, b[] = {20, 30, 40, 60};
    sh_ndo_count(order, a, 4);
    sh_ndo_count(order, b, 4);
    sh_ndo_count(order, b, 4);  // 20, 30, 60 thrice, 40 twice, 10 once
    uint64_t ta[4], tb[4];
    uint32_t pa[4], pb[4];
    size_t ma = 0, mb = 0;
    ASSERT_EQ(sh_ndo_prefix(order, a, 4, 0.1, ta, pa, &ma), SH_OK);
    ASSERT_EQ(sh_ndo_prefix(order, b, 4, 0.1, tb, pb, &mb), SH_OK);
    // rarest first; 10, seen once, is in no other set and not written, but counts as position 0
    ASSERT_EQ(ma, 3u);
    EXPECT_EQ(ta[0], 20u);
    EXPECT_EQ(pa[0], 1u);
    ASSERT_EQ(mb, 4u);
    EXPECT_EQ(tb[0], 40u);
    // 20, 30 and 60 have the same estimate: the smaller hash comes first
    EXPECT_EQ(tb[1], 20u);
    EXPECT_EQ(tb[3], 60u);
    EXPECT_EQ(sh_ndo_prefix(order, a, 4, 0, ta, pa, &ma), SH_ERR_ARGUMENT);
    sh_ndo_free(order);
}

TEST(NearDupChunks, SetsGoInJoinOrderBeforeTheBuild)
{
    sh_ndc *chunk = nullptr;
    ASSERT_EQ(sh_ndc_create(0.8, &chunk), SH_OK);
    const uint64_t a[] = {1, 2, 3}, b[] = {1, 2};
    const uint32_t pos[] = {0};
    size_t n = 0;
    EXPECT_EQ(sh_ndc_add(chunk, 0, a, 3, a, pos, 1), SH_OK);
    EXPECT_EQ(sh_ndc_add(chunk, 1, b, 2, b, pos, 1), SH_ERR_ARGUMENT);  // smaller than the last
    EXPECT_EQ(sh_ndc_probe(chunk, 2, b, pos, 1, &n), SH_ERR_ARGUMENT);  // not built
    EXPECT_EQ(sh_ndc_build(chunk), SH_OK);
    EXPECT_EQ(sh_ndc_add(chunk, 2, a, 3, a, pos, 1), SH_ERR_ARGUMENT);  // built
    EXPECT_TRUE(sh_ndc_reaches(chunk, 3));
    EXPECT_FALSE(sh_ndc_reaches(chunk, 4));  // 3 / 4 < 0.8
    sh_ndc_free(chunk);
    sh_ndc *bad = nullptr;
    EXPECT_EQ(sh_ndc_create(1.5, &bad), SH_ERR_ARGUMENT);
    EXPECT_EQ(bad, nullptr);
}

TEST(NearDup, BudgetRefusesWithWhatItNeeds)
{
    std::vector<Set> rows = corpus(4);
    sh_status st;
    run(rows, 0.8, 1000, &st);
    EXPECT_EQ(st, SH_ERR_NOMEM);
    sh_nd *nd = nullptr;
    ASSERT_EQ(sh_nd_create(&nd), SH_OK);
    for (const Set &s : rows)
        ASSERT_EQ(sh_nd_add(nd, s.data(), s.size()), SH_OK);
    ASSERT_EQ(sh_nd_prepare(nd, 0.8, 1000, nullptr, nullptr), SH_ERR_NOMEM);
    sh_nd_stats stats;
    sh_nd_get_stats(nd, &stats);
    EXPECT_GT(stats.needed, 1000u);
    // the sets are intact: the same object prepares with enough memory
    EXPECT_EQ(sh_nd_prepare(nd, 0.8, SIZE_MAX, nullptr, nullptr), SH_OK);
    sh_nd_free(nd);
}

int every_other(void *arg)
{
    int *calls = static_cast<int *>(arg);
    return (*calls)++ % 2;
}

TEST(NearDup, InterruptedJoinResumes)
{
    std::vector<Set> rows;
    for (int r = 0; r < 3000; r++)
        rows.push_back(Set{static_cast<uint64_t>(r / 2) * 7919, static_cast<uint64_t>(r / 2) * 7919 + 1});
    sh_status st;
    Found plain = run(rows, 0.9, SIZE_MAX, &st);
    ASSERT_EQ(st, SH_OK);
    ASSERT_EQ(plain.size(), 1500u);
    int calls = 0;
    Found interrupted = run(rows, 0.9, SIZE_MAX, &st, every_other, &calls, 1000);
    EXPECT_GT(calls, 2) << "the join never polled";
    EXPECT_EQ(interrupted, plain);
}

TEST(NearDup, RejectsUnsortedSetsAndBadThresholds)
{
    sh_nd *nd = nullptr;
    ASSERT_EQ(sh_nd_create(&nd), SH_OK);
    const uint64_t bad[] = {5, 3};
    EXPECT_EQ(sh_nd_add(nd, bad, 2), SH_ERR_ARGUMENT);
    const uint64_t dup[] = {3, 3};
    EXPECT_EQ(sh_nd_add(nd, dup, 2), SH_ERR_ARGUMENT);
    EXPECT_EQ(sh_nd_prepare(nd, 0, SIZE_MAX, nullptr, nullptr), SH_ERR_ARGUMENT);
    EXPECT_EQ(sh_nd_prepare(nd, 1.5, SIZE_MAX, nullptr, nullptr), SH_ERR_ARGUMENT);
    sh_nd_free(nd);
}

}  // namespace
