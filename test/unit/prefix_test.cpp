// Unit tests of the prefix tokens of the online lookup (prefix.h): a set
// with J >= t to a stored set always shares two tokens with it (checked by a
// plain Jaccard over random pairs, at the exact bounds too, and for small
// sets that share a single hash), the size classes, the empty set, the
// errors, and golden tokens that freeze the global order (an index built
// with other tokens would miss rows).
#include "prefix.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <vector>

namespace
{

using Set = std::vector<uint64_t>;

double jaccard(const Set &a, const Set &b)
{
    if (a.empty() && b.empty())
        return 1.0;
    std::vector<uint64_t> common;
    std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(common));
    return static_cast<double>(common.size()) / static_cast<double>(a.size() + b.size() - common.size());
}

Set stored(const Set &s, double t, const sh_prefix_order *order = nullptr)
{
    Set out(sh_prefix_tokens_room(s.size(), t));
    size_t n = 0;
    EXPECT_EQ(sh_prefix_tokens(s.data(), s.size(), t, order, out.data(), out.size(), &n), SH_OK);
    out.resize(n);
    return out;
}

Set probe(const Set &s, double t, const sh_prefix_order *order = nullptr)
{
    Set out(sh_prefix_probe_room(s.size(), t));
    size_t n = 0;
    EXPECT_EQ(sh_prefix_probe(s.data(), s.size(), t, order, out.data(), out.size(), &n), SH_OK);
    out.resize(n);
    return out;
}

size_t common(const Set &a, const Set &b)
{
    Set both;
    std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(both));
    return both.size();
}

// What the lookup's GIN opclass asks of a stored row: two common tokens.
bool meet(const Set &a, const Set &b)
{
    return common(a, b) >= 2;
}

// Two sets drawn from a shared pool so that their overlap varies widely.
// Sizes up to most: large sets span several size classes above and below.
void random_pair(std::mt19937_64 &rng, size_t most, Set &a, Set &b)
{
    size_t na = 1 + rng() % most, shared = rng() % (na + 1), extra = rng() % (most / 3 + 1);
    std::set<uint64_t> pool;
    while (pool.size() < na + extra)
        pool.insert(rng() % 5000);  // small values: hashes of the frozen list can come up too
    Set all(pool.begin(), pool.end());
    std::shuffle(all.begin(), all.end(), rng);
    a.assign(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(na));
    b.assign(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(shared));
    b.insert(b.end(), all.begin() + static_cast<std::ptrdiff_t>(na), all.end());
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
}

}  // namespace

TEST(Prefix, EverySimilarPairSharesTwoTokens)
{
    std::mt19937_64 rng(28);
    const double ts[] = {0.2, 0.3, 1.0 / 3.0, 0.5, 0.6, 2.0 / 3.0, 0.7, 0.75, 0.8, 0.9, 1.0};
    // half the trials with a list of frequent shingles (a third of the pool, repeats too)
    Set listed;
    for (int i = 0; i < 2000; i++)
        listed.push_back(rng() % 5000);
    Set hashes(listed.size());
    std::vector<uint32_t> ranks(listed.size());
    size_t nlisted = 0;
    ASSERT_EQ(sh_prefix_order_build(listed.data(), listed.size(), hashes.data(), ranks.data(), &nlisted),
              SH_OK);
    ASSERT_LT(nlisted, listed.size());
    sh_prefix_order frequent = {hashes.data(), ranks.data(), nlisted};
    size_t similar = 0;
    for (int trial = 0; trial < 5000; trial++)
    {
        const sh_prefix_order *order = trial % 2 ? &frequent : nullptr;
        Set a, b;
        random_pair(rng, trial % 5 ? 60 : 400, a, b);
        double j = jaccard(a, b);
        for (double t : ts)
            for (double t0 : ts)
            {
                if (t0 > t)
                    continue;
                bool found = meet(probe(a, t, order), stored(b, t0, order));
                if (j >= t)
                {
                    similar++;
                    ASSERT_TRUE(found) << "J " << j << " t " << t << " t0 " << t0 << " |a| " << a.size()
                                       << " |b| " << b.size();
                }
            }
    }
    EXPECT_GT(similar, 2500u);  // the pairs do reach the thresholds
}

