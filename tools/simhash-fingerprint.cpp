// simhash-fingerprint — print the simhash(text) fingerprint of documents.
//
//   simhash-fingerprint [options] FILE...     one document per file
//   simhash-fingerprint [options] < docs      NUL-separated documents on stdin
//
// Each output line is the fingerprint (16 hex digits, or an unsigned decimal
// with --decimal as simhash-find-all reads), then a tab and the file name or
// the document's 1-based position on stdin.  Options match SQL simhash(text).
#include "fingerprint.h"

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

namespace {

const char kUsage[] =
    "usage: simhash-fingerprint [--shingle N] [--tokens words|chars] [--no-casefold]\n"
    "                           [--decimal] [FILE...]\n"
    "Prints one fingerprint per document: per FILE, or per NUL-separated\n"
    "document on standard input when no FILE is given (\"-\" also means stdin).\n"
    "  --shingle N      tokens per feature, 1..64 (default 3)\n"
    "  --tokens MODE    words: runs of letters/digits (default); chars: each letter\n"
    "  --no-casefold    keep case (default: Unicode case folding)\n"
    "  --decimal        print unsigned decimals instead of 16 hex digits\n";

struct Options
{
    sh_text_options text;
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
        auto value = [&]() -> std::string {
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
        }
        else if (a == "--no-casefold")
            o.text.casefold = 0;
        else if (a == "--decimal")
            o.decimal = true;
        else if (a.size() > 1 && a[0] == '-' && a != "-")
            usage_error("unknown option " + a);
        else
            o.files.push_back(a);
    }
    return o;
}

bool emit(const Options &o, const std::string &doc, const std::string &label)
{
    uint64_t fp = 0;
    sh_status st = sh_fingerprint_text(doc.data(), doc.size(), &o.text, &fp);
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
