// Unit tests of the permuted-table layout.
#include "tables.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

static std::vector<sh_table> layout(int blocks, int bits)
{
    std::vector<sh_table> t(sh_table_count(blocks, bits));
    EXPECT_EQ(sh_table_layout(blocks, bits, t.data(), static_cast<int>(t.size())), SH_OK);
    return t;
}

TEST(Tables, CountIsBinomial)
{
    EXPECT_EQ(sh_table_count(6, 3), 20);
    EXPECT_EQ(sh_table_count(4, 3), 4);
    EXPECT_EQ(sh_table_count(16, 8), 12870);
    EXPECT_EQ(sh_table_count(3, 3), 0);
    EXPECT_EQ(sh_table_count(17, 3), 0);
    EXPECT_EQ(sh_table_count(5, 0), 0);
}

TEST(Tables, RejectsBadLayouts)
{
    sh_table t[4];
    EXPECT_EQ(sh_table_layout(3, 3, t, 0), SH_ERR_ARGUMENT);
    EXPECT_EQ(sh_table_layout(4, 3, t, 3), SH_ERR_ARGUMENT);
}

TEST(Tables, PrefixWidthsOfSixBlocks)
{
    // 64 = 11+11+11+11+10+10: the first table's prefix is blocks 0..2.
    auto t = layout(6, 3);
    EXPECT_EQ(t[0].prefix_bits, 33);
    EXPECT_EQ(t[0].prefix_orig_mask, 0xFFFFFFFF80000000ULL);
    EXPECT_EQ(t.back().prefix_bits, 31);  // blocks 3, 4, 5
}

// The narrowest prefix, from the formula, is the smallest prefix_bits of the layout's tables.
TEST(Tables, MinPrefixBitsIsTheNarrowestTable)
{
    for (int blocks = 2; blocks <= SH_MAX_BLOCKS; blocks++)
        for (int bits = 1; bits < blocks; bits++)
        {
            std::vector<sh_table> t(sh_table_count(blocks, bits));
            ASSERT_EQ(sh_table_layout(blocks, bits, t.data(), static_cast<int>(t.size())), SH_OK);
            int narrowest = 64;
            for (const sh_table &tab : t)
                narrowest = std::min(narrowest, tab.prefix_bits);
            ASSERT_EQ(sh_table_min_prefix_bits(blocks, bits), narrowest) << blocks << " " << bits;
        }
    EXPECT_EQ(sh_table_min_prefix_bits(6, 0), 0);
    EXPECT_EQ(sh_table_min_prefix_bits(6, 6), 0);
}

TEST(Tables, PermuteIsABijectionPreservingDistance)
{
    std::mt19937_64 rng(11);
    for (int blocks = 2; blocks <= 16; blocks++)
        for (int bits = 1; bits < blocks && bits <= 4; bits++)
        {
            auto tabs = layout(blocks, bits);
            for (const auto &tab : tabs)
                for (int i = 0; i < 20; i++)
                {
                    uint64_t a = rng(), b = rng();
                    uint64_t ka = sh_table_permute(&tab, a);
                    ASSERT_EQ(sh_table_unpermute(&tab, ka), a);
                    ASSERT_EQ(sh_distance(ka, sh_table_permute(&tab, b)), sh_distance(a, b));
                }
        }
}

TEST(Tables, NearPairsShareAPrefixInExactlyOneFirstTable)
{
    std::mt19937_64 rng(5);
    for (int blocks = 4; blocks <= 8; blocks++)
        for (int bits = 1; bits < blocks && bits <= 4; bits++)
        {
            auto tabs = layout(blocks, bits);
            for (int i = 0; i < 300; i++)
            {
                uint64_t q = rng(), fp = q;
                int flips = static_cast<int>(rng() % (bits + 1));
                for (int f = 0; f < flips; f++)
                    fp ^= uint64_t{1} << (rng() % 64);
                int first = 0;
                for (int t = 0; t < static_cast<int>(tabs.size()); t++)
                {
                    uint64_t kq = sh_table_permute(&tabs[t], q), kf = sh_table_permute(&tabs[t], fp);
                    bool shares = ((kq ^ kf) & tabs[t].prefix_key_mask) == 0;
                    if (shares && sh_table_first_match(tabs.data(), t, fp, q))
                        first++;
                }
                ASSERT_EQ(first, 1) << blocks << "/" << bits;
            }
        }
}

