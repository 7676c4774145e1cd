/* Thrift compact-protocol reader; see thrift_compact.h. */
#include "thrift_compact.h"

#include "sv_name.h"

#include <stdio.h>
#include <string.h>

const char *tc_status_name(tc_status s)
{
    static const char *const names[] = {
        [TC_OK] = "ok", [TC_E_TRUNCATED] = "truncated", [TC_E_VARINT] = "bad_varint",
        [TC_E_TYPE] = "bad_type", [TC_E_FIELD_ID] = "bad_field_id", [TC_E_LENGTH] = "bad_length",
        [TC_E_COUNT] = "bad_count", [TC_E_DEPTH] = "too_deep", [TC_E_BUDGET] = "budget_exhausted",
        [TC_E_MISSING] = "missing_field", [TC_E_RANGE] = "out_of_range",
        [TC_E_LIMIT] = "limit_exceeded", [TC_E_MAGIC] = "bad_magic", [TC_E_ENCRYPTED] = "encrypted",
        [TC_E_NEED_MORE] = "need_more", [TC_E_NOMEM] = "no_memory", [TC_E_INVALID] = "invalid",
        [TC_E_MISMATCH] = "mismatch",
    };
    return SV_NAME(names, s, "unknown");
}

const char *tc_type_name(int t)
{
    static const char *const names[] = {"stop",   "bool",   "bool", "i8",   "i16",
                                        "i32",    "i64",    "double", "binary", "list",
                                        "set",    "map",    "struct", "uuid"};
    return SV_NAME(names, t, "invalid");
}

void tc_reader_init(tc_reader *r, const void *buf, size_t len)
{
    memset(r, 0, sizeof *r);
    r->buf = buf;
    r->len = buf ? len : 0;
    r->max_depth = TC_MAX_DEPTH;
    r->budget = TC_DEFAULT_BUDGET;
    r->max_string = TC_DEFAULT_MAX_STRING;
}

/* ---- path ---- */

void tc_path_push(tc_reader *r, const char *name, int64_t index)
{
    if (r->path_len < TC_PATH_MAX) {
        r->path[r->path_len].name = name;
        r->path[r->path_len].index = index;
    }
    r->path_len++;
}

void tc_path_set_index(tc_reader *r, int64_t index)
{
    if (r->path_len > 0 && r->path_len <= TC_PATH_MAX)
        r->path[r->path_len - 1].index = index;
}

void tc_path_pop(tc_reader *r)
{
    if (r->path_len > 0)
        r->path_len--;
}

void tc_path_format(const tc_reader *r, char *buf, size_t buflen)
{
    if (buflen == 0)
        return;
    buf[0] = '\0';
    size_t at = 0;
    const unsigned n = r->path_len < TC_PATH_MAX ? r->path_len : TC_PATH_MAX;
    for (unsigned i = 0; i < n && at + 1 < buflen; i++) {
        int w;
        if (r->path[i].index >= 0)
            w = snprintf(buf + at, buflen - at, "%s%s[%lld]", i ? "." : "", r->path[i].name,
                         (long long)r->path[i].index);
        else
            w = snprintf(buf + at, buflen - at, "%s%s", i ? "." : "", r->path[i].name);
        if (w < 0)
            break;
        at += (size_t)w;
        if (at >= buflen)
            at = buflen - 1;
    }
    if (r->path_len > TC_PATH_MAX && at + 5 < buflen)
        snprintf(buf + at, buflen - at, "...");
}

/* ---- errors ---- */

bool tc_failv(tc_reader *r, tc_status s, size_t offset, const char *fmt, va_list ap)
{
    if (r->failed)
        return false;
    r->failed = true;
    char detail[SV_ERROR_MSG];
    vsnprintf(detail, sizeof detail, fmt, ap);
    char path[160];
    tc_path_format(r, path, sizeof path);
    if (path[0])
        sv_fail(&r->err, s, offset, "%s: %s (at byte %zu)", path, detail, offset);
    else
        sv_fail(&r->err, s, offset, "%s (at byte %zu)", detail, offset);
    return false;
}

