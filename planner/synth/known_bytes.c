/* The real bytes of one page known so far (pp_bytes): sorted disjoint
 * spans, merged as they are put; see page_plan.h. */
#include "page_plan_internal.h"

#include "sv_grow.h"

#include <stdlib.h>
#include <string.h>

pp_bytes *pp_bytes_new(uint32_t page_size)
{
    pp_bytes *kb = calloc(1, sizeof *kb);
    if (!kb)
        return NULL;
    kb->rounds = calloc(1, sizeof *kb->rounds);
    if (!kb->rounds) {
        free(kb);
        return NULL;
    }
    kb->size = page_size;
    return kb;
}

void pp_bytes_free(pp_bytes *kb)
{
    if (!kb)
        return;
    for (uint32_t i = 0; i < kb->n; i++)
        free(kb->s[i].data);
    free(kb->s);
    free(kb->rounds);
    free(kb);
}

uint64_t pp_bytes_total(const pp_bytes *kb)
{
    return kb ? kb->total : 0;
}

uint32_t pp_bytes_rounds(const pp_bytes *kb)
{
    return kb ? kb->rounds->rounds : 0;
}

/* Index of the first span ending at or after off (n when none). */
uint32_t pp_first_ending_at(const pp_bytes *kb, uint32_t off)
{
    uint32_t lo = 0, hi = kb->n;
    while (lo < hi) {
        const uint32_t mid = lo + (hi - lo) / 2;
        if (pp_span_end(&kb->s[mid]) < off)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The span holding byte off, or NULL. */
const kb_span *pp_span_at(const pp_bytes *kb, uint32_t off)
{
    uint32_t i = pp_first_ending_at(kb, off);
    if (i < kb->n && pp_span_end(&kb->s[i]) == off)
        i++;
    if (i < kb->n && kb->s[i].off <= off && off < pp_span_end(&kb->s[i]))
        return &kb->s[i];
    return NULL;
}

bool pp_bytes_put(pp_bytes *kb, uint32_t off, const uint8_t *data, uint32_t len)
{
    if (!kb || off > kb->size || len > kb->size - off || (len && !data))
        return false;
    if (len == 0)
        return true;
    const uint32_t end = off + len;
    const uint32_t i = pp_first_ending_at(kb, off);
    uint32_t j = i;
    while (j < kb->n && kb->s[j].off <= end)
        j++;
    if (i == j) {
        if (!sv_grow((void **)&kb->s, &kb->cap, (size_t)kb->n + 1, sizeof *kb->s, 8, UINT32_MAX))
            return false;
        uint8_t *d = malloc(len);
        if (!d)
            return false;
        memcpy(d, data, len);
        memmove(&kb->s[i + 1], &kb->s[i], (size_t)(kb->n - i) * sizeof *kb->s);
        kb->s[i] = (kb_span){off, len, d};
        kb->n++;
        kb->total += len;
        kb->puts++;
        return true;
    }
    const uint32_t lo = off < kb->s[i].off ? off : kb->s[i].off;
    const uint32_t hi = end > pp_span_end(&kb->s[j - 1]) ? end : pp_span_end(&kb->s[j - 1]);
    if (j == i + 1 && lo == kb->s[i].off && hi == pp_span_end(&kb->s[i])) {
        memcpy(kb->s[i].data + (off - lo), data, len);
        kb->puts++;
        return true;
    }
    uint8_t *d = malloc(hi - lo);
    if (!d)
        return false;
    for (uint32_t k = i; k < j; k++) {
        memcpy(d + (kb->s[k].off - lo), kb->s[k].data, kb->s[k].len);
        kb->total -= kb->s[k].len;
        free(kb->s[k].data);
    }
    memcpy(d + (off - lo), data, len);
    kb->s[i] = (kb_span){lo, hi - lo, d};
    memmove(&kb->s[i + 1], &kb->s[j], (size_t)(kb->n - j) * sizeof *kb->s);
    kb->n -= j - i - 1;
    kb->total += hi - lo;
    kb->puts++;
    return true;
}

const uint8_t *pp_bytes_get(const pp_bytes *kb, uint32_t off, uint32_t len)
{
    static const uint8_t empty[1];
    if (!kb || off > kb->size || len > kb->size - off)
        return NULL;
    if (len == 0)
        return empty;
    const kb_span *s = pp_span_at(kb, off);
    if (!s || len > pp_span_end(s) - off)
        return NULL;
    return s->data + (off - s->off);
}

/* Known bytes from off on without a hole. */
uint32_t pp_known_run(const pp_bytes *kb, uint32_t off)
{
    const kb_span *s = pp_span_at(kb, off);
    return s ? pp_span_end(s) - off : 0;
}

/* Some byte of [a, b) is known. */
bool pp_any_known(const pp_bytes *kb, uint32_t a, uint32_t b)
{
    if (a >= b)
        return false;
    uint32_t i = pp_first_ending_at(kb, a);
    if (i < kb->n && pp_span_end(&kb->s[i]) == a)
        i++;
    return i < kb->n && kb->s[i].off < b;
}
