/* `sievefs inspect` as text: the file's header lines, the schema, a table of
 * column chunks per row group and, with --pages, a table of pages per chunk
 * with an eligibility summary; columns aligned, sizes human. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "inspect_internal.h"
#include "sv_grow.h"

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

/* ---------------- text tables ---------------- */

typedef struct {
    size_t ncols;
    const char *const *head;
    const char *align; /* 'l' or 'r' per column */
    char **cells;
    size_t count, cap;
    bool oom;
} table;

/* fmt formatted, cut to max - 1 bytes (at most 1199), and made printable;
 * NULL when out of memory. */
static char *printable_vformat(size_t max, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
static char *printable_vformat(size_t max, const char *fmt, va_list ap)
{
    char buf[1200];
    if (max > sizeof buf)
        max = sizeof buf;
    int n = vsnprintf(buf, max, fmt, ap);
    size_t len = n < 0 ? 0 : (size_t)n < max ? (size_t)n : max - 1;
    return ins_clean_str(buf, len, true);
}

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
    if (!sv_grow((void **)&t->cells, &t->cap, t->count + 1, sizeof *t->cells, 64,
                 SIZE_MAX / sizeof *t->cells)) {
        t->oom = true;
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    char *c = printable_vformat(512, fmt, ap);
    va_end(ap);
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

/* ---------------- the rendering ---------------- */

static const char *chunk_file_path(const pq_column_chunk *cc, char *buf, size_t len)
{
    snprintf(buf, len, "%.*s", (int)cc->file_path.len, (const char *)cc->file_path.ptr);
    return buf;
}

/* "label      value" line of the text header, the value made printable. */
static void kv(FILE *f, const char *label, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void kv(FILE *f, const char *label, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *c = printable_vformat(1200, fmt, ap);
    va_end(ap);
    fprintf(f, "%-16s%s\n", label, c ? c : "?");
    free(c);
}

static bool text_begin(inspector *in)
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
        tbl_cell(&t, "%s", ins_converted_name(l->converted_type));
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
    return true;
}

static bool text_row_group(inspector *in, uint32_t g)
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
    return true;
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
        if (r == PQ_ELIG_NOT_DATA_PAGE || pq_elig_is_eligible((pq_elig)r) || reasons[r] == 0)
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
        char *name = ins_clean_str(r->path, strlen(r->path), true);
        char *where = ins_clean_str(fp, strlen(chunk_file_path(cc, fp, sizeof fp)), true);
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
            ok += pq_elig_is_eligible(pm->pages[i].elig);
        }
    elig_summary(reasons, pm->n_data_pages, ok, sum, sizeof sum);
    char *name = ins_clean_str(r->path, strlen(r->path), true);
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
        const bool judged = p->is_data || (int32_t)i == pm->dict_page;
        tbl_cell(&t, "%s", judged ? (pq_elig_is_eligible(p->elig) ? "yes" : "no") : "-");
        tbl_cell(&t, "%s", judged ? pq_elig_reason(p->elig) : "-");
    }
    tbl_print(&t, f, 4);
    tbl_free(&t);
}

static bool text_column(inspector *in, const col_ref *r, const pq_page_map *pm, bool have)
{
    /* Without --pages the row group's table has said all there is. */
    if (in->o->pages)
        text_column_pages(in, r, pm, have);
    return true;
}

static void text_row_group_end(inspector *in)
{
    (void)in;
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

const ins_output ins_text_output = {text_begin, text_row_group, text_column, text_row_group_end,
                                    text_end};