TEST(Prefix, ExactBoundsAreFound)
{
    // J exactly t: 4 of 5 shared (0.8), 9 of 10 (0.9), 2 of 3 (2/3)
    for (auto [n, k] : {std::pair<size_t, size_t>{5, 4}, {10, 9}, {3, 2}, {50, 40}})
        for (uint64_t off = 0; off < 50; off++)
        {
            Set a, b;
            for (size_t i = 0; i < n; i++)
                a.push_back(1000 + off * 97 + i);
            b.assign(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(k));
            double t = jaccard(a, b);
            EXPECT_TRUE(meet(probe(a, t), stored(b, t)));
            EXPECT_TRUE(meet(probe(b, t), stored(a, t)));
        }
}

TEST(Prefix, SmallSetsSharingOneHash)
{
    // J = 1 / (|a| + |b| - 1) with one common hash: found at every t up to J
    for (size_t na = 1; na <= 5; na++)
        for (size_t nb = 1; nb <= 5; nb++)
        {
            Set a = {7}, b = {7};
            for (size_t i = 1; i < na; i++)
                a.push_back(100 + i);
            for (size_t i = 1; i < nb; i++)
                b.push_back(200 + i);
            std::sort(a.begin(), a.end());
            std::sort(b.begin(), b.end());
            double j = jaccard(a, b);
            for (double t : {1.0, 0.5, 1.0 / 3.0, 0.3, 0.25, 0.2, 0.15, 0.1})
                for (double t0 : {t, t / 2})
                {
                    if (j < t)
                        continue;
                    EXPECT_TRUE(meet(probe(a, t), stored(b, t0)))
                        << "|a| " << na << " |b| " << nb << " t " << t << " t0 " << t0;
                }
        }
}

TEST(Prefix, OneCommonHashIsNoCandidate)
{
    // larger sets sharing one hash (J = 1/99) meet once at most: no candidate
    Set a, b = {1};
    for (uint64_t i = 1; i <= 50; i++)
        a.push_back(i);
    for (uint64_t i = 100; i < 149; i++)
        b.push_back(i);
    EXPECT_LE(common(probe(a, 0.8), stored(b, 0.8)), 1u);
    EXPECT_LE(common(probe(a, 0.5), stored(b, 0.5)), 1u);
    EXPECT_FALSE(meet(probe(b, 0.8), stored(a, 0.8)));
}

TEST(Prefix, LengthsAndClasses)
{
    EXPECT_EQ(sh_prefix_length(0, 0.8), 0u);
    EXPECT_EQ(sh_prefix_length(1, 0.8), 1u);
    EXPECT_EQ(sh_prefix_length(5, 0.8), 2u);     // 5 - 4 + 1
    EXPECT_EQ(sh_prefix_length(100, 0.8), 21u);  // 100 - 80 + 1
    EXPECT_EQ(sh_prefix_length(100, 1.0), 1u);
    EXPECT_EQ(sh_prefix_length(100, 0.01), 100u);
    uint32_t prev = 0;
    for (size_t n = 1; n < 100000; n++)
    {
        uint32_t c = sh_prefix_size_class(n);
        ASSERT_GE(c, prev);
        prev = c;
    }
    // a class spans at most an eighth of its smallest size
    for (size_t n = 8; n < 100000; n++)
    {
        size_t m = n;
        while (sh_prefix_size_class(m + 1) == sh_prefix_size_class(n))
            m++;
        ASSERT_LE(m - n + 1, std::max<size_t>(1, n / 8 + 1));
        n = m;
    }
}

TEST(Prefix, TokensAreAPrefixTagged)
{
    Set s;
    for (uint64_t i = 1; i <= 100; i++)
        s.push_back(i * 0x9E3779B97F4A7C15ULL >> 3);
    std::sort(s.begin(), s.end());
    EXPECT_EQ(stored(s, 0.8).size(), 22u);  // the prefix of 21 and one more
    EXPECT_EQ(stored(s, 0.5).size(), 52u);
    // a longer prefix holds the shorter one (a lower t0 serves higher t)
    Set a = stored(s, 0.8), b = stored(s, 0.5);
    EXPECT_TRUE(std::includes(b.begin(), b.end(), a.begin(), a.end()));
    // the probe at t meets its own stored tokens, size classes of t n .. n / t
    EXPECT_TRUE(std::includes(probe(s, 0.8).begin(), probe(s, 0.8).end(), a.begin(), a.end()));
    EXPECT_LE(probe(s, 0.8).size(), sh_prefix_probe_room(s.size(), 0.8));
}

