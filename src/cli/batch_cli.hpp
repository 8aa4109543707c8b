// batch_cli.hpp — what simhash-find-all and simhash-find-clusters share:
// seomoz-compatible options, strict input parsing, atomic output.
//
// Input: one unsigned decimal 64-bit hash per line (a trailing '\r' is
// allowed).  Like seomoz simhash-cpp, which reads the input into a set, the
// tools work on the distinct hashes: a repeated hash is the same hash, never a
// pair with itself.  Output: one JSON array per line, unsigned decimals joined
// by ", ", written to a temporary file renamed over --output only on success
// (when --output is a regular file or new; other paths are written in place).
#ifndef SIMHASH_BATCH_CLI_HPP
#define SIMHASH_BATCH_CLI_HPP

#include "batch.h"
#include "tables.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
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

struct Options
{
    std::string input = "-";
    std::string output = "-";
    int blocks = 0;  // automatic
    int distance = -1;
    int threads = 1;
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

inline void print_usage(std::FILE *to, const char *what)
{
    std::fprintf(to,
                 "usage: %s --distance DISTANCE [--blocks BLOCKS] [--input INPUT]\n"
                 "       [--output OUTPUT] [--threads N]\n\n"
                 "Reads unsigned decimal 64-bit hashes, one per line, and writes %s,\n"
                 "one JSON array of hashes per line (the format of seomoz simhash-cpp).\n"
                 "Repeated input hashes count once, as in seomoz (which reads a set).\n\n"
                 "  --distance DISTANCE  maximum number of differing bits, 0..64\n"
                 "  --blocks BLOCKS      bit blocks of the permuted tables, DISTANCE+1..16;\n"
                 "                       speed only (default: chosen from the input size)\n"
                 "  --input INPUT        path to read ('-', the default, for stdin)\n"
                 "  --output OUTPUT      path to write ('-', the default, for stdout)\n"
                 "  --threads N          worker threads (default 1; 0: one per core)\n"
                 "  --help               this text\n\n"
                 "Exit status: 0 done, 1 unreadable or malformed input or write error,\n"
                 "2 bad options.\n",
                 g_prog, what);
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
inline Options parse_args(int argc, char **argv, const char *what)
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
            print_usage(stdout, what);
            std::exit(0);
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
            print_usage(stderr, what);
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

// Parses one line [b, e) of the input (a trailing '\r' allowed): an unsigned
// decimal 64-bit number, with any number of leading zeros.
inline bool parse_line(const char *b, const char *e, uint64_t *out)
{
    if (e > b && e[-1] == '\r')
        e--;
    while (e - b > 1 && *b == '0')
        b++;
    uint64_t v = 0;
    if (e == b || e - b > 20)
        return false;
    for (const char *k = b; k < e; k++)
    {
        unsigned digit = static_cast<unsigned char>(*k) - '0';
        if (digit > 9 || v > (UINT64_MAX - digit) / 10)
            return false;
        v = v * 10 + digit;
    }
    *out = v;
    return true;
}

// The hashes of an input given in blocks of any size, one per line; it stops
// at the first malformed line.  Memory: the hashes, and at most 64 bytes of a
// line split across blocks (a longer line is malformed, leading zeros aside).
class HashLines
{
public:
    explicit HashLines(std::string shown) : shown_(std::move(shown)) {}

    // False once a line was malformed (see error()).
    bool feed(const char *p, size_t n)
    {
        const char *end = p + n;
        while (ok() && p < end)
        {
            const char *nl = static_cast<const char *>(std::memchr(p, '\n', static_cast<size_t>(end - p)));
            if (!nl)
            {
                carry_.append(p, end);
                // Leading zeros say nothing: keep one.  Anything else this
                // long is too long to be a hash: report it now.
                size_t zeros = std::min(carry_.find_first_not_of('0'), carry_.size());
                if (zeros > 1)
                    carry_.erase(0, zeros - 1);
                if (carry_.size() > 64)
                    take(carry_.data(), carry_.data() + carry_.size());
                break;
            }
            if (carry_.empty())
                take(p, nl);
            else
            {
                carry_.append(p, nl);
                take(carry_.data(), carry_.data() + carry_.size());
                carry_.clear();
            }
            p = nl + 1;
        }
        return ok();
    }

    // The last line, if the input does not end with a newline.
    bool finish()
    {
        if (ok() && !carry_.empty())
            take(carry_.data(), carry_.data() + carry_.size());
        carry_.clear();
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

    size_t bad_line() const
    {
        return ok() ? 0 : line_;
    }

    std::vector<uint64_t> &hashes()
    {
        return h_;
    }

private:
    void take(const char *b, const char *e)
    {
        line_++;
        uint64_t v;
        if (parse_line(b, e, &v))
            h_.push_back(v);
        else
            error_ = shown_ + ":" + std::to_string(line_) +
                     ": expected an unsigned decimal 64-bit hash, got \"" +
                     shown_bytes(b, std::min<size_t>(static_cast<size_t>(e - b), 40)) + "\"";
    }

    std::string shown_, carry_, error_;
    size_t line_ = 0;
    std::vector<uint64_t> h_;
};

// The distinct hashes of the input, ascending.  The input is read in blocks,
// never whole: memory is the 8 bytes per hash of the result.
inline std::vector<uint64_t> read_hashes(const std::string &path)
{
    int fd = path == "-" ? 0 : open(path.c_str(), O_RDONLY);
    if (fd < 0)
        die(1, "cannot read " + path + ": " + std::strerror(errno));
    HashLines lines(path == "-" ? "<stdin>" : path);
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
        lines.hashes().reserve(static_cast<size_t>(st.st_size) / 20 + 1);  // ~20 bytes per random hash
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
    std::vector<uint64_t> h = std::move(lines.hashes());
    std::sort(h.begin(), h.end());
    h.erase(std::unique(h.begin(), h.end()), h.end());
    if (h.capacity() > h.size() + h.size() / 4)
        h.shrink_to_fit();
    return h;
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
