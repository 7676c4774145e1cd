#include "table_json.h"

#include <jansson.h>
#include <string.h>

#include "sv_json.h"

long long table_file_num_records(const delta_add *f)
{
    if (!f->stats)
        return -1;
    json_t *doc = json_loads(f->stats, 0, NULL);
    json_t *n = json_object_get(doc, "numRecords");
    long long v = json_is_integer(n) && json_integer_value(n) >= 0 ? (long long)json_integer_value(n) : -1;
    json_decref(doc);
    return v;
}

static json_t *strings(char *const *s, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++)
        json_array_append_new(a, json_string(s[i]));
    return a;
}

static const char *mapping_name(delta_mapping_mode m)
{
    return m == DELTA_MAPPING_NAME ? "name" : m == DELTA_MAPPING_ID ? "id" : "none";
}

static json_t *schema_json(const delta_schema *sc)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < sc->n_fields; i++) {
        const delta_field *f = &sc->fields[i];
        json_array_append_new(a, json_pack("{s:s, s:s, s:s, s:b, s:o, s:b}", "name", f->logical, "physical_name",
                                           f->physical, "type", f->type, "nullable", f->nullable, "field_id",
                                           f->field_id >= 0 ? json_integer(f->field_id) : json_null(), "partition",
                                           f->partition));
    }
    return a;
}

/* Partition values by logical name (the log keys them by physical name). */
static json_t *partition_json(const delta_schema *sc, const delta_add *f)
{
    json_t *o = json_object();
    for (size_t i = 0; o && i < sc->n_fields; i++) {
        const delta_field *fd = &sc->fields[i];
        if (!fd->partition)
            continue;
        bool found;
        const char *v = delta_file_partition_value(f, fd->physical, &found);
        json_object_set_new(o, fd->logical, v ? json_string(v) : json_null());
    }
    return o;
}

char *table_snapshot_json(const delta_snapshot *s, const char *table_path, size_t *len)
{
    json_t *files = json_array();
    for (size_t i = 0; files && i < s->n_files; i++) {
        const delta_add *f = &s->files[i];
        const long long nr = table_file_num_records(f);
        json_array_append_new(files, json_pack("{s:s, s:I, s:o, s:o, s:o}", "path", f->path, "size",
                                               (json_int_t)f->size, "partition_values", partition_json(&s->schema, f),
                                               "num_records", nr >= 0 ? json_integer(nr) : json_null(),
                                               "deletion_vector_cardinality",
                                               f->has_dv ? json_integer(f->dv.cardinality) : json_null()));
    }
    const delta_protocol *p = &s->protocol;
    json_t *protocol = json_pack("{s:i, s:i, s:o, s:o}", "min_reader_version", p->min_reader_version,
                                 "min_writer_version", p->min_writer_version, "reader_features",
                                 p->has_reader_features ? strings(p->reader_features, p->n_reader_features)
                                                        : json_null(),
                                 "writer_features",
                                 p->has_writer_features ? strings(p->writer_features, p->n_writer_features)
                                                        : json_null());
    json_t *views = json_pack("{s:b, s:o}", "readable", s->unsupported[0] == '\0', "reason",
                              s->unsupported[0] ? json_string(s->unsupported) : json_null());
    json_t *doc = json_object();
    if (doc) {
        json_object_set_new(doc, "table", json_string(table_path));
        json_object_set_new(doc, "version", json_integer(s->version));
        json_object_set_new(doc, "timestamp_ms", s->timestamp_ms >= 0 ? json_integer(s->timestamp_ms) : json_null());
        json_object_set_new(doc, "protocol", protocol ? protocol : json_null());
        json_object_set_new(doc, "views", views ? views : json_null());
        json_object_set_new(doc, "column_mapping", json_string(mapping_name(s->schema.mode)));
        json_object_set_new(doc, "schema", schema_json(&s->schema));
        json_object_set_new(doc, "partition_columns",
                            strings(s->metadata.partition_columns, s->metadata.n_partition_columns));
        json_object_set_new(doc, "num_files", json_integer((json_int_t)s->n_files));
        json_object_set_new(doc, "total_bytes", json_integer((json_int_t)s->total_bytes));
        json_object_set_new(doc, "files", files ? files : json_array());
    } else {
        json_decref(files);
        json_decref(protocol);
        json_decref(views);
    }
    return sv_json_text(doc, JSON_INDENT(1), len);
}
