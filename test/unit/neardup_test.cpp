// Unit tests of the in-memory set-similarity join (neardup.h) and of its
// partitioned form (neardup_batch.h): every result is checked against the
// Jaccard of every pair of rows, computed here by a plain merge; the budget
// refuses before anything is built; an interrupted join resumes where it
// stopped; every batch count gives each pair once.
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

// The partitioned join as the shim runs it: distinct sets, a sketch, prefix
// entries by batch, each batch joined, candidates verified and kept by the
// batch that owns them.
Found run_batches(const std::vector<Set> &rows, double t, uint32_t nbatches)
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
    std::vector<std::vector<sh_ndb_entry>> batches(nbatches), prefixes(sets.size());
    for (uint32_t s = 0; s < sets.size(); s++)
    {
        std::vector<sh_ndb_entry> ents(sets[s].size() + 1);
        size_t m = 0;
        EXPECT_EQ(sh_ndo_prefix(order, sets[s].data(), static_cast<uint32_t>(sets[s].size()), t, s,
                                ents.data(), &m),
                  SH_OK);
        ents.resize(m);
        prefixes[s] = ents;
        for (size_t i = 0; i < m; i++)
            batches[sh_ndo_batch(ents[i].token, nbatches)].push_back(ents[i]);
    }
    Found found;
    auto report = [&](uint32_t x, uint32_t y, double j)
    {
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
    for (uint32_t b = 0; b < nbatches; b++)
    {
        sh_ndb *batch = nullptr;
        EXPECT_EQ(sh_ndb_create(t, &batch), SH_OK);
        EXPECT_EQ(sh_ndb_add(batch, batches[b].data(), batches[b].size()), SH_OK);
        uint32_t out[2 * 5];
        for (int done = 0; !done;)
        {
            size_t n = 0;
            EXPECT_EQ(sh_ndb_next(batch, out, 5, &n, &done, nullptr, nullptr), SH_OK);
            for (size_t i = 0; i < n; i++)
            {
                const uint32_t x = out[2 * i], y = out[2 * i + 1];
                // from the first two entries of each, as the shim's heads, else from all
                const size_t hx = std::min<size_t>(2, prefixes[x].size());
                const size_t hy = std::min<size_t>(2, prefixes[y].size());
                uint32_t owner =
                    sh_ndo_owner_head(prefixes[x].data(), hx, hx == prefixes[x].size(), prefixes[y].data(),
                                      hy, hy == prefixes[y].size(), nbatches);
                const uint32_t whole = sh_ndo_owner(prefixes[x].data(), prefixes[x].size(),
                                                    prefixes[y].data(), prefixes[y].size(), nbatches);
                if (owner == SH_NDO_UNKNOWN)
                    owner = whole;
                EXPECT_EQ(owner, whole);
                if (owner != b)
                    continue;
                const double j =
                    sh_ndo_jaccard(sets[x].data(), sets[x].size(), sets[y].data(), sets[y].size());
                if (j >= t)
                    report(x, y, j);
            }
        }
        sh_ndb_free(batch);
    }
    sh_ndo_free(order);
    return found;
}

TEST(NearDupBatch, EqualsBruteForceForEveryBatchCount)
{
    for (unsigned seed : {1u, 2u, 5u})
    {
        std::vector<Set> rows = corpus(seed);
        for (double t : {0.1, 0.5, 0.8, 0.9, 1.0})
        {
            Found want = brute_force(rows, t);
            ASSERT_GT(want.size(), 10u);
            for (uint32_t nbatches : {1u, 2u, 7u, 64u})
                EXPECT_EQ(run_batches(rows, t, nbatches), want)
                    << "seed " << seed << " t " << t << " batches " << nbatches;
        }
    }
}

TEST(NearDupBatch, OwnerIsTheBatchOfTheFirstCommonToken)
{
    sh_ndo *order = nullptr;
    ASSERT_EQ(sh_ndo_create(0, &order), SH_OK);
    const uint64_t a[] = {10, 20, 30, 60}, b[] = {20, 30, 40, 60}, c[] = {50, 70};
    sh_ndo_count(order, a, 4);
    sh_ndo_count(order, b, 4);
    sh_ndo_count(order, b, 4);  // 20, 30, 60 thrice, 40 twice, 10 once
    sh_ndb_entry pa[4], pb[4], pc[2];
    size_t ma, mb, mc;
    ASSERT_EQ(sh_ndo_prefix(order, a, 4, 0.1, 0, pa, &ma), SH_OK);
    ASSERT_EQ(sh_ndo_prefix(order, b, 4, 0.1, 1, pb, &mb), SH_OK);
    ASSERT_EQ(sh_ndo_prefix(order, c, 2, 0.1, 2, pc, &mc), SH_OK);
    // rarest first; 10, seen once, is in no other set and not written
    ASSERT_EQ(ma, 3u);
    EXPECT_EQ(pa[0].token, 20u);
    EXPECT_EQ(pa[0].pos, 1u);
    ASSERT_EQ(mb, 4u);
    EXPECT_EQ(pb[0].token, 40u);
    // 20, 30 and 60 have the same estimate: the smaller hash comes first
    EXPECT_EQ(sh_ndo_owner(pa, ma, pb, mb, 1000), sh_ndo_batch(20, 1000));
    EXPECT_EQ(sh_ndo_owner(pa, ma, pc, mc, 1000), UINT32_MAX);
    EXPECT_DOUBLE_EQ(sh_ndo_jaccard(a, 4, b, 4), 0.6);
    EXPECT_EQ(sh_ndo_jaccard(a, 4, c, 2), 0.0);
    sh_ndo_free(order);
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
