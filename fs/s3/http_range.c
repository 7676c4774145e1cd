/* Content-Range parsing (RFC 9110 section 14.4) and ranged-read splitting. */
#include "http_range.h"

#include <stdbool.h>

static bool is_blank(char c)
{
    return c == ' ' || c == '\t';
}

static char ascii_lower(char c)
{
    return (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
}

/* Cursor over a length-delimited, not necessarily NUL-terminated value. */
typedef struct {
    const char *p;
    const char *end;
} cursor;

/* One or more decimal digits into *out; false on no digits or uint64 overflow. */
static bool take_u64(cursor *c, uint64_t *out)
{
    uint64_t value = 0;
    const char *start = c->p;
    while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
        const uint64_t digit = (uint64_t)(*c->p - '0');
        if (value > (UINT64_MAX - digit) / 10)
            return false;
        value = value * 10 + digit;
        c->p++;
    }
    if (c->p == start)
        return false;
    *out = value;
    return true;
}

static bool take_char(cursor *c, char want)
{
    if (c->p < c->end && *c->p == want) {
        c->p++;
        return true;
    }
    return false;
}

int http_parse_content_range(const char *value, size_t len, http_content_range *out)
{
    if (!value || !out)
        return -1;
    cursor c = { value, value + len };
    while (c.p < c.end && is_blank(*c.p))
        c.p++;
    while (c.end > c.p && is_blank(c.end[-1]))
        c.end--;

    /* The range unit is case-insensitive; only "bytes" is meaningful to us. */
    static const char unit[] = "bytes";
    for (size_t i = 0; i < sizeof unit - 1; i++, c.p++) {
        if (c.p >= c.end || ascii_lower(*c.p) != unit[i])
            return -1;
    }
    if (c.p >= c.end || !is_blank(*c.p))
        return -1;
    while (c.p < c.end && is_blank(*c.p))
        c.p++;

    http_content_range r;
    if (!take_u64(&c, &r.first) || !take_char(&c, '-') || !take_u64(&c, &r.last) ||
        !take_char(&c, '/'))
        return -1;
    if (take_char(&c, '*')) {
        r.total = UINT64_MAX;
    } else {
        if (!take_u64(&c, &r.total))
            return -1;
        /* UINT64_MAX is our "unknown" marker, and RFC 9110 calls a range
         * ending at or past the complete length invalid. */
        if (r.total == UINT64_MAX || r.last >= r.total)
            return -1;
    }
    if (c.p != c.end || r.last < r.first)
        return -1;
    *out = r;
    return 0;
}

size_t byte_range_split(uint64_t offset, uint64_t length, uint64_t part_size,
                        uint64_t align, byte_range *out, size_t max_parts)
{
    if (!out || length == 0 || part_size == 0 || align == 0 || max_parts == 0)
        return 0;
    if (offset > UINT64_MAX - length)
        return 0; /* the range would wrap around the 64-bit offset space */

    /* Parts needed at the requested size, rounded up, without overflow. */
    const uint64_t needed = length / part_size + (length % part_size != 0);
    uint64_t size = part_size;
    size_t count;
    if (needed <= max_parts) {
        count = (size_t)needed;
    } else {
        /* Grow the part so that max_parts parts cover the range; rounding the
         * size down to the alignment keeps exactly max_parts parts and leaves
         * the remainder to the final part. */
        size = length / max_parts;
        size -= size % align;
        if (size == 0) {
            /* Even one aligned unit per part overshoots: use align-sized parts,
             * which then number at most max_parts (length < max_parts * align). */
            size = align;
            count = (size_t)(length / size + (length % size != 0));
        } else {
            count = max_parts;
        }
    }

    uint64_t at = offset;
    uint64_t remaining = length;
    for (size_t i = 0; i < count; i++) {
        const bool last = (i + 1 == count);
        const uint64_t this_len = last ? remaining : (size < remaining ? size : remaining);
        out[i].offset = at;
        out[i].length = this_len;
        at += this_len;
        remaining -= this_len;
    }
    return count;
}
