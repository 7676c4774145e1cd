/* The page planner's parts (planner/synth/) share the plan state and these
 * helpers; page_plan.h is the public contract. Private to planner/synth/.
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
 * are flipped so that the body keeps the old CRC (crc_patch.c). Every image is
 * decoded once with pq_decode_data_page before it is answered (a failure is
 * PP_REAL "verify: ...").
 *
 * Files: page_plan.c (the driver: inputs, the header, the rounds and their
 * budget), known_bytes.c (pp_bytes), section_stream.c (a page section read
 * through decompressed offsets), def_levels.c and delta_lengths.c (where the
 * selected values lie), partial_read.c, synth_plain.c, synth_codec.c with
 * snappy_exact.c, exact_values.c (values and levels of an exact size),
 * image_pieces.c, crc_patch.c, image_verify.c (the image's last checks),
 * dict_page.c (dictionary pages: the referenced entries kept, the others zero). */
#ifndef SIEVE_PAGE_PLAN_INTERNAL_H
#define SIEVE_PAGE_PLAN_INTERNAL_H

#include "page_plan.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PP_MAX_BLOCKS (1u << 16)     /* raw blocks of one frame: 8 GiB of content */
#define PP_SEARCH_TRIES 4096u        /* value counts tried for a synthesized V1 body */
#define PP_ZERO_RUN 32u              /* zero runs this long are left out of pieces */
#define PP_DELTA_PROBE 4096u         /* first read of a lengths stream beyond the probe */
#define PP_SYNTH_MAX (64u << 20)     /* largest body rebuilt in memory */

/* ---------------- known bytes (known_bytes.c) ---------------- */

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

static inline uint32_t pp_span_end(const kb_span *s)
{
    return s->off + s->len;
}

/* Index of the first span ending at or after off (n when none). */
uint32_t pp_first_ending_at(const pp_bytes *kb, uint32_t off);
/* The span holding byte off, or NULL. */
const kb_span *pp_span_at(const pp_bytes *kb, uint32_t off);
/* Known bytes from off on without a hole. */
uint32_t pp_known_run(const pp_bytes *kb, uint32_t off);
/* Some byte of [a, b) is known. */
bool pp_any_known(const pp_bytes *kb, uint32_t a, uint32_t b);

/* ---------------- page ranges (page_plan.c) ---------------- */

typedef struct {
    pp_range *v;
    uint32_t n;
    size_t cap;
} rvec;

bool pp_rv_push(rvec *r, uint64_t off, uint64_t len);

/* ---------------- encoding helpers ---------------- */

static inline unsigned ulen(uint64_t v)
{
    unsigned n = 1;
    while (v >= 128) {
        v >>= 7;
        n++;
    }
    return n;
}

static inline size_t put_uleb(uint8_t *o, uint64_t v)
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

static inline void put_le32(uint8_t *o, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        o[i] = (uint8_t)(v >> (8 * i));
}

static inline uint32_t get_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* ---------------- the plan ---------------- */

/* What a step says: done, bytes asked for (pp_need), or serve the page
 * real (pp_real, with the reason). */
typedef enum { ST_OK = 0, ST_NEED, ST_REAL } st;

/* How a section's bytes are stored. */
typedef enum {
    SEC_STORED = 0, /* as they are */
    SEC_ZSTD,       /* one zstd frame of raw blocks */
    SEC_SNAPPY,     /* a snappy stream of literal elements only */
} sec_kind;

/* A zstd raw block or a snappy literal: its header, then `size` content bytes. */
typedef struct {
    uint32_t hdr, data, size; /* page offsets of its header and its content; content bytes */
    uint64_t doff;            /* decompressed offset of the first content byte */
} zblock;

/* A page section read through its decompressed offsets: identity for
 * stored bytes, raw-block zstd frames and literal-only snappy streams
 * otherwise (both walked as blocks: a header, then content as it is). */
