// packed_scan — the physical limit for exact Hamming search: a linear scan of
// packed 64-bit codes (popcount(x ^ q) over a uint64 array, one core).  Every
// index figure of bench/limit.sh has its ratio to this scan of the same codes.
//
//   bench/packed_scan CODES QUERIES [--knn K] [--radius R[,R...]] [--rounds N]
//                     [--kernel avx2|scalar]
//   bench/packed_scan --planted N [--queries Q] [--seed S] [--dump DIR] [...]
//
// CODES: one code a line, as PostgreSQL writes simhash::bigint (signed
// decimal) or unsigned decimal; the row at line i (from 0) gets id i + 1, so
// load the codes in id order.  QUERIES: "qid code" a line.
// --planted N makes the codes in memory instead (100M rows in a second or two,
// where 2 GB of text would take a minute to parse), in the distribution of
// bench/scale.sh and bench/planted.sql: the first N * 9 / 10 rows random, each
// later row i a copy of a random earlier row (its source) with 1 + i % 6
// distinct bits flipped; Q queries (default 100), the first Q / 2 the sources
// of planted rows 2, 4, 6, ... ("near"), the rest fresh random values
// ("random").  Random values are splitmix64 of the seed, a stream number and
// the row number, so a seed gives the same codes everywhere.  --dump DIR
// writes them as DIR/codes and DIR/queries, in the files' formats above.
// For every round, every query and every query type (KNN-K, then each radius)
// one scan, timed alone with a steady clock (ns) and the thread's CPU clock
// (cpu_ns).  Kernels: avx2 (the default when
// built for a CPU with AVX2: four rows a vector, popcount by nibble table) and
// scalar (one popcnt a row).  stdout, CSV:
//   kernel,kind,param,round,qid,ns,cpu_ns,count,dists,ids
// kind knn: the K nearest, ties broken by id (position), as
//   ORDER BY fp <~> q, id LIMIT K; dists and ids in that order.
// kind radius: every row within param bits; ids ascending, dists in the same
// order.  Lists are space-separated.  stderr: p50/p95 ns per query and ns per
// row per query type.  Not part of `make test`; test/packed_scan_test.sh checks
// its answers against a brute-force reference.
#include <time.h>
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#ifdef __AVX2__
#include <immintrin.h>
#endif

namespace
{

struct Hit
{
    uint32_t dist;
    uint64_t pos;
};

// The K nearest by (distance, position).  Rows arrive in position order, so a
// row enters only if strictly nearer than the current K-th (thr).
struct KnnSink
{
    size_t k;
    uint32_t thr = 65;  // a row is offered if its distance < thr
    std::vector<Hit> top;
    explicit KnnSink(size_t k_) : k(k_)
    {
        top.reserve(k + 1);
        if (k == 0)
            thr = 0;
    }
    void hit(uint64_t pos, uint32_t d)
    {
        auto at =
            std::upper_bound(top.begin(), top.end(), d, [](uint32_t v, const Hit &e) { return v < e.dist; });
        top.insert(at, Hit{d, pos});
        if (top.size() > k)
            top.pop_back();
        if (top.size() == k)
            thr = top.back().dist;
    }
};

// Every row within r bits, in position order.
struct RadiusSink
{
    uint32_t thr;
    std::vector<Hit> top;
    explicit RadiusSink(uint32_t r) : thr(r + 1) {}
    void hit(uint64_t pos, uint32_t d)
    {
        top.push_back(Hit{d, pos});
    }
};

// One row at a time: popcount(x ^ q), compare, rarely branch.
template <class Sink>
void scan_scalar(const uint64_t *x, size_t from, size_t n, uint64_t q, Sink &sink)
{
    for (size_t i = from; i < n; i++)
    {
        uint32_t d = static_cast<uint32_t>(__builtin_popcountll(x[i] ^ q));
        if (__builtin_expect(d < sink.thr, 0))
            sink.hit(i, d);
    }
}

#ifdef __AVX2__
// Four rows a vector: the popcount of each byte by a nibble table (vpshufb),
// summed per 64-bit lane (vpsadbw), compared with the threshold; the rare
// vector with a row below it goes to the sink lane by lane.
template <class Sink>
void scan_avx2(const uint64_t *x, size_t n, uint64_t q, Sink &sink)
{
    const __m256i lut = _mm256_setr_epi8(0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4, 0, 1, 1, 2, 1, 2, 2,
                                         3, 1, 2, 2, 3, 2, 3, 3, 4);
    const __m256i nib = _mm256_set1_epi8(0x0f);
    const __m256i qv = _mm256_set1_epi64x(static_cast<long long>(q));
    const __m256i zero = _mm256_setzero_si256();
    __m256i below = _mm256_set1_epi64x(static_cast<long long>(sink.thr) - 1);
    size_t i = 0;
    for (; i + 4 <= n; i += 4)
    {
        __m256i v = _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(x + i)), qv);
        __m256i lo = _mm256_shuffle_epi8(lut, _mm256_and_si256(v, nib));
        __m256i hi = _mm256_shuffle_epi8(lut, _mm256_and_si256(_mm256_srli_epi16(v, 4), nib));
        __m256i d = _mm256_sad_epu8(_mm256_add_epi8(lo, hi), zero);
        // lanes whose distance is not above thr - 1
        if (__builtin_expect(_mm256_movemask_epi8(_mm256_cmpgt_epi64(d, below)) != -1, 0))
        {
            alignas(32) uint64_t ds[4];
            _mm256_store_si256(reinterpret_cast<__m256i *>(ds), d);
            for (int j = 0; j < 4; j++)
                if (ds[j] < sink.thr)
                    sink.hit(i + j, static_cast<uint32_t>(ds[j]));
            below = _mm256_set1_epi64x(static_cast<long long>(sink.thr) - 1);
        }
    }
    scan_scalar(x, i, n, q, sink);  // the last n % 4 rows
}
#endif

