// Unit tests of the default text fingerprint (text.cpp).
#include "text.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace
{

uint64_t fp(const std::string &text, int shingle = 3, sh_token_mode mode = SH_TOKENS_WORDS,
            bool casefold = true)
{
    sh_text_options o;
    sh_text_options_default(&o);
    o.shingle = shingle;
    o.tokens = mode;
    o.casefold = casefold ? 1 : 0;
    uint64_t out = 0;
    EXPECT_EQ(sh_fingerprint_text(text.data(), text.size(), &o, &out), SH_OK);
    return out;
}

std::string slurp(const std::string &path)
{
    std::ifstream in(path, std::ios::binary);
    EXPECT_TRUE(in.good()) << path;
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::vector<std::string> words(const std::string &text)
{
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string w; in >> w;)
        out.push_back(w);
    return out;
}

std::string join(const std::vector<std::string> &w)
{
    std::string s;
    for (const auto &x : w)
        s += (s.empty() ? "" : " ") + x;
    return s;
}

}  // namespace

// Golden values computed by the independent reference test/golden/text_reference.py
// (Debian python3 + python3-xxhash).  They freeze stored fingerprints: never edit.
TEST(TextFingerprint, GoldenValues)
{
    EXPECT_EQ(fp(""), 0x0000000000000000ULL);
    EXPECT_EQ(fp("hello"), 0xb475014e03674818ULL);
    EXPECT_EQ(fp("hello world"), 0x2b1502900150c14dULL);
    EXPECT_EQ(fp("Hello, World!"), 0x2b1502900150c14dULL);
    EXPECT_EQ(fp("the quick brown fox jumps over the lazy dog"), 0x75a5b714549a617aULL);
    EXPECT_EQ(fp("the quick brown fox jumps over the lazy dog", 1), 0x8212868318d29267ULL);
    EXPECT_EQ(fp("The Quick Brown Fox", 2, SH_TOKENS_WORDS, false), 0x3e6b567ce4cdc5b4ULL);
    EXPECT_EQ(fp("Καλημέρα κόσμε, привет мир 2024"), 0x5a0d72dc59c85507ULL);
    EXPECT_EQ(fp("日本語のテキスト", 3, SH_TOKENS_CHARS), 0x14e04c0b3b46c4e8ULL);
    EXPECT_EQ(fp("abc", 2, SH_TOKENS_CHARS), 0x9010a49240290445ULL);
}

TEST(TextFingerprint, PunctuationAndCaseAreNotFeatures)
{
    EXPECT_EQ(fp("One, two; THREE... four!"), fp("one two three four"));
    EXPECT_NE(fp("One two three four", 3, SH_TOKENS_WORDS, false),
              fp("one two three four", 3, SH_TOKENS_WORDS, false));
    EXPECT_EQ(fp("  \n\t "), 0ULL);  // no tokens at all
}

TEST(TextFingerprint, UnicodeCaseFolding)
{
    EXPECT_EQ(fp("ΚΑΛΗΜΕΡΑ ΚΟΣΜΕ"), fp("καλημερα κοσμε"));
    EXPECT_EQ(fp("ПРИВЕТ МИР"), fp("привет мир"));
}

TEST(TextFingerprint, InvalidUtf8IsASeparatorNotACrash)
{
    std::string bad = std::string("hello") + "\xff\xfe" + "world";
    EXPECT_EQ(fp(bad), fp("hello world"));
    std::string truncated = "caf\xc3";
    EXPECT_EQ(fp(truncated), fp("caf"));
}

TEST(TextFingerprint, RejectsBadOptions)
{
    sh_text_options o;
    sh_text_options_default(&o);
    uint64_t out;
    o.shingle = 0;
    EXPECT_EQ(sh_fingerprint_text("a", 1, &o, &out), SH_ERR_ARGUMENT);
    o.shingle = SH_MAX_SHINGLE + 1;
    EXPECT_EQ(sh_fingerprint_text("a", 1, &o, &out), SH_ERR_ARGUMENT);
    o.shingle = 3;
    o.tokens = 7;
    EXPECT_EQ(sh_fingerprint_text("a", 1, &o, &out), SH_ERR_ARGUMENT);
}

TEST(TextFingerprint, OneWordChangedInAThousandIsANearDuplicate)
{
    const std::string page = slurp("test/data/lighthouse.txt");
    auto w = words(page);
    ASSERT_GE(w.size(), 1000u);
    const uint64_t original = fp(page);

    auto edited = w;
    edited[500] = "zebra";
    EXPECT_LE(sh_distance(original, fp(join(edited))), 3);

    // Not a lucky position: most single-word replacements stay within 3
    // (measured: 1011 of 1151 positions, 87.8%; the rest at 4-6 bits, because a
    // few bits of this page sit within a vote or two of the majority threshold).
    size_t within = 0;
    for (size_t i = 0; i < w.size(); i++)
    {
        auto e = w;
        e[i] = "zebra";
        within += sh_distance(original, fp(join(e))) <= 3;
    }
    EXPECT_GE(within * 100, w.size() * 85) << within << " of " << w.size();
}

TEST(TextFingerprint, UnrelatedPagesAreFarApart)
{
    const uint64_t a = fp(slurp("test/data/lighthouse.txt"));
    const uint64_t b = fp(slurp("test/data/bakery.txt"));
    EXPECT_GT(sh_distance(a, b), 10);
}

// ---- sh_text_similarity / sh_text_shingle_set --------------------------------

