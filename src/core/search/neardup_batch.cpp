// neardup_batch.cpp — the partitioned verified join: a sketch that fixes the
// global token order, prefixes by it, and the in-memory join of one batch of
// prefix entries (see neardup_batch.h).
#include "neardup_batch.h"

#include "boundary.hpp"

#include <xxhash.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

namespace
{

constexpr double kSlack = 1e-9;  // the filters' bound lies this far below t (as neardup.cpp)
constexpr uint32_t kPollSets = 256;
constexpr size_t kMinBytes = size_t{64} << 10;

uint32_t prefix_length(uint32_t n, double f)
{
    double keep = std::ceil(f * static_cast<double>(n));
    double p = static_cast<double>(n) - keep + 1;
    if (p < 0)
        return 0;
    return p > n ? n : static_cast<uint32_t>(p);
}

struct Key  // a token's place in the global order
{
    uint32_t est;
    uint64_t hash;
    bool operator<(const Key &o) const
    {
        return est != o.est ? est < o.est : hash < o.hash;
    }
};

}  // namespace

// 16-bit counters in cache-line blocks of 32: a token's two counters lie in
// one block (one cache miss per token), conservative update; an estimate is
// the smaller of the two, never below the true count.
struct sh_ndo
{
    std::vector<uint16_t> counters;
    uint64_t blocks = 0;  // a power of two
    std::vector<Key> scratch;

    size_t slot0(uint64_t h) const
    {
        return ((h >> 40) & (blocks - 1)) * 32 + (h & 31);
    }
    size_t slot1(uint64_t h) const
    {
        return ((h >> 40) & (blocks - 1)) * 32 + ((h >> 5) & 31);
    }
    uint32_t estimate(uint64_t h) const
    {
        return std::min(counters[slot0(h)], counters[slot1(h)]);
    }
    void count(uint64_t h)
    {
        uint16_t &a = counters[slot0(h)];
        uint16_t &b = counters[slot1(h)];
        const uint16_t m = std::min(a, b);
        if (m == UINT16_MAX)
            return;
        if (a == m)
            a++;
        if (b == m && &b != &a)
            b++;
    }
};

struct sh_ndb
{
    struct Listed  // an indexed prefix token of an earlier set
    {
        uint32_t local;
        uint32_t pos;
        uint32_t size;
    };
    double threshold = 1, t = 1;
    bool prepared = false;
    std::vector<sh_ndb_entry> ents;  // by (size, set, pos) once prepared
    std::vector<uint32_t> tid;       // by entry: its token's list
    std::vector<uint32_t> lo, fill;  // by list: live part
    std::vector<Listed> lists;
    std::vector<uint32_t> first;  // by local set: its first entry (one more at the end)
    std::vector<int8_t> seen;     // by local set: 0 untouched, 1 candidate, -1 pruned
    std::vector<uint32_t> cand;
    std::vector<uint32_t> pending;  // pairs of global ids
    size_t pending_at = 0;
    uint32_t next_y = 0;

    void prepare();
    void join_one(uint32_t y);
};

void sh_ndb::prepare()
{
    std::sort(ents.begin(), ents.end(),
              [](const sh_ndb_entry &a, const sh_ndb_entry &b)
              {
                  if (a.size != b.size)
                      return a.size < b.size;
                  if (a.set != b.set)
                      return a.set < b.set;
                  return a.pos < b.pos;
              });
    std::vector<uint64_t> toks(ents.size());
    for (size_t i = 0; i < ents.size(); i++)
        toks[i] = ents[i].token;
    std::sort(toks.begin(), toks.end());
    toks.erase(std::unique(toks.begin(), toks.end()), toks.end());
    toks.shrink_to_fit();
    tid.resize(ents.size());
    std::vector<uint32_t> start(toks.size() + 1, 0);
    const double index_factor = 2 * t / (1 + t);
    for (size_t i = 0; i < ents.size(); i++)
    {
        tid[i] =
            static_cast<uint32_t>(std::lower_bound(toks.begin(), toks.end(), ents[i].token) - toks.begin());
        if (i == 0 || ents[i].set != ents[i - 1].set)
            first.push_back(static_cast<uint32_t>(i));
        if (ents[i].pos < prefix_length(ents[i].size, index_factor))
            start[tid[i] + 1]++;
    }
    first.push_back(static_cast<uint32_t>(ents.size()));
    std::vector<uint64_t>().swap(toks);
    for (size_t k = 1; k < start.size(); k++)
        start[k] += start[k - 1];
    lists.resize(start.back());
    fill.assign(start.begin(), start.end() - 1);
    start.pop_back();
    lo.swap(start);
    seen.assign(first.size() - 1, 0);
    prepared = true;
}