bool tc_fail_at(tc_reader *r, tc_status s, size_t offset, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    tc_failv(r, s, offset, fmt, ap);
    va_end(ap);
    return false;
}

bool tc_fail(tc_reader *r, tc_status s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    tc_failv(r, s, r->pos, fmt, ap);
    va_end(ap);
    return false;
}

/* ---- primitives ---- */

bool tc_read_byte(tc_reader *r, uint8_t *out)
{
    if (r->failed)
        return false;
    if (r->pos >= r->len)
        return tc_fail(r, TC_E_TRUNCATED, "buffer ends where a byte was expected");
    *out = r->buf[r->pos++];
    return true;
}

bool tc_read_varint(tc_reader *r, uint64_t *out)
{
    if (r->failed)
        return false;
    const size_t start = r->pos;
    uint64_t v = 0;
    for (unsigned i = 0; i < 10; i++) {
        if (r->pos >= r->len)
            return tc_fail_at(r, TC_E_TRUNCATED, start, "buffer ends inside a varint");
        const uint8_t b = r->buf[r->pos++];
        if (i == 9 && (b & 0x7e))
            return tc_fail_at(r, TC_E_VARINT, start, "varint overflows 64 bits");
        v |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) {
            *out = v;
            return true;
        }
        if (i == 9)
            break;
    }
    return tc_fail_at(r, TC_E_VARINT, start, "varint longer than 10 bytes");
}

bool tc_read_i8(tc_reader *r, int8_t *out)
{
    uint8_t b = 0;
    if (!tc_read_byte(r, &b))
        return false;
    *out = (int8_t)b;
    return true;
}

static bool read_zigzag_bounded(tc_reader *r, int64_t min, int64_t max, int64_t *out,
                                const char *what)
{
    const size_t start = r->pos;
    uint64_t u = 0;
    if (!tc_read_varint(r, &u))
        return false;
    const int64_t v = tc_zigzag_decode(u);
    if (v < min || v > max)
        return tc_fail_at(r, TC_E_VARINT, start, "varint value %lld does not fit %s",
                          (long long)v, what);
    *out = v;
    return true;
}

