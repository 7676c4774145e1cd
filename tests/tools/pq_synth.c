/* pq_synth: run the page planner (planner/synth/) over every data page
 * of a local Parquet file as a view would, and write a copy in which every
 * page the planner serves sparsely is replaced by its image. Readers given
 * the copy must return the selected rows unchanged; that is how
 * tests/e2e/test_page_plan_readers.py checks the planner without a mount.
 *
 *   pq_synth IN.parquet OUT.parquet --rows SPEC [--gap N] [--min-saving F]
 *            [--skip-columns c1,c2] [--verbose]
 *
 *   --rows SPEC      selected file rows: START-END[,START-END...] (END
 *                    exclusive), a single row N, or "none"
 *   --gap N          pp_input.gap_merge (default 0)
 *   --min-saving F   pp_input.min_saving (default 0)
 *   --skip-columns   dotted column paths left untouched (their pages are
 *                    neither planned nor counted)
 *   --verbose        one JSON line per page on stderr
 *   --no-dict-size   do not tell the planner the dictionary size
 *                    (pp_input.dict_values 0), as a caller that has not read
 *                    the dictionary page header
 *
 * Column chunks without an OffsetIndex are left as they are (their pages'
 * rows are unknown) and counted; a file where no chunk has one is an error.
 * Prints one JSON line on stdout:
 *   {"pages":N,"real":R,"sparse":S,"synthesized":Y,"partial":P,
 *    "page_bytes":B,"sparse_page_bytes":SB,"sparse_fetched":SF,
 *    "probe_bytes":PB,"max_rounds":M,"unindexed_chunks":U,
 *    "reasons":{"encoding":3,...}}
 * sparse_fetched is what the sparse pages cost, probe_bytes what planning
 * fetched for pages that ended real.
 * Exit status 0 on success, 1 on a planner contract violation or file
 * error, 2 on usage errors. */
#include "page_map.h"
#include "page_plan.h"
#include "parquet_meta.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LOOPS 64

typedef struct {
    uint64_t a, b; /* file rows [a, b) */
} row_range;

typedef struct {
    char word[32];
    unsigned count;
} reason_count;

typedef struct {
    row_range *rows;
    size_t n_rows;
    uint32_t gap;
    double min_saving;
    char **skip;
    size_t n_skip;
    bool verbose;
    bool no_dict_size;
    /* totals */
    unsigned pages, real, sparse, synth;
    unsigned indexed, unindexed; /* column chunks with / without an OffsetIndex */
    uint64_t page_bytes, sparse_page_bytes, sparse_fetched, probe_bytes;
    uint32_t max_rounds;
    reason_count reasons[64];
    size_t n_reasons;
} synth_ctx;

static void die_usage(void)
{
    fprintf(stderr, "usage: pq_synth IN.parquet OUT.parquet --rows START-END[,...]|N|none "
                    "[--gap N] [--min-saving F] [--skip-columns c1,c2] [--verbose] "
                    "[--no-dict-size]\n");
    exit(2);
}

static int cmp_rows(const void *x, const void *y)
{
    const row_range *a = x, *b = y;
    return a->a < b->a ? -1 : a->a > b->a;
}

static bool parse_rows(const char *spec, synth_ctx *c)
{
    if (strcmp(spec, "none") == 0)
        return true;
    const char *s = spec;
    while (*s) {
        char *end;
        errno = 0;
        const unsigned long long a = strtoull(s, &end, 10);
        if (end == s || errno)
            return false;
        unsigned long long b = a + 1;
        s = end;
        if (*s == '-') {
            s++;
            b = strtoull(s, &end, 10);
            if (end == s || errno || b < a)
                return false;
            s = end;
        }
        if (*s == ',')
            s++;
        else if (*s)
            return false;
        if (b == a)
            continue;
        row_range *nr = realloc(c->rows, (c->n_rows + 1) * sizeof *nr);
        if (!nr)
            return false;
        c->rows = nr;
        c->rows[c->n_rows++] = (row_range){a, b};
    }
    qsort(c->rows, c->n_rows, sizeof *c->rows, cmp_rows);
    size_t m = 0;
    for (size_t i = 0; i < c->n_rows; i++) {
        if (m && c->rows[i].a <= c->rows[m - 1].b) {
            if (c->rows[i].b > c->rows[m - 1].b)
                c->rows[m - 1].b = c->rows[i].b;
            continue;
        }
        c->rows[m++] = c->rows[i];
    }
    c->n_rows = m;
    return true;
}

