// neardup.cpp — exact set-similarity self-join by prefix filtering over
// rarest-first ranks (see neardup.h).
#include "neardup.h"

#include "boundary.hpp"
#include "neardup_join.hpp"

#include <xxhash.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <unordered_map>
#include <vector>

namespace
{

constexpr size_t kChunk = size_t{1} << 20;  // hashes per storage chunk (8 MB) at most
constexpr size_t kFirstChunk = 512;         // and at first (4 kB)
constexpr uint32_t kPollSets = 256;         // sets joined between interrupt polls
constexpr size_t kMapEntryBytes = 64;       // an unordered_map node and bucket, roughly

using Entry = sh::nd::Posting;  // one indexed prefix token of a set
using sh::nd::kSlack;
using sh::nd::prefix_length;

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

bool stop_asked(sh_interrupt_fn interrupt, void *arg)
{
    return interrupt != nullptr && interrupt(arg) != 0;
}

}  // namespace

struct sh_nd
{
    // ---- while adding: the distinct sets' hashes, in chunks ----
    std::vector<std::unique_ptr<uint64_t[]>> chunks;
    size_t chunk_used = 0, chunk_cap = 0;
    std::vector<const uint64_t *> set_hashes;  // by set id
    std::vector<uint32_t> set_size;            // by set id
    std::vector<uint32_t> set_next;            // next set id with the same digest, or UINT32_MAX
    std::unordered_map<uint64_t, uint32_t> by_digest;
    std::vector<uint32_t> row_set;  // by row
    uint64_t hashes = 0;
    size_t chunk_bytes = 0;

    // ---- after prepare ----
    bool prepared = false;
    double threshold = 1, t = 1;
    std::vector<uint32_t> ranks;     // the sets' ranks, in join order, each set ascending
    std::vector<uint64_t> offset;    // by join position: start in ranks (one more at the end)
    std::vector<uint32_t> order;     // join position -> set id
    std::vector<uint32_t> rows_at;   // set id -> start in rows (one more at the end)
    std::vector<uint32_t> rows;      // row ids grouped by set
    uint32_t unique = 0;             // ranks below it are in one set only
    std::vector<uint64_t> lo, fill;  // by rank - unique: live part of the token's list
    std::vector<Entry> entries;
    sh::nd::Probe probing;  // by join position: prefix overlap so far
    std::vector<sh_nd_pair> pending;
    size_t pending_at = 0;
    uint32_t self_at = 0;  // next set whose shared rows are reported
    uint32_t next_x = 0;   // next join position to probe
    sh_nd_stats stats{};

    size_t adding_bytes() const
    {
        return chunk_bytes + set_hashes.capacity() * sizeof(const uint64_t *) +
               (set_size.capacity() + set_next.capacity() + row_set.capacity()) * sizeof(uint32_t) +
               by_digest.size() * kMapEntryBytes;
    }

    uint64_t *reserve(size_t n)
    {
        if (chunk_cap - chunk_used < n)
        {
            // chunks grow from small to kChunk, so a small table holds little
            size_t cap = std::max(std::min(kChunk, std::max(kFirstChunk, 2 * chunk_cap)), n);
            chunks.emplace_back(new uint64_t[cap]);
            chunk_bytes += cap * sizeof(uint64_t);
            chunk_used = 0;
            chunk_cap = cap;
        }
        return chunks.back().get() + chunk_used;
    }

    void add(const uint64_t *h, size_t n);
    sh_status prepare(size_t budget, sh_interrupt_fn interrupt, void *arg);
    void build_index(size_t indexed);
    void join_one(uint32_t x);
};

