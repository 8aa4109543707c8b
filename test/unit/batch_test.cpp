// Unit tests of find_all / clusters: every result is checked against an
// O(n^2) scan and a union-find over its pairs, written here independently.
#include "batch.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <random>
#include <tuple>
#include <vector>

namespace
{

using Pairs = std::vector<std::pair<uint32_t, uint32_t>>;

Pairs brute_pairs(const std::vector<uint64_t> &h, int d)
{
    Pairs out;
    for (uint32_t a = 0; a < h.size(); a++)
        for (uint32_t b = a + 1; b < h.size(); b++)
            if (__builtin_popcountll(h[a] ^ h[b]) <= d)
                out.emplace_back(a, b);
    return out;
}

// Label = smallest position of the component, by a plain union-find.
std::vector<uint32_t> brute_labels(size_t n, const Pairs &pairs)
{
    std::vector<uint32_t> parent(n);
    for (uint32_t i = 0; i < n; i++)
        parent[i] = i;
    auto find = [&](uint32_t x)
    {
        while (parent[x] != x)
            x = parent[x];
        return x;
    };
    for (auto [a, b] : pairs)
    {
        uint32_t ra = find(a), rb = find(b);
        if (ra != rb)
            parent[std::max(ra, rb)] = std::min(ra, rb);
    }
    std::vector<uint32_t> label(n);
    for (uint32_t i = 0; i < n; i++)
        label[i] = find(i);
    return label;
}

uint64_t flip_bits(uint64_t v, int k, std::mt19937_64 &rng)
{
    for (int i = 0; i < k; i++)
        v ^= uint64_t{1} << (rng() % 64);  // may flip a bit back: distance <= k
    return v;
}

// Random fingerprints plus planted near copies at 0..5 flipped bits, exact
// duplicates, and a chain whose ends are far apart.
std::vector<uint64_t> planted(size_t nrandom, unsigned seed)
{
    std::mt19937_64 rng(seed);
    std::vector<uint64_t> h;
    for (size_t i = 0; i < nrandom; i++)
        h.push_back(rng());
    for (size_t i = 0; i < nrandom / 2; i++)
        h.push_back(flip_bits(h[rng() % h.size()], static_cast<int>(rng() % 6), rng));
    uint64_t c = rng();
    for (int i = 0; i < 8; i++)
    {
        c ^= uint64_t{1} << (i * 7);
        h.push_back(c);
    }
    h.push_back(h[3]);
    h.push_back(h[3]);
    std::shuffle(h.begin(), h.end(), rng);
    return h;
}

Pairs find_all(const std::vector<uint64_t> &h, int blocks, int d, int threads)
{
    sh_pair *p = nullptr;
    size_t np = 0;
    EXPECT_EQ(sh_find_all(h.data(), h.size(), blocks, d, threads, nullptr, nullptr, &p, &np), SH_OK);
    Pairs out;
    for (size_t i = 0; i < np; i++)
        out.emplace_back(p[i].a, p[i].b);
    sh_free(p);
    return out;
}

std::vector<uint32_t> labels(const std::vector<uint64_t> &h, int blocks, int d, int threads)
{
    std::vector<uint32_t> l(h.size());
    EXPECT_EQ(sh_cluster_labels(h.data(), h.size(), blocks, d, threads, nullptr, nullptr, l.data()), SH_OK);
    return l;
}

}  // namespace

TEST(Batch, FindAllEqualsBruteForce)
{
    for (unsigned seed = 1; seed <= 2; seed++)
    {
        std::vector<uint64_t> h = planted(1500, seed);
        for (int d = 0; d <= 4; d++)
        {
            Pairs want = brute_pairs(h, d);
            if (d >= 1)
            {
                EXPECT_GT(want.size(), 0u) << "planted pairs at d=" << d;
            }
            EXPECT_EQ(find_all(h, 0, d, 1), want) << "auto blocks, d=" << d;
            for (int blocks = std::max(4, d + 1); blocks <= 8; blocks++)
                EXPECT_EQ(find_all(h, blocks, d, 1), want) << "blocks=" << blocks << " d=" << d;
        }
    }
}

