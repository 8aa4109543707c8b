// Unit tests of lookup3 (lookup3.cpp) and the seomoz-compatible fingerprint
// (seomoz.cpp).
#include "seomoz.h"
#include "lookup3.h"

#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace
{

uint64_t seomoz(const std::string &text)
{
    uint64_t out = ~uint64_t{0};
    EXPECT_EQ(sh_fingerprint_seomoz(text.data(), text.size(), &out), SH_OK);
    return out;
}

std::pair<uint32_t, uint32_t> hashlittle2(const std::string &key, uint32_t c, uint32_t b)
{
    sh_hashlittle2(key.data(), key.size(), &c, &b);
    return {c, b};
}

uint64_t reverse_bits(uint64_t v)
{
    uint64_t r = 0;
    for (int i = 0; i < 64; i++)
        r |= ((v >> i) & 1) << (63 - i);
    return r;
}

uint64_t rotl(uint64_t v, int k)
{
    return k == 0 ? v : (v << k) | (v >> (64 - k));
}

// The window written out plainly: the first two features, then every
// rotl(h[i-2],2) ^ rotl(h[i-1],1) ^ h[i]; the vote through sh_compute.
uint64_t seomoz_spelled_out(const std::vector<std::string> &tokens)
{
    std::vector<uint64_t> h, features;
    for (const auto &t : tokens)
        h.push_back(sh_jenkins64(t.data(), t.size()));
    for (size_t i = 0; i < h.size(); i++)
    {
        uint64_t f = h[i];
        if (i >= 1)
            f ^= rotl(h[i - 1], 1);
        if (i >= 2)
            f ^= rotl(h[i - 2], 2);
        features.push_back(f);
    }
    return reverse_bits(sh_compute(features.data(), features.size()));
}

const char kJabberwocky[] =
    "Twas brillig, and the slithy toves"
    "  Did gyre and gimble in the wabe:"
    "All mimsy were the borogoves,"
    "  And the mome raths outgrabe."
    "Beware the Jabberwock, my son!"
    "  The jaws that bite, the claws that catch!"
    "Beware the Jubjub bird, and shun"
    "  The frumious Bandersnatch!"
    "He took his vorpal sword in hand:"
    "  Long time the manxome foe he sought --"
    "So rested he by the Tumtum tree,"
    "  And stood awhile in thought."
    "And, as in uffish thought he stood,"
    "  The Jabberwock, with eyes of flame,"
    "Came whiffling through the tulgey wood,"
    "  And burbled as it came!"
    "One, two! One, two! And through and through"
    "  The vorpal blade went snicker-snack!"
    "He left it dead, and with its head"
    "  He went galumphing back."
    "And, has thou slain the Jabberwock?"
    "  Come to my arms, my beamish boy!"
    "O frabjous day! Callooh! Callay!'"
    "  He chortled in his joy.";

const char kPope[] =
    "There once was a man named Pope"
    "who loved an oscilloscope."
    "  and the cyclical trace"
    "  of their carnal embrace"
    "had a damned-near-infinite slope";

}  // namespace

// lookup3.c's own driver5() check values (Bob Jenkins, 2006).
TEST(Lookup3, PublishedCheckValues)
{
    const std::string four = "Four score and seven years ago";
    using P = std::pair<uint32_t, uint32_t>;
    EXPECT_EQ(hashlittle2("", 0, 0), P(0xdeadbeef, 0xdeadbeef));
    EXPECT_EQ(hashlittle2("", 0, 0xdeadbeef), P(0xbd5b7dde, 0xdeadbeef));
    EXPECT_EQ(hashlittle2("", 0xdeadbeef, 0xdeadbeef), P(0x9c093ccd, 0xbd5b7dde));
    EXPECT_EQ(hashlittle2(four, 0, 0), P(0x17770551, 0xce7226e6));
    EXPECT_EQ(hashlittle2(four, 0, 1), P(0xe3607cae, 0xbd371de4));
    EXPECT_EQ(hashlittle2(four, 1, 0), P(0xcd628161, 0x6cbea4b3));
    EXPECT_EQ(sh_jenkins64(four.data(), four.size()), 0x17770551ce7226e6ULL);
}

// The key's alignment and what lies beyond its end never matter.
TEST(Lookup3, AlignmentAndTailIndependent)
{
    std::mt19937_64 rng(7);
    for (size_t len = 0; len <= 40; len++)
    {
        std::string key(len, '\0');
        for (auto &ch : key)
            ch = static_cast<char>(rng());
        uint64_t expected = sh_jenkins64(key.data(), len);
        for (size_t offset = 1; offset < 8; offset++)
        {
            std::string buf(offset, 'x');
            buf += key;
            buf += std::string(8, static_cast<char>(0xA5));
            EXPECT_EQ(sh_jenkins64(buf.data() + offset, len), expected) << len << " " << offset;
        }
    }
}

