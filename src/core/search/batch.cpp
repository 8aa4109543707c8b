// batch.cpp — all pairs within k bits and their connected components, by
// radix-sorted permuted tables (see batch.h).
#include "batch.h"

#include "boundary.hpp"
#include "tables.h"

#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <thread>
#include <utility>
#include <vector>

namespace
{

constexpr int kMaxDigitBits = 12;         // radix digit: 4096 counters fit in L1
constexpr unsigned kPollWork = 1u << 16;  // work units (records or pair tests) between polls
constexpr int kMaxTables = 20000;         // layouts with more tables are never worth it
constexpr int kMaxThreads = 256;

// The number of bits needed to write v (0 for 0).
int bit_width(uint64_t v)
{
    int w = 0;
    while (v)
    {
        w++;
        v >>= 1;
    }
    return w;
}

// One table keyed on the fingerprint itself, whose prefix is its top
// prefix_bits bits: 64 finds equal fingerprints, 0 makes one group of all.
sh_table whole_key_table(int prefix_bits)
{
    sh_table t{};
    t.nblocks = 1;
    t.prefix_bits = prefix_bits;
    t.prefix_key_mask = prefix_bits == 0 ? 0 : ~uint64_t{0} << (64 - prefix_bits);
    t.prefix_orig_mask = t.prefix_key_mask;
    t.width_mask[0] = ~uint64_t{0};
    return t;
}

// Relative cost of scanning ntables tables: building, sorting and scanning
// records, plus the pair tests in groups sharing a prefix (random input).
double layout_cost(double n, double ntables, int prefix_bits)
{
    int pos_bits = std::max(1, bit_width(static_cast<uint64_t>(n)));
    int sort_bits = std::min(prefix_bits, 64 - pos_bits);
    int passes = (sort_bits + kMaxDigitBits - 1) / kMaxDigitBits;
    double pairs = n * (n - 1) / 2 / std::ldexp(1.0, prefix_bits);
    return ntables * (n * (passes + 3) * 4 + pairs);
}

// sh_batch_auto_blocks for a valid radius: the cheapest block count by layout_cost, 0 for one group.
int auto_blocks(size_t n, int radius)
{
    if (radius == 0)
        return 0;
    double dn = static_cast<double>(n);
    double best = dn * (dn - 1) / 2;  // one group, every pair tested
    int choice = 0;
    for (int b = radius + 1; b <= SH_MAX_BLOCKS; b++)
    {
        int64_t nt = sh_binomial(b, radius);
        if (nt > kMaxTables)
            continue;
        double c = layout_cost(dn, static_cast<double>(nt), sh_table_min_prefix_bits(b, radius));
        if (c < best)
        {
            best = c;
            choice = b;
        }
    }
    return choice;
}

// The tables one call scans: the layout of (blocks, radius), or one whole-key table (radius 0,
// or no layout cheaper than comparing all pairs); SH_ERR_ARGUMENT or SH_ERR_RANGE (over 2^32 - 1
// hashes) for what a call cannot take.
sh_status make_plan(size_t n, int blocks, int radius, std::vector<sh_table> &tables)
{
    if (!sh_radius_valid(radius) || blocks < 0)
        return SH_ERR_ARGUMENT;
    if (n > UINT32_MAX)
        return SH_ERR_RANGE;
    if (radius == 0)
    {
        tables.assign(1, whole_key_table(64));
        return SH_OK;
    }
    if (blocks == 0)
        blocks = auto_blocks(n, radius);
    if (blocks == 0)
    {
        tables.assign(1, whole_key_table(0));
        return SH_OK;
    }
    int nt = sh_table_count(blocks, radius);
    if (nt <= 0)
        return SH_ERR_ARGUMENT;
    tables.resize(nt);
    return sh_table_layout(blocks, radius, tables.data(), nt);
}

// Order of find_all's output: by a, then b.
bool pair_less(const sh_pair &x, const sh_pair &y)
{
    return x.a != y.a ? x.a < y.a : x.b < y.b;
}

// State shared by the workers of one call.
struct Shared
{
    const uint64_t *h;
    size_t n;
    int radius;
    int pos_bits;
    const std::vector<sh_table> *tables;
    sh_interrupt_fn interrupt;
    void *interrupt_arg;
    std::atomic<int> next_table{0};
    std::atomic<bool> stop{false};
    std::atomic<int> error{SH_OK};
    std::atomic<int> running{0};
    size_t chunk = 0;  // find_all: pairs per call of emit
    sh_pairs_fn emit = nullptr;
    void *emit_arg = nullptr;
    std::mutex emit_lock;