/* i16 and i32: a zigzag varint that must fit. */
#define TC_READ_ZIGZAG(bits)                                                             \
    bool tc_read_i##bits(tc_reader *r, int##bits##_t *out)                               \
    {                                                                                    \
        int64_t v = 0;                                                                   \
        if (!read_zigzag_bounded(r, INT##bits##_MIN, INT##bits##_MAX, &v, "i" #bits)) \
            return false;                                                                \
        *out = (int##bits##_t)v;                                                         \
        return true;                                                                     \
    }
TC_READ_ZIGZAG(16)
TC_READ_ZIGZAG(32)
#undef TC_READ_ZIGZAG

bool tc_read_i64(tc_reader *r, int64_t *out)
{
    uint64_t u = 0;
    if (!tc_read_varint(r, &u))
        return false;
    *out = tc_zigzag_decode(u);
    return true;
}

bool tc_read_double(tc_reader *r, double *out)
{
    if (r->failed)
        return false;
    if (tc_remaining(r) < 8)
        return tc_fail(r, TC_E_TRUNCATED, "buffer ends inside a double");
    uint64_t bits = 0;
    for (int i = 7; i >= 0; i--)
        bits = (bits << 8) | r->buf[r->pos + (size_t)i];
    r->pos += 8;
    memcpy(out, &bits, sizeof *out);
    return true;
}

bool tc_read_binary(tc_reader *r, const uint8_t **data, uint32_t *len)
{
    const size_t start = r->pos;
    uint64_t n = 0;
    if (!tc_read_varint(r, &n))
        return false;
    if (n > r->max_string)
        return tc_fail_at(r, TC_E_LENGTH, start, "binary length %llu exceeds the %u-byte limit",
                          (unsigned long long)n, r->max_string);
    if (n > tc_remaining(r))
        return tc_fail_at(r, TC_E_LENGTH, start,
                          "binary length %llu runs past the end of the buffer (%zu bytes left)",
                          (unsigned long long)n, tc_remaining(r));
    *data = r->buf + r->pos;
    *len = (uint32_t)n;
    r->pos += (size_t)n;
    return true;
}

bool tc_read_uuid(tc_reader *r, const uint8_t **data)
{
    if (r->failed)
        return false;
    if (tc_remaining(r) < 16)
        return tc_fail(r, TC_E_TRUNCATED, "buffer ends inside a uuid");
    *data = r->buf + r->pos;
    r->pos += 16;
    return true;
}

bool tc_read_bool_elem(tc_reader *r, bool *out)
{
    const size_t start = r->pos;
    uint8_t b = 0;
    if (!tc_read_byte(r, &b))
        return false;
    /* The spec says 1/0; Java and C++ write 1/2. */
    if (b > 2)
        return tc_fail_at(r, TC_E_RANGE, start, "bool element byte 0x%02x is not 0, 1 or 2", b);
    *out = b == 1;
    return true;
}

/* ---- budget and nesting ---- */

bool tc_charge(tc_reader *r, uint64_t n)
{
    if (r->failed)
        return false;
    if (n > r->budget) {
        r->budget = 0;
        return tc_fail(r, TC_E_BUDGET, "element budget exhausted");
    }
    r->budget -= n;
    return true;
}

static bool enter(tc_reader *r)
{
    if (r->failed)
        return false;
    if (r->depth >= r->max_depth)
        return tc_fail(r, TC_E_DEPTH, "nesting deeper than %u levels", r->max_depth);
    r->depth++;
    return true;
}

static void leave(tc_reader *r)
{
    if (r->depth > 0)
        r->depth--;
}

bool tc_struct_begin(tc_reader *r)
{
    return enter(r);
}

void tc_struct_end(tc_reader *r)
{
    leave(r);
}

void tc_container_end(tc_reader *r)
{
    leave(r);
}

/* The header byte of a field or a list (id delta or count in the high
 * nibble, type in the low one), or the key and value types of a map. */
static bool read_nibbles(tc_reader *r, uint8_t *high, uint8_t *low)
{
    uint8_t b = 0;
    if (!tc_read_byte(r, &b))
        return false;
    *high = b >> 4;
    *low = b & 0x0f;
    return true;
}

bool tc_next_field(tc_reader *r, int16_t *last_id, tc_field *f)
{
    const size_t start = r->pos;
    uint8_t delta, type;
    if (!read_nibbles(r, &delta, &type) || (delta == 0 && type == 0))
        return false; /* an error, or the stop field */
    if (type > TC_UUID)
        return tc_fail_at(r, TC_E_TYPE, start, "invalid field type %u", type);
    int32_t id;
    if (delta == 0) {
        int16_t v = 0;
        if (!tc_read_i16(r, &v))
            return false;
        id = v;
    } else {
        id = (int32_t)*last_id + delta;
        if (id > INT16_MAX)
            return tc_fail_at(r, TC_E_FIELD_ID, start, "field id %d overflows i16", (int)id);
    }
    if (!tc_charge(r, 1))
        return false;
    *last_id = (int16_t)id;
    f->id = (int16_t)id;
    f->type = type;
    f->bool_value = type == TC_BOOL_TRUE;
    f->offset = start;
    return true;
}

/* Fewest bytes an element of this type can occupy; 0 for invalid types. */
static unsigned min_elem_size(uint8_t t)
{
    switch (t) {
    case TC_BOOL_TRUE:
    case TC_BOOL_FALSE:
    case TC_I8:
    case TC_I16:
    case TC_I32:
    case TC_I64:
    case TC_BINARY:
    case TC_LIST:
    case TC_SET:
    case TC_MAP:
    case TC_STRUCT:
        return 1;
    case TC_DOUBLE:
        return 8;
    case TC_UUID:
        return 16;
    default:
        return 0;
    }
}

static uint8_t norm_elem(uint8_t t)
{
    return t == TC_BOOL_FALSE ? TC_BOOL_TRUE : t;
}

bool tc_list_begin(tc_reader *r, uint8_t *elem_type, uint32_t *count)
{
    const size_t start = r->pos;
    uint8_t high, t;
    if (!read_nibbles(r, &high, &t))
        return false;
    uint64_t n = high;
    if (n == 15 && !tc_read_varint(r, &n))
        return false;
    const unsigned min = min_elem_size(t);
    if (min == 0)
        return tc_fail_at(r, TC_E_TYPE, start, "invalid list element type %u", t);
    if (n > INT32_MAX)
        return tc_fail_at(r, TC_E_COUNT, start, "list count %llu exceeds i32",
                          (unsigned long long)n);
    if (n * min > tc_remaining(r))
        return tc_fail_at(r, TC_E_COUNT, start,
                          "list of %llu %s elements cannot fit in the %zu bytes left",
                          (unsigned long long)n, tc_type_name(t), tc_remaining(r));
    if (!tc_charge(r, n) || !enter(r))
        return false;
    *elem_type = norm_elem(t);
    *count = (uint32_t)n;
    return true;
}

bool tc_map_begin(tc_reader *r, uint8_t *key_type, uint8_t *val_type, uint32_t *count)
{
    if (r->failed)
        return false;
    const size_t start = r->pos;
    uint64_t n = 0;
    if (!tc_read_varint(r, &n))
        return false;
    uint8_t kt = 0, vt = 0;
    if (n > 0) {
        if (!read_nibbles(r, &kt, &vt)) /* key type high, value type low */
            return false;
        const unsigned kmin = min_elem_size(kt), vmin = min_elem_size(vt);
        if (kmin == 0 || vmin == 0)
            return tc_fail_at(r, TC_E_TYPE, start, "invalid map key/value types %u/%u", kt, vt);
        if (n > INT32_MAX)
            return tc_fail_at(r, TC_E_COUNT, start, "map count %llu exceeds i32",
                              (unsigned long long)n);
        if (n * (kmin + vmin) > tc_remaining(r))
            return tc_fail_at(r, TC_E_COUNT, start,
                              "map of %llu entries cannot fit in the %zu bytes left",
                              (unsigned long long)n, tc_remaining(r));
    }
    if (!tc_charge(r, n * 2) || !enter(r))
        return false;
    *key_type = norm_elem(kt);
    *val_type = norm_elem(vt);
    *count = (uint32_t)n;
    return true;
}

bool tc_read_struct(tc_reader *r, tc_field_fn field, void *ctx)
{
    if (!tc_struct_begin(r))
        return false;
    int16_t last = 0;
    tc_field f = {0};
    while (tc_next_field(r, &last, &f))
        if (!field(r, &f, ctx))
            return false;
    if (r->failed)
        return false;
    tc_struct_end(r);
    return true;
}

/* ---- skipping ---- */

static bool skip_field(tc_reader *r, const tc_field *f, void *ctx)
{
    (void)ctx;
    return tc_skip_field(r, f);
}

bool tc_skip(tc_reader *r, uint8_t type)
{
    if (r->failed)
        return false;
    /* Scalars are read into a scratch value and dropped. */
    union {
        bool b;
        uint8_t u8;
        int16_t i16;
        int32_t i32;
        uint64_t u64;
        double d;
        const uint8_t *p;
    } x;
    uint32_t len;
    switch (type) {
    case TC_BOOL_TRUE:
    case TC_BOOL_FALSE: return tc_read_bool_elem(r, &x.b);
    case TC_I8: return tc_read_byte(r, &x.u8);
    case TC_I16: return tc_read_i16(r, &x.i16);
    case TC_I32: return tc_read_i32(r, &x.i32);
    case TC_I64: return tc_read_varint(r, &x.u64);
    case TC_DOUBLE: return tc_read_double(r, &x.d);
    case TC_BINARY: return tc_read_binary(r, &x.p, &len);
    case TC_UUID: return tc_read_uuid(r, &x.p);
    case TC_LIST:
    case TC_SET: {
        uint8_t et;
        uint32_t n;
        if (!tc_list_begin(r, &et, &n))
            return false;
        for (uint32_t i = 0; i < n; i++)
            if (!tc_skip(r, et))
                return false;
        tc_container_end(r);
        return true;
    }
    case TC_MAP: {
        uint8_t kt, vt;
        uint32_t n;
        if (!tc_map_begin(r, &kt, &vt, &n))
            return false;
        for (uint32_t i = 0; i < n; i++)
            if (!tc_skip(r, kt) || !tc_skip(r, vt))
                return false;
        tc_container_end(r);
        return true;
    }
    case TC_STRUCT: return tc_read_struct(r, skip_field, NULL);
    default:
        return tc_fail(r, TC_E_TYPE, "cannot skip a value of invalid type %u", type);
    }
}

bool tc_skip_field(tc_reader *r, const tc_field *f)
{
    if (f->type == TC_BOOL_TRUE || f->type == TC_BOOL_FALSE)
        return !r->failed; /* the value lives in the field header */
    return tc_skip(r, f->type);
}

/* ---- typed fields ---- */

static bool wrong_type(tc_reader *r, const tc_field *f, const char *want)
{
    return tc_fail_at(r, TC_E_TYPE, f->offset, "field %d has wire type %s, expected %s",
                      (int)f->id, tc_type_name(f->type), want);
}

bool tc_field_expect(tc_reader *r, const tc_field *f, uint8_t type)
{
    if (r->failed)
        return false;
    if (f->type != type)
        return wrong_type(r, f, tc_type_name(type));
    return true;
}

bool tc_field_bool(tc_reader *r, const tc_field *f, bool *out)
{
    if (r->failed)
        return false;
    if (f->type != TC_BOOL_TRUE && f->type != TC_BOOL_FALSE)
        return wrong_type(r, f, "bool");
    *out = f->bool_value;
    return true;
}

static bool field_int(tc_reader *r, const tc_field *f, int64_t min, int64_t max, int64_t *out,
                      const char *want)
{
    if (r->failed)
        return false;
    const size_t start = r->pos;
    int64_t v = 0;
    switch (f->type) {
    case TC_I8: {
        int8_t b = 0;
        if (!tc_read_i8(r, &b))
            return false;
        v = b;
        break;
    }
    case TC_I16:
    case TC_I32:
    case TC_I64:
        if (!tc_read_i64(r, &v))
            return false;
        break;
    default:
        return wrong_type(r, f, want);
    }
    if (v < min || v > max)
        return tc_fail_at(r, TC_E_RANGE, start, "field %d value %lld does not fit %s", (int)f->id,
                          (long long)v, want);
    *out = v;
    return true;
}

/* The narrower integer fields: any integer wire type whose value fits. */
#define TC_FIELD_INT(bits)                                                              \
    bool tc_field_i##bits(tc_reader *r, const tc_field *f, int##bits##_t *out)          \
    {                                                                                   \
        int64_t v = 0;                                                                  \
        if (!field_int(r, f, INT##bits##_MIN, INT##bits##_MAX, &v, "i" #bits))          \
            return false;                                                               \
        *out = (int##bits##_t)v;                                                        \
        return true;                                                                    \
    }
TC_FIELD_INT(8)
TC_FIELD_INT(16)
TC_FIELD_INT(32)
#undef TC_FIELD_INT

bool tc_field_i64(tc_reader *r, const tc_field *f, int64_t *out)
{
    return field_int(r, f, INT64_MIN, INT64_MAX, out, "i64");
}

bool tc_field_binary(tc_reader *r, const tc_field *f, const uint8_t **data, uint32_t *len)
{
    if (r->failed)
        return false;
    if (f->type != TC_BINARY)
        return wrong_type(r, f, "binary");
    return tc_read_binary(r, data, len);
}
