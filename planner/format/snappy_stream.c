/* A snappy stream's layout; see snappy_stream.h. */
#include "snappy_stream.h"

pq_snappy_layout pq_snappy_inspect(const uint8_t *buf, size_t len, uint64_t *content)
{
    uint64_t want = 0;
    size_t pos = 0;
    for (unsigned shift = 0;; shift += 7) {
        if (pos >= len || shift > 28)
            return PQ_SNAPPY_MALFORMED;
        const uint8_t b = buf[pos++];
        want |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            break;
    }
    if (content)
        *content = want;
    uint64_t have = 0;
    while (pos < len) {
        const uint8_t tag = buf[pos];
        if ((tag & 3) != 0)
            return PQ_SNAPPY_COPIES;
        const uint32_t code = tag >> 2;
        const uint32_t extra = code < 60 ? 0 : code - 59;
        if (len - pos < 1 + (size_t)extra)
            return PQ_SNAPPY_MALFORMED;
        uint64_t n = code < 60 ? code + 1 : 0;
        for (uint32_t i = 0; i < extra; i++)
            n |= (uint64_t)buf[pos + 1 + i] << (8 * i);
        if (extra)
            n += 1;
        pos += 1 + extra;
        if (n > len - pos || n > want - have)
            return PQ_SNAPPY_MALFORMED;
        pos += (size_t)n;
        have += n;
    }
    return have == want ? PQ_SNAPPY_LITERALS : PQ_SNAPPY_MALFORMED;
}