    // Records the first failure and asks every worker to stop.
    void fail(sh_status s)
    {
        int ok = SH_OK;
        error.compare_exchange_strong(ok, s);
        stop.store(true);
    }
};

// Counts work and, every kPollWork units, looks at the stop flag; on the
// caller's thread it also asks the interrupt callback.
class Poll
{
public:
    Poll(Shared &s, bool caller) : s_(s), caller_(caller) {}

    // Counts `work` units; true when the call should stop (checked every kPollWork units).
    bool tick(size_t work)
    {
        count_ += work;
        if (count_ < kPollWork)
            return false;
        count_ = 0;
        return stopped();
    }

    // True when the call should stop; on the caller's thread, asks the interrupt callback first.
    bool stopped()
    {
        if (caller_ && s_.interrupt && s_.interrupt(s_.interrupt_arg))
        {
            s_.fail(SH_ERR_INTERRUPTED);
        }
        return s_.stop.load(std::memory_order_relaxed);
    }

private:
    Shared &s_;
    bool caller_;
    size_t count_ = 0;
};

// Pairs go, a chunk at a time, to the caller's callback (find_all), or into
// a union-find (clusters).
struct PairSink
{
    static constexpr bool kNeedsFirstMatch = true;
    Shared *s = nullptr;
    std::vector<sh_pair> chunk;

    explicit PairSink(Shared &shared) : s(&shared)
    {
        chunk.reserve(shared.chunk);
    }

    void add(uint32_t a, uint32_t b)
    {
        chunk.push_back(sh_pair{a, b});
        if (chunk.size() >= s->chunk)
            flush();
    }

    // Hands the chunk over, sorted, under the lock; nothing after a stop.
    void flush()
    {
        if (chunk.empty())
            return;
        std::sort(chunk.begin(), chunk.end(), pair_less);
        {
            std::lock_guard<std::mutex> hold(s->emit_lock);
            if (!s->stop.load() && s->emit(chunk.data(), chunk.size(), s->emit_arg) != 0)
                s->fail(SH_ERR_INTERRUPTED);
        }
        chunk.clear();
    }
};

struct UnionFind
{
    static constexpr bool kNeedsFirstMatch = false;  // a repeated union is harmless
    std::vector<uint32_t> parent;

    explicit UnionFind(Shared &shared) : parent(shared.n)
    {
        for (size_t i = 0; i < shared.n; i++)
            parent[i] = static_cast<uint32_t>(i);
    }

    // The root of x's component, halving the path on the way.
    uint32_t find(uint32_t x)
    {
        while (parent[x] != x)
        {
            parent[x] = parent[parent[x]];
            x = parent[x];
        }
        return x;
    }

    // The smaller root wins, so every root is its component's smallest position.
    void add(uint32_t a, uint32_t b)
    {
        uint32_t ra = find(a), rb = find(b);
        if (ra < rb)
            parent[rb] = ra;
        else if (rb < ra)
            parent[ra] = rb;
    }
};

// Makes room for g entries in a scratch vector (cleared), growing it by
// doubling but never past n, so its capacity stays within the bound of
// sh_batch_memory.
template <class V>
void make_room(V &v, size_t g, size_t n)
{
    v.clear();
    if (v.capacity() < g)
    {
        V().swap(v);
        v.reserve(std::max(g, std::min(2 * g, n)));
    }
}

template <class Sink>
class TableScan
{
public:
    TableScan(Shared &s, Sink &sink, Poll &poll) : s_(s), sink_(sink), poll_(poll) {}

