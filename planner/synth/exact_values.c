/* Values and levels of an exact byte size, per encoding: what a rebuilt
 * page writes where its real values were (zeros or the least structure
 * its encoding needs; only the count and the size matter). */
#include "page_plan_internal.h"

#include <string.h>

/* Run counts whose header (ULEB128 of 2c) has h bytes; counts stay below 2^31. */
static const uint64_t run_lo[6] = {0, 1, 64, 8192, 1u << 20, 1u << 27};
static const uint64_t run_hi[6] = {0, 63, 8191, (1u << 20) - 1, (1u << 27) - 1, INT32_MAX};

/* Runs holding exactly c values of vb value bytes each in exactly t bytes. */
static bool pool_plan(uint64_t c, uint64_t t, unsigned vb, pool *pl)
{
    memset(pl, 0, sizeof *pl);
    if (c == 0)
        return t == 0;
    const uint64_t unit = 1 + vb;
    for (unsigned r = 1; r <= 2; r++)
        for (unsigned h1 = 1; h1 <= 5; h1++)
            for (unsigned h2 = r == 2 ? 1 : 0; h2 <= (r == 2 ? 5u : 0u); h2++) {
                const uint64_t tt = h1 + vb + (r == 2 ? h2 + vb : 0);
                if (tt > t || (t - tt) % unit)
                    continue;
                const uint64_t j = (t - tt) / unit;
                if (j > c || c - j < r)
                    continue;
                const uint64_t rest = c - j;
                if (r == 1) {
                    if (rest < run_lo[h1] || rest > run_hi[h1])
                        continue;
                    *pl = (pool){j, j, 1, {rest, 0}};
                    return true;
                }
                if (rest < run_lo[h2])
                    continue;
                const uint64_t a_lo0 = rest > run_hi[h2] ? rest - run_hi[h2] : 0;
                const uint64_t a_lo = a_lo0 > run_lo[h1] ? a_lo0 : run_lo[h1];
                const uint64_t a_hi0 = rest - run_lo[h2];
                const uint64_t a_hi = a_hi0 < run_hi[h1] ? a_hi0 : run_hi[h1];
                if (a_lo > a_hi)
                    continue;
                *pl = (pool){j, j, 2, {a_lo, rest - a_lo}};
                return true;
            }
    /* A run of up to 63 values costs the one header byte a run of one does,
     * and a run of 64 to 8191 one byte more: j one-byte runs holding several
     * values each and m (0 to vb) two-byte runs reach every size in
     * between, whatever its remainder modulo 1 + vb (20,000 values of 2
     * bytes in 42,540 bytes, which runs of one and two tails cannot). */
    for (unsigned m = 0; m <= vb && m <= 4; m++) {
        const uint64_t tt = (uint64_t)m * (2 + vb);
        if (tt > t || (t - tt) % unit)
            continue;
        const uint64_t j = (t - tt) / unit;
        if (j == 0 || c < j + run_lo[2] * m || c > 63 * j + run_hi[2] * m)
            continue;
        /* The two-byte runs hold as few values as they can. */
        uint64_t x = run_lo[2] * m;
        if (c > 63 * j && c - 63 * j > x)
            x = c - 63 * j;
        *pl = (pool){j, c - x, m, {0, 0, 0, 0}};
        for (unsigned i = 0; i < m; i++) {
            const uint64_t share = x / m + (i < x % m);
            pl->tail[i] = share;
        }
        return true;
    }
    return false;
}

/* Write the runs (o zeroed beforehand); returns the bytes written. */
static size_t pool_emit(const pool *pl, unsigned vb, uint8_t value, uint8_t *o)
{
    size_t n = 0;
    const uint64_t base = pl->units ? pl->unit_values / pl->units : 0;
    const uint64_t longer = pl->units ? pl->unit_values % pl->units : 0; /* runs of base + 1 */
    for (uint64_t i = 0; i < pl->units; i++) {
        o[n++] = (uint8_t)((base + (i < longer)) << 1);
        if (vb)
            o[n] = value;
        n += vb;
    }
    for (uint32_t i = 0; i < pl->n_tail; i++) {
        n += put_uleb(o + n, pl->tail[i] << 1);
        if (vb)
            o[n] = value;
        n += vb;
    }
    return n;
}

uint64_t pp_run_cost_min(uint64_t c, unsigned vb)
{
    return c ? ulen(c << 1) + vb : 0;
}

bool pp_levels_plan(uint64_t n, uint64_t k, uint64_t L, lplan *lp)
{
    const uint64_t t1min = pp_run_cost_min(k, 1);
    for (uint64_t t1 = t1min; t1 <= t1min + 8 && t1 <= L; t1++) {
        if (!pool_plan(k, t1, 1, &lp->ones))
            continue;
        if (pool_plan(n - k, L - t1, 1, &lp->zeros))
            return true;
    }
    return false;
}

