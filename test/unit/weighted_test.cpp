// Unit tests of the weighted text fingerprint and the IDF weight (text.cpp):
// the core of simhash_weighted (boilerplate weighting).
#include "text.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

namespace
{

sh_text_options options(int shingle = 3, sh_token_mode mode = SH_TOKENS_WORDS)
{
    sh_text_options o;
    sh_text_options_default(&o);
    o.shingle = shingle;
    o.tokens = mode;
    return o;
}

uint64_t plain(const std::string &text, const sh_text_options &o)
{
    uint64_t out = 0;
    EXPECT_EQ(sh_fingerprint_text(text.data(), text.size(), &o, &out), SH_OK);
    return out;
}

uint64_t weighted(const std::string &text, const sh_text_options &o, sh_shingle_weights &w)
{
    EXPECT_EQ(sh_shingle_weights_prepare(&w), SH_OK);
    uint64_t out = 0;
    EXPECT_EQ(sh_fingerprint_text_weighted(text.data(), text.size(), &o, &w, &out), SH_OK);
    return out;
}

std::vector<uint64_t> shingles(const std::string &text, const sh_text_options &o)
{
    std::vector<uint64_t> s(text.size() + 16);
    size_t n = 0;
    EXPECT_EQ(sh_text_shingle_set(text.data(), text.size(), &o, s.data(), s.size(), &n), SH_OK);
    s.resize(n);
    return s;
}

std::string slurp(const std::string &path)
{
    std::ifstream in(path, std::ios::binary);
    EXPECT_TRUE(in.good()) << path;
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::vector<std::string> documents()
{
    return {"",
            "one",
            "two words",
            "the quick brown fox jumps over the lazy dog",
            "a b a b a b a b",  // repeated shingles: each occurrence votes
            "Ünïcödé Straße ΣΊΣΥΦΟΣ and ascii",
            slurp("test/data/bakery.txt"),
            slurp("test/data/lighthouse.txt")};
}

}  // namespace

// Equal weights are the plain majority vote bit for bit, whatever the weight
// and whether a shingle is listed or not (so ties stay ties).
TEST(WeightedFingerprint, EqualWeightsReproduceTheFingerprint)
{
    for (const sh_text_options &o : {options(), options(1), options(2, SH_TOKENS_CHARS), options(5)})
        for (const std::string &doc : documents())
            for (float weight : {1.0f, 0.37f, 3e-20f, 7.5e30f})
            {
                // Every shingle of the text listed, half of them, none.
                std::vector<uint64_t> all = shingles(doc, o), half;
                for (size_t i = 0; i < all.size(); i += 2)
                    half.push_back(all[i]);
                for (const auto *listed : {&all, &half})
                {
                    std::vector<float> ws(listed->size(), weight);
                    sh_shingle_weights w{listed->data(), ws.data(), listed->size(), weight, 0, 0};
                    EXPECT_EQ(weighted(doc, o, w), plain(doc, o))
                        << "shingle " << o.shingle << " weight " << weight << " listed " << listed->size()
                        << " doc " << doc.substr(0, 40);
                }
                sh_shingle_weights none{nullptr, nullptr, 0, weight, 0, 0};
                EXPECT_EQ(weighted(doc, o, none), plain(doc, o));
            }
}

// A shingle that weighs 0 has no vote: the fingerprint is the plain vote
// (sh_compute) of the other shingles.  Words are distinct, so every shingle
// occurs once.
TEST(WeightedFingerprint, ZeroWeightIsNoVote)
{
    const std::string doc =
        "navigation home about contact lorem ipsum dolor sit amet consectetur adipiscing elit sed do "
        "eiusmod tempor incididunt ut labore et dolore magna aliqua copyright licence footer";
    for (const sh_text_options &o : {options(1), options(3)})
    {
        std::vector<uint64_t> all = shingles(doc, o);
        ASSERT_GT(all.size(), 20u);
        std::vector<float> ws(all.size(), 1.0f);
        std::vector<uint64_t> kept;
        for (size_t i = 0; i < all.size(); i++)
            if (i % 3 == 0)
                ws[i] = 0.0f;
            else
                kept.push_back(all[i]);
        sh_shingle_weights w{all.data(), ws.data(), all.size(), 1.0f, 0, 0};
        const uint64_t got = weighted(doc, o, w);
        EXPECT_EQ(got, sh_compute(kept.data(), kept.size()));
        EXPECT_NE(got, plain(doc, o));  // the zero weights did change something

        // Every shingle weighs 0: no vote at all, the fingerprint 0.
        std::vector<float> zeros(all.size(), 0.0f);
        sh_shingle_weights z{all.data(), zeros.data(), all.size(), 0.0f, 0, 0};
        EXPECT_EQ(weighted(doc, o, z), 0u);
    }
}

// The heavier of two features wins every bit they disagree on.
TEST(WeightedFingerprint, HeavierFeatureWins)
{
    const sh_text_options o = options(1);
    const uint64_t a = sh_feature_hash("alpha", 5), b = sh_feature_hash("beta", 4);
    uint64_t hashes[2] = {std::min(a, b), std::max(a, b)};
    float ws[2] = {hashes[0] == a ? 2.0f : 1.0f, hashes[0] == a ? 1.0f : 2.0f};
    sh_shingle_weights w{hashes, ws, 2, 1.0f, 0, 0};
    EXPECT_EQ(weighted("alpha beta", o, w), a);
    EXPECT_EQ(weighted("beta alpha", o, w), a);
    std::swap(ws[0], ws[1]);
    EXPECT_EQ(weighted("alpha beta", o, w), b);
}

TEST(WeightedFingerprint, PrepareRejectsBadTables)
{
    const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
    uint64_t asc[3] = {1, 2, 3}, dup[3] = {1, 2, 2}, desc[3] = {3, 2, 1};
    uint64_t high[2] = {1, 0x8000000000000000u};  // ascending as unsigned
    float ok[3] = {1, 2, 3}, neg[3] = {1, -2, 3}, bad[3] = {1, nan, 3}, huge[3] = {1, inf, 3};
    auto status = [](const uint64_t *h, const float *ws, size_t n, float other)
    {
        sh_shingle_weights w{h, ws, n, other, 0, 0};
        return sh_shingle_weights_prepare(&w);
    };
    EXPECT_EQ(status(asc, ok, 3, 1), SH_OK);
    EXPECT_EQ(status(high, ok, 2, 1), SH_OK);
    EXPECT_EQ(status(nullptr, nullptr, 0, 0), SH_OK);
    EXPECT_EQ(status(dup, ok, 3, 1), SH_ERR_ARGUMENT);
    EXPECT_EQ(status(desc, ok, 3, 1), SH_ERR_ARGUMENT);
    EXPECT_EQ(status(asc, neg, 3, 1), SH_ERR_ARGUMENT);
    EXPECT_EQ(status(asc, bad, 3, 1), SH_ERR_ARGUMENT);
    EXPECT_EQ(status(asc, huge, 3, 1), SH_ERR_ARGUMENT);
    EXPECT_EQ(status(asc, ok, 3, -1), SH_ERR_ARGUMENT);
    EXPECT_EQ(status(asc, ok, 3, nan), SH_ERR_ARGUMENT);

    // Not prepared, or bad options: refused, as sh_fingerprint_text refuses them.
    sh_shingle_weights w{asc, ok, 3, 1, 0, 0};
    sh_text_options o = options();
    uint64_t out = 0;
    EXPECT_EQ(sh_fingerprint_text_weighted("x", 1, &o, &w, &out), SH_ERR_ARGUMENT);
    ASSERT_EQ(sh_shingle_weights_prepare(&w), SH_OK);
    o.shingle = 0;
    EXPECT_EQ(sh_fingerprint_text_weighted("x", 1, &o, &w, &out), SH_ERR_ARGUMENT);
}

// 0 above max_df of the documents; below, 1 or ln((1 + docs) / (1 + df)).
TEST(DfWeight, Values)
{
    EXPECT_DOUBLE_EQ(sh_df_weight(0, 99, 1.0, 1), std::log(100.0));
    EXPECT_DOUBLE_EQ(sh_df_weight(-5, 99, 1.0, 1), std::log(100.0));
    EXPECT_DOUBLE_EQ(sh_df_weight(9, 99, 1.0, 1), std::log(10.0));
    EXPECT_DOUBLE_EQ(sh_df_weight(99, 99, 1.0, 1), 0.0);
    EXPECT_DOUBLE_EQ(sh_df_weight(150, 99, 1.0, 1), 0.0);  // more than docs: never negative
    EXPECT_DOUBLE_EQ(sh_df_weight(10, 100, 0.1, 1), std::log(101.0 / 11.0));  // at max_df: kept
    EXPECT_DOUBLE_EQ(sh_df_weight(11, 100, 0.1, 1), 0.0);                     // above: dropped
    EXPECT_DOUBLE_EQ(sh_df_weight(3, 0, 0.5, 1), 1.0);
    for (int64_t df = 1; df < 1000; df++)
        EXPECT_LT(sh_df_weight(df, 1000, 1.0, 1), sh_df_weight(df - 1, 1000, 1.0, 1));

    // Without idf: uniform up to max_df, nothing above.
    EXPECT_DOUBLE_EQ(sh_df_weight(0, 100, 0.1, 0), 1.0);
    EXPECT_DOUBLE_EQ(sh_df_weight(10, 100, 0.1, 0), 1.0);
    EXPECT_DOUBLE_EQ(sh_df_weight(11, 100, 0.1, 0), 0.0);
    EXPECT_DOUBLE_EQ(sh_df_weight(100, 100, 1.0, 0), 1.0);
    EXPECT_DOUBLE_EQ(sh_df_weight(7, 0, 0.1, 0), 1.0);
}
