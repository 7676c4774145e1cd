#include "delta_schema.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sv_grow.h"

int delta_mapping_mode_parse(const char *value)
{
    if (!value || strcmp(value, "none") == 0)
        return DELTA_MAPPING_NONE;
    if (strcmp(value, "name") == 0)
        return DELTA_MAPPING_NAME;
    if (strcmp(value, "id") == 0)
        return DELTA_MAPPING_ID;
    return -1;
}

void delta_schema_free(delta_schema *s)
{
    for (size_t i = 0; i < s->n_fields; i++) {
        free(s->fields[i].logical);
        free(s->fields[i].physical);
        free(s->fields[i].type);
    }
    free(s->fields);
    memset(s, 0, sizeof *s);
}

typedef struct {
    delta_schema *s;
    size_t cap;
    sv_error *err;
} walk_ctx;

static char *join(const char *parent, const char *name)
{
    size_t pl = parent ? strlen(parent) : 0, nl = strlen(name);
    char *p = malloc(pl + nl + 2);
    if (!p)
        return NULL;
    if (parent) {
        memcpy(p, parent, pl);
        p[pl++] = '.';
    }
    memcpy(p + pl, name, nl + 1);
    return p;
}

static int walk_struct(walk_ctx *c, json_t *st, uint32_t parent, uint32_t depth);

static int add_field(walk_ctx *c, json_t *f, uint32_t parent, uint32_t depth)
{
    delta_schema *s = c->s;
    const char *name = json_string_value(json_object_get(f, "name"));
    json_t *type = json_object_get(f, "type");
    json_t *nullable = json_object_get(f, "nullable");
    json_t *meta = json_object_get(f, "metadata");
    if (!json_is_object(f) || !name || !type || (nullable && !json_is_boolean(nullable)) ||
        (meta && !json_is_object(meta)))
        return sv_fail(c->err, DELTA_SCHEMA_E_INVALID, 0, "schema: field %zu: expected name, type, nullable",
                       s->n_fields);
    if (s->n_fields >= DELTA_SCHEMA_MAX_FIELDS)
        return sv_fail(c->err, DELTA_SCHEMA_E_LIMIT, 0, "schema: more than %u fields", DELTA_SCHEMA_MAX_FIELDS);
    if (!sv_grow((void **)&s->fields, &c->cap, s->n_fields + 1, sizeof *s->fields, 16, DELTA_SCHEMA_MAX_FIELDS))
        return sv_fail(c->err, DELTA_SCHEMA_E_NOMEM, 0, "out of memory");
    const delta_field *up = parent == UINT32_MAX ? NULL : &s->fields[parent];
    const char *physical = name;
    int64_t id = -1;
    json_t *pn = meta ? json_object_get(meta, "delta.columnMapping.physicalName") : NULL;
    json_t *pid = meta ? json_object_get(meta, "delta.columnMapping.id") : NULL;
    if (s->mode != DELTA_MAPPING_NONE) {
        if (!json_is_string(pn) || json_string_length(pn) == 0)
            return sv_fail(c->err, DELTA_SCHEMA_E_INVALID, 0,
                           "schema: field \"%s\" has no delta.columnMapping.physicalName", name);
        physical = json_string_value(pn);
        if (!json_is_integer(pid) && s->mode == DELTA_MAPPING_ID)
            return sv_fail(c->err, DELTA_SCHEMA_E_INVALID, 0, "schema: field \"%s\" has no delta.columnMapping.id",
                           name);
        id = json_is_integer(pid) ? (int64_t)json_integer_value(pid) : -1;
    }
    const char *type_name = json_is_string(type) ? json_string_value(type)
                                                 : json_string_value(json_object_get(type, "type"));
    if (!type_name)
        return sv_fail(c->err, DELTA_SCHEMA_E_INVALID, 0, "schema: field \"%s\": no type", name);
    delta_field *d = &s->fields[s->n_fields];
    memset(d, 0, sizeof *d);
    d->logical = join(up ? up->logical : NULL, name);
    d->physical = join(up ? up->physical : NULL, physical);
    d->type = strdup(type_name);
    d->field_id = id;
    d->depth = depth;
    d->parent = parent;
    d->nullable = !nullable || json_is_true(nullable);
    s->n_fields++;
    if (!d->logical || !d->physical || !d->type)
        return sv_fail(c->err, DELTA_SCHEMA_E_NOMEM, 0, "out of memory");
    if (json_is_object(type) && strcmp(type_name, "struct") == 0)
        return walk_struct(c, type, (uint32_t)(s->n_fields - 1), depth + 1);
    return 0;
}

