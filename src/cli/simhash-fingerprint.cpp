// simhash-fingerprint — print the simhash(text) fingerprint of documents.
//
//   simhash-fingerprint [options] FILE...     one document per file
//   simhash-fingerprint [options] < docs      NUL-separated documents on stdin
//
// Each output line is the fingerprint (16 hex digits, or an unsigned decimal
// with --decimal as simhash-find-all reads), then a tab and the file name or
// the document's 1-based position on stdin, escaped as in COPY's text format
// (backslash, tab, newline and carriage return as \\, \t, \n, \r), so that
// the lines load with \copy into a (fp simhash, name text) table.  Options
// match SQL simhash(text);
// --html fingerprints the visible text of HTML pages as SQL simhash_html, and
// --seomoz computes SQL simhash_seomoz (the seomoz simhash-cpp fingerprint).
//
// Input is read in blocks, and a document may hold at most --max-bytes
// (default 256 MiB; SQL text stops at 1 GB): a bigger one is an error, so an
// endless input such as /dev/zero costs bounded memory.  Output errors
// (a full disk) make the exit status 1.
#include "html.h"
#include "seomoz.h"
#include "text.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <new>
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
    "  --decimal        print unsigned decimals instead of 16 hex digits\n"
    "  --max-bytes N    largest document accepted, in bytes (default 268435456;\n"
    "                   at most 1073741823, the largest SQL text)\n"
    "  --help           this text\n"
    "  --version        the version\n"
    "Each output line is the fingerprint, a tab and the file name (or the document's\n"
    "number on stdin), escaped as COPY's text format does (\\\\ \\t \\n \\r);\n"
    "simhash-find-all and simhash-find-clusters read it as is, and psql loads it:\n"
    "  \\copy docs (fp, name) FROM PROGRAM 'simhash-fingerprint *.txt'\n"
    "Exit status: 0 done, 1 a document could not be read or fingerprinted, or the\n"
    "output could not be written, 2 bad options.\n";

#ifndef SIMHASH_VERSION
#define SIMHASH_VERSION "unknown"  // the Makefile passes EXTVERSION
#endif

constexpr size_t kDefaultMaxBytes = size_t{256} << 20;
constexpr size_t kLargestMaxBytes = (size_t{1} << 30) - 1;

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
    size_t max_bytes = kDefaultMaxBytes;
    std::vector<std::string> files;
};

[[noreturn]] void usage_error(const std::string &msg)
{
    std::cerr << "simhash-fingerprint: " << msg << "\n" << kUsage;
    std::exit(2);
}

// The command line into Options; exits with usage on a bad option.
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
        else if (a == "--version")
        {
            std::cout << "simhash-fingerprint (simhash) " SIMHASH_VERSION "\n";
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
        else if (a == "--max-bytes")
        {
            std::string v = value();
            char *end = nullptr;
            errno = 0;
            unsigned long long n = std::strtoull(v.c_str(), &end, 10);
            if (v.empty() || v[0] == '-' || *end != '\0' || errno != 0 || n < 1 || n > kLargestMaxBytes)
                usage_error("invalid --max-bytes \"" + v + "\"");
            o.max_bytes = static_cast<size_t>(n);
        }
        else if (a.size() > 1 && a[0] == '-' && a != "-")
            usage_error("unknown option " + a);
        else
            o.files.push_back(a);
    }
    if (o.mode == Mode::kSeomoz && o.text_options_given)
        usage_error("--seomoz takes no --shingle, --tokens or --no-casefold");
    return o;
}

// A message on stderr, after flushing what stdout holds so the two interleave.
void complain(const std::string &msg)
{
    std::fflush(stdout);
    std::fprintf(stderr, "simhash-fingerprint: %s\n", msg.c_str());
}

[[noreturn]] void write_failed()
{
    complain(std::string("cannot write the output: ") + std::strerror(errno));
    std::exit(1);
}

// A label as a field of COPY's text format: one line, no raw tab.
std::string copy_escaped(const std::string &label)
{
    std::string out;
    out.reserve(label.size());
    for (char c : label)
    {
        if (c == '\\')
            out += "\\\\";
        else if (c == '\t')
            out += "\\t";
        else if (c == '\n')
            out += "\\n";
        else if (c == '\r')
            out += "\\r";
        else
            out += c;
    }
    return out;
}