size_t pp_levels_emit(const lplan *lp, uint8_t *o)
{
    size_t n = pool_emit(&lp->ones, 1, 1, o);
    return n + pool_emit(&lp->zeros, 1, 0, o + n);
}

/* DELTA_BINARY_PACKED block layouts: values per block, miniblocks per block. */
typedef struct {
    uint32_t block, mb;
} dbp_layout;

static const dbp_layout DBP_STD = {128, 4};
/* Tried in turn when the size must be matched: longer miniblocks pad the
 * last one more, shorter blocks give more min-delta varints to lengthen. */
static const dbp_layout dbp_layouts[] = {{128, 4}, {256, 4}, {128, 1}, {128, 2},
                                         {256, 8}, {512, 4}, {1024, 8}, {4096, 32}};

static uint32_t dbp_vpm(dbp_layout l)
{
    return l.block / l.mb;
}

static uint64_t dbp_blocks(uint64_t k, dbp_layout l)
{
    return k > 1 ? (k - 1 + l.block - 1) / l.block : 0;
}

/* Miniblocks holding deltas (the others of the last block have no data). */
static uint64_t dbp_used_miniblocks(uint64_t k, dbp_layout l)
{
    return k > 1 ? (k - 1 + dbp_vpm(l) - 1) / dbp_vpm(l) : 0;
}

/* Header: block size, miniblock count, value count (first value not included). */
static size_t dbp_header(uint8_t *o, uint64_t k, dbp_layout l)
{
    size_t n = put_uleb(o, l.block);
    n += put_uleb(o + n, l.mb);
    return n + put_uleb(o + n, k);
}

static uint64_t dbp_header_len(uint64_t k, dbp_layout l)
{
    return ulen(l.block) + ulen(l.mb) + ulen(k);
}

/* Smallest X > 0 whose min delta -X takes an L-byte varint (0 for L = 1). */
static uint64_t dbp_cancel(unsigned L)
{
    return L <= 1 ? 0 : (1ull << (7 * (L - 1) - 1)) + 1;
}

/* x in each of `slots` slots of w bits, LSB first, into o (zeroed). */
static void pack_repeat(uint8_t *o, unsigned w, uint64_t x, unsigned slots)
{
    for (unsigned j = 0; j < slots; j++)
        for (unsigned b = 0; b < w; b++)
            if ((x >> b) & 1) {
                const size_t at = (size_t)j * w + b;
                o[at / 8] |= (uint8_t)(1u << (at % 8));
            }
}

static unsigned bitlen64(uint64_t x)
{
    unsigned n = 0;
    while (x) {
        n++;
        x >>= 1;
    }
    return n;
}

/* Miniblocks holding deltas in block b of a stream of k values. */
static uint64_t dbp_block_used(uint64_t k, dbp_layout l, uint64_t b)
{
    const uint64_t deltas = k - 1, first = b * l.block;
    const uint64_t in = deltas - first < l.block ? deltas - first : l.block;
    return (in + dbp_vpm(l) - 1) / dbp_vpm(l);
}

/* k values in exactly V bytes; every value is the first, 0 or 64 (small
 * enough for any integer annotation). The slack goes into the first value's
 * varint (0 or 1 byte more), miniblock bit widths over zero data (vpm/8
 * bytes per bit: deltas equal the min delta 0), and min-delta varints made
 * longer: a block whose min delta is -X (an L-byte varint) packs X into
 * every slot, so its deltas stay 0. maxw: 32 (INT32) or 64 (INT64). */