    // Sort table t's records and test every pair sharing its whole prefix.
    bool scan(int t)
    {
        const sh_table &tab = (*s_.tables)[t];
        t_ = t;
        const int pos_bits = s_.pos_bits;
        const int sort_bits = std::min(tab.prefix_bits, 64 - pos_bits);
        rec_.resize(s_.n);
        tmp_.resize(s_.n);
        // Records (prefix above position), with the histogram of every radix
        // digit counted on the way, so each sort pass is a single scatter.
        const int ndigits = (sort_bits + kMaxDigitBits - 1) / kMaxDigitBits;
        const int width = ndigits ? (sort_bits + ndigits - 1) / ndigits : 0;
        const uint64_t dmask = (uint64_t{1} << width) - 1;
        hist_.assign(static_cast<size_t>(ndigits) << width, 0);
        for (size_t i = 0; i < s_.n; i++)
        {
            uint64_t top = sort_bits == 0 ? 0 : sh_table_permute(&tab, s_.h[i]) >> (64 - sort_bits);
            uint64_t r = (top << pos_bits) | i;
            rec_[i] = r;
            for (int d = 0; d < ndigits; d++)
                hist_[(static_cast<size_t>(d) << width) + ((r >> (pos_bits + d * width)) & dmask)]++;
        }
        if (poll_.tick(s_.n))
            return false;
        // Stable LSD passes: records with equal prefixes keep position order.
        for (int d = 0; d < ndigits; d++)
        {
            const int shift = pos_bits + d * width;
            uint32_t *count = &hist_[static_cast<size_t>(d) << width];
            if (count[(rec_[0] >> shift) & dmask] == s_.n)
                continue;  // one digit value throughout: already in order
            uint32_t sum = 0;
            for (size_t v = 0; v <= dmask; v++)
                sum += std::exchange(count[v], sum);
            for (size_t i = 0; i < s_.n; i++)
                tmp_[count[(rec_[i] >> shift) & dmask]++] = rec_[i];
            rec_.swap(tmp_);
            if (poll_.tick(s_.n))
                return false;
        }
        const uint64_t pos_mask = (uint64_t{1} << pos_bits) - 1;
        const bool exact = sort_bits == tab.prefix_bits;
        for (size_t i = 0; i < s_.n;)
        {
            size_t j = i + 1;
            while (j < s_.n && (rec_[j] >> pos_bits) == (rec_[i] >> pos_bits))
                j++;
            if (j - i > 1)
            {
                make_room(group_, j - i, s_.n);
                for (size_t k = i; k < j; k++)
                    group_.push_back(static_cast<uint32_t>(rec_[k] & pos_mask));
                if (!(exact ? test_group(group_.data(), group_.size()) : split_group(tab)))
                    return false;
            }
            if (poll_.tick(j - i))
                return false;
            i = j;
        }
        return true;
    }

private:
    // The records agree on the sorted bits only: split by the whole prefix.
    bool split_group(const sh_table &tab)
    {
        make_room(keyed_, group_.size(), s_.n);
        for (uint32_t p : group_)
            keyed_.emplace_back(s_.h[p] & tab.prefix_orig_mask, p);
        std::sort(keyed_.begin(), keyed_.end());
        size_t i = 0;
        while (i < keyed_.size())
        {
            size_t j = i + 1;
            while (j < keyed_.size() && keyed_[j].first == keyed_[i].first)
                j++;
            make_room(sub_, j - i, s_.n);
            for (size_t k = i; k < j; k++)
                sub_.push_back(keyed_[k].second);
            if (sub_.size() > 1 && !test_group(sub_.data(), sub_.size()))
                return false;
            i = j;
        }
        return true;
    }

    // Positions p[0..g) ascending, all sharing table t_'s prefix.
    bool test_group(const uint32_t *p, size_t g)
    {
        if constexpr (!Sink::kNeedsFirstMatch)
        {
            if (g > 16)
                return test_distinct(p, g);
        }
        return test_pairs(p, g);
    }