void sh_nd::add(const uint64_t *h, size_t n)
{
    const uint64_t digest = XXH3_64bits(h, n * sizeof(uint64_t));
    auto found = by_digest.find(digest);
    if (found != by_digest.end())
        for (uint32_t s = found->second; s != UINT32_MAX; s = set_next[s])
            if (set_size[s] == n && std::equal(h, h + n, set_hashes[s]))
            {
                row_set.push_back(s);
                return;
            }
    uint64_t *dst = n == 0 ? nullptr : reserve(n);
    std::copy(h, h + n, dst);
    chunk_used += n;
    const auto s = static_cast<uint32_t>(set_size.size());
    set_hashes.push_back(dst);
    set_size.push_back(static_cast<uint32_t>(n));
    set_next.push_back(found != by_digest.end() ? found->second : UINT32_MAX);
    by_digest[digest] = s;
    row_set.push_back(s);
    hashes += n;
}

// Ranks every hash (document frequency ascending, then hash), lays the sets
// out in join order as rank arrays and builds the inverted index; the hashes
// are released only once everything else is built.
sh_status sh_nd::prepare(size_t budget, sh_interrupt_fn interrupt, void *arg)
{
    const auto nsets = static_cast<uint32_t>(set_size.size());
    const size_t held = adding_bytes();
    auto too_much = [&](size_t more)
    {
        stats.needed = held + more;
        return held + more > budget;
    };

    // 1. distinct hashes and their frequencies, by one sort of all of them
    if (too_much(hashes * 8))
        return SH_ERR_NOMEM;
    std::vector<uint64_t> all;
    all.reserve(hashes);
    for (uint32_t s = 0; s < nsets; s++)
        all.insert(all.end(), set_hashes[s], set_hashes[s] + set_size[s]);
    if (stop_asked(interrupt, arg))
        return SH_ERR_INTERRUPTED;
    std::sort(all.begin(), all.end());
    if (stop_asked(interrupt, arg))
        return SH_ERR_INTERRUPTED;
    size_t u = 0;
    std::vector<uint32_t> df;
    {
        // frequencies go into a second array of the compacted size
        size_t distinct = 0;
        for (size_t i = 0; i < all.size(); i++)
            distinct += (i == 0 || all[i] != all[i - 1]);
        const int kbits = std::min(28, std::max(1, bit_width(distinct)));
        if (too_much(hashes * 8 + distinct * 8 + ((size_t{1} << kbits) + 1) * 4 + hashes * 4 +
                     (size_t{nsets} * 2 + 1) * 8 + row_set.size() * 4 + (size_t{nsets} + 1) * 4))
            return SH_ERR_NOMEM;
        df.reserve(distinct);
        for (size_t i = 0; i < all.size(); i++)
        {
            if (i == 0 || all[i] != all[i - 1])
            {
                all[u++] = all[i];
                df.push_back(1);
            }
            else
                df.back()++;
        }
        all.resize(u);

        // 2. rank = position in (frequency, hash) order: a counting sort, stable in hash
        uint32_t maxdf = 0;
        for (uint32_t f : df)
            maxdf = std::max(maxdf, f);
        std::vector<uint64_t> start(size_t{std::max(maxdf, 1u)} + 2, 0);
        for (uint32_t f : df)
            start[f + 1]++;
        for (size_t f = 1; f < start.size(); f++)
            start[f] += start[f - 1];
        unique = static_cast<uint32_t>(start[2]);  // frequency 1
        for (size_t i = 0; i < u; i++)
            df[i] = static_cast<uint32_t>(start[df[i]]++);  // df now holds the rank
        if (stop_asked(interrupt, arg))
            return SH_ERR_INTERRUPTED;

        // 3. a directory on the top bits finds a hash's index in about one probe
        std::vector<uint32_t> dir((size_t{1} << kbits) + 1);
        {
            size_t i = 0;
            for (size_t b = 0; b <= (size_t{1} << kbits); b++)
            {
                while (i < u && (all[i] >> (64 - kbits)) < b)
                    i++;
                dir[b] = static_cast<uint32_t>(i);
            }
        }

        // 4. join order: ascending size, then set id
        std::vector<uint32_t> ord(nsets);
        for (uint32_t s = 0; s < nsets; s++)
            ord[s] = s;
        // (std::sort with the id as tie-break: stable_sort's temporary buffer
        // comes from nothrow new, which the tests' counting delete does not pair)
        std::sort(ord.begin(), ord.end(),
                  [&](uint32_t a, uint32_t b)
                  { return set_size[a] != set_size[b] ? set_size[a] < set_size[b] : a < b; });
        std::vector<uint64_t> off(size_t{nsets} + 1, 0);
        for (uint32_t x = 0; x < nsets; x++)
            off[x + 1] = off[x] + set_size[ord[x]];
        std::vector<uint32_t> rk(hashes);
        for (uint32_t x = 0; x < nsets; x++)
        {
            const uint64_t *h = set_hashes[ord[x]];
            uint32_t *out = rk.data() + off[x];
            const uint32_t n = set_size[ord[x]];
            for (uint32_t i = 0; i < n; i++)
            {
                const size_t b = h[i] >> (64 - kbits);
                const uint64_t *p = std::lower_bound(all.data() + dir[b], all.data() + dir[b + 1], h[i]);
                out[i] = df[static_cast<size_t>(p - all.data())];
            }
            std::sort(out, out + n);
            if ((x & (kPollSets - 1)) == 0 && stop_asked(interrupt, arg))
                return SH_ERR_INTERRUPTED;
        }

        // 5. the rows of each set
        std::vector<uint32_t> at(size_t{nsets} + 1, 0);
        for (uint32_t s : row_set)
            at[s + 1]++;
        for (uint32_t s = 0; s < nsets; s++)
            at[s + 1] += at[s];
        std::vector<uint32_t> rw(row_set.size());
        {
            std::vector<uint32_t> fillr(at.begin(), at.end() - 1);
            for (uint32_t r = 0; r < row_set.size(); r++)
                rw[fillr[row_set[r]]++] = r;
        }

        // 6. the inverted index's size (one list per shared rank), checked
        // before anything is committed, so a refusal leaves the sets intact
        const double index_factor = 2 * t / (1 + t);
        const size_t shared = u - unique;
        size_t indexed = 0;
        for (uint32_t x = 0; x < nsets; x++)
        {
            const uint32_t *r = rk.data() + off[x];
            const uint32_t q = prefix_length(static_cast<uint32_t>(off[x + 1] - off[x]), index_factor);
            for (uint32_t i = 0; i < q; i++)
                indexed += (r[i] >= unique);
        }
        const size_t base =
            rk.capacity() * 4 + off.capacity() * 8 + (ord.capacity() + at.capacity() + rw.capacity()) * 4;
        const size_t more = (shared + 1) * 16 + indexed * sizeof(Entry) + size_t{nsets} * 8;
        if (base + more > budget)
        {
            stats.needed = base + more;
            return SH_ERR_NOMEM;
        }
        stats.indexed = indexed;
        stats.bytes = base + more;

        // commit: nothing below can be interrupted
        stats.distinct = u;
        stats.shared = u - unique;
        ranks.swap(rk);
        offset.swap(off);
        order.swap(ord);
        rows_at.swap(at);
        rows.swap(rw);
    }
    std::vector<uint64_t>().swap(all);
    std::vector<uint32_t>().swap(df);
    chunks.clear();
    chunk_bytes = chunk_used = chunk_cap = 0;
    std::vector<const uint64_t *>().swap(set_hashes);
    std::vector<uint32_t>().swap(set_next);
    std::vector<uint32_t>().swap(row_set);
    by_digest = std::unordered_map<uint64_t, uint32_t>();
    build_index(stats.indexed);
    return SH_OK;
}

