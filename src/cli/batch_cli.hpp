// batch_cli.hpp — what simhash-find-all and simhash-find-clusters share:
// seomoz-compatible options, strict input parsing, atomic output.
//
// Input: one 64-bit hash per line (an unsigned decimal or 16 hex digits, a
// trailing '\r' allowed), optionally a tab and a name (simhash-fingerprint's
// file name).  Like seomoz simhash-cpp, which reads the input into a set, the
// tools work on the distinct hashes: a repeated hash is the same hash, never a
// pair with itself, unless --exact-copies is given.  Output: for hashes alone,
// one JSON array per line, unsigned decimals joined by ", "; for named hashes,
// the names (tab-separated lines, names as the input wrote them).  Written to
// a temporary file renamed over --output only on success (when --output is a
// regular file or new; other paths are written in place).
#ifndef SIMHASH_BATCH_CLI_HPP
#define SIMHASH_BATCH_CLI_HPP

#include "batch.h"
#include "tables.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace batch_cli
{

// How the input writes its hashes: unsigned decimals (seomoz), 16 hex
// digits (simhash-fingerprint, SQL's text form), or whichever the input shows.
enum class Format
{
    kAuto,
    kDecimal,
    kHex
};

struct Options
{
    std::string input = "-";
    std::string output = "-";
    int blocks = 0;  // automatic
    int distance = -1;
    int threads = 1;
    Format format = Format::kAuto;
    bool exact_copies = false;  // every line counts: copies are pairs, clusters
    bool hashes = false;        // hashes out even when the lines carry names
};

inline const char *g_prog = "simhash-batch";

// The whole message, whatever bytes it holds (callers escape input bytes).
[[noreturn]] inline void die(int status, const std::string &msg)
{
    std::string line = std::string(g_prog) + ": " + msg + "\n";
    std::fwrite(line.data(), 1, line.size(), stderr);
    std::exit(status);
}

// Input bytes for a message: printable ASCII as is, others as \xNN.
inline std::string shown_bytes(const char *b, size_t n)
{
    std::string out;
    for (size_t i = 0; i < n; i++)
    {
        unsigned char c = static_cast<unsigned char>(b[i]);
        if (c >= 0x20 && c < 0x7f && c != '\\')
            out += static_cast<char>(c);
        else
        {
            char esc[5];
            std::snprintf(esc, sizeof esc, "\\x%02x", c);
            out += esc;
        }
    }
    return out;
}

#ifndef SIMHASH_VERSION
#define SIMHASH_VERSION "unknown"  // the Makefile passes EXTVERSION
#endif

// What a tool does, for --help: a line for the usage, and its own paragraph.
struct Tool
{
    const char *what;    // e.g. "every pair within DISTANCE bits as [a, b]"
    const char *named;   // what it writes for named input
    const char *copies;  // what --exact-copies adds
};

inline void print_usage(std::FILE *to, const Tool &tool)
{
    std::fprintf(to,
                 "usage: %s --distance DISTANCE [--blocks BLOCKS] [--input INPUT]\n"
                 "       [--output OUTPUT] [--threads N] [--input-format auto|decimal|hex]\n"
                 "       [--exact-copies] [--hashes]\n\n"
                 "Reads 64-bit hashes, one per line, and writes\n"
                 "%s, one JSON array of unsigned\n"
                 "decimal hashes per line (the format of seomoz simhash-cpp).  A line holds\n"
                 "an unsigned decimal (as seomoz writes hashes) or 16 hex digits (as\n"
                 "simhash-fingerprint prints them), optionally followed by a tab and anything\n"
                 "(a name, such as simhash-fingerprint's file name).  When the first line has\n"
                 "a name, the output names the lines instead: %s\n"
                 "(a line without a name is named \"line N\"; --hashes writes hashes anyway), so\n"
                 "  simhash-fingerprint docs/*.txt | %s --distance 3\n"
                 "lists file names.  A malformed line stops the tool with its line number.\n\n",
                 g_prog, tool.what, tool.named, g_prog);
    std::fprintf(to,
                 "Exact copies (a hash on several lines) count once by default: like seomoz,\n"
                 "which reads the hashes into a set, the tool works on the distinct hashes,\n"
                 "and a named hash keeps the name of its first line (the other lines are\n"
                 "counted on standard error).  --exact-copies counts every line: %s\n\n",
                 tool.copies);
    std::fprintf(to,
                 "  --distance DISTANCE  maximum number of differing bits, 0..64\n"
                 "  --blocks BLOCKS      bit blocks of the permuted tables, DISTANCE+1..16;\n"
                 "                       speed only (default: chosen from the input size)\n"
                 "  --input INPUT        path to read ('-', the default, for stdin)\n"
                 "  --output OUTPUT      path to write ('-', the default, for stdout)\n"
                 "  --threads N          worker threads (default 1; 0: one per core)\n"
                 "  --input-format FORM  auto (the default): the first line that is only one\n"
                 "                       of the two decides for the whole input (16 decimal\n"
                 "                       digits are both); decimal or hex: that form only\n"
                 "  --exact-copies       every line counts: identical hashes are near each other\n"
                 "  --hashes             write hashes even when the lines carry names\n"
                 "  --help               this text\n"
                 "  --version            the version\n\n"
                 "Exit status: 0 done, 1 unreadable or malformed input or write error,\n"
                 "2 bad options.\n");
}

inline int parse_int(const std::string &opt, const char *v, int lo, int hi)
{
    char *end = nullptr;
    errno = 0;
    long n = std::strtol(v, &end, 10);
    if (*v == '\0' || *end != '\0' || errno != 0 || n < lo || n > hi)
        die(2, "invalid " + opt + " \"" + v + "\" (expected " + std::to_string(lo) + ".." +
                   std::to_string(hi) + ")");
    return static_cast<int>(n);
}

// Accepts --opt VALUE and --opt=VALUE.
inline Options parse_args(int argc, char **argv, const Tool &tool)
{
    Options o;
    for (int i = 1; i < argc; i++)
    {
        std::string a = argv[i];
        std::string name = a, inline_value;
        bool has_inline = false;
        if (a.rfind("--", 0) == 0 && a.find('=') != std::string::npos)
        {
            name = a.substr(0, a.find('='));
            inline_value = a.substr(a.find('=') + 1);
            has_inline = true;
        }
        auto value = [&]() -> std::string
        {
            if (has_inline)
                return inline_value;
            if (i + 1 >= argc)
                die(2, "option " + name + " needs a value");
            return argv[++i];
        };
        if (name == "--help" || name == "-h")
        {
            print_usage(stdout, tool);
            std::exit(0);
        }
        else if (name == "--version")
        {
            std::printf("%s (simhash) %s\n", g_prog, SIMHASH_VERSION);
            std::exit(0);
        }
        else if (name == "--exact-copies" && !has_inline)
            o.exact_copies = true;
        else if (name == "--hashes" && !has_inline)
            o.hashes = true;
        else if (name == "--input-format")
        {
            std::string v = value();
            if (v == "auto")
                o.format = Format::kAuto;
            else if (v == "decimal")
                o.format = Format::kDecimal;
            else if (v == "hex")
                o.format = Format::kHex;
            else
                die(2, "invalid --input-format \"" + v + "\" (expected auto, decimal or hex)");
        }
        else if (name == "--input" || name == "-i")
            o.input = value();
        else if (name == "--output" || name == "-o")
            o.output = value();
        else if (name == "--blocks" || name == "-b")
            o.blocks = parse_int(name, value().c_str(), 1, SH_MAX_BLOCKS);
        else if (name == "--distance" || name == "-d")
            o.distance = parse_int(name, value().c_str(), 0, SH_MAX_RADIUS);
        else if (name == "--threads" || name == "-t")
            o.threads = parse_int(name, value().c_str(), 0, 256);
        else
        {
            std::fprintf(stderr, "%s: unknown option %s\n", g_prog, a.c_str());
            print_usage(stderr, tool);
            std::exit(2);
        }
    }
    if (o.distance < 0)
        die(2, "--distance is required");
    if (o.input.empty() || o.output.empty())
        die(2, "--input and --output must not be empty");
    if (o.blocks != 0 && o.distance > 0 && o.blocks <= o.distance)
        die(2, "--blocks (" + std::to_string(o.blocks) + ") must be greater than --distance (" +
                   std::to_string(o.distance) + ")");
    if (o.threads == 0)
        o.threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    return o;
}

// What one line's hash field can be read as.
enum class Field
{
    kBad,
    kDecimal,
    kHex,
    kEither  // 16 decimal digits: a decimal, or a hex fingerprint without a letter
};

// Reads the field "0"*zeros + rest (rest does not start with '0') as a
// decimal into *dec and as 16 hex digits into *hex, as far as each applies.
inline Field classify(size_t zeros, const std::string &rest, uint64_t *dec, uint64_t *hex)
{
    const size_t len = zeros + rest.size();
    if (len == 0)
        return Field::kBad;
    bool digits = true, hexdigits = true;
    for (char c : rest)
    {
        digits = digits && c >= '0' && c <= '9';
        hexdigits = hexdigits && std::isxdigit(static_cast<unsigned char>(c));
    }
    *dec = 0;
    if (digits && rest.size() <= 20)
    {
        for (char c : rest)
        {
            unsigned digit = static_cast<unsigned>(c - '0');
            if (*dec > (UINT64_MAX - digit) / 10)
            {
                digits = false;
                break;
            }
            *dec = *dec * 10 + digit;
        }
    }
    else
        digits = false;
    if (len == 16 && hexdigits)
        *hex = std::strtoull(rest.c_str(), nullptr, 16);  // rest.empty(): 0
    if (digits)
        return len == 16 ? Field::kEither : Field::kDecimal;
    return len == 16 && hexdigits ? Field::kHex : Field::kBad;
}

// The hashes of an input given in blocks of any size, one per line: the
// hash, then optionally a tab and anything (simhash-fingerprint's label),
// then optionally '\r'.  A hash is an unsigned decimal (any number of leading
// zeros) or exactly 16 hex digits; with Format::kAuto the input's first line
// that only one reading fits decides for all of it (lines of 16 decimal digits
// fit both and wait for it), and an input that never decides is an error.  It
// stops at the first malformed line.  Memory: the hashes, the waiting lines'
// other reading, and at most 64 bytes of a line's hash and 40 of its text.
class HashLines
{
public:
    explicit HashLines(std::string shown, Format format = Format::kDecimal)
        : shown_(std::move(shown)), format_(format), explicit_(format != Format::kAuto)
    {
    }

    // False once a line was malformed (see error()).
    bool feed(const char *p, size_t n)
    {
        const char *end = p + n;
        while (ok() && p < end)
        {
            const char *nl = static_cast<const char *>(std::memchr(p, '\n', static_cast<size_t>(end - p)));
            const char *stop = nl ? nl : end;
            part(p, stop);
            if (!nl)
                break;
            take();
            p = nl + 1;
        }
        return ok();
    }

    // The last line, if the input does not end with a newline; then the
    // readings of lines that waited for the input's form.
    bool finish()
    {
        if (ok() && started_)
            take();
        if (ok() && !waiting_.empty())
        {
            if (format_ == Format::kAuto)
                error_ = shown_ + ": every hash is 16 decimal digits, which reads as a decimal and as hex: " +
                         "say which with --input-format decimal or --input-format hex";
            else
                resolve();
        }
        return ok();
    }

    bool ok() const
    {
        return error_.empty();
    }

    const std::string &error() const
    {
        return error_;
    }

    // The 1-based number of the malformed line; 0 if none (an input that
    // never showed its form is an error of no line).
    size_t bad_line() const
    {
        return bad_;
    }

    // The form the input showed (kAuto while undecided).
    Format format() const
    {
        return format_;
    }

    std::vector<uint64_t> &hashes()
    {
        return h_;
    }

    // Whether the first line has a name (after a tab); then names() holds
    // one per line, "line N" for a line without one.
    bool named() const
    {
        return named_;
    }

    std::vector<std::string> &names()
    {
        return names_;
    }

private:
    // Adds the bytes [b, e) of the current line.
    void part(const char *b, const char *e)
    {
        started_ = true;
        if (text_.size() < 40)
            text_.append(b, std::min(e, b + (40 - text_.size())));
        if (in_label_)
        {
            label(b, e);
            return;
        }
        for (const char *k = b; k < e; k++)
        {
            if (*k == '\t')
            {
                in_label_ = true;
                if (line_ == 0)
                    named_ = true;
                label(k + 1, e);
                return;
            }
            if (*k == '0' && rest_.empty())
                zeros_++;
            else if (rest_.size() <= 64)  // longer is malformed; keep no more
                rest_ += *k;
        }
    }

    // Bytes of the current line's name, kept when the input is named.
    void label(const char *b, const char *e)
    {
        if (named_)
            label_.append(b, e);
    }

    // The current line is complete.
    void take()
    {
        line_++;
        if (!in_label_ && !rest_.empty() && rest_.back() == '\r')
            rest_.pop_back();
        if (named_)
        {
            if (!in_label_)
                label_ = "line " + std::to_string(line_);
            else if (!label_.empty() && label_.back() == '\r')
                label_.pop_back();
            names_.push_back(std::move(label_));
            label_.clear();
        }
        uint64_t dec = 0, hex = 0;
        Field f = classify(zeros_, rest_, &dec, &hex);
        if (f == Field::kBad || (f == Field::kHex && format_ == Format::kDecimal) ||
            (f == Field::kDecimal && format_ == Format::kHex))
            fail(f);
        else
        {
            if (format_ == Format::kAuto && f != Field::kEither)
            {
                format_ = f == Field::kHex ? Format::kHex : Format::kDecimal;
                first_decided_ = line_;
                resolve();
            }
            if (f == Field::kEither && format_ == Format::kAuto)
                waiting_.push_back({h_.size(), hex});
            h_.push_back(f == Field::kHex || (f == Field::kEither && format_ == Format::kHex) ? hex : dec);
        }
        zeros_ = 0;
        rest_.clear();
        text_.clear();
        in_label_ = started_ = false;
    }

    // Lines read before the form was known take the reading it says.
    void resolve()
    {
        if (format_ == Format::kHex)
            for (const auto &w : waiting_)
                h_[w.first] = w.second;
        waiting_.clear();
        waiting_.shrink_to_fit();
    }

    void fail(Field f)
    {
        bad_ = line_;
        std::string got = "\"" + shown_bytes(text_.data(), text_.size()) + "\"";
        std::string where = shown_ + ":" + std::to_string(line_) + ": ";
        if (f == Field::kBad && !explicit_)
            error_ = where + "expected a 64-bit hash (an unsigned decimal, or 16 hex digits), got " + got;
        else if (f == Field::kBad)
            error_ = where + "expected a 64-bit hash as " +
                     (format_ == Format::kHex ? "16 hex digits" : "an unsigned decimal") + ", got " + got;
        else
            error_ = where + "expected " +
                     (format_ == Format::kHex ? std::string("16 hex digits")
                                              : std::string("an unsigned decimal")) +
                     (first_decided_ ? " as on line " + std::to_string(first_decided_) : std::string()) +
                     ", got " + got;
    }

    std::string shown_, rest_, text_, error_;
    Format format_;
    bool explicit_;  // the form was given, not read from the input
    size_t zeros_ = 0, line_ = 0, first_decided_ = 0, bad_ = 0;
    bool in_label_ = false, started_ = false, named_ = false;
    std::string label_;
    std::vector<std::string> names_;
    std::vector<uint64_t> h_;
    std::vector<std::pair<size_t, uint64_t>> waiting_;  // index in h_, hex reading
};

// Every line of the input: its hash and, if the input is named, its name.
// The input is read in blocks, never whole: memory is 8 bytes per line, and
// the names.
inline HashLines read_lines(const std::string &path, Format format)
{
    int fd = path == "-" ? 0 : open(path.c_str(), O_RDONLY);
    if (fd < 0)
        die(1, "cannot read " + path + ": " + std::strerror(errno));
    HashLines lines(path == "-" ? "<stdin>" : path, format);
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
        lines.hashes().reserve(static_cast<size_t>(st.st_size) / 17 + 1);  // >= 17 bytes per hash line
    std::vector<char> buf(1 << 20);
    for (;;)
    {
        ssize_t got = read(fd, buf.data(), buf.size());
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            die(1, "cannot read " + path + ": " + std::strerror(errno));
        if (got == 0)
            break;
        if (!lines.feed(buf.data(), static_cast<size_t>(got)))
            die(1, lines.error());
    }
    if (!lines.finish())
        die(1, lines.error());
    if (fd != 0)
        close(fd);
    return lines;
}

// The distinct hashes of the lines, ascending, and in *copies the values that
// occur more than once (when copies is given).
inline std::vector<uint64_t> distinct_hashes(std::vector<uint64_t> &&lines,
                                             std::vector<uint64_t> *copies = nullptr)
{
    std::vector<uint64_t> h = std::move(lines);
    std::sort(h.begin(), h.end());
    if (copies)
        for (size_t i = 1; i < h.size(); i++)
            if (h[i] == h[i - 1] && (copies->empty() || copies->back() != h[i]))
                copies->push_back(h[i]);
    h.erase(std::unique(h.begin(), h.end()), h.end());
    if (h.capacity() > h.size() + h.size() / 4)
        h.shrink_to_fit();
    return h;
}

// The lines grouped by hash: the distinct hashes ascending, and for each the
// numbers (0-based) of the lines that hold it, ascending.
struct Groups
{
    std::vector<uint64_t> hashes;
    std::vector<uint32_t> lines;  // group g: lines[start[g] .. start[g + 1])
    std::vector<size_t> start;

    size_t size(size_t g) const
    {
        return start[g + 1] - start[g];
    }
};

inline Groups group_lines(const std::vector<uint64_t> &h)
{
    if (h.size() > UINT32_MAX)
        die(1, "more than 4294967295 lines");
    Groups g;
    g.lines.resize(h.size());
    for (size_t i = 0; i < h.size(); i++)
        g.lines[i] = static_cast<uint32_t>(i);
    std::stable_sort(g.lines.begin(), g.lines.end(), [&](uint32_t a, uint32_t b) { return h[a] < h[b]; });
    for (size_t i = 0; i < g.lines.size(); i++)
        if (i == 0 || h[g.lines[i]] != h[g.lines[i - 1]])
        {
            g.hashes.push_back(h[g.lines[i]]);
            g.start.push_back(i);
        }
    g.start.push_back(g.lines.size());
    return g;
}

// Named input without --exact-copies: the lines left out as copies, said on
// standard error (the output keeps each hash's first line).
inline void report_copies(const Groups &g)
{
    size_t left_out = g.lines.size() - g.hashes.size();
    if (left_out > 0)
        std::fprintf(stderr,
                     "%s: %zu line%s repeat%s the hash of an earlier line: left out as exact "
                     "copies (--exact-copies lists them)\n",
                     g_prog, left_out, left_out == 1 ? "" : "s", left_out == 1 ? "s" : "");
}

// Buffered writer of "[a, b, ...]" lines into a temporary file next to the
// output (renamed over it by commit()), or straight to stdout for "-".
class Writer
{
public:
    explicit Writer(const std::string &path) : path_(path)
    {
        if (path == "-")
        {
            fd_ = 1;
            return;
        }
        // Only a regular file (or a new one) is replaced by rename; anything
        // else (a device such as /dev/null, a FIFO, a symbolic link) is
        // written in place, as a plain open would.
        struct stat st;
        if (lstat(path.c_str(), &st) == 0)
        {
            if (!S_ISREG(st.st_mode))
            {
                fd_ = open(path.c_str(), O_WRONLY | O_TRUNC);
                if (fd_ < 0)
                    die(1, "cannot write " + path + ": " + std::strerror(errno));
                return;
            }
            mode_ = st.st_mode & 07777;
        }
        else
        {
            mode_t mask = umask(0);
            umask(mask);
            mode_ = 0666 & ~mask;
        }
        tmp_ = path + ".tmp.XXXXXX";
        fd_ = mkstemp(tmp_.data());
        if (fd_ < 0)
            die(1, "cannot write " + path + ": " + std::strerror(errno));
    }

    ~Writer()
    {
        if (!tmp_.empty())
        {
            close(fd_);
            unlink(tmp_.c_str());
        }
    }

    Writer(const Writer &) = delete;
    Writer &operator=(const Writer &) = delete;

    void array(const uint64_t *v, size_t n)
    {
        buf_ += '[';
        for (size_t i = 0; i < n; i++)
        {
            if (i)
                buf_ += ", ";
            number(v[i]);
        }
        buf_ += "]\n";
        if (buf_.size() >= (1 << 20))
            flush();
    }

    // One line of text (names joined by tabs).
    void line(const std::string &text)
    {
        buf_ += text;
        buf_ += '\n';
        if (buf_.size() >= (1 << 20))
            flush();
    }

    void commit()
    {
        flush();
        if (tmp_.empty())
        {
            if (fd_ != 1 && close(fd_) != 0)
                fail();
            return;
        }
        // The file keeps its permissions (a new one gets 0666 & ~umask),
        // not mkstemp's 0600.
        if (fchmod(fd_, mode_) != 0 || close(fd_) != 0)
            fail();
        if (rename(tmp_.c_str(), path_.c_str()) != 0)
            fail();
        tmp_.clear();
    }

private:
    void number(uint64_t v)
    {
        char d[20];
        int k = 0;
        do
        {
            d[k++] = static_cast<char>('0' + v % 10);
            v /= 10;
        } while (v);
        while (k)
            buf_ += d[--k];
    }

    void flush()
    {
        size_t at = 0;
        while (at < buf_.size())
        {
            ssize_t put = write(fd_, buf_.data() + at, buf_.size() - at);
            if (put < 0 && errno == EINTR)
                continue;
            if (put < 0)
                fail();
            at += static_cast<size_t>(put);
        }
        buf_.clear();
    }

    [[noreturn]] void fail()
    {
        int e = errno;
        if (!tmp_.empty())
            unlink(tmp_.c_str());
        die(1, "cannot write " + path_ + ": " + std::strerror(e));
    }

    std::string path_, tmp_, buf_;
    int fd_ = -1;
    mode_t mode_ = 0644;
};

inline void check(sh_status st)
{
    if (st != SH_OK)
        die(1, sh_status_message(st));
}

}  // namespace batch_cli

#endif  // SIMHASH_BATCH_CLI_HPP