// Set y (local id) probes the lists of its prefix tokens, then is indexed.
void sh_ndb::join_one(uint32_t y)
{
    const uint32_t b = first[y], e = first[y + 1];
    const uint32_t ny = ents[b].size;
    const double minsize = t * ny;
    const double overlap_factor = t / (1 + t);
    for (uint32_t i = b; i < e; i++)
    {
        const uint32_t k = tid[i];
        while (lo[k] < fill[k] && static_cast<double>(lists[lo[k]].size) < minsize)
            lo[k]++;
        for (uint32_t l = lo[k]; l < fill[k]; l++)
        {
            const Listed &x = lists[l];
            if (seen[x.local] != 0)
                continue;
            cand.push_back(x.local);
            // the first common token met here: exact in the batch that owns the pair
            const double alpha = std::ceil(overlap_factor * (static_cast<double>(x.size) + ny));
            const uint32_t rest = std::min(ny - ents[i].pos - 1, x.size - x.pos - 1);
            seen[x.local] = (1.0 + rest >= alpha) ? 1 : -1;
        }
    }
    for (uint32_t x : cand)
    {
        if (seen[x] > 0)
        {
            pending.push_back(ents[first[x]].set);
            pending.push_back(ents[b].set);
        }
        seen[x] = 0;
    }
    cand.clear();
    const uint32_t index = prefix_length(ny, 2 * t / (1 + t));
    for (uint32_t i = b; i < e; i++)
        if (ents[i].pos < index)
            lists[fill[tid[i]]++] = Listed{y, ents[i].pos, ny};
}

