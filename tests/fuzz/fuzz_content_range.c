/* Fuzz Content-Range parsing and byte_range_split, checking their contracts. */
#include "http_range.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static void check(bool ok)
{
    if (!ok)
        abort();
}

static uint64_t read_u64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = (v << 8) | p[i];
    return v;
}

/* Split parameters come from the first 34 bytes (offset, length, part size,
 * alignment, max_parts, then a shift/flags byte that makes small values
 * likely); every contract in the header is checked on the result. */
static void check_split(const uint8_t *data, size_t size)
{
    if (size < 34)
        return;
    const unsigned shift = data[33] & 63;
    const uint64_t offset = read_u64(data);
    uint64_t length = read_u64(data + 8);
    const uint64_t part_size = read_u64(data + 16) >> shift;
    const uint64_t align = (read_u64(data + 24) >> shift) | (data[33] & 0x40 ? 1 : 0);
    const size_t max_parts = (size_t)(data[32] % 65);
    if (data[33] & 0x80)
        length >>= 32; /* keep some cases small enough to split finely */

    byte_range parts[64 + 1];
    memset(parts, 0xA5, sizeof parts);
    const size_t n = byte_range_split(offset, length, part_size, align, parts, max_parts);
    check(n <= max_parts);
    check(parts[max_parts].offset == 0xA5A5A5A5A5A5A5A5u); /* never writes past max_parts */
    if (n == 0)
        return;
    uint64_t at = offset;
    for (size_t i = 0; i < n; i++) {
        check(parts[i].offset == at && parts[i].length > 0);
        if (i + 1 < n)
            check(parts[i].length == parts[0].length); /* equal parts, the last one aside */
        at += parts[i].length;
    }
    check(at - offset == length);
    const uint64_t needed = length / part_size + (length % part_size != 0);
    if (needed <= max_parts)
        check(n == needed && parts[0].length == (length < part_size ? length : part_size));
    else if (n > 1)
        check(parts[0].length % align == 0 && parts[0].length >= part_size - part_size % align);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    http_content_range r;
    if (http_parse_content_range((const char *)data, size, &r) == 0) {
        check(r.first <= r.last);
        check(r.total == UINT64_MAX || r.last < r.total);
    }
    check_split(data, size);
    return 0;
}
