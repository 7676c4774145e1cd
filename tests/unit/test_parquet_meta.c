/* Parquet metadata: every committed fixture against its expected JSON
 * (tests/fixtures/gen_parquet_fixtures.py), plus malformed inputs. */
#include "parquet_meta.h"

#include "column_resolve.h"

#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture_set.h"
#include "pq_test_encode.h"

/* The leaf whose path is exactly path, through the column resolver, or NULL. */
static const pq_leaf *leaf_named(const pq_file_meta *m, const char *path)
{
    pq_column_resolver *r = pq_column_resolver_new(m);
    cr_assert_not_null(r);
    pq_column_match match;
    const pq_resolve_status st = pq_column_resolve(r, path, &match);
    pq_column_resolver_free(r);
    return st == PQ_RESOLVE_OK && match.exact ? &m->leaves[match.leaf] : NULL;
}

/* ------------------------------------------------------------------ */
/* fixtures                                                            */
/* ------------------------------------------------------------------ */

static const char *jstr(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    cr_assert(json_is_string(v), "missing string %s", key);
    return json_string_value(v);
}

static size_t b64_decode(const char *s, uint8_t *out, size_t cap)
{
    static const char tbl[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    uint32_t acc = 0;
    int bits = 0;
    size_t n = 0;
    for (; *s && *s != '='; s++) {
        const char *p = strchr(tbl, *s);
        cr_assert(p != NULL);
        acc = (acc << 6) | (uint32_t)(p - tbl);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            cr_assert(n < cap);
            out[n++] = (uint8_t)(acc >> bits);
        }
    }
    return n;
}

static const char *converted_name(int c)
{
    static const char *const n[] = {
        "UTF8",        "MAP",        "MAP_KEY_VALUE",    "LIST",
        "ENUM",        "DECIMAL",    "DATE",             "TIME_MILLIS",
        "TIME_MICROS", "TIMESTAMP_MILLIS", "TIMESTAMP_MICROS", "UINT_8",
        "UINT_16",     "UINT_32",    "UINT_64",          "INT_8",
        "INT_16",      "INT_32",     "INT_64",           "JSON",
        "BSON",        "INTERVAL"};
    if (c == PQ_CT_NONE)
        return "NONE";
    return c >= 0 && c < 22 ? n[c] : "?";
}

/* pyarrow's LogicalType names -> ours */
static const char *pyarrow_logical(pq_logical_kind k)
{
    switch (k) {
    case PQ_LT_INTEGER: return "INT";
    case PQ_LT_UNKNOWN: return "NULL";
    default: return pq_logical_kind_name(k);
    }
}

static const char *unit_name(pq_time_unit u)
{
    switch (u) {
    case PQ_UNIT_MILLIS: return "milliseconds";
    case PQ_UNIT_MICROS: return "microseconds";
    case PQ_UNIT_NANOS: return "nanoseconds";
    default: return "?";
    }
}

static bool bytes_eq(pq_bytes b, const char *s)
{
    return b.len == strlen(s) && memcmp(b.ptr, s, b.len) == 0;
}

/* ------------------------------------------------------------------ */
/* fixtures vs expected JSON                                           */
/* ------------------------------------------------------------------ */

static void check_leaves(const fixture *fx, const pq_file_meta *m)
{
    json_t *leaves = json_object_get(fx->exp, "leaves");
    cr_assert_eq(m->n_leaves, json_array_size(leaves), "%s", fx->name);
    for (uint32_t i = 0; i < m->n_leaves; i++) {
        json_t *e = json_array_get(leaves, i);
        const pq_leaf *L = &m->leaves[i];
        cr_expect_str_eq(L->path, jstr(e, "path"), "%s leaf %u", fx->name, i);
        cr_expect_str_eq(pq_physical_type_name(L->type), jstr(e, "physical_type"), "%s %s",
                         fx->name, L->path);
        cr_expect_eq(L->max_def, jint(e, "max_def"), "%s %s", fx->name, L->path);
        cr_expect_eq(L->max_rep, jint(e, "max_rep"), "%s %s", fx->name, L->path);
        /* pyarrow derives "converted_type" from the logical type; compare with
         * the stored value, and with pyarrow's where it is set. */
        json_t *raw = json_object_get(e, "converted_type_raw");
        cr_expect_eq(L->converted_type, json_is_integer(raw) ? json_integer_value(raw) : PQ_CT_NONE,
                     "%s %s", fx->name, L->path);
        if (strcmp(jstr(e, "converted_type"), "NONE") != 0)
            cr_expect_str_eq(converted_name(L->converted_type), jstr(e, "converted_type"),
                             "%s %s", fx->name, L->path);
        cr_expect_str_eq(pyarrow_logical(L->logical.kind), jstr(e, "logical_type"), "%s %s",
                         fx->name, L->path);
        cr_expect_eq(L->nested, L->depth > 1 || L->max_rep > 0);
        cr_expect_eq(leaf_named(m, L->path), L);
        json_t *tl = json_object_get(e, "type_length");
        if (json_is_integer(tl))
            cr_expect_eq(L->type_length, json_integer_value(tl), "%s %s", fx->name, L->path);
        json_t *prec = json_object_get(e, "precision");
        if (json_is_integer(prec)) {
            cr_expect_eq(L->precision, json_integer_value(prec));
            cr_expect_eq(L->scale, jint(e, "scale"));
        }
        const char *ls = jstr(e, "logical_type_str");
        char want[128];
        switch (L->logical.kind) {
        case PQ_LT_DECIMAL:
            snprintf(want, sizeof want, "Decimal(precision=%d, scale=%d)",
                     (int)L->logical.decimal_precision, (int)L->logical.decimal_scale);
            cr_expect_str_eq(ls, want);
            break;
        case PQ_LT_TIME:
        case PQ_LT_TIMESTAMP:
            snprintf(want, sizeof want, "isAdjustedToUTC=%s, timeUnit=%s",
                     L->logical.adjusted_to_utc ? "true" : "false", unit_name(L->logical.unit));
            cr_expect(strstr(ls, want) != NULL, "%s: %s vs %s", L->path, ls, want);
            break;
        case PQ_LT_INTEGER:
            snprintf(want, sizeof want, "Int(bitWidth=%d, isSigned=%s)", L->logical.bit_width,
                     L->logical.is_signed ? "true" : "false");
            cr_expect_str_eq(ls, want);
            break;
        default:
            break;
        }
    }
}