extern "C"
{
    sh_status sh_ndo_create(size_t bytes, sh_ndo **o) noexcept
    {
        *o = nullptr;
        return sh::guard(
            [&]
            {
                void *mem = std::malloc(sizeof(sh_ndo));
                if (mem == nullptr)
                    return SH_ERR_NOMEM;
                auto *ndo = new (mem) sh_ndo();
                size_t blocks = 1;
                while (blocks * 2 * 32 * sizeof(uint16_t) <= std::max(bytes, kMinBytes))
                    blocks *= 2;
                try
                {
                    ndo->counters.assign(blocks * 32, 0);
                }
                catch (...)
                {
                    sh_ndo_free(ndo);
                    throw;
                }
                ndo->blocks = blocks;
                *o = ndo;
                return SH_OK;
            });
    }

    void sh_ndo_free(sh_ndo *o) noexcept
    {
        if (o == nullptr)
            return;
        o->~sh_ndo();
        std::free(o);
    }

    size_t sh_ndo_bytes(const sh_ndo *o) noexcept
    {
        return o->counters.capacity() * sizeof(uint16_t) + o->scratch.capacity() * sizeof(Key);
    }

    void sh_ndo_count(sh_ndo *o, const uint64_t *hashes, size_t n) noexcept
    {
        for (size_t i = 0; i < n; i++)
            o->count(hashes[i]);
    }

    sh_status sh_ndo_prefix(sh_ndo *o, const uint64_t *hashes, uint32_t n, double threshold, uint32_t set,
                            sh_ndb_entry *out, size_t *m) noexcept
    {
        *m = 0;
        if (!(threshold > 0 && threshold <= 1))
            return SH_ERR_ARGUMENT;
        return sh::guard(
            [&]
            {
                const uint32_t p = prefix_length(n, threshold - kSlack);
                if (p == 0)
                    return SH_OK;
                o->scratch.resize(n);
                for (uint32_t i = 0; i < n; i++)
                    o->scratch[i] = Key{o->estimate(hashes[i]), hashes[i]};
                // the p smallest, then their order: linear plus p log p
                if (p < n)
                    std::nth_element(o->scratch.begin(), o->scratch.begin() + p, o->scratch.end());
                std::sort(o->scratch.begin(), o->scratch.begin() + p);
                for (uint32_t i = 0; i < p; i++)
                    if (o->scratch[i].est >= 2)  // else no other set has it
                        out[(*m)++] = sh_ndb_entry{o->scratch[i].hash, set, n, i, o->scratch[i].est};
                return SH_OK;
            });
    }

    void sh_ndo_digest(const uint64_t *hashes, size_t n, uint64_t out[2]) noexcept
    {
        const XXH128_hash_t d = XXH3_128bits(hashes, n * sizeof(uint64_t));
        out[0] = d.low64;
        out[1] = d.high64;
    }

    uint32_t sh_ndo_batch(uint64_t token, uint32_t nbatches) noexcept
    {
        const uint64_t mixed = (token * 0xD6E8FEB86659FD93ULL) >> 32;
        return static_cast<uint32_t>((mixed * nbatches) >> 32);
    }

    uint32_t sh_ndo_owner(const sh_ndb_entry *a, size_t na, const sh_ndb_entry *b, size_t nb,
                          uint32_t nbatches) noexcept
    {
        size_t x = 0, y = 0;
        while (x < na && y < nb)
        {
            const Key ka{a[x].est, a[x].token}, kb{b[y].est, b[y].token};
            if (ka < kb)
                x++;
            else if (kb < ka)
                y++;
            else
                return sh_ndo_batch(a[x].token, nbatches);
        }
        return UINT32_MAX;
    }

    uint32_t sh_ndo_owner_head(const sh_ndb_entry *a, size_t na, int a_whole, const sh_ndb_entry *b,
                               size_t nb, int b_whole, uint32_t nbatches) noexcept
    {
        size_t x = 0, y = 0;
        while (x < na && y < nb)
        {
            const Key ka{a[x].est, a[x].token}, kb{b[y].est, b[y].token};
            if (ka < kb)
                x++;
            else if (kb < ka)
                y++;
            else
                return sh_ndo_batch(a[x].token, nbatches);
        }
        // no common token before one list ended: decided only if that list is whole
        if ((x == na && a_whole) || (y == nb && b_whole))
            return UINT32_MAX;
        return SH_NDO_UNKNOWN;
    }

    double sh_ndo_jaccard(const uint64_t *a, size_t na, const uint64_t *b, size_t nb) noexcept
    {
        size_t x = 0, y = 0, common = 0;
        while (x < na && y < nb)
        {
            if (a[x] < b[y])
                x++;
            else if (a[x] > b[y])
                y++;
            else
            {
                common++;
                x++;
                y++;
            }
        }
        return na + nb == 0 ? 1.0 : static_cast<double>(common) / static_cast<double>(na + nb - common);
    }

    sh_status sh_ndb_create(double threshold, sh_ndb **b) noexcept
    {
        *b = nullptr;
        if (!(threshold > 0 && threshold <= 1))
            return SH_ERR_ARGUMENT;
        return sh::guard(
            [&]
            {
                void *mem = std::malloc(sizeof(sh_ndb));
                if (mem == nullptr)
                    return SH_ERR_NOMEM;
                *b = new (mem) sh_ndb();
                (*b)->threshold = threshold;
                (*b)->t = threshold - kSlack;
                return SH_OK;
            });
    }

    void sh_ndb_free(sh_ndb *b) noexcept
    {
        if (b == nullptr)
            return;
        b->~sh_ndb();
        std::free(b);
    }

    sh_status sh_ndb_add(sh_ndb *b, const sh_ndb_entry *e, size_t n) noexcept
    {
        if (b->prepared)
            return SH_ERR_ARGUMENT;
        if (b->ents.size() + n >= UINT32_MAX)
            return SH_ERR_RANGE;
        return sh::guard(
            [&]
            {
                b->ents.insert(b->ents.end(), e, e + n);
                return SH_OK;
            });
    }

    sh_status sh_ndb_next(sh_ndb *b, uint32_t *out, size_t cap, size_t *n, int *done,
                          sh_interrupt_fn interrupt, void *interrupt_arg) noexcept
    {
        *n = 0;
        *done = 0;
        if (cap == 0)
            return SH_ERR_ARGUMENT;
        return sh::guard(
            [&]
            {
                if (!b->prepared)
                    b->prepare();
                const auto nsets = static_cast<uint32_t>(b->first.size() - 1);
                uint32_t since_poll = 0;
                while (*n < cap)
                {
                    if (b->pending_at < b->pending.size())
                    {
                        out[2 * *n] = b->pending[b->pending_at];
                        out[2 * *n + 1] = b->pending[b->pending_at + 1];
                        b->pending_at += 2;
                        (*n)++;
                        continue;
                    }
                    b->pending.clear();
                    b->pending_at = 0;
                    if (b->next_y >= nsets)
                    {
                        *done = 1;
                        break;
                    }
                    if (++since_poll >= kPollSets)
                    {
                        since_poll = 0;
                        if (interrupt != nullptr && interrupt(interrupt_arg))
                        {
                            if (*n == 0)
                                return SH_ERR_INTERRUPTED;
                            break;
                        }
                    }
                    b->join_one(b->next_y++);
                }
                return SH_OK;
            });
    }

}  // extern "C"
