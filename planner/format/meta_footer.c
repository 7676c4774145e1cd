/* Where the footer is: the last 8 bytes of a file (length, "PAR1"), and a
 * FileMetaData parsed from the tail of a file (asking for more when short). */
#include "parquet_meta.h"

#include <string.h>

tc_status pq_footer_locate(uint64_t file_size, const uint8_t last8[PQ_TAIL_LEN],
                           pq_footer_loc *loc, tc_error *err)
{
    if (file_size < 12)
        return sv_fail(err, TC_E_TRUNCATED, 0,
                       "file of %llu bytes is too short to be Parquet (needs 12)",
                       (unsigned long long)file_size);
    const uint64_t magic_at = file_size - 4;
    if (memcmp(last8 + 4, "PARE", 4) == 0)
        return sv_fail(err, TC_E_ENCRYPTED, magic_at,
                       "file ends with \"PARE\": encrypted footer is not supported");
    if (memcmp(last8 + 4, "PAR1", 4) != 0)
        return sv_fail(err, TC_E_MAGIC, magic_at,
                       "file does not end with \"PAR1\" (found %02x %02x %02x %02x)",
                       last8[4], last8[5], last8[6], last8[7]);
    const uint32_t flen = (uint32_t)last8[0] | (uint32_t)last8[1] << 8 |
                          (uint32_t)last8[2] << 16 | (uint32_t)last8[3] << 24;
    if (flen == 0)
        return sv_fail(err, TC_E_RANGE, file_size - 8, "footer length is zero");
    if (flen > PQ_MAX_FOOTER_LEN)
        return sv_fail(err, TC_E_LIMIT, file_size - 8,
                       "footer length %u exceeds the %u-byte limit", flen,
                       PQ_MAX_FOOTER_LEN);
    if ((uint64_t)flen + 12 > file_size)
        return sv_fail(err, TC_E_RANGE, file_size - 8,
                       "footer length %u runs past the start of a %llu-byte file", flen,
                       (unsigned long long)file_size);
    loc->footer_len = flen;
    loc->footer_offset = file_size - 8 - flen;
    return TC_OK;
}

tc_status pq_file_meta_from_tail(const uint8_t *tail, size_t tail_len, uint64_t file_size,
                                 pq_file_meta **out, uint64_t *need_tail, tc_error *err)
{
    *out = NULL;
    if (tail_len > file_size)
        return sv_fail(err, TC_E_INVALID, 0, "tail of %zu bytes is longer than the file",
                       tail_len);
    if (tail_len < PQ_TAIL_LEN) {
        if (need_tail)
            *need_tail = PQ_TAIL_LEN;
        if (file_size < 12)
            return sv_fail(err, TC_E_TRUNCATED, 0,
                           "file of %llu bytes is too short to be Parquet (needs 12)",
                           (unsigned long long)file_size);
        return sv_fail(err, TC_E_NEED_MORE, 0, "need the last %u bytes of the file",
                       PQ_TAIL_LEN);
    }
    pq_footer_loc loc;
    const tc_status s = pq_footer_locate(file_size, tail + tail_len - PQ_TAIL_LEN, &loc, err);
    if (s != TC_OK)
        return s;
    const uint64_t need = (uint64_t)loc.footer_len + PQ_TAIL_LEN;
    if (need_tail)
        *need_tail = need;
    if (tail_len < need)
        return sv_fail(err, TC_E_NEED_MORE, 0,
                       "need the last %llu bytes of the file for a %u-byte footer",
                       (unsigned long long)need, loc.footer_len);
    const uint8_t *footer = tail + tail_len - need;
    /* Errors inside the footer report offsets relative to the footer. */
    const tc_status ps = pq_file_meta_parse(footer, loc.footer_len, loc.footer_offset, out, err);
    if (ps != TC_OK)
        return ps;
    (*out)->file_size = file_size;
    (*out)->footer_offset = loc.footer_offset;
    (*out)->footer_len = loc.footer_len;
    return TC_OK;
}