static void check_offset_index(const fixture *fx, const pq_column_chunk *c, json_t *joi)
{
    cr_assert(c->has_offset_index);
    cr_expect_eq(c->offset_index_offset, jint(joi, "offset"));
    cr_expect_eq(c->offset_index_length, jint(joi, "length"));
    pq_offset_index oi;
    tc_error err;
    cr_assert(c->offset_index_offset + c->offset_index_length <= (int64_t)fx->len);
    cr_assert_eq(pq_offset_index_parse(fx->data + c->offset_index_offset,
                                       (size_t)c->offset_index_length, &oi, &err),
                 TC_OK, "%s: %s", fx->name, err.msg);
    json_t *locs = json_object_get(joi, "page_locations");
    cr_assert_eq(oi.n_pages, json_array_size(locs));
    for (uint32_t i = 0; i < oi.n_pages; i++) {
        json_t *l = json_array_get(locs, i);
        cr_expect_eq(oi.pages[i].offset, jint(l, "offset"));
        cr_expect_eq(oi.pages[i].compressed_page_size, jint(l, "compressed_page_size"));
        cr_expect_eq(oi.pages[i].first_row_index, jint(l, "first_row_index"));
    }
    json_t *ub = json_object_get(joi, "unencoded_byte_array_data_bytes");
    if (json_is_array(ub)) {
        cr_assert_eq(oi.n_unencoded, json_array_size(ub));
        for (uint32_t i = 0; i < oi.n_unencoded; i++)
            cr_expect_eq(oi.unencoded_byte_array_data_bytes[i],
                         json_integer_value(json_array_get(ub, i)));
    } else {
        cr_expect_null(oi.unencoded_byte_array_data_bytes);
    }
    pq_offset_index_free(&oi);
}

static void check_column_index(const fixture *fx, const pq_column_chunk *c, json_t *jci)
{
    cr_assert(c->has_column_index);
    cr_expect_eq(c->column_index_offset, jint(jci, "offset"));
    pq_column_index ci;
    tc_error err;
    cr_assert_eq(pq_column_index_parse(fx->data + c->column_index_offset,
                                       (size_t)c->column_index_length, &ci, &err),
                 TC_OK, "%s: %s", fx->name, err.msg);
    json_t *np = json_object_get(jci, "null_pages");
    json_t *mins = json_object_get(jci, "min_values");
    json_t *maxs = json_object_get(jci, "max_values");
    cr_assert_eq(ci.n_pages, json_array_size(np));
    cr_expect_eq(ci.boundary_order, jint(jci, "boundary_order"));
    for (uint32_t i = 0; i < ci.n_pages; i++) {
        cr_expect_eq(ci.null_pages[i], json_is_true(json_array_get(np, i)));
        uint8_t buf[256];
        size_t n = b64_decode(json_string_value(json_array_get(mins, i)), buf, sizeof buf);
        cr_expect(n == ci.min_values[i].len && memcmp(buf, ci.min_values[i].ptr, n) == 0);
        n = b64_decode(json_string_value(json_array_get(maxs, i)), buf, sizeof buf);
        cr_expect(n == ci.max_values[i].len && memcmp(buf, ci.max_values[i].ptr, n) == 0);
    }
    json_t *nc = json_object_get(jci, "null_counts");
    if (json_is_array(nc)) {
        cr_assert_not_null(ci.null_counts);
        for (uint32_t i = 0; i < ci.n_pages; i++)
            cr_expect_eq(ci.null_counts[i], json_integer_value(json_array_get(nc, i)));
    } else {
        cr_expect_null(ci.null_counts);
    }
    pq_column_index_free(&ci);
}

static void check_pages(const fixture *fx, json_t *pages)
{
    for (size_t i = 0; i < json_array_size(pages); i++) {
        json_t *p = json_array_get(pages, i);
        const int64_t off = jint(p, "offset");
        pq_page_header h;
        size_t hl = 0;
        tc_error err;
        cr_assert_eq(pq_page_header_parse(fx->data + off, fx->len - (size_t)off, &h, &hl, &err),
                     TC_OK, "%s page at %lld: %s", fx->name, (long long)off, err.msg);
        cr_expect_eq(hl, (size_t)jint(p, "header_len"));
        cr_expect_eq(h.type, jint(p, "type"));
        cr_expect_eq(h.uncompressed_page_size, jint(p, "uncompressed_size"));
        cr_expect_eq(h.compressed_page_size, jint(p, "compressed_size"));
        cr_expect_eq(h.has_crc, json_is_true(json_object_get(p, "has_crc")));
        if (h.has_crc) {
            cr_expect_eq(h.crc, (uint32_t)jint(p, "crc"));
            cr_expect_eq(h.crc_len, (uint32_t)jint(p, "crc_len"));
            /* The CRC covers the body as stored. */
            cr_expect_eq(pq_crc32(0, fx->data + off + hl, (size_t)h.compressed_page_size), h.crc,
                         "%s page at %lld", fx->name, (long long)off);
        }
        switch (h.type) {
        case PQ_PAGE_DATA:
            cr_assert(h.has_data_page_header);
            cr_expect_eq(h.data.num_values, jint(p, "num_values"));
            cr_expect_eq(h.data.encoding, jint(p, "encoding"));
            break;
        case PQ_PAGE_DATA_V2:
            cr_assert(h.has_data_page_header_v2);
            cr_expect_eq(h.v2.num_values, jint(p, "num_values"));
            cr_expect_eq(h.v2.num_nulls, jint(p, "num_nulls"));
            cr_expect_eq(h.v2.num_rows, jint(p, "num_rows"));
            cr_expect_eq(h.v2.encoding, jint(p, "encoding"));
            cr_expect_eq(h.v2.definition_levels_byte_length, jint(p, "def_len"));
            cr_expect_eq(h.v2.repetition_levels_byte_length, jint(p, "rep_len"));
            cr_expect_eq(h.v2.is_compressed, json_is_true(json_object_get(p, "is_compressed")));
            break;
        case PQ_PAGE_DICTIONARY:
            cr_assert(h.has_dictionary_page_header);
            cr_expect_eq(h.dict.num_values, jint(p, "num_values"));
            cr_expect_eq(h.dict.encoding, jint(p, "encoding"));
            break;
        default:
            cr_assert_fail("unexpected page type %d", h.type);
        }
        /* Every shorter buffer is an error, never a crash. */
        for (size_t cut = 0; cut < hl; cut++) {
            pq_page_header h2;
            size_t hl2;
            cr_expect_neq(pq_page_header_parse(fx->data + off, cut, &h2, &hl2, &err), TC_OK);
        }
    }
}

