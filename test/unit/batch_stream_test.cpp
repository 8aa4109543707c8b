// Unit tests of sh_find_all_each (pairs handed out in bounded chunks) and of
// sh_batch_memory, the bound the SQL functions compare with work_mem: the
// bytes the core really allocates are counted by replacing operator new.
#include "batch.h"

#include <gtest/gtest.h>
#include <malloc.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <new>
#include <random>
#include <vector>

namespace
{
std::atomic<long long> g_live{0}, g_peak{0};

void count(void *p, int sign)
{
    if (!p)
        return;
    long long now = g_live += sign * static_cast<long long>(malloc_usable_size(p));
    long long peak = g_peak.load();
    while (now > peak && !g_peak.compare_exchange_weak(peak, now))
    {
    }
}
}  // namespace

void *operator new(size_t n)
{
    void *p = std::malloc(n ? n : 1);
    if (!p)
        throw std::bad_alloc();
    count(p, 1);
    return p;
}

void operator delete(void *p) noexcept
{
    count(p, -1);
    std::free(p);
}

void operator delete(void *p, size_t) noexcept
{
    count(p, -1);
    std::free(p);
}

namespace
{

struct Chunks
{
    size_t calls = 0, pairs = 0, largest = 0;
    size_t stop_after = SIZE_MAX;
    std::vector<sh_pair> all;
    bool keep = true;
};

int take(const sh_pair *p, size_t n, void *arg)
{
    auto *c = static_cast<Chunks *>(arg);
    c->calls++;
    c->pairs += n;
    c->largest = std::max(c->largest, n);
    if (c->keep)
        c->all.insert(c->all.end(), p, p + n);
    return c->calls >= c->stop_after;
}

// The peak of the bytes allocated (operator new) during f, above those live before.
template <class F>
long long peak_during(F f)
{
    long long base = g_live.load();
    g_peak = base;
    f();
    return g_peak.load() - base;
}

TEST(BatchStream, SamePairsAsFindAllInChunks)
{
    std::mt19937_64 rng(5);
    std::vector<uint64_t> h(3000);
    for (auto &v : h)
        v = rng() & 0xff000000000000ffULL;  // many pairs within 3 bits
    for (int threads : {1, 2})
    {
        sh_pair *p = nullptr;
        size_t np = 0;
        ASSERT_EQ(sh_find_all(h.data(), h.size(), 0, 3, threads, nullptr, nullptr, &p, &np), SH_OK);
        Chunks c;
        ASSERT_EQ(sh_find_all_each(h.data(), h.size(), 0, 3, threads, nullptr, nullptr, 1000, take, &c),
                  SH_OK);
        ASSERT_GT(np, 10000u);
        EXPECT_EQ(c.pairs, np);
        EXPECT_EQ(c.largest, 1000u);
        std::sort(c.all.begin(), c.all.end(),
                  [](const sh_pair &x, const sh_pair &y) { return x.a != y.a ? x.a < y.a : x.b < y.b; });
        ASSERT_EQ(c.all.size(), np);
        for (size_t i = 0; i < np; i++)
            ASSERT_TRUE(c.all[i].a == p[i].a && c.all[i].b == p[i].b) << i;
        sh_free(p);
    }
}

TEST(BatchStream, NonzeroFromTheCallbackStops)
{
    std::vector<uint64_t> h(2000, 42);  // 1999000 pairs at distance 0
    Chunks c;
    c.stop_after = 3;
    EXPECT_EQ(sh_find_all_each(h.data(), h.size(), 0, 0, 1, nullptr, nullptr, 100, take, &c),
              SH_ERR_INTERRUPTED);
    EXPECT_EQ(c.calls, 3u);
    EXPECT_EQ(c.pairs, 300u);
    EXPECT_EQ(sh_find_all_each(h.data(), h.size(), 0, 0, 1, nullptr, nullptr, 0, take, &c), SH_ERR_ARGUMENT);
}

// 4000 equal fingerprints: 8M pairs (64 MB if held), a group of all of them.
TEST(BatchStream, MemoryWithinTheBoundWhateverThePairCount)
{
    std::vector<uint64_t> h(4000, 7);
    for (int d : {0, 3, 64})
    {
        Chunks c;
        c.keep = false;
        long long peak = peak_during(
            [&] {
                ASSERT_EQ(sh_find_all_each(h.data(), h.size(), 0, d, 1, nullptr, nullptr, 4096, take, &c),
                          SH_OK);
            });
        EXPECT_EQ(c.pairs, 4000u * 3999 / 2);
        EXPECT_LE(peak,
                  static_cast<long long>(sh_batch_memory(h.size(), 0, d, 1, 0) + 4096 * sizeof(sh_pair)))
            << "distance " << d;
        std::vector<uint32_t> labels(h.size());
        peak = peak_during(
            [&] {
                ASSERT_EQ(sh_cluster_labels(h.data(), h.size(), 0, d, 1, nullptr, nullptr, labels.data()),
                          SH_OK);
            });
        EXPECT_LE(peak, static_cast<long long>(sh_batch_memory(h.size(), 0, d, 1, 1))) << "distance " << d;
        EXPECT_EQ(labels.back(), 0u);
    }
}

TEST(BatchStream, MemoryBoundGrowsWithInputNotPairs)
{
    size_t small = sh_batch_memory(1000, 0, 3, 1, 0), big = sh_batch_memory(100000, 0, 3, 1, 0);
    EXPECT_LT(small, big);
    EXPECT_LE(big, 100000u * 64 + (4u << 20));
    EXPECT_GT(sh_batch_memory(1000, 0, 3, 1, 1), small);
    EXPECT_EQ(sh_batch_memory(10, 0, 65, 1, 0), SIZE_MAX);
}

}  // namespace
