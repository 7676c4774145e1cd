/* Partial reads and synthesized pages; see page_plan.h.
 *
 * pp_plan is a pure function of the page map, the selection and the bytes
 * known so far (apart from the round count kept in pp_bytes): every call
 * parses what it can, and either asks for the bytes it is missing, or builds
 * the image, or gives up with a reason.
 *
 * Modes, chosen from the page header (flat columns only):
 *   partial      some row selected; values UNCOMPRESSED, or ZSTD whose
 *                (values) section is one frame of raw blocks (block headers
 *                predicted while the blocks are full-size, else walked one
 *                round at a time); PLAIN fixed-width, PLAIN BOOLEAN,
 *                BYTE_STREAM_SPLIT, DELTA_LENGTH_BYTE_ARRAY values. Image:
 *                every real byte fetched (header, levels, frame and block
 *                headers, lengths, selected values), zeros elsewhere.
 *   synth-plain  no row selected (or every selected row null in the real
 *                levels), values not compressed: real header and levels,
 *                values region rebuilt with the least structure its encoding
 *                needs (DELTA_LENGTH_BYTE_ARRAY keeps its real lengths).
 *   synth-codec  the same, ZSTD or SNAPPY: V2 keeps its real levels and gets
 *                a new values section; V1 (no row selected) a whole new body
 *                whose levels are chosen so that it has exactly
 *                uncompressed_page_size bytes. ZSTD frames are padded to
 *                compressed_page_size with a skippable frame; SNAPPY streams
 *                are built to that size (literal and copy elements chosen).
 * Rebuilt values are zeros or tiny (dictionary index 0, delta streams of
 * equal values 0 or 64, one string of zero bytes).
 * A page CRC is recomputed over the image body and rewritten; when the new
 * value does not fit the field, low bits of zero bytes nothing depends on
 * are flipped so that the body keeps the old CRC (crc_patch). Every image is
 * decoded once with pq_decode_data_page before it is answered (a failure is
 * PP_REAL "verify: ..."). */
#include "page_plan.h"

#include "cost_model.h"
#include "rle_hybrid.h"
#include "sv_grow.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#define ZSTD_MAGIC 0xFD2FB528u
#define ZSTD_SKIPPABLE_MAGIC 0x184D2A50u
#define ZSTD_BLOCK_MAX (128u << 10)
#define ZSTD_FRAME_HEADER_MAX 18u
#define PP_MAX_BLOCKS (1u << 16)     /* raw blocks of one frame: 8 GiB of content */
#define PP_SEARCH_TRIES 4096u        /* value counts tried for a synthesized V1 body */
#define PP_ZERO_RUN 32u              /* zero runs this long are left out of pieces */
#define PP_DELTA_PROBE 4096u         /* first read of a lengths stream beyond the probe */
#define PP_SYNTH_MAX (64u << 20)     /* largest body rebuilt in memory */

/* ---------------- known bytes ---------------- */

typedef struct {
    uint32_t off, len;
    uint8_t *data;
} kb_span;

typedef struct {
    uint32_t rounds;    /* PP_NEED answers that started a round */
    uint32_t seen_puts; /* puts at the last of them */
    bool asked;
} kb_rounds;

struct pp_bytes {
    uint32_t size;
    kb_span *s; /* sorted, disjoint, not adjacent */
    uint32_t n;
    size_t cap;
    uint64_t total;
    uint32_t puts;
    kb_rounds *rounds; /* pp_plan gets a const pp_bytes; it counts rounds here */
};

pp_bytes *pp_bytes_new(uint32_t page_size)
{
    pp_bytes *kb = calloc(1, sizeof *kb);
    if (!kb)
        return NULL;
    kb->rounds = calloc(1, sizeof *kb->rounds);
    if (!kb->rounds) {
        free(kb);
        return NULL;
    }
    kb->size = page_size;
    return kb;
}

void pp_bytes_free(pp_bytes *kb)
{
    if (!kb)
        return;
    for (uint32_t i = 0; i < kb->n; i++)
        free(kb->s[i].data);
    free(kb->s);
    free(kb->rounds);
    free(kb);
}

uint64_t pp_bytes_total(const pp_bytes *kb)
{
    return kb ? kb->total : 0;
}

uint32_t pp_bytes_rounds(const pp_bytes *kb)
{
    return kb ? kb->rounds->rounds : 0;
}

static uint32_t span_end(const kb_span *s)
{
    return s->off + s->len;
}

