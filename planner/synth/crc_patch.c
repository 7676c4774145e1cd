/* Keeping a page's old CRC when the new one does not fit its field. */
#include "page_plan_internal.h"

#include <stdlib.h>

/* When the new CRC does not fit the header's field, the image keeps the old
 * CRC instead: low-order bits of zero bytes no reader depends on (the low
 * byte of unselected zero values, zero string bytes, zstd padding) are
 * flipped so that the body's CRC-32 comes out unchanged. CRC-32 is linear
 * over GF(2), so the flips solve a 32-row linear system. Only low bits of
 * zero bytes are used: the values become tiny (0..63), strings stay ASCII. */
void pp_patch_add(plan *p, uint32_t off, uint8_t bits)
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
        if (!done && !pp_piece_copy(p, off + k, 1, src + k))
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

st pp_crc_patch(plan *p)
{
    if (p->n_patch == 0)
        return ST_REAL;
    const uint32_t have = pp_image_crc(p->pc, p->n_pc, p->hl, p->total);
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
                return pp_nomem(p, "CRC patch");
        }
    return pp_image_crc(p->pc, p->n_pc, p->hl, p->total) == p->h.crc ? ST_OK : ST_REAL;
}
