/* `sievefs inspect`: see cli_inspect.h and docs/inspect.md.
 *
 * Reads, in order: the file's tail (about size/1000, 64 KiB..1 MiB, more if
 * the footer is longer); with --pages, the OffsetIndex span of all column
 * chunks in one read; then per column chunk either the first bytes of every
 * page (the header; nearby pages coalesced into one read) when it has an
 * OffsetIndex, or the whole chunk to walk its headers when it has none; and
 * the bodies of ZSTD pages whose eligibility depends on how the frame is
 * built. Bytes already held (the tail, the index span) are not read again.
 * At most one column chunk's worth of file bytes is held at a time, and the
 * output is written column by column. */
#include "cli_inspect.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "byte_source.h"
#include "cli_common.h"
#include "log.h"
#include "page_map.h"
#include "parquet_meta.h"

static const char usage_inspect[] =
    "usage: sievefs inspect FILE|s3://BUCKET/KEY [--json] [--pages] [OPTIONS]\n"
    "\n"
    "Shows the layout of a Parquet file: schema, row groups and column chunks\n"
    "(type, encodings, codec, sizes, page index). With --pages, every page\n"
    "(offset, header length, compressed and uncompressed size, rows, encoding,\n"
    "levels, CRC) and whether a partial read could serve it, or why not.\n"
    "FILE may be any local file, including one on a sievefs mount.\n"
    "\n"
    "options:\n"
    "  --json                one JSON document on stdout (see docs/inspect.md)\n"
    "  --pages               list every page with its partial-read eligibility\n"
    "                        (reads each page header, and ZSTD page bodies)\n"
    CLI_S3_OPTIONS_HELP
    "  --log-level LEVEL     error, warn, info, debug (lists every read) or trace\n"
    "                        (default: errors only)\n"
    "  -h, --help            show this help\n"
    "\n"
    "For s3:// sources: " CLI_CREDENTIALS_HELP
    "\n"
    "Exit status: 0 on success, 1 when the file cannot be read or is not valid\n"
    "Parquet (one line on stderr naming the file and the cause), 2 on usage\n"
    "errors.\n";

/* Reading strategy knobs. */
#define TAIL_MIN (64u << 10)
#define TAIL_MAX (1u << 20)
#ifndef INSPECT_HEADER_PROBE
#define INSPECT_HEADER_PROBE 256u /* first read of a page header */
#endif
#define HEADER_PROBE INSPECT_HEADER_PROBE
#define COALESCE_GAP (64u << 10)    /* join reads separated by at most this */
#define COALESCE_MAX (4u << 20)     /* ... into reads of at most this */
#define INDEX_SPAN_MAX (64u << 20)  /* read all offset indexes at once up to this */
#define CHUNK_WALK_MAX ((uint64_t)1 << 31) /* largest chunk walked without an OffsetIndex */

#define N_REASONS (PQ_ELIG_CRC + 1)

typedef struct {
    const char *file;
    bool json;
    bool pages;
    cli_s3_opts s3;
    int log_level;
} inspect_opts;

typedef struct {
    const uint8_t *data;
    uint64_t off;
    size_t len;
} held_bytes;

typedef struct {
    const inspect_opts *o;
    byte_source *src;
    pq_file_meta *m;
    FILE *out;
    /* Bytes already read and kept for the whole run. */
    uint8_t *tail;
    size_t tail_len;
    uint8_t *index;     /* OffsetIndex span */
    uint64_t index_off;
    size_t index_len;
    /* Error message (without the "FILE: " prefix). */
    char err[1024];
    /* Totals over all pages listed. */
    uint64_t n_pages, n_data_pages, n_eligible;
    uint64_t reasons[N_REASONS];
    /* Output state. */
    bool first_rg, first_col;
} inspector;