// Radius bits + flips: probing every prefix within flips bits of the query's
// reaches each near fingerprint in at least one table, and exactly one table
// reports it (the multi-probe of the index above `bits`).
TEST(Tables, MultiProbeReachesEachNearPairInExactlyOneFirstTable)
{
    std::mt19937_64 rng(11);
    for (int blocks = 3; blocks <= 8; blocks++)
        for (int bits = 1; bits < blocks && bits <= 4; bits++)
            for (int flips = 0; flips <= 3; flips++)
            {
                auto tabs = layout(blocks, bits);
                for (int i = 0; i < 200; i++)
                {
                    uint64_t q = rng(), fp = q;
                    int radius = static_cast<int>(rng() % (bits + flips + 1));
                    while (sh_distance(fp, q) < radius)
                        fp ^= uint64_t{1} << (rng() % 64);
                    int reached = 0, first = 0;
                    for (int t = 0; t < static_cast<int>(tabs.size()); t++)
                    {
                        uint64_t kq = sh_table_permute(&tabs[t], q), kf = sh_table_permute(&tabs[t], fp);
                        bool reach = __builtin_popcountll((kq ^ kf) & tabs[t].prefix_key_mask) <= flips;
                        reached += reach;
                        if (reach && sh_table_first_match_flips(tabs.data(), t, fp, q, flips))
                            first++;
                    }
                    ASSERT_GE(reached, 1) << blocks << "/" << bits << "+" << flips;
                    ASSERT_EQ(first, 1) << blocks << "/" << bits << "+" << flips;
                }
            }
}

// Probes split part-way through a level (tables before `split` with up to
// flips flipped prefix bits, the rest with flips - 1): every fingerprint
// within sh_table_covered_radius_partial is reached by some table and
// reported by exactly one, and with one prefix block a table the radius is
// tight (one more bit, spread as the bound's proof allows, is reached by none).
TEST(Tables, SplitProbesReachEachNearPairOnceUpToThePartialRadius)
{
    std::mt19937_64 rng(13);
    for (int blocks = 3; blocks <= 8; blocks++)
        for (int bits = 1; bits < blocks && bits <= 4; bits++)
        {
            auto tabs = layout(blocks, bits);
            int ntables = static_cast<int>(tabs.size());
            for (int flips = 0; flips <= 3; flips++)
                for (int split = 1; split <= ntables; split++)
                {
                    int radius = sh_table_covered_radius_partial(blocks, bits, flips, split);
                    if (radius < 0)
                        continue;
                    for (int i = 0; i < 200; i++)
                    {
                        uint64_t q = rng(), fp = q;
                        int d = static_cast<int>(rng() % (radius + 1));
                        while (sh_distance(fp, q) < d)
                            fp ^= uint64_t{1} << (rng() % 64);
                        int reached = 0, first = 0;
                        for (int t = 0; t < ntables; t++)
                        {
                            uint64_t kq = sh_table_permute(&tabs[t], q), kf = sh_table_permute(&tabs[t], fp);
                            int f = t < split ? flips : flips - 1;
                            bool reach = __builtin_popcountll((kq ^ kf) & tabs[t].prefix_key_mask) <= f;
                            reached += reach;
                            if (reach && sh_table_first_match_split(tabs.data(), t, fp, q, flips, split))
                                first++;
                        }
                        ASSERT_GE(reached, 1) << blocks << "/" << bits << "+" << flips << "@" << split;
                        ASSERT_EQ(first, 1) << blocks << "/" << bits << "+" << flips << "@" << split;
                    }
                    if (blocks != bits + 1 || radius >= 63)
                        continue;
                    // one bit more: flips + 1 bits in each of the first split
                    // tables' blocks, flips in the others', reaches no table
                    uint64_t q = rng(), fp = q;
                    for (int t = 0; t < ntables; t++)
                    {
                        uint64_t mask = tabs[t].prefix_orig_mask;
                        int want = t < split ? flips + 1 : flips;
                        for (int b = 0, got = 0; b < 64 && got < want; b++)
                            if ((mask >> b) & 1)
                            {
                                fp ^= uint64_t{1} << b;
                                got++;
                            }
                    }
                    if (sh_distance(fp, q) != radius + 1)
                        continue;  // blocks narrower than flips + 1 bits
                    for (int t = 0; t < ntables; t++)
                    {
                        uint64_t kq = sh_table_permute(&tabs[t], q), kf = sh_table_permute(&tabs[t], fp);
                        int f = t < split ? flips : flips - 1;
                        EXPECT_GT(__builtin_popcountll((kq ^ kf) & tabs[t].prefix_key_mask), f)
                            << blocks << "/" << bits << "+" << flips << "@" << split;
                    }
                }
        }
}

