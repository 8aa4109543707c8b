// fingerprint_bench — throughput of the core's simhash(text) against MD5 of
// the same bytes, measured in the same run, plus a differential check that the
// core still computes exactly what a plain reference pipeline computes.
//
//   bench/fingerprint_bench [--reps N] [--no-check] [--only md5|words|chars|nofold] [FILE|DIR...]
//
// Default corpus: test/data/*.txt and the PostgreSQL HTML documentation
// (Debian postgresql-doc-15), both as raw HTML and as visible text (tags,
// scripts and entities removed, as tools/demo.sql does).  Each figure is the
// best of N passes over a corpus; md5 passes are interleaved with ours so a
// busy machine slows both alike.  Not part of `make test`.
#include "text.h"

#include <openssl/evp.h>
#include <unicode/uchar.h>
#include <unicode/utf8.h>
#include <xxhash.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <time.h>
#include <vector>

namespace {

using Corpus = std::vector<std::string>;

// ---- reference pipeline ----------------------------------------------------
// The documented pipeline written the slow, obvious way (one code point at a
// time through ICU, a string per token, a vector of features).  The core must
// agree with it bit for bit on every input.
uint64_t reference_fingerprint(const std::string &doc, const sh_text_options &o)
{
    std::vector<std::string> tokens;
    std::string cur;
    const auto *s = reinterpret_cast<const uint8_t *>(doc.data());
    int32_t i = 0, n = static_cast<int32_t>(doc.size());
    while (i < n)
    {
        UChar32 c;
        U8_NEXT(s, i, n, c);
        uint32_t gc = c < 0 ? 0 : U_GET_GC_MASK(c);
        bool letter = (gc & (U_GC_L_MASK | U_GC_N_MASK)) != 0;
        bool mark = (gc & U_GC_M_MASK) != 0;
        if (letter || (mark && !cur.empty()))
        {
            if (letter && o.tokens == SH_TOKENS_CHARS && !cur.empty())
            {
                tokens.push_back(cur);
                cur.clear();
            }
            if (o.casefold)
                c = u_foldCase(c, U_FOLD_CASE_DEFAULT);
            char buf[U8_MAX_LENGTH];
            int32_t w = 0;
            U8_APPEND_UNSAFE(buf, w, c);
            cur.append(buf, static_cast<size_t>(w));
        }
        else if (!cur.empty())
        {
            tokens.push_back(cur);
            cur.clear();
        }
    }
    if (!cur.empty())
        tokens.push_back(cur);

    std::vector<uint64_t> hashes;
    for (const auto &t : tokens)
        hashes.push_back(XXH3_64bits(t.data(), t.size()));
    std::vector<uint64_t> features;
    const size_t k = static_cast<size_t>(o.shingle);
    if (k == 1)
        features = hashes;
    else if (!hashes.empty())
    {
        auto feature = [&](size_t from, size_t count) {
            std::string bytes;
            for (size_t j = from; j < from + count; j++)
                for (int b = 0; b < 8; b++)
                    bytes.push_back(static_cast<char>(hashes[j] >> (8 * b)));
            features.push_back(XXH3_64bits(bytes.data(), bytes.size()));
        };
        if (hashes.size() < k)
            feature(0, hashes.size());
        for (size_t j = 0; j + k <= hashes.size(); j++)
            feature(j, k);
    }
    uint64_t r = 0;
    for (int bit = 0; bit < 64; bit++)
    {
        size_t ones = 0;
        for (uint64_t f : features)
            ones += (f >> bit) & 1;
        if (2 * ones > features.size())
            r |= uint64_t{1} << bit;
    }
    return r;
}

// ---- corpus ----------------------------------------------------------------
std::string slurp(const std::string &path)
{
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

void add_path(const std::string &path, const char *suffix, Corpus &out)
{
    struct stat st;
    if (stat(path.c_str(), &st) != 0)
        return;
    if (!S_ISDIR(st.st_mode))
    {
        out.push_back(slurp(path));
        return;
    }
    std::vector<std::string> names;
    if (DIR *d = opendir(path.c_str()))
    {
        while (const dirent *e = readdir(d))
        {
            std::string name = e->d_name;
            if (name.size() > strlen(suffix) && name.compare(name.size() - strlen(suffix), std::string::npos,
                                                             suffix) == 0)
                names.push_back(name);
        }
        closedir(d);
    }
    std::sort(names.begin(), names.end());
    for (const auto &name : names)
        out.push_back(slurp(path + "/" + name));
}

// Visible text of an HTML page: script/style blocks and tags become a space,
// entities too (what tools/demo.sql does with regexp_replace).
std::string visible_text(const std::string &html)
{
    std::string out;
    out.reserve(html.size());
    size_t i = 0;
    while (i < html.size())
    {
        char c = html[i];
        if (c == '<')
        {
            size_t end = html.find('>', i);
            if (end == std::string::npos)
                break;
            for (const char *block : {"script", "style"})
            {
                size_t len = strlen(block);
                if (html.compare(i + 1, len, block) == 0)
                {
                    size_t close = html.find(std::string("</") + block, end);
                    if (close != std::string::npos)
                        end = html.find('>', close);
                }
            }
            out.push_back(' ');
            i = end == std::string::npos ? html.size() : end + 1;
        }
        else if (c == '&')
        {
            size_t j = i + 1;
            while (j < html.size() && (isalnum(static_cast<unsigned char>(html[j])) || html[j] == '#'))
                j++;
            if (j < html.size() && html[j] == ';' && j > i + 1)
            {
                out.push_back(' ');
                i = j + 1;
            }
            else
                out.push_back(html[i++]);
        }
        else
            out.push_back(html[i++]);
    }
    return out;
}

size_t bytes_of(const Corpus &c)
{
    size_t n = 0;
    for (const auto &d : c)
        n += d.size();
    return n;
}

// Random documents that stress the tokenizer's edges: ASCII runs of every
// length around block boundaries, upper case, Latin/Greek/Cyrillic letters,
// combining marks, CJK, emoji, digits in other scripts, and broken UTF-8.
std::string random_doc(std::mt19937_64 &rng)
{
    static const char *const pieces[] = {
        " ", "  ", "\n", ",", "-", "'", "A", "z", "Q", "0", "9", "_", "\x7f", "\t",
        "é", "É", "ß", "ẞ", "İ", "ı", "Σ", "ς", "σ", "Ж", "ж", "ǅ", "ﬁ", "Å",
        "\xcc\x81",          // U+0301 combining acute
        "\xe0\xa4\xbf",      // U+093F Devanagari vowel sign (mark)
        "日", "本", "の", "テ", "한", "ก", "\xe0\xb8\xb4",  // Thai mark
        "٣", "①", "Ⅻ", "😀", "𝐀", "\xf0\x90\x90\x80",   // U+10400 Deseret capital
        "\xff", "\xc3", "\xe2\x82", "\xed\xa0\x80", "\xc0\xaf", "\xf4\x90\x80\x80", "\x80",
        "hello", "World", "THE", "quick", "lazy_dog", "ABCDEFGHIJKLMNOPQRSTUVWXYZ",
        "abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz0123456789",
    };
    const size_t npieces = sizeof(pieces) / sizeof(pieces[0]);
    std::string doc;
    size_t count = rng() % 200;
    bool ascii_only = rng() % 4 == 0;
    while (count-- > 0)
    {
        size_t p = rng() % npieces;
        if (ascii_only && static_cast<unsigned char>(pieces[p][0]) >= 0x80)
            continue;
        if (rng() % 8 == 0)
        {
            // A long run of one letter, to cross any internal block size.
            doc.append(rng() % 300, static_cast<char>(rng() % 2 ? 'x' : 'X'));
            continue;
        }
        doc += pieces[p];
    }
    return doc;
}

std::vector<sh_text_options> option_sets()
{
    std::vector<sh_text_options> sets;
    for (int tokens : {SH_TOKENS_WORDS, SH_TOKENS_CHARS})
        for (int casefold : {1, 0})
            for (int shingle : {3, 1, 2, 4, 7, SH_MAX_SHINGLE})
            {
                sh_text_options o;
                sh_text_options_default(&o);
                o.tokens = tokens;
                o.casefold = casefold;
                o.shingle = shingle;
                sets.push_back(o);
            }
    return sets;
}

uint64_t core_fingerprint(const std::string &doc, const sh_text_options &o)
{
    uint64_t fp = 0;
    if (sh_fingerprint_text(doc.data(), doc.size(), &o, &fp) != SH_OK)
    {
        fprintf(stderr, "sh_fingerprint_text failed\n");
        exit(1);
    }
    return fp;
}

// Returns the number of mismatches; prints the first few.
size_t check(const std::vector<const Corpus *> &corpora, size_t random_docs)
{
    size_t compared = 0, bad = 0;
    auto compare = [&](const std::string &doc, const sh_text_options &o) {
        compared++;
        uint64_t want = reference_fingerprint(doc, o), got = core_fingerprint(doc, o);
        if (want != got && bad++ < 5)
            fprintf(stderr, "MISMATCH shingle=%d tokens=%d casefold=%d len=%zu: %016llx != %016llx\n",
                    o.shingle, o.tokens, o.casefold, doc.size(), static_cast<unsigned long long>(got),
                    static_cast<unsigned long long>(want));
    };
    auto sets = option_sets();
    for (const Corpus *c : corpora)
        for (size_t d = 0; d < c->size(); d++)
        {
            compare((*c)[d], sets[0]);
            compare((*c)[d], sets[d % sets.size()]);
        }
    // Every code point below U+0800 (the core has a table for them) and a
    // sample above, inside a word, alone, doubled and after a separator.
    for (uint32_t c = 0x80; c < 0x30000; c += c < 0x800 ? 1 : 97)
    {
        if (c >= 0xD800 && c < 0xE000)
            continue;
        char u[U8_MAX_LENGTH];
        int32_t w = 0;
        U8_APPEND_UNSAFE(u, w, c);
        std::string cp(u, static_cast<size_t>(w));
        std::string doc = "x" + cp + "Y " + cp + " " + cp + cp + "z, " + cp + "\xcc\x81 q";
        compare(doc, sets[c % 6]);        // words, case folded
        compare(doc, sets[6 + c % 6]);    // words, not folded
        compare(doc, sets[12 + c % 12]);  // chars
    }
    std::mt19937_64 rng(20261123);
    for (size_t d = 0; d < random_docs; d++)
    {
        std::string doc = random_doc(rng);
        for (const auto &o : sets)
            compare(doc, o);
    }
    printf("check: %zu fingerprints compared with the reference pipeline, %zu mismatches\n", compared, bad);
    return bad;
}

// sh_vote_add_many must leave exactly the sums of sh_vote_add, bit for bit.
size_t check_weighted_vote()
{
    std::mt19937_64 rng(7);
    const double label[] = {0.1, 0.2, 0.4, 1.0, 0.3, 1.2, 2.5e-300, 1e300, -0.7, 0.0};
    size_t bad = 0, runs = 200;
    for (size_t r = 0; r < runs; r++)
    {
        double a[SH_BITS] = {0}, b[SH_BITS] = {0};
        std::vector<uint64_t> f(rng() % 2000);
        std::vector<double> w(f.size());
        for (size_t i = 0; i < f.size(); i++)
        {
            f[i] = rng();
            w[i] = label[rng() % 10] * static_cast<double>(1 + rng() % 5);
            sh_vote_add(a, f[i], w[i]);
        }
        if (!f.empty())
        {
            size_t half = f.size() / 2;
            sh_vote_add_many(b, f.data(), w.data(), half);
            sh_vote_add_many(b, f.data() + half, w.data() + half, f.size() - half);
        }
        bad += memcmp(a, b, sizeof a) != 0;
    }
    printf("check: %zu weighted votes compared with sh_vote_add, %zu mismatches\n", runs, bad);
    return bad;
}

// ---- timing ----------------------------------------------------------------
// CPU time of this thread: on a shared machine, time spent waiting for a
// core is not ours to count (wall-clock figures swing by 2x here).
double cpu_seconds()
{
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

volatile uint64_t sink;

double time_fingerprint(const Corpus &c, const sh_text_options &o)
{
    double t0 = cpu_seconds();
    uint64_t acc = 0;
    for (const auto &d : c)
        acc ^= core_fingerprint(d, o);
    sink = acc;
    return cpu_seconds() - t0;
}

// sh_text_similarity of each document with the next one (and the last with
// the first): every document's bytes are read twice, once per pair it is in,
// so MB/s counts them twice, like two simhash(text) calls would.
double time_similarity(const Corpus &c, const sh_text_options &o)
{
    double t0 = cpu_seconds();
    double acc = 0;
    for (size_t i = 0; i < c.size(); i++)
    {
        const std::string &a = c[i], &b = c[(i + 1) % c.size()];
        double j = 0;
        if (sh_text_similarity(a.data(), a.size(), b.data(), b.size(), &o, &j) != SH_OK)
        {
            fprintf(stderr, "sh_text_similarity failed\n");
            exit(1);
        }
        acc += j;
    }
    sink = static_cast<uint64_t>(acc);
    return cpu_seconds() - t0;
}

double time_md5(const Corpus &c)
{
    double t0 = cpu_seconds();
    uint64_t acc = 0;
    for (const auto &d : c)
    {
        unsigned char md[EVP_MAX_MD_SIZE];
        unsigned int mdlen = 0;
        EVP_Digest(d.data(), d.size(), md, &mdlen, EVP_md5(), nullptr);
        uint64_t w;
        memcpy(&w, md, sizeof w);
        acc ^= w;
    }
    sink = acc;
    return cpu_seconds() - t0;
}

// --only NAME runs one measurement (for profilers): md5, words, chars, nofold.
std::string only;

void run(const char *name, const Corpus &c, int reps)
{
    if (c.empty())
        return;
    sh_text_options words, chars, nofold;
    sh_text_options_default(&words);
    chars = words;
    chars.tokens = SH_TOKENS_CHARS;
    nofold = words;
    nofold.casefold = 0;
    double best_md5 = 1e300, best_words = 1e300, best_chars = 1e300, best_nofold = 1e300, best_sim = 1e300;
    if (!only.empty())
    {
        const sh_text_options &o = only == "chars" ? chars : only == "nofold" ? nofold : words;
        double best = 1e300;
        for (int r = 0; r < reps; r++)
            best = std::min(best, only == "md5"          ? time_md5(c)
                                  : only == "similarity" ? time_similarity(c, o) / 2
                                                         : time_fingerprint(c, o));
        printf("%-10s %s %7.1f MB/s\n", name, only.c_str(), static_cast<double>(bytes_of(c)) / 1e6 / best);
        return;
    }
    for (int r = 0; r < reps; r++)
    {
        best_md5 = std::min(best_md5, time_md5(c));
        best_words = std::min(best_words, time_fingerprint(c, words));
        best_md5 = std::min(best_md5, time_md5(c));
        best_chars = std::min(best_chars, time_fingerprint(c, chars));
        best_nofold = std::min(best_nofold, time_fingerprint(c, nofold));
        best_sim = std::min(best_sim, time_similarity(c, words));
    }
    const double mb = static_cast<double>(bytes_of(c)) / 1e6;
    printf("%-10s %5zu docs %7.2f MB | md5 %7.1f MB/s | simhash words %7.1f MB/s (x%.2f) | "
           "nocasefold %7.1f (x%.2f) | chars %7.1f (x%.2f) | similarity %7.1f MB/s\n",
           name, c.size(), mb, mb / best_md5, mb / best_words, best_md5 / best_words, mb / best_nofold,
           best_md5 / best_nofold, mb / best_chars, best_md5 / best_chars, 2 * mb / best_sim);
}

}  // namespace

int main(int argc, char **argv)
{
    int reps = 5;
    bool do_check = true;
    std::vector<std::string> paths;
    for (int i = 1; i < argc; i++)
    {
        std::string a = argv[i];
        if (a == "--reps" && i + 1 < argc)
            reps = std::max(1, atoi(argv[++i]));
        else if (a == "--only" && i + 1 < argc)
            only = argv[++i];
        else if (a == "--no-check")
            do_check = false;
        else if (a == "--help" || a == "-h")
        {
            printf("usage: fingerprint_bench [--reps N] [--no-check] [--only md5|words|chars|nofold|similarity] [FILE|DIR...]\n");
            return 0;
        }
        else
            paths.push_back(a);
    }

    Corpus small, html, text, given;
    for (const auto &p : paths)
        add_path(p, "", given);
    if (paths.empty())
    {
        add_path("test/data", ".txt", small);
        add_path("/usr/share/doc/postgresql-doc-15/html", ".html", html);
        for (const auto &page : html)
            text.push_back(visible_text(page));
    }

    if (do_check && (check_weighted_vote() != 0 || check({&small, &html, &text, &given}, 3000) != 0))
        return 1;
    printf("best of %d passes; (xR) = md5 time / simhash time, >= 1 means at least as fast as md5\n", reps);
    run("test/data", small, reps * 20);
    run("html", html, reps);
    run("html-text", text, reps);
    run("files", given, reps);
    return 0;
}