static bool ins_fail(inspector *in, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool ins_fail(inspector *in, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(in->err, sizeof in->err, fmt, ap);
    va_end(ap);
    return false;
}

/* ---------------- reading ---------------- */

static const uint8_t *held(const uint8_t *data, uint64_t off, size_t len, uint64_t want_off,
                           size_t want_len)
{
    if (!data || want_off < off || want_off - off > len || want_len > len - (want_off - off))
        return NULL;
    return data + (want_off - off);
}

/* The bytes [off, off+len): a pointer into bytes already held, or into
 * *scratch (malloc'd here; the caller frees it). NULL on error (in->err). */
static const uint8_t *ins_view(inspector *in, uint64_t off, size_t len, uint8_t **scratch)
{
    *scratch = NULL;
    const uint8_t *p = held(in->tail, in->src->size - in->tail_len, in->tail_len, off, len);
    if (!p)
        p = held(in->index, in->index_off, in->index_len, off, len);
    if (p)
        return p;
    uint8_t *buf = malloc(len ? len : 1);
    if (!buf) {
        ins_fail(in, "out of memory reading %zu bytes at offset %" PRIu64, len, off);
        return NULL;
    }
    char e[900];
    if (byte_source_read(in->src, off, len, buf, e, sizeof e) != 0) {
        free(buf);
        ins_fail(in, "%s", e);
        return NULL;
    }
    *scratch = buf;
    return buf;
}

static bool read_footer(inspector *in)
{
    const uint64_t size = in->src->size;
    uint64_t want = size / 1000;
    if (want < TAIL_MIN)
        want = TAIL_MIN;
    if (want > TAIL_MAX)
        want = TAIL_MAX;
    if (want > size)
        want = size;
    char e[900];
    for (int attempt = 0;; attempt++) {
        /* Grow the held tail to `want` bytes, reading only what is missing. */
        if (want > in->tail_len) {
            uint8_t *t = malloc((size_t)want);
            if (!t)
                return ins_fail(in, "out of memory reading the last %" PRIu64 " bytes", want);
            const size_t missing = (size_t)want - in->tail_len;
            if (byte_source_read(in->src, size - want, missing, t, e, sizeof e) != 0) {
                free(t);
                return ins_fail(in, "%s", e);
            }
            if (in->tail_len)
                memcpy(t + missing, in->tail, in->tail_len);
            free(in->tail);
            in->tail = t;
            in->tail_len = (size_t)want;
        }
        uint64_t need = 0;
        tc_error te;
        tc_status st = pq_file_meta_from_tail(in->tail, in->tail_len, size, &in->m, &need, &te);
        if (st == TC_OK)
            return true;
        if (st == TC_E_NEED_MORE && attempt == 0 && need > in->tail_len && need <= size) {
            want = need;
            continue;
        }
        switch (st) {
        case TC_E_MAGIC:
        case TC_E_TRUNCATED:
            return ins_fail(in, "not a Parquet file: %s", te.msg);
        case TC_E_ENCRYPTED:
            return ins_fail(in, "%s", te.msg);
        default:
            return ins_fail(in, "malformed Parquet footer: %s", te.msg);
        }
    }
}

/* With --pages: every OffsetIndex in one read of their span (when the span
 * is not absurdly large; otherwise each is read on its own). */
static bool read_index_span(inspector *in)
{
    uint64_t lo = UINT64_MAX, hi = 0;
    for (uint32_t g = 0; g < in->m->n_row_groups; g++) {
        const pq_row_group *rg = &in->m->row_groups[g];
        for (uint32_t c = 0; c < rg->n_columns; c++) {
            const pq_column_chunk *cc = &rg->columns[c];
            if (!cc->has_offset_index || cc->file_path.ptr || cc->offset_index_offset < 0 ||
                cc->offset_index_length <= 0)
                continue;
            const uint64_t s = (uint64_t)cc->offset_index_offset;
            const uint64_t e = s + (uint64_t)cc->offset_index_length;
            if (s < lo)
                lo = s;
            if (e > hi)
                hi = e;
        }
    }
    if (hi <= lo || hi > in->src->size || hi - lo > INDEX_SPAN_MAX)
        return true;
    uint8_t *scratch;
    const uint8_t *p = ins_view(in, lo, (size_t)(hi - lo), &scratch);
    if (!p)
        return false;
    if (scratch) {
        in->index = scratch;
        in->index_off = lo;
        in->index_len = (size_t)(hi - lo);
    }
    return true;
}

/* ---------------- page maps ---------------- */

typedef struct {
    uint32_t g, c;
    const char *path;
} col_ref;

static bool page_fail(inspector *in, const col_ref *r, const char *what, const tc_error *te)
{
    return ins_fail(in, "row group %u, column %s: %s%s", r->g, r->path, what, te->msg);
}

/* Parse page i's header from the file, starting with the first avail bytes
 * at buf and reading more while the header runs past them. */
static bool set_header(inspector *in, const col_ref *r, pq_page_map *pm, uint32_t i,
                       const uint8_t *buf, size_t avail)
{
    const pq_page *p = &pm->pages[i];
    tc_error te;
    tc_status st = pq_page_map_set_header(pm, i, buf, avail, &te);
    size_t len = avail;
    while (st == TC_E_TRUNCATED && len < p->total_size) {
        len = len < 1024 ? 4096 : len * 4;
        if (len > p->total_size)
            len = p->total_size;
        uint8_t *scratch;
        const uint8_t *b = ins_view(in, p->offset, len, &scratch);
        if (!b)
            return false;
        st = pq_page_map_set_header(pm, i, b, len, &te);
        free(scratch);
    }
    if (st != TC_OK)
        return page_fail(in, r, "", &te);
    return true;
}

/* Window of page i to read: the header probe, or the body. */
typedef bool (*want_fn)(const pq_page *p, uint64_t *start, uint64_t *end);

static bool want_header(const pq_page *p, uint64_t *start, uint64_t *end)
{
    *start = p->offset;
    *end = p->offset + (p->total_size < HEADER_PROBE ? p->total_size : HEADER_PROBE);
    return true;
}

static bool want_zstd_body(const pq_page *p, uint64_t *start, uint64_t *end)
{
    if (p->elig != PQ_ELIG_ZSTD_UNCHECKED || !p->has_header || p->compressed_size <= 0)
        return false;
    *start = p->offset + p->header_len;
    *end = *start + (uint64_t)p->compressed_size;
    return true;
}

/* Read the windows want() selects, joining neighbours into reads of at most
 * COALESCE_MAX bytes (a single larger window is read alone), and hand each
 * page its bytes. */
static bool read_pages(inspector *in, const col_ref *r, pq_page_map *pm, want_fn want,
                       bool headers)
{
    uint32_t i = 0;
    while (i < pm->n_pages) {
        uint64_t start, end;
        if (!want(&pm->pages[i], &start, &end)) {
            i++;
            continue;
        }
        uint32_t j = i + 1;
        while (j < pm->n_pages) {
            uint64_t s2, e2;
            if (!want(&pm->pages[j], &s2, &e2))
                break;
            if (s2 < end || s2 - end > COALESCE_GAP || e2 - start > COALESCE_MAX)
                break;
            end = e2;
            j++;
        }
        if (end - start > SIZE_MAX / 2)
            return ins_fail(in, "row group %u, column %s: page of %" PRIu64 " bytes is too large",
                            r->g, r->path, end - start);
        uint8_t *scratch;
        const uint8_t *buf = ins_view(in, start, (size_t)(end - start), &scratch);
        if (!buf)
            return false;
        bool ok = true;
        for (uint32_t k = i; k < j && ok; k++) {
            pq_page *p = &pm->pages[k];
            uint64_t s, e;
            want(p, &s, &e);
            if (headers) {
                const uint64_t page_end = p->offset + p->total_size;
                const uint64_t avail = (end < page_end ? end : page_end) - p->offset;
                ok = set_header(in, r, pm, k, buf + (p->offset - start), (size_t)avail);
            } else {
                p->elig = pq_page_eligibility(pm, k, buf + (s - start), (size_t)(e - s));
            }
        }
        free(scratch);
        if (!ok)
            return false;
        i = j;
    }
    return true;
}

/* Build the page map of one column chunk. *have is false when the chunk
 * lives in another file (ColumnChunk.file_path). */
static bool build_pages(inspector *in, const col_ref *r, pq_page_map *pm, bool *have)
{
    const pq_column_chunk *cc = &in->m->row_groups[r->g].columns[r->c];
    const pq_column_ctx ctx = pq_column_ctx_of(in->m, r->g, r->c);
    memset(pm, 0, sizeof *pm);
    pm->dict_page = -1;
    *have = false;
    if (cc->file_path.ptr)
        return true;
    uint64_t off, len;
    if (!pq_column_chunk_range(cc, &off, &len) || off > in->src->size ||
        len > in->src->size - off)
        return ins_fail(in, "row group %u, column %s: column chunk lies outside the file", r->g,
                        r->path);
    tc_error te;
    if (cc->has_offset_index) {
        uint8_t *scratch;
        const uint8_t *b = ins_view(in, (uint64_t)cc->offset_index_offset,
                                    (size_t)cc->offset_index_length, &scratch);
        if (!b)
            return false;
        pq_offset_index oi;
        tc_status st = pq_offset_index_parse(b, (size_t)cc->offset_index_length, &oi, &te);
        free(scratch);
        if (st != TC_OK)
            return page_fail(in, r, "OffsetIndex: ", &te);
        if (oi.n_pages == 0) {
            /* An empty OffsetIndex (a chunk without data pages): walk it. */
            pq_offset_index_free(&oi);
            goto walk;
        }
        st = pq_page_map_from_offset_index(&ctx, &oi, pm, &te);
        pq_offset_index_free(&oi);
        if (st != TC_OK)
            return page_fail(in, r, "OffsetIndex: ", &te);
        *have = true;
        if (!read_pages(in, r, pm, want_header, true))
            return false;
        if (pm->codec == PQ_CODEC_ZSTD && !read_pages(in, r, pm, want_zstd_body, false))
            return false;
        return true;
    }
walk:
    if (len > CHUNK_WALK_MAX)
        return ins_fail(in,
                        "row group %u, column %s: column chunk of %" PRIu64
                        " bytes has no OffsetIndex and is too large to walk",
                        r->g, r->path, len);
    uint8_t *scratch;
    const uint8_t *b = ins_view(in, off, (size_t)len, &scratch);
    if (!b)
        return false;
    tc_status st = pq_page_map_from_chunk(&ctx, b, (size_t)len, pm, &te);
    free(scratch);
    if (st != TC_OK)
        return page_fail(in, r, "", &te);
    *have = true;
    return true;
}

/* ---------------- names and formatting ---------------- */

static const char *converted_name(int32_t ct)
{
    static const char *const n[] = {
        "UTF8",        "MAP",         "MAP_KEY_VALUE",    "LIST",   "ENUM",   "DECIMAL",
        "DATE",        "TIME_MILLIS", "TIME_MICROS",      "TIMESTAMP_MILLIS",
        "TIMESTAMP_MICROS",           "UINT_8",           "UINT_16", "UINT_32", "UINT_64",
        "INT_8",       "INT_16",      "INT_32",           "INT_64", "JSON",   "BSON",
        "INTERVAL"};
    if (ct == PQ_CT_NONE)
        return "NONE";
    return ct >= 0 && ct < (int32_t)(sizeof n / sizeof n[0]) ? n[ct] : "UNKNOWN";
}

static const char *unit_name(pq_time_unit u)
{
    switch (u) {
    case PQ_UNIT_MILLIS: return "ms";
    case PQ_UNIT_MICROS: return "us";
    case PQ_UNIT_NANOS: return "ns";
    default: return "?";
    }
}

/* Logical type with its parameters, for the text output. */
static void logical_detail(const pq_logical_type *lt, char *buf, size_t len)
{
    const char *k = pq_logical_kind_name(lt->kind);
    switch (lt->kind) {
    case PQ_LT_DECIMAL:
        snprintf(buf, len, "%s(%d,%d)", k, (int)lt->decimal_precision, (int)lt->decimal_scale);
        break;
    case PQ_LT_TIME:
    case PQ_LT_TIMESTAMP:
        snprintf(buf, len, "%s(%s%s)", k, unit_name(lt->unit), lt->adjusted_to_utc ? ",UTC" : "");
        break;
    case PQ_LT_INTEGER:
        snprintf(buf, len, "%s(%d,%s)", k, (int)lt->bit_width,
                 lt->is_signed ? "signed" : "unsigned");
        break;
    default:
        snprintf(buf, len, "%s", k);
        break;
    }
}

static void human(uint64_t n, char *buf, size_t len)
{
    static const char *const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    if (n < 1024) {
        snprintf(buf, len, "%" PRIu64 " B", n);
        return;
    }
    double v = (double)n / 1024.0;
    size_t u = 0;
    while (v >= 1023.95 && u + 1 < sizeof units / sizeof units[0]) {
        v /= 1024.0;
        u++;
    }
    snprintf(buf, len, "%.1f %s", v, units[u]);
}

/* Length of the valid UTF-8 sequence at s (n bytes left), 0 if invalid. */
static size_t utf8_seq(const uint8_t *s, size_t n)
{
    const uint8_t c = s[0];
    if (c < 0x80)
        return 1;
    size_t k;
    uint8_t lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF)
        k = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        k = 3;
        if (c == 0xE0)
            lo = 0xA0;
        else if (c == 0xED)
            hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        k = 4;
        if (c == 0xF0)
            lo = 0x90;
        else if (c == 0xF4)
            hi = 0x8F;
    } else
        return 0;
    if (n < k || s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < k; i++)
        if (s[i] < 0x80 || s[i] > 0xBF)
            return 0;
    return k;
}