static void check_chunk(const fixture *fx, const pq_leaf *leaf, const pq_column_chunk *c,
                        json_t *jc)
{
    char path[512] = "";
    for (uint32_t k = 0; k < c->n_path; k++) {
        const size_t at = strlen(path);
        snprintf(path + at, sizeof path - at, "%s%.*s", k ? "." : "", (int)c->path_in_schema[k].len,
                 (const char *)c->path_in_schema[k].ptr);
    }
    cr_expect_str_eq(path, jstr(jc, "path"));
    cr_expect_str_eq(path, leaf->path);
    cr_expect_str_eq(pq_physical_type_name(c->type), jstr(jc, "physical_type"));
    cr_expect_str_eq(pq_codec_name(c->codec), jstr(jc, "compression"));
    json_t *encs = json_object_get(jc, "encodings");
    uint32_t mask = 0;
    for (size_t k = 0; k < json_array_size(encs); k++) {
        const char *en = json_string_value(json_array_get(encs, k));
        int e = 0;
        while (e < 16 && strcmp(pq_encoding_name(e), en) != 0)
            e++;
        cr_assert(e < 16, "unknown encoding %s", en);
        mask |= 1u << e;
    }
    cr_expect_eq(c->encodings_mask, mask, "%s %s", fx->name, path);
    cr_expect_eq(c->num_values, jint(jc, "num_values"));
    cr_expect_eq(c->data_page_offset, jint(jc, "data_page_offset"));
    cr_expect_eq(c->total_compressed_size, jint(jc, "total_compressed_size"));
    cr_expect_eq(c->total_uncompressed_size, jint(jc, "total_uncompressed_size"));
    cr_expect_eq(c->file_offset, jint(jc, "file_offset"));
    cr_expect_null(c->file_path.ptr);
    json_t *dpo = json_object_get(jc, "dictionary_page_offset");
    if (json_is_integer(dpo)) {
        cr_expect(c->has_dictionary_page_offset);
        cr_expect_eq(c->dictionary_page_offset, json_integer_value(dpo));
    }
    uint64_t off, len;
    cr_assert(pq_column_chunk_range(c, &off, &len));
    cr_expect_eq(off, (uint64_t)jint(jc, "chunk_offset"));
    cr_expect_eq(len, (uint64_t)c->total_compressed_size);
    json_t *bfo = json_object_get(jc, "bloom_filter_offset");
    cr_expect_eq(c->has_bloom_filter_offset, json_is_integer(bfo));
    if (json_is_integer(bfo)) {
        cr_expect_eq(c->bloom_filter_offset, json_integer_value(bfo));
        cr_expect_eq(c->bloom_filter_length, jint(jc, "bloom_filter_length"));
    }
    json_t *st = json_object_get(jc, "statistics");
    cr_expect_eq(c->has_statistics, json_is_object(st), "%s %s", fx->name, path);
    if (json_is_object(st)) {
        json_t *nc = json_object_get(st, "null_count");
        cr_expect_eq(c->statistics.has_null_count, json_is_integer(nc));
        if (json_is_integer(nc))
            cr_expect_eq(c->statistics.null_count, json_integer_value(nc));
        json_t *dc = json_object_get(st, "distinct_count");
        cr_expect_eq(c->statistics.has_distinct_count, json_is_integer(dc));
        const bool mm = (c->statistics.has_min_value && c->statistics.has_max_value) ||
                        (c->statistics.has_min && c->statistics.has_max);
        cr_expect_eq(mm, json_is_true(json_object_get(st, "has_min_max")), "%s %s", fx->name,
                     path);
    }
    cr_expect_eq(c->has_offset_index, json_is_true(json_object_get(jc, "has_offset_index")));
    cr_expect_eq(c->has_column_index, json_is_true(json_object_get(jc, "has_column_index")));
    json_t *joi = json_object_get(jc, "offset_index");
    if (json_is_object(joi))
        check_offset_index(fx, c, joi);
    json_t *jci = json_object_get(jc, "column_index");
    if (json_is_object(jci))
        check_column_index(fx, c, jci);
    check_pages(fx, json_object_get(jc, "pages"));
}

static void check_fixture(const fixture *fx)
{
    pq_file_meta *m = NULL;
    tc_error err;
    uint64_t need = 0;
    cr_assert_eq(pq_file_meta_from_tail(fx->data, fx->len, fx->len, &m, &need, &err), TC_OK,
                 "%s: %s", fx->name, err.msg);
    cr_expect_eq(m->file_size, fx->len);
    cr_expect_eq(m->footer_len, jint(fx->exp, "footer_len"));
    cr_expect_eq(m->footer_offset, (uint64_t)jint(fx->exp, "footer_offset"));
    cr_expect_eq(need, (uint64_t)m->footer_len + 8);
    cr_expect_eq(m->num_rows, jint(fx->exp, "num_rows"));
    cr_expect(bytes_eq(m->created_by, jstr(fx->exp, "created_by")));
    cr_expect(m->version == 1 || m->version == 2);
    cr_expect_gt(m->schema[0].name_len, 0, "the root has a name (\"schema\", \"duckdb_schema\", ...)");
    check_leaves(fx, m);
    json_t *rgs = json_object_get(fx->exp, "row_groups");
    cr_assert_eq(m->n_row_groups, json_array_size(rgs));
    for (uint32_t g = 0; g < m->n_row_groups; g++) {
        json_t *jg = json_array_get(rgs, g);
        const pq_row_group *rg = &m->row_groups[g];
        cr_expect_eq(rg->num_rows, jint(jg, "num_rows"));
        cr_expect_eq(rg->total_byte_size, jint(jg, "total_byte_size"));
        json_t *cols = json_object_get(jg, "columns");
        cr_assert_eq(rg->n_columns, json_array_size(cols));
        for (uint32_t c = 0; c < rg->n_columns; c++)
            check_chunk(fx, &m->leaves[c], &rg->columns[c], json_array_get(cols, c));
    }
    if (m->n_column_orders) {
        cr_expect_eq(m->n_column_orders, m->n_leaves);
        for (uint32_t i = 0; i < m->n_column_orders; i++)
            cr_expect_eq(m->column_orders[i], PQ_ORDER_TYPE_DEFINED);
    }
    pq_file_meta_free(m);

    /* A short tail asks for exactly what it needs, which then parses. */
    const size_t small = 16;
    cr_assert_eq(pq_file_meta_from_tail(fx->data + fx->len - small, small, fx->len, &m, &need,
                                        &err),
                 TC_E_NEED_MORE);
    cr_assert_null(m);
    cr_assert_eq(need, (uint64_t)jint(fx->exp, "footer_len") + 8);
    cr_assert_eq(pq_file_meta_from_tail(fx->data + fx->len - need, (size_t)need, fx->len, &m,
                                        NULL, &err),
                 TC_OK, "%s", err.msg);
    pq_file_meta_free(m);
}