typedef struct {
    sec_kind kind;
    uint32_t start, clen; /* the section's page offset and stored length */
    uint64_t dlen;        /* decompressed length */
    /* zstd, snappy */
    bool fh_ok;           /* frame header (zstd) or length preamble (snappy) parsed */
    uint32_t fh_len, bmax;
    uint32_t expect;      /* blocks the section size implies (all raw, or all literals of bmax) */
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

/* One pp_plan call: its inputs, what it learnt of the page, the image so far. */
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
     * may go (see crc_patch.c). */
    patch_byte patch[PATCH_MAX_BYTES];
    uint32_t n_patch;
    stream s;
} plan;

/* Outcomes of the steps (page_plan.c): PP_REAL with a reason (the first
 * one given sticks), PP_REAL for lack of memory, and ranges to fetch.
 * pp_contradiction is for a page whose bytes contradict the file's own
 * metadata (reason words "layout" and "verify"): worth telling the operator
 * about. */
st pp_reason(plan *p, bool contradicts, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
#define pp_real(p, ...) pp_reason(p, false, __VA_ARGS__)
#define pp_contradiction(p, ...) pp_reason(p, true, __VA_ARGS__)
st pp_nomem(plan *p, const char *what);
/* The page header (p->h, p->hl), asked for until it parses; checked to
 * fill the page with its body. */
st pp_header_read(plan *p);
/* Ask for [off, off+len) (clipped to the page). */
st pp_need(plan *p, uint64_t off, uint64_t len);
/* Ask for every unknown byte of [off, off+len); OK when all are known. */
st pp_want(plan *p, uint64_t off, uint64_t len);

/* ---------------- sections (section_stream.c) ---------------- */

/* [start, start + clen) of the page, clen == dlen bytes stored as they are. */
void pp_stream_identity(stream *s, uint32_t start, uint32_t clen, uint64_t dlen);
/* p->s: the section the values are in (the whole body of a V1 page, what
 * follows the levels in a V2 page), stored as kind says. */
void pp_values_section(plan *p, sec_kind kind);
/* The section kind of the page's codec when compressed (SEC_STORED when not). */
sec_kind pp_section_kind(const plan *p);
/* Walk a zstd section's frame and block headers, or a snappy stream's
 * preamble and literal headers (asking for them); OK once every block is
 * known. */
st pp_stream_walk(plan *p, stream *s);
/* Page ranges holding decompressed bytes [d, d+len) into r. */
bool pp_stream_map(const stream *s, uint64_t d, uint64_t len, bool predict, rvec *r);
/* Ask for decompressed bytes [d, d+len): OK when known. */
st pp_stream_want(plan *p, const stream *s, uint64_t d, uint64_t len, bool predict);
/* Copy decompressed bytes [d, d+len) when all are known. */
bool pp_stream_copy(const plan *p, const stream *s, uint64_t d, uint64_t len, uint8_t *dst);
/* Copy the known decompressed bytes from d on, up to max; returns the count. */
uint32_t pp_stream_prefix(const plan *p, const stream *s, uint64_t d, uint32_t max,
                          uint8_t *dst);

/* ---------------- where the values lie (def_levels.c, delta_lengths.c) ---------------- */

/* Fetch the definition level runs (p->lev; p->vstart: where values start)
 * and decode them: p->k non-null values, p->vr the value ranges of the
 * selected rows. OK once both are done. */
st pp_levels_read(plan *p, const stream *s);
/* The values section (pp_values_section), walked as far as its blocks are
 * known, and its levels read: ST_OK with p->k, p->vstart and p->expect_k set
 * and *V the bytes of the values region. *walk is the walk's own answer
 * (ST_NEED while block headers are still to be fetched). */
st pp_values_open(plan *p, sec_kind kind, st *walk, uint64_t *V);
/* Walk the DELTA_BINARY_PACKED lengths stream at d0 (count values) to its end. */
st pp_delta_walk(plan *p, const stream *s, uint64_t d0, uint64_t count, uint64_t *end);
/* Decode the lengths stream [d0, end) into prefix sums (*pre_out, malloc'd, k + 1). */
st pp_delta_lengths(plan *p, const stream *s, uint64_t d0, uint64_t end, uint64_t **pre_out);
/* DELTA_LENGTH_BYTE_ARRAY values at d0: the lengths walked to *end and
 * decoded (pp_delta_lengths), which with the data they count must fill the
 * V bytes of the values region. */
st pp_delta_layout(plan *p, const stream *s, uint64_t d0, uint64_t V, uint64_t *end,
                   uint64_t **pre_out);

/* ---------------- values of an exact size (exact_values.c) ---------------- */

/* Hybrid RLE runs of one value: `units` runs with a one-byte header (1 to 63
 * values each, unit_values in all), then up to four longer runs. Byte cost of
 * a run of c values: ulen(2c) + vb. */
typedef struct {
    uint64_t units;       /* runs with a one-byte header */
    uint64_t unit_values; /* values those runs hold, units to 63 x units */
    uint32_t n_tail;
    uint64_t tail[4];
} pool;

/* Definition levels (bit width 1) of n entries, k of them 1, in exactly L
 * bytes of RLE runs: the ones first, then the zeros. */
typedef struct {
    pool ones, zeros;
} lplan;

/* What a values region must hold. */
typedef struct {
    int enc;
    pq_physical_type type;
    uint32_t width;   /* bytes per value: fixed types; 1 BOOLEAN; 0 BYTE_ARRAY */
    bool dict_ok;     /* dictionary entry 0 exists */
} vspec;

/* Byte cost of the shortest run of c values of vb value bytes. */
uint64_t pp_run_cost_min(uint64_t c, unsigned vb);
/* Definition levels of n entries, k of them 1, in exactly L bytes. */
bool pp_levels_plan(uint64_t n, uint64_t k, uint64_t L, lplan *lp);
size_t pp_levels_emit(const lplan *lp, uint8_t *o);
/* Physical types BYTE_STREAM_SPLIT applies to. */
bool pp_bss_type(pq_physical_type t);
/* Values whose size follows from their count alone. */
bool pp_fixed_size(const vspec *f, uint64_t k, uint64_t *v);
/* Exactly k values of the encoding in exactly V bytes at o (zeroed); o NULL
 * only checks that it can be done. */
bool pp_fill_values(const vspec *f, uint64_t k, uint64_t V, uint8_t *o);

/* ---------------- pieces and the image (image_pieces.c) ---------------- */

/* Append a piece owning data (freed on failure). */
bool pp_piece_take(plan *p, uint32_t off, uint32_t len, uint8_t *data);
bool pp_piece_copy(plan *p, uint32_t off, uint32_t len, const uint8_t *src);
/* The non-zero parts of buf as pieces. */
bool pp_pieces_sparse(plan *p, uint32_t off, const uint8_t *buf, uint32_t len);
/* Every known byte of [from, to) as pieces. */
bool pp_pieces_known(plan *p, uint32_t from, uint32_t to);
/* The real header as the first piece. */
bool pp_piece_header(plan *p);
/* CRC-32 of the image over [from, to). */
uint32_t pp_image_crc(const pp_piece *pc, uint32_t n, uint32_t from, uint32_t to);

/* ---------------- the image's last steps (crc_patch.c, image_verify.c) ---------------- */

/* Note a zero byte whose bits `bits` no reader depends on. */
void pp_patch_add(plan *p, uint32_t off, uint8_t bits);
/* Flip noted bits so that the image body keeps the header's old CRC. */
st pp_crc_patch(plan *p);
/* Check the pieces, rewrite (or keep) the CRC and decode the image once. */
st pp_image_finish(plan *p);

/* ---------------- the modes ---------------- */

/* partial_read.c */
bool pp_partial_encoding(const plan *p);
/* A dictionary page whose referenced entries are kept (dict_page.c): the
 * header read, then the entries. */
st pp_run_dictionary(plan *p);
st pp_run_partial(plan *p);
/* synth_plain.c */
vspec pp_values_spec(const plan *p, bool real_levels);
st pp_rebuild_values(plan *p, uint64_t V, uint8_t **out);
st pp_run_synth_plain(plan *p);
/* synth_codec.c, snappy_exact.c */
st pp_run_synth_compressed(plan *p);
bool pp_snappy_exact(const uint8_t *src, uint64_t len, uint64_t room, uint8_t **out);

#endif
