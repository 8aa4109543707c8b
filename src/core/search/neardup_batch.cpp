// neardup_batch.cpp — the verified join by chunks of sets: a sketch that
// fixes the global token order, prefixes by it, and one chunk of sets indexed
// in memory that the later sets probe (see neardup_batch.h).
#include "neardup_batch.h"

#include "boundary.hpp"
#include "neardup_join.hpp"

#include <xxhash.h>

#include <algorithm>
#include <cstdlib>
#include <new>
#include <vector>

namespace
{

using sh::nd::kSlack;
constexpr size_t kMinBytes = size_t{64} << 10;

struct Key  // a token's place in the global order
{
    uint32_t est;
    uint64_t hash;
    bool operator<(const Key &o) const
    {
        return est != o.est ? est < o.est : hash < o.hash;
    }
};

uint64_t mix(uint64_t token)
{
    return (token ^ (token >> 29)) * 0xBF58476D1CE4E5B9ULL;
}

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

// The chunk's sets (copies), and an index of their prefixes: one list of
// postings per distinct token, found through an open-addressing table.
struct sh_ndc
{
    double threshold = 1, t = 1;
    bool built = false;
    std::vector<uint32_t> id, size;  // by local set
    std::vector<uint64_t> hoff{0};   // by local set: start in hashes (one more at the end)
    std::vector<uint64_t> hashes;
    std::vector<uint64_t> poff{0};  // by local set: start in ptok, ppos (one more at the end)
    std::vector<uint64_t> ptok;
    std::vector<uint32_t> ppos;
    std::vector<sh::nd::Posting> postings;
    std::vector<uint64_t> lo, end;  // by list: its live part of postings
    std::vector<uint64_t> slot_token;
    std::vector<uint32_t> slot_list;  // UINT32_MAX: empty
    uint64_t mask = 0;
    uint32_t max_size = 0;
    sh::nd::Probe probing;
    std::vector<sh_nd_pair> found;
    uint64_t candidates = 0;

    uint32_t list_of(uint64_t token) const
    {
        for (uint64_t s = mix(token) & mask;; s = (s + 1) & mask)
        {
            if (slot_list[s] == UINT32_MAX)
                return UINT32_MAX;
            if (slot_token[s] == token)
                return slot_list[s];
        }
    }