/* Index of the first span ending at or after off (n when none). */
static uint32_t first_ending_at(const pp_bytes *kb, uint32_t off)
{
    uint32_t lo = 0, hi = kb->n;
    while (lo < hi) {
        const uint32_t mid = lo + (hi - lo) / 2;
        if (span_end(&kb->s[mid]) < off)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The span holding byte off, or NULL. */
static const kb_span *span_at(const pp_bytes *kb, uint32_t off)
{
    uint32_t i = first_ending_at(kb, off);
    if (i < kb->n && span_end(&kb->s[i]) == off)
        i++;
    if (i < kb->n && kb->s[i].off <= off && off < span_end(&kb->s[i]))
        return &kb->s[i];
    return NULL;
}

bool pp_bytes_put(pp_bytes *kb, uint32_t off, const uint8_t *data, uint32_t len)
{
    if (!kb || off > kb->size || len > kb->size - off || (len && !data))
        return false;
    if (len == 0)
        return true;
    const uint32_t end = off + len;
    const uint32_t i = first_ending_at(kb, off);
    uint32_t j = i;
    while (j < kb->n && kb->s[j].off <= end)
        j++;
    if (i == j) {
        if (!sv_grow((void **)&kb->s, &kb->cap, (size_t)kb->n + 1, sizeof *kb->s, 8, UINT32_MAX))
            return false;
        uint8_t *d = malloc(len);
        if (!d)
            return false;
        memcpy(d, data, len);
        memmove(&kb->s[i + 1], &kb->s[i], (size_t)(kb->n - i) * sizeof *kb->s);
        kb->s[i] = (kb_span){off, len, d};
        kb->n++;
        kb->total += len;
        kb->puts++;
        return true;
    }
    const uint32_t lo = off < kb->s[i].off ? off : kb->s[i].off;
    const uint32_t hi = end > span_end(&kb->s[j - 1]) ? end : span_end(&kb->s[j - 1]);
    if (j == i + 1 && lo == kb->s[i].off && hi == span_end(&kb->s[i])) {
        memcpy(kb->s[i].data + (off - lo), data, len);
        kb->puts++;
        return true;
    }
    uint8_t *d = malloc(hi - lo);
    if (!d)
        return false;
    for (uint32_t k = i; k < j; k++) {
        memcpy(d + (kb->s[k].off - lo), kb->s[k].data, kb->s[k].len);
        kb->total -= kb->s[k].len;
        free(kb->s[k].data);
    }
    memcpy(d + (off - lo), data, len);
    kb->s[i] = (kb_span){lo, hi - lo, d};
    memmove(&kb->s[i + 1], &kb->s[j], (size_t)(kb->n - j) * sizeof *kb->s);
    kb->n -= j - i - 1;
    kb->total += hi - lo;
    kb->puts++;
    return true;
}

const uint8_t *pp_bytes_get(const pp_bytes *kb, uint32_t off, uint32_t len)
{
    static const uint8_t empty[1];
    if (!kb || off > kb->size || len > kb->size - off)
        return NULL;
    if (len == 0)
        return empty;
    const kb_span *s = span_at(kb, off);
    if (!s || len > span_end(s) - off)
        return NULL;
    return s->data + (off - s->off);
}

/* Known bytes from off on without a hole. */
static uint32_t known_run(const pp_bytes *kb, uint32_t off)
{
    const kb_span *s = span_at(kb, off);
    return s ? span_end(s) - off : 0;
}

/* Some byte of [a, b) is known. */
static bool any_known(const pp_bytes *kb, uint32_t a, uint32_t b)
{
    if (a >= b)
        return false;
    uint32_t i = first_ending_at(kb, a);
    if (i < kb->n && span_end(&kb->s[i]) == a)
        i++;
    return i < kb->n && kb->s[i].off < b;
}

/* ---------------- image ---------------- */

void pp_image_read(const pp_piece *pieces, uint32_t n_pieces, uint32_t off, uint32_t len,
                   uint8_t *dst)
{
    if (len == 0)
        return;
    memset(dst, 0, len);
    const uint64_t end = (uint64_t)off + len;
    /* First piece ending after off. */
    uint32_t lo = 0, hi = n_pieces;
    while (lo < hi) {
        const uint32_t mid = lo + (hi - lo) / 2;
        if ((uint64_t)pieces[mid].off + pieces[mid].len <= off)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (uint32_t i = lo; i < n_pieces && pieces[i].off < end; i++) {
        const pp_piece *p = &pieces[i];
        const uint64_t a = p->off > off ? p->off : off;
        const uint64_t pe = (uint64_t)p->off + p->len;
        const uint64_t b = pe < end ? pe : end;
        if (a < b)
            memcpy(dst + (a - off), p->data + (a - p->off), (size_t)(b - a));
    }
}

void pp_result_free(pp_result *r)
{
    if (!r)
        return;
    free(r->need);
    for (uint32_t i = 0; i < r->n_pieces; i++)
        free(r->pieces[i].data);
    free(r->pieces);
    r->need = NULL;
    r->pieces = NULL;
    r->n_need = r->n_pieces = 0;
}

/* ---------------- small vectors ---------------- */

typedef struct {
    pp_range *v;
    uint32_t n;
    size_t cap;
} rvec;

static bool rv_push(rvec *r, uint64_t off, uint64_t len)
{
    if (len == 0)
        return true;
    if (!sv_grow((void **)&r->v, &r->cap, (size_t)r->n + 1, sizeof *r->v, 16, UINT32_MAX))
        return false;
    r->v[r->n++] = (pp_range){(uint32_t)off, (uint32_t)len};
    return true;
}

static int range_cmp(const void *a, const void *b)
{
    const pp_range *x = a, *y = b;
    return x->off < y->off ? -1 : x->off > y->off;
}

/* ---------------- encoding helpers ---------------- */

static unsigned ulen(uint64_t v)
{
    unsigned n = 1;
    while (v >= 128) {
        v >>= 7;
        n++;
    }
    return n;
}

static size_t put_uleb(uint8_t *o, uint64_t v)
{
    size_t n = 0;
    do {
        uint8_t c = v & 0x7f;
        v >>= 7;
        if (v)
            c |= 0x80;
        o[n++] = c;
    } while (v);
    return n;
}

static void put_le32(uint8_t *o, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        o[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Hybrid RLE runs of one value: `units` runs of count 1, then up to two
 * longer runs. Byte cost of a run of c values: ulen(2c) + vb. */
typedef struct {
    uint64_t units;
    uint32_t n_tail;
    uint64_t tail[2];
} pool;

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
                    *pl = (pool){j, 1, {rest, 0}};
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
                *pl = (pool){j, 2, {a_lo, rest - a_lo}};
                return true;
            }
    return false;
}

/* Write the runs (o zeroed beforehand); returns the bytes written. */
static size_t pool_emit(const pool *pl, unsigned vb, uint8_t value, uint8_t *o)
{
    size_t n = 0;
    for (uint64_t i = 0; i < pl->units; i++) {
        o[n++] = 2;
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

/* Definition levels (bit width 1) of n entries, k of them 1, in exactly L
 * bytes of RLE runs: the ones first, then the zeros. */
typedef struct {
    pool ones, zeros;
} lplan;

static uint64_t run_cost_min(uint64_t c, unsigned vb)
{
    return c ? ulen(c << 1) + vb : 0;
}

static bool levels_plan(uint64_t n, uint64_t k, uint64_t L, lplan *lp)
{
    const uint64_t t1min = run_cost_min(k, 1);
    for (uint64_t t1 = t1min; t1 <= t1min + 8 && t1 <= L; t1++) {
        if (!pool_plan(k, t1, 1, &lp->ones))
            continue;
        if (pool_plan(n - k, L - t1, 1, &lp->zeros))
            return true;
    }
    return false;
}

static size_t levels_emit(const lplan *lp, uint8_t *o)
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

/* What a values region must hold. */
typedef struct {
    int enc;
    pq_physical_type type;
    uint32_t width;   /* bytes per value: fixed types; 1 BOOLEAN; 0 BYTE_ARRAY */
    bool dict_ok;     /* dictionary entry 0 exists */
} vspec;

static bool bss_type(pq_physical_type t)
{
    return t == PQ_FLOAT || t == PQ_DOUBLE || t == PQ_INT32 || t == PQ_INT64 ||
           t == PQ_FIXED_LEN_BYTE_ARRAY;
}

/* Values whose size follows from their count alone (0 when it does not). */
static bool fixed_size(const vspec *f, uint64_t k, uint64_t *v)
{
    if (f->enc == PQ_ENC_PLAIN && f->type == PQ_BOOLEAN) {
        *v = (k + 7) / 8;
        return true;
    }
    if ((f->enc == PQ_ENC_PLAIN && f->type != PQ_BYTE_ARRAY) ||
        (f->enc == PQ_ENC_BYTE_STREAM_SPLIT && bss_type(f->type))) {
        *v = k * f->width;
        return true;
    }
    return false;
}

/* Exactly k values of the encoding in exactly V bytes at o (zeroed by the
 * caller); o NULL only checks that it can be done. Values are zeros or
 * whatever the least structure gives; only their count and size matter. */
static bool fill_values(const vspec *f, uint64_t k, uint64_t V, uint8_t *o)
{
    uint64_t fv;
    if (fixed_size(f, k, &fv))
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

/* ---------------- the plan ---------------- */

typedef enum { ST_OK = 0, ST_NEED, ST_REAL } st;

typedef struct {
    uint32_t hdr, size; /* page offset of the block header; content bytes */
    uint64_t doff;      /* decompressed offset of the first content byte */
} zblock;

/* A page section read through its decompressed offsets: identity for
 * uncompressed bytes, raw-block zstd frames otherwise. */
typedef struct {
    bool zstd;
    uint32_t start, clen; /* the section's page offset and stored length */
    uint64_t dlen;        /* decompressed length */
    /* zstd */
    bool fh_ok;           /* frame header parsed */
    uint32_t fh_len, bmax;
    uint32_t expect;      /* blocks the section size implies (all raw) */
    bool full;            /* walked blocks but the last are all bmax bytes */
    zblock *b;
    uint32_t nb;
    size_t capb;
    uint32_t next_hdr;    /* page offset of the first header not walked */
    uint64_t next_doff;
    bool complete;
} stream;

typedef struct {
    uint32_t a, b; /* non-null value indexes [a, b) */
} vrange;

#define PATCH_MAX_BYTES 8u

typedef struct {
    uint32_t off; /* page offset of a zero byte */
    uint8_t bits; /* its bits that may be flipped */
} patch_byte;

typedef struct {
    const pp_input *in;
    const pp_bytes *kb;
    pp_result *out;
    const pq_page *pg;
    uint32_t total;
    rvec need;
    pp_piece *pc;
    uint32_t n_pc;
    size_t cap_pc;
    /* header */
    pq_page_header h;
    uint32_t hl, body, unc, n;
    pq_data_page_info info;
    bool v2, compressed;
    uint32_t rl, dl, lv;
    int enc;
    uint32_t width;
    /* levels */
    uint8_t *lev; /* owned copy of the definition level runs (V1: after the length) */
    uint32_t lev_len;
    uint32_t vstart; /* values start, decompressed offset in the section */
    uint32_t k, k_sel;
    vrange *vr;
    uint32_t n_vr;
    size_t cap_vr;
    uint32_t expect_k; /* non-null values the image must decode to */
    bool rebuilt;      /* the values region (or body) was rebuilt, not fetched */
    /* Zero bytes whose low bits no reader depends on: where a CRC patch
     * may go (see crc_patch). */
    patch_byte patch[PATCH_MAX_BYTES];
    uint32_t n_patch;
    stream s;
} plan;

static st real(plan *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static st real(plan *p, const char *fmt, ...)
{
    if (p->out->outcome != PP_REAL) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(p->out->reason, sizeof p->out->reason, fmt, ap);
        va_end(ap);
        p->out->outcome = PP_REAL;
    }
    return ST_REAL;
}

static st nomem(plan *p, const char *what)
{
    return real(p, "nomem: %s", what);
}

static st need(plan *p, uint64_t off, uint64_t len)
{
    if (off >= p->total || len == 0)
        return ST_NEED;
    if (len > p->total - off)
        len = p->total - off;
    if (!rv_push(&p->need, off, len))
        return nomem(p, "need ranges");
    return ST_NEED;
}

/* Ask for every unknown byte of [off, off+len); OK when all are known. */
static st want(plan *p, uint64_t off, uint64_t len)
{
    if (len == 0)
        return ST_OK;
    if (pp_bytes_get(p->kb, (uint32_t)off, (uint32_t)len))
        return ST_OK;
    return need(p, off, len);
}

/* ---------------- pieces ---------------- */

static bool pc_take(plan *p, uint32_t off, uint32_t len, uint8_t *data)
{
    if (len == 0) {
        free(data);
        return true;
    }
    if (!sv_grow((void **)&p->pc, &p->cap_pc, (size_t)p->n_pc + 1, sizeof *p->pc, 16,
                 UINT32_MAX)) {
        free(data);
        return false;
    }
    p->pc[p->n_pc++] = (pp_piece){off, len, data};
    return true;
}

static bool pc_copy(plan *p, uint32_t off, uint32_t len, const uint8_t *src)
{
    if (len == 0)
        return true;
    uint8_t *d = malloc(len);
    if (!d)
        return false;
    memcpy(d, src, len);
    return pc_take(p, off, len, d);
}

/* The non-zero parts of buf (zero runs of PP_ZERO_RUN bytes or more are
 * left to the image's zero fill). */
static bool pc_sparse(plan *p, uint32_t off, const uint8_t *buf, uint32_t len)
{
    uint32_t i = 0;
    while (i < len) {
        while (i < len && buf[i] == 0)
            i++;
        if (i == len)
            break;
        uint32_t j = i, zeros = 0;
        while (j < len && zeros < PP_ZERO_RUN) {
            zeros = buf[j] ? 0 : zeros + 1;
            j++;
        }
        const uint32_t end = j - zeros;
        if (!pc_copy(p, off + i, end - i, buf + i))
            return false;
        i = j;
    }
    return true;
}

/* Every known byte of [from, to). */
static bool pc_known(plan *p, uint32_t from, uint32_t to)
{
    const pp_bytes *kb = p->kb;
    for (uint32_t i = first_ending_at(kb, from); i < kb->n && kb->s[i].off < to; i++) {
        const uint32_t a = kb->s[i].off > from ? kb->s[i].off : from;
        const uint32_t e = span_end(&kb->s[i]);
        const uint32_t b = e < to ? e : to;
        if (a < b && !pc_copy(p, a, b - a, kb->s[i].data + (a - kb->s[i].off)))
            return false;
    }
    return true;
}

/* CRC-32 of the image over [from, to). */
static uint32_t image_crc(const pp_piece *pc, uint32_t n, uint32_t from, uint32_t to)
{
    static const uint8_t zeros[4096];
    uint32_t crc = 0, at = from;
    for (uint32_t i = 0; i < n && at < to; i++) {
        const uint32_t a = pc[i].off, e = pc[i].off + pc[i].len;
        if (e <= at)
            continue;
        const uint32_t zs = a < to ? a : to;
        while (at < zs) {
            const uint32_t c = zs - at < sizeof zeros ? zs - at : (uint32_t)sizeof zeros;
            crc = pq_crc32(crc, zeros, c);
            at += c;
        }
        const uint32_t b = e < to ? e : to;
        if (at < b) {
            crc = pq_crc32(crc, pc[i].data + (at - a), b - at);
            at = b;
        }
    }
    while (at < to) {
        const uint32_t c = to - at < sizeof zeros ? to - at : (uint32_t)sizeof zeros;
        crc = pq_crc32(crc, zeros, c);
        at += c;
    }
    return crc;
}

/* ---------------- streams ---------------- */

static void stream_identity(stream *s, uint32_t start, uint32_t clen, uint64_t dlen)
{
    memset(s, 0, sizeof *s);
    s->start = start;
    s->clen = clen;
    s->dlen = dlen;
    s->complete = true;
}

static void stream_zstd(stream *s, uint32_t start, uint32_t clen, uint64_t dlen)
{
    memset(s, 0, sizeof *s);
    s->zstd = true;
    s->start = start;
    s->clen = clen;
    s->dlen = dlen;
}

static uint64_t le_n(const uint8_t *p, unsigned n)
{
    uint64_t v = 0;
    for (unsigned i = n; i-- > 0;)
        v = (v << 8) | p[i];
    return v;
}

/* Walk the frame header and the block headers known so far; ask for the
 * next one (and, while the layout looks like full-size blocks, every later
 * one). OK once every block is walked. */
static st stream_walk(plan *p, stream *s)
{
    if (!s->zstd) {
        if (s->clen != s->dlen)
            return real(p, "layout: %u bytes stored, %llu uncompressed in an uncompressed section",
                        s->clen, (unsigned long long)s->dlen);
        return ST_OK;
    }
    if (!s->fh_ok) {
        const uint32_t probe = s->clen < ZSTD_FRAME_HEADER_MAX ? s->clen : ZSTD_FRAME_HEADER_MAX;
        const uint32_t have = known_run(p->kb, s->start);
        if (s->clen < 8)
            return real(p, "zstd: %u-byte section cannot hold a frame", s->clen);
        if (have < 5)
            return need(p, s->start, probe);
        const uint8_t *f = pp_bytes_get(p->kb, s->start, have < probe ? have : probe);
        const uint32_t magic = (uint32_t)le_n(f, 4);
        if ((magic & 0xFFFFFFF0u) == ZSTD_SKIPPABLE_MAGIC)
            return real(p, "zstd: skippable frame first");
        if (magic != ZSTD_MAGIC)
            return real(p, "zstd: not a zstd frame (magic 0x%08x)", magic);
        const uint8_t fhd = f[4];
        const unsigned fcs_flag = fhd >> 6, single = (fhd >> 5) & 1;
        static const unsigned did_sizes[4] = {0, 1, 2, 4};
        const unsigned did_size = did_sizes[fhd & 3];
        const unsigned fcs_size = fcs_flag == 0 ? single : 1u << fcs_flag;
        const uint32_t fh_len = 5 + (single ? 0 : 1) + did_size + fcs_size;
        if (fhd & 0x08)
            return real(p, "zstd: frame header reserved bit set");
        if ((fhd >> 2) & 1)
            return real(p, "zstd: content checksum (zeroed content would not match it)");
        if (have < fh_len)
            return need(p, s->start, fh_len);
        f = pp_bytes_get(p->kb, s->start, fh_len);
        uint32_t pos = 5;
        uint64_t window = 0;
        if (!single) {
            const uint8_t wd = f[pos++];
            const uint64_t base = 1ull << (10 + (wd >> 3));
            window = base + (base / 8) * (wd & 7);
        }
        if (did_size) {
            const uint32_t did = (uint32_t)le_n(f + pos, did_size);
            if (did)
                return real(p, "zstd: dictionary id %u", did);
            pos += did_size;
        }
        if (fcs_size) {
            const uint64_t fcs = le_n(f + pos, fcs_size) + (fcs_size == 2 ? 256 : 0);
            if (fcs != s->dlen)
                return real(p, "zstd: frame content size %llu, page says %llu",
                            (unsigned long long)fcs, (unsigned long long)s->dlen);
            if (single)
                window = fcs;
        }
        s->bmax = window < ZSTD_BLOCK_MAX ? (uint32_t)window : ZSTD_BLOCK_MAX;
        s->fh_len = fh_len;
        /* Raw blocks only: stored = frame header + 3 per block + content. */
        if ((uint64_t)s->clen < (uint64_t)fh_len + s->dlen + 3)
            return real(p, "zstd: compressed blocks (%u bytes hold %llu)", s->clen,
                        (unsigned long long)s->dlen);
        const uint64_t over = s->clen - fh_len - s->dlen;
        if (over % 3)
            return real(p, "zstd: compressed blocks (%u bytes hold %llu)", s->clen,
                        (unsigned long long)s->dlen);
        if (s->bmax == 0 && s->dlen > 0)
            return real(p, "zstd: zero window for %llu bytes", (unsigned long long)s->dlen);
        const uint64_t min_blocks = s->dlen ? (s->dlen + s->bmax - 1) / s->bmax : 1;
        if (over / 3 < min_blocks || over / 3 > PP_MAX_BLOCKS)
            return real(p, "zstd: frame of %u bytes cannot be %llu raw blocks", s->clen,
                        (unsigned long long)(over / 3));
        s->expect = (uint32_t)(over / 3);
        s->full = s->expect == min_blocks;
        s->fh_ok = true;
        s->next_hdr = s->start + fh_len;
        s->next_doff = 0;
    }
    const uint32_t end = s->start + s->clen;
    while (!s->complete) {
        const uint32_t pos = s->next_hdr;
        if (end - pos < 3)
            return real(p, "zstd: frame truncated at section byte %u", pos - s->start);
        const uint8_t *hb = pp_bytes_get(p->kb, pos, 3);
        if (!hb) {
            need(p, pos, 3);
            if (s->full)
                for (uint32_t j = 1; j < s->expect - s->nb; j++)
                    need(p, pos + (uint64_t)j * (3 + s->bmax), 3);
            return ST_NEED;
        }
        const uint32_t bh = (uint32_t)le_n(hb, 3);
        const bool last = bh & 1;
        const unsigned type = (bh >> 1) & 3;
        const uint32_t size = bh >> 3;
        if (type != 0)
            return real(p, "zstd: %s block at section byte %u",
                        type == 1 ? "RLE" : type == 2 ? "compressed" : "reserved", pos - s->start);
        if (size > s->bmax)
            return real(p, "zstd: block of %u bytes over the maximum %u", size, s->bmax);
        if (size > end - pos - 3)
            return real(p, "zstd: block of %u bytes runs past the section", size);
        if (s->nb >= s->expect)
            return real(p, "zstd: more blocks than the section size allows");
        if (!sv_grow((void **)&s->b, &s->capb, (size_t)s->nb + 1, sizeof *s->b, 8, UINT32_MAX))
            return nomem(p, "zstd blocks");
        s->b[s->nb++] = (zblock){pos, size, s->next_doff};
        s->next_hdr = pos + 3 + size;
        s->next_doff += size;
        if (s->next_doff > s->dlen)
            return real(p, "zstd: blocks hold more than %llu bytes", (unsigned long long)s->dlen);
        if (last) {
            if (s->next_hdr != end)
                return real(p, "zstd: %u bytes after the frame", end - s->next_hdr);
            if (s->next_doff != s->dlen)
                return real(p, "zstd: frame holds %llu bytes, page says %llu",
                            (unsigned long long)s->next_doff, (unsigned long long)s->dlen);
            s->complete = true;
        } else if (size != s->bmax) {
            s->full = false;
        }
    }
    return ST_OK;
}

/* Page ranges holding decompressed bytes [d, d+len) into r. With predict,
 * blocks not walked yet are assumed full-size (only to ask for bytes early).
 * False when some part cannot be located. */
static bool stream_map(const stream *s, uint64_t d, uint64_t len, bool predict, rvec *r)
{
    if (d > s->dlen || len > s->dlen - d)
        return false;
    if (!s->zstd)
        return rv_push(r, s->start + d, len);
    while (len > 0) {
        uint32_t hdr, size;
        uint64_t doff;
        if (d < s->next_doff) {
            uint32_t lo = 0, hi = s->nb;
            while (hi - lo > 1) {
                const uint32_t mid = lo + (hi - lo) / 2;
                if (s->b[mid].doff <= d)
                    lo = mid;
                else
                    hi = mid;
            }
            hdr = s->b[lo].hdr;
            size = s->b[lo].size;
            doff = s->b[lo].doff;
        } else if (predict && s->fh_ok && s->full && !s->complete) {
            const uint64_t idx = (d - s->next_doff) / s->bmax;
            doff = s->next_doff + idx * s->bmax;
            const uint64_t h = s->next_hdr + idx * (3ull + s->bmax);
            const uint64_t left = s->dlen - doff;
            size = left < s->bmax ? (uint32_t)left : s->bmax;
            if (h + 3 + size > (uint64_t)s->start + s->clen)
                return false;
            hdr = (uint32_t)h;
        } else {
            return false;
        }
        if (size == 0)
            return false;
        const uint64_t in = d - doff, take = size - in < len ? size - in : len;
        if (!rv_push(r, hdr + 3 + in, take))
            return false;
        d += take;
        len -= take;
    }
    return true;
}

/* Ask for decompressed bytes [d, d+len): OK when known, NEED (maybe with
 * nothing asked when they cannot be located yet: the walk asked for block
 * headers). */
static st stream_want(plan *p, const stream *s, uint64_t d, uint64_t len, bool predict)
{
    rvec r = {0};
    if (!stream_map(s, d, len, predict, &r)) {
        free(r.v);
        return ST_NEED;
    }
    st res = ST_OK;
    for (uint32_t i = 0; i < r.n; i++)
        if (want(p, r.v[i].off, r.v[i].len) != ST_OK)
            res = p->out->outcome == PP_REAL ? ST_REAL : ST_NEED;
    free(r.v);
    return res;
}

/* Copy decompressed bytes [d, d+len) when all are known. */
static bool stream_copy(const plan *p, const stream *s, uint64_t d, uint64_t len, uint8_t *dst)
{
    rvec r = {0};
    bool ok = stream_map(s, d, len, false, &r);
    uint64_t at = 0;
    for (uint32_t i = 0; ok && i < r.n; i++) {
        const uint8_t *src = pp_bytes_get(p->kb, r.v[i].off, r.v[i].len);
        if (!src)
            ok = false;
        else
            memcpy(dst + at, src, r.v[i].len);
        at += r.v[i].len;
    }
    free(r.v);
    return ok;
}

/* Copy the known decompressed bytes from d on, up to max; returns the count. */
static uint32_t stream_prefix(const plan *p, const stream *s, uint64_t d, uint32_t max,
                              uint8_t *dst)
{
    if (d >= s->dlen)
        return 0;
    if (max > s->dlen - d)
        max = (uint32_t)(s->dlen - d);
    rvec r = {0};
    uint32_t got = 0;
    if (stream_map(s, d, max, false, &r) || r.n > 0)
        for (uint32_t i = 0; i < r.n; i++) {
            const uint32_t have = known_run(p->kb, r.v[i].off);
            const uint32_t take = have < r.v[i].len ? have : r.v[i].len;
            if (take)
                memcpy(dst + got, pp_bytes_get(p->kb, r.v[i].off, take), take);
            got += take;
            if (take < r.v[i].len)
                break;
        }
    free(r.v);
    return got;
}

/* ---------------- levels ---------------- */

static bool vr_push(plan *p, uint32_t a, uint32_t b)
{
    if (a == b)
        return true;
    if (p->n_vr && p->vr[p->n_vr - 1].b == a) {
        p->vr[p->n_vr - 1].b = b;
        return true;
    }
    if (!sv_grow((void **)&p->vr, &p->cap_vr, (size_t)p->n_vr + 1, sizeof *p->vr, 16,
                 UINT32_MAX))
        return false;
    p->vr[p->n_vr++] = (vrange){a, b};
    return true;
}

/* Fetch the definition level runs (none when max_def is 0): V1 in the
 * section after a 4-byte length, V2 the real bytes before the section. Sets
 * p->lev, p->lev_len and p->vstart. */
static st levels_fetch(plan *p, const stream *s)
{
    p->vstart = 0;
    free(p->lev);
    p->lev = NULL;
    p->lev_len = 0;
    if (p->in->col.max_def == 0)
        return ST_OK;
    if (p->v2) {
        const uint8_t *b = pp_bytes_get(p->kb, p->hl + p->rl, p->dl);
        if (!b)
            return need(p, p->hl + p->rl, p->dl);
        p->lev = malloc(p->dl ? p->dl : 1);
        if (!p->lev)
            return nomem(p, "levels");
        memcpy(p->lev, b, p->dl);
        p->lev_len = p->dl;
        return ST_OK;
    }
    if (p->info.def_level_encoding != PQ_ENC_RLE)
        return real(p, "levels: V1 definition levels encoded %s",
                    pq_encoding_name(p->info.def_level_encoding));
    uint8_t lb[4];
    if (!stream_copy(p, s, 0, 4, lb)) {
        const st r = stream_want(p, s, 0, 4, true);
        return r == ST_OK ? ST_NEED : r;
    }
    const uint32_t L = get_le32(lb);
    if (L > s->dlen - 4)
        return real(p, "levels: length %u runs past the %llu-byte body", L,
                    (unsigned long long)s->dlen);
    p->lev = malloc(L ? L : 1);
    if (!p->lev)
        return nomem(p, "levels");
    if (!stream_copy(p, s, 4, L, p->lev)) {
        free(p->lev);
        p->lev = NULL;
        const st r = stream_want(p, s, 4, L, true);
        return r == ST_OK ? ST_NEED : r;
    }
    p->lev_len = L;
    p->vstart = 4 + L;
    return ST_OK;
}

/* Decode the levels: p->k non-null entries, and the non-null value ranges
 * of the selected rows. */
static st levels_scan(plan *p)
{
    const pp_input *in = p->in;
    p->n_vr = 0;
    p->k_sel = 0;
    if (in->col.max_def == 0) {
        p->k = p->n;
        for (uint32_t r = 0; r < in->n_rows; r++)
            if (!vr_push(p, in->rows[r].off, in->rows[r].off + in->rows[r].len))
                return nomem(p, "value ranges");
    } else {
        pq_rle_decoder d;
        pqd_error err;
        if (pq_rle_init(&d, p->lev, p->lev_len, 1, &err) != PQD_OK)
            return real(p, "levels: %s", err.msg);
        uint8_t buf[4096];
        uint32_t i = 0, nn = 0, r = 0, a = 0;
        bool inside = false;
        while (i < p->n) {
            const uint32_t c = p->n - i < sizeof buf ? p->n - i : (uint32_t)sizeof buf;
            if (pq_rle_get_u8(&d, buf, c, &err) != PQD_OK)
                return real(p, "levels: %s", err.msg);
            for (uint32_t j = 0; j < c; j++, i++) {
                if (!inside && r < in->n_rows && i == in->rows[r].off) {
                    inside = true;
                    a = nn;
                }
                nn += buf[j];
                if (inside && i + 1 == in->rows[r].off + in->rows[r].len) {
                    if (!vr_push(p, a, nn))
                        return nomem(p, "value ranges");
                    inside = false;
                    r++;
                }
            }
        }
        p->k = nn;
    }
    for (uint32_t i = 0; i < p->n_vr; i++)
        p->k_sel += p->vr[i].b - p->vr[i].a;
    if (p->v2 && (int64_t)p->n - p->k != p->h.v2.num_nulls)
        return real(p, "layout: levels hold %u nulls, the V2 header says %d", p->n - p->k,
                    p->h.v2.num_nulls);
    return ST_OK;
}

/* ---------------- DELTA_BINARY_PACKED lengths ---------------- */

/* Walk the lengths stream at decompressed offset d0 (count values, int32)
 * up to its end, asking for the rest of it (estimated from the blocks
 * walked) when its bytes run out. */
static st delta_walk(plan *p, const stream *s, uint64_t d0, uint64_t count, uint64_t *end)
{
    const uint64_t limit = s->dlen;
    uint8_t hb[64];
    uint64_t pos = d0;
    const uint32_t hmax = limit - pos < sizeof hb ? (uint32_t)(limit - pos) : (uint32_t)sizeof hb;
    const uint32_t got = stream_prefix(p, s, pos, hmax, hb);
    size_t q = 0;
    uint32_t block, mb;
    uint64_t total, first;
    if (!pq_read_uleb32(hb, got, &q, &block) || !pq_read_uleb32(hb, got, &q, &mb) ||
        !pq_read_uleb64(hb, got, &q, &total) || !pq_read_uleb64(hb, got, &q, &first)) {
        if (got < hmax) {
            const uint64_t ask = limit - pos < PP_DELTA_PROBE ? limit - pos : PP_DELTA_PROBE;
            const st r = stream_want(p, s, pos, ask, false);
            return r == ST_OK ? real(p, "encoding: DELTA header unreadable") : r;
        }
        return real(p, "encoding: DELTA header malformed");
    }
    (void)first;
    if (block == 0 || block % 128 || block > PQ_DELTA_MAX_BLOCK_SIZE || mb == 0 || block % mb ||
        (block / mb) % 32)
        return real(p, "encoding: DELTA block %u / %u miniblocks", block, mb);
    if (total != count)
        return real(p, "encoding: DELTA holds %llu values, %llu expected",
                    (unsigned long long)total, (unsigned long long)count);
    const uint32_t vpm = block / mb;
    pos += q;
    const uint64_t first_block = pos;
    uint64_t left = total ? total - 1 : 0, walked = 0;
    uint8_t *bb = malloc((size_t)mb + 10);
    if (!bb)
        return nomem(p, "DELTA block header");
    st res = ST_OK;
    while (left > 0) {
        const uint64_t bmax = 10 + (uint64_t)mb;
        const uint32_t want_n = limit - pos < bmax ? (uint32_t)(limit - pos) : (uint32_t)bmax;
        const uint32_t have = stream_prefix(p, s, pos, want_n, bb);
        size_t bq = 0;
        uint64_t md;
        const bool md_ok = pq_read_uleb64(bb, have, &bq, &md);
        if (!md_ok || have - bq < mb) {
            if (have < want_n) {
                /* The rest of the stream, estimated from the blocks walked
                 * (with a quarter more), at least PP_DELTA_PROBE. */
                const uint64_t blocks_left = (left + block - 1) / block;
                uint64_t ask = walked ? (pos - first_block) / walked * blocks_left : 0;
                ask += ask / 4;
                ask = ask < PP_DELTA_PROBE ? PP_DELTA_PROBE : ask;
                ask = ask > limit - pos ? limit - pos : ask;
                res = stream_want(p, s, pos, ask, false);
                if (res == ST_OK)
                    res = real(p, "encoding: DELTA block unreadable");
            } else {
                res = real(p, "encoding: DELTA block header malformed");
            }
            break;
        }
        uint64_t bytes = 0;
        for (uint32_t m = 0; m < mb && left > 0; m++) {
            const unsigned w = bb[bq + m];
            if (w > 32) {
                res = real(p, "encoding: DELTA miniblock width %u", w);
                break;
            }
            bytes += (uint64_t)vpm * w / 8;
            left -= left < vpm ? left : vpm;
        }
        if (res != ST_OK)
            break;
        pos += bq + mb + bytes;
        walked++;
        if (pos > limit) {
            res = real(p, "encoding: DELTA stream runs past the values");
            break;
        }
    }
    free(bb);
    *end = pos;
    return res;
}

/* Decode the lengths stream [d0, end) into prefix sums pre[0..k] (NEED
 * while some of its bytes are not known: the walk reads block headers only). */
static st delta_lengths(plan *p, const stream *s, uint64_t d0, uint64_t end, uint64_t **pre_out)
{
    const uint64_t slen = end - d0;
    const st ws = stream_want(p, s, d0, slen, false);
    if (ws != ST_OK)
        return ws;
    uint8_t *buf = malloc(slen ? slen : 1);
    int32_t *lens = malloc(((size_t)p->k + 1) * sizeof *lens);
    uint64_t *pre = malloc(((size_t)p->k + 1) * sizeof *pre);
    st res = ST_OK;
    if (!buf || !lens || !pre) {
        res = nomem(p, "lengths");
        goto out;
    }
    if (!stream_copy(p, s, d0, slen, buf)) {
        res = real(p, "layout: lengths stream not known after its walk");
        goto out;
    }
    size_t used = 0;
    pqd_error err;
    if (pq_delta_decode_i32(buf, slen, p->k, lens, &used, &err) != PQD_OK) {
        res = real(p, "encoding: DELTA lengths: %s", err.msg);
        goto out;
    }
    if (used != slen) {
        res = real(p, "encoding: DELTA lengths use %zu of %llu bytes", used,
                   (unsigned long long)slen);
        goto out;
    }
    pre[0] = 0;
    for (uint32_t i = 0; i < p->k; i++) {
        if (lens[i] < 0) {
            res = real(p, "encoding: negative length %d", lens[i]);
            goto out;
        }
        pre[i + 1] = pre[i] + (uint32_t)lens[i];
    }
out:
    free(buf);
    free(lens);
    if (res == ST_OK)
        *pre_out = pre;
    else
        free(pre);
    return res;
}

/* ---------------- header ---------------- */

static st step_header(plan *p)
{
    const uint32_t have = known_run(p->kb, 0);
    const uint32_t probe = p->total < PP_HEADER_PROBE ? p->total : PP_HEADER_PROBE;
    if (have == 0)
        return need(p, 0, probe);
    tc_error e;
    size_t hl = 0;
    const tc_status ts = pq_page_header_parse(pp_bytes_get(p->kb, 0, have), have, &p->h, &hl, &e);
    /* Cut short, or a length / count past the bytes known: more may help. */
    if (ts == TC_E_TRUNCATED || ts == TC_E_LENGTH || ts == TC_E_COUNT || ts == TC_E_NEED_MORE) {
        if (have >= p->total)
            return real(p, "layout: page header runs past the %u-byte page", p->total);
        uint64_t want_len = (uint64_t)have * 2;
        want_len = want_len < probe ? probe : want_len;
        want_len = want_len > p->total ? p->total : want_len;
        return need(p, have, want_len - have);
    }
    if (ts != TC_OK)
        return real(p, "layout: page header: %s", e.msg);
    const pq_page_header *h = &p->h;
    if (h->type != PQ_PAGE_DATA && h->type != PQ_PAGE_DATA_V2)
        return real(p, "layout: page is a %s", pq_page_type_name(h->type));
    if ((uint64_t)hl + (uint64_t)h->compressed_page_size != p->total)
        return real(p, "layout: header %zu + body %d bytes, the page map says %u", hl,
                    h->compressed_page_size, p->total);
    pqd_error de;
    if (pq_data_page_info_from_header(h, &p->info, &de) != PQD_OK)
        return real(p, "layout: %s", de.msg);
    p->hl = (uint32_t)hl;
    p->body = (uint32_t)h->compressed_page_size;
    if (h->uncompressed_page_size < 0)
        return real(p, "layout: negative uncompressed size");
    p->unc = (uint32_t)h->uncompressed_page_size;
    p->v2 = h->type == PQ_PAGE_DATA_V2;
    p->enc = p->info.encoding;
    if (p->info.num_values < 0)
        return real(p, "layout: negative num_values");
    p->n = (uint32_t)p->info.num_values;
    const int64_t rows = p->v2 ? h->v2.num_rows : h->data.num_values;
    if (rows != p->pg->num_rows || p->n != p->pg->num_rows)
        return real(p, "layout: header holds %d values / %lld rows, the page map %lld rows",
                    p->info.num_values, (long long)rows, (long long)p->pg->num_rows);
    if (p->pg->has_header && (p->pg->header_len != p->hl || p->pg->page_type != h->type))
        return real(p, "layout: header differs from the page map's");
    if (p->v2) {
        if (h->v2.repetition_levels_byte_length < 0 || h->v2.definition_levels_byte_length < 0)
            return real(p, "layout: negative V2 level lengths");
        p->rl = (uint32_t)h->v2.repetition_levels_byte_length;
        p->dl = (uint32_t)h->v2.definition_levels_byte_length;
        p->lv = p->rl + p->dl;
        if (p->lv > p->body || p->lv > p->unc)
            return real(p, "layout: V2 levels past the body");
        if (p->rl != 0)
            return real(p, "levels: %u bytes of repetition levels in a flat column", p->rl);
        if (p->in->col.max_def == 0 && p->dl != 0)
            return real(p, "levels: %u bytes of definition levels in a required column", p->dl);
        if (p->in->col.max_def == 1 && p->dl == 0 && p->n > 0)
            return real(p, "levels: no definition levels in an optional column");
        p->compressed = p->in->col.codec != PQ_CODEC_UNCOMPRESSED && h->v2.is_compressed;
    } else {
        p->compressed = p->in->col.codec != PQ_CODEC_UNCOMPRESSED;
    }
    if (!p->compressed && p->body != p->unc)
        return real(p, "layout: uncompressed page stores %u bytes but says %u", p->body, p->unc);
    return ST_OK;
}

/* ---------------- image checks ---------------- */

/* ---------------- CRC patch ---------------- */

/* When the new CRC does not fit the header's field, the image keeps the old
 * CRC instead: low-order bits of zero bytes no reader depends on (the low
 * byte of unselected zero values, zero string bytes, zstd padding) are
 * flipped so that the body's CRC-32 comes out unchanged. CRC-32 is linear
 * over GF(2), so the flips solve a 32-row linear system. Only low bits of
 * zero bytes are used: the values become tiny (0..63), strings stay ASCII. */
static void patch_add(plan *p, uint32_t off, uint8_t bits)
{
    if (p->n_patch < PATCH_MAX_BYTES && off >= p->hl && off < p->total)
        p->patch[p->n_patch++] = (patch_byte){off, bits};
}

static int piece_cmp(const void *a, const void *b)
{
    const pp_piece *x = a, *y = b;
    return x->off < y->off ? -1 : x->off > y->off;
}

/* Set image bytes [off, off+n): in the pieces holding them, new pieces for
 * the others. */
static bool image_set(plan *p, uint32_t off, const uint8_t *src, uint32_t n)
{
    const uint32_t before = p->n_pc;
    for (uint32_t k = 0; k < n; k++) {
        bool done = false;
        for (uint32_t i = 0; i < before && !done; i++)
            if (p->pc[i].off <= off + k && off + k < p->pc[i].off + p->pc[i].len) {
                p->pc[i].data[off + k - p->pc[i].off] = src[k];
                done = true;
            }
        if (!done && !pc_copy(p, off + k, 1, src + k))
            return false;
    }
    qsort(p->pc, p->n_pc, sizeof *p->pc, piece_cmp);
    return true;
}

/* Raw CRC-32 register update (no pre/post inversion) over one byte. */
static uint32_t crc_step(uint32_t s, uint8_t b)
{
    for (int k = 0; k < 8; k++) {
        const uint32_t x = (s ^ b) & 1;
        s = (s >> 1) ^ (x ? 0xEDB88320u : 0);
        b >>= 1;
    }
    return s;
}

/* GF(2) 32x32 matrices as 32 column vectors (zlib's crc32_combine). */
static uint32_t gf2_times(const uint32_t *mat, uint32_t vec)
{
    uint32_t sum = 0;
    for (int i = 0; vec; i++, vec >>= 1)
        if (vec & 1)
            sum ^= mat[i];
    return sum;
}

static void gf2_square(uint32_t *sq, const uint32_t *mat)
{
    for (int i = 0; i < 32; i++)
        sq[i] = gf2_times(mat, mat[i]);
}

/* The register after n more zero bytes (linear part only). */
static uint32_t crc_zeros(uint32_t s, uint64_t n)
{
    uint32_t odd[32], even[32];
    odd[0] = 0xEDB88320u; /* one zero bit */
    for (int i = 1; i < 32; i++)
        odd[i] = 1u << (i - 1);
    gf2_square(even, odd); /* two bits */
    gf2_square(odd, even); /* four bits */
    gf2_square(even, odd); /* one byte */
    uint32_t *cur = even, *other = odd;
    while (n) {
        if (n & 1)
            s = gf2_times(cur, s);
        n >>= 1;
        gf2_square(other, cur);
        uint32_t *t = cur;
        cur = other;
        other = t;
    }
    return s;
}

static st crc_patch(plan *p)
{
    if (p->n_patch == 0)
        return ST_REAL;
    const uint32_t have = image_crc(p->pc, p->n_pc, p->hl, p->total);
    const uint32_t want_delta = have ^ p->h.crc;
    /* Column i: how flipping candidate bit i changes the CRC. */
    uint32_t col[PATCH_MAX_BYTES * 8];
    uint32_t where[PATCH_MAX_BYTES * 8];
    uint8_t bit[PATCH_MAX_BYTES * 8];
    unsigned m = 0;
    for (uint32_t i = 0; i < p->n_patch; i++)
        for (unsigned b = 0; b < 8 && m < 64; b++)
            if (p->patch[i].bits >> b & 1) {
                const uint32_t off = p->patch[i].off;
                col[m] = crc_zeros(crc_step(0, (uint8_t)(1u << b)), p->total - off - 1);
                where[m] = off;
                bit[m] = (uint8_t)b;
                m++;
            }
    /* Gaussian elimination on [col | target]: rows are CRC bits. */
    uint64_t rows[32]; /* bit j of row r: candidate j's effect on CRC bit r */
    uint32_t rhs = want_delta;
    for (int r = 0; r < 32; r++) {
        rows[r] = 0;
        for (unsigned j = 0; j < m; j++)
            rows[r] |= (uint64_t)((col[j] >> r) & 1) << j;
    }
    int pivot_col[32];
    int rank = 0;
    for (unsigned j = 0; j < m && rank < 32; j++) {
        int r = rank;
        while (r < 32 && !((rows[r] >> j) & 1))
            r++;
        if (r == 32)
            continue;
        const uint64_t tr = rows[r];
        rows[r] = rows[rank];
        rows[rank] = tr;
        const uint32_t bt = (rhs >> r) & 1, bk = (rhs >> rank) & 1;
        rhs = (rhs & ~(1u << r) & ~(1u << rank)) | (bt << rank) | (bk << r);
        for (int q = 0; q < 32; q++)
            if (q != rank && ((rows[q] >> j) & 1)) {
                rows[q] ^= rows[rank];
                rhs ^= ((rhs >> rank) & 1) << q;
            }
        pivot_col[rank++] = (int)j;
    }
    for (int r = rank; r < 32; r++)
        if ((rhs >> r) & 1)
            return ST_REAL; /* no combination of these bits reaches the old CRC */
    for (int r = 0; r < rank; r++)
        if ((rhs >> r) & 1) {
            const unsigned j = (unsigned)pivot_col[r];
            uint8_t v;
            pp_image_read(p->pc, p->n_pc, where[j], 1, &v);
            v ^= (uint8_t)(1u << bit[j]);
            if (!image_set(p, where[j], &v, 1))
                return nomem(p, "CRC patch");
        }
    return image_crc(p->pc, p->n_pc, p->hl, p->total) == p->h.crc ? ST_OK : ST_REAL;
}

/* Sort pieces, check they are disjoint and inside the page, rewrite the CRC
 * and decode the image once. */
static st image_finish(plan *p)
{
    for (uint32_t i = 1; i < p->n_pc; i++)
        if (p->pc[i].off < p->pc[i - 1].off + p->pc[i - 1].len)
            return real(p, "verify: pieces overlap at %u", p->pc[i].off);
    if (p->n_pc == 0 || p->pc[0].off != 0 || p->pc[0].len < p->hl ||
        p->pc[p->n_pc - 1].off + p->pc[p->n_pc - 1].len > p->total)
        return real(p, "verify: pieces do not hold the header or leave the page");
    if (p->h.has_crc) {
        const uint32_t crc = image_crc(p->pc, p->n_pc, p->hl, p->total);
        if (crc != p->h.crc && !pq_crc_rewrite(p->pc[0].data, p->hl, &p->h, crc)) {
            const st cs = crc_patch(p);
            if (cs != ST_OK)
                return cs == ST_REAL && p->out->outcome != PP_REAL
                           ? real(p, "crc: new CRC 0x%08x does not fit the %u-byte field and "
                                     "no free bytes to keep the old one",
                                  crc, p->h.crc_len)
                           : cs;
        }
    }
    /* Decode the image. */
    uint8_t *bodybuf = malloc(p->body ? p->body : 1);
    pq_decode_limits lim;
    pq_decode_limits_default(&lim);
    lim.materialize_dict = false;
    pq_decoder *dec = pq_decoder_new(&lim);
    st res = ST_OK;
    if (!bodybuf || !dec) {
        res = nomem(p, "verification");
        goto out;
    }
    pp_image_read(p->pc, p->n_pc, p->hl, p->body, bodybuf);
    const int64_t w = pq_value_width(p->in->col.type, p->in->col.type_length);
    uint8_t zero_entry[16] = {0};
    uint32_t zero_offsets[2] = {0, 0};
    uint8_t *big_entry = NULL;
    pq_dictionary dict = {.type = p->in->col.type, .width = w > 0 ? (uint32_t)w : 0, .count = 1};
    if (w > (int64_t)sizeof zero_entry) {
        big_entry = calloc(1, (size_t)w);
        if (!big_entry) {
            res = nomem(p, "verification");
            goto out;
        }
        dict.values = big_entry;
    } else {
        dict.values = zero_entry;
    }
    dict.offsets = zero_offsets;
    dict.data = zero_entry;
    pq_page_values pv;
    pqd_error err;
    const pqd_status ds =
        pq_decode_data_page(dec, &p->in->col, &p->info, bodybuf, p->body, &dict, &pv, &err);
    free(big_entry);
    if (ds != PQD_OK) {
        res = real(p, "verify: image does not decode: %s", err.msg);
        goto out;
    }
    if (pv.num_values != p->n || pv.num_non_null != p->expect_k)
        res = real(p, "verify: image decodes to %u values, %u non-null (expected %u, %u)",
                   pv.num_values, pv.num_non_null, p->n, p->expect_k);
out:
    free(bodybuf);
    pq_decoder_free(dec);
    return res;
}

/* ---------------- partial reads ---------------- */

static bool partial_encoding(const plan *p)
{
    const pq_physical_type t = p->in->col.type;
    switch (p->enc) {
    case PQ_ENC_PLAIN: return t != PQ_BYTE_ARRAY;
    case PQ_ENC_BYTE_STREAM_SPLIT: return bss_type(t);
    case PQ_ENC_DELTA_LENGTH_BYTE_ARRAY: return t == PQ_BYTE_ARRAY;
    default: return false;
    }
}

static st run_synth_plain(plan *p);
static st run_synth_compressed(plan *p);

/* Low bits of zero bytes of unselected values, where a CRC patch may go:
 * the low-order byte of unselected values not fetched (little-endian types:
 * the first; FIXED_LEN_BYTE_ARRAY, big-endian decimals: the last), the
 * first data byte of unselected strings, whole bytes of unselected
 * booleans. */
static void partial_patch_bytes(plan *p, const stream *s, uint64_t vs, uint64_t lstream,
                                const uint64_t *pre)
{
    const pq_physical_type t = p->in->col.type;
    const bool bss = p->enc == PQ_ENC_BYTE_STREAM_SPLIT, flba = t == PQ_FIXED_LEN_BYTE_ARRAY;
    uint32_t prev = 0, tries = 0;
    for (uint32_t i = 0; i <= p->n_vr && p->n_patch < PATCH_MAX_BYTES && tries < 4096; i++) {
        const uint64_t a = prev, b = i < p->n_vr ? p->vr[i].a : p->k;
        if (i < p->n_vr)
            prev = p->vr[i].b;
        for (uint64_t v = a; v < b && p->n_patch < PATCH_MAX_BYTES && tries < 4096; v++) {
            uint64_t d;
            uint8_t bits = 0x3f;
            tries++;
            if (pre) {
                if (pre[v + 1] == pre[v])
                    continue;
                d = vs + lstream + pre[v];
            } else if (bss) {
                d = vs + (uint64_t)(flba ? p->width - 1 : 0) * p->k + v;
            } else if (t == PQ_BOOLEAN) {
                if (v % 8 || v + 8 > b)
                    continue;
                d = vs + v / 8;
                bits = 0xff;
            } else {
                d = vs + v * p->width + (flba ? p->width - 1 : 0);
            }
            rvec r = {0};
            if (stream_map(s, d, 1, false, &r) && r.n == 1 && !pp_bytes_get(p->kb, r.v[0].off, 1))
                patch_add(p, r.v[0].off, bits);
            free(r.v);
        }
    }
}

/* Selected rows, values not readable in part: when the real levels can be
 * read (V2, or V1 not compressed) and show every selected row null, the page
 * is rebuilt like an unselected one with its real levels. */
static st partial_all_null(plan *p)
{
    const bool levels_readable = p->v2 || !p->compressed;
    if (p->in->col.max_def != 1 || !levels_readable ||
        (p->compressed && p->in->col.codec != PQ_CODEC_ZSTD &&
         p->in->col.codec != PQ_CODEC_SNAPPY))
        goto no;
    stream_identity(&p->s, p->hl, p->body, p->unc);
    const st ls = levels_fetch(p, &p->s);
    if (ls != ST_OK)
        return ls;
    if (levels_scan(p) == ST_REAL)
        return ST_REAL;
    if (p->k_sel == 0)
        return p->compressed ? run_synth_compressed(p) : run_synth_plain(p);
no:
    if (partial_encoding(p))
        return real(p, "codec: %s values of selected rows", pq_codec_name(p->in->col.codec));
    return real(p, "encoding: %s %s values of selected rows", pq_encoding_name(p->enc),
                pq_physical_type_name(p->in->col.type));
}

static st run_partial(plan *p)
{
    if (!partial_encoding(p) ||
        (p->compressed && p->in->col.codec != PQ_CODEC_ZSTD))
        return partial_all_null(p);
    stream *s = &p->s;
    const uint32_t sec = p->v2 ? p->hl + p->lv : p->hl;
    const uint32_t clen = p->total - sec;
    const uint64_t dlen = p->v2 ? (uint64_t)p->unc - p->lv : p->unc;
    if (p->compressed)
        stream_zstd(s, sec, clen, dlen);
    else
        stream_identity(s, sec, clen, dlen);
    st ws = stream_walk(p, s);
    if (ws == ST_REAL)
        return ws;
    st ls = levels_fetch(p, s);
    if (ls == ST_REAL)
        return ls;
    if (ls != ST_OK)
        return ST_NEED;
    if (levels_scan(p) == ST_REAL)
        return ST_REAL;
    p->expect_k = p->k;
    const uint64_t vs = p->vstart, V = dlen - vs;
    const uint32_t w = p->width;
    uint64_t *pre = NULL, lstream = 0;
    if (p->enc == PQ_ENC_DELTA_LENGTH_BYTE_ARRAY) {
        if (ws != ST_OK)
            return ST_NEED; /* lengths are read through the walked blocks */
        uint64_t end;
        const st d = delta_walk(p, s, vs, p->k, &end);
        if (d != ST_OK)
            return d;
        const st dl = delta_lengths(p, s, vs, end, &pre);
        if (dl != ST_OK)
            return dl;
        lstream = end - vs;
        const uint64_t data = pre[p->k];
        if (lstream + data != V) {
            free(pre);
            return real(p, "layout: lengths %llu + data %llu bytes, values region %llu",
                        (unsigned long long)lstream, (unsigned long long)data,
                        (unsigned long long)V);
        }
    } else if (p->enc == PQ_ENC_PLAIN && p->in->col.type == PQ_BOOLEAN) {
        if (V != ((uint64_t)p->k + 7) / 8)
            return real(p, "layout: %llu bytes for %u booleans", (unsigned long long)V, p->k);
    } else if (V != (uint64_t)p->k * w) {
        return real(p, "layout: values region %llu bytes, %u values of %u bytes",
                    (unsigned long long)V, p->k, w);
    }
    /* Value bytes of the selected rows (predicted through unwalked blocks
     * while the walk is still going: asked for in the same round). */
    st vstat = ST_OK;
    for (uint32_t i = 0; i < p->n_vr && vstat != ST_REAL; i++) {
        const uint64_t a = p->vr[i].a, b = p->vr[i].b;
        st r = ST_OK;
        if (pre) {
            r = stream_want(p, s, vs + lstream + pre[a], pre[b] - pre[a], true);
        } else if (p->enc == PQ_ENC_BYTE_STREAM_SPLIT) {
            for (uint32_t j = 0; j < w && r != ST_REAL; j++) {
                const st rj = stream_want(p, s, vs + (uint64_t)j * p->k + a, b - a, true);
                r = rj != ST_OK ? rj : r;
            }
        } else if (p->in->col.type == PQ_BOOLEAN) {
            r = stream_want(p, s, vs + a / 8, (b + 7) / 8 - a / 8, true);
        } else {
            r = stream_want(p, s, vs + a * w, (b - a) * w, true);
        }
        if (r != ST_OK)
            vstat = r;
    }
    if (vstat == ST_OK && ws == ST_OK && p->h.has_crc)
        partial_patch_bytes(p, s, vs, lstream, pre);
    free(pre);
    if (vstat == ST_REAL)
        return ST_REAL;
    if (ws != ST_OK || vstat != ST_OK)
        return ST_NEED;
    /* Everything is known: the image is every known byte. Its bytes alone
     * must keep the saving (the requests were weighed when asked for). */
    const double budget = cost_partial_budget(p->total, 0, p->in->min_saving);
    if (cost_of_reads(pp_bytes_total(p->kb), 0, 0) > budget)
        return real(p, "saving: fetched %llu of %u bytes, budget %.0f",
                    (unsigned long long)pp_bytes_total(p->kb), p->total, budget);
    if (!pc_known(p, 0, p->total))
        return nomem(p, "pieces");
    return image_finish(p);
}

/* ---------------- synthesized pages ---------------- */

/* real_levels: p->k comes from the page's real levels, so a dictionary
 * page with values has an entry 0. */
static vspec values_spec(const plan *p, bool real_levels)
{
    return (vspec){p->enc, p->in->col.type, p->width,
                   p->in->dict_values > 0 || (real_levels && p->k > 0)};
}

/* The p->k values of a page with no selected row rebuilt into exactly V
 * bytes (*out, malloc'd), or why not. */
static st rebuild_values(plan *p, uint64_t V, uint8_t **out)
{
    const vspec f = values_spec(p, true);
    if (!fill_values(&f, p->k, V, NULL))
        return real(p, "encoding: cannot rebuild %u %s %s values in %llu bytes", p->k,
                    pq_encoding_name(p->enc), pq_physical_type_name(p->in->col.type),
                    (unsigned long long)V);
    uint8_t *buf = calloc(1, V ? V : 1);
    if (!buf)
        return nomem(p, "values");
    fill_values(&f, p->k, V, buf);
    *out = buf;
    return ST_OK;
}

/* Header piece first (the CRC is rewritten in image_finish). */
static bool pc_header(plan *p)
{
    return pc_copy(p, 0, p->hl, pp_bytes_get(p->kb, 0, p->hl));
}

/* No row selected, values stored uncompressed: real header and levels, a
 * values region with the least structure its encoding needs. */
static st run_synth_plain(plan *p)
{
    stream *s = &p->s;
    p->rebuilt = true;
    const uint32_t sec = p->v2 ? p->hl + p->lv : p->hl;
    const uint64_t dlen = p->v2 ? (uint64_t)p->unc - p->lv : p->unc;
    stream_identity(s, sec, p->total - sec, dlen);
    if (stream_walk(p, s) != ST_OK)
        return ST_REAL;
    const st ls = levels_fetch(p, s);
    if (ls != ST_OK)
        return ls;
    if (levels_scan(p) == ST_REAL)
        return ST_REAL;
    p->expect_k = p->k;
    const uint64_t vs = p->vstart, V = dlen - vs;
    const uint32_t lev_end = p->v2 ? p->hl + p->lv : sec + (uint32_t)vs;
    if (p->enc == PQ_ENC_DELTA_LENGTH_BYTE_ARRAY && p->in->col.type == PQ_BYTE_ARRAY) {
        /* Real lengths, zero data: every value keeps its length. */
        uint64_t end, *pre = NULL;
        const st d = delta_walk(p, s, vs, p->k, &end);
        if (d != ST_OK)
            return d;
        const st dl = delta_lengths(p, s, vs, end, &pre);
        if (dl != ST_OK)
            return dl;
        const uint64_t sum = pre[p->k];
        free(pre);
        if (end - vs + sum != V)
            return real(p, "layout: lengths %llu + data %llu bytes, values region %llu",
                        (unsigned long long)(end - vs), (unsigned long long)sum,
                        (unsigned long long)V);
        if (!pc_header(p) || !pc_known(p, p->hl, lev_end) ||
            !pc_known(p, sec + (uint32_t)vs, sec + (uint32_t)end))
            return nomem(p, "pieces");
        for (uint64_t i = end; i < dlen && i < end + PATCH_MAX_BYTES; i++)
            patch_add(p, sec + (uint32_t)i, 0x3f); /* zeroed string bytes stay ASCII */
        return image_finish(p);
    }
    uint8_t *buf = NULL;
    const st vs_ = rebuild_values(p, V, &buf);
    if (vs_ != ST_OK)
        return vs_;
    const bool ok = pc_header(p) && pc_known(p, p->hl, lev_end) &&
                    pc_sparse(p, sec + (uint32_t)vs, buf, (uint32_t)V);
    free(buf);
    if (!ok)
        return nomem(p, "pieces");
    /* Value bytes no structure depends on. */
    const pq_physical_type t = p->in->col.type;
    const uint32_t low = t == PQ_FIXED_LEN_BYTE_ARRAY ? p->width - 1 : 0;
    for (uint64_t j = 0; j < PATCH_MAX_BYTES && j < p->k; j++) {
        if (p->enc == PQ_ENC_PLAIN && t == PQ_BOOLEAN) {
            if (j < V)
                patch_add(p, sec + (uint32_t)(vs + j), 0xff);
        } else if (p->enc == PQ_ENC_PLAIN && t != PQ_BYTE_ARRAY) {
            patch_add(p, sec + (uint32_t)(vs + j * p->width + low), 0x3f);
        } else if (p->enc == PQ_ENC_BYTE_STREAM_SPLIT && V == (uint64_t)p->k * p->width) {
            patch_add(p, sec + (uint32_t)(vs + (uint64_t)low * p->k + j), 0x3f);
        } else if (p->enc == PQ_ENC_PLAIN && t == PQ_BYTE_ARRAY && 4ull * p->k + j < V) {
            patch_add(p, sec + (uint32_t)(vs + 4ull * p->k + j), 0x3f);
        }
    }
    return image_finish(p);
}

/* ---------------- exact-size snappy streams ---------------- */

/* The content is cut into literals and repeats (a run of bytes equal to
 * the byte `off` positions back, off <= 8). A repeat of R bytes is written
 * as overlapping copies: copy-1 (2 bytes, 4..11 long), copy-2 (3 bytes, 1..64
 * long) and copy-4 (5 bytes, 1..64 long); a literal of n bytes as p pieces of
 * at most 60 bytes (n + p bytes). Choosing the copy mix of every repeat and
 * the piece count of every literal reaches any size between the shortest
 * and the longest form. */
#define SN_MIN_REPEAT 12u
#define SN_MAX_OFF 8u

typedef struct {
    uint64_t lit;     /* literal bytes before the repeat */
    uint64_t rep;     /* repeated bytes (0: trailing literal only) */
    uint32_t off;
    /* chosen form */
    uint64_t pieces;  /* literal pieces */
    uint64_t m1, m2, m4;
} sn_tok;

typedef struct {
    sn_tok *t;
    size_t n, cap;
} sn_toks;

static bool sn_push(sn_toks *v, uint64_t lit, uint64_t rep, uint32_t off)
{
    if (!sv_grow((void **)&v->t, &v->cap, v->n + 1, sizeof *v->t, 64, SIZE_MAX))
        return false;
    v->t[v->n++] = (sn_tok){.lit = lit, .rep = rep, .off = off};
    return true;
}

static bool sn_tokenize(const uint8_t *src, uint64_t len, sn_toks *v)
{
    uint64_t i = 1, lit_start = 0;
    while (i < len) {
        uint64_t best = 0;
        uint32_t best_off = 0;
        for (uint32_t o = 1; o <= SN_MAX_OFF && o <= i; o++) {
            uint64_t l = 0;
            while (i + l < len && src[i + l] == src[i + l - o])
                l++;
            if (l > best) {
                best = l;
                best_off = o;
            }
            if (best >= 64)
                break;
        }
        if (best >= SN_MIN_REPEAT) {
            if (!sn_push(v, i - lit_start, best, best_off))
                return false;
            i += best;
            lit_start = i;
        } else {
            i++;
        }
    }
    if (len > lit_start)
        return sn_push(v, len - lit_start, 0, 0);
    return true;
}

/* Copy mix of exactly t bytes for a repeat of r bytes: m1 copy-1, m2
 * copy-2, m4 copy-4 with 2*m1 + 3*m2 + 5*m4 == t and lengths that can add
 * up to r. */
static bool sn_copies(uint64_t r, uint64_t t, uint64_t *m1o, uint64_t *m2o, uint64_t *m4o)
{
    for (uint64_t m1 = 0; m1 <= 2; m1++) {
        if (2 * m1 > t || 4 * m1 > r)
            continue;
        const uint64_t u = t - 2 * m1;
        /* m4 bounds from: m2 >= 0, 4 m1 + m2 + m4 <= r, 11 m1 + 64 (m2 + m4) >= r. */
        const int64_t lo_c1 = ((int64_t)u + 12 * (int64_t)m1 - 3 * (int64_t)r + 1) / 2;
        uint64_t lo = lo_c1 > 0 ? (uint64_t)lo_c1 : 0;
        const int64_t hi_c2 = (64 * (int64_t)u - 3 * ((int64_t)r - 11 * (int64_t)m1)) / 128;
        if (hi_c2 < 0)
            continue;
        uint64_t hi = u / 5 < (uint64_t)hi_c2 ? u / 5 : (uint64_t)hi_c2;
        /* (u - 5 m4) divisible by 3: m4 = 2u mod 3. */
        const uint64_t want = (2 * u) % 3;
        while (lo % 3 != want)
            lo++;
        for (uint64_t m4 = lo; m4 <= hi && m4 <= lo + 6; m4 += 3) {
            const uint64_t m2 = (u - 5 * m4) / 3;
            const uint64_t cnt = m2 + m4;
            if (4 * m1 + cnt <= r && 11 * m1 + 64 * cnt >= r && (m1 + cnt) > 0) {
                *m1o = m1;
                *m2o = m2;
                *m4o = m4;
                return true;
            }
        }
    }
    return false;
}

static uint64_t sn_lit_pieces_min(uint64_t n)
{
    return (n + 59) / 60;
}

static size_t sn_put_literal(uint8_t *o, const uint8_t *src, uint64_t n)
{
    o[0] = (uint8_t)((n - 1) << 2);
    memcpy(o + 1, src, n);
    return 1 + n;
}

/* Spread total over count parts each in [lo, hi]; part i. */
static uint64_t sn_part(uint64_t total, uint64_t count, uint64_t lo, uint64_t i)
{
    const uint64_t extra = total - lo * count;
    return lo + extra / count + (i < extra % count);
}

/* src[0..len) as a snappy stream of exactly room bytes into *out (malloc'd). */
static bool snappy_exact(const uint8_t *src, uint64_t len, uint64_t room, uint8_t **out)
{
    sn_toks v = {0};
    bool ok = false;
    uint8_t *o = NULL;
    if (len > UINT32_MAX || !sn_tokenize(src, len, &v))
        goto done;
    /* Shortest form. */
    uint64_t size = ulen(len);
    for (size_t i = 0; i < v.n; i++) {
        sn_tok *t = &v.t[i];
        t->pieces = sn_lit_pieces_min(t->lit);
        size += t->lit + t->pieces;
        if (t->rep) {
            uint64_t best = 0;
            const uint64_t base = 3 * ((t->rep + 63) / 64);
            for (uint64_t c = base > 2 ? base - 2 : 1; c <= base; c++)
                if (sn_copies(t->rep, c, &t->m1, &t->m2, &t->m4)) {
                    best = c;
                    break;
                }
            if (!best)
                goto done;
            size += best;
        }
    }
    if (size > room)
        goto done;
    /* Lengthen: repeats first (up to 5 bytes per byte), then literal pieces. */
    uint64_t d = room - size;
    for (size_t i = 0; i < v.n && d > 0; i++) {
        sn_tok *t = &v.t[i];
        if (!t->rep)
            continue;
        const uint64_t cur = 2 * t->m1 + 3 * t->m2 + 5 * t->m4;
        const uint64_t cap = 5 * t->rep - cur;
        uint64_t add = d < cap ? d : cap;
        for (; add > 0; add--)
            if (sn_copies(t->rep, cur + add, &t->m1, &t->m2, &t->m4))
                break;
        d -= add;
    }
    for (size_t i = 0; i < v.n && d > 0; i++) {
        sn_tok *t = &v.t[i];
        const uint64_t cap = t->lit - t->pieces;
        const uint64_t add = d < cap ? d : cap;
        t->pieces += add;
        d -= add;
    }
    if (d > 0)
        goto done;
    o = malloc(room ? room : 1);
    if (!o)
        goto done;
    size_t n = put_uleb(o, len);
    uint64_t at = 0;
    for (size_t i = 0; i < v.n; i++) {
        const sn_tok *t = &v.t[i];
        for (uint64_t k = 0; k < t->pieces; k++) {
            const uint64_t pl = sn_part(t->lit, t->pieces, 1, k);
            n += sn_put_literal(o + n, src + at, pl);
            at += pl;
        }
        if (!t->rep)
            continue;
        /* Copy-1 lengths from 4, the others from 1, spread over the repeat. */
        const uint64_t cnt = t->m1 + t->m2 + t->m4;
        uint64_t left = t->rep - 4 * t->m1 - (t->m2 + t->m4);
        for (uint64_t k = 0; k < cnt; k++) {
            const bool c1 = k < t->m1, c4 = !c1 && k >= t->m1 + t->m2;
            const uint64_t room_k = c1 ? 7 : 63;
            const uint64_t add = left < room_k ? left : room_k;
            const uint64_t l = (c1 ? 4 : 1) + add;
            left -= add;
            if (c1) {
                o[n++] = (uint8_t)(1 | ((l - 4) << 2) | ((t->off >> 8) << 5));
                o[n++] = (uint8_t)t->off;
            } else if (!c4) {
                o[n++] = (uint8_t)(2 | ((l - 1) << 2));
                o[n++] = (uint8_t)t->off;
                o[n++] = (uint8_t)(t->off >> 8);
            } else {
                o[n++] = (uint8_t)(3 | ((l - 1) << 2));
                put_le32(o + n, t->off);
                n += 4;
            }
            at += l;
        }
        if (left)
            goto done;
    }
    ok = n == room && at == len;
done:
    free(v.t);
    if (ok)
        *out = o;
    else
        free(o);
    return ok;
}

/* src as nframes zstd frames (level 1), with or without a content checksum
 * and content size; returns the bytes written or 0. */
static size_t zstd_frames(ZSTD_CCtx *cc, const uint8_t *src, size_t len, unsigned nframes,
                          int checksum, int fcs, uint8_t *dst, size_t cap)
{
    if (ZSTD_isError(ZSTD_CCtx_reset(cc, ZSTD_reset_session_and_parameters)) ||
        ZSTD_isError(ZSTD_CCtx_setParameter(cc, ZSTD_c_compressionLevel, 1)) ||
        ZSTD_isError(ZSTD_CCtx_setParameter(cc, ZSTD_c_checksumFlag, checksum)) ||
        ZSTD_isError(ZSTD_CCtx_setParameter(cc, ZSTD_c_contentSizeFlag, fcs)))
        return 0;
    size_t out = 0, at = 0;
    for (unsigned f = 0; f < nframes; f++) {
        const size_t part = f + 1 == nframes ? len - at : len / nframes;
        const size_t r = ZSTD_compress2(cc, dst + out, cap - out, src + at, part);
        if (ZSTD_isError(r))
            return 0;
        out += r;
        at += part;
    }
    return out;
}

/* Compress src into zstd frames filling exactly room bytes at page offset
 * at: one frame, padded with a skippable frame of zeros (only its 8-byte
 * header is a piece); when the padding does not fit, other frame layouts
 * (checksum, no content size, two or three frames) are tried. */
static st zstd_section(plan *p, const uint8_t *src, size_t len, uint32_t at, uint32_t room)
{
    const size_t cap = 3 * ZSTD_compressBound(len) + 64;
    uint8_t *dst = malloc(cap);
    ZSTD_CCtx *cc = ZSTD_createCCtx();
    if (!dst || !cc) {
        free(dst);
        ZSTD_freeCCtx(cc);
        return nomem(p, "zstd frame");
    }
    size_t used = 0, first = 0;
    for (unsigned v = 0; v < 12 && !used; v++) {
        const unsigned nframes = 1 + v / 4;
        const int checksum = (v & 1) != 0, fcs = (v & 2) == 0;
        const size_t r = zstd_frames(cc, src, len, nframes, checksum, fcs, dst, cap - 8);
        if (v == 0)
            first = r;
        if (r == 0)
            continue;
        if (r == room) {
            used = r;
        } else if (r + 8 <= room) {
            put_le32(dst + r, ZSTD_SKIPPABLE_MAGIC);
            put_le32(dst + r + 4, (uint32_t)(room - r - 8));
            used = r + 8;
            for (size_t i = used; i < room && i < used + PATCH_MAX_BYTES; i++)
                patch_add(p, at + (uint32_t)i, 0xff); /* skippable frame content */
        }
    }
    ZSTD_freeCCtx(cc);
    if (!used) {
        free(dst);
        return real(p, "zstd: rebuilt frame of %zu bytes does not fit %u bytes", first, room);
    }
    if (!pc_take(p, at, (uint32_t)used, dst))
        return nomem(p, "pieces");
    return ST_OK;
}

/* The codec's stream of src, exactly room bytes, as pieces at page offset at. */
static st compress_exact(plan *p, const uint8_t *src, size_t len, uint32_t at, uint32_t room)
{
    if (p->in->col.codec == PQ_CODEC_ZSTD)
        return zstd_section(p, src, len, at, room);
    uint8_t *o;
    if (!snappy_exact(src, len, room, &o))
        return real(p, "codec: no SNAPPY stream of exactly %u bytes for %zu", room, len);
    /* Mostly copy elements: kept whole (they are not zeros). */
    if (!pc_take(p, at, room, o))
        return nomem(p, "pieces");
    return ST_OK;
}

/* V1: choose the non-null count k and the level bytes L so that
 * 4 + L + values(k) is exactly the uncompressed size. */
static bool v1_search(const plan *p, const vspec *f, uint64_t *k_out, uint64_t *l_out)
{
    const uint64_t n = p->n, U = p->unc;
    if (p->in->col.max_def == 0) {
        *k_out = n;
        *l_out = 0;
        return fill_values(f, n, U, NULL);
    }
    if (U < 4)
        return false;
    const uint64_t room = U - 4;
    const bool dict = f->enc == PQ_ENC_RLE_DICTIONARY || f->enc == PQ_ENC_PLAIN_DICTIONARY;
    uint64_t v1;
    const bool fixed = fixed_size(f, 1, &v1);
    uint64_t kstart = n;
    if (dict && !f->dict_ok)
        kstart = 0;
    else if (fixed && f->enc == PQ_ENC_PLAIN && f->type == PQ_BOOLEAN)
        kstart = room * 8 < n ? room * 8 : n;
    else if (fixed && f->width)
        kstart = room / f->width < n ? room / f->width : n;
    lplan lp;
    uint32_t tries = 0;
    for (uint64_t k = kstart + 1; k-- > 0 && tries < PP_SEARCH_TRIES; tries++) {
        const uint64_t lmin = run_cost_min(k, 1) + run_cost_min(n - k, 1);
        if (fixed) {
            uint64_t V;
            fixed_size(f, k, &V);
            if (V > room)
                continue;
            const uint64_t L = room - V;
            if (L > 2 * n + 16)
                break; /* every later k leaves more bytes than levels can take */
            if (levels_plan(n, k, L, &lp)) {
                *k_out = k;
                *l_out = L;
                return true;
            }
            continue;
        }
        /* Short level runs and long values, or (few values) long levels. */
        for (uint64_t i = 0; i <= 33; i++) {
            const uint64_t L = i <= 16 ? lmin + i : room - (i - 17);
            if (L > room || (i > 16 && L < lmin + 17))
                continue;
            if (fill_values(f, k, room - L, NULL) && levels_plan(n, k, L, &lp)) {
                *k_out = k;
                *l_out = L;
                return true;
            }
        }
    }
    return false;
}

/* No row selected, ZSTD or SNAPPY: a rebuilt (values section or) body
 * compressed to exactly the stored size (zstd: a frame padded with a
 * skippable frame; snappy: a stream whose copy and literal elements are
 * chosen to add up to it). */
static st run_synth_compressed(plan *p)
{
    if (p->in->col.codec != PQ_CODEC_ZSTD && p->in->col.codec != PQ_CODEC_SNAPPY)
        return real(p, "codec: %s", pq_codec_name(p->in->col.codec));
    p->rebuilt = true;
    if (p->unc > PP_SYNTH_MAX)
        return real(p, "saving: %u-byte body too large to rebuild", p->unc);
    if (p->v2) {
        const st ls = levels_fetch(p, &p->s);
        if (ls != ST_OK)
            return ls;
        if (levels_scan(p) == ST_REAL)
            return ST_REAL;
        p->expect_k = p->k;
        const uint64_t V = (uint64_t)p->unc - p->lv;
        uint8_t *buf = NULL;
        const st vs_ = rebuild_values(p, V, &buf);
        if (vs_ != ST_OK)
            return vs_;
        if (!pc_header(p) || !pc_known(p, p->hl, p->hl + p->lv)) {
            free(buf);
            return nomem(p, "pieces");
        }
        const st zs = compress_exact(p, buf, V, p->hl + p->lv, p->body - p->lv);
        free(buf);
        return zs == ST_OK ? image_finish(p) : zs;
    }
    if (p->in->n_rows > 0)
        return real(p, "encoding: selected rows need the real levels inside the V1 body");
    const vspec f = values_spec(p, false);
    if (p->in->col.max_def == 1 && p->info.def_level_encoding != PQ_ENC_RLE)
        return real(p, "levels: V1 definition levels encoded %s",
                    pq_encoding_name(p->info.def_level_encoding));
    uint64_t k, L;
    if (!v1_search(p, &f, &k, &L))
        return real(p, "encoding: no %s %s body of exactly %u bytes for %u values",
                    pq_encoding_name(p->enc), pq_physical_type_name(p->in->col.type), p->unc,
                    p->n);
    uint8_t *buf = calloc(1, p->unc ? p->unc : 1);
    if (!buf)
        return nomem(p, "body");
    uint64_t vs = 0;
    if (p->in->col.max_def == 1) {
        lplan lp;
        levels_plan(p->n, k, L, &lp);
        put_le32(buf, (uint32_t)L);
        levels_emit(&lp, buf + 4);
        vs = 4 + L;
    }
    fill_values(&f, k, p->unc - vs, buf + vs);
    p->expect_k = (uint32_t)k;
    if (!pc_header(p)) {
        free(buf);
        return nomem(p, "pieces");
    }
    const st zs = compress_exact(p, buf, p->unc, p->hl, p->body);
    free(buf);
    return zs == ST_OK ? image_finish(p) : zs;
}

/* ---------------- driver ---------------- */

static st check_input(plan *p)
{
    const pp_input *in = p->in;
    if (!in->pm || in->page >= in->pm->n_pages)
        return real(p, "layout: page %u not in the page map", in->page);
    p->pg = &in->pm->pages[in->page];
    const pq_page_map *pm = in->pm;
    if (!p->pg->is_data)
        return real(p, "layout: page %u is not a data page", in->page);
    if (p->pg->total_size != p->kb->size)
        return real(p, "layout: known bytes sized %u for a page of %u", p->kb->size,
                    p->pg->total_size);
    p->total = p->pg->total_size;
    if (in->col.max_rep > 0 || in->col.max_def > 1 || pm->max_rep > 0 || pm->max_def > 1 ||
        pm->nested)
        return real(p, "nested: max_def %u, max_rep %u", in->col.max_def, in->col.max_rep);
    if (in->col.type != pm->type || in->col.max_def != pm->max_def ||
        in->col.codec != (int32_t)pm->codec)
        return real(p, "layout: column description differs from the page map");
    const int64_t w = pq_value_width(in->col.type, in->col.type_length);
    if (w < 0)
        return real(p, "layout: bad type %d / length %d", (int)in->col.type,
                    (int)in->col.type_length);
    p->width = (uint32_t)w;
    if (p->pg->num_rows < 0 || p->pg->num_rows > INT32_MAX)
        return real(p, "layout: rows of the page unknown");
    if (in->n_rows && !in->rows)
        return real(p, "layout: no row ranges");
    uint64_t prev_end = 0;
    for (uint32_t i = 0; i < in->n_rows; i++) {
        const pp_range *r = &in->rows[i];
        if (r->len == 0 || r->off < prev_end ||
            (uint64_t)r->off + r->len > (uint64_t)p->pg->num_rows)
            return real(p, "layout: selected rows [%u, +%u) out of order or past %lld rows", r->off,
                        r->len, (long long)p->pg->num_rows);
        prev_end = (uint64_t)r->off + r->len;
    }
    if (in->col.codec != PQ_CODEC_UNCOMPRESSED && in->col.codec != PQ_CODEC_ZSTD &&
        in->col.codec != PQ_CODEC_SNAPPY)
        return real(p, "codec: %s", pq_codec_name(in->col.codec));
    return ST_OK;
}

/* Sort the asked ranges, drop known bytes, merge small gaps; account the
 * round and the byte budget. */
static st finish_need(plan *p)
{
    rvec *nv = &p->need;
    qsort(nv->v, nv->n, sizeof *nv->v, range_cmp);
    rvec out = {0};
    uint64_t cur_a = 0, cur_b = 0;
    bool have = false;
    for (uint32_t i = 0; i <= nv->n; i++) {
        if (i < nv->n && have && nv->v[i].off <= cur_b) {
            const uint64_t e = (uint64_t)nv->v[i].off + nv->v[i].len;
            cur_b = e > cur_b ? e : cur_b;
            continue;
        }
        if (have) {
            /* Subtract known bytes. */
            uint64_t a = cur_a;
            while (a < cur_b) {
                const kb_span *sp = span_at(p->kb, (uint32_t)a);
                if (sp) {
                    a = span_end(sp);
                    continue;
                }
                uint32_t j = first_ending_at(p->kb, (uint32_t)a);
                if (j < p->kb->n && span_end(&p->kb->s[j]) == a)
                    j++;
                uint64_t b = cur_b;
                if (j < p->kb->n && p->kb->s[j].off < b)
                    b = p->kb->s[j].off;
                if (!rv_push(&out, a, b - a)) {
                    free(out.v);
                    return nomem(p, "need ranges");
                }
                a = b;
            }
        }
        if (i < nv->n) {
            cur_a = nv->v[i].off;
            cur_b = (uint64_t)nv->v[i].off + nv->v[i].len;
            have = true;
        }
    }
    /* Merge gaps below gap_merge that hold no known byte. */
    uint32_t m = 0;
    for (uint32_t i = 0; i < out.n; i++) {
        if (m > 0) {
            pp_range *last = &out.v[m - 1];
            const uint32_t le = last->off + last->len;
            if (out.v[i].off - le < p->in->gap_merge && !any_known(p->kb, le, out.v[i].off)) {
                last->len = out.v[i].off + out.v[i].len - last->off;
                continue;
            }
        }
        out.v[m++] = out.v[i];
    }
    out.n = m;
    if (out.n == 0) {
        free(out.v);
        return real(p, "rounds: nothing left to fetch but the plan is not complete");
    }
    uint64_t asked = 0;
    for (uint32_t i = 0; i < out.n; i++)
        asked += out.v[i].len;
    if (p->in->n_rows > 0) {
        /* Every byte so far and this round's requests, against reading the
         * page whole. */
        const uint32_t rc = p->in->request_cost;
        const uint64_t bytes = pp_bytes_total(p->kb) + asked;
        const double budget = cost_partial_budget(p->total, rc, p->in->min_saving);
        if (cost_of_reads(bytes, out.n, rc) > budget) {
            free(out.v);
            return real(p, "saving: would fetch %llu of %u bytes in %u requests, budget %.0f",
                        (unsigned long long)bytes, p->total, out.n, budget);
        }
    }
    kb_rounds *r = p->kb->rounds;
    if (!(r->asked && r->seen_puts == p->kb->puts)) {
        if (r->rounds >= PP_MAX_ROUNDS) {
            free(out.v);
            return real(p, "rounds: %u rounds were not enough", PP_MAX_ROUNDS);
        }
        r->rounds++;
        r->asked = true;
        r->seen_puts = p->kb->puts;
    }
    p->out->need = out.v;
    p->out->n_need = out.n;
    p->out->outcome = PP_NEED;
    return ST_NEED;
}

static st run(plan *p)
{
    if (check_input(p) != ST_OK)
        return ST_REAL;
    const pq_page *pg = p->pg;
    if (p->in->n_rows > 0 && p->in->col.max_def == 0 && pg->has_header && pg->encoding >= 0) {
        p->enc = pg->encoding;
        if (!partial_encoding(p))
            return real(p, "encoding: %s %s values of selected rows",
                        pq_encoding_name(p->enc), pq_physical_type_name(p->in->col.type));
    }
    const st hs = step_header(p);
    if (hs != ST_OK)
        return hs;
    if (p->in->n_rows > 0)
        return run_partial(p);
    if (!p->compressed)
        return run_synth_plain(p);
    return run_synth_compressed(p);
}

bool pp_worth_planning(uint32_t total_size, bool rows_selected, uint32_t request_cost,
                       double min_saving)
{
    return cost_partial_may_pay(total_size, rows_selected, request_cost, min_saving);
}

void pp_plan(const pp_input *in, const pp_bytes *known, pp_result *out)
{
    memset(out, 0, sizeof *out);
    out->outcome = PP_NEED;
    if (!in || !known) {
        out->outcome = PP_REAL;
        snprintf(out->reason, sizeof out->reason, "layout: no input");
        return;
    }
    plan p;
    memset(&p, 0, sizeof p);
    p.in = in;
    p.kb = known;
    p.out = out;
    st r = run(&p);
    if (r == ST_NEED && out->outcome != PP_REAL)
        r = finish_need(&p);
    if (out->outcome == PP_REAL || r == ST_REAL) {
        out->outcome = PP_REAL;
        if (!out->reason[0])
            snprintf(out->reason, sizeof out->reason, "layout: unknown");
        free(out->need);
        out->need = NULL;
        out->n_need = 0;
    } else if (r == ST_OK) {
        out->outcome = PP_SPARSE;
        out->pieces = p.pc;
        out->n_pieces = p.n_pc;
        p.pc = NULL;
        p.n_pc = 0;
        out->synthesized = p.rebuilt;
        out->selected_values = p.k_sel;
    }
    out->fetched = pp_bytes_total(known);
    for (uint32_t i = 0; i < p.n_pc; i++)
        free(p.pc[i].data);
    free(p.pc);
    free(p.need.v);
    free(p.lev);
    free(p.vr);
    free(p.s.b);
}
