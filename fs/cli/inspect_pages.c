/* `sievefs inspect --pages`: the page map of a column chunk, from its
 * OffsetIndex and the page headers (nearby headers read together), or by
 * walking the whole chunk when it has no OffsetIndex; ZSTD and SNAPPY page
 * bodies are read when their eligibility depends on how the stream is built. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "inspect_internal.h"

#ifndef INSPECT_HEADER_PROBE
#define INSPECT_HEADER_PROBE 256u /* first read of a page header */
#endif
#define HEADER_PROBE INSPECT_HEADER_PROBE
#define COALESCE_GAP (64u << 10)    /* join reads separated by at most this */
#define COALESCE_MAX (4u << 20)     /* ... into reads of at most this */
#define CHUNK_WALK_MAX ((uint64_t)1 << 31) /* largest chunk walked without an OffsetIndex */

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

static bool want_body(const pq_page *p, uint64_t *start, uint64_t *end)
{
    if ((p->elig != PQ_ELIG_ZSTD_UNCHECKED && p->elig != PQ_ELIG_SNAPPY_UNCHECKED) || !p->has_header ||
        p->compressed_size <= 0)
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
            uint64_t s = 0, e = 0;
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

bool ins_build_pages(inspector *in, const col_ref *r, pq_page_map *pm, bool *have)
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
        if ((pm->codec == PQ_CODEC_ZSTD || pm->codec == PQ_CODEC_SNAPPY) && !read_pages(in, r, pm, want_body, false))
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