static int walk_struct(walk_ctx *c, json_t *st, uint32_t parent, uint32_t depth)
{
    if (depth > DELTA_SCHEMA_MAX_DEPTH)
        return sv_fail(c->err, DELTA_SCHEMA_E_LIMIT, 0, "schema: nested deeper than %u", DELTA_SCHEMA_MAX_DEPTH);
    json_t *fields = json_object_get(st, "fields");
    if (!json_is_array(fields))
        return sv_fail(c->err, DELTA_SCHEMA_E_INVALID, 0, "schema: a struct without \"fields\"");
    size_t i;
    json_t *f;
    json_array_foreach(fields, i, f)
    {
        int rc = add_field(c, f, parent, depth);
        if (rc)
            return rc;
    }
    return 0;
}

int delta_schema_parse(const char *json, size_t len, delta_mapping_mode mode, char *const *partition_columns,
                       size_t n_partition, delta_schema *out, sv_error *err)
{
    memset(out, 0, sizeof *out);
    out->mode = mode;
    if (len > DELTA_SCHEMA_MAX_BYTES)
        return sv_fail(err, DELTA_SCHEMA_E_LIMIT, 0, "schema: %zu bytes (limit %u)", len, DELTA_SCHEMA_MAX_BYTES);
    json_error_t jerr;
    json_t *root = json_loadb(json, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!root)
        return sv_fail(err, DELTA_SCHEMA_E_INVALID, (size_t)jerr.position, "schema: %s", jerr.text);
    walk_ctx c = {out, 0, err};
    int rc = json_is_object(root) && json_is_string(json_object_get(root, "type")) &&
                     strcmp(json_string_value(json_object_get(root, "type")), "struct") == 0
                 ? walk_struct(&c, root, UINT32_MAX, 1)
                 : sv_fail(err, DELTA_SCHEMA_E_INVALID, 0, "schema: not a struct type");
    json_decref(root);
    for (size_t p = 0; rc == 0 && p < n_partition; p++) {
        delta_field *f = NULL;
        for (size_t i = 0; i < out->n_fields && !f; i++)
            if (out->fields[i].depth == 1 && strcmp(out->fields[i].logical, partition_columns[p]) == 0)
                f = &out->fields[i];
        if (!f)
            rc = sv_fail(err, DELTA_SCHEMA_E_INVALID, 0, "schema: partition column \"%s\" is not a top-level field",
                         partition_columns[p]);
        else if (!strcmp(f->type, "struct") || !strcmp(f->type, "array") || !strcmp(f->type, "map"))
            rc = sv_fail(err, DELTA_SCHEMA_E_INVALID, 0, "schema: partition column \"%s\" is a %s",
                         partition_columns[p], f->type);
        else
            f->partition = true;
    }
    if (rc)
        delta_schema_free(out);
    return rc;
}

const delta_field *delta_schema_find(const delta_schema *s, const char *logical)
{
    const delta_field *folded = NULL;
    size_t n_folded = 0;
    for (size_t i = 0; i < s->n_fields; i++) {
        if (strcmp(s->fields[i].logical, logical) == 0)
            return &s->fields[i];
        if (strcasecmp(s->fields[i].logical, logical) == 0) {
            folded = &s->fields[i];
            n_folded++;
        }
    }
    return n_folded == 1 ? folded : NULL;
}
