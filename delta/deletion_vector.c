/* Delta deletion vectors; see deletion_vector.h. */
#include "deletion_vector.h"

#include <roaring/roaring.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "z85.h"

/* The portable 32-bit Roaring format (RoaringFormatSpec). */
#define ROARING_COOKIE_NO_RUN 12346u
#define ROARING_COOKIE_RUN 12347u     /* low 16 bits; the high 16 are containers - 1 */
#define ROARING_NO_OFFSET_THRESHOLD 4 /* with runs, fewer containers have no offset table */
#define ROARING_MAX_CONTAINERS 65536u
#define ROARING_ARRAY_MAX 4096u       /* a container with more values is a bitset */
#define ROARING_BITSET_BYTES 8192u

#define UUID_Z85_LEN 20 /* 16 bytes */
#define FRAME_OVERHEAD 8u /* the size before a file's bitmap and the CRC after it */
#define BITMAP_HEADER 12u /* magic and count */
#define MIN_BITMAP32 8u   /* an empty portable bitmap: cookie and count */

typedef struct {
    uint32_t key; /* the rows' high 32 bits */
    roaring_bitmap_t *rows;
} bucket;

struct dv_bitmap {
    bucket *buckets; /* non-empty ones, keys ascending */
    size_t n;
    uint64_t cardinality;
};

static uint32_t le16(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8;
}

static uint32_t le32(const uint8_t *p)
{
    return le16(p) | le16(p + 2) << 16;
}