static bool dbp_fill_layout(uint64_t k, uint64_t V, unsigned maxw, dbp_layout l, uint8_t *o)
{
    const unsigned vmax = maxw == 32 ? 5 : 10; /* varint bytes of an int32 / int64 */
    const uint32_t vpm = dbp_vpm(l);
    const uint64_t nb = dbp_blocks(k, l), used = dbp_used_miniblocks(k, l);
    const uint64_t base = dbp_header_len(k, l) + 1 + nb * (1 + l.mb);
    const uint64_t step = vpm / 8, wmax = used * maxw;
    if (V < base)
        return false;
    const uint64_t extra = V - base;
    for (unsigned fx = 0; fx <= 1; fx++) {
        if (extra < fx)
            break;
        const uint64_t e = extra - fx;
        /* c: bytes of longer min deltas, c == e (mod step); W: total bit width. */
        const uint64_t c_need = e > step * wmax ? e - step * wmax : 0;
        uint64_t c = e % step;
        if (c < c_need)
            c += (c_need - c + step - 1) / step * step;
        for (; c <= nb * (vmax - 1) && c <= e; c += step) {
            /* Blocks from the first take min deltas of up to vmax bytes. */
            uint64_t wmin = 0, left = c;
            for (uint64_t b = 0; b < nb && left > 0; b++) {
                const unsigned L = 1 + (unsigned)(left < vmax - 1 ? left : vmax - 1);
                left -= L - 1;
                wmin += dbp_block_used(k, l, b) * bitlen64(dbp_cancel(L));
            }
            const uint64_t w_total = (e - c) / step;
            if (w_total < wmin || w_total > wmax)
                continue;
            if (!o)
                return true;
            size_t n = dbp_header(o, k, l);
            n += put_uleb(o + n, fx ? 128 : 0); /* zigzag of 64 or 0 */
            uint64_t wleft = w_total - wmin, cleft = c, dleft = k - 1;
            for (uint64_t b = 0; b < nb; b++) {
                const unsigned L = 1 + (unsigned)(cleft < vmax - 1 ? cleft : vmax - 1);
                cleft -= L - 1;
                const uint64_t x = dbp_cancel(L);
                n += put_uleb(o + n, x ? 2 * x - 1 : 0); /* zigzag(-x) */
                uint8_t *widths = o + n;
                n += l.mb;
                for (unsigned m = 0; m < l.mb && dleft > 0; m++) {
                    uint64_t w = bitlen64(x);
                    const uint64_t add = maxw - w < wleft ? maxw - w : wleft;
                    w += add;
                    wleft -= add;
                    widths[m] = (uint8_t)w;
                    if (x)
                        pack_repeat(o + n, (unsigned)w, x, vpm);
                    n += (size_t)(w * vpm / 8);
                    dleft -= dleft < vpm ? dleft : vpm;
                }
            }
            return n == V && wleft == 0;
        }
    }
    return false;
}

static bool dbp_fill(uint64_t k, uint64_t V, unsigned maxw, uint8_t *o)
{
    for (size_t i = 0; i < sizeof dbp_layouts / sizeof dbp_layouts[0]; i++)
        if (dbp_fill_layout(k, V, maxw, dbp_layouts[i], NULL))
            return !o || dbp_fill_layout(k, V, maxw, dbp_layouts[i], o);
    return false;
}

/* DELTA_BINARY_PACKED of k zeros, shortest form; returns its length. */
static uint64_t dbp_zeros(uint64_t k, uint8_t *o)
{
    const uint64_t len = dbp_header_len(k, DBP_STD) + 1 + dbp_blocks(k, DBP_STD) * (1 + DBP_STD.mb);
    if (o) {
        size_t n = dbp_header(o, k, DBP_STD);
        o[n] = 0; /* the rest stays zero: min deltas 0, widths 0 */
    }
    return len;
}

/* DELTA_LENGTH_BYTE_ARRAY of k values in exactly V bytes: lengths 0, ..., 0,
 * S (S absorbs the slack), then S zero bytes. */
static bool dlba_fill(uint64_t k, uint64_t V, uint8_t *o)
{
    if (k == 0) {
        if (V != dbp_header_len(0, DBP_STD) + 1)
            return false;
        if (o)
            dbp_zeros(0, o);
        return true;
    }
    if (k == 1) {
        const uint64_t h = dbp_header_len(1, DBP_STD);
        for (unsigned lf = 1; lf <= 5; lf++) {
            if (V < h + lf)
                break;
            const uint64_t s = V - h - lf;
            if (s > INT32_MAX || ulen(s << 1) != lf)
                continue;
            if (o) {
                size_t n = dbp_header(o, 1, DBP_STD);
                put_uleb(o + n, s << 1);
            }
            return true;
        }
        return false;
    }
    const uint64_t base =
        dbp_header_len(k, DBP_STD) + 1 + dbp_blocks(k, DBP_STD) * (1 + DBP_STD.mb);
    for (unsigned ws = 0; ws <= 32; ws++) {
        const uint64_t slen = base + 4ull * ws;
        if (V < slen)
            break;
        const uint64_t s = V - slen;
        if (s > INT32_MAX || (ws < 64 && (s >> ws) != 0))
            continue;
        if (!o)
            return true;
        /* The last delta (index k-2) carries S. */
        const uint32_t vpm = dbp_vpm(DBP_STD);
        const uint64_t q = k - 2, bl = q / DBP_STD.block;
        const unsigned mi = (unsigned)((q % DBP_STD.block) / vpm), pi = (unsigned)(q % vpm);
        size_t n = dbp_header(o, k, DBP_STD);
        o[n++] = 0; /* first value 0 */
        uint64_t left = k - 1;
        for (uint64_t b = 0; b < dbp_blocks(k, DBP_STD); b++) {
            o[n++] = 0; /* min delta 0 */
            uint8_t *widths = o + n;
            n += DBP_STD.mb;
            for (unsigned m = 0; m < DBP_STD.mb && left > 0; m++) {
                if (b == bl && m == mi) {
                    widths[m] = (uint8_t)ws;
                    for (unsigned bit = 0; bit < ws; bit++)
                        if ((s >> bit) & 1) {
                            const size_t at = (size_t)pi * ws + bit;
                            o[n + at / 8] |= (uint8_t)(1u << (at % 8));
                        }
                    n += (size_t)ws * vpm / 8;
                }
                left -= left < vpm ? left : vpm;
            }
        }
        return n == slen;
    }
    return false;
}