TEST(Prefix, FrequentShinglesComeLast)
{
    // a set of 100 hashes, 30 of them listed: 22 kept hashes hold none of
    // those, so exchanging a listed hash for another listed one keeps the
    // tokens, and exchanging an unlisted one for another unlisted one
    // changes them (for some of them)
    Set s, listed;
    for (uint64_t i = 1; i <= 100; i++)
        s.push_back(i);
    for (uint64_t i = 1; i <= 30; i++)
        listed.push_back(i * 3);
    listed.push_back(1000);
    Set hashes(listed.size());
    std::vector<uint32_t> ranks(listed.size());
    size_t n = 0;
    ASSERT_EQ(sh_prefix_order_build(listed.data(), listed.size(), hashes.data(), ranks.data(), &n), SH_OK);
    sh_prefix_order order = {hashes.data(), ranks.data(), n};
    Set tokens = stored(s, 0.8, &order);
    ASSERT_EQ(tokens.size(), 22u);
    int changed = 0;
    for (uint64_t h : s)
    {
        Set other(s);
        other.erase(std::find(other.begin(), other.end(), h));
        other.push_back(h % 3 == 0 && h <= 90 ? 1000 : 1001);
        std::sort(other.begin(), other.end());
        if (h % 3 == 0 && h <= 90)
            EXPECT_EQ(stored(other, 0.8, &order), tokens) << h;
        else
            changed += stored(other, 0.8, &order) != tokens;
    }
    EXPECT_GT(changed, 0);
    EXPECT_NE(stored(s, 0.8), tokens);  // the plain order differs
}

// Golden tokens, computed once by an independent implementation of the
// order, classes and mix written from prefix.h (Python, reading the frozen
// list of prefix_frequent.inc): 97 arbitrary hashes and the three most
// frequent shingles of the list, at 0.8: the classic prefix of 21, which the
// 22 kept hashes hold.  If this fails, every index built before the change
// would miss rows: do not change the expected values.
TEST(Prefix, GoldenTokens)
{
    Set s = {0xba1e11f00dc8ebe5ULL, 0xdc389b9c4129e574ULL, 0xa4b092ea8813fbc1ULL};
    for (uint64_t i = 1; i < 98; i++)
        s.push_back(i * 0x9E3779B97F4A7C15ULL >> 3);
    std::sort(s.begin(), s.end());
    const Set golden = {0x3157d74ab2624674ULL, 0x3a93643be30b6bf8ULL, 0x43e0449eb3079bb3ULL,
                        0x4a82ee05ec50650aULL, 0x527d9f97323cd993ULL, 0x57377af865aa9ae8ULL,
                        0x5a979d4f0b58f16dULL, 0x660af623c66c94ffULL, 0x75cb388fab3ed895ULL,
                        0x7a41a98a2c7d577eULL, 0x9b4a51df8761e016ULL, 0xc451f4fbca1281fcULL,
                        0xca01b9913778f401ULL, 0xcc915c9abf96590eULL, 0xcd53e2af00dba3f9ULL,
                        0xcd86b2b47257834fULL, 0xd492d338999ae0d5ULL, 0xd5af759ed46fbb3bULL,
                        0xdd33f0efe40b9612ULL, 0xe45add37448d1c15ULL, 0xf70a6b4f01ce5633ULL};
    Set tokens = stored(s, 0.8);
    EXPECT_EQ(tokens.size(), 22u);
    EXPECT_TRUE(std::includes(tokens.begin(), tokens.end(), golden.begin(), golden.end()));
}

TEST(Prefix, EmptySet)
{
    Set empty, one = {42, 43, 44};
    EXPECT_EQ(stored(empty, 0.8).size(), 2u);
    EXPECT_EQ(stored(empty, 0.8), probe(empty, 0.8));  // J(empty, empty) = 1
    EXPECT_FALSE(meet(probe(one, 0.5), stored(empty, 0.5)));
    EXPECT_FALSE(meet(probe(empty, 0.5), stored(one, 0.5)));
}

TEST(Prefix, Errors)
{
    Set s = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    uint64_t out[64];
    size_t n = 99;
    EXPECT_EQ(sh_prefix_tokens(s.data(), s.size(), 0.0, nullptr, out, 64, &n), SH_ERR_ARGUMENT);
    EXPECT_EQ(n, 0u);
    EXPECT_EQ(sh_prefix_tokens(s.data(), s.size(), 1.5, nullptr, out, 64, &n), SH_ERR_ARGUMENT);
    EXPECT_EQ(sh_prefix_probe(s.data(), s.size(), -1, nullptr, out, 64, &n), SH_ERR_ARGUMENT);
    EXPECT_EQ(sh_prefix_tokens(s.data(), s.size(), 0.5, nullptr, out, 2, &n), SH_ERR_RANGE);
    EXPECT_EQ(n, 7u);  // the room needed: 10 - 5 + 2
}