static uint64_t le64(const uint8_t *p)
{
    return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* ---- descriptors ---- */

void dv_descriptor_free(dv_descriptor *d)
{
    if (!d)
        return;
    free(d->path_or_inline);
    memset(d, 0, sizeof *d);
}

/* A 'u' path's prefix must not leave the table's root. */
static bool prefix_is_safe(const char *prefix, size_t len)
{
    if ((len == 1 && prefix[0] == '.') || (len == 2 && prefix[0] == '.' && prefix[1] == '.'))
        return false;
    for (size_t i = 0; i < len; i++) {
        const unsigned char c = (unsigned char)prefix[i];
        if (c < 0x20 || c == 0x7f || c == '/' || c == '\\')
            return false;
    }
    return true;
}

/* Split a 'u' pathOrInlineDv into its prefix length and UUID bytes. */
static int split_relative(const char *path, size_t *prefix_len, uint8_t uuid[16], sv_error *err)
{
    const size_t len = strlen(path);
    if (len < UUID_Z85_LEN)
        return sv_fail(err, DV_E_DESCRIPTOR, 0,
                       "deletion vector: relative path \"%s\": %zu characters, fewer than the UUID's %d", path, len,
                       UUID_Z85_LEN);
    *prefix_len = len - UUID_Z85_LEN;
    if (!z85_decode(path + *prefix_len, UUID_Z85_LEN, uuid))
        return sv_fail(err, DV_E_DESCRIPTOR, *prefix_len,
                       "deletion vector: relative path \"%s\": the last %d characters are not a Z85 UUID", path,
                       UUID_Z85_LEN);
    if (!prefix_is_safe(path, *prefix_len))
        return sv_fail(err, DV_E_DESCRIPTOR, 0,
                       "deletion vector: relative path \"%s\": the prefix would leave the table "
                       "('/', '\\', a control character, \".\" or \"..\")",
                       path);
    return DV_OK;
}

int dv_descriptor_check(const dv_descriptor *d, sv_error *err)
{
    const char t = d->storage_type;
    if (t != 'u' && t != 'i' && t != 'p')
        return sv_fail(err, DV_E_DESCRIPTOR, 0, "deletion vector: storage type 0x%02x is not 'u', 'i' or 'p'",
                       (unsigned char)t);
    if (!d->path_or_inline || !d->path_or_inline[0])
        return sv_fail(err, DV_E_DESCRIPTOR, 0, "deletion vector: empty pathOrInlineDv");
    if (d->size_in_bytes <= 0)
        return sv_fail(err, DV_E_DESCRIPTOR, 0, "deletion vector: sizeInBytes %d is not positive",
                       (int)d->size_in_bytes);
    if ((uint32_t)d->size_in_bytes > DV_MAX_BYTES)
        return sv_fail(err, DV_E_LIMIT, 0, "deletion vector: sizeInBytes %d is over the limit of %u",
                       (int)d->size_in_bytes, DV_MAX_BYTES);
    if (d->cardinality < 0)
        return sv_fail(err, DV_E_DESCRIPTOR, 0, "deletion vector: negative cardinality %lld",
                       (long long)d->cardinality);
    if (t == 'i') {
        const size_t len = strlen(d->path_or_inline);
        if (len % 5 != 0)
            return sv_fail(err, DV_E_DESCRIPTOR, 0,
                           "deletion vector: inline: %zu characters, not a multiple of 5 (Z85)", len);
        return DV_OK; /* an offset, which the protocol says is absent, is not used */
    }
    /* Byte 0 of a DV file is its version. */
    if (d->offset != -1 && d->offset < 1)
        return sv_fail(err, DV_E_DESCRIPTOR, 0, "deletion vector: offset %lld is not 1 or more",
                       (long long)d->offset);
    if (t == 'u') {
        size_t prefix_len;
        uint8_t uuid[16];
        return split_relative(d->path_or_inline, &prefix_len, uuid, err);
    }
    return DV_OK;
}

char *dv_unique_id(const dv_descriptor *d)
{
    const char *path = d->path_or_inline ? d->path_or_inline : "";
    const int n = d->offset >= 0 ? snprintf(NULL, 0, "%c%s@%lld", d->storage_type, path, (long long)d->offset)
                                 : snprintf(NULL, 0, "%c%s", d->storage_type, path);
    if (n < 0)
        return NULL;
    char *id = malloc((size_t)n + 1);
    if (!id)
        return NULL;
    if (d->offset >= 0)
        snprintf(id, (size_t)n + 1, "%c%s@%lld", d->storage_type, path, (long long)d->offset);
    else
        snprintf(id, (size_t)n + 1, "%c%s", d->storage_type, path);
    return id;
}

int dv_relative_path(const dv_descriptor *d, char **out, sv_error *err)
{
    *out = NULL;
    if (d->storage_type != 'u')
        return sv_fail(err, DV_E_DESCRIPTOR, 0, "deletion vector: storage type 0x%02x has no relative path",
                       (unsigned char)d->storage_type);
    if (!d->path_or_inline)
        return sv_fail(err, DV_E_DESCRIPTOR, 0, "deletion vector: no pathOrInlineDv");
    size_t prefix_len;
    uint8_t u[16];
    const int rc = split_relative(d->path_or_inline, &prefix_len, u, err);
    if (rc != DV_OK)
        return rc;
    const size_t len = prefix_len + (prefix_len ? 1 : 0) + sizeof "deletion_vector_" - 1 + 36 + sizeof ".bin" - 1;
    char *path = malloc(len + 1);
    if (!path)
        return sv_fail(err, DV_E_NOMEM, 0, "deletion vector: out of memory");
    snprintf(path, len + 1,
             "%.*s%sdeletion_vector_%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x.bin",
             (int)prefix_len, d->path_or_inline, prefix_len ? "/" : "", u[0], u[1], u[2], u[3], u[4], u[5], u[6],
             u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
    *out = path;
    return DV_OK;
}

const char *dv_absolute_path(const dv_descriptor *d)
{
    return d->storage_type == 'p' ? d->path_or_inline : NULL;
}

static int check_on_disk(const dv_descriptor *d, sv_error *err)
{
    const int rc = dv_descriptor_check(d, err);
    if (rc != DV_OK)
        return rc;
    if (d->storage_type == 'i')
        return sv_fail(err, DV_E_DESCRIPTOR, 0, "deletion vector: an inline DV has no file");
    return DV_OK;
}

int dv_file_range(const dv_descriptor *d, uint64_t *offset, uint64_t *length, sv_error *err)
{
    const int rc = check_on_disk(d, err);
    if (rc != DV_OK)
        return rc;
    *offset = d->offset < 0 ? 1 : (uint64_t)d->offset;
    *length = FRAME_OVERHEAD + (uint64_t)d->size_in_bytes;
    return DV_OK;
}

int dv_file_check_version(uint8_t first_byte, sv_error *err)
{
    if (first_byte != DV_FILE_VERSION)
        return sv_fail(err, DV_E_UNSUPPORTED, 0, "deletion vector: file version %u (this reader knows %u)",
                       first_byte, DV_FILE_VERSION);
    return DV_OK;
}

/* ---- the bitmap ---- */

/* err for a field of need bytes at pos that the input (left bytes from pos)
 * does not hold. */
static int truncated(sv_error *err, size_t pos, size_t need, size_t left, const char *what)
{
    return sv_fail(err, DV_E_CORRUPT, pos, "%s: truncated at byte %zu (needs %zu bytes, %zu left)", what, pos, need,
                   left);
}

/* Check a portable 32-bit Roaring bitmap at buf (left bytes) in full, so
 * that CRoaring, which trusts the values it reads, decodes exactly it: its
 * length into *size, its cardinality into *card. base: buf's offset in the
 * input, for messages. The offset table (present in some forms) is skipped,
 * as every reader does: the containers' sizes follow from their headers. */
static int check_bitmap32(const uint8_t *buf, size_t left, size_t base, size_t *size, uint64_t *card,
                          sv_error *err)
{
    size_t pos = 0;
#define NEED(n, what)                                                                                           \
    do {                                                                                                        \
        if ((n) > left - pos)                                                                                   \
            return truncated(err, base + pos, (n), left - pos, what);                                           \
    } while (0)

    NEED(4, "cookie");
    const uint32_t cookie = le32(buf);
    pos += 4;
    uint32_t n;
    bool has_runs;
    if ((cookie & 0xffff) == ROARING_COOKIE_RUN) {
        has_runs = true;
        n = (cookie >> 16) + 1;
    } else if (cookie == ROARING_COOKIE_NO_RUN) {
        has_runs = false;
        NEED(4, "container count");
        n = le32(buf + pos);
        pos += 4;
        if (n > ROARING_MAX_CONTAINERS)
            return sv_fail(err, DV_E_CORRUPT, base + 4, "%u containers (at most %u)", n, ROARING_MAX_CONTAINERS);
    } else {
        return sv_fail(err, DV_E_CORRUPT, base, "not a portable Roaring bitmap (cookie 0x%08x)", cookie);
    }
    const uint8_t *run_flags = buf + pos;
    if (has_runs) {
        NEED((n + 7) / 8, "run flags");
        pos += (n + 7) / 8;
    }
    NEED((size_t)n * 4, "container headers");
    const uint8_t *headers = buf + pos;
    pos += (size_t)n * 4;
    if (!has_runs || n >= ROARING_NO_OFFSET_THRESHOLD) {
        NEED((size_t)n * 4, "container offsets");
        pos += (size_t)n * 4;
    }
    uint64_t total = 0;
    char what[64];
    for (uint32_t k = 0; k < n; k++) {
        const uint32_t key = le16(headers + 4 * (size_t)k), count = le16(headers + 4 * (size_t)k + 2) + 1;
        snprintf(what, sizeof what, "container %u of %u", k + 1, n);
        if (k > 0 && key <= le16(headers + 4 * (size_t)(k - 1)))
            return sv_fail(err, DV_E_CORRUPT, base + (size_t)(headers - buf) + 4 * (size_t)k,
                           "%s: key %u not above the previous one", what, key);
        if (has_runs && (run_flags[k / 8] >> (k % 8) & 1)) {
            NEED(2, what);
            const uint32_t n_runs = le16(buf + pos);
            pos += 2;
            NEED((size_t)n_runs * 4, what);
            uint64_t sum = 0;
            int32_t prev_last = -1;
            for (uint32_t r = 0; r < n_runs; r++, pos += 4) {
                const int32_t start = (int32_t)le16(buf + pos), last = start + (int32_t)le16(buf + pos + 2);
                if (start <= prev_last || last > 0xffff)
                    return sv_fail(err, DV_E_CORRUPT, base + pos, "%s: run %u [%d, %d] overlaps or leaves 0..65535",
                                   what, r + 1, start, last);
                sum += (uint64_t)(last - start) + 1;
                prev_last = last;
            }
            if (sum != count)
                return sv_fail(err, DV_E_CORRUPT, base + pos, "%s: runs hold %llu values, the header says %u", what,
                               (unsigned long long)sum, count);
        } else if (count > ROARING_ARRAY_MAX) {
            NEED(ROARING_BITSET_BYTES, what);
            uint64_t bits = 0;
            for (size_t w = 0; w < ROARING_BITSET_BYTES; w += 8)
                bits += (uint64_t)__builtin_popcountll(le64(buf + pos + w));
            if (bits != count)
                return sv_fail(err, DV_E_CORRUPT, base + pos, "%s: bitset holds %llu values, the header says %u",
                               what, (unsigned long long)bits, count);
            pos += ROARING_BITSET_BYTES;
        } else {
            NEED((size_t)count * 2, what);
            for (uint32_t v = 1; v < count; v++)
                if (le16(buf + pos + 2 * (size_t)v) <= le16(buf + pos + 2 * (size_t)(v - 1)))
                    return sv_fail(err, DV_E_CORRUPT, base + pos + 2 * (size_t)v,
                                   "%s: array value %u not above the previous one", what, v + 1);
            pos += (size_t)count * 2;
        }
        total += count;
    }
#undef NEED
    *size = pos;
    *card = total;
    return DV_OK;
}

void dv_bitmap_free(dv_bitmap *b)
{
    if (!b)
        return;
    for (size_t i = 0; i < b->n; i++)
        roaring_bitmap_free(b->buckets[i].rows);
    free(b->buckets);
    free(b);
}

/* The 32-bit bitmap at buf (left bytes), key's, checked and decoded: into
 * b when not empty; its length into *size. */
static int add_bucket(dv_bitmap *b, uint32_t key, const uint8_t *buf, size_t left, size_t base, size_t *size,
                      sv_error *err)
{
    uint64_t card = 0;
    int rc = check_bitmap32(buf, left, base, size, &card, err);
    if (rc != DV_OK)
        return rc;
    /* CRoaring must agree on where the bitmap ends, or the next key would
     * be read from the wrong place. */
    const size_t croaring_size = roaring_bitmap_portable_deserialize_size((const char *)buf, left);
    if (croaring_size != *size)
        return sv_fail(err, DV_E_CORRUPT, base, "CRoaring reads %zu bytes, the format says %zu", croaring_size, *size);
    if (card == 0)
        return DV_OK; /* writers keep empty buckets between used ones */
    roaring_bitmap_t *rows = roaring_bitmap_portable_deserialize_safe((const char *)buf, *size);
    if (!rows) /* the bytes were checked: only an allocation can fail */
        return sv_fail(err, DV_E_NOMEM, base, "out of memory decoding %zu bytes", *size);
    if (roaring_bitmap_get_cardinality(rows) != card) {
        roaring_bitmap_free(rows);
        return sv_fail(err, DV_E_CORRUPT, base, "CRoaring decodes a different cardinality");
    }
    b->buckets[b->n++] = (bucket){key, rows};
    b->cardinality += card;
    return DV_OK;
}

/* dv_bitmap_parse with base: buf's offset in the caller's input. Messages
 * without the "deletion vector: " the public functions add. */
static int parse_bitmap(const uint8_t *buf, size_t len, size_t base, dv_bitmap **out, sv_error *err)
{
    *out = NULL;
    if (len > DV_MAX_BYTES)
        return sv_fail(err, DV_E_LIMIT, base, "%zu bytes, over the limit of %u", len, DV_MAX_BYTES);
    if (len < 4)
        return truncated(err, base, 4, len, "magic");
    const uint32_t magic = le32(buf);
    if (magic == DV_MAGIC_NATIVE)
        return sv_fail(err, DV_E_UNSUPPORTED, base, "magic %u: delta-spark's native format, not the protocol's %u",
                       magic, DV_MAGIC);
    if (magic == __builtin_bswap32(DV_MAGIC_NATIVE) || magic == __builtin_bswap32(DV_MAGIC))
        return sv_fail(err, DV_E_UNSUPPORTED, base,
                       "a big-endian magic (%u): not the protocol's little-endian format, which delta-spark also "
                       "refuses (PROTOCOL.md's inline example is one)",
                       __builtin_bswap32(magic));
    if (magic != DV_MAGIC)
        return sv_fail(err, DV_E_CORRUPT, base, "magic %u is not %u", magic, DV_MAGIC);
    if (len < BITMAP_HEADER)
        return truncated(err, base + 4, 8, len - 4, "bitmap count");
    const uint64_t n = le64(buf + 4);
    if (n > DV_MAX_BITMAPS)
        return sv_fail(err, DV_E_LIMIT, base + 4, "%llu bitmaps (at most %u)", (unsigned long long)n, DV_MAX_BITMAPS);
    if (n > (len - BITMAP_HEADER) / (4 + MIN_BITMAP32))
        return sv_fail(err, DV_E_CORRUPT, base + 4, "%llu bitmaps cannot fit in %zu bytes", (unsigned long long)n,
                       len);
    dv_bitmap *b = calloc(1, sizeof *b);
    if (b)
        b->buckets = calloc(n ? (size_t)n : 1, sizeof *b->buckets);
    if (!b || !b->buckets) {
        free(b);
        return sv_fail(err, DV_E_NOMEM, base, "out of memory");
    }
    size_t pos = BITMAP_HEADER;
    uint32_t prev_key = 0;
    for (uint64_t i = 0; i < n; i++) {
        int rc;
        if (len - pos < 4) {
            rc = truncated(err, base + pos, 4, len - pos, "key");
        } else {
            const uint32_t key = le32(buf + pos);
            if (key & 0x80000000u)
                rc = sv_fail(err, DV_E_CORRUPT, base + pos, "key %u has its top bit set", key);
            else if (i > 0 && key <= prev_key)
                rc = sv_fail(err, DV_E_CORRUPT, base + pos, "key %u not above the previous one (%u)", key, prev_key);
            else {
                size_t size = 0;
                pos += 4;
                rc = add_bucket(b, key, buf + pos, len - pos, base + pos, &size, err);
                pos += size;
                prev_key = key;
            }
        }
        if (rc != DV_OK) {
            sv_error_prefix(err, "bitmap %llu of %llu", (unsigned long long)i + 1, (unsigned long long)n);
            dv_bitmap_free(b);
            return rc;
        }
    }
    if (pos != len) {
        dv_bitmap_free(b);
        return sv_fail(err, DV_E_CORRUPT, base + pos, "%zu trailing bytes at byte %zu", len - pos, base + pos);
    }
    *out = b;
    return DV_OK;
}

int dv_bitmap_parse(const uint8_t *buf, size_t len, dv_bitmap **out, sv_error *err)
{
    const int rc = parse_bitmap(buf, len, 0, out, err);
    if (rc != DV_OK)
        sv_error_prefix(err, "deletion vector");
    return rc;
}

/* The descriptor's cardinality must be the bitmap's; b is freed if not. */
static int check_cardinality(const dv_descriptor *d, dv_bitmap **b, sv_error *err)
{
    if ((uint64_t)d->cardinality == (*b)->cardinality)
        return DV_OK;
    const uint64_t got = (*b)->cardinality;
    dv_bitmap_free(*b);
    *b = NULL;
    return sv_fail(err, DV_E_MISMATCH, 0, "deletion vector: the bitmap holds %llu rows, the descriptor says %lld",
                   (unsigned long long)got, (long long)d->cardinality);
}

int dv_bitmap_from_inline(const dv_descriptor *d, dv_bitmap **out, sv_error *err)
{
    *out = NULL;
    int rc = dv_descriptor_check(d, err);
    if (rc != DV_OK)
        return rc;
    if (d->storage_type != 'i')
        return sv_fail(err, DV_E_DESCRIPTOR, 0, "deletion vector: storage type '%c' is not inline", d->storage_type);
    /* Writers pad the bytes with zeros to whole Z85 groups of 4. */
    const size_t size = (size_t)d->size_in_bytes, padded = (size + 3) / 4 * 4;
    const size_t chars = strlen(d->path_or_inline);
    if (z85_decoded_size(chars) != padded)
        return sv_fail(err, DV_E_MISMATCH, 0,
                       "deletion vector: inline: %zu characters decode to %zu bytes, sizeInBytes %zu needs %zu",
                       chars, z85_decoded_size(chars), size, padded);
    uint8_t *bytes = malloc(padded);
    if (!bytes)
        return sv_fail(err, DV_E_NOMEM, 0, "deletion vector: out of memory");
    if (!z85_decode(d->path_or_inline, chars, bytes)) {
        size_t at = 0;
        while (at + 5 <= chars && z85_decode(d->path_or_inline + at, 5, bytes))
            at += 5;
        free(bytes);
        return sv_fail(err, DV_E_CORRUPT, at, "deletion vector: inline: characters %zu..%zu are not a Z85 group", at,
                       at + 4);
    }
    rc = parse_bitmap(bytes, size, 0, out, err);
    free(bytes);
    if (rc != DV_OK) {
        sv_error_prefix(err, "deletion vector: inline");
        return rc;
    }
    return check_cardinality(d, out, err);
}

int dv_bitmap_from_file_bytes(const uint8_t *buf, size_t len, const dv_descriptor *d, dv_bitmap **out,
                              sv_error *err)
{
    *out = NULL;
    int rc = check_on_disk(d, err);
    if (rc != DV_OK)
        return rc;
    const size_t size = (size_t)d->size_in_bytes;
    if (len < 4)
        return sv_fail(err, DV_E_CORRUPT, 0, "deletion vector: file frame: truncated at byte 0 (%zu bytes)", len);
    if (be32(buf) != size)
        return sv_fail(err, DV_E_MISMATCH, 0, "deletion vector: the file says %u bytes, the descriptor %zu", be32(buf),
                       size);
    if (len - 4 < size + 4)
        return sv_fail(err, DV_E_CORRUPT, len, "deletion vector: file frame: truncated at byte %zu (needs %zu)", len,
                       size + FRAME_OVERHEAD);
    const uint32_t want = be32(buf + 4 + size), got = (uint32_t)crc32(0L, buf + 4, (uInt)size);
    if (want != got)
        return sv_fail(err, DV_E_CHECKSUM, 4 + size, "deletion vector: CRC-32 0x%08x, the file says 0x%08x", got, want);
    rc = parse_bitmap(buf + 4, size, 4, out, err);
    if (rc != DV_OK) {
        sv_error_prefix(err, "deletion vector");
        return rc;
    }
    return check_cardinality(d, out, err);
}

/* ---- queries ---- */

uint64_t dv_bitmap_cardinality(const dv_bitmap *b)
{
    return b->cardinality;
}

/* The index of the first bucket whose key is key or more (b->n if none). */
static size_t lower_bound(const dv_bitmap *b, uint64_t key)
{
    size_t lo = 0, hi = b->n;
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        if (b->buckets[mid].key < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

bool dv_bitmap_contains(const dv_bitmap *b, uint64_t row)
{
    const size_t i = lower_bound(b, row >> 32);
    return i < b->n && b->buckets[i].key == row >> 32 && roaring_bitmap_contains(b->buckets[i].rows, (uint32_t)row);
}

size_t dv_bitmap_rows_in_range(const dv_bitmap *b, uint64_t from, uint64_t to, uint64_t *out, size_t max)
{
    if (from >= to || max == 0)
        return 0;
    const uint64_t first_key = from >> 32, last_key = (to - 1) >> 32;
    size_t written = 0;
    for (size_t i = lower_bound(b, first_key); i < b->n && b->buckets[i].key <= last_key; i++) {
        const uint64_t high = (uint64_t)b->buckets[i].key << 32;
        roaring_uint32_iterator_t it;
        roaring_init_iterator(b->buckets[i].rows, &it);
        if (b->buckets[i].key == first_key && !roaring_move_uint32_iterator_equalorlarger(&it, (uint32_t)from))
            continue;
        uint32_t chunk[256];
        for (;;) {
            const uint32_t want = (uint32_t)(max - written < 256 ? max - written : 256);
            const uint32_t got = roaring_read_uint32_iterator(&it, chunk, want);
            for (uint32_t j = 0; j < got; j++) {
                if ((high | chunk[j]) >= to)
                    return written;
                out[written++] = high | chunk[j];
            }
            if (written == max)
                return written;
            if (got < want)
                break; /* this bucket is done */
        }
    }
    return written;
}
