// tables.cpp — permuted-table layout (see tables.h).
#include "tables.h"

#include "boundary.hpp"

#include <vector>

namespace
{

static_assert(SH_MAX_BLOCKS <= 64, "a block has at least one bit");

// Whether (blocks, bits) is a layout sh_table_layout accepts.
bool valid(int blocks, int bits)
{
    return bits >= 1 && bits < blocks && blocks >= 2 && blocks <= SH_MAX_BLOCKS;
}

// The `width` low-order bits set (0 <= width <= 64).
uint64_t low_ones(int width)
{
    if (width <= 0)
        return 0;
    return width >= 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1;
}

// Advance a sorted k-subset of {0..n-1} to the next in lexicographic order.
bool next_subset(std::vector<int> &s, int n)
{
    int k = static_cast<int>(s.size());
    for (int i = k - 1; i >= 0; i--)
    {
        if (s[i] < n - k + i)
        {
            s[i]++;
            for (int j = i + 1; j < k; j++)
                s[j] = s[j - 1] + 1;
            return true;
        }
    }
    return false;
}

}  // namespace

extern "C"
{
    int sh_table_count(int blocks, int bits) noexcept
    {
        return valid(blocks, bits) ? static_cast<int>(sh_binomial(blocks, bits)) : 0;
    }

    sh_status sh_table_layout(int blocks, int bits, sh_table *tables, int ntables) noexcept
    {
        if (!valid(blocks, bits) || ntables != sh_table_count(blocks, bits))
            return SH_ERR_ARGUMENT;
        return sh::guard(
            [&]
            {
                // Block b covers bits [lo[b], lo[b] + width[b]) counted from bit 0;
                // block 0 is the most significant.
                int width[SH_MAX_BLOCKS], lo[SH_MAX_BLOCKS];
                int top = 64;
                for (int b = 0; b < blocks; b++)
                {
                    width[b] = 64 / blocks + (b < 64 % blocks ? 1 : 0);
                    top -= width[b];
                    lo[b] = top;
                }
                std::vector<int> prefix(blocks - bits);
                for (int i = 0; i < blocks - bits; i++)
                    prefix[i] = i;
                int t = 0;
                do
                {
                    sh_table &tab = tables[t++];
                    tab = sh_table{};
                    tab.nblocks = blocks;
                    std::vector<bool> in_prefix(blocks, false);
                    for (int b : prefix)
                        in_prefix[b] = true;
                    // Destination order: prefix blocks, then the rest, each in order.
                    int dst_top = 64;
                    for (int pass = 0; pass < 2; pass++)
                        for (int b = 0; b < blocks; b++)
                        {
                            if (in_prefix[b] != (pass == 0))
                                continue;
                            dst_top -= width[b];
                            tab.src_shift[b] = static_cast<uint8_t>(lo[b]);
                            tab.dst_shift[b] = static_cast<uint8_t>(dst_top);
                            tab.width_mask[b] = low_ones(width[b]);
                            if (pass == 0)
                            {
                                tab.prefix_bits += width[b];
                                tab.prefix_orig_mask |= tab.width_mask[b] << (lo[b] & 63);
                            }
                        }
                    tab.prefix_key_mask = ~low_ones(64 - tab.prefix_bits);
                } while (next_subset(prefix, blocks));
                return SH_OK;
            });
    }

    int sh_table_min_prefix_bits(int blocks, int bits) noexcept
    {
        if (bits < 1 || bits >= blocks || blocks > 64)
            return 0;
        int kept = blocks - bits;
        int narrow = blocks - 64 % blocks;
        return kept * (64 / blocks) + (kept > narrow ? kept - narrow : 0);
    }

    uint64_t sh_table_permute(const sh_table *table, uint64_t fingerprint) noexcept
    {
        uint64_t key = 0;
        for (int b = 0; b < table->nblocks; b++)
            key |= ((fingerprint >> table->src_shift[b]) & table->width_mask[b]) << table->dst_shift[b];
        return key;
    }

    uint64_t sh_table_unpermute(const sh_table *table, uint64_t key) noexcept
    {
        uint64_t fp = 0;
        for (int b = 0; b < table->nblocks; b++)
            fp |= ((key >> table->dst_shift[b]) & table->width_mask[b]) << table->src_shift[b];
        return fp;
    }

    int sh_table_first_match(const sh_table *tables, int t, uint64_t fp, uint64_t q) noexcept
    {
        uint64_t diff = fp ^ q;
        for (int e = 0; e < t; e++)
            if ((diff & tables[e].prefix_orig_mask) == 0)
                return 0;
        return 1;
    }

    int sh_table_first_match_flips(const sh_table *tables, int t, uint64_t fp, uint64_t q, int flips) noexcept
    {
        // every table before t probed with up to flips
        return sh_table_first_match_split(tables, t, fp, q, flips, t);
    }

    int sh_table_first_match_split(const sh_table *tables, int t, uint64_t fp, uint64_t q, int flips,
                                   int split) noexcept
    {
        uint64_t diff = fp ^ q;
        for (int e = 0; e < t; e++)
            if (__builtin_popcountll(diff & tables[e].prefix_orig_mask) <=
                sh_table_split_flips(e, flips, split))
                return 0;
        return 1;
    }

    int sh_table_covered_radius(int blocks, int bits, int flips) noexcept
    {
        if (!valid(blocks, bits) || flips < 0)
            return -1;
        int p = blocks - bits;
        int r = flips + bits * ((flips + p) / p);
        return r < 64 ? r : 64;
    }

    int sh_table_covered_radius_partial(int blocks, int bits, int flips, int tables_done) noexcept
    {
        int ntables = sh_table_count(blocks, bits);
        if (ntables == 0 || flips < 0 || tables_done < 0 || tables_done > ntables)
            return -1;
        if (tables_done == ntables)
            return sh_table_covered_radius(blocks, bits, flips);
        if (blocks - bits > 1)
            return flips > 0 ? sh_table_covered_radius(blocks, bits, flips - 1) : -1;
        int r = blocks * flips + tables_done - 1;
        return r < 64 ? r : 64;
    }

}  // extern "C"