// The inverted index: one list per shared rank, sized by a first pass.
void sh_nd::build_index(size_t indexed)
{
    const auto nsets = static_cast<uint32_t>(order.size());
    const size_t shared = stats.shared;
    const double index_factor = 2 * t / (1 + t);
    std::vector<uint64_t> start(shared + 1, 0);
    for (uint32_t x = 0; x < nsets; x++)
    {
        const uint32_t *r = ranks.data() + offset[x];
        const uint32_t q = prefix_length(static_cast<uint32_t>(offset[x + 1] - offset[x]), index_factor);
        for (uint32_t i = 0; i < q; i++)
            if (r[i] >= unique)
                start[r[i] - unique + 1]++;
    }
    for (size_t k = 0; k < shared; k++)
        start[k + 1] += start[k];
    entries.resize(indexed);
    fill.assign(start.begin(), start.end() - 1);
    lo.swap(start);
    lo.pop_back();
    probing.count.assign(nsets, 0);
}

// Probes the index with set x's prefix, verifies the candidates, then indexes
// x (the sets before x in join order are no larger than x).
void sh_nd::join_one(uint32_t x)
{
    const uint32_t *rx = ranks.data() + offset[x];
    const auto nx = static_cast<uint32_t>(offset[x + 1] - offset[x]);
    const auto size_of = [this](uint32_t y) { return static_cast<uint32_t>(offset[y + 1] - offset[y]); };
    sh::nd::probe(
        probing, nx, sh::nd::probe_length(nx, t), t, UINT32_MAX, entries.data(),
        [&](uint32_t i, uint64_t *&l, uint64_t &end, uint32_t &pos)
        {
            if (rx[i] < unique)
                return false;  // in this set only
            l = &lo[rx[i] - unique];
            end = fill[rx[i] - unique];
            pos = i;
            return true;
        },
        size_of);
    stats.candidates += sh::nd::verify(
        probing, threshold,
        [&](uint32_t y)
        {
            const uint32_t ny = size_of(y);
            return sh::nd::jaccard_of(sh::nd::sorted_overlap(rx, nx, ranks.data() + offset[y], ny), nx, ny);
        },
        [&](uint32_t y, double j)
        {
            pending.push_back(sh_nd_pair{order[y], order[x], j});
            stats.pairs++;
        });
    const uint32_t index = sh::nd::index_length(nx, t);
    for (uint32_t i = 0; i < index; i++)
        if (rx[i] >= unique)
            entries[fill[rx[i] - unique]++] = Entry{x, i};
}