// The ordered prefix of the distributed join: one global order (a longer
// prefix extends a shorter one, two sets order their common hashes alike),
// every pair with J >= t meets at a first common hash where PPJoin's
// positional bound holds, and the prefixes k - 1 longer share k hashes when
// the sets do.
TEST(Prefix, OrderedPrefixFirstCommonHashPassesThePositionalBound)
{
    // half the trials with a list of frequent hashes
    std::mt19937_64 rng(2803);
    Set listed;
    for (int i = 0; i < 1500; i++)
        listed.push_back(rng() % 5000);
    Set hashes(listed.size());
    std::vector<uint32_t> ranks(listed.size());
    size_t nlisted = 0;
    ASSERT_EQ(sh_prefix_order_build(listed.data(), listed.size(), hashes.data(), ranks.data(), &nlisted),
              SH_OK);
    sh_prefix_order frequent = {hashes.data(), ranks.data(), nlisted};
    const sh_prefix_order *order = nullptr;
    auto ordered = [&order](const Set &s, double t, size_t overlap = 1)
    {
        Set out(s.size());
        size_t n = 0;
        EXPECT_EQ(sh_prefix_ordered(s.data(), s.size(), t, overlap, order, out.data(), out.size(), &n),
                  SH_OK);
        out.resize(n);
        return out;
    };
    const double ts[] = {0.3, 0.5, 2.0 / 3.0, 0.8, 0.9, 1.0};
    size_t similar = 0;
    for (int trial = 0; trial < 5000; trial++)
    {
        order = trial % 2 ? &frequent : nullptr;
        Set a, b;
        random_pair(rng, 60, a, b);
        Set full_a = ordered(a, 1e-9), full_b = ordered(b, 1e-9);
        ASSERT_EQ(full_a.size(), a.size());
        // the order of the common hashes is the same in both
        Set ca, cb;
        for (uint64_t h : full_a)
            if (std::binary_search(b.begin(), b.end(), h))
                ca.push_back(h);
        for (uint64_t h : full_b)
            if (std::binary_search(a.begin(), a.end(), h))
                cb.push_back(h);
        ASSERT_EQ(ca, cb);
        double j = jaccard(a, b);
        size_t common = ca.size();
        for (double t : ts)
        {
            Set pa = ordered(a, t), pb = ordered(b, t);
            ASSERT_EQ(pa.size(), a.empty() ? 0 : sh_prefix_length(a.size(), t));
            ASSERT_TRUE(std::equal(pa.begin(), pa.end(), full_a.begin()));
            if (j < t || a.empty() || b.empty())
                continue;
            similar++;
            auto ia = std::find(pa.begin(), pa.end(), ca.front());
            auto ib = std::find(pb.begin(), pb.end(), ca.front());
            ASSERT_TRUE(ia != pa.end() && ib != pb.end()) << "J " << j << " t " << t;
            size_t i = static_cast<size_t>(ia - pa.begin()) + 1, k = static_cast<size_t>(ib - pb.begin()) + 1;
            EXPECT_LE(common, 1 + std::min(a.size() - i, b.size() - k));
            EXPECT_GE(1.0 + static_cast<double>(std::min(a.size() - i, b.size() - k)),
                      (t - 1e-9) / (1 + t - 1e-9) * static_cast<double>(a.size() + b.size()));
            for (size_t overlap : {2, 5})
            {
                Set qa = ordered(a, t, overlap), qb = ordered(b, t, overlap);
                ASSERT_EQ(qa.size(), std::min(a.size(), pa.size() + overlap - 1));
                size_t shared = 0;
                for (uint64_t h : qa)
                    shared += std::find(qb.begin(), qb.end(), h) != qb.end();
                EXPECT_GE(shared, std::min(overlap, common)) << "J " << j << " t " << t;
            }
        }
    }
    EXPECT_GT(similar, 1500u);
    size_t n = 0;
    uint64_t one = 7, out = 0;
    EXPECT_EQ(sh_prefix_ordered(&one, 1, 0.0, 1, nullptr, &out, 1, &n), SH_ERR_ARGUMENT);
    EXPECT_EQ(sh_prefix_ordered(&one, 1, 0.8, 0, nullptr, &out, 1, &n), SH_ERR_ARGUMENT);
    EXPECT_EQ(sh_prefix_ordered(&one, 1, 0.8, 1, nullptr, &out, 0, &n), SH_ERR_RANGE);
    EXPECT_EQ(n, 1u);
}