    // Clustering only: join equal fingerprints once, then test the distinct
    // values, so that many exact copies (common: boilerplate pages) cost
    // g log g rather than g^2.
    bool test_distinct(const uint32_t *p, size_t g)
    {
        make_room(copies_, g, s_.n);
        for (size_t x = 0; x < g; x++)
            copies_.emplace_back(s_.h[p[x]], p[x]);
        std::sort(copies_.begin(), copies_.end());
        make_room(distinct_, g, s_.n);
        for (size_t x = 0; x < g; x++)
        {
            if (x > 0 && copies_[x].first == copies_[x - 1].first)
                sink_.add(distinct_.back(), copies_[x].second);
            else
                distinct_.push_back(copies_[x].second);
        }
        if (poll_.tick(g))
            return false;
        return test_pairs(distinct_.data(), distinct_.size());
    }

    // Every pair of p[0..g); ascending positions when pairs are reported.
    bool test_pairs(const uint32_t *p, size_t g)
    {
        make_room(vals_, g, s_.n);
        vals_.resize(g);
        for (size_t x = 0; x < g; x++)
            vals_[x] = s_.h[p[x]];
        const int d = s_.radius;
        for (size_t x = 0; x + 1 < g; x++)
        {
            const uint64_t hx = vals_[x];
            for (size_t y = x + 1; y < g; y++)
            {
                const uint64_t hy = vals_[y];
                if (__builtin_popcountll(hx ^ hy) > d)
                    continue;
                if (Sink::kNeedsFirstMatch && !sh_table_first_match(s_.tables->data(), t_, hx, hy))
                    continue;
                sink_.add(p[x], p[y]);
            }
            if (poll_.tick(g - x))
                return false;
        }
        return true;
    }

