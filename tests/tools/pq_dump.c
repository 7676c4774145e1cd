/* pq_dump: decode every column of a local Parquet file with the sievefs
 * decoders and print one JSON line per column, or time the decoding.
 *
 *   pq_dump [--column PATH]... FILE.parquet
 *       {"column":"a.b","physical":"INT32","kind":"INT","max_def":1,"max_rep":0,
 *        "values":[1,null,3]}
 *     Flat columns (max_rep 0, max_def <= 1) list every row, null for nulls.
 *     Nested columns list the non-null leaf values and add "def" and "rep"
 *     arrays (one entry per level). Values: BOOL true/false; INT, UINT, DATE
 *     (days), TIME and TIMESTAMP (in their unit; INT96 as nanoseconds) as
 *     numbers; FLOAT/DOUBLE as numbers or "NaN"/"Infinity"/"-Infinity";
 *     DECIMAL as a string with `scale` fraction digits; byte arrays as hex
 *     strings.
 *
 *   pq_dump --bench [--repeat N] [--column PATH]... FILE.parquet
 *       {"column":"a","seconds":0.0123,"values":10000000,"pages":500,
 *        "page_bytes":40000000,"out_bytes":80000000,"mb_per_s":3252.0}
 *     Decodes without printing values; seconds is the best of N runs (default
 *     3) of walking the column's pages in memory: header parsing,
 *     decompression, dictionary and data page decoding. page_bytes is the sum
 *     of uncompressed page sizes; out_bytes the decoded values (width per
 *     value; payload + 4 per string); mb_per_s = page_bytes / seconds / 1e6.
 *
 *   pq_dump --fuzz-seeds DIR [--seed-prefix P] FILE.parquet
 *     Also writes fuzz seeds: the first data pages of every column chunk in
 *     the tests/fuzz/fuzz_decode_page.h layout to DIR/decode_page/, and
 *     their compressed bodies to DIR/codec/ (fuzz_codec.c layout), both
 *     directories existing. Pages over 16 KiB are skipped.
 *
 * Exit status 0 on success, 1 on a decoding error (reported on stderr with
 * the column, row group and page), 2 on usage errors. */
#include "../fuzz/fuzz_decode_page.h"
#include "decode.h"
#include "parquet_meta.h"
#include "pq_value.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    const uint8_t *file;
    size_t file_len;
    const pq_file_meta *meta;
    pq_decoder *dec;
    bool print;
    FILE *out;
    /* per column */
    const pq_leaf *leaf;
    pqv_type vt;
    bool flat;
    bool first_value;
    /* nested columns: levels collected for printing after the values */
    uint16_t *defs, *reps;
    size_t n_levels, cap_levels;
    /* data page encodings and page versions seen in this column */
    uint32_t enc_seen;
    bool v1_seen, v2_seen;
    /* stats */
    uint64_t values, pages, page_bytes, out_bytes;
    /* fuzz seed output */
    const char *seed_dir, *seed_prefix;
    uint32_t col_index;
    const uint8_t *dict_body;
    size_t dict_len;
    pq_dict_page_info dict_info;
} dump_ctx;

#define SEED_MAX_BODY (16u << 10)

static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void write_file(const char *path, const uint8_t *a, size_t alen, const uint8_t *b,
                       size_t blen, const uint8_t *c, size_t clen)
{
    FILE *f = fopen(path, "wb");
    if (!f) {
        fprintf(stderr, "pq_dump: %s: %s\n", path, strerror(errno));
        return;
    }
    fwrite(a, 1, alen, f);
    if (blen)
        fwrite(b, 1, blen, f);
    if (clen)
        fwrite(c, 1, clen, f);
    fclose(f);
}