bool pp_bss_type(pq_physical_type t)
{
    return t == PQ_FLOAT || t == PQ_DOUBLE || t == PQ_INT32 || t == PQ_INT64 ||
           t == PQ_FIXED_LEN_BYTE_ARRAY;
}

/* Values whose size follows from their count alone (0 when it does not). */
bool pp_fixed_size(const vspec *f, uint64_t k, uint64_t *v)
{
    if (f->enc == PQ_ENC_PLAIN && f->type == PQ_BOOLEAN) {
        *v = (k + 7) / 8;
        return true;
    }
    if ((f->enc == PQ_ENC_PLAIN && f->type != PQ_BYTE_ARRAY) ||
        (f->enc == PQ_ENC_BYTE_STREAM_SPLIT && pp_bss_type(f->type))) {
        *v = k * f->width;
        return true;
    }
    return false;
}

/* Exactly k values of the encoding in exactly V bytes at o (zeroed by the
 * caller); o NULL only checks that it can be done. Values are zeros or
 * whatever the least structure gives; only their count and size matter. */
bool pp_fill_values(const vspec *f, uint64_t k, uint64_t V, uint8_t *o)
{
    uint64_t fv;
    if (pp_fixed_size(f, k, &fv))
        return fv == V;
    switch (f->enc) {
    case PQ_ENC_PLAIN:
        if (f->type != PQ_BYTE_ARRAY)
            return false;
        if (k == 0)
            return V == 0;
        /* k - 1 empty values, then one holding the rest. */
        if (V < 4 * k || V - 4 * k > INT32_MAX)
            return false;
        if (o)
            put_le32(o + 4 * (k - 1), (uint32_t)(V - 4 * k));
        return true;
    case PQ_ENC_PLAIN_DICTIONARY:
    case PQ_ENC_RLE_DICTIONARY: {
        if (k == 0)
            return V == 1; /* the bit width byte alone */
        if (!f->dict_ok || V < 2)
            return false;
        static const unsigned vbs[] = {1, 2, 3, 4, 0};
        for (size_t i = 0; i < sizeof vbs / sizeof vbs[0]; i++) {
            pool pl;
            if (!pool_plan(k, V - 1, vbs[i], &pl))
                continue;
            if (o) {
                o[0] = (uint8_t)(8 * vbs[i]);
                pool_emit(&pl, vbs[i], 0, o + 1);
            }
            return true;
        }
        return false;
    }
    case PQ_ENC_RLE: {
        if (f->type != PQ_BOOLEAN || V < 4 || V - 4 > INT32_MAX)
            return false;
        if (k == 0)
            return V == 4;
        pool pl;
        if (!pool_plan(k, V - 4, 1, &pl))
            return false;
        if (o) {
            put_le32(o, (uint32_t)(V - 4));
            pool_emit(&pl, 1, 0, o + 4);
        }
        return true;
    }
    case PQ_ENC_DELTA_BINARY_PACKED:
        if (f->type != PQ_INT32 && f->type != PQ_INT64)
            return false;
        return dbp_fill(k, V, f->type == PQ_INT32 ? 32 : 64, o);
    case PQ_ENC_DELTA_LENGTH_BYTE_ARRAY:
        return f->type == PQ_BYTE_ARRAY && dlba_fill(k, V, o);
    case PQ_ENC_DELTA_BYTE_ARRAY: {
        if (f->type != PQ_BYTE_ARRAY)
            return false;
        const uint64_t pl = dbp_zeros(k, NULL);
        if (V < pl || !dlba_fill(k, V - pl, NULL))
            return false;
        if (o) {
            dbp_zeros(k, o);
            dlba_fill(k, V - pl, o + pl);
        }
        return true;
    }
    default:
        return false;
    }
}