TEST(Batch, ClustersEqualUnionFindOfPairs)
{
    std::vector<uint64_t> h = planted(1500, 7);
    for (int d = 0; d <= 4; d++)
    {
        std::vector<uint32_t> want = brute_labels(h.size(), brute_pairs(h, d));
        for (int blocks = std::max(4, d + 1); blocks <= 8; blocks++)
            EXPECT_EQ(labels(h, blocks, d, 1), want) << "blocks=" << blocks << " d=" << d;
    }
}

TEST(Batch, FindClustersGroupsLabels)
{
    std::vector<uint64_t> h = planted(800, 3);
    const int d = 3;
    std::vector<uint32_t> want = brute_labels(h.size(), brute_pairs(h, d));
    std::map<uint32_t, std::vector<uint32_t>> comp;
    for (uint32_t i = 0; i < h.size(); i++)
        comp[want[i]].push_back(i);
    std::vector<std::vector<uint32_t>> expect;
    for (auto &[root, m] : comp)
        if (m.size() > 1)
            expect.push_back(m);
    ASSERT_GT(expect.size(), 0u);

    uint32_t *members = nullptr;
    size_t *bounds = nullptr, nc = 0;
    ASSERT_EQ(sh_find_clusters(h.data(), h.size(), 0, d, 2, nullptr, nullptr, &members, &bounds, &nc), SH_OK);
    std::vector<std::vector<uint32_t>> got;
    for (size_t c = 0; c < nc; c++)
        got.emplace_back(members + bounds[c], members + bounds[c + 1]);
    sh_free(members);
    sh_free(bounds);
    EXPECT_EQ(got, expect);
}

TEST(Batch, ClustersWithManyExactCopies)
{
    // Groups far above the copy-collapsing threshold, mixed with near copies.
    std::mt19937_64 rng(13);
    std::vector<uint64_t> h;
    for (int i = 0; i < 600; i++)
        h.push_back(rng());
    for (int i = 0; i < 900; i++)
        h.push_back(h[i % 5]);  // 180 copies each of 5 values
    for (int i = 0; i < 300; i++)
        h.push_back(flip_bits(h[i % 7], 1 + i % 4, rng));
    std::shuffle(h.begin(), h.end(), rng);
    for (int d = 0; d <= 4; d++)
    {
        std::vector<uint32_t> want = brute_labels(h.size(), brute_pairs(h, d));
        EXPECT_EQ(labels(h, 0, d, 1), want) << d;
        EXPECT_EQ(labels(h, 6, d, 2), want) << d;
    }
    // 200000 copies of one value: one cluster, found without 2*10^10 pair tests.
    std::vector<uint64_t> same(200000, 0x0123456789abcdefULL);
    same.push_back(~same[0]);
    std::vector<uint32_t> l = labels(same, 0, 3, 1);
    EXPECT_EQ(std::count(l.begin(), l.end(), 0u), 200000);
    EXPECT_EQ(l.back(), 200000u);
}

TEST(Batch, ThreadsAgreeWithOneThread)
{
    std::vector<uint64_t> h = planted(3000, 11);
    for (int blocks : {5, 6, 8})
    {
        EXPECT_EQ(find_all(h, blocks, 3, 2), find_all(h, blocks, 3, 1)) << blocks;
        EXPECT_EQ(find_all(h, blocks, 3, 3), find_all(h, blocks, 3, 1)) << blocks;
        EXPECT_EQ(labels(h, blocks, 3, 2), labels(h, blocks, 3, 1)) << blocks;
    }
}

TEST(Batch, LargeDistancesCompareAllPairs)
{
    std::vector<uint64_t> h = planted(300, 5);
    for (int d : {16, 30, 64})
    {
        EXPECT_EQ(sh_batch_auto_blocks(h.size(), d), 0);
        EXPECT_EQ(find_all(h, 0, d, 1), brute_pairs(h, d)) << d;
    }
    EXPECT_EQ(find_all(h, 0, 64, 1).size(), h.size() * (h.size() - 1) / 2);
}

