/* The layout of zstd frames; see zstd_frame.h. */
#include "zstd_frame.h"

#include "sv_grow.h"

#include <stdlib.h>
#include <string.h>

pq_zstd_descriptor pq_zstd_descriptor_of(uint8_t fhd)
{
    static const unsigned did_sizes[4] = {0, 1, 2, 4};
    pq_zstd_descriptor d;
    const unsigned fcs_flag = fhd >> 6;
    d.single_segment = (fhd >> 5) & 1;
    d.reserved_bit = (fhd & 0x08) != 0;
    d.has_checksum = (fhd >> 2) & 1;
    d.dict_id_len = did_sizes[fhd & 3];
    d.fcs_len = fcs_flag == 0 ? (d.single_segment ? 1 : 0) : 1u << fcs_flag; /* 2, 4, 8 */
    d.header_len = 5 + (d.single_segment ? 0 : 1) + d.dict_id_len + d.fcs_len;
    return d;
}

uint64_t pq_zstd_window_size(uint8_t wd)
{
    const uint64_t base = 1ull << (10u + (wd >> 3));
    return base + (base / 8) * (wd & 7);
}

uint64_t pq_zstd_content_size(const uint8_t *p, unsigned len)
{
    return pq_zstd_le(p, len) + (len == 2 ? 256 : 0);
}

void pq_zstd_frame_free(pq_zstd_frame *f)
{
    if (!f)
        return;
    free(f->blocks);
    f->blocks = NULL;
}

tc_status pq_zstd_inspect(const uint8_t *buf, size_t len, bool want_blocks, pq_zstd_frame *out,
                          tc_error *err)
{
    memset(out, 0, sizeof *out);
    if (len > UINT32_MAX)
        return sv_fail(err, TC_E_LIMIT, 0, "zstd buffer larger than 4 GiB");
    if (len < 5)
        return sv_fail(err, TC_E_TRUNCATED, 0, "%zu bytes cannot hold a zstd frame header",
                       len);
    const uint32_t magic = (uint32_t)pq_zstd_le(buf, 4);
    if ((magic & 0xFFFFFFF0u) == PQ_ZSTD_SKIPPABLE_MAGIC)
        return sv_fail(err, TC_E_MAGIC, 0, "skippable frame (magic 0x%08x) where a zstd "
                                           "frame was expected",
                       magic);
    if (magic != PQ_ZSTD_MAGIC)
        return sv_fail(err, TC_E_MAGIC, 0, "not a zstd frame (magic 0x%08x)", magic);
    size_t pos = 4;
    const pq_zstd_descriptor fd = pq_zstd_descriptor_of(buf[pos++]);
    out->single_segment = fd.single_segment;
    if (fd.reserved_bit)
        return sv_fail(err, TC_E_INVALID, 4, "zstd frame header reserved bit is set");
    out->has_checksum = fd.has_checksum;
    const size_t hdr_end = fd.header_len;
    if (hdr_end > len)
        return sv_fail(err, TC_E_TRUNCATED, pos, "zstd frame header needs %zu bytes, %zu given",
                       hdr_end, len);
    if (!out->single_segment)
        out->window_size = pq_zstd_window_size(buf[pos++]);
    if (fd.dict_id_len) {
        out->dict_id = (uint32_t)pq_zstd_le(buf + pos, fd.dict_id_len);
        out->has_dict_id = out->dict_id != 0;
        pos += fd.dict_id_len;
    }
    if (fd.fcs_len) {
        out->content_size = pq_zstd_content_size(buf + pos, fd.fcs_len);
        out->has_content_size = true;
        pos += fd.fcs_len;
    }
    if (out->single_segment)
        out->window_size = out->content_size;
    out->header_len = (uint32_t)pos;
    const uint64_t block_max =
        out->window_size < PQ_ZSTD_BLOCK_MAX ? out->window_size : PQ_ZSTD_BLOCK_MAX;

    size_t cap = 0;
    bool last = false;
    uint64_t dec = 0;
    out->all_raw = true;
    while (!last) {
        if (len - pos < 3) {
            pq_zstd_frame_free(out);
            return sv_fail(err, TC_E_TRUNCATED, pos, "zstd block header truncated");
        }
        const uint32_t h = (uint32_t)pq_zstd_le(buf + pos, 3);
        last = h & 1;
        const unsigned type = (h >> 1) & 3;
        const uint32_t size = h >> 3;
        if (type == 3) {
            pq_zstd_frame_free(out);
            return sv_fail(err, TC_E_INVALID, pos, "zstd block uses the reserved type");
        }
        if (size > block_max) {
            pq_zstd_frame_free(out);
            return sv_fail(err, TC_E_INVALID, pos,
                           "zstd block of %u bytes exceeds Block_Maximum_Size %llu", size,
                           (unsigned long long)block_max);
        }
        const uint32_t content = type == PQ_ZSTD_RLE ? 1 : size;
        if (len - pos - 3 < content) {
            pq_zstd_frame_free(out);
            return sv_fail(err, TC_E_TRUNCATED, pos,
                           "zstd block of %u bytes runs past the end of the buffer", content);
        }
        if (want_blocks) {
            if (!sv_grow((void **)&out->blocks, &cap, (size_t)out->n_blocks + 1,
                         sizeof *out->blocks, 8, UINT32_MAX)) {
                pq_zstd_frame_free(out);
                return sv_fail(err, TC_E_NOMEM, pos, "out of memory");
            }
            pq_zstd_block *b = &out->blocks[out->n_blocks];
            b->header_offset = (uint32_t)pos;
            b->size = size;
            b->type = (uint8_t)type;
            b->last = last;
            b->decompressed_offset = out->has_compressed ? UINT64_MAX : dec;
        }
        out->n_blocks++;
        if (type == PQ_ZSTD_COMPRESSED)
            out->has_compressed = true;
        else
            dec += size;
        if (type != PQ_ZSTD_RAW)
            out->all_raw = false;
        pos += 3 + content;
    }
    if (out->has_checksum) {
        if (len - pos < 4) {
            pq_zstd_frame_free(out);
            return sv_fail(err, TC_E_TRUNCATED, pos, "zstd content checksum truncated");
        }
        pos += 4;
    }
    out->known_size = out->has_compressed ? 0 : dec;
    out->frame_len = (uint32_t)pos;
    out->single_frame = pos == len;
    return TC_OK;
}