Test(fixtures, all_match_expected_json)
{
    fixture fx[32];
    const int n = fixtures_load(fx, 32);
    for (int i = 0; i < n; i++)
        check_fixture(&fx[i]);
    fixtures_free(fx, n);
}

Test(fixtures, specific_facts)
{
    fixture fx[32];
    const int n = fixtures_load(fx, 32);
    for (int i = 0; i < n; i++) {
        pq_file_meta *m;
        tc_error err;
        cr_assert_eq(pq_file_meta_from_tail(fx[i].data, fx[i].len, fx[i].len, &m, NULL, &err),
                     TC_OK);
        if (strcmp(fx[i].name, "types_snappy") == 0) {
            const pq_row_group *rg = &m->row_groups[0];
            cr_expect(rg->has_sorting_columns);
            const pq_leaf *ts = leaf_named(m, "ts_ns_utc");
            cr_assert_not_null(ts);
            cr_expect_eq(ts->logical.kind, PQ_LT_TIMESTAMP);
            cr_expect_eq(ts->logical.unit, PQ_UNIT_NANOS);
            cr_expect(ts->logical.adjusted_to_utc);
            const pq_leaf *u = leaf_named(m, "uuid");
            cr_expect_eq(u->logical.kind, PQ_LT_UUID);
            cr_expect_eq(u->type_length, 16);
            cr_expect_eq(leaf_named(m, "f16")->logical.kind, PQ_LT_FLOAT16);
            cr_expect_eq(leaf_named(m, "json")->logical.kind, PQ_LT_JSON);
            cr_expect_eq(leaf_named(m, "nul")->logical.kind, PQ_LT_UNKNOWN);
            cr_expect_eq(leaf_named(m, "str")->logical.kind, PQ_LT_STRING);
            const pq_leaf *u64 = leaf_named(m, "u64");
            cr_expect_eq(u64->logical.bit_width, 64);
            cr_expect_not(u64->logical.is_signed);
            cr_expect_eq(u64->converted_type, PQ_CT_UINT_64);
        } else if (strcmp(fx[i].name, "nested_index") == 0) {
            const pq_leaf *l = leaf_named(m, "lst.list.element");
            cr_assert_not_null(l);
            cr_expect(l->nested);
            cr_expect_eq(l->depth, 3);
            const pq_leaf *id = leaf_named(m, "id");
            cr_expect_not(id->nested);
            cr_expect(leaf_named(m, "st.a")->nested);
            const pq_schema_element *lst = &m->schema[1 + 1];
            cr_expect_str_eq(lst->name, "lst");
            cr_expect_eq(lst->logical.kind, PQ_LT_LIST);
            cr_expect_eq(lst->converted_type, PQ_CT_LIST);
            cr_expect_eq(lst->num_children, 1);
        } else if (strcmp(fx[i].name, "v1_dict_snappy_index") == 0) {
            bool found = false;
            for (uint32_t k = 0; k < m->n_kv; k++)
                found = found || bytes_eq(m->kv[k].key, "ARROW:schema");
            cr_expect(found);
            const pq_column_chunk *c = &m->row_groups[0].columns[0];
            cr_expect_gt(c->n_encoding_stats, 0);
            cr_expect_eq(c->encoding_stats[0].page_type, PQ_PAGE_DICTIONARY);
        } else if (strcmp(fx[i].name, "empty") == 0) {
            cr_expect_eq(m->num_rows, 0);
            cr_expect_eq(m->n_leaves, 2);
        }
        pq_file_meta_free(m);
    }
    fixtures_free(fx, n);
}

Test(fixtures, every_truncated_footer_fails)
{
    fixture fx[32];
    const int n = fixtures_load(fx, 32);
    for (int i = 0; i < n; i++) {
        const uint32_t flen = (uint32_t)jint(fx[i].exp, "footer_len");
        const uint8_t *footer = fx[i].data + fx[i].len - 8 - flen;
        for (uint32_t cut = 0; cut < flen; cut++) {
            pq_file_meta *m = NULL;
            tc_error err = {0};
            const tc_status s = pq_file_meta_parse(footer, cut, 0, &m, &err);
            cr_assert_neq(s, TC_OK, "%s cut at %u parsed", fx[i].name, cut);
            cr_assert_null(m);
            cr_assert(err.msg[0] != '\0');
            cr_assert_eq(err.code, s);
            cr_assert_leq(err.offset, cut);
        }
    }
    fixtures_free(fx, n);
}

Test(fixtures, mutated_footers_never_crash)
{
    fixture fx[32];
    const int n = fixtures_load(fx, 32);
    uint64_t seed = 0x9e3779b97f4a7c15u;
    for (int i = 0; i < n; i++) {
        const uint32_t flen = (uint32_t)jint(fx[i].exp, "footer_len");
        uint8_t *copy = malloc(flen);
        for (int round = 0; round < 300; round++) {
            memcpy(copy, fx[i].data + fx[i].len - 8 - flen, flen);
            for (int k = 0; k < 1 + round % 4; k++) {
                seed = seed * 6364136223846793005u + 1442695040888963407u;
                copy[(seed >> 33) % flen] ^= (uint8_t)(1u << ((seed >> 20) & 7));
            }
            pq_file_meta *m = NULL;
            tc_error err = {0};
            if (pq_file_meta_parse(copy, flen, 0, &m, &err) == TC_OK)
                pq_file_meta_free(m);
            else
                cr_assert(err.msg[0]);
        }
        free(copy);
    }
    fixtures_free(fx, n);
}

/* ------------------------------------------------------------------ */
/* footer locator                                                      */
/* ------------------------------------------------------------------ */