static bool skipped(const synth_ctx *c, const char *path)
{
    for (size_t i = 0; i < c->n_skip; i++)
        if (strcmp(c->skip[i], path) == 0)
            return true;
    return false;
}

static void count_reason(synth_ctx *c, const char *reason)
{
    char word[32];
    size_t n = strcspn(reason, ":");
    if (n >= sizeof word)
        n = sizeof word - 1;
    memcpy(word, reason, n);
    word[n] = 0;
    for (size_t i = 0; i < c->n_reasons; i++)
        if (strcmp(c->reasons[i].word, word) == 0) {
            c->reasons[i].count++;
            return;
        }
    if (c->n_reasons < sizeof c->reasons / sizeof c->reasons[0]) {
        snprintf(c->reasons[c->n_reasons].word, sizeof c->reasons[0].word, "%s", word);
        c->reasons[c->n_reasons++].count = 1;
    }
}

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fputc('\\', f);
        if ((unsigned char)*s < 0x20)
            fprintf(f, "\\u%04x", *s);
        else
            fputc(*s, f);
    }
    fputc('"', f);
}

/* Selected rows of one page, relative to its first row. */
static pp_range *page_rows(const synth_ctx *c, uint64_t first, uint64_t n, uint32_t *count)
{
    pp_range *r = NULL;
    uint32_t k = 0;
    for (size_t i = 0; i < c->n_rows; i++) {
        const uint64_t a = c->rows[i].a > first ? c->rows[i].a : first;
        const uint64_t b = c->rows[i].b < first + n ? c->rows[i].b : first + n;
        if (a >= b)
            continue;
        pp_range *nr = realloc(r, (k + 1) * sizeof *nr);
        if (!nr) {
            free(r);
            *count = 0;
            return NULL;
        }
        r = nr;
        r[k++] = (pp_range){(uint32_t)(a - first), (uint32_t)(b - a)};
    }
    *count = k;
    return r;
}

/* Plan one page; on PP_SPARSE write its image into out. 0 ok, -1 violation. */
static int plan_page(synth_ctx *c, const uint8_t *file, uint8_t *out, const pq_page_map *pm,
                     uint32_t pi, const pq_column_desc *col, int64_t dict_values,
                     uint64_t rg_first_row, const char *path, uint32_t rg)
{
    const pq_page *pg = &pm->pages[pi];
    uint32_t n_rows;
    pp_range *rows = page_rows(c, rg_first_row + (uint64_t)pg->first_row, (uint64_t)pg->num_rows,
                               &n_rows);
    const pp_input in = {.pm = pm, .page = pi, .col = *col, .rows = rows, .n_rows = n_rows,
                         .gap_merge = c->gap, .min_saving = c->min_saving,
                         .dict_values = dict_values};
    pp_bytes *kb = pp_bytes_new(pg->total_size);
    if (!kb) {
        free(rows);
        return -1;
    }
    const uint8_t *page = file + pg->offset;
    pp_result res;
    int rc = 0;
    int loops = 0;
    for (;;) {
        pp_plan(&in, kb, &res);
        if (res.outcome != PP_NEED)
            break;
        if (res.n_need == 0 || ++loops > MAX_LOOPS) {
            fprintf(stderr, "pq_synth: %s rg %u page %u: PP_NEED with %u ranges after %d loops\n",
                    path, rg, pi, res.n_need, loops);
            rc = -1;
            break;
        }
        for (uint32_t i = 0; i < res.n_need; i++) {
            const pp_range *r = &res.need[i];
            if ((uint64_t)r->off + r->len > pg->total_size || r->len == 0 ||
                (i > 0 && r->off < res.need[i - 1].off + res.need[i - 1].len) ||
                pp_bytes_get(kb, r->off, 1)) {
                fprintf(stderr, "pq_synth: %s rg %u page %u: bad need range [%u, +%u)\n", path,
                        rg, pi, r->off, r->len);
                rc = -1;
            }
            pp_bytes_put(kb, r->off, page + r->off, r->len);
        }
        pp_result_free(&res);
        if (rc)
            break;
    }
    if (rc == 0) {
        c->pages++;
        c->page_bytes += pg->total_size;
        const uint32_t rounds = pp_bytes_rounds(kb);
        c->max_rounds = rounds > c->max_rounds ? rounds : c->max_rounds;
        if (res.outcome == PP_SPARSE) {
            c->sparse++;
            c->synth += res.synthesized;
            c->sparse_page_bytes += pg->total_size;
            c->sparse_fetched += res.fetched;
            pp_image_read(res.pieces, res.n_pieces, 0, pg->total_size, out + pg->offset);
        } else {
            c->real++;
            c->probe_bytes += res.fetched;
            count_reason(c, res.reason);
        }
        if (c->verbose) {
            fprintf(stderr, "{\"column\":");
            json_str(stderr, path);
            fprintf(stderr,
                    ",\"rg\":%u,\"page\":%u,\"size\":%u,\"rows\":%u,\"outcome\":\"%s\","
                    "\"synthesized\":%s,\"fetched\":%llu,\"rounds\":%u,\"selected_values\":%u,"
                    "\"reason\":",
                    rg, pi, pg->total_size, n_rows,
                    res.outcome == PP_SPARSE ? "sparse" : "real",
                    res.synthesized ? "true" : "false", (unsigned long long)res.fetched, rounds,
                    res.selected_values);
            json_str(stderr, res.reason);
            fprintf(stderr, "}\n");
        }
    }
    pp_result_free(&res);
    pp_bytes_free(kb);
    free(rows);
    return rc;
}