bool parse_code(const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    if (*s == '-')
    {
        long long v = strtoll(s, &end, 10);
        *out = static_cast<uint64_t>(v);
    }
    else
    {
        *out = strtoull(s, &end, 10);
    }
    while (*end == ' ' || *end == '\t' || *end == '\r' || *end == '\n')
        end++;
    return errno == 0 && end != s && *end == '\0';
}

[[noreturn]] void die(const std::string &msg)
{
    fprintf(stderr, "packed_scan: %s\n", msg.c_str());
    exit(2);
}

std::vector<uint64_t> read_codes(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        die(std::string("cannot open ") + path + ": " + strerror(errno));
    std::vector<uint64_t> codes;
    char line[256];
    size_t lineno = 0;
    while (fgets(line, sizeof line, f))
    {
        lineno++;
        uint64_t v;
        if (!parse_code(line, &v))
            die(std::string(path) + ":" + std::to_string(lineno) + ": not a code: " + line);
        codes.push_back(v);
    }
    fclose(f);
    return codes;
}

struct Query
{
    long long qid;
    uint64_t code;
};

std::vector<Query> read_queries(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        die(std::string("cannot open ") + path + ": " + strerror(errno));
    std::vector<Query> qs;
    char line[256];
    size_t lineno = 0;
    while (fgets(line, sizeof line, f))
    {
        lineno++;
        char *end;
        errno = 0;
        long long qid = strtoll(line, &end, 10);
        while (*end == ' ' || *end == '\t')
            end++;
        uint64_t v;
        if (errno != 0 || end == line || !parse_code(end, &v))
            die(std::string(path) + ":" + std::to_string(lineno) + ": not \"qid code\": " + line);
        qs.push_back(Query{qid, v});
    }
    fclose(f);
    return qs;
}

