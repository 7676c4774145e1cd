/* The on-disk form of a walked page map; see page_map_file.h. */
#include "page_map_file.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define MAGIC "SIEVEPM1"
#define MAX_STRING 4096u

typedef struct {
    const uint8_t *p;
    size_t left;
    bool ok;
} cursor;

static const uint8_t *take(cursor *c, size_t n)
{
    if (!c->ok || n > c->left) {
        c->ok = false;
        return NULL;
    }
    const uint8_t *at = c->p;
    c->p += n;
    c->left -= n;
    return at;
}

static uint64_t get_le(cursor *c, int bytes)
{
    const uint8_t *b = take(c, (size_t)bytes);
    uint64_t v = 0;
    for (int i = bytes - 1; b && i >= 0; i--)
        v = v << 8 | b[i];
    return v;
}

static char *get_string(cursor *c)
{
    uint32_t n = (uint32_t)get_le(c, 4);
    if (n > MAX_STRING)
        c->ok = false;
    const uint8_t *b = take(c, n);
    if (!b)
        return NULL;
    char *s = malloc((size_t)n + 1);
    if (!s) {
        c->ok = false;
        return NULL;
    }
    memcpy(s, b, n);
    s[n] = '\0';
    if (strlen(s) != n) /* no NUL inside */
        c->ok = false;
    return s;
}

void page_map_file_free(page_map_file *f)
{
    if (!f)
        return;
    free(f->key);
    free(f->etag);
    free(f->windows);
    memset(f, 0, sizeof *f);
}

bool page_map_file_parse(const uint8_t *buf, size_t len, page_map_file *out)
{
    memset(out, 0, sizeof *out);
    if (len < sizeof MAGIC - 1 + 4 || len > PAGE_MAP_FILE_MAX)
        return false;
    const uint32_t want_crc = (uint32_t)buf[len - 4] | (uint32_t)buf[len - 3] << 8 | (uint32_t)buf[len - 2] << 16 |
                              (uint32_t)buf[len - 1] << 24;
    if ((uint32_t)crc32(0L, buf, (uInt)(len - 4)) != want_crc)
        return false;
    cursor c = {buf, len - 4, true};
    const uint8_t *magic = take(&c, sizeof MAGIC - 1);
    if (!magic || memcmp(magic, MAGIC, sizeof MAGIC - 1) != 0)
        return false;
    out->key = get_string(&c);
    out->etag = get_string(&c);
    out->size = get_le(&c, 8);
    out->rg = (uint32_t)get_le(&c, 4);
    out->col = (uint32_t)get_le(&c, 4);
    out->n = (uint32_t)get_le(&c, 4);
    if (c.ok && (out->n == 0 || out->n > PQ_HEADER_WALK_MAX_PAGES))
        c.ok = false;
    if (c.ok) {
        out->windows = calloc(out->n, sizeof *out->windows);
        c.ok = out->windows != NULL;
    }
    for (uint32_t i = 0; c.ok && i < out->n; i++) {
        uint64_t off = get_le(&c, 8);
        uint32_t wl = (uint32_t)get_le(&c, 4);
        if (wl == 0 || wl > PQ_HEADER_WINDOW_MAX)
            c.ok = false;
        const uint8_t *b = take(&c, wl);
        if (b)
            out->windows[i] = (pq_header_window){off, (uint8_t *)b, wl};
    }
    if (!c.ok || c.left != 0) {
        page_map_file_free(out);
        return false;
    }
    return true;
}

static void put_le(uint8_t **p, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++)
        *(*p)++ = (uint8_t)(v >> (8 * i));
}

uint8_t *page_map_file_encode(const char *key, const char *etag, uint64_t size, uint32_t rg, uint32_t col,
                              const pq_header_walk *w, size_t *len)
{
    const size_t kl = strlen(key), el = strlen(etag);
    if (kl > MAX_STRING || el > MAX_STRING || w->n_pages == 0)
        return NULL;
    size_t total = sizeof MAGIC - 1 + 4 + kl + 4 + el + 8 + 4 + 4 + 4 + 4;
    for (uint32_t i = 0; i < w->n_pages; i++)
        total += 12 + w->confirmed[i].len;
    if (total > PAGE_MAP_FILE_MAX)
        return NULL;
    uint8_t *buf = malloc(total), *p = buf;
    if (!buf)
        return NULL;
    memcpy(p, MAGIC, sizeof MAGIC - 1);
    p += sizeof MAGIC - 1;
    put_le(&p, kl, 4);
    memcpy(p, key, kl);
    p += kl;
    put_le(&p, el, 4);
    memcpy(p, etag, el);
    p += el;
    put_le(&p, size, 8);
    put_le(&p, rg, 4);
    put_le(&p, col, 4);
    put_le(&p, w->n_pages, 4);
    for (uint32_t i = 0; i < w->n_pages; i++) {
        put_le(&p, w->confirmed[i].offset, 8);
        put_le(&p, w->confirmed[i].len, 4);
        memcpy(p, w->confirmed[i].bytes, w->confirmed[i].len);
        p += w->confirmed[i].len;
    }
    put_le(&p, (uint32_t)crc32(0L, buf, (uInt)(p - buf)), 4);
    *len = total;
    return buf;
}

uint64_t page_map_version_hash(const char *key, const char *etag, uint64_t size)
{
    uint64_t h = 14695981039346656037ull;
    for (const char *s = key; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    h = (h ^ 0xff) * 1099511628211ull;
    for (const char *s = etag; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    for (int i = 0; i < 8; i++)
        h = (h ^ (unsigned char)(size >> (8 * i))) * 1099511628211ull;
    return h;
}

void page_map_file_name(const char *key, const char *etag, uint64_t size, uint32_t rg, uint32_t col, char *out,
                        size_t out_len)
{
    snprintf(out, out_len, "%016llx-%u-%u.pm", (unsigned long long)page_map_version_hash(key, etag, size), rg, col);
}