Test(footer, locate)
{
    pq_footer_loc loc;
    tc_error err;
    const uint8_t ok[8] = {100, 0, 0, 0, 'P', 'A', 'R', '1'};
    cr_assert_eq(pq_footer_locate(1000, ok, &loc, &err), TC_OK);
    cr_expect_eq(loc.footer_len, 100);
    cr_expect_eq(loc.footer_offset, 892);
    cr_assert_eq(pq_footer_locate(112, ok, &loc, &err), TC_OK); /* smallest file */
    cr_expect_eq(loc.footer_offset, 4);
    cr_expect_eq(pq_footer_locate(111, ok, &loc, &err), TC_E_RANGE);
    cr_expect(strstr(err.msg, "past the start") != NULL, "%s", err.msg);
    cr_expect_eq(pq_footer_locate(11, ok, &loc, &err), TC_E_TRUNCATED);

    const uint8_t bad[8] = {100, 0, 0, 0, 'P', 'A', 'R', '2'};
    cr_expect_eq(pq_footer_locate(1000, bad, &loc, &err), TC_E_MAGIC);
    cr_expect_eq(err.offset, 996);
    const uint8_t enc[8] = {100, 0, 0, 0, 'P', 'A', 'R', 'E'};
    cr_expect_eq(pq_footer_locate(1000, enc, &loc, &err), TC_E_ENCRYPTED);
    const uint8_t zero[8] = {0, 0, 0, 0, 'P', 'A', 'R', '1'};
    cr_expect_eq(pq_footer_locate(1000, zero, &loc, &err), TC_E_RANGE);
    const uint8_t huge[8] = {0xff, 0xff, 0xff, 0xff, 'P', 'A', 'R', '1'};
    cr_expect_eq(pq_footer_locate(UINT64_MAX, huge, &loc, &err), TC_E_LIMIT);
    const uint8_t past[8] = {0x00, 0x00, 0x00, 0x01, 'P', 'A', 'R', '1'}; /* 16 MiB */
    cr_expect_eq(pq_footer_locate(1u << 20, past, &loc, &err), TC_E_RANGE);
}

Test(footer, from_tail_errors)
{
    pq_file_meta *m;
    uint64_t need = 0;
    tc_error err;
    const uint8_t t[8] = {4, 0, 0, 0, 'P', 'A', 'R', '1'};
    cr_expect_eq(pq_file_meta_from_tail(t, 4, 100, &m, &need, &err), TC_E_NEED_MORE);
    cr_expect_eq(need, 8);
    cr_expect_eq(pq_file_meta_from_tail(t, 8, 4, &m, &need, &err), TC_E_INVALID);
    cr_expect_eq(pq_file_meta_from_tail(t, 8, 100, &m, &need, &err), TC_E_NEED_MORE);
    cr_expect_eq(need, 12);
    /* a 4-byte "footer" of garbage */
    const uint8_t g[12] = {0x15, 0x02, 0x19, 0x00, 4, 0, 0, 0, 'P', 'A', 'R', '1'};
    cr_expect_neq(pq_file_meta_from_tail(g, 12, 100, &m, &need, &err), TC_OK);
    cr_expect_null(m);
}

/* ------------------------------------------------------------------ */
/* crafted FileMetaData                                                */
/* ------------------------------------------------------------------ */

typedef struct {
    uint8_t b[8192];
    size_t n;
    int16_t last[256];
    int depth;
} tw;

static void w_byte(tw *w, uint8_t v)
{
    cr_assert(w->n < sizeof w->b);
    w->b[w->n++] = v;
}

static void w_varint(tw *w, uint64_t v)
{
    uint8_t x[10];
    const size_t n = t_uleb(x, v);
    for (size_t i = 0; i < n; i++)
        w_byte(w, x[i]);
}

static void w_field(tw *w, int16_t id, uint8_t type)
{
    const int delta = id - w->last[w->depth];
    if (delta > 0 && delta <= 15) {
        w_byte(w, (uint8_t)(delta << 4 | type));
    } else {
        w_byte(w, type);
        w_varint(w, tc_zigzag_encode(id));
    }
    w->last[w->depth] = id;
}

static void w_i32(tw *w, int16_t id, int32_t v)
{
    w_field(w, id, TC_I32);
    w_varint(w, tc_zigzag_encode(v));
}

static void w_i64(tw *w, int16_t id, int64_t v)
{
    w_field(w, id, TC_I64);
    w_varint(w, tc_zigzag_encode(v));
}

static void w_str(tw *w, int16_t id, const char *s)
{
    w_field(w, id, TC_BINARY);
    w_varint(w, strlen(s));
    for (const char *p = s; *p; p++)
        w_byte(w, (uint8_t)*p);
}

static void w_list(tw *w, int16_t id, uint8_t et, uint32_t n)
{
    w_field(w, id, TC_LIST);
    if (n < 15) {
        w_byte(w, (uint8_t)(n << 4 | et));
    } else {
        w_byte(w, 0xf0 | et);
        w_varint(w, n);
    }
}

/* Begin a struct that is a field (id > 0) or a list element (id 0). */
static void w_begin(tw *w, int16_t id)
{
    if (id)
        w_field(w, id, TC_STRUCT);
    w->depth++;
    w->last[w->depth] = 0;
}

static void w_end(tw *w)
{
    w_byte(w, 0);
    w->depth--;
}

typedef struct {
    int columns;          /* column chunks in the row group */
    int root_children;
    int64_t num_rows;
    int64_t rg_rows;
    int col_type_b;       /* physical type written for column b */
    bool omit_num_rows;
    bool omit_meta_data;
    int64_t data_page_offset;
    int deep_unknown;     /* nested unknown structs in field 20 */
} fm_opts;

static fm_opts defaults(void)
{
    return (fm_opts){.columns = 2, .root_children = 2, .num_rows = 10, .rg_rows = 10,
                     .col_type_b = PQ_BYTE_ARRAY, .data_page_offset = 4};
}

static void w_chunk(tw *w, const char *name, int type, const fm_opts *o, bool with_meta)
{
    w_begin(w, 0);
    w_i64(w, 2, 0);
    if (with_meta) {
        w_begin(w, 3);
        w_i32(w, 1, type);
        w_list(w, 2, TC_I32, 2);
        w_varint(w, 0);
        w_varint(w, 12); /* zigzag 6 */
        w_list(w, 3, TC_BINARY, 1);
        w_varint(w, strlen(name));
        for (const char *p = name; *p; p++)
            w_byte(w, (uint8_t)*p);
        w_i32(w, 4, 0);
        w_i64(w, 5, 10);
        w_i64(w, 6, 50);
        w_i64(w, 7, 50);
        w_i64(w, 9, o->data_page_offset);
        w_end(w);
    }
    w_end(w);
}