static void write_seeds(dump_ctx *c, const pq_column_desc *desc, const pq_data_page_info *info,
                        const uint8_t *body, size_t body_len, uint32_t rg, uint32_t page_no)
{
    if (body_len > SEED_MAX_BODY || c->dict_len > SEED_MAX_BODY)
        return;
    uint8_t h[FUZZ_PAGE_HEADER_LEN] = {0};
    h[0] = (uint8_t)desc->type;
    h[1] = (uint8_t)((info->v2 ? FUZZ_PAGE_V2 : 0) | (info->is_compressed ? FUZZ_PAGE_COMPRESSED : 0) |
                     (c->dict_body ? FUZZ_PAGE_HAS_DICT : 0));
    h[2] = (uint8_t)desc->codec;
    h[3] = (uint8_t)info->encoding;
    h[4] = (uint8_t)info->def_level_encoding;
    h[5] = (uint8_t)info->rep_level_encoding;
    h[6] = (uint8_t)desc->max_def;
    h[7] = (uint8_t)desc->max_rep;
    put32(h + 8, (uint32_t)desc->type_length);
    put32(h + 12, (uint32_t)info->num_values);
    put32(h + 16, (uint32_t)info->num_nulls);
    put32(h + 20, (uint32_t)info->num_rows);
    put32(h + 24, (uint32_t)info->def_levels_byte_length);
    put32(h + 28, (uint32_t)info->rep_levels_byte_length);
    put32(h + 32, (uint32_t)info->uncompressed_page_size);
    size_t dict_len = 0;
    if (c->dict_body) {
        put32(h + 36, (uint32_t)c->dict_info.num_values);
        put32(h + 40, (uint32_t)c->dict_info.uncompressed_page_size);
        put32(h + 44, (uint32_t)c->dict_len);
        h[48] = (uint8_t)c->dict_info.encoding;
        dict_len = c->dict_len;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/decode_page/%s_c%u_rg%u_p%u.bin", c->seed_dir, c->seed_prefix,
             c->col_index, rg, page_no);
    write_file(path, h, sizeof h, c->dict_body, dict_len, body, body_len);
    /* The compressed part of the page, for the codec fuzzer. */
    if (desc->codec == PQ_CODEC_UNCOMPRESSED || (info->v2 && !info->is_compressed))
        return;
    size_t skip = 0, unc = (size_t)info->uncompressed_page_size;
    if (info->v2) {
        skip = (size_t)info->def_levels_byte_length + (size_t)info->rep_levels_byte_length;
        if (skip > body_len || skip > unc)
            return;
        unc -= skip;
    }
    if (unc >= (1u << 24))
        return;
    const uint8_t ch[4] = {(uint8_t)desc->codec, (uint8_t)unc, (uint8_t)(unc >> 8),
                           (uint8_t)(unc >> 16)};
    snprintf(path, sizeof path, "%s/codec/%s_c%u_rg%u_p%u.bin", c->seed_dir, c->seed_prefix,
             c->col_index, rg, page_no);
    write_file(path, ch, sizeof ch, body + skip, body_len - skip, NULL, 0);
}

static void die_usage(void)
{
    fprintf(stderr, "usage: pq_dump [--bench] [--repeat N] [--column PATH]... "
                    "[--fuzz-seeds DIR [--seed-prefix P]] FILE.parquet\n");
    exit(2);
}

static const char *phys_name(int t)
{
    static const char *const names[] = {"BOOLEAN", "INT32",  "INT64",      "INT96",
                                        "FLOAT",   "DOUBLE", "BYTE_ARRAY", "FIXED_LEN_BYTE_ARRAY"};
    return t >= 0 && t <= 7 ? names[t] : "?";
}

static void put_sep(dump_ctx *c)
{
    if (!c->first_value)
        fputc(',', c->out);
    c->first_value = false;
}

static void print_value(dump_ctx *c, const pqv *v)
{
    char buf[256];
    switch (v->kind) {
    case PQV_FLOAT:
        if (isnan(v->v.f)) {
            fputs("\"NaN\"", c->out);
        } else if (isinf(v->v.f)) {
            fputs(v->v.f < 0 ? "\"-Infinity\"" : "\"Infinity\"", c->out);
        } else {
            snprintf(buf, sizeof buf, c->vt.physical == PQ_DOUBLE ? "%.17g" : "%.9g", v->v.f);
            fputs(buf, c->out);
            if (!strpbrk(buf, ".eE"))
                fputs(".0", c->out);
        }
        return;
    case PQV_DECIMAL:
        pqv_format(v, buf, sizeof buf);
        fprintf(c->out, "\"%s\"", buf);
        return;
    case PQV_BYTES: {
        static const char hex[] = "0123456789abcdef";
        fputc('"', c->out);
        for (uint32_t i = 0; i < v->v.bytes.len; i++) {
            fputc(hex[v->v.bytes.ptr[i] >> 4], c->out);
            fputc(hex[v->v.bytes.ptr[i] & 15], c->out);
        }
        fputc('"', c->out);
        return;
    }
    default:
        pqv_format(v, buf, sizeof buf);
        fputs(buf, c->out);
        return;
    }
}