// The covered radius of probes with up to `flips` flipped prefix bits: every
// fingerprint within it is reached by some table (whatever the blocks its
// differing bits fall in), and it is tight: the differing bits spread as
// evenly as the bound's proof allows, one more bit is reached by no table.
TEST(Tables, CoveredRadiusIsReachedAndTight)
{
    std::mt19937_64 rng(12);
    EXPECT_EQ(sh_table_covered_radius(4, 3, 0), 3);
    EXPECT_EQ(sh_table_covered_radius(4, 3, 2), 11);  // multi-index hashing: 4 * 3 - 1
    EXPECT_EQ(sh_table_covered_radius(6, 3, 2), 5);   // 2 + 3 * ceil(3 / 3)
    EXPECT_EQ(sh_table_covered_radius(6, 3, 3), 9);   // 3 + 3 * ceil(4 / 3)
    EXPECT_EQ(sh_table_covered_radius(4, 3, 40), 64);
    EXPECT_EQ(sh_table_covered_radius(3, 3, 0), -1);
    for (int blocks = 2; blocks <= 9; blocks++)
        for (int bits = 1; bits < blocks; bits++)
        {
            auto tabs = layout(blocks, bits);
            auto reached = [&](uint64_t q, uint64_t fp, int flips)
            {
                for (const auto &t : tabs)
                    if (__builtin_popcountll((q ^ fp) & t.prefix_orig_mask) <= flips)
                        return true;
                return false;
            };
            int width = 64 / blocks;  // the narrowest block
            for (int flips = 0; flips <= 6; flips++)
            {
                int r = sh_table_covered_radius(blocks, bits, flips);
                // within r: bits drawn block by block at random, many blocks hit hard
                for (int i = 0; i < 300; i++)
                {
                    uint64_t q = rng(), fp = q;
                    int d = static_cast<int>(rng() % (r + 1));
                    // odd i: the bits of two blocks first, then the rest
                    std::vector<int> first, rest;
                    for (int b = 0; b < blocks; b++)
                        for (int k = 0; k < static_cast<int>(__builtin_popcountll(tabs[0].width_mask[b]));
                             k++)
                            (i % 2 && b < 2 ? first : rest).push_back(tabs[0].src_shift[b] + k);
                    std::shuffle(first.begin(), first.end(), rng);
                    std::shuffle(rest.begin(), rest.end(), rng);
                    first.insert(first.end(), rest.begin(), rest.end());
                    for (int k = 0; k < d; k++)
                        fp ^= uint64_t{1} << first[k];
                    ASSERT_TRUE(reached(q, fp, flips)) << blocks << "/" << bits << "+" << flips << " d=" << d;
                }
                // tight: f + 1 bits spread over p blocks, ceil((f + 1) / p) in each other block
                int p = blocks - bits, c = (flips + p) / p;
                if (r >= 64 || c > width)
                    continue;
                uint64_t q = rng(), fp = q;
                for (int b = 0; b < blocks; b++)
                {
                    int n = b < p ? (flips + 1) / p + (b < (flips + 1) % p ? 1 : 0) : c;
                    for (int k = 0; k < n; k++)
                        fp ^= uint64_t{1} << (tabs[0].src_shift[b] + k);
                }
                ASSERT_EQ(sh_distance(fp, q), r + 1) << blocks << "/" << bits << "+" << flips;
                ASSERT_FALSE(reached(q, fp, flips)) << blocks << "/" << bits << "+" << flips;
            }
        }
}