static void build(tw *w, const fm_opts *o)
{
    memset(w, 0, sizeof *w);
    w_i32(w, 1, 1);
    w_list(w, 2, TC_STRUCT, 3);
    w_begin(w, 0);
    w_str(w, 4, "schema");
    w_i32(w, 5, o->root_children);
    w_end(w);
    w_begin(w, 0);
    w_i32(w, 1, PQ_INT32);
    w_i32(w, 3, PQ_OPTIONAL);
    w_str(w, 4, "a");
    w_end(w);
    w_begin(w, 0);
    w_i32(w, 1, PQ_BYTE_ARRAY);
    w_i32(w, 3, PQ_REQUIRED);
    w_str(w, 4, "b");
    w_i32(w, 6, PQ_CT_UTF8);
    w_begin(w, 10);
    w_begin(w, 1);
    w_end(w);
    w_end(w);
    w_end(w);
    if (!o->omit_num_rows)
        w_i64(w, 3, o->num_rows);
    w_list(w, 4, TC_STRUCT, 1);
    w_begin(w, 0);
    w_list(w, 1, TC_STRUCT, (uint32_t)o->columns);
    for (int c = 0; c < o->columns; c++)
        w_chunk(w, c == 0 ? "a" : "b", c == 0 ? PQ_INT32 : o->col_type_b, o,
                !(o->omit_meta_data && c == 1));
    w_i64(w, 2, 100);
    w_i64(w, 3, o->rg_rows);
    w_end(w);
    w_str(w, 6, "sievefs test");
    if (o->deep_unknown) {
        for (int i = 0; i < o->deep_unknown; i++)
            w_begin(w, i == 0 ? 20 : 1);
        for (int i = 0; i < o->deep_unknown; i++)
            w_end(w);
    }
    w_byte(w, 0);
}

static tc_status parse_tw(const tw *w, tc_error *err, uint64_t data_end)
{
    pq_file_meta *m = NULL;
    const tc_status s = pq_file_meta_parse(w->b, w->n, data_end, &m, err);
    if (s == TC_OK) {
        cr_assert_not_null(m);
        pq_file_meta_free(m);
    } else {
        cr_assert_null(m);
        cr_assert_eq(err->code, s);
    }
    return s;
}

/* parse_tw of the FileMetaData that o describes. */
static tc_status parse_crafted(const fm_opts *o, tc_error *err, uint64_t data_end)
{
    tw w;
    build(&w, o);
    return parse_tw(&w, err, data_end);
}

Test(crafted, valid_minimal)
{
    tw w;
    fm_opts o = defaults();
    build(&w, &o);
    pq_file_meta *m;
    tc_error err;
    cr_assert_eq(pq_file_meta_parse(w.b, w.n, 0, &m, &err), TC_OK, "%s", err.msg);
    cr_expect_eq(m->n_leaves, 2);
    cr_expect_str_eq(m->leaves[0].path, "a");
    cr_expect_eq(m->leaves[0].max_def, 1);
    cr_expect_eq(m->leaves[1].max_def, 0);
    cr_expect_eq(m->leaves[1].logical.kind, PQ_LT_STRING);
    cr_expect_eq(m->row_groups[0].columns[1].encodings_mask, (1u << 0) | (1u << 6));
    cr_expect(bytes_eq(m->created_by, "sievefs test"));
    pq_file_meta_free(m);
    o.deep_unknown = 40; /* unknown fields are skipped */
    cr_expect_eq(parse_crafted(&o, &err, 0), TC_OK, "%s", err.msg);
    /* with the file's data area known */
    o.deep_unknown = 0;
    cr_expect_eq(parse_crafted(&o, &err, 1000), TC_OK, "%s", err.msg);
}

Test(crafted, column_count_mismatch)
{
    fm_opts o = defaults();
    o.columns = 1;
    tc_error err;
    cr_expect_eq(parse_crafted(&o, &err, 0), TC_E_MISMATCH);
    cr_expect(strstr(err.msg, "row_groups[0].columns") != NULL, "%s", err.msg);
    cr_expect(strstr(err.msg, "1 columns but the schema has 2 leaves") != NULL, "%s", err.msg);
    o.columns = 3;
    cr_expect_eq(parse_crafted(&o, &err, 0), TC_E_MISMATCH);
}

Test(crafted, type_mismatch_with_schema)
{
    fm_opts o = defaults();
    o.col_type_b = PQ_INT64;
    tc_error err;
    cr_expect_eq(parse_crafted(&o, &err, 0), TC_E_MISMATCH);
    cr_expect(strstr(err.msg, "row_groups[0].columns[1]") != NULL, "%s", err.msg);
    o.col_type_b = 9; /* not a physical type */
    cr_expect_eq(parse_crafted(&o, &err, 0), TC_E_RANGE);
    cr_expect(strstr(err.msg, "meta_data.type") != NULL, "%s", err.msg);
}

Test(crafted, missing_fields)
{
    fm_opts o = defaults();
    o.omit_num_rows = true;
    tc_error err;
    cr_expect_eq(parse_crafted(&o, &err, 0), TC_E_MISSING);
    cr_expect(strstr(err.msg, "num_rows") != NULL, "%s", err.msg);
    o = defaults();
    o.omit_meta_data = true;
    cr_expect_eq(parse_crafted(&o, &err, 0), TC_E_MISSING);
    cr_expect(strstr(err.msg, "meta_data") != NULL, "%s", err.msg);
}

Test(crafted, row_counts)
{
    fm_opts o = defaults();
    o.num_rows = 11;
    tc_error err;
    cr_expect_eq(parse_crafted(&o, &err, 0), TC_E_MISMATCH);
    o = defaults();
    o.num_rows = -1;
    cr_expect_eq(parse_crafted(&o, &err, 0), TC_E_RANGE);
}

Test(crafted, schema_tree)
{
    fm_opts o = defaults();
    o.root_children = 3;
    tc_error err;
    cr_expect_eq(parse_crafted(&o, &err, 0), TC_E_INVALID);
    cr_expect(strstr(err.msg, "more children") != NULL, "%s", err.msg);
    o.root_children = 1;
    cr_expect_eq(parse_crafted(&o, &err, 0), TC_E_INVALID);
    cr_expect(strstr(err.msg, "schema tree ends") != NULL, "%s", err.msg);
}

Test(crafted, deep_nesting)
{
    fm_opts o = defaults();
    o.deep_unknown = 100;
    tc_error err;
    cr_expect_eq(parse_crafted(&o, &err, 0), TC_E_DEPTH);
}

