// simhash-fingerprint — print the simhash(text) fingerprint of documents.
//
//   simhash-fingerprint [options] FILE...     one document per file
//   simhash-fingerprint [options] < docs      NUL-separated documents on stdin
//
// Each output line is the fingerprint (16 hex digits, or an unsigned decimal
// with --decimal as simhash-find-all reads), then a tab and the file name or
// the document's 1-based position on stdin.  Options match SQL simhash(text);
// --html fingerprints the visible text of HTML pages as SQL simhash_html, and
// --seomoz computes SQL simhash_seomoz (the seomoz simhash-cpp fingerprint).
#include "html.h"
#include "seomoz.h"
#include "text.h"

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace
{

const char kUsage[] =
    "usage: simhash-fingerprint [--shingle N] [--tokens words|chars] [--no-casefold]\n"
    "                           [--html | --seomoz] [--decimal] [FILE...]\n"
    "Prints one fingerprint per document: per FILE, or per NUL-separated\n"
    "document on standard input when no FILE is given (\"-\" also means stdin).\n"
    "  --shingle N      tokens per feature, 1..64 (default 3)\n"
    "  --tokens MODE    words: runs of letters/digits (default); chars: each letter\n"
    "  --no-casefold    keep case (default: Unicode case folding)\n"
    "  --html           documents are HTML: fingerprint their visible text (simhash_html)\n"
    "  --seomoz         the seomoz simhash-cpp text fingerprint (simhash_seomoz);\n"
    "                   takes no other fingerprint option\n"
    "  --decimal        print unsigned decimals instead of 16 hex digits\n";

enum class Mode
{
    kText,
    kHtml,
    kSeomoz
};

struct Options
{
    sh_text_options text;
    Mode mode = Mode::kText;
    bool text_options_given = false;
    bool decimal = false;
    std::vector<std::string> files;
};

[[noreturn]] void usage_error(const std::string &msg)
{
    std::cerr << "simhash-fingerprint: " << msg << "\n" << kUsage;
    std::exit(2);
}

Options parse_args(int argc, char **argv)
{
    Options o;
    sh_text_options_default(&o.text);
    for (int i = 1; i < argc; i++)
    {
        std::string a = argv[i];
        auto value = [&]() -> std::string
        {
            if (i + 1 >= argc)
                usage_error("option " + a + " needs a value");
            return argv[++i];
        };
        if (a == "--help" || a == "-h")
        {
            std::cout << kUsage;
            std::exit(0);
        }
        else if (a == "--shingle")
        {
            std::string v = value();
            char *end = nullptr;
            long n = std::strtol(v.c_str(), &end, 10);
            if (v.empty() || *end != '\0' || n < 1 || n > SH_MAX_SHINGLE)
                usage_error("invalid --shingle \"" + v + "\"");
            o.text.shingle = static_cast<int>(n);
            o.text_options_given = true;
        }
        else if (a == "--tokens")
        {
            std::string v = value();
            if (v == "words")
                o.text.tokens = SH_TOKENS_WORDS;
            else if (v == "chars")
                o.text.tokens = SH_TOKENS_CHARS;
            else
                usage_error("invalid --tokens \"" + v + "\"");
            o.text_options_given = true;
        }
        else if (a == "--no-casefold")
        {
            o.text.casefold = 0;
            o.text_options_given = true;
        }
        else if (a == "--html" || a == "--seomoz")
        {
            Mode m = a == "--html" ? Mode::kHtml : Mode::kSeomoz;
            if (o.mode != Mode::kText && o.mode != m)
                usage_error("--html and --seomoz exclude each other");
            o.mode = m;
        }
        else if (a == "--decimal")
            o.decimal = true;
        else if (a.size() > 1 && a[0] == '-' && a != "-")
            usage_error("unknown option " + a);
        else
            o.files.push_back(a);
    }
    if (o.mode == Mode::kSeomoz && o.text_options_given)
        usage_error("--seomoz takes no --shingle, --tokens or --no-casefold");
    return o;
}

bool emit(const Options &o, const std::string &doc, const std::string &label)
{
    uint64_t fp = 0;
    sh_status st;
    if (o.mode == Mode::kHtml)
        st = sh_fingerprint_html(doc.data(), doc.size(), &o.text, nullptr, &fp);
    else if (o.mode == Mode::kSeomoz)
        st = sh_fingerprint_seomoz(doc.data(), doc.size(), &fp);
    else
        st = sh_fingerprint_text(doc.data(), doc.size(), &o.text, &fp);
    if (st != SH_OK)
    {
        std::cerr << "simhash-fingerprint: " << label << ": " << sh_status_message(st) << "\n";
        return false;
    }
    char buf[24];
    if (o.decimal)
        std::snprintf(buf, sizeof buf, "%" PRIu64, fp);
    else
        sh_format_hex(fp, buf);
    std::cout << buf << '\t' << label << '\n';
    return true;
}

}  // namespace

int main(int argc, char **argv)
{
    Options o = parse_args(argc, argv);
    bool ok = true;
    if (o.files.empty())
        o.files.push_back("-");
    for (const auto &f : o.files)
    {
        if (f == "-")
        {
            std::string doc;
            long n = 0;
            while (std::getline(std::cin, doc, '\0'))
                ok = emit(o, doc, std::to_string(++n)) && ok;
            continue;
        }
        std::ifstream in(f, std::ios::binary);
        if (!in)
        {
            std::cerr << "simhash-fingerprint: cannot read " << f << ": " << std::strerror(errno) << "\n";
            ok = false;
            continue;
        }
        std::stringstream ss;
        ss << in.rdbuf();
        ok = emit(o, ss.str(), f) && ok;
    }
    return ok ? 0 : 1;
}