// splitmix64's finaliser: a 64-bit mix good enough for random codes
uint64_t splitmix64(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

// value i of random stream `stream` under `seed`
uint64_t draw(uint64_t seed, uint64_t stream, uint64_t i)
{
    return splitmix64(i ^ splitmix64(seed * 16 + stream));
}

// The data of bench/scale.sh (90% random, 10% near copies of random earlier
// rows, 1..6 bits flipped) and its query set, made in memory.
void make_planted(size_t n, size_t nq, uint64_t seed, std::vector<uint64_t> &codes,
                  std::vector<Query> &queries)
{
    size_t base = n * 9 / 10;
    if (base == 0)
        base = n;  // one row: nothing to copy
    codes.resize(n);
    for (size_t i = 1; i <= base; i++)
        codes[i - 1] = draw(seed, 0, i);
    for (size_t i = 1; i <= n - base; i++)
    {
        // bits s, s + u, s + 2u, ... mod 64 with u odd: 1 + i % 6 distinct bits
        const uint64_t c = 1 + draw(seed, 1, i) % base, s = draw(seed, 2, i) & 63,
                       u = 2 * (draw(seed, 3, i) & 31) + 1;
        uint64_t m = 0;
        for (uint64_t j = 0; j <= i % 6; j++)
            m |= uint64_t{1} << ((s + j * u) & 63);
        codes[base + i - 1] = codes[c - 1] ^ m;
    }
    queries.clear();
    for (size_t i = 1; i <= nq; i++)
    {
        // near: the source of planted row 2i (it has a copy 1..6 bits away
        // when 2i <= n - base); random: a fresh value
        uint64_t q = (i <= nq / 2 && base > 0) ? codes[draw(seed, 1, 2 * i) % base] : draw(seed, 4, i);
        queries.push_back(Query{static_cast<long long>(i), q});
    }
}

void dump(const std::string &dir, const std::vector<uint64_t> &codes, const std::vector<Query> &queries)
{
    const std::string cp = dir + "/codes", qp = dir + "/queries";
    FILE *c = fopen(cp.c_str(), "w");
    if (!c)
        die("cannot write " + cp + ": " + strerror(errno));
    for (uint64_t v : codes)
        fprintf(c, "%" PRIu64 "\n", v);
    FILE *q = fopen(qp.c_str(), "w");
    if (!q)
        die("cannot write " + qp + ": " + strerror(errno));
    for (const Query &x : queries)
        fprintf(q, "%lld %" PRIu64 "\n", x.qid, x.code);
    if (fclose(c) != 0 || fclose(q) != 0)
        die("cannot write " + dir + ": " + strerror(errno));
}

template <class Sink>
std::vector<Hit> run(const std::string &kernel, const std::vector<uint64_t> &codes, uint64_t q,
                     uint32_t param)
{
    Sink sink(param);
#ifdef __AVX2__
    if (kernel == "avx2")
    {
        scan_avx2(codes.data(), codes.size(), q, sink);
        return std::move(sink.top);
    }
#endif
    (void)kernel;
    scan_scalar(codes.data(), 0, codes.size(), q, sink);
    return std::move(sink.top);
}

// CPU time of this thread: what a query costs, whatever else the machine runs
uint64_t thread_cpu_ns()
{
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1000000000u + static_cast<uint64_t>(ts.tv_nsec);
}

double percentile(std::vector<double> v, double p)
{
    if (v.empty())
        return 0;
    std::sort(v.begin(), v.end());
    // linear interpolation, as PostgreSQL's percentile_cont
    double at = p * static_cast<double>(v.size() - 1);
    size_t i = static_cast<size_t>(at);
    if (i + 1 >= v.size())
        return v.back();
    return v[i] + (at - static_cast<double>(i)) * (v[i + 1] - v[i]);
}

}  // namespace

const char *const kUsage =
    "usage: packed_scan CODES QUERIES [--knn K] [--radius R[,R...]] "
    "[--rounds N] [--kernel avx2|scalar]\n"
    "       packed_scan --planted N [--queries Q] [--seed S] [--dump DIR] [...]";