Test(crafted, data_area)
{
    fm_opts o = defaults();
    o.data_page_offset = 990; /* 990 + 50 > 1000 */
    tc_error err;
    cr_expect_eq(parse_crafted(&o, &err, 1000), TC_E_RANGE);
    cr_expect(strstr(err.msg, "outside the data area") != NULL, "%s", err.msg);
    o.data_page_offset = 2;
    cr_expect_eq(parse_crafted(&o, &err, 1000), TC_E_RANGE);
    o.data_page_offset = -5;
    cr_expect_eq(parse_crafted(&o, &err, 0), TC_E_RANGE);
}

Test(crafted, absurd_counts_and_lengths)
{
    tc_error err;
    tw w;
    /* schema list claiming 2^31-1 elements */
    memset(&w, 0, sizeof w);
    w_i32(&w, 1, 1);
    w_list(&w, 2, TC_STRUCT, INT32_MAX);
    for (int i = 0; i < 32; i++)
        w_byte(&w, 0);
    cr_expect_eq(parse_tw(&w, &err, 0), TC_E_COUNT);
    cr_expect(strstr(err.msg, "schema") != NULL, "%s", err.msg);

    /* more schema elements than the limit, with enough bytes to be plausible */
    memset(&w, 0, sizeof w);
    w_i32(&w, 1, 1);
    w_list(&w, 2, TC_STRUCT, PQ_MAX_SCHEMA_ELEMENTS + 1);
    size_t n = w.n;
    uint8_t *big = calloc(1, n + PQ_MAX_SCHEMA_ELEMENTS + 100);
    memcpy(big, w.b, n);
    pq_file_meta *m;
    cr_expect_eq(pq_file_meta_parse(big, n + PQ_MAX_SCHEMA_ELEMENTS + 100, 0, &m, &err),
                 TC_E_LIMIT);
    free(big);

    /* string length past the buffer */
    memset(&w, 0, sizeof w);
    w_i32(&w, 1, 1);
    w_list(&w, 2, TC_STRUCT, 1);
    w_begin(&w, 0);
    w_field(&w, 4, TC_BINARY);
    w_varint(&w, 1000);
    w_byte(&w, 'x');
    cr_expect_eq(parse_tw(&w, &err, 0), TC_E_LENGTH);
    cr_expect(strstr(err.msg, "schema[0].name") != NULL, "%s", err.msg);

    /* string over the 16 MiB limit */
    memset(&w, 0, sizeof w);
    w_str(&w, 6, "");
    w.n--;
    w_varint(&w, (16u << 20) + 1);
    cr_expect_eq(parse_tw(&w, &err, 0), TC_E_LENGTH);
    cr_expect(strstr(err.msg, "limit") != NULL, "%s", err.msg);

    /* bad varint: 11 bytes for num_rows */
    memset(&w, 0, sizeof w);
    w_i32(&w, 1, 1);
    w_field(&w, 3, TC_I64);
    for (int i = 0; i < 10; i++)
        w_byte(&w, 0x80);
    w_byte(&w, 0x00);
    cr_expect_eq(parse_tw(&w, &err, 0), TC_E_VARINT);
    cr_expect(strstr(err.msg, "num_rows") != NULL, "%s", err.msg);

    /* wrong wire type for version */
    memset(&w, 0, sizeof w);
    w_str(&w, 1, "one");
    cr_expect_eq(parse_tw(&w, &err, 0), TC_E_TYPE);
    cr_expect(strstr(err.msg, "version") != NULL, "%s", err.msg);

    /* empty buffer */
    cr_expect_eq(pq_file_meta_parse(NULL, 0, 0, &m, &err), TC_E_TRUNCATED);
}

/* ------------------------------------------------------------------ */
/* page headers, indexes, statistics                                   */
/* ------------------------------------------------------------------ */

Test(page_header, v2_defaults_and_checks)
{
    tw w;
    memset(&w, 0, sizeof w);
    w_i32(&w, 1, PQ_PAGE_DATA_V2);
    w_i32(&w, 2, 100);
    w_i32(&w, 3, 80);
    w_i32(&w, 4, -7);
    w_begin(&w, 8);
    w_i32(&w, 1, 10);
    w_i32(&w, 2, 2);
    w_i32(&w, 3, 10);
    w_i32(&w, 4, 0);
    w_i32(&w, 5, 4);
    w_i32(&w, 6, 0);
    w_begin(&w, 8);
    w_field(&w, 5, TC_BINARY);
    w_varint(&w, 1);
    w_byte(&w, 9);
    w_i64(&w, 3, 2);
    w_end(&w);
    w_end(&w);
    w_byte(&w, 0);
    pq_page_header h;
    size_t hl;
    tc_error err;
    cr_assert_eq(pq_page_header_parse(w.b, w.n + 5, &h, &hl, &err), TC_OK, "%s", err.msg);
    cr_expect_eq(hl, w.n);
    cr_expect(h.v2.is_compressed);
    cr_expect(h.has_crc);
    cr_expect_eq(h.crc, (uint32_t)-7);
    cr_expect_eq(h.crc_len, 1);
    cr_expect(h.v2.has_statistics);
    cr_expect(h.v2.statistics.has_max_value);
    cr_expect_eq(h.v2.statistics.max_value.len, 1);
    cr_expect_eq(h.v2.statistics.max_value.ptr, w.b + w.n - 7);
    /* the statistics points into the caller's buffer */
    cr_expect_eq(h.v2.statistics.null_count, 2);

    /* V2 without its header */
    memset(&w, 0, sizeof w);
    w_i32(&w, 1, PQ_PAGE_DATA_V2);
    w_i32(&w, 2, 100);
    w_i32(&w, 3, 80);
    w_byte(&w, 0);
    cr_expect_eq(pq_page_header_parse(w.b, w.n, &h, &hl, &err), TC_E_MISSING);
    /* unknown page type */
    memset(&w, 0, sizeof w);
    w_i32(&w, 1, 7);
    cr_expect_eq(pq_page_header_parse(w.b, w.n, &h, &hl, &err), TC_E_RANGE);
    /* negative size */
    memset(&w, 0, sizeof w);
    w_i32(&w, 1, PQ_PAGE_INDEX);
    w_i32(&w, 2, -1);
    cr_expect_eq(pq_page_header_parse(w.b, w.n, &h, &hl, &err), TC_E_RANGE);
    cr_expect(strstr(err.msg, "uncompressed_page_size") != NULL, "%s", err.msg);
    /* levels longer than the page */
    memset(&w, 0, sizeof w);
    w_i32(&w, 1, PQ_PAGE_DATA_V2);
    w_i32(&w, 2, 10);
    w_i32(&w, 3, 10);
    w_begin(&w, 8);
    w_i32(&w, 1, 10);
    w_i32(&w, 2, 0);
    w_i32(&w, 3, 10);
    w_i32(&w, 4, 0);
    w_i32(&w, 5, 8);
    w_i32(&w, 6, 8);
    w_end(&w);
    w_byte(&w, 0);
    cr_expect_eq(pq_page_header_parse(w.b, w.n, &h, &hl, &err), TC_E_RANGE);
}

