/* `sievefs inspect --json`: one document, written row group by row group
 * and column by column (jansson builds each piece), so that memory stays
 * that of one column chunk's pages. Schema: docs/inspect.md. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "inspect_internal.h"

/* A footer string as it is, or made valid UTF-8 (jansson takes only that). */
static json_t *jstr(const char *s, size_t len)
{
    if (!s)
        return json_null();
    json_t *v = json_stringn(s, len);
    if (v)
        return v;
    char *c = ins_clean_str(s, len, false);
    if (!c)
        return json_null();
    v = json_string(c);
    free(c);
    return v ? v : json_null();
}

static json_t *jint_or_null(int64_t v, bool known)
{
    return known ? json_integer((json_int_t)v) : json_null();
}

static json_t *jenc_or_null(int32_t e)
{
    return e >= 0 ? json_string(pq_encoding_name(e)) : json_null();
}

/* Write an object's members without its closing brace, so that more
 * members can follow ("{"a":1" for {"a":1}). */
static bool put_open_object(FILE *f, json_t *obj)
{
    char *s = json_dumps(obj, JSON_COMPACT);
    json_decref(obj);
    if (!s)
        return false;
    size_t n = strlen(s);
    fwrite(s, 1, n - 1, f);
    free(s);
    return true;
}

static bool put_value(FILE *f, json_t *v)
{
    int rc = v ? json_dumpf(v, f, JSON_COMPACT | JSON_ENCODE_ANY) : -1;
    json_decref(v);
    return rc == 0;
}

/* Set members; jansson's _new variants take over the reference. */
#define JSET(obj, key, val) json_object_set_new((obj), (key), (val))

static json_t *json_page(const pq_page *p)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    JSET(o, "offset", json_integer((json_int_t)p->offset));
    JSET(o, "header_length", jint_or_null(p->header_len, p->has_header));
    JSET(o, "compressed_size", jint_or_null(p->compressed_size, p->compressed_size >= 0));
    JSET(o, "uncompressed_size", jint_or_null(p->uncompressed_size, p->uncompressed_size >= 0));
    JSET(o, "first_row", jint_or_null(p->first_row, p->first_row >= 0));
    JSET(o, "num_rows", jint_or_null(p->num_rows, p->num_rows >= 0));
    JSET(o, "num_values", jint_or_null(p->num_values, p->num_values >= 0));
    JSET(o, "type", p->page_type >= 0 ? json_string(pq_page_type_name(p->page_type)) : json_null());
    JSET(o, "encoding", jenc_or_null(p->encoding));
    JSET(o, "def_encoding", jenc_or_null(p->def_encoding));
    JSET(o, "rep_encoding", jenc_or_null(p->rep_encoding));
    JSET(o, "def_levels_length", jint_or_null(p->def_levels_len, p->def_levels_len >= 0));
    JSET(o, "rep_levels_length", jint_or_null(p->rep_levels_len, p->rep_levels_len >= 0));
    JSET(o, "crc", jint_or_null(p->crc, p->has_crc));
    JSET(o, "eligible", json_boolean(pq_elig_is_eligible(p->elig)));
    JSET(o, "reason", json_string(pq_elig_reason(p->elig)));
    return o;
}

static json_t *json_encodings(uint32_t mask)
{
    json_t *a = json_array();
    for (int e = 0; a && e < 32; e++)
        if (mask & (1u << e))
            json_array_append_new(a, json_string(pq_encoding_name(e)));
    return a;
}