    void build();
    void probe(uint32_t n, const uint64_t *tokens, const uint32_t *pos, size_t m, uint32_t limit);
    void verify(uint32_t set, const uint64_t *h, uint32_t n);
};

void sh_ndc::build()
{
    struct Indexed
    {
        uint64_t token;
        uint32_t local, pos;
    };
    std::vector<Indexed> all;
    const auto nsets = static_cast<uint32_t>(size.size());
    for (uint32_t x = 0; x < nsets; x++)
    {
        const uint32_t index = sh::nd::index_length(size[x], t);
        for (uint64_t i = poff[x]; i < poff[x + 1] && ppos[i] < index; i++)
            all.push_back(Indexed{ptok[i], x, ppos[i]});
    }
    std::sort(all.begin(), all.end(),
              [](const Indexed &a, const Indexed &b)
              { return a.token != b.token ? a.token < b.token : a.local < b.local; });
    size_t lists = 0;
    for (size_t i = 0; i < all.size(); i++)
        lists += (i == 0 || all[i].token != all[i - 1].token);
    uint64_t slots = 16;
    while (slots < 2 * lists)
        slots *= 2;
    mask = slots - 1;
    slot_token.assign(slots, 0);
    slot_list.assign(slots, UINT32_MAX);
    postings.resize(all.size());
    lo.clear();
    end.clear();
    for (size_t i = 0; i < all.size(); i++)
    {
        if (i == 0 || all[i].token != all[i - 1].token)
        {
            uint64_t s = mix(all[i].token) & mask;
            while (slot_list[s] != UINT32_MAX)
                s = (s + 1) & mask;
            slot_token[s] = all[i].token;
            slot_list[s] = static_cast<uint32_t>(lo.size());
            lo.push_back(i);
            end.push_back(i);
        }
        postings[i] = sh::nd::Posting{all[i].local, all[i].pos};
        end.back()++;
    }
    probing.count.assign(nsets, 0);
    built = true;
}

void sh_ndc::probe(uint32_t n, const uint64_t *tokens, const uint32_t *pos, size_t m, uint32_t limit)
{
    sh::nd::probe(
        probing, n, static_cast<uint32_t>(m), t, limit, postings.data(),
        [&](uint32_t j, uint64_t *&l, uint64_t &e, uint32_t &p)
        {
            const uint32_t k = list_of(tokens[j]);
            if (k == UINT32_MAX)
                return false;
            l = &lo[k];
            e = end[k];
            p = pos[j];
            return true;
        },
        [this](uint32_t x) { return size[x]; });
}

void sh_ndc::verify(uint32_t set, const uint64_t *h, uint32_t n)
{
    found.clear();
    candidates += sh::nd::verify(
        probing, threshold,
        [&](uint32_t x)
        {
            const uint32_t nx = size[x];
            return sh::nd::jaccard_of(sh::nd::sorted_overlap(hashes.data() + hoff[x], nx, h, n), nx, n);
        },
        [&](uint32_t x, double j) {
            found.push_back(sh_nd_pair{id[x], set, j});
        });
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

    sh_status sh_ndo_prefix(sh_ndo *o, const uint64_t *hashes, uint32_t n, double threshold, uint64_t *tokens,
                            uint32_t *pos, size_t *m) noexcept
    {
        *m = 0;
        if (!(threshold > 0 && threshold <= 1))
            return SH_ERR_ARGUMENT;
        return sh::guard(
            [&]
            {
                const uint32_t p = sh::nd::probe_length(n, threshold - kSlack);
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
                    {
                        tokens[*m] = o->scratch[i].hash;
                        pos[(*m)++] = i;
                    }
                return SH_OK;
            });
    }

    void sh_ndo_digest(const uint64_t *hashes, size_t n, uint64_t out[2]) noexcept
    {
        const XXH128_hash_t d = XXH3_128bits(hashes, n * sizeof(uint64_t));
        out[0] = d.low64;
        out[1] = d.high64;
    }

    sh_status sh_ndc_create(double threshold, sh_ndc **c) noexcept
    {
        *c = nullptr;
        if (!(threshold > 0 && threshold <= 1))
            return SH_ERR_ARGUMENT;
        return sh::guard(
            [&]
            {
                void *mem = std::malloc(sizeof(sh_ndc));
                if (mem == nullptr)
                    return SH_ERR_NOMEM;
                *c = new (mem) sh_ndc();
                (*c)->threshold = threshold;
                (*c)->t = threshold - kSlack;
                return SH_OK;
            });
    }

    void sh_ndc_free(sh_ndc *c) noexcept
    {
        if (c == nullptr)
            return;
        c->~sh_ndc();
        std::free(c);
    }

    void sh_ndc_reset(sh_ndc *c) noexcept
    {
        c->built = false;
        c->id.clear();
        c->size.clear();
        c->hoff.assign(1, 0);  // capacity stays: no allocation
        c->hashes.clear();
        c->poff.assign(1, 0);
        c->ptok.clear();
        c->ppos.clear();
        c->max_size = 0;
    }

    size_t sh_ndc_set_bytes(uint32_t n, size_t m) noexcept
    {
        // hashes 8, prefix 12, and per indexed token: the build's sort 16,
        // a posting 8, its list 16 and two slots 24
        return size_t{n} * 8 + m * (12 + 16 + 8 + 16 + 24) + 64;
    }

    size_t sh_ndc_bytes(const sh_ndc *c) noexcept
    {
        return (c->id.capacity() + c->size.capacity() + c->ppos.capacity() + c->slot_list.capacity()) * 4 +
               (c->hoff.capacity() + c->hashes.capacity() + c->poff.capacity() + c->ptok.capacity() +
                c->lo.capacity() + c->end.capacity() + c->slot_token.capacity()) *
                   8 +
               c->postings.capacity() * sizeof(sh::nd::Posting) + c->probing.count.capacity() * 4 +
               c->found.capacity() * sizeof(sh_nd_pair);
    }

    sh_status sh_ndc_add(sh_ndc *c, uint32_t set, const uint64_t *hashes, uint32_t n, const uint64_t *tokens,
                         const uint32_t *pos, size_t m) noexcept
    {
        if (c->built || (!c->size.empty() && c->size.back() > n))
            return SH_ERR_ARGUMENT;
        return sh::guard(
            [&]
            {
                c->id.push_back(set);
                c->size.push_back(n);
                c->hashes.insert(c->hashes.end(), hashes, hashes + n);
                c->hoff.push_back(c->hashes.size());
                c->ptok.insert(c->ptok.end(), tokens, tokens + m);
                c->ppos.insert(c->ppos.end(), pos, pos + m);
                c->poff.push_back(c->ptok.size());
                c->max_size = std::max(c->max_size, n);
                return SH_OK;
            });
    }

    sh_status sh_ndc_build(sh_ndc *c) noexcept
    {
        if (c->built)
            return SH_ERR_ARGUMENT;
        return sh::guard(
            [&]
            {
                c->build();
                return SH_OK;
            });
    }

    uint32_t sh_ndc_sets(const sh_ndc *c) noexcept
    {
        return static_cast<uint32_t>(c->size.size());
    }

    int sh_ndc_reaches(const sh_ndc *c, uint32_t n) noexcept
    {
        return static_cast<double>(c->max_size) >= c->t * n;
    }

    sh_status sh_ndc_probe_own(sh_ndc *c, uint32_t local, const sh_nd_pair **out, size_t *npairs) noexcept
    {
        *npairs = 0;
        if (!c->built || local >= c->size.size())
            return SH_ERR_ARGUMENT;
        return sh::guard(
            [&]
            {
                const uint64_t p = c->poff[local];
                c->probe(c->size[local], c->ptok.data() + p, c->ppos.data() + p, c->poff[local + 1] - p,
                         local);
                c->verify(c->id[local], c->hashes.data() + c->hoff[local], c->size[local]);
                *out = c->found.data();
                *npairs = c->found.size();
                return SH_OK;
            });
    }

    sh_status sh_ndc_probe(sh_ndc *c, uint32_t n, const uint64_t *tokens, const uint32_t *pos, size_t m,
                           size_t *ncand) noexcept
    {
        *ncand = 0;
        if (!c->built)
            return SH_ERR_ARGUMENT;
        return sh::guard(
            [&]
            {
                c->probe(n, tokens, pos, m, UINT32_MAX);
                for (uint32_t x : c->probing.cand)
                    *ncand += c->probing.count[x] > 0;
                if (*ncand == 0)
                    c->verify(0, nullptr, 0);  // resets the pruned ones
                return SH_OK;
            });
    }

    sh_status sh_ndc_verify(sh_ndc *c, uint32_t set, const uint64_t *hashes, uint32_t n,
                            const sh_nd_pair **out, size_t *npairs) noexcept
    {
        *npairs = 0;
        if (!c->built)
            return SH_ERR_ARGUMENT;
        return sh::guard(
            [&]
            {
                c->verify(set, hashes, n);
                *out = c->found.data();
                *npairs = c->found.size();
                return SH_OK;
            });
    }

    uint64_t sh_ndc_candidates(const sh_ndc *c) noexcept
    {
        return c->candidates;
    }

}  // extern "C"