    Shared &s_;
    Sink &sink_;
    Poll &poll_;
    int t_ = 0;
    std::vector<uint64_t> rec_, tmp_, vals_;
    std::vector<uint32_t> group_, sub_, distinct_, hist_;
    std::vector<std::pair<uint64_t, uint32_t>> keyed_, copies_;
};

// One thread's share: takes tables from s.next_table until none is left or the call stops;
// a failure (an exception included) is recorded in s.
template <class Sink>
void work(Shared &s, Sink &sink, bool caller)
{
    Poll poll(s, caller);
    sh_status st = sh::guard(
        [&]
        {
            TableScan<Sink> scan(s, sink, poll);
            const int ntables = static_cast<int>(s.tables->size());
            for (;;)
            {
                if (s.stop.load())
                    break;
                int t = s.next_table.fetch_add(1);
                if (t >= ntables || !scan.scan(t))
                    break;
            }
            return SH_OK;
        });
    if (st != SH_OK)
        s.fail(st);
}

// Runs the scan on the caller's thread and up to threads - 1 more.  Workers
// start with all signals blocked, so a host process's handlers (PostgreSQL's)
// only ever run on its own thread.
template <class Sink>
sh_status run(Shared &s, int threads, std::vector<Sink> &sinks)
{
    threads = std::max(1, std::min({threads, kMaxThreads, static_cast<int>(s.tables->size())}));
    sinks.reserve(threads);
    for (int i = 0; i < threads; i++)
        sinks.emplace_back(s);
    std::vector<std::thread> pool;
    if (threads > 1)
    {
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_BLOCK, &all, &old);
        try
        {
            for (int i = 1; i < threads; i++)
            {
                Sink *sink = &sinks[i];
                s.running++;
                pool.emplace_back(
                    [&s, sink]
                    {
                        work(s, *sink, false);
                        s.running--;
                    });
            }
        }
        catch (...)
        {
            s.running--;  // that thread never started; the others share its tables
        }
        pthread_sigmask(SIG_SETMASK, &old, nullptr);
    }
    work(s, sinks[0], true);
    // Keep answering the interrupt callback until the workers are done.
    Poll poll(s, true);
    while (s.running.load() > 0)
    {
        poll.stopped();
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    for (std::thread &th : pool)
        th.join();
    return static_cast<sh_status>(s.error.load());
}

// The state every worker thread of one batch reads: the input, the radius,
// the permuted tables and the interrupt callback.
void init_shared(Shared &s, const uint64_t *hashes, size_t n, int radius, const std::vector<sh_table> &tables,
                 sh_interrupt_fn interrupt, void *arg)
{
    s.h = hashes;
    s.n = n;
    s.radius = radius;
    s.pos_bits = std::max(1, bit_width(n - 1));
    s.tables = &tables;
    s.interrupt = interrupt;
    s.interrupt_arg = arg;
}

// Cluster labels: each fingerprint's label is the smallest index of its
// connected component (pairs within radius), per-thread union-finds merged.
sh_status labels_impl(const uint64_t *hashes, size_t n, int blocks, int radius, int threads,
                      sh_interrupt_fn interrupt, void *arg, uint32_t *labels)
{
    std::vector<sh_table> tables;
    sh_status st = make_plan(n, blocks, radius, tables);
    if (st != SH_OK)
        return st;
    for (size_t i = 0; i < n; i++)
        labels[i] = static_cast<uint32_t>(i);
    if (n < 2)
        return SH_OK;
    Shared s;
    init_shared(s, hashes, n, radius, tables, interrupt, arg);
    std::vector<UnionFind> sinks;
    st = run(s, threads, sinks);
    if (st != SH_OK)
        return st;
    UnionFind &all = sinks[0];
    for (size_t k = 1; k < sinks.size(); k++)
    {
        for (size_t i = 0; i < n; i++)
            if (sinks[k].parent[i] != i)
                all.add(static_cast<uint32_t>(i), sinks[k].parent[i]);
        std::vector<uint32_t>().swap(sinks[k].parent);
    }
    for (size_t i = 0; i < n; i++)
        labels[i] = all.find(static_cast<uint32_t>(i));
    return SH_OK;
}

// Components of two or more positions from their labels, as the arrays of
// sh_find_clusters: members grouped by label (labels ascending), positions
// ascending within each.
sh_status group_by_label(const std::vector<uint32_t> &label, uint32_t **members, size_t **bounds,
                         size_t *nclusters)
{
    const size_t n = label.size();
    std::vector<uint32_t> slot(n, 0);  // first the size of each root's component
    for (size_t i = 0; i < n; i++)
        slot[label[i]]++;
    size_t nc = 0, nm = 0;
    for (size_t r = 0; r < n; r++)
        if (slot[r] > 1)
        {
            nc++;
            nm += slot[r];
        }
    auto *m = static_cast<uint32_t *>(std::malloc(std::max<size_t>(nm, 1) * sizeof(uint32_t)));
    auto *b = static_cast<size_t *>(std::malloc((nc + 1) * sizeof(size_t)));
    if (!m || !b)
    {
        std::free(m);
        std::free(b);
        return SH_ERR_NOMEM;
    }
    // Then each cluster's next free slot in m (UINT32_MAX: a singleton).
    size_t c = 0, at = 0;
    for (size_t r = 0; r < n; r++)
    {
        if (slot[r] > 1)
        {
            b[c++] = at;
            size_t first = at;
            at += slot[r];
            slot[r] = static_cast<uint32_t>(first);
        }
        else
            slot[r] = UINT32_MAX;
    }
    b[nc] = nm;
    for (size_t i = 0; i < n; i++)
        if (slot[label[i]] != UINT32_MAX)
            m[slot[label[i]]++] = static_cast<uint32_t>(i);
    *members = m;
    *bounds = b;
    *nclusters = nc;
    return SH_OK;
}

}  // namespace

