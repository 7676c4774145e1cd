/* A file version's page maps in one file; see page_map_bundle.h. */
#include "page_map_bundle.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "sv_grow.h"

#define MAGIC "SIEVEPB1"
#define MAGIC_LEN (sizeof MAGIC - 1)

static uint32_t get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

void page_map_bundle_free(page_map_bundle *b)
{
    if (!b)
        return;
    for (uint32_t i = 0; i < b->n; i++)
        page_map_file_free(&b->maps[i]);
    free(b->maps);
    memset(b, 0, sizeof *b);
}

bool page_map_bundle_parse(const uint8_t *buf, size_t len, page_map_bundle *out)
{
    memset(out, 0, sizeof *out);
    if (len < MAGIC_LEN + 8 || len > PAGE_MAP_BUNDLE_MAX || memcmp(buf, MAGIC, MAGIC_LEN) != 0)
        return false;
    if ((uint32_t)crc32(0L, buf, (uInt)(len - 4)) != get_u32(buf + len - 4))
        return false;
    const uint32_t n = get_u32(buf + MAGIC_LEN);
    if (n == 0 || n > PAGE_MAP_BUNDLE_MAX_MAPS)
        return false;
    out->maps = calloc(n, sizeof *out->maps);
    if (!out->maps)
        return false;
    size_t at = MAGIC_LEN + 4;
    const size_t end = len - 4;
    bool ok = true;
    for (uint32_t i = 0; ok && i < n; i++) {
        ok = end - at >= 4;
        const uint32_t ml = ok ? get_u32(buf + at) : 0;
        ok = ok && ml <= end - at - 4 && page_map_file_parse(buf + at + 4, ml, &out->maps[i]);
        if (ok)
            out->n = i + 1;
        at += 4 + (size_t)ml;
    }
    if (!ok || at != end) {
        page_map_bundle_free(out);
        return false;
    }
    return true;
}

void page_map_bundle_writer_add(page_map_bundle_writer *w, const char *key, const char *etag, uint64_t size,
                                uint32_t rg, uint32_t col, const pq_header_walk *walk)
{
    if (w->failed)
        return;
    size_t ml = 0;
    uint8_t *m = page_map_file_encode(key, etag, size, rg, col, walk, &ml);
    const size_t head = w->len ? 0 : MAGIC_LEN + 4;
    w->failed = !m || w->n >= PAGE_MAP_BUNDLE_MAX_MAPS || w->len + head + 4 + ml + 4 > PAGE_MAP_BUNDLE_MAX ||
                !sv_grow((void **)&w->buf, &w->cap, w->len + head + 4 + ml, 1, 4096, PAGE_MAP_BUNDLE_MAX);
    if (!w->failed) {
        if (head) {
            memcpy(w->buf, MAGIC, MAGIC_LEN);
            w->len = head;
        }
        put_u32(w->buf + w->len, (uint32_t)ml);
        memcpy(w->buf + w->len + 4, m, ml);
        w->len += 4 + ml;
        w->n++;
    }
    free(m);
}

uint8_t *page_map_bundle_writer_finish(page_map_bundle_writer *w, size_t *len)
{
    uint8_t *out = NULL;
    if (!w->failed && w->n > 0 && sv_grow((void **)&w->buf, &w->cap, w->len + 4, 1, 4096, PAGE_MAP_BUNDLE_MAX)) {
        put_u32(w->buf + MAGIC_LEN, w->n);
        put_u32(w->buf + w->len, (uint32_t)crc32(0L, w->buf, (uInt)w->len));
        *len = w->len + 4;
        out = w->buf;
        w->buf = NULL;
    }
    free(w->buf);
    memset(w, 0, sizeof *w);
    return out;
}

void page_map_bundle_name(const char *key, const char *etag, uint64_t size, char *out, size_t out_len)
{
    snprintf(out, out_len, "%016llx.pmb", (unsigned long long)page_map_version_hash(key, etag, size));
}