int main(int argc, char **argv)
{
    std::vector<const char *> files;
    size_t knn = 10;
    std::vector<uint32_t> radii;
    int rounds = 1;
    long long planted = -1, nqueries = 100;
    uint64_t seed = 1;
    std::string dump_dir;
#ifdef __AVX2__
    std::string kernel = "avx2";
#else
    std::string kernel = "scalar";
#endif
    for (int i = 1; i < argc; i++)
    {
        std::string a = argv[i];
        if ((a == "--knn" || a == "--radius" || a == "--rounds" || a == "--kernel" || a == "--planted" ||
             a == "--queries" || a == "--seed" || a == "--dump") &&
            i + 1 < argc)
        {
            std::string v = argv[++i];
            if (a == "--planted" || a == "--queries")
            {
                char *end;
                long long x = strtoll(v.c_str(), &end, 10);
                if (v.empty() || *end != '\0' || x < 0)
                    die(a + " " + v + " is not a count");
                (a == "--planted" ? planted : nqueries) = x;
            }
            else if (a == "--seed")
            {
                seed = strtoull(v.c_str(), nullptr, 10);
            }
            else if (a == "--dump")
            {
                dump_dir = v;
            }
            else if (a == "--kernel")
            {
#ifdef __AVX2__
                if (v != "avx2" && v != "scalar")
                    die("kernel " + v + " is not avx2 or scalar");
#else
                if (v != "scalar")
                    die("kernel " + v + " is not scalar (built without AVX2)");
#endif
                kernel = v;
            }
            else if (a == "--knn")
            {
                knn = strtoul(v.c_str(), nullptr, 10);
            }
            else if (a == "--rounds")
            {
                rounds = atoi(v.c_str());
            }
            else
            {
                radii.clear();
                size_t p = 0;
                while (p <= v.size())
                {
                    size_t c = v.find(',', p);
                    std::string t = v.substr(p, c == std::string::npos ? std::string::npos : c - p);
                    if (!t.empty())
                    {
                        unsigned long r = strtoul(t.c_str(), nullptr, 10);
                        if (r > 64)
                            die("radius " + t + " is above 64");
                        radii.push_back(static_cast<uint32_t>(r));
                    }
                    if (c == std::string::npos)
                        break;
                    p = c + 1;
                }
            }
        }
        else if (!a.empty() && a[0] == '-')
        {
            die(kUsage);
        }
        else
        {
            files.push_back(argv[i]);
        }
    }
    if (files.size() != (planted >= 0 ? 0u : 2u) || rounds < 1 || (!dump_dir.empty() && planted < 0))
        die(kUsage);
    std::vector<uint64_t> codes;
    std::vector<Query> queries;
    if (planted >= 0)
    {
        make_planted(static_cast<size_t>(planted), static_cast<size_t>(nqueries), seed, codes, queries);
        if (!dump_dir.empty())
            dump(dump_dir, codes, queries);
    }
    else
    {
        codes = read_codes(files[0]);
        queries = read_queries(files[1]);
    }

    struct Kind
    {
        const char *name;
        uint32_t param;
        std::vector<double> ns, cpu;
    };
    std::vector<Kind> kinds;
    if (knn > 0)
        kinds.push_back(Kind{"knn", static_cast<uint32_t>(knn), {}, {}});
    for (uint32_t r : radii)
        kinds.push_back(Kind{"radius", r, {}, {}});

    printf("kernel,kind,param,round,qid,ns,cpu_ns,count,dists,ids\n");
    std::string dists, ids;
    for (int round = 1; round <= rounds; round++)
    {
        for (const Query &q : queries)
        {
            for (Kind &kd : kinds)
            {
                const bool is_knn = kd.name[0] == 'k';
                const uint64_t c0 = thread_cpu_ns();
                auto t0 = std::chrono::steady_clock::now();
                std::vector<Hit> hits = is_knn ? run<KnnSink>(kernel, codes, q.code, kd.param)
                                               : run<RadiusSink>(kernel, codes, q.code, kd.param);
                auto t1 = std::chrono::steady_clock::now();
                const uint64_t c1 = thread_cpu_ns();
                double ns = static_cast<double>(
                    std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count());
                kd.ns.push_back(ns);
                kd.cpu.push_back(static_cast<double>(c1 - c0));
                dists.clear();
                ids.clear();
                for (size_t i = 0; i < hits.size(); i++)
                {
                    if (i)
                    {
                        dists += ' ';
                        ids += ' ';
                    }
                    dists += std::to_string(hits[i].dist);
                    ids += std::to_string(hits[i].pos + 1);
                }
                printf("%s,%s,%u,%d,%lld,%.0f,%" PRIu64 ",%zu,%s,%s\n", kernel.c_str(), kd.name, kd.param,
                       round, q.qid, ns, c1 - c0, hits.size(), dists.c_str(), ids.c_str());
            }
        }
    }
    for (const Kind &kd : kinds)
    {
        double p50 = percentile(kd.ns, 0.5), p95 = percentile(kd.ns, 0.95);
        double cpu50 = percentile(kd.cpu, 0.5);
        fprintf(stderr,
                "%s %s-%u: %zu rows, %zu scans: p50 %.0f ns, p95 %.0f ns, %.3f ns/row; "
                "CPU p50 %.0f ns, %.3f ns/row\n",
                kernel.c_str(), kd.name, kd.param, codes.size(), kd.ns.size(), p50, p95,
                codes.empty() ? 0.0 : p50 / static_cast<double>(codes.size()), cpu50,
                codes.empty() ? 0.0 : cpu50 / static_cast<double>(codes.size()));
    }
    return 0;
}