static json_t *json_column(const inspector *in, const col_ref *r, const pq_page_map *pm,
                           bool have_pages)
{
    const pq_column_chunk *cc = &in->m->row_groups[r->g].columns[r->c];
    json_t *o = json_object();
    if (!o)
        return NULL;
    uint64_t off = 0, len = 0;
    bool range = pq_column_chunk_range(cc, &off, &len);
    JSET(o, "path", jstr(r->path, strlen(r->path)));
    JSET(o, "offset", jint_or_null((int64_t)off, range));
    JSET(o, "length", jint_or_null((int64_t)len, range));
    JSET(o, "codec", json_string(pq_codec_name(cc->codec)));
    JSET(o, "encodings", json_encodings(cc->encodings_mask));
    JSET(o, "num_values", json_integer(cc->num_values));
    JSET(o, "total_compressed_size", json_integer(cc->total_compressed_size));
    JSET(o, "total_uncompressed_size", json_integer(cc->total_uncompressed_size));
    JSET(o, "has_offset_index", json_boolean(cc->has_offset_index));
    JSET(o, "has_column_index", json_boolean(cc->has_column_index));
    JSET(o, "dictionary_page_offset",
         jint_or_null(cc->dictionary_page_offset, cc->has_dictionary_page_offset));
    JSET(o, "data_page_offset", json_integer(cc->data_page_offset));
    if (in->o->pages) {
        if (!have_pages) {
            JSET(o, "pages", json_null());
        } else {
            json_t *a = json_array();
            for (uint32_t i = 0; a && i < pm->n_pages; i++)
                json_array_append_new(a, json_page(&pm->pages[i]));
            JSET(o, "pages", a ? a : json_null());
        }
    }
    return o;
}

static bool json_begin(inspector *in)
{
    const pq_file_meta *m = in->m;
    json_t *o = json_object();
    if (!o)
        return false;
    JSET(o, "file", jstr(in->o->file, strlen(in->o->file)));
    JSET(o, "size", json_integer((json_int_t)in->src->size));
    JSET(o, "created_by", jstr((const char *)m->created_by.ptr, m->created_by.len));
    JSET(o, "num_rows", json_integer(m->num_rows));
    json_t *schema = json_array();
    for (uint32_t i = 0; schema && i < m->n_leaves; i++) {
        const pq_leaf *l = &m->leaves[i];
        json_t *e = json_object();
        if (!e)
            break;
        JSET(e, "path", jstr(l->path, strlen(l->path)));
        JSET(e, "physical_type", json_string(pq_physical_type_name(l->type)));
        JSET(e, "logical_type", json_string(pq_logical_kind_name(l->logical.kind)));
        JSET(e, "converted_type", json_string(ins_converted_name(l->converted_type)));
        JSET(e, "max_def", json_integer(l->max_def));
        JSET(e, "max_rep", json_integer(l->max_rep));
        JSET(e, "type_length",
             jint_or_null(l->type_length,
                          l->type == PQ_FIXED_LEN_BYTE_ARRAY && l->type_length >= 0));
        json_array_append_new(schema, e);
    }
    JSET(o, "schema", schema ? schema : json_null());
    if (!put_open_object(in->out, o))
        return false;
    fputs(",\"row_groups\":[", in->out);
    in->first_rg = true;
    return true;
}

static bool json_rg_begin(inspector *in, uint32_t g)
{
    const pq_row_group *rg = &in->m->row_groups[g];
    json_t *o = json_object();
    if (!o)
        return false;
    JSET(o, "index", json_integer(g));
    JSET(o, "num_rows", json_integer(rg->num_rows));
    JSET(o, "total_byte_size", json_integer(rg->total_byte_size));
    if (!in->first_rg)
        fputc(',', in->out);
    in->first_rg = false;
    if (!put_open_object(in->out, o))
        return false;
    fputs(",\"columns\":[", in->out);
    in->first_col = true;
    return true;
}

static bool json_put_column(inspector *in, const col_ref *r, const pq_page_map *pm, bool have)
{
    if (!in->first_col)
        fputc(',', in->out);
    in->first_col = false;
    return put_value(in->out, json_column(in, r, pm, have));
}

static void json_rg_end(inspector *in)
{
    fputs("]}", in->out);
}

static void json_end(inspector *in)
{
    fputs("]}\n", in->out);
}

const ins_output ins_json_output = {json_begin, json_rg_begin, json_put_column, json_rg_end,
                                    json_end};