static uint8_t *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) != 0) {
        fclose(f);
        return NULL;
    }
    const long n = ftell(f);
    if (n < 0 || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        return NULL;
    }
    uint8_t *buf = malloc(n > 0 ? (size_t)n : 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    *len = (size_t)n;
    return buf;
}

int main(int argc, char **argv)
{
    synth_ctx c = {0};
    const char *in_path = NULL, *out_path = NULL;
    bool have_rows = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--rows") == 0 && i + 1 < argc) {
            if (!parse_rows(argv[++i], &c)) {
                fprintf(stderr, "pq_synth: bad --rows %s\n", argv[i]);
                return 2;
            }
            have_rows = true;
        } else if (strcmp(a, "--gap") == 0 && i + 1 < argc) {
            c.gap = (uint32_t)strtoul(argv[++i], NULL, 10);
        } else if (strcmp(a, "--min-saving") == 0 && i + 1 < argc) {
            c.min_saving = strtod(argv[++i], NULL);
        } else if (strcmp(a, "--skip-columns") == 0 && i + 1 < argc) {
            char *list = argv[++i];
            for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
                char **ns = realloc(c.skip, (c.n_skip + 1) * sizeof *ns);
                if (!ns)
                    return 1;
                c.skip = ns;
                c.skip[c.n_skip++] = tok;
            }
        } else if (strcmp(a, "--verbose") == 0) {
            c.verbose = true;
        } else if (strcmp(a, "--no-dict-size") == 0) {
            c.no_dict_size = true;
        } else if (a[0] == '-') {
            die_usage();
        } else if (!in_path) {
            in_path = a;
        } else if (!out_path) {
            out_path = a;
        } else {
            die_usage();
        }
    }
    if (!in_path || !out_path || !have_rows)
        die_usage();
    size_t len;
    uint8_t *file = read_file(in_path, &len);
    if (!file) {
        fprintf(stderr, "pq_synth: %s: %s\n", in_path, strerror(errno));
        return 1;
    }
    pq_file_meta *m = NULL;
    tc_error err;
    if (pq_file_meta_from_tail(file, len, len, &m, NULL, &err) != TC_OK) {
        fprintf(stderr, "pq_synth: %s: %s\n", in_path, err.msg);
        free(file);
        return 1;
    }
    uint8_t *out = malloc(len ? len : 1);
    if (!out)
        return 1;
    memcpy(out, file, len);
    int rc = 0;
    uint64_t rg_first = 0;
    for (uint32_t rg = 0; rg < m->n_row_groups && rc == 0; rg++) {
        for (uint32_t col = 0; col < m->n_leaves && rc == 0; col++) {
            const pq_leaf *leaf = &m->leaves[col];
            if (skipped(&c, leaf->path))
                continue;
            const pq_column_ctx ctx = pq_column_ctx_of(m, rg, col);
            const pq_column_chunk *cc = ctx.chunk;
            if (!cc->has_offset_index) {
                c.unindexed++; /* left as is: rows of its pages are unknown */
                continue;
            }
            c.indexed++;
            if (cc->offset_index_offset < 0 ||
                (uint64_t)cc->offset_index_offset + (uint64_t)cc->offset_index_length > len) {
                fprintf(stderr, "pq_synth: %s: column %s row group %u: OffsetIndex past the file\n",
                        in_path, leaf->path, rg);
                rc = 1;
                break;
            }
            pq_offset_index oi;
            if (pq_offset_index_parse(file + cc->offset_index_offset,
                                      (size_t)cc->offset_index_length, &oi, &err) != TC_OK) {
                fprintf(stderr, "pq_synth: %s: OffsetIndex of %s: %s\n", in_path, leaf->path,
                        err.msg);
                rc = 1;
                break;
            }
            pq_page_map pm;
            if (pq_page_map_from_offset_index(&ctx, &oi, &pm, &err) != TC_OK) {
                fprintf(stderr, "pq_synth: %s: page map of %s: %s\n", in_path, leaf->path,
                        err.msg);
                pq_offset_index_free(&oi);
                rc = 1;
                break;
            }
            int64_t dict_values = 0;
            if (pm.dict_page >= 0 && !c.no_dict_size) {
                const pq_page *dp = &pm.pages[pm.dict_page];
                pq_page_header h;
                size_t hl;
                if (pq_page_header_parse(file + dp->offset, dp->total_size, &h, &hl, NULL) ==
                        TC_OK &&
                    h.has_dictionary_page_header)
                    dict_values = h.dict.num_values;
            }
            const pq_column_desc desc = {leaf->type, leaf->type_length, leaf->max_def,
                                         leaf->max_rep, (int32_t)cc->codec};
            for (uint32_t pi = 0; pi < pm.n_pages && rc == 0; pi++)
                if (pm.pages[pi].is_data &&
                    plan_page(&c, file, out, &pm, pi, &desc, dict_values, rg_first, leaf->path,
                              rg) != 0)
                    rc = 1;
            pq_page_map_free(&pm);
            pq_offset_index_free(&oi);
        }
        rg_first += (uint64_t)m->row_groups[rg].num_rows;
    }
    if (rc == 0 && c.indexed == 0 && c.unindexed > 0) {
        fprintf(stderr, "pq_synth: %s: no column chunk has an OffsetIndex\n", in_path);
        rc = 1;
    }
    if (rc == 0) {
        FILE *f = fopen(out_path, "wb");
        if (!f || fwrite(out, 1, len, f) != len || fclose(f) != 0) {
            fprintf(stderr, "pq_synth: %s: %s\n", out_path, strerror(errno));
            rc = 1;
        }
    }
    if (rc == 0) {
        printf("{\"pages\":%u,\"real\":%u,\"sparse\":%u,\"synthesized\":%u,\"partial\":%u,"
               "\"page_bytes\":%llu,\"sparse_page_bytes\":%llu,\"sparse_fetched\":%llu,"
               "\"probe_bytes\":%llu,\"max_rounds\":%u,\"unindexed_chunks\":%u,\"reasons\":{",
               c.pages, c.real, c.sparse, c.synth, c.sparse - c.synth,
               (unsigned long long)c.page_bytes, (unsigned long long)c.sparse_page_bytes,
               (unsigned long long)c.sparse_fetched, (unsigned long long)c.probe_bytes,
               c.max_rounds, c.unindexed);
        for (size_t i = 0; i < c.n_reasons; i++) {
            if (i)
                putchar(',');
            json_str(stdout, c.reasons[i].word);
            printf(":%u", c.reasons[i].count);
        }
        printf("}}\n");
    }
    pq_file_meta_free(m);
    free(out);
    free(file);
    free(c.rows);
    free(c.skip);
    return rc;
}