TEST(Batch, AutoBlocksIsAValidLayout)
{
    EXPECT_EQ(sh_batch_auto_blocks(1000000, 0), 0);
    EXPECT_EQ(sh_batch_auto_blocks(1000000, -1), -1);
    EXPECT_EQ(sh_batch_auto_blocks(1000000, 65), -1);
    EXPECT_EQ(sh_batch_auto_blocks(10, 3), 0);  // tiny input: all pairs is cheapest
    for (int d = 1; d <= 6; d++)
    {
        int b = sh_batch_auto_blocks(1000000, d);
        EXPECT_GT(b, d) << d;
        EXPECT_LE(b, 16) << d;
    }
}

TEST(Batch, EmptyAndTinyInputs)
{
    std::vector<uint64_t> none;
    EXPECT_TRUE(find_all(none, 0, 3, 1).empty());
    std::vector<uint64_t> one{42};
    EXPECT_TRUE(find_all(one, 6, 3, 2).empty());
    EXPECT_EQ(labels(one, 0, 3, 1), std::vector<uint32_t>{0});
    std::vector<uint64_t> same{7, 7, 8};
    Pairs want{{0, 1}};
    EXPECT_EQ(find_all(same, 0, 0, 1), want);
    EXPECT_EQ(labels(same, 0, 0, 1), (std::vector<uint32_t>{0, 0, 2}));
    EXPECT_EQ(labels(same, 0, 1, 1), (std::vector<uint32_t>{0, 0, 2}));  // 7^8 = 15: 4 bits
    EXPECT_EQ(labels(same, 0, 4, 1), (std::vector<uint32_t>{0, 0, 0}));
}

TEST(Batch, RejectsBadArguments)
{
    std::vector<uint64_t> h{1, 2, 3};
    sh_pair *p = nullptr;
    size_t np = 0;
    EXPECT_EQ(sh_find_all(h.data(), 3, 0, -1, 1, nullptr, nullptr, &p, &np), SH_ERR_ARGUMENT);
    EXPECT_EQ(sh_find_all(h.data(), 3, 0, 65, 1, nullptr, nullptr, &p, &np), SH_ERR_ARGUMENT);
    EXPECT_EQ(sh_find_all(h.data(), 3, 3, 3, 1, nullptr, nullptr, &p, &np), SH_ERR_ARGUMENT);
    EXPECT_EQ(sh_find_all(h.data(), 3, 17, 3, 1, nullptr, nullptr, &p, &np), SH_ERR_ARGUMENT);
    EXPECT_EQ(sh_find_all(h.data(), 3, 8, 20, 1, nullptr, nullptr, &p, &np), SH_ERR_ARGUMENT);
    EXPECT_EQ(p, nullptr);
    EXPECT_EQ(np, 0u);
    // blocks play no part at distance 0
    EXPECT_EQ(sh_find_all(h.data(), 3, 3, 0, 1, nullptr, nullptr, &p, &np), SH_OK);
}

namespace
{
int stop_after(void *arg)
{
    auto *calls = static_cast<std::atomic<int> *>(arg);
    return ++*calls > 3;
}
}  // namespace

TEST(Batch, InterruptStopsWithNoOutput)
{
    std::mt19937_64 rng(9);
    std::vector<uint64_t> h(20000);
    for (auto &v : h)
        v = rng();
    for (int threads : {1, 2})
    {
        std::atomic<int> calls{0};
        sh_pair *p = nullptr;
        size_t np = 7;
        // distance 40: all 2*10^8 pairs tested, far more than three polls
        EXPECT_EQ(sh_find_all(h.data(), h.size(), 0, 40, threads, stop_after, &calls, &p, &np),
                  SH_ERR_INTERRUPTED);
        EXPECT_EQ(p, nullptr);
        EXPECT_EQ(np, 0u);
        EXPECT_GE(calls.load(), 4);
        std::vector<uint32_t> l(h.size());
        calls = 0;
        // as above: with 6 blocks at radius 3 the work is so small that, on a busy
        // machine, a worker thread could finish it before the caller polled 4 times
        EXPECT_EQ(sh_cluster_labels(h.data(), h.size(), 0, 40, threads, stop_after, &calls, l.data()),
                  SH_ERR_INTERRUPTED);
    }
}
