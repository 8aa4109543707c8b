// Unit tests of bits.cpp: distance, binomial coefficients, hex form, voting.
#include "simhash_core.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <string>

TEST(Distance, CountsDifferingBits)
{
    EXPECT_EQ(sh_distance(0, 0), 0);
    EXPECT_EQ(sh_distance(0, ~uint64_t{0}), 64);
    EXPECT_EQ(sh_distance(0x1, 0x3), 1);
    EXPECT_EQ(sh_distance(0xF0F0, 0x0F0F), 16);
}

TEST(Binomial, ExactOverTheWholeRange)
{
    // Pascal's rule from C(0, 0) = 1 checks every value up to C(64, 32).
    for (int n = 1; n <= 64; n++)
        for (int k = 1; k < n; k++)
            ASSERT_EQ(sh_binomial(n, k), sh_binomial(n - 1, k - 1) + sh_binomial(n - 1, k)) << n << " " << k;
    EXPECT_EQ(sh_binomial(0, 0), 1);
    EXPECT_EQ(sh_binomial(64, 0), 1);
    EXPECT_EQ(sh_binomial(64, 64), 1);
    EXPECT_EQ(sh_binomial(16, 8), 12870);
    EXPECT_EQ(sh_binomial(64, 32), INT64_C(1832624140942590534));
}

TEST(Binomial, OutOfRange)
{
    EXPECT_EQ(sh_binomial(5, -1), 0);
    EXPECT_EQ(sh_binomial(5, 6), 0);
    EXPECT_EQ(sh_binomial(65, 1), -1);
    EXPECT_EQ(sh_binomial(-1, 0), -1);
}

TEST(Distance, IsAMetric)
{
    std::mt19937_64 rng(42);
    for (int i = 0; i < 10000; i++)
    {
        uint64_t a = rng(), b = rng(), c = rng();
        ASSERT_EQ(sh_distance(a, b), sh_distance(b, a));
        ASSERT_LE(sh_distance(a, c), sh_distance(a, b) + sh_distance(b, c));
        ASSERT_EQ(sh_distance(a, a), 0);
    }
}

TEST(Distance, InvariantUnderBitPermutation)
{
    // Rotating both operands is one permutation of the 64 bit positions.
    std::mt19937_64 rng(7);
    for (int i = 0; i < 1000; i++)
    {
        uint64_t a = rng(), b = rng();
        int r = static_cast<int>(rng() % 63) + 1;
        uint64_t ra = (a << r) | (a >> (64 - r)), rb = (b << r) | (b >> (64 - r));
        ASSERT_EQ(sh_distance(a, b), sh_distance(ra, rb));
    }
}

static sh_status parse(const std::string &s, uint64_t *v)
{
    return sh_parse_hex(s.data(), s.size(), v);
}

TEST(Hex, ParsesPrefixesAndCase)
{
    uint64_t v = 1;
    ASSERT_EQ(parse("0x0123456789ABCDEF", &v), SH_OK);
    EXPECT_EQ(v, 0x0123456789abcdefULL);
    ASSERT_EQ(parse("ffffffffffffffff", &v), SH_OK);
    EXPECT_EQ(v, ~uint64_t{0});
    ASSERT_EQ(parse("  a  ", &v), SH_OK);
    EXPECT_EQ(v, 0xaULL);
}

TEST(Hex, RejectsBadInput)
{
    uint64_t v = 0;
    EXPECT_EQ(parse("", &v), SH_ERR_SYNTAX);
    EXPECT_EQ(parse("0x", &v), SH_ERR_SYNTAX);
    EXPECT_EQ(parse("0123456789abcdef0", &v), SH_ERR_SYNTAX);
    EXPECT_EQ(parse("12g4", &v), SH_ERR_SYNTAX);
    EXPECT_EQ(parse("-1", &v), SH_ERR_SYNTAX);
    EXPECT_EQ(parse(std::string("12\0"
                                "34",
                                5),
                    &v),
              SH_ERR_SYNTAX);
}