namespace
{

double sim(const std::string &a, const std::string &b, int shingle = 3, sh_token_mode mode = SH_TOKENS_WORDS,
           bool casefold = true)
{
    sh_text_options o;
    sh_text_options_default(&o);
    o.shingle = shingle;
    o.tokens = mode;
    o.casefold = casefold ? 1 : 0;
    double out = -1;
    EXPECT_EQ(sh_text_similarity(a.data(), a.size(), b.data(), b.size(), &o, &out), SH_OK);
    return out;
}

std::vector<uint64_t> shingle_set(const std::string &text, int shingle = 3)
{
    sh_text_options o;
    sh_text_options_default(&o);
    o.shingle = shingle;
    size_t n = 0;
    std::vector<uint64_t> out(text.size() + 1);
    EXPECT_EQ(sh_text_shingle_set(text.data(), text.size(), &o, out.data(), out.size(), &n), SH_OK);
    out.resize(n);
    return out;
}

const char kFox[] = "the quick brown fox jumps over the lazy dog";

}  // namespace

// Golden values computed by the independent reference
// test/golden/similarity_reference.py (shingles compared as tuples of token
// strings, no hashing; Debian python3).  Exact ratios of small integers.
TEST(TextSimilarity, GoldenValues)
{
    EXPECT_EQ(sim("", ""), 1.0);
    EXPECT_EQ(sim("", "hello"), 0.0);
    EXPECT_EQ(sim("!!! ...", "--"), 1.0);
    EXPECT_EQ(sim(kFox, "THE QUICK BROWN FOX JUMPS OVER THE LAZY DOG"), 1.0);
    EXPECT_EQ(sim(kFox, "the quick brown fox jumped over the lazy dog"), 4.0 / 10);
    EXPECT_EQ(sim(kFox, "the quick brown fox jumped over the lazy dog", 1), 7.0 / 9);
    EXPECT_EQ(sim("a b c a b c a b c", "a b c"), 1.0 / 3);
    EXPECT_EQ(sim("Hello World", "hello world", 2, SH_TOKENS_WORDS, false), 0.0);
    EXPECT_EQ(sim("hello world", "hello world again"), 0.0);
    EXPECT_EQ(sim("Καλημέρα κόσμε, привет мир 2024", "καλημέρα ΚΌΣΜΕ привет мир 2025"), 0.5);
    EXPECT_EQ(sim("日本語のテキスト", "日本語のテキスト です", 2, SH_TOKENS_CHARS), 7.0 / 9);
    const std::string bakery = slurp("test/data/bakery.txt");
    const std::string lighthouse = slurp("test/data/lighthouse.txt");
    EXPECT_EQ(sim(bakery, lighthouse), 0.010064701653486701);
    EXPECT_EQ(sim(bakery, lighthouse, 1), 0.12587412587412589);
    EXPECT_EQ(sim(bakery, bakery.substr(400)), 0.73448275862068968);
}

TEST(TextSimilarity, IsSymmetricAndOneOnItself)
{
    const std::string bakery = slurp("test/data/bakery.txt");
    const std::string cut = bakery.substr(0, bakery.size() / 2);
    EXPECT_EQ(sim(bakery, bakery), 1.0);
    EXPECT_EQ(sim(bakery, cut), sim(cut, bakery));
}

// The set is that of the fingerprint's features: voting once with each
// distinct shingle hash gives simhash(text) whenever no shingle repeats.
TEST(TextShingleSet, IsTheFingerprintsFeatures)
{
    std::vector<uint64_t> set = shingle_set(kFox);
    ASSERT_EQ(set.size(), 7u);
    EXPECT_TRUE(std::is_sorted(set.begin(), set.end()));
    EXPECT_EQ(sh_compute(set.data(), set.size()), fp(kFox));
    EXPECT_EQ(shingle_set("").size(), 0u);
    EXPECT_EQ(shingle_set("a b c a b c a b c").size(), 3u);
}

TEST(TextShingleSet, ReportsTheCountWhenTheBufferIsShort)
{
    sh_text_options o;
    sh_text_options_default(&o);
    uint64_t buf[2];
    size_t n = 0;
    EXPECT_EQ(sh_text_shingle_set(kFox, strlen(kFox), &o, buf, 2, &n), SH_ERR_RANGE);
    EXPECT_EQ(n, 7u);
}

TEST(TextSimilarity, RejectsBadOptions)
{
    sh_text_options o;
    sh_text_options_default(&o);
    double out = 0;
    o.shingle = 0;
    EXPECT_EQ(sh_text_similarity("a", 1, "a", 1, &o, &out), SH_ERR_ARGUMENT);
    o.shingle = SH_MAX_SHINGLE + 1;
    EXPECT_EQ(sh_text_similarity("a", 1, "a", 1, &o, &out), SH_ERR_ARGUMENT);
    sh_text_options_default(&o);
    o.tokens = 7;
    EXPECT_EQ(sh_text_similarity("a", 1, "a", 1, &o, &out), SH_ERR_ARGUMENT);
}

TEST(TextSimilarity, SortedJaccard)
{
    const uint64_t a[] = {1, 5, 9, UINT64_MAX}, b[] = {5, 7, UINT64_MAX};
    EXPECT_EQ(sh_sorted_jaccard(a, 4, b, 3), 2.0 / 5);
    EXPECT_EQ(sh_sorted_jaccard(a, 0, b, 0), 1.0);
    EXPECT_EQ(sh_sorted_jaccard(a, 4, b, 0), 0.0);
}
