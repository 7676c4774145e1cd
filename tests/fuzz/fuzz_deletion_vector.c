/* Fuzz deletion vectors: the input as a serialized bitmap, as a DV file
 * frame (its own size field taken as the descriptor's sizeInBytes), and as
 * the text of pathOrInlineDv (Z85, inline, relative path, unique id).
 * Nothing reads out of bounds, and a bitmap that parses answers consistently:
 * rows ascending, each one contained, as many as its cardinality. */
#include "deletion_vector.h"
#include "z85.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Rows checked per bitmap: a few bytes of runs can hold 2^32 rows. */
#define CHECK_ROWS 4096

static void check_bitmap(dv_bitmap *b)
{
    if (!b)
        return;
    static uint64_t rows[CHECK_ROWS];
    const size_t n = dv_bitmap_rows_in_range(b, 0, UINT64_MAX, rows, CHECK_ROWS);
    const uint64_t card = dv_bitmap_cardinality(b);
    if (n > card || (n < CHECK_ROWS && n != card))
        abort();
    for (size_t i = 0; i < n; i++) {
        if ((i > 0 && rows[i] <= rows[i - 1]) || rows[i] >> 63 || !dv_bitmap_contains(b, rows[i]))
            abort();
        if (rows[i] > 0 && (i == 0 || rows[i - 1] != rows[i] - 1) && dv_bitmap_contains(b, rows[i] - 1))
            abort();
    }
    /* The same rows, read from the middle of the range with a small max. */
    if (n >= 3) {
        uint64_t two[2];
        if (dv_bitmap_rows_in_range(b, rows[1], rows[n - 1] + 1, two, 2) != 2 || two[0] != rows[1] ||
            two[1] != rows[2])
            abort();
    }
    dv_bitmap_free(b);
}

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* The rows of buf if it parses: *card set, true. */
static bool parses(const uint8_t *buf, size_t len, int64_t *card)
{
    dv_bitmap *b = NULL;
    if (dv_bitmap_parse(buf, len, &b, NULL) != DV_OK)
        return false;
    *card = (int64_t)dv_bitmap_cardinality(b);
    dv_bitmap_free(b);
    return true;
}

/* A frame is accepted exactly when its bitmap parses and its CRC matches. */
static void as_file_frame(const uint8_t *data, size_t size)
{
    if (size < 4)
        return;
    const uint32_t frame_size = be32(data);
    if (frame_size == 0 || frame_size > DV_MAX_BYTES)
        return;
    int64_t card = 0;
    const bool whole = size - 4 >= (size_t)frame_size + 4;
    const bool good = whole && parses(data + 4, frame_size, &card) &&
                      be32(data + 4 + frame_size) == (uint32_t)crc32(0L, data + 4, frame_size);
    char path[] = "s3://bucket/table/dv.bin";
    dv_descriptor d = {'p', path, 1, (int32_t)frame_size, card};
    uint64_t offset, length;
    if (dv_file_range(&d, &offset, &length, NULL) != DV_OK || offset != 1 || length != (uint64_t)frame_size + 8)
        abort();
    dv_bitmap *b = NULL;
    if ((dv_bitmap_from_file_bytes(data, size, &d, &b, NULL) == DV_OK) != good)
        abort();
    check_bitmap(b);
}

/* The input as pathOrInlineDv: inline (accepted exactly when it decodes and
 * parses), a relative path, a unique id. */
static void as_text(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    uint8_t *decoded = malloc(z85_decoded_size(size) + 1);
    if (!text || !decoded) {
        free(text);
        free(decoded);
        return;
    }
    memcpy(text, data, size);
    text[size] = '\0';
    const size_t chars = strlen(text); /* up to an embedded NUL */
    const bool decodes = chars == size && z85_decode(text, size, decoded);

    const size_t decoded_size = z85_decoded_size(chars);
    for (size_t pad = 0; pad < 4 && pad < decoded_size && decoded_size <= DV_MAX_BYTES; pad++) {
        int64_t card = 0;
        const bool good = decodes && parses(decoded, decoded_size - pad, &card);
        dv_descriptor d = {'i', text, -1, (int32_t)(decoded_size - pad), card};
        dv_bitmap *b = NULL;
        const int rc = dv_bitmap_from_inline(&d, &b, NULL);
        if (chars == size && (rc == DV_OK) != good)
            abort();
        check_bitmap(b);
    }

    dv_descriptor d = {'u', text, 1, 40, 0};
    char *path = NULL;
    if (dv_relative_path(&d, &path, NULL) == DV_OK) {
        if (!strstr(path, "deletion_vector_") || strlen(path) < 56 || dv_descriptor_check(&d, NULL) != DV_OK)
            abort();
        free(path);
    }
    char *id = dv_unique_id(&d);
    if (id && (id[0] != 'u' || strncmp(id + 1, text, chars) != 0 || strcmp(id + 1 + chars, "@1") != 0))
        abort();
    free(id);
    free(decoded);
    free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    dv_bitmap *b = NULL;
    dv_bitmap_parse(data, size, &b, NULL);
    check_bitmap(b);
    as_file_frame(data, size);
    as_text(data, size);
    return 0;
}