// Fingerprints one document and prints "fingerprint<TAB>label"; false (after
// a message) when the document cannot be fingerprinted.
bool emit(const Options &o, const std::string &doc, const std::string &label)
{
    uint64_t fp = 0;
    sh_status st;
    if (o.mode == Mode::kHtml)
        st = sh_fingerprint_html(doc.data(), doc.size(), 0, &o.text, nullptr, nullptr, &fp);
    else if (o.mode == Mode::kSeomoz)
        st = sh_fingerprint_seomoz(doc.data(), doc.size(), &fp);
    else
        st = sh_fingerprint_text(doc.data(), doc.size(), &o.text, &fp);
    if (st != SH_OK)
    {
        complain(label + ": " + sh_status_message(st));
        return false;
    }
    char buf[24];
    if (o.decimal)
        std::snprintf(buf, sizeof buf, "%" PRIu64, fp);
    else
        sh_format_hex(fp, buf);
    if (std::printf("%s\t%s\n", buf, copy_escaped(label).c_str()) < 0)
        write_failed();
    return true;
}

// read(2) that retries on EINTR.
ssize_t read_some(int fd, char *buf, size_t len)
{
    ssize_t got;
    do
        got = read(fd, buf, len);
    while (got < 0 && errno == EINTR);
    return got;
}

// The error text for a document over --max-bytes.
std::string too_big(const Options &o)
{
    return "larger than --max-bytes (" + std::to_string(o.max_bytes) + " bytes)";
}

// One document per file, read in blocks up to --max-bytes.
bool fingerprint_file(const Options &o, const std::string &path)
{
    int fd = open(path.c_str(), O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0)
    {
        complain("cannot read " + path + ": " + std::strerror(errno));
        if (fd >= 0)
            close(fd);
        return false;
    }
    if (S_ISDIR(st.st_mode))
    {
        close(fd);
        complain("cannot read " + path + ": " + std::strerror(EISDIR));
        return false;
    }
    std::string doc;
    if (S_ISREG(st.st_mode))
        doc.reserve(std::min(static_cast<size_t>(st.st_size), o.max_bytes) + 1);
    std::vector<char> buf(1 << 16);
    for (;;)
    {
        ssize_t got = read_some(fd, buf.data(), buf.size());
        if (got < 0)
        {
            complain("cannot read " + path + ": " + std::strerror(errno));
            close(fd);
            return false;
        }
        if (got == 0)
            break;
        if (doc.size() + static_cast<size_t>(got) > o.max_bytes)
        {
            complain(path + ": " + too_big(o));
            close(fd);
            return false;
        }
        if (doc.size() + static_cast<size_t>(got) > doc.capacity())  // grow, never past the limit
            doc.reserve(
                std::min(std::max(2 * doc.capacity(), doc.size() + static_cast<size_t>(got)), o.max_bytes));
        doc.append(buf.data(), static_cast<size_t>(got));
    }
    close(fd);
    return emit(o, doc, path);
}

// NUL-separated documents on stdin, each up to --max-bytes; a bigger one is
// reported and skipped.
bool fingerprint_stdin(const Options &o)
{
    bool ok = true, skipping = false;
    long n = 0;
    std::string doc;
    std::vector<char> buf(1 << 16);
    for (;;)
    {
        ssize_t got = read_some(0, buf.data(), buf.size());
        if (got < 0)
        {
            complain(std::string("cannot read standard input: ") + std::strerror(errno));
            return false;
        }
        if (got == 0)
            break;
        const char *p = buf.data(), *end = p + got;
        while (p < end)
        {
            const char *nul = static_cast<const char *>(std::memchr(p, '\0', end - p));
            const char *stop = nul ? nul : end;
            if (!skipping && doc.size() + (stop - p) > o.max_bytes)
            {
                complain("document " + std::to_string(n + 1) + ": " + too_big(o));
                ok = false;
                skipping = true;
                std::string().swap(doc);
            }
            if (!skipping)
                doc.append(p, stop);
            if (!nul)
                break;
            n++;
            if (!skipping)
                ok = emit(o, doc, std::to_string(n)) && ok;
            doc.clear();
            skipping = false;
            p = nul + 1;
        }
    }
    if (!doc.empty() || skipping)
    {
        n++;
        if (!skipping)
            ok = emit(o, doc, std::to_string(n)) && ok;
    }
    return ok;
}

}  // namespace

// simhash-fingerprint: one fingerprint per file, or per NUL-separated document on stdin.
int main(int argc, char **argv)
{
    Options o = parse_args(argc, argv);
    bool ok = true;
    if (o.files.empty())
        o.files.push_back("-");
    try
    {
        for (const auto &f : o.files)
            ok = (f == "-" ? fingerprint_stdin(o) : fingerprint_file(o, f)) && ok;
    }
    catch (const std::bad_alloc &)
    {
        complain("out of memory");
        return 1;
    }
    if (std::fflush(stdout) != 0 || std::ferror(stdout))
        write_failed();
    return ok ? 0 : 1;
}