static int append_levels(dump_ctx *c, const pq_page_values *pv)
{
    if (c->n_levels + pv->num_values > c->cap_levels) {
        size_t cap = c->cap_levels ? c->cap_levels : 1024;
        while (cap < c->n_levels + pv->num_values)
            cap *= 2;
        uint16_t *d = realloc(c->defs, cap * 2), *r = d ? realloc(c->reps, cap * 2) : NULL;
        if (d)
            c->defs = d;
        if (r)
            c->reps = r;
        if (!d || !r)
            return -1;
        c->cap_levels = cap;
    }
    for (uint32_t i = 0; i < pv->num_values; i++) {
        c->defs[c->n_levels + i] = pv->def_levels ? pv->def_levels[i] : 0;
        c->reps[c->n_levels + i] = pv->rep_levels ? pv->rep_levels[i] : 0;
    }
    c->n_levels += pv->num_values;
    return 0;
}

static int emit_page(dump_ctx *c, const pq_page_values *pv)
{
    pqd_error err;
    uint32_t k = 0;
    if (c->flat) {
        for (uint32_t i = 0; i < pv->num_values; i++) {
            put_sep(c);
            if (pv->def_levels && pv->def_levels[i] < c->leaf->max_def) {
                fputs("null", c->out);
                continue;
            }
            pqv v;
            if (pqv_from_page(&c->vt, pv, k++, &v, &err) != PQD_OK) {
                fprintf(stderr, "pq_dump: %s: value: %s\n", c->leaf->path, err.msg);
                return -1;
            }
            print_value(c, &v);
        }
        return 0;
    }
    for (k = 0; k < pv->num_non_null; k++) {
        pqv v;
        if (pqv_from_page(&c->vt, pv, k, &v, &err) != PQD_OK) {
            fprintf(stderr, "pq_dump: %s: value: %s\n", c->leaf->path, err.msg);
            return -1;
        }
        put_sep(c);
        print_value(c, &v);
    }
    return append_levels(c, pv);
}

/* Walk and decode the pages of one column chunk. */
static int do_chunk(dump_ctx *c, uint32_t rg, uint32_t col)
{
    const pq_column_chunk *cc = &c->meta->row_groups[rg].columns[col];
    uint64_t off, len;
    if (!pq_column_chunk_range(cc, &off, &len) || off > c->file_len || len > c->file_len - off) {
        fprintf(stderr, "pq_dump: %s: row group %u: bad column chunk range\n", c->leaf->path, rg);
        return -1;
    }
    const pq_column_desc desc = {
        .type = c->leaf->type,
        .type_length = c->leaf->type_length,
        .max_def = c->leaf->max_def,
        .max_rep = c->leaf->max_rep,
        .codec = cc->codec,
    };
    pq_dictionary dict = {0};
    bool have_dict = false;
    c->dict_body = NULL;
    c->dict_len = 0;
    int rc = 0;
    uint64_t pos = off;
    const uint64_t end = off + len;
    uint32_t page_no = 0;
    int64_t values_seen = 0;
    while (pos < end && values_seen < cc->num_values) {
        pq_page_header h;
        size_t hl;
        tc_error terr;
        if (pq_page_header_parse(c->file + pos, (size_t)(end - pos), &h, &hl, &terr) != TC_OK) {
            fprintf(stderr, "pq_dump: %s: row group %u page %u: header: %s\n", c->leaf->path, rg,
                    page_no, terr.msg);
            rc = -1;
            break;
        }
        const uint64_t body_off = pos + hl;
        if (h.compressed_page_size < 0 || (uint64_t)h.compressed_page_size > end - body_off) {
            fprintf(stderr, "pq_dump: %s: row group %u page %u: body past the chunk end\n",
                    c->leaf->path, rg, page_no);
            rc = -1;
            break;
        }
        const uint8_t *body = c->file + body_off;
        const size_t body_len = (size_t)h.compressed_page_size;
        pqd_error err;
        pqd_status st = PQD_OK;
        if (h.type == PQ_PAGE_DICTIONARY) {
            pq_dict_page_info di;
            st = pq_dict_page_info_from_header(&h, &di, &err);
            if (st == PQD_OK) {
                pq_dictionary_free(&dict);
                have_dict = false;
                st = pq_decode_dictionary(c->dec, &desc, &di, body, body_len, &dict, &err);
                have_dict = st == PQD_OK;
                c->dict_body = body;
                c->dict_len = body_len;
                c->dict_info = di;
            }
            c->page_bytes += (uint64_t)h.uncompressed_page_size;
        } else if (h.type == PQ_PAGE_DATA || h.type == PQ_PAGE_DATA_V2) {
            pq_data_page_info info;
            pq_page_values pv;
            st = pq_data_page_info_from_header(&h, &info, &err);
            if (st == PQD_OK && c->seed_dir && page_no < 4)
                write_seeds(c, &desc, &info, body, body_len, rg, page_no);
            if (st == PQD_OK)
                st = pq_decode_data_page(c->dec, &desc, &info, body, body_len,
                                         have_dict ? &dict : NULL, &pv, &err);
            if (st == PQD_OK) {
                values_seen += pv.num_values;
                if (info.encoding >= 0 && info.encoding < 32)
                    c->enc_seen |= 1u << info.encoding;
                if (info.v2)
                    c->v2_seen = true;
                else
                    c->v1_seen = true;
                c->values += pv.num_values;
                c->page_bytes += (uint64_t)h.uncompressed_page_size;
                c->pages++;
                c->out_bytes += pv.type == PQ_BYTE_ARRAY
                                    ? (pv.offsets ? pv.offsets[pv.num_non_null] : 0) +
                                          4ull * pv.num_non_null
                                    : (uint64_t)pv.num_non_null * pv.width;
                if (c->print && emit_page(c, &pv) != 0) {
                    rc = -1;
                    break;
                }
            }
        }
        if (st != PQD_OK) {
            fprintf(stderr, "pq_dump: %s: row group %u page %u (offset %llu): %s: %s\n",
                    c->leaf->path, rg, page_no, (unsigned long long)pos, pqd_status_name(st),
                    err.msg);
            rc = -1;
            break;
        }
        pos = body_off + body_len;
        page_no++;
    }
    if (rc == 0 && values_seen != cc->num_values) {
        fprintf(stderr, "pq_dump: %s: row group %u: %lld values decoded, metadata says %lld\n",
                c->leaf->path, rg, (long long)values_seen, (long long)cc->num_values);
        rc = -1;
    }
    pq_dictionary_free(&dict);
    return rc;
}