/* Copy of s[0..len) that is valid UTF-8 (invalid bytes become U+FFFD) and,
 * when printable is set, free of control characters (shown as '?'). */
static char *clean_str(const char *s, size_t len, bool printable)
{
    char *out = malloc(len * 3 + 1);
    if (!out)
        return NULL;
    size_t o = 0;
    const uint8_t *u = (const uint8_t *)s;
    for (size_t i = 0; i < len;) {
        const size_t k = utf8_seq(u + i, len - i);
        if (k == 0) {
            memcpy(out + o, "\xEF\xBF\xBD", 3);
            o += 3;
            i++;
        } else if (k == 1 && printable && (u[i] < 0x20 || u[i] == 0x7F)) {
            out[o++] = '?';
            i++;
        } else {
            memcpy(out + o, s + i, k);
            o += k;
            i += k;
        }
    }
    out[o] = 0;
    return out;
}

/* ---------------- text tables ---------------- */

typedef struct {
    size_t ncols;
    const char *const *head;
    const char *align; /* 'l' or 'r' per column */
    char **cells;
    size_t count, cap;
    bool oom;
} table;

static void tbl_init(table *t, size_t ncols, const char *const *head, const char *align)
{
    memset(t, 0, sizeof *t);
    t->ncols = ncols;
    t->head = head;
    t->align = align;
}