// Every byte of every length up to three blocks changes the hash.
TEST(Lookup3, EveryByteCounts)
{
    for (size_t len = 1; len <= 36; len++)
    {
        std::string key(len, 'a');
        uint64_t base = sh_jenkins64(key.data(), len);
        for (size_t i = 0; i < len; i++)
        {
            std::string changed = key;
            changed[i] = 'b';
            EXPECT_NE(sh_jenkins64(changed.data(), len), base) << len << " " << i;
        }
    }
}

// Values published upstream, and values of the independent reference
// test/golden/seomoz_reference.py.  They freeze stored fingerprints.
TEST(Seomoz, PublishedValues)
{
    EXPECT_EQ(seomoz("hello world"), 0x1a40201a26358020ULL);
    // simhash-cpp src/hash_test.cpp, "simhash has specific value" (2016).
    EXPECT_EQ(seomoz(kJabberwocky), 0x041379A587C66880ULL);
}

TEST(Seomoz, GoldenValues)
{
    EXPECT_EQ(seomoz(""), 0ULL);
    EXPECT_EQ(seomoz("hello"), 0x9eed203a763dd32cULL);
    EXPECT_EQ(seomoz("Hello World"), 0x0a480054900008e1ULL);
    EXPECT_EQ(seomoz("a b c"), 0xb1eaa05a20b14b33ULL);
    EXPECT_EQ(seomoz("a b c d"), 0x30c8a05a00a14b12ULL);
    EXPECT_EQ(seomoz("caf\xc3\xa9 cr\xc3\xa8me"), 0x9a4db4daf2d54ae4ULL);
    EXPECT_EQ(seomoz("x1y2z3"), 0x58b754f1cde0345fULL);
    EXPECT_EQ(seomoz("the quick brown fox jumps over the lazy dog"), 0xaf822ffecc56eed5ULL);
}

// The library's own near-duplicate test: an appended byline moves the
// fingerprint by 1..3 bits, an unrelated limerick by more than 5.
TEST(Seomoz, UpstreamNearDuplicateTest)
{
    uint64_t a = seomoz(kJabberwocky);
    uint64_t b = seomoz(std::string(kJabberwocky) + " - Lewis Carroll 'Alice In Wonderland'");
    EXPECT_EQ(b, 0x041379a787c66882ULL);
    EXPECT_GE(sh_distance(a, b), 1);
    EXPECT_LE(sh_distance(a, b), 3);
    EXPECT_GT(sh_distance(a, seomoz(kPope)), 5);
}

TEST(Seomoz, TokensAreAsciiLetterRuns)
{
    // Only the runs of letters matter, and every other byte separates.
    EXPECT_EQ(seomoz("hello, world!"), seomoz("hello world"));
    EXPECT_EQ(seomoz("  hello\t\n42world..."), seomoz("hello world"));
    EXPECT_EQ(seomoz("what's new?How5is _ the ^# stuff"), seomoz("what s new How is the stuff"));
    EXPECT_EQ(seomoz(std::string("hello\0world", 11)), seomoz("hello world"));
    // Non-ASCII bytes separate (UTF-8 letters included), and case is kept.
    EXPECT_EQ(seomoz("caf\xc3\xa9"), seomoz("caf"));
    EXPECT_NE(seomoz("Hello World"), seomoz("hello world"));
    EXPECT_EQ(seomoz("123 ... !!!"), 0ULL);
}

TEST(Seomoz, EqualsTheWindowSpelledOut)
{
    std::mt19937_64 rng(11);
    const char *words[] = {"a", "the", "quick", "Brown", "fox", "jumps", "over", "LAZY", "dog", "x"};
    for (int trial = 0; trial < 200; trial++)
    {
        std::vector<std::string> tokens;
        std::string text;
        size_t n = rng() % 40;
        for (size_t i = 0; i < n; i++)
        {
            tokens.push_back(words[rng() % 10]);
            text += tokens.back() + (rng() % 2 ? " " : ", ");
        }
        EXPECT_EQ(seomoz(text), seomoz_spelled_out(tokens)) << text;
    }
}

TEST(Seomoz, OneAndTwoTokens)
{
    uint64_t h = sh_jenkins64("hello", 5);
    uint64_t w = sh_jenkins64("world", 5);
    EXPECT_EQ(seomoz("hello"), reverse_bits(h));
    // two features, h and rotl(h,1)^w: a bit is set only when both have it
    EXPECT_EQ(seomoz("hello world"), reverse_bits(h & (rotl(h, 1) ^ w)));
}

TEST(Seomoz, LongTextCountsExactly)
{
    // More than 255 features exercises the lane flushes.
    std::string text;
    std::vector<std::string> tokens;
    for (int i = 0; i < 3000; i++)
    {
        tokens.push_back(std::string(1 + i % 7, static_cast<char>('a' + i % 26)) + "q");
        text += tokens.back() + " ";
    }
    EXPECT_EQ(seomoz(text), seomoz_spelled_out(tokens));
}