Test(page_index, offset_index_checks)
{
    tw w;
    memset(&w, 0, sizeof w);
    w_list(&w, 1, TC_STRUCT, 2);
    w_begin(&w, 0);
    w_i64(&w, 1, 100);
    w_i32(&w, 2, 50);
    w_i64(&w, 3, 0);
    w_end(&w);
    w_begin(&w, 0);
    w_i64(&w, 1, 100); /* does not increase */
    w_i32(&w, 2, 50);
    w_i64(&w, 3, 10);
    w_end(&w);
    w_byte(&w, 0);
    pq_offset_index oi;
    tc_error err;
    cr_expect_eq(pq_offset_index_parse(w.b, w.n, &oi, &err), TC_E_INVALID);
    cr_expect(strstr(err.msg, "page_locations[1]") != NULL, "%s", err.msg);
    cr_expect_null(oi.pages);

    memset(&w, 0, sizeof w);
    w_list(&w, 1, TC_STRUCT, 1);
    w_begin(&w, 0);
    w_i64(&w, 1, 100);
    w_i32(&w, 2, 0); /* empty page */
    w_i64(&w, 3, 0);
    w_end(&w);
    w_byte(&w, 0);
    cr_expect_eq(pq_offset_index_parse(w.b, w.n, &oi, &err), TC_E_RANGE);

    memset(&w, 0, sizeof w);
    w_list(&w, 1, TC_STRUCT, 1);
    w_begin(&w, 0);
    w_i64(&w, 1, 100);
    w_i32(&w, 2, 10);
    w_i64(&w, 3, 0);
    w_end(&w);
    w_list(&w, 2, TC_I64, 2); /* 2 entries for 1 page */
    w_varint(&w, 2);
    w_varint(&w, 4);
    w_byte(&w, 0);
    cr_expect_eq(pq_offset_index_parse(w.b, w.n, &oi, &err), TC_E_MISMATCH);
}

Test(page_index, column_index_lengths)
{
    tw w;
    memset(&w, 0, sizeof w);
    w_list(&w, 1, TC_BOOL_FALSE, 2);
    w_byte(&w, 1);
    w_byte(&w, 2);
    w_list(&w, 2, TC_BINARY, 2);
    w_varint(&w, 0);
    w_varint(&w, 1);
    w_byte(&w, 'a');
    w_list(&w, 3, TC_BINARY, 1);
    w_varint(&w, 0);
    w_i32(&w, 4, 1);
    w_byte(&w, 0);
    pq_column_index ci;
    tc_error err;
    cr_expect_eq(pq_column_index_parse(w.b, w.n, &ci, &err), TC_E_MISMATCH);
    cr_expect_null(ci.owned);
}

Test(statistics, standalone)
{
    tw w;
    memset(&w, 0, sizeof w);
    w_str(&w, 1, "zz");
    w_str(&w, 2, "aa");
    w_i64(&w, 3, 5);
    w_i64(&w, 4, 7);
    w_field(&w, 7, TC_BOOL_TRUE);
    w_field(&w, 8, TC_BOOL_FALSE);
    w_i64(&w, 9, 1);
    w_byte(&w, 0);
    pq_statistics s;
    size_t used;
    tc_error err;
    cr_assert_eq(pq_statistics_parse(w.b, w.n, &s, &used, &err), TC_OK, "%s", err.msg);
    cr_expect_eq(used, w.n);
    cr_expect(bytes_eq(s.max, "zz"));
    cr_expect(bytes_eq(s.min, "aa"));
    cr_expect_eq(s.null_count, 5);
    cr_expect_eq(s.distinct_count, 7);
    cr_expect(s.has_is_max_value_exact && s.is_max_value_exact);
    cr_expect(s.has_is_min_value_exact && !s.is_min_value_exact);
    cr_expect_eq(s.nan_count, 1);
    cr_expect_not(s.has_max_value);
}

Test(crc, known_vector_and_rewrite)
{
    cr_expect_eq(pq_crc32(0, "123456789", 9), 0xCBF43926u);
    cr_expect_eq(pq_crc32(pq_crc32(0, "1234", 4), "56789", 5), 0xCBF43926u);
    cr_expect(pq_crc_fits(5, 0xFFFFFFFFu));
    cr_expect(pq_crc_fits(5, 0x80000000u));
    cr_expect(pq_crc_fits(1, 0));
    cr_expect(pq_crc_fits(1, (uint32_t)-64)); /* zigzag 127 */
    cr_expect_not(pq_crc_fits(1, 64));        /* zigzag 128 */
    cr_expect(pq_crc_fits(4, (1u << 27) - 1));
    cr_expect_not(pq_crc_fits(4, 1u << 27));
    cr_expect_not(pq_crc_fits(0, 0));

    /* a header with a 2-byte crc varint */
    tw w;
    memset(&w, 0, sizeof w);
    w_i32(&w, 1, PQ_PAGE_INDEX);
    w_i32(&w, 2, 0);
    w_i32(&w, 3, 0);
    w_i32(&w, 4, 100);
    w_byte(&w, 0);
    pq_page_header h, h2;
    size_t hl, hl2;
    tc_error err;
    cr_assert_eq(pq_page_header_parse(w.b, w.n, &h, &hl, &err), TC_OK, "%s", err.msg);
    cr_expect_eq(h.crc_len, 2);
    cr_expect(pq_crc_rewrite(w.b, hl, &h, 1)); /* small value, padded */
    cr_assert_eq(pq_page_header_parse(w.b, w.n, &h2, &hl2, &err), TC_OK, "%s", err.msg);
    cr_expect_eq(hl2, hl);
    cr_expect_eq(h2.crc, 1);
    cr_expect_eq(w.b[h.crc_offset], 0x82);
    cr_expect_eq(w.b[h.crc_offset + 1], 0x00);
    const uint8_t before = w.b[h.crc_offset];
    cr_expect_not(pq_crc_rewrite(w.b, hl, &h, 0x12345678u)); /* does not fit in 2 bytes */
    cr_expect_eq(w.b[h.crc_offset], before);
    cr_expect_not(pq_crc_rewrite(w.b, h.crc_offset + 1, &h, 1)); /* header too short */
}