static void tbl_cell(table *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void tbl_cell(table *t, const char *fmt, ...)
{
    if (t->oom)
        return;
    if (t->count == t->cap) {
        size_t ncap = t->cap ? t->cap * 2 : 64;
        char **nc = realloc(t->cells, ncap * sizeof *nc);
        if (!nc) {
            t->oom = true;
            return;
        }
        t->cells = nc;
        t->cap = ncap;
    }
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    size_t len = n < 0 ? 0 : (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1;
    char *c = clean_str(buf, len, true);
    if (!c) {
        t->oom = true;
        return;
    }
    t->cells[t->count++] = c;
}

/* Display width: code points (the cells are valid UTF-8). */
static size_t text_width(const char *s)
{
    size_t w = 0;
    for (; *s; s++)
        if (((unsigned char)*s & 0xC0) != 0x80)
            w++;
    return w;
}

static void pad(FILE *f, size_t n)
{
    for (size_t i = 0; i < n; i++)
        fputc(' ', f);
}

static void tbl_print(const table *t, FILE *f, int indent)
{
    const size_t nrows = t->count / t->ncols;
    size_t width[32] = {0};
    const size_t ncols = t->ncols < 32 ? t->ncols : 32;
    for (size_t c = 0; c < ncols; c++) {
        width[c] = text_width(t->head[c]);
        for (size_t r = 0; r < nrows; r++) {
            size_t w = text_width(t->cells[r * t->ncols + c]);
            if (w > width[c])
                width[c] = w;
        }
    }
    for (size_t r = 0; r <= nrows; r++) {
        pad(f, (size_t)indent);
        for (size_t c = 0; c < ncols; c++) {
            const char *s = r == 0 ? t->head[c] : t->cells[(r - 1) * t->ncols + c];
            const size_t w = text_width(s);
            const bool right = t->align[c] == 'r';
            const bool last = c + 1 == ncols;
            if (right)
                pad(f, width[c] - w);
            fputs(s, f);
            if (!last) {
                if (!right)
                    pad(f, width[c] - w);
                fputs("  ", f);
            }
        }
        fputc('\n', f);
    }
}

static void tbl_free(table *t)
{
    for (size_t i = 0; i < t->count; i++)
        free(t->cells[i]);
    free(t->cells);
    memset(t, 0, sizeof *t);
}

/* ---------------- JSON ---------------- */

static json_t *jstr(const char *s, size_t len)
{
    if (!s)
        return json_null();
    json_t *v = json_stringn(s, len);
    if (v)
        return v;
    char *c = clean_str(s, len, false);
    if (!c)
        return json_null();
    v = json_string(c);
    free(c);
    return v ? v : json_null();
}

static json_t *jint_or_null(int64_t v, bool known)
{
    return known ? json_integer((json_int_t)v) : json_null();
}

static json_t *jenc_or_null(int32_t e)
{
    return e >= 0 ? json_string(pq_encoding_name(e)) : json_null();
}

/* Write an object's members without its closing brace, so that more
 * members can follow ("{"a":1" for {"a":1}). */
static bool put_open_object(FILE *f, json_t *obj)
{
    char *s = json_dumps(obj, JSON_COMPACT);
    json_decref(obj);
    if (!s)
        return false;
    size_t n = strlen(s);
    fwrite(s, 1, n - 1, f);
    free(s);
    return true;
}

static bool put_value(FILE *f, json_t *v)
{
    int rc = v ? json_dumpf(v, f, JSON_COMPACT | JSON_ENCODE_ANY) : -1;
    json_decref(v);
    return rc == 0;
}

/* Set members; jansson's _new variants take over the reference. */
#define JSET(obj, key, val) json_object_set_new((obj), (key), (val))

static json_t *json_page(const pq_page *p)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    JSET(o, "offset", json_integer((json_int_t)p->offset));
    JSET(o, "header_length", jint_or_null(p->header_len, p->has_header));
    JSET(o, "compressed_size", jint_or_null(p->compressed_size, p->compressed_size >= 0));
    JSET(o, "uncompressed_size", jint_or_null(p->uncompressed_size, p->uncompressed_size >= 0));
    JSET(o, "first_row", jint_or_null(p->first_row, p->first_row >= 0));
    JSET(o, "num_rows", jint_or_null(p->num_rows, p->num_rows >= 0));
    JSET(o, "num_values", jint_or_null(p->num_values, p->num_values >= 0));
    JSET(o, "type", p->page_type >= 0 ? json_string(pq_page_type_name(p->page_type)) : json_null());
    JSET(o, "encoding", jenc_or_null(p->encoding));
    JSET(o, "def_encoding", jenc_or_null(p->def_encoding));
    JSET(o, "rep_encoding", jenc_or_null(p->rep_encoding));
    JSET(o, "def_levels_length", jint_or_null(p->def_levels_len, p->def_levels_len >= 0));
    JSET(o, "rep_levels_length", jint_or_null(p->rep_levels_len, p->rep_levels_len >= 0));
    JSET(o, "crc", jint_or_null(p->crc, p->has_crc));
    JSET(o, "eligible", json_boolean(p->elig == PQ_ELIG_OK));
    JSET(o, "reason", json_string(pq_elig_reason(p->elig)));
    return o;
}

static json_t *json_encodings(uint32_t mask)
{
    json_t *a = json_array();
    for (int e = 0; a && e < 32; e++)
        if (mask & (1u << e))
            json_array_append_new(a, json_string(pq_encoding_name(e)));
    return a;
}

static json_t *json_column(const inspector *in, const col_ref *r, const pq_page_map *pm,
                           bool have_pages)
{
    const pq_column_chunk *cc = &in->m->row_groups[r->g].columns[r->c];
    json_t *o = json_object();
    if (!o)
        return NULL;
    uint64_t off = 0, len = 0;
    bool range = pq_column_chunk_range(cc, &off, &len);
    JSET(o, "path", jstr(r->path, strlen(r->path)));
    JSET(o, "offset", jint_or_null((int64_t)off, range));
    JSET(o, "length", jint_or_null((int64_t)len, range));
    JSET(o, "codec", json_string(pq_codec_name(cc->codec)));
    JSET(o, "encodings", json_encodings(cc->encodings_mask));
    JSET(o, "num_values", json_integer(cc->num_values));
    JSET(o, "total_compressed_size", json_integer(cc->total_compressed_size));
    JSET(o, "total_uncompressed_size", json_integer(cc->total_uncompressed_size));
    JSET(o, "has_offset_index", json_boolean(cc->has_offset_index));
    JSET(o, "has_column_index", json_boolean(cc->has_column_index));
    JSET(o, "dictionary_page_offset",
         jint_or_null(cc->dictionary_page_offset, cc->has_dictionary_page_offset));
    JSET(o, "data_page_offset", json_integer(cc->data_page_offset));
    if (in->o->pages) {
        if (!have_pages) {
            JSET(o, "pages", json_null());
        } else {
            json_t *a = json_array();
            for (uint32_t i = 0; a && i < pm->n_pages; i++)
                json_array_append_new(a, json_page(&pm->pages[i]));
            JSET(o, "pages", a ? a : json_null());
        }
    }
    return o;
}

/* ---------------- output: file ---------------- */

static const char *chunk_file_path(const pq_column_chunk *cc, char *buf, size_t len)
{
    snprintf(buf, len, "%.*s", (int)cc->file_path.len, (const char *)cc->file_path.ptr);
    return buf;
}

/* "label      value" line of the text header, the value made printable. */
static void kv(FILE *f, const char *label, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void kv(FILE *f, const char *label, const char *fmt, ...)
{
    char buf[1200];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    size_t len = n < 0 ? 0 : (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1;
    char *c = clean_str(buf, len, true);
    fprintf(f, "%-16s%s\n", label, c ? c : "?");
    free(c);
}

static void text_begin(inspector *in)
{
    FILE *f = in->out;
    const pq_file_meta *m = in->m;
    char a[64];
    uint32_t n_chunks = 0, n_oi = 0, n_ci = 0;
    for (uint32_t g = 0; g < m->n_row_groups; g++)
        for (uint32_t c = 0; c < m->row_groups[g].n_columns; c++) {
            n_chunks++;
            n_oi += m->row_groups[g].columns[c].has_offset_index;
            n_ci += m->row_groups[g].columns[c].has_column_index;
        }
    kv(f, "file", "%s", in->o->file);
    human(in->src->size, a, sizeof a);
    kv(f, "size", "%s (%" PRIu64 " bytes)", a, in->src->size);
    if (m->created_by.ptr)
        kv(f, "created by", "%.*s", (int)m->created_by.len, (const char *)m->created_by.ptr);
    else
        kv(f, "created by", "-");
    kv(f, "format version", "%d", (int)m->version);
    kv(f, "rows", "%" PRId64, m->num_rows);
    kv(f, "row groups", "%u", m->n_row_groups);
    kv(f, "columns", "%u (%u column chunks)", m->n_leaves, n_chunks);
    human(m->footer_len, a, sizeof a);
    kv(f, "footer", "%s at offset %" PRIu64, a, m->footer_offset);
    kv(f, "page index", "OffsetIndex in %u of %u chunks, ColumnIndex in %u of %u", n_oi,
       n_chunks, n_ci, n_chunks);

    table t;
    static const char *const sh[] = {"#", "column", "physical type", "logical type", "converted",
                                     "max_def", "max_rep", "length"};
    tbl_init(&t, 8, sh, "rllllrrr");
    for (uint32_t i = 0; i < m->n_leaves; i++) {
        const pq_leaf *l = &m->leaves[i];
        char lt[96];
        logical_detail(&l->logical, lt, sizeof lt);
        tbl_cell(&t, "%u", i);
        tbl_cell(&t, "%s", l->path);
        tbl_cell(&t, "%s", pq_physical_type_name(l->type));
        tbl_cell(&t, "%s", lt);
        tbl_cell(&t, "%s", converted_name(l->converted_type));
        tbl_cell(&t, "%u", l->max_def);
        tbl_cell(&t, "%u", l->max_rep);
        if (l->type == PQ_FIXED_LEN_BYTE_ARRAY && l->type_length >= 0)
            tbl_cell(&t, "%d", (int)l->type_length);
        else
            tbl_cell(&t, "-");
    }
    fprintf(f, "\nschema\n");
    tbl_print(&t, f, 2);
    tbl_free(&t);
}

static void text_row_group(inspector *in, uint32_t g)
{
    FILE *f = in->out;
    const pq_row_group *rg = &in->m->row_groups[g];
    char a[64], b[64], c1[64];
    int64_t comp = 0;
    for (uint32_t c = 0; c < rg->n_columns; c++)
        comp += rg->columns[c].total_compressed_size;
    human(rg->total_byte_size < 0 ? 0 : (uint64_t)rg->total_byte_size, a, sizeof a);
    human(comp < 0 ? 0 : (uint64_t)comp, b, sizeof b);
    fprintf(f, "\nrow group %u: %" PRId64 " rows, %s in %u column chunks (%s uncompressed)\n", g,
            rg->num_rows, b, rg->n_columns, a);
    static const char *const ch[] = {"#", "column", "codec", "encodings", "values", "offset",
                                     "compressed", "uncompressed", "dictionary", "page index"};
    table t;
    tbl_init(&t, 10, ch, "rllllrrrll");
    for (uint32_t c = 0; c < rg->n_columns; c++) {
        const pq_column_chunk *cc = &rg->columns[c];
        char enc[256] = "";
        size_t el = 0;
        for (int e = 0; e < 32; e++)
            if (cc->encodings_mask & (1u << e)) {
                int n = snprintf(enc + el, sizeof enc - el, "%s%s", el ? "," : "",
                                 pq_encoding_name(e));
                if (n > 0 && (size_t)n < sizeof enc - el)
                    el += (size_t)n;
            }
        uint64_t off = 0, len = 0;
        pq_column_chunk_range(cc, &off, &len);
        tbl_cell(&t, "%u", c);
        tbl_cell(&t, "%s", in->m->leaves[c].path);
        tbl_cell(&t, "%s", pq_codec_name(cc->codec));
        tbl_cell(&t, "%s", el ? enc : "-");
        tbl_cell(&t, "%" PRId64, cc->num_values);
        if (cc->file_path.ptr) {
            char fp[300];
            tbl_cell(&t, "in %s", chunk_file_path(cc, fp, sizeof fp));
        } else {
            tbl_cell(&t, "%" PRIu64, off);
        }
        human(cc->total_compressed_size < 0 ? 0 : (uint64_t)cc->total_compressed_size, a, sizeof a);
        human(cc->total_uncompressed_size < 0 ? 0 : (uint64_t)cc->total_uncompressed_size, c1,
              sizeof c1);
        tbl_cell(&t, "%s", a);
        tbl_cell(&t, "%s", c1);
        tbl_cell(&t, "%s", cc->has_dictionary_page_offset && cc->dictionary_page_offset > 0 &&
                                   (cc->dictionary_page_offset < cc->data_page_offset ||
                                    cc->data_page_offset == 0)
                               ? "yes"
                               : "-");
        tbl_cell(&t, "%s",
                 cc->has_offset_index && cc->has_column_index ? "offset+column"
                 : cc->has_offset_index                       ? "offset"
                 : cc->has_column_index                       ? "column"
                                                              : "-");
    }
    tbl_print(&t, f, 2);
    tbl_free(&t);
}

static void text_levels(const pq_page *p, char *buf, size_t len)
{
    if (p->page_type == PQ_PAGE_DATA)
        snprintf(buf, len, "def %s, rep %s", pq_encoding_name(p->def_encoding),
                 pq_encoding_name(p->rep_encoding));
    else if (p->page_type == PQ_PAGE_DATA_V2)
        snprintf(buf, len, "def %d B, rep %d B", (int)p->def_levels_len, (int)p->rep_levels_len);
    else
        snprintf(buf, len, "-");
}

static const char *short_page_type(int32_t t)
{
    switch (t) {
    case PQ_PAGE_DATA: return "DATA";
    case PQ_PAGE_DATA_V2: return "DATA_V2";
    case PQ_PAGE_DICTIONARY: return "DICTIONARY";
    case PQ_PAGE_INDEX: return "INDEX";
    default: return "?";
    }
}

/* "3 of 5 eligible; not: boolean 2" for the data pages of one map. */
static void elig_summary(const uint64_t *reasons, uint64_t n_data, uint64_t n_ok, char *buf,
                         size_t len)
{
    int n = snprintf(buf, len, "%" PRIu64 " of %" PRIu64 " data pages eligible for partial reads",
                     n_ok, n_data);
    size_t at = n > 0 ? (size_t)n : 0;
    bool first = true;
    for (int r = 1; r < N_REASONS && at < len; r++) {
        if (r == PQ_ELIG_NOT_DATA_PAGE || reasons[r] == 0)
            continue;
        n = snprintf(buf + at, len - at, "%s%s %" PRIu64, first ? "; not eligible: " : ", ",
                     pq_elig_reason((pq_elig)r), reasons[r]);
        if (n > 0)
            at += (size_t)n;
        first = false;
    }
}

static void text_column_pages(inspector *in, const col_ref *r, const pq_page_map *pm,
                              bool have)
{
    FILE *f = in->out;
    const pq_column_chunk *cc = &in->m->row_groups[r->g].columns[r->c];
    char fp[300], sum[600];
    if (!have) {
        char *name = clean_str(r->path, strlen(r->path), true);
        char *where = clean_str(fp, strlen(chunk_file_path(cc, fp, sizeof fp)), true);
        fprintf(f, "\n  column %u (%s): pages are in another file (%s)\n", r->c,
                name ? name : "?", where ? where : "?");
        free(name);
        free(where);
        return;
    }
    uint64_t reasons[N_REASONS] = {0}, ok = 0;
    for (uint32_t i = 0; i < pm->n_pages; i++)
        if (pm->pages[i].is_data) {
            reasons[pm->pages[i].elig]++;
            ok += pm->pages[i].elig == PQ_ELIG_OK;
        }
    elig_summary(reasons, pm->n_data_pages, ok, sum, sizeof sum);
    char *name = clean_str(r->path, strlen(r->path), true);
    fprintf(f, "\n  column %u (%s): %u page%s, rows from %s; %s\n", r->c, name ? name : "?",
            pm->n_pages, pm->n_pages == 1 ? "" : "s",
            pm->has_offset_index ? "the OffsetIndex" : "the page headers", sum);
    free(name);
    static const char *const ph[] = {"#", "offset", "header", "compressed", "uncompressed",
                                     "first_row", "rows", "values", "type", "encoding",
                                     "levels", "crc", "eligible", "reason"};
    table t;
    tbl_init(&t, 14, ph, "rrrrrrrrllllll");
    for (uint32_t i = 0; i < pm->n_pages; i++) {
        const pq_page *p = &pm->pages[i];
        char lv[64];
        text_levels(p, lv, sizeof lv);
        tbl_cell(&t, "%u", i);
        tbl_cell(&t, "%" PRIu64, p->offset);
        tbl_cell(&t, "%u", p->header_len);
#define NUM_OR_DASH(v) ((v) >= 0 ? tbl_cell(&t, "%" PRId64, (int64_t)(v)) : tbl_cell(&t, "-"))
        NUM_OR_DASH(p->compressed_size);
        NUM_OR_DASH(p->uncompressed_size);
        NUM_OR_DASH(p->first_row);
        NUM_OR_DASH(p->num_rows);
        NUM_OR_DASH(p->num_values);
#undef NUM_OR_DASH
        tbl_cell(&t, "%s", short_page_type(p->page_type));
        tbl_cell(&t, "%s", p->encoding >= 0 ? pq_encoding_name(p->encoding) : "-");
        tbl_cell(&t, "%s", lv);
        if (p->has_crc)
            tbl_cell(&t, "%08" PRIx32, p->crc);
        else
            tbl_cell(&t, "-");
        tbl_cell(&t, "%s", p->is_data ? (p->elig == PQ_ELIG_OK ? "yes" : "no") : "-");
        tbl_cell(&t, "%s", p->is_data ? pq_elig_reason(p->elig) : "-");
    }
    tbl_print(&t, f, 4);
    tbl_free(&t);
}

static void text_end(inspector *in)
{
    FILE *f = in->out;
    if (!in->o->pages) {
        fprintf(f, "\n(--pages lists every page and whether a partial read could serve it)\n");
        return;
    }
    char sum[600];
    elig_summary(in->reasons, in->n_data_pages, in->n_eligible, sum, sizeof sum);
    fprintf(f, "\nsummary: %" PRIu64 " pages; %s\n", in->n_pages, sum);
}

static bool json_begin(inspector *in)
{
    const pq_file_meta *m = in->m;
    json_t *o = json_object();
    if (!o)
        return false;
    JSET(o, "file", jstr(in->o->file, strlen(in->o->file)));
    JSET(o, "size", json_integer((json_int_t)in->src->size));
    JSET(o, "created_by", jstr((const char *)m->created_by.ptr, m->created_by.len));
    JSET(o, "num_rows", json_integer(m->num_rows));
    json_t *schema = json_array();
    for (uint32_t i = 0; schema && i < m->n_leaves; i++) {
        const pq_leaf *l = &m->leaves[i];
        json_t *e = json_object();
        if (!e)
            break;
        JSET(e, "path", jstr(l->path, strlen(l->path)));
        JSET(e, "physical_type", json_string(pq_physical_type_name(l->type)));
        JSET(e, "logical_type", json_string(pq_logical_kind_name(l->logical.kind)));
        JSET(e, "converted_type", json_string(converted_name(l->converted_type)));
        JSET(e, "max_def", json_integer(l->max_def));
        JSET(e, "max_rep", json_integer(l->max_rep));
        JSET(e, "type_length",
             jint_or_null(l->type_length,
                          l->type == PQ_FIXED_LEN_BYTE_ARRAY && l->type_length >= 0));
        json_array_append_new(schema, e);
    }
    JSET(o, "schema", schema ? schema : json_null());
    if (!put_open_object(in->out, o))
        return false;
    fputs(",\"row_groups\":[", in->out);
    in->first_rg = true;
    return true;
}

static bool json_rg_begin(inspector *in, uint32_t g)
{
    const pq_row_group *rg = &in->m->row_groups[g];
    json_t *o = json_object();
    if (!o)
        return false;
    JSET(o, "index", json_integer(g));
    JSET(o, "num_rows", json_integer(rg->num_rows));
    JSET(o, "total_byte_size", json_integer(rg->total_byte_size));
    if (!in->first_rg)
        fputc(',', in->out);
    in->first_rg = false;
    if (!put_open_object(in->out, o))
        return false;
    fputs(",\"columns\":[", in->out);
    in->first_col = true;
    return true;
}

/* ---------------- driver ---------------- */

static bool inspect_file(inspector *in)
{
    if (!read_footer(in))
        return false;
    if (in->o->pages && !read_index_span(in))
        return false;
    const bool json = in->o->json;
    if (!json)
        text_begin(in);
    else if (!json_begin(in))
        return ins_fail(in, "out of memory");
    for (uint32_t g = 0; g < in->m->n_row_groups; g++) {
        const pq_row_group *rg = &in->m->row_groups[g];
        if (json) {
            if (!json_rg_begin(in, g))
                return ins_fail(in, "out of memory");
        } else {
            text_row_group(in, g);
        }
        for (uint32_t c = 0; c < rg->n_columns; c++) {
            const col_ref r = {g, c, in->m->leaves[c].path};
            pq_page_map pm;
            memset(&pm, 0, sizeof pm);
            bool have = false;
            if (in->o->pages) {
                if (!build_pages(in, &r, &pm, &have)) {
                    pq_page_map_free(&pm);
                    return false;
                }
                for (uint32_t i = 0; have && i < pm.n_pages; i++) {
                    in->n_pages++;
                    if (pm.pages[i].is_data) {
                        in->n_data_pages++;
                        in->reasons[pm.pages[i].elig]++;
                        in->n_eligible += pm.pages[i].elig == PQ_ELIG_OK;
                    }
                }
            }
            bool ok = true;
            if (json) {
                if (!in->first_col)
                    fputc(',', in->out);
                in->first_col = false;
                ok = put_value(in->out, json_column(in, &r, &pm, have));
            } else if (in->o->pages) {
                text_column_pages(in, &r, &pm, have);
            }
            pq_page_map_free(&pm);
            if (!ok)
                return ins_fail(in, "out of memory");
        }
        if (json)
            fputs("]}", in->out);
    }
    if (json)
        fputs("]}\n", in->out);
    else
        text_end(in);
    return true;
}

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...)
{
    char msg[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "sievefs: error: %s (see sievefs inspect --help)\n", msg);
    return 2;
}

/* Print the one error line; newlines in causes become spaces. */
static int report(const char *file, const char *msg)
{
    char line[1400];
    snprintf(line, sizeof line, "%s: %s", file, msg);
    for (char *p = line; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
        else if ((unsigned char)*p < 0x20 || *p == 0x7F)
            *p = '?';
    fflush(stdout);
    fprintf(stderr, "sievefs: error: %s\n", line);
    return 1;
}

int cli_inspect(int argc, char **argv)
{
    enum { OPT_JSON = CLI_OPT_S3_END, OPT_PAGES, OPT_LOG };
    static const struct option longopts[] = {
        CLI_S3_LONGOPTS,
        {"json", no_argument, NULL, OPT_JSON},
        {"pages", no_argument, NULL, OPT_PAGES},
        {"log-level", required_argument, NULL, OPT_LOG},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    inspect_opts o;
    memset(&o, 0, sizeof o);
    o.log_level = -1;
    optind = 1;
    opterr = 0;
    for (;;) {
        int c = getopt_long(argc, argv, "+h", longopts, NULL);
        if (c == -1) {
            if (optind >= argc)
                break;
            if (o.file)
                return usage_error("unexpected argument '%s'", argv[optind]);
            o.file = argv[optind++];
            continue;
        }
        if (cli_s3_option(&o.s3, c, optarg))
            continue;
        switch (c) {
        case OPT_JSON: o.json = true; break;
        case OPT_PAGES: o.pages = true; break;
        case OPT_LOG:
            o.log_level = sv_log_parse_level(optarg);
            if (o.log_level < 0)
                return usage_error("--log-level '%s': expected error, warn, info, debug or trace",
                                   optarg);
            break;
        case 'h': fputs(usage_inspect, stdout); return 0;
        default:
            if (optopt && optopt < 256)
                return usage_error("unknown or incomplete option '-%c'", optopt);
            return usage_error("unknown or incomplete option '%s'", argv[optind - 1]);
        }
    }
    if (!o.file)
        return usage_error("inspect needs a FILE or s3://BUCKET/KEY");
    if (o.file[0] == 0)
        return usage_error("empty file name");
    sv_log_init(o.log_level >= 0 ? (sv_log_level)o.log_level : SV_LOG_ERROR, false);

    inspector in;
    memset(&in, 0, sizeof in);
    in.o = &o;
    in.out = stdout;
    char err[1024];
    char *bucket = NULL;
    cli_s3 s3;
    memset(&s3, 0, sizeof s3);
    bool ok = false;
    if (strncmp(o.file, "s3://", 5) == 0) {
        const char *key;
        if (!cli_parse_s3_url(o.file, "s3://BUCKET/KEY", &bucket, &key, err, sizeof err))
            return usage_error("%s", err);
        if (key[0] == 0 || key[strlen(key) - 1] == '/') {
            free(bucket);
            return usage_error("'%s' names no object: expected s3://BUCKET/KEY", o.file);
        }
        if (strlen(key) > S3_KEY_MAX) {
            free(bucket);
            return usage_error("key of '%s' is longer than %u bytes", o.file, S3_KEY_MAX);
        }
        const cli_s3_tuning tuning = {.max_connections = 2, .stall_timeout_ms = 10000};
        if (!cli_s3_connect(&o.s3, bucket, &tuning, &s3, err, sizeof err)) {
            report(o.file, err);
            free(bucket);
            return 1;
        }
        in.src = byte_source_open_s3(&s3, key, "the object", err, sizeof err);
    } else {
        in.src = byte_source_open_file(o.file, err, sizeof err);
    }
    if (!in.src) {
        report(o.file, err);
    } else {
        ok = inspect_file(&in);
        if (ok && (fflush(in.out) != 0 || ferror(in.out))) {
            ok = false;
            ins_fail(&in, "writing the output: %s", strerror(errno));
        }
        if (!ok)
            report(o.file, in.err);
        log_debug("%" PRIu64 " reads, %" PRIu64 " bytes", in.src->n_reads, in.src->bytes_read);
    }
    pq_file_meta_free(in.m);
    free(in.tail);
    free(in.index);
    byte_source_close(in.src);
    cli_s3_close(&s3);
    free(bucket);
    return ok ? 0 : 1;
}