TEST(Hex, FormatsSixteenLowercaseDigits)
{
    char buf[17];
    sh_format_hex(0x0123456789ABCDEFULL, buf);
    EXPECT_STREQ(buf, "0123456789abcdef");
    sh_format_hex(0, buf);
    EXPECT_STREQ(buf, "0000000000000000");
}

TEST(Compute, MatchesClassicGoldenValues)
{
    // Golden values from the seomoz simhash-cpp compute() tests.
    const uint64_t three[] = {0xABCD, 0xBCDE, 0xCDEF};
    EXPECT_EQ(sh_compute(three, 3), 0xADCFULL);
    const uint64_t opposite[] = {0x123456789abcdefULL, ~0x123456789abcdefULL};
    EXPECT_EQ(sh_compute(opposite, 2), 0ULL);
    EXPECT_EQ(sh_compute(nullptr, 0), 0ULL);
}

TEST(Vote, UnitWeightsAgreeWithCompute)
{
    std::mt19937_64 rng(3);
    for (int n = 1; n < 50; n++)
    {
        std::vector<uint64_t> f(n);
        double sums[SH_BITS] = {0};
        for (auto &x : f)
        {
            x = rng();
            sh_vote_add(sums, x, 1.0);
        }
        ASSERT_EQ(sh_vote_result(sums), sh_compute(f.data(), f.size())) << n;
    }
}

TEST(Vote, HeavierFeatureWins)
{
    double sums[SH_BITS] = {0};
    sh_vote_add(sums, 0xFF, 1.0);
    sh_vote_add(sums, 0x0F, 3.0);
    EXPECT_EQ(sh_vote_result(sums), 0x0FULL);
}

// Weights near the largest double: a plain double sum overflows to infinity
// and then depends on the order; the compensated, scaled sums do not.
TEST(VoteSums, HugeWeightsGiveTheSameResultInEveryOrder)
{
    const double big = 1.7e308;
    struct Vote
    {
        uint64_t f;
        double w;
    };
    // Sums worked out by hand: bit 0 is big + big - big - big + 1 = 1 (set),
    // bit 1 is big - big + big - big - 1 = -1, bit 2 is -big - big + big + big
    // - 1 = -1, every other bit -4 big - 1: the fingerprint is 1.
    const std::vector<Vote> votes{{0b011, big}, {0b001, big}, {0b110, big}, {0b100, big}, {0b001, 1.0}};
    std::vector<int> order{0, 1, 2, 3, 4};
    std::set<uint64_t> seen, seen_plain;
    do
    {
        sh_vote_sums v{};
        double plain[SH_BITS] = {0};
        for (int k : order)
        {
            sh_vote_sums_add(&v, votes[k].f, votes[k].w);
            sh_vote_add(plain, votes[k].f, votes[k].w);
        }
        seen.insert(sh_vote_sums_result(&v));
        seen_plain.insert(sh_vote_result(plain));
    } while (std::next_permutation(order.begin(), order.end()));
    ASSERT_EQ(seen.size(), 1u);
    EXPECT_EQ(*seen.begin(), 1u);
    EXPECT_GT(seen_plain.size(), 1u);  // why the compensated sums exist
}

TEST(VoteSums, MergeEqualsOneSum)
{
    sh_vote_sums a{}, b{}, all{};
    const double w[] = {1e308, -3.0, 1e-300, 7.5, -1e308, 2.0};
    for (int i = 0; i < 6; i++)
    {
        uint64_t f = 0x9E3779B97F4A7C15ULL * (i + 1);
        sh_vote_sums_add(i % 2 ? &a : &b, f, w[i]);
        sh_vote_sums_add(&all, f, w[i]);
    }
    sh_vote_sums_merge(&a, &b);
    EXPECT_EQ(sh_vote_sums_result(&a), sh_vote_sums_result(&all));
    sh_vote_sums one{};
    sh_vote_sums_add(&one, 0xF0, 1.0);
    EXPECT_EQ(sh_vote_sums_result(&one), 0xF0u);
}