extern "C"
{
    sh_status sh_nd_create(sh_nd **nd) noexcept
    {
        *nd = nullptr;
        return sh::guard(
            [&]
            {
                // malloc and placement new, released by sh_nd_free, as every
                // buffer the core hands out is (sh_free)
                void *mem = std::malloc(sizeof(sh_nd));
                if (mem == nullptr)
                    return SH_ERR_NOMEM;
                *nd = new (mem) sh_nd();
                return SH_OK;
            });
    }

    void sh_nd_free(sh_nd *nd) noexcept
    {
        if (nd == nullptr)
            return;
        nd->~sh_nd();
        std::free(nd);
    }

    sh_status sh_nd_add(sh_nd *nd, const uint64_t *hashes, size_t n) noexcept
    {
        if (nd->prepared || n > UINT32_MAX)
            return SH_ERR_ARGUMENT;
        if (nd->row_set.size() >= UINT32_MAX - 1)
            return SH_ERR_RANGE;
        for (size_t i = 1; i < n; i++)
            if (hashes[i - 1] >= hashes[i])
                return SH_ERR_ARGUMENT;
        return sh::guard(
            [&]
            {
                nd->add(hashes, n);
                return SH_OK;
            });
    }

    void sh_nd_get_stats(const sh_nd *nd, sh_nd_stats *stats) noexcept
    {
        *stats = nd->stats;
        if (!nd->prepared)
        {
            stats->rows = nd->row_set.size();
            stats->sets = nd->set_size.size();
            stats->hashes = nd->hashes;
            stats->bytes = nd->adding_bytes();
        }
    }

    sh_status sh_nd_prepare(sh_nd *nd, double threshold, size_t budget, sh_interrupt_fn interrupt,
                            void *interrupt_arg) noexcept
    {
        if (nd->prepared || !(threshold > 0 && threshold <= 1))
            return SH_ERR_ARGUMENT;
        return sh::guard(
            [&]
            {
                const uint64_t rows = nd->row_set.size(), sets = nd->set_size.size();
                nd->threshold = threshold;
                nd->t = threshold - kSlack;
                const sh_status st = nd->prepare(budget, interrupt, interrupt_arg);
                if (st != SH_OK)
                    return st;
                nd->stats.rows = rows;
                nd->stats.sets = sets;
                nd->stats.hashes = nd->hashes;
                nd->prepared = true;
                return SH_OK;
            });
    }

    sh_status sh_nd_next(sh_nd *nd, sh_nd_pair *out, size_t cap, uint32_t max_sets, size_t *n, int *done,
                         sh_interrupt_fn interrupt, void *interrupt_arg) noexcept
    {
        *n = 0;
        *done = 0;
        if (!nd->prepared || cap == 0 || max_sets == 0)
            return SH_ERR_ARGUMENT;
        return sh::guard(
            [&]
            {
                const auto nsets = static_cast<uint32_t>(nd->order.size());
                uint32_t since_poll = 0, joined = 0;
                while (*n < cap)
                {
                    if (nd->pending_at < nd->pending.size())
                    {
                        out[(*n)++] = nd->pending[nd->pending_at++];
                        continue;
                    }
                    nd->pending.clear();
                    nd->pending_at = 0;
                    if (nd->self_at < nsets)
                    {
                        const uint32_t s = nd->self_at++;
                        if (nd->rows_at[s + 1] - nd->rows_at[s] > 1)
                            nd->pending.push_back(sh_nd_pair{s, s, 1.0});
                        continue;
                    }
                    if (nd->next_x >= nsets)
                    {
                        *done = 1;
                        break;
                    }
                    if (joined++ == max_sets)
                        break;
                    if (++since_poll >= kPollSets)
                    {
                        since_poll = 0;
                        // pairs already in out must reach the caller: stop without them only
                        if (interrupt != nullptr && interrupt(interrupt_arg))
                        {
                            if (*n == 0)
                                return SH_ERR_INTERRUPTED;
                            break;
                        }
                    }
                    nd->join_one(nd->next_x++);
                    nd->stats.joined = nd->next_x;
                }
                return SH_OK;
            });
    }

    const uint64_t *sh_nd_set_hashes(const sh_nd *nd, uint32_t s, size_t *n) noexcept
    {
        if (nd->prepared || s >= nd->set_size.size())
        {
            *n = 0;
            return nullptr;
        }
        *n = nd->set_size[s];
        return nd->set_hashes[s];
    }

    uint32_t sh_nd_set_of_row(const sh_nd *nd, uint32_t r) noexcept
    {
        if (nd->prepared || r >= nd->row_set.size())
            return UINT32_MAX;
        return nd->row_set[r];
    }

    uint64_t sh_nd_memory_needed(uint64_t hashes, uint64_t sets, uint64_t rows) noexcept
    {
        // the sets while adding (8 per hash, about 100 per set, 4 per row),
        // plus prepare's peak: the sorted copy (8), the ranks (4) and the
        // frequencies and their directory (at most 16 per distinct hash,
        // counted per hash), then the index (at most 8 + 16 per hash)
        return hashes * (8 + 8 + 4 + 16 + 8) + sets * 100 + rows * 12 + (uint64_t{1} << 16);
    }

    const uint32_t *sh_nd_rows_of(const sh_nd *nd, uint32_t s, size_t *n) noexcept
    {
        if (!nd->prepared || s >= nd->order.size())
        {
            *n = 0;
            return nullptr;
        }
        *n = nd->rows_at[s + 1] - nd->rows_at[s];
        return nd->rows.data() + nd->rows_at[s];
    }

}  // extern "C"
