#include "hint.h"
#include "sv_grow.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void hint_free(sv_hint *h)
{
    if (!h)
        return;
    free(h->table);
    free(h->where);
    pred_free(h->pred);
    for (size_t i = 0; i < h->n_files; i++) {
        free(h->files[i].path);
        row_ranges_free(&h->files[i].ranges);
    }
    free(h->files);
    for (size_t i = 0; i < h->n_columns; i++)
        free(h->columns[i]);
    free(h->columns);
    free(h);
}

bool hint_name_valid(const char *name, size_t len)
{
    if (len == 0 || len > 128 || name[0] == '.')
        return false;
    for (size_t i = 0; i < len; i++) {
        char c = name[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '_' || c == '-' || c == '.';
        if (!ok)
            return false;
    }
    return true;
}

/* Normalize a relative path: drop a leading "./", refuse anything that could
 * name something outside the mount or be ambiguous. Returns a malloc'd copy. */
static char *normalize_path(const char *field, const char *p, size_t len, sv_error *err)
{
    if (len == 0 || len > HINT_MAX_PATH) {
        sv_fail(err, HINT_E_INVALID, 0, "%s: a path must have 1 to %u bytes", field, HINT_MAX_PATH);
        return NULL;
    }
    if (memchr(p, '\0', len)) {
        sv_fail(err, HINT_E_INVALID, 0, "%s: path contains a NUL byte", field);
        return NULL;
    }
    while (len >= 2 && p[0] == '.' && p[1] == '/') {
        p += 2;
        len -= 2;
    }
    if (len == 0 || p[0] == '/') {
        sv_fail(err, HINT_E_INVALID, 0, "%s: path '%.*s' is outside the mount (it must be relative)", field,
                (int)(len > 200 ? 200 : len), p);
        return NULL;
    }
    size_t seg = 0;
    for (size_t i = 0; i <= len; i++) {
        if (i < len && p[i] != '/')
            continue;
        size_t slen = i - seg;
        const char *s = p + seg;
        if (slen == 0 || (slen == 1 && s[0] == '.') || (slen == 2 && s[0] == '.' && s[1] == '.')) {
            sv_fail(err, HINT_E_INVALID, 0,
                    "%s: path '%.*s' has an empty, '.' or '..' component (paths may not leave the mount)", field,
                    (int)(len > 200 ? 200 : len), p);
            return NULL;
        }
        seg = i + 1;
    }
    char *out = strndup(p, len);
    if (!out)
        sv_fail(err, HINT_E_NOMEM, 0, "out of memory");
    return out;
}

static int cmp_files(const void *a, const void *b)
{
    return strcmp(((const hint_file_rows *)a)->path, ((const hint_file_rows *)b)->path);
}

static bool json_to_u64(json_t *v, uint64_t *out)
{
    if (!json_is_integer(v) || json_integer_value(v) < 0)
        return false;
    *out = (uint64_t)json_integer_value(v);
    return true;
}

static bool parse_rows(sv_hint *h, json_t *rows, sv_error *err)
{
    if (!json_is_object(rows)) {
        sv_fail(err, HINT_E_INVALID, 0, "\"rows\" must be an object mapping file paths to [[start, end], ...]");
        return false;
    }
    size_t nfiles = json_object_size(rows);
    if (nfiles > HINT_MAX_FILES) {
        sv_fail(err, HINT_E_LIMIT, 0, "\"rows\" names %zu files; the limit is %u", nfiles, HINT_MAX_FILES);
        return false;
    }
    h->files = calloc(nfiles ? nfiles : 1, sizeof *h->files);
    if (!h->files) {
        sv_fail(err, HINT_E_NOMEM, 0, "out of memory");
        return false;
    }
    size_t total = 0;
    const char *key;
    json_t *val;
    json_object_foreach(rows, key, val)
    {
        hint_file_rows *fr = &h->files[h->n_files];
        fr->path = normalize_path("rows", key, strlen(key), err);
        if (!fr->path)
            return false;
        h->n_files++;
        if (!json_is_array(val)) {
            sv_fail(err, HINT_E_INVALID, 0, "rows[\"%s\"] must be an array of [start, end] pairs", fr->path);
            return false;
        }
        size_t n = json_array_size(val);
        total += n;
        if (total > HINT_MAX_RANGES) {
            sv_fail(err, HINT_E_LIMIT, 0, "\"rows\" holds more than %u ranges", HINT_MAX_RANGES);
            return false;
        }
        for (size_t i = 0; i < n; i++) {
            json_t *pair = json_array_get(val, i);
            uint64_t a, b;
            if (!json_is_array(pair) || json_array_size(pair) != 2 ||
                !json_to_u64(json_array_get(pair, 0), &a) || !json_to_u64(json_array_get(pair, 1), &b)) {
                sv_fail(err, HINT_E_INVALID, 0,
                         "rows[\"%s\"][%zu] must be [start, end] with non-negative integers", fr->path, i);
                return false;
            }
            if (b < a) {
                sv_fail(err, HINT_E_INVALID, 0, "rows[\"%s\"][%zu]: end %llu is before start %llu", fr->path, i,
                         (unsigned long long)b, (unsigned long long)a);
                return false;
            }
            if (!sv_grow((void **)&fr->ranges.r, &fr->ranges.cap, fr->ranges.n + 1, sizeof *fr->ranges.r, 8,
                         HINT_MAX_RANGES)) {
                sv_fail(err, HINT_E_NOMEM, 0, "out of memory");
                return false;
            }
            fr->ranges.r[fr->ranges.n++] = (row_range){a, b};
        }
        row_ranges_normalize(&fr->ranges);
    }
    qsort(h->files, h->n_files, sizeof *h->files, cmp_files);
    for (size_t i = 1; i < h->n_files; i++) {
        if (strcmp(h->files[i - 1].path, h->files[i].path) == 0) {
            sv_fail(err, HINT_E_INVALID, 0, "rows: file '%s' appears twice (after normalizing the path)",
                     h->files[i].path);
            return false;
        }
    }
    return true;
}

static bool parse_columns(sv_hint *h, json_t *cols, sv_error *err)
{
    if (!json_is_array(cols)) {
        sv_fail(err, HINT_E_INVALID, 0, "\"columns\" must be an array of column names");
        return false;
    }
    size_t n = json_array_size(cols);
    if (n > HINT_MAX_COLUMNS) {
        sv_fail(err, HINT_E_LIMIT, 0, "\"columns\" lists %zu columns; the limit is %u", n, HINT_MAX_COLUMNS);
        return false;
    }
    h->columns = calloc(n ? n : 1, sizeof *h->columns);
    if (!h->columns) {
        sv_fail(err, HINT_E_NOMEM, 0, "out of memory");
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        json_t *c = json_array_get(cols, i);
        if (!json_is_string(c) || json_string_length(c) == 0 || json_string_length(c) > 1024) {
            sv_fail(err, HINT_E_INVALID, 0, "columns[%zu] must be a non-empty string of at most 1024 bytes", i);
            return false;
        }
        h->columns[i] = strdup(json_string_value(c));
        if (!h->columns[i]) {
            sv_fail(err, HINT_E_NOMEM, 0, "out of memory");
            return false;
        }
        h->n_columns++;
    }
    return true;
}

sv_hint *hint_parse(const char *json, size_t len, sv_error *err)
{
    if (len > HINT_MAX_BYTES) {
        sv_fail(err, HINT_E_LIMIT, 0, "hint is %zu bytes; the limit is %u", len, HINT_MAX_BYTES);
        return NULL;
    }
    json_error_t jerr;
    json_t *root = json_loadb(json, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!root) {
        sv_fail(err, HINT_E_INVALID, 0, "malformed JSON at line %d column %d: %s", jerr.line, jerr.column, jerr.text);
        return NULL;
    }
    sv_hint *h = calloc(1, sizeof *h);
    if (!h) {
        json_decref(root);
        sv_fail(err, HINT_E_NOMEM, 0, "out of memory");
        return NULL;
    }
    bool ok = true;
    if (!json_is_object(root)) {
        sv_fail(err, HINT_E_INVALID, 0, "a hint must be a JSON object with \"where\", \"rows\" and/or \"columns\"");
        ok = false;
    }
    const char *key;
    json_t *val;
    if (ok) {
        json_object_foreach(root, key, val)
        {
            if (strcmp(key, "where") && strcmp(key, "rows") && strcmp(key, "columns") && strcmp(key, "table") &&
                strcmp(key, "version")) {
                sv_fail(err, HINT_E_INVALID, 0,
                        "unknown hint field \"%.100s\" (expected table, where, rows, columns)", key);
                ok = false;
                break;
            }
        }
    }
    json_t *version = ok ? json_object_get(root, "version") : NULL;
    if (version && !(json_is_integer(version) && json_integer_value(version) == 1)) {
        sv_fail(err, HINT_E_INVALID, 0, "unsupported hint version (only 1 is known)");
        ok = false;
    }
    json_t *where = ok ? json_object_get(root, "where") : NULL;
    if (where && !json_is_null(where)) {
        if (!json_is_string(where)) {
            sv_fail(err, HINT_E_INVALID, 0, "\"where\" must be a string");
            ok = false;
        } else {
            h->where = strndup(json_string_value(where), json_string_length(where));
            pred_error perr;
            if (!h->where) {
                sv_fail(err, HINT_E_NOMEM, 0, "out of memory");
                ok = false;
            } else if (pred_parse(h->where, json_string_length(where), &h->pred, &perr) != PRED_OK) {
                sv_fail(err, HINT_E_INVALID, 0, "where: %s", perr.msg);
                ok = false;
            }
        }
    }
    json_t *table = ok ? json_object_get(root, "table") : NULL;
    if (table && !json_is_null(table)) {
        const char *t = json_string_value(table);
        size_t tl = t ? json_string_length(table) : 0;
        while (t && tl > 1 && t[tl - 1] == '/')
            tl--; /* "t1/" names the directory t1 */
        if (!t) {
            sv_fail(err, HINT_E_INVALID, 0, "\"table\" must be a string: a directory relative to the mount");
            ok = false;
        } else if ((tl == 1 && t[0] == '.') || (tl == 2 && t[0] == '.' && t[1] == '/') || tl == 0) {
            ok = (h->table = strdup("")) != NULL; /* the mount's root */
        } else {
            ok = (h->table = normalize_path("table", t, tl, err)) != NULL;
        }
    }
    json_t *rows = ok ? json_object_get(root, "rows") : NULL;
    if (rows && !parse_rows(h, rows, err))
        ok = false;
    json_t *cols = ok ? json_object_get(root, "columns") : NULL;
    if (cols && !parse_columns(h, cols, err))
        ok = false;
    json_decref(root);
    if (!ok) {
        hint_free(h);
        return NULL;
    }
    return h;
}

const hint_file_rows *hint_rows_for(const sv_hint *h, const char *relpath)
{
    size_t lo = 0, hi = h->n_files;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(h->files[mid].path, relpath);
        if (c == 0)
            return &h->files[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}
