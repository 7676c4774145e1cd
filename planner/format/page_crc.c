/* Page CRCs: CRC-32 as parquet page headers use it, and rewriting the crc
 * field of a parsed header in place. */
#include "parquet_meta.h"

#include <pthread.h>

static uint32_t crc_table[256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

static void crc_init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        crc_table[i] = c;
    }
}

uint32_t pq_crc32(uint32_t crc, const void *buf, size_t len)
{
    pthread_once(&crc_once, crc_init);
    const uint8_t *p = buf;
    crc = ~crc;
    for (size_t i = 0; i < len; i++)
        crc = crc_table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
    return ~crc;
}

static uint64_t crc_zigzag(uint32_t crc)
{
    const int32_t v = (int32_t)crc;
    return (uint64_t)(((uint32_t)v << 1) ^ (uint32_t)(v >> 31));
}

bool pq_crc_fits(uint32_t crc_len, uint32_t new_crc)
{
    if (crc_len == 0 || crc_len > 10)
        return false;
    if (crc_len >= 5)
        return true;
    return crc_zigzag(new_crc) < (1ull << (7 * crc_len));
}

bool pq_crc_rewrite(uint8_t *header, size_t header_len, const pq_page_header *h,
                    uint32_t new_crc)
{
    if (!h->has_crc || h->crc_len == 0 || h->crc_len > 10 || h->crc_offset > header_len ||
        h->crc_len > header_len - h->crc_offset || !pq_crc_fits(h->crc_len, new_crc))
        return false;
    uint64_t v = crc_zigzag(new_crc);
    uint8_t *p = header + h->crc_offset;
    for (uint32_t i = 0; i < h->crc_len; i++) {
        uint8_t b = (uint8_t)(v & 0x7f);
        v >>= 7;
        if (i + 1 < h->crc_len)
            b |= 0x80;
        p[i] = b;
    }
    return true;
}