static int do_column(dump_ctx *c, uint32_t col)
{
    c->leaf = &c->meta->leaves[col];
    pqd_error err;
    if (pqv_type_from_leaf(c->leaf, &c->vt, &err) != PQD_OK &&
        pqv_type_resolve(c->leaf->type, c->leaf->type_length, PQ_CT_NONE, -1, -1, NULL, &c->vt,
                         &err) != PQD_OK) {
        fprintf(stderr, "pq_dump: %s: %s\n", c->leaf->path, err.msg);
        return -1;
    }
    c->flat = c->leaf->max_rep == 0 && c->leaf->max_def <= 1;
    c->first_value = true;
    c->n_levels = 0;
    c->enc_seen = 0;
    c->v1_seen = c->v2_seen = false;
    if (c->print) {
        fputs("{\"column\":\"", c->out);
        for (const char *p = c->leaf->path; *p; p++) {
            if (*p == '"' || *p == '\\')
                fputc('\\', c->out);
            if ((unsigned char)*p < 0x20)
                fprintf(c->out, "\\u%04x", *p);
            else
                fputc(*p, c->out);
        }
        fprintf(c->out, "\",\"physical\":\"%s\",\"kind\":\"%s\",\"max_def\":%u,\"max_rep\":%u",
                phys_name(c->leaf->type), pqv_kind_name(c->vt.kind), c->leaf->max_def,
                c->leaf->max_rep);
        if (c->vt.kind == PQV_DECIMAL)
            fprintf(c->out, ",\"scale\":%d", c->vt.scale);
        fputs(",\"values\":[", c->out);
    }
    for (uint32_t rg = 0; rg < c->meta->n_row_groups; rg++)
        if (do_chunk(c, rg, col) != 0)
            return -1;
    if (c->print) {
        fputs("],\"codecs\":[", c->out);
        uint32_t seen = 0;
        for (uint32_t rg = 0; rg < c->meta->n_row_groups; rg++) {
            const int codec = c->meta->row_groups[rg].columns[col].codec;
            if (codec >= 0 && codec < 32 && !(seen & (1u << codec))) {
                fprintf(c->out, "%s\"%s\"", seen ? "," : "", pq_codec_name(codec));
                seen |= 1u << codec;
            }
        }
        fputs("],\"encodings\":[", c->out);
        for (uint32_t e = 0, first = 1; e < 32; e++) {
            if (c->enc_seen & (1u << e)) {
                fprintf(c->out, "%s\"%s\"", first ? "" : ",", pq_encoding_name((int)e));
                first = 0;
            }
        }
        fprintf(c->out, "],\"page_versions\":[%s%s%s]", c->v1_seen ? "1" : "",
                c->v1_seen && c->v2_seen ? "," : "", c->v2_seen ? "2" : "");
        if (!c->flat) {
            fputs(",\"def\":[", c->out);
            for (size_t i = 0; i < c->n_levels; i++)
                fprintf(c->out, i ? ",%u" : "%u", c->defs[i]);
            fputs("],\"rep\":[", c->out);
            for (size_t i = 0; i < c->n_levels; i++)
                fprintf(c->out, i ? ",%u" : "%u", c->reps[i]);
            fputc(']', c->out);
        }
        fputs("}\n", c->out);
    }
    return 0;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    bool bench = false;
    int repeat = 3;
    const char *path = NULL, *seed_dir = NULL, *seed_prefix = "seed";
    const char **cols = calloc((size_t)argc, sizeof *cols);
    size_t n_cols = 0;
    if (!cols)
        return 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--bench")) {
            bench = true;
        } else if (!strcmp(argv[i], "--repeat") && i + 1 < argc) {
            repeat = atoi(argv[++i]);
            if (repeat < 1)
                die_usage();
        } else if (!strcmp(argv[i], "--fuzz-seeds") && i + 1 < argc) {
            seed_dir = argv[++i];
        } else if (!strcmp(argv[i], "--seed-prefix") && i + 1 < argc) {
            seed_prefix = argv[++i];
        } else if (!strcmp(argv[i], "--column") && i + 1 < argc) {
            cols[n_cols++] = argv[++i];
        } else if (argv[i][0] == '-' || path) {
            die_usage();
        } else {
            path = argv[i];
        }
    }
    if (!path)
        die_usage();

    /* Read the whole file into anonymous memory (as a reader holding the
     * fetched bytes would; also what the benchmark gives pyarrow). */
    uint8_t *file = NULL;
    size_t len = 0;
    pq_file_meta *meta = NULL;
    dump_ctx c = {.print = !bench, .out = stdout, .seed_dir = seed_dir, .seed_prefix = seed_prefix};
    int rc = 1;
    const int fd = open(path, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        fprintf(stderr, "pq_dump: %s: %s\n", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        goto done;
    }
    len = (size_t)st.st_size;
    file = malloc(len ? len : 1);
    size_t got = 0;
    while (file && got < len) {
        const ssize_t r = read(fd, file + got, len - got);
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    if (!file || got != len) {
        fprintf(stderr, "pq_dump: %s: cannot read\n", path);
        goto done;
    }
    tc_error terr;
    if (pq_file_meta_from_tail(file, len, len, &meta, NULL, &terr) != TC_OK) {
        fprintf(stderr, "pq_dump: %s: footer: %s\n", path, terr.msg);
        goto done;
    }
    c.file = file;
    c.file_len = len;
    c.meta = meta;
    c.dec = pq_decoder_new(NULL);
    if (!c.dec)
        goto done;
    static char outbuf[1 << 20];
    setvbuf(stdout, outbuf, _IOFBF, sizeof outbuf);

    rc = 0;
    for (uint32_t col = 0; col < meta->n_leaves && rc == 0; col++) {
        if (n_cols) {
            bool want = false;
            for (size_t i = 0; i < n_cols; i++)
                want |= !strcmp(cols[i], meta->leaves[col].path);
            if (!want)
                continue;
        }
        c.col_index = col;
        if (!bench) {
            rc = do_column(&c, col);
            continue;
        }
        double best = 1e300;
        for (int r = 0; r < repeat && rc == 0; r++) {
            c.values = c.pages = c.page_bytes = c.out_bytes = 0;
            const double t0 = now();
            rc = do_column(&c, col);
            const double t = now() - t0;
            best = t < best ? t : best;
        }
        if (rc == 0)
            printf("{\"column\":\"%s\",\"seconds\":%.6f,\"values\":%llu,\"pages\":%llu,"
                   "\"page_bytes\":%llu,\"out_bytes\":%llu,\"mb_per_s\":%.1f}\n",
                   meta->leaves[col].path, best, (unsigned long long)c.values,
                   (unsigned long long)c.pages, (unsigned long long)c.page_bytes,
                   (unsigned long long)c.out_bytes,
                   best > 0 ? (double)c.page_bytes / best / 1e6 : 0.0);
    }
    fflush(stdout);
done:
    free(c.defs);
    free(c.reps);
    free(cols);
    pq_decoder_free(c.dec);
    pq_file_meta_free(meta);
    free(file);
    return rc == 0 ? 0 : 1;
}