// Part-way through a level (the first tables_done tables probed with `flips`
// flipped prefix bits, the others with flips - 1): every fingerprint within
// the covered radius is reached, and with one prefix block per table the
// radius is tight (flips + 1 bits in each done table's block, flips in the
// others', is reached by none).
TEST(Tables, PartialCoveredRadiusIsReachedAndTight)
{
    std::mt19937_64 rng(13);
    EXPECT_EQ(sh_table_covered_radius_partial(4, 3, 0, 0), -1);
    EXPECT_EQ(sh_table_covered_radius_partial(4, 3, 0, 1), 0);
    EXPECT_EQ(sh_table_covered_radius_partial(4, 3, 3, 4), 15);
    EXPECT_EQ(sh_table_covered_radius_partial(4, 3, 4, 1), 16);  // 4 * 4 + 1 - 1
    EXPECT_EQ(sh_table_covered_radius_partial(7, 6, 2, 3), 16);
    EXPECT_EQ(sh_table_covered_radius_partial(6, 3, 3, 5), sh_table_covered_radius(6, 3, 2));
    EXPECT_EQ(sh_table_covered_radius_partial(6, 3, 3, 20), sh_table_covered_radius(6, 3, 3));
    EXPECT_EQ(sh_table_covered_radius_partial(4, 3, 1, 5), -1);
    EXPECT_EQ(sh_table_covered_radius_partial(3, 3, 1, 0), -1);
    for (int blocks = 2; blocks <= 9; blocks++)
        for (int bits = 1; bits < blocks; bits++)
        {
            auto tabs = layout(blocks, bits);
            int ntables = static_cast<int>(tabs.size());
            for (int flips = 0; flips <= 5; flips++)
                for (int done = 0; done <= ntables; done++)
                {
                    auto limit = [&](int t) { return t < done ? flips : flips - 1; };
                    auto reached = [&](uint64_t q, uint64_t fp)
                    {
                        for (int t = 0; t < ntables; t++)
                            if (__builtin_popcountll((q ^ fp) & tabs[t].prefix_orig_mask) <= limit(t))
                                return true;
                        return false;
                    };
                    int r = sh_table_covered_radius_partial(blocks, bits, flips, done);
                    ASSERT_GE(r, -1);
                    for (int i = 0; i < 200 && r >= 0; i++)
                    {
                        uint64_t q = rng(), fp = q;
                        int d = static_cast<int>(rng() % (r + 1));
                        std::vector<int> order(64);
                        for (int k = 0; k < 64; k++)
                            order[k] = k;
                        std::shuffle(order.begin(), order.end(), rng);
                        // odd i: the bits of table 0's prefix first (std::partition: the
                        // temporary buffer of stable_partition trips ASan's new/delete check)
                        if (i % 2)
                            std::partition(order.begin(), order.end(),
                                           [&](int k) { return (tabs[0].prefix_orig_mask >> k) & 1; });
                        for (int k = 0; k < d; k++)
                            fp ^= uint64_t{1} << order[k];
                        ASSERT_TRUE(reached(q, fp))
                            << blocks << "/" << bits << "+" << flips << ":" << done << " d=" << d;
                    }
                    if (blocks - bits != 1 || r >= 64)
                        continue;
                    // tight: table t's block (block t) differs in limit(t) + 1 bits
                    uint64_t q = rng(), fp = q;
                    bool fits = true;
                    for (int t = 0; t < ntables; t++)
                    {
                        int n = limit(t) + 1;
                        fits &= n <= __builtin_popcountll(tabs[t].prefix_orig_mask);
                        for (int k = 0, set = 0; k < 64 && set < n; k++)
                            if ((tabs[t].prefix_orig_mask >> k) & 1)
                                fp ^= uint64_t{1} << k, set++;
                    }
                    if (!fits)
                        continue;
                    ASSERT_EQ(sh_distance(fp, q), r + 1)
                        << blocks << "/" << bits << "+" << flips << ":" << done;
                    ASSERT_FALSE(reached(q, fp)) << blocks << "/" << bits << "+" << flips << ":" << done;
                }
        }
}
