/* `sievefs inspect`: its options, opening the file (local or s3://), reading
 * its bytes and the walk over row groups and column chunks that feeds the
 * rendering (see cli_inspect.h and docs/inspect.md).
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
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inspect_internal.h"
#include "log.h"

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

/* Reading strategy knobs (the page scan's are in inspect_pages.c). */
#define TAIL_MIN (64u << 10)
#define TAIL_MAX (1u << 20)
#define INDEX_SPAN_MAX (64u << 20)  /* read all offset indexes at once up to this */

bool ins_fail(inspector *in, const char *fmt, ...)
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

const uint8_t *ins_view(inspector *in, uint64_t off, size_t len, uint8_t **scratch)
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
    sv_error e;
    if (byte_source_read(in->src, off, len, buf, &e) != 0) {
        free(buf);
        ins_fail(in, "%s", e.msg);
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
    sv_error e;
    for (int attempt = 0;; attempt++) {
        /* Grow the held tail to `want` bytes, reading only what is missing. */
        if (want > in->tail_len) {
            uint8_t *t = malloc((size_t)want);
            if (!t)
                return ins_fail(in, "out of memory reading the last %" PRIu64 " bytes", want);
            const size_t missing = (size_t)want - in->tail_len;
            if (byte_source_read(in->src, size - want, missing, t, &e) != 0) {
                free(t);
                return ins_fail(in, "%s", e.msg);
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

/* ---------------- driver ---------------- */

/* Add a column chunk's pages to the totals of the summary. */
static void count_pages(inspector *in, const pq_page_map *pm)
{
    for (uint32_t i = 0; i < pm->n_pages; i++) {
        in->n_pages++;
        if (pm->pages[i].is_data) {
            in->n_data_pages++;
            in->reasons[pm->pages[i].elig]++;
            in->n_eligible += pq_elig_is_eligible(pm->pages[i].elig);
        }
    }
}

static bool inspect_file(inspector *in)
{
    if (!read_footer(in))
        return false;
    if (in->o->pages && !read_index_span(in))
        return false;
    const ins_output *out = in->o->json ? &ins_json_output : &ins_text_output;
    if (!out->begin(in))
        return ins_fail(in, "out of memory");
    for (uint32_t g = 0; g < in->m->n_row_groups; g++) {
        const pq_row_group *rg = &in->m->row_groups[g];
        if (!out->row_group(in, g))
            return ins_fail(in, "out of memory");
        for (uint32_t c = 0; c < rg->n_columns; c++) {
            const col_ref r = {g, c, in->m->leaves[c].path};
            pq_page_map pm;
            memset(&pm, 0, sizeof pm);
            bool have = false;
            if (in->o->pages) {
                if (!ins_build_pages(in, &r, &pm, &have)) {
                    pq_page_map_free(&pm);
                    return false;
                }
                if (have)
                    count_pages(in, &pm);
            }
            const bool ok = out->column(in, &r, &pm, have);
            pq_page_map_free(&pm);
            if (!ok)
                return ins_fail(in, "out of memory");
        }
        out->row_group_end(in);
    }
    out->end(in);
    return true;
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

/* Options into *o: -1 to go on, else the exit status (--help, usage error). */
static int parse_args(int argc, char **argv, inspect_opts *o)
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
    memset(o, 0, sizeof *o);
    o->log_level = -1;
    for (bool first = true;; first = false) {
        int c = cli_getopt(argc, argv, "+h", longopts, first, &o->file, &o->s3, "inspect");
        if (c == -1)
            break;
        if (c == CLI_GETOPT_USAGE)
            return 2;
        switch (c) {
        case OPT_JSON: o->json = true; break;
        case OPT_PAGES: o->pages = true; break;
        case OPT_LOG:
            o->log_level = sv_log_parse_level(optarg);
            if (o->log_level < 0)
                return cli_usage_error("inspect", "--log-level '%s': expected error, warn, info, debug or trace",
                                   optarg);
            break;
        case 'h': fputs(usage_inspect, stdout); return 0;
        default: return cli_bad_option("inspect", argv);
        }
    }
    if (!o->file)
        return cli_usage_error("inspect", "inspect needs a FILE or s3://BUCKET/KEY");
    if (o->file[0] == 0)
        return cli_usage_error("inspect", "empty file name");
    return -1;
}

/* Open o->file: a local file, or s3://BUCKET/KEY through *s3 (connected
 * here; *bucket holds its bucket name, the caller frees both). NULL with
 * *status the exit status, the error printed. */
static byte_source *open_source(const inspect_opts *o, cli_s3 *s3, char **bucket, int *status)
{
    sv_error err;
    byte_source *src;
    *status = 1;
    if (strncmp(o->file, "s3://", 5) == 0) {
        const char *key;
        if (!cli_parse_s3_url(o->file, "s3://BUCKET/KEY", bucket, &key, &err)) {
            *status = cli_usage_error("inspect", "%s", err.msg);
            return NULL;
        }
        if (key[0] == 0 || key[strlen(key) - 1] == '/') {
            *status = cli_usage_error("inspect", "'%s' names no object: expected s3://BUCKET/KEY", o->file);
            return NULL;
        }
        if (strlen(key) > S3_KEY_MAX) {
            *status = cli_usage_error("inspect", "key of '%s' is longer than %u bytes", o->file, S3_KEY_MAX);
            return NULL;
        }
        const cli_s3_tuning tuning = {.max_connections = 2, .stall_timeout_ms = 10000};
        if (!cli_s3_connect(&o->s3, *bucket, &tuning, s3, &err)) {
            report(o->file, err.msg);
            return NULL;
        }
        src = byte_source_open_s3(s3, key, "the object", &err);
    } else {
        src = byte_source_open_file(o->file, &err);
    }
    if (!src)
        report(o->file, err.msg);
    return src;
}

int cli_inspect(int argc, char **argv)
{
    inspect_opts o;
    int status = parse_args(argc, argv, &o);
    if (status >= 0)
        return status;
    sv_log_init(o.log_level >= 0 ? (sv_log_level)o.log_level : SV_LOG_ERROR, false);

    inspector in;
    memset(&in, 0, sizeof in);
    in.o = &o;
    in.out = stdout;
    char *bucket = NULL;
    cli_s3 s3;
    memset(&s3, 0, sizeof s3);
    in.src = open_source(&o, &s3, &bucket, &status);
    if (in.src) {
        status = inspect_file(&in) ? 0 : 1;
        if (status == 0 && (fflush(in.out) != 0 || ferror(in.out))) {
            status = 1;
            ins_fail(&in, "writing the output: %s", strerror(errno));
        }
        if (status != 0)
            report(o.file, in.err);
        log_debug("%" PRIu64 " reads, %" PRIu64 " bytes", in.src->n_reads, in.src->bytes_read);
    }
    pq_file_meta_free(in.m);
    free(in.tail);
    free(in.index);
    byte_source_close(in.src);
    cli_s3_close(&s3);
    free(bucket);
    return status;
}