extern "C"
{
    int sh_batch_auto_blocks(size_t n, int radius) noexcept
    {
        if (!sh_radius_valid(radius))
            return -1;
        return auto_blocks(n, radius);
    }

    sh_status sh_find_all_each(const uint64_t *hashes, size_t n, int blocks, int radius, int threads,
                               sh_interrupt_fn interrupt, void *interrupt_arg, size_t chunk, sh_pairs_fn emit,
                               void *emit_arg) noexcept
    {
        return sh::guard(
            [&]
            {
                std::vector<sh_table> tables;
                sh_status st = make_plan(n, blocks, radius, tables);
                if (st != SH_OK || n < 2)
                    return st;
                if (chunk == 0 || emit == nullptr)
                    return SH_ERR_ARGUMENT;
                Shared s;
                init_shared(s, hashes, n, radius, tables, interrupt, interrupt_arg);
                s.chunk = chunk;
                s.emit = emit;
                s.emit_arg = emit_arg;
                std::vector<PairSink> sinks;
                st = run(s, threads, sinks);
                for (PairSink &k : sinks)
                    if (st == SH_OK)
                    {
                        k.flush();
                        st = static_cast<sh_status>(s.error.load());
                    }
                return st;
            });
    }

    sh_status sh_find_all(const uint64_t *hashes, size_t n, int blocks, int radius, int threads,
                          sh_interrupt_fn interrupt, void *interrupt_arg, sh_pair **pairs,
                          size_t *npairs) noexcept
    {
        *pairs = nullptr;
        *npairs = 0;
        return sh::guard(
            [&]
            {
                struct Collect
                {
                    std::vector<sh_pair> all;
                    bool failed = false;
                } c;
                auto collect = [](const sh_pair *p, size_t np, void *arg) -> int
                {
                    auto *to = static_cast<Collect *>(arg);
                    try
                    {
                        to->all.insert(to->all.end(), p, p + np);
                        return 0;
                    }
                    catch (...)
                    {
                        to->failed = true;
                        return 1;
                    }
                };
                sh_status st = sh_find_all_each(hashes, n, blocks, radius, threads, interrupt, interrupt_arg,
                                                1 << 16, collect, &c);
                if (c.failed)
                    st = SH_ERR_NOMEM;
                std::vector<sh_pair> &all = c.all;
                if (st != SH_OK || all.empty())
                    return st;
                auto *out = static_cast<sh_pair *>(std::malloc(all.size() * sizeof(sh_pair)));
                if (!out)
                    return SH_ERR_NOMEM;
                std::memcpy(out, all.data(), all.size() * sizeof(sh_pair));
                std::sort(out, out + all.size(), pair_less);
                *pairs = out;
                *npairs = all.size();
                return SH_OK;
            });
    }

    size_t sh_batch_memory(size_t n, int blocks, int radius, int threads, int clusters) noexcept
    {
        // Per thread: the records and their sort copy (16 bytes per hash),
        // and scratch vectors of at most n entries each (make_room): group,
        // sub and keyed (4 + 4 + 16) and vals (8); clusters add the copies
        // and distinct lists (16 + 4) and the union-find parent (4).  Once:
        // labels, their grouping and the result (4 + 4 + 4, and 8 per
        // cluster of two or more).  Besides: the radix histograms, the table
        // layouts, and slack for the allocator and the stacks.
        try
        {
            std::vector<sh_table> tables;
            if (make_plan(n, blocks, radius, tables) != SH_OK)
                return SIZE_MAX;
            const size_t per_thread = clusters ? 16 + 32 + 24 : 16 + 32;
            const size_t once = clusters ? 16 : 0;
            const size_t fixed =
                (64 << 10) + 8 * sizeof(uint32_t) * (1 << kMaxDigitBits) + tables.size() * sizeof(sh_table);
            threads = std::max(1, std::min({threads, kMaxThreads, static_cast<int>(tables.size())}));
            return fixed + n * (per_thread * static_cast<size_t>(threads) + once);
        }
        catch (...)
        {
            return SIZE_MAX;
        }
    }

    sh_status sh_cluster_labels(const uint64_t *hashes, size_t n, int blocks, int radius, int threads,
                                sh_interrupt_fn interrupt, void *interrupt_arg, uint32_t *labels) noexcept
    {
        return sh::guard(
            [&]
            { return labels_impl(hashes, n, blocks, radius, threads, interrupt, interrupt_arg, labels); });
    }

    sh_status sh_find_clusters(const uint64_t *hashes, size_t n, int blocks, int radius, int threads,
                               sh_interrupt_fn interrupt, void *interrupt_arg, uint32_t **members,
                               size_t **bounds, size_t *nclusters) noexcept
    {
        *members = nullptr;
        *bounds = nullptr;
        *nclusters = 0;
        return sh::guard(
            [&]
            {
                std::vector<uint32_t> label(n);
                sh_status st =
                    labels_impl(hashes, n, blocks, radius, threads, interrupt, interrupt_arg, label.data());
                if (st != SH_OK)
                    return st;
                return group_by_label(label, members, bounds, nclusters);
            });
    }

}  // extern "C"
