#include "log_actions.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "sv_error.h"
#include "sv_name.h"

static const char *const action_names[] = {
    [DELTA_ACTION_ADD] = "add",
    [DELTA_ACTION_REMOVE] = "remove",
    [DELTA_ACTION_METADATA] = "metaData",
    [DELTA_ACTION_PROTOCOL] = "protocol",
    [DELTA_ACTION_COMMIT_INFO] = "commitInfo",
    [DELTA_ACTION_TXN] = "txn",
    [DELTA_ACTION_DOMAIN_METADATA] = "domainMetadata",
    [DELTA_ACTION_CDC] = "cdc",
    [DELTA_ACTION_SIDECAR] = "sidecar",
    [DELTA_ACTION_CHECKPOINT_METADATA] = "checkpointMetadata",
};

const char *delta_action_name(delta_action_kind kind)
{
    return SV_NAME(action_names, kind, "");
}

/* ---- freeing ---- */

static void free_kvs(delta_kv *kv, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(kv[i].key);
        free(kv[i].value);
    }
    free(kv);
}

static void free_strings(char **s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(s[i]);
    free(s);
}

void delta_add_free(delta_add *a)
{
    free(a->path);
    free_kvs(a->partition_values, a->n_partition_values);
    free(a->stats);
    free(a->dv.path_or_inline);
    memset(a, 0, sizeof *a);
}

void delta_remove_free(delta_remove *r)
{
    free(r->path);
    free_kvs(r->partition_values, r->n_partition_values);
    free(r->dv.path_or_inline);
    memset(r, 0, sizeof *r);
}

void delta_metadata_free(delta_metadata *m)
{
    free(m->id);
    free(m->name);
    free(m->description);
    free(m->provider);
    free(m->schema_string);
    free_strings(m->partition_columns, m->n_partition_columns);
    free_kvs(m->configuration, m->n_configuration);
    memset(m, 0, sizeof *m);
}

void delta_protocol_free(delta_protocol *p)
{
    free_strings(p->reader_features, p->n_reader_features);
    free_strings(p->writer_features, p->n_writer_features);
    memset(p, 0, sizeof *p);
}

void delta_txn_free(delta_txn *t)
{
    free(t->app_id);
    memset(t, 0, sizeof *t);
}

void delta_domain_metadata_free(delta_domain_metadata *d)
{
    free(d->domain);
    free(d->configuration);
    memset(d, 0, sizeof *d);
}

void delta_cdc_free(delta_cdc *c)
{
    free(c->path);
    free_kvs(c->partition_values, c->n_partition_values);
    memset(c, 0, sizeof *c);
}

void delta_sidecar_free(delta_sidecar *s)
{
    free(s->path);
    memset(s, 0, sizeof *s);
}

void delta_action_free(delta_action *a)
{
    if (!a)
        return;
    switch (a->kind) {
    case DELTA_ACTION_ADD:
        delta_add_free(&a->add);
        break;
    case DELTA_ACTION_REMOVE:
        delta_remove_free(&a->remove);
        break;
    case DELTA_ACTION_METADATA:
        delta_metadata_free(&a->metadata);
        break;
    case DELTA_ACTION_PROTOCOL:
        delta_protocol_free(&a->protocol);
        break;
    case DELTA_ACTION_TXN:
        delta_txn_free(&a->txn);
        break;
    case DELTA_ACTION_DOMAIN_METADATA:
        delta_domain_metadata_free(&a->domain_metadata);
        break;
    case DELTA_ACTION_CDC:
        delta_cdc_free(&a->cdc);
        break;
    case DELTA_ACTION_SIDECAR:
        delta_sidecar_free(&a->sidecar);
        break;
    default: /* commitInfo, checkpointMetadata, BLANK, OTHER own nothing */
        break;
    }
    memset(a, 0, sizeof *a);
}

/* ---- fields ---- */

/* Where a field error is: the action's key and, inside a nested object, its
 * field ("\"deletionVector\"."). */
typedef struct {
    const char *action;
    const char *scope;
    sv_error *err;
} ctx;

static const char *type_name(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return "an object";
    case JSON_ARRAY:
        return "an array";
    case JSON_STRING:
        return "a string";
    case JSON_INTEGER:
        return "an integer";
    case JSON_REAL:
        return "a number with a fraction or exponent";
    case JSON_TRUE:
    case JSON_FALSE:
        return "a boolean";
    default:
        return "null";
    }
}

/* v is NULL when the field is missing. */
static int type_error(const ctx *c, const char *field, const char *expected, const json_t *v)
{
    if (!v)
        return sv_fail(c->err, DELTA_ACTION_E_INVALID, 0, "%s: %s\"%s\": expected %s, but the field is missing",
                       c->action, c->scope, field, expected);
    return sv_fail(c->err, DELTA_ACTION_E_INVALID, 0, "%s: %s\"%s\": expected %s, found %s", c->action, c->scope,
                   field, expected, type_name(v));
}

static int nomem(const ctx *c)
{
    return sv_fail(c->err, DELTA_ACTION_E_NOMEM, 0, "out of memory");
}

/* The field's value; NULL when absent or null. */
static json_t *field(const json_t *obj, const char *name)
{
    json_t *v = json_object_get(obj, name);
    return json_is_null(v) ? NULL : v;
}

static int copy_string(const ctx *c, const json_t *v, char **out)
{
    *out = strndup(json_string_value(v), json_string_length(v));
    return *out ? 0 : nomem(c);
}

/* A string field; *out stays NULL when absent and not required. */
static int get_string(const ctx *c, const json_t *obj, const char *name, bool required, char **out)
{
    json_t *v = field(obj, name);
    if (!v && !required)
        return 0;
    if (!json_is_string(v))
        return type_error(c, name, "a string", v);
    return copy_string(c, v, out);
}

/* An integer field in [min, max]; *out stays as is when absent and not required. */
static int get_int(const ctx *c, const json_t *obj, const char *name, bool required, int64_t min, int64_t max,
                   int64_t *out)
{
    json_t *v = field(obj, name);
    if (!v && !required)
        return 0;
    if (!json_is_integer(v))
        return type_error(c, name, "an integer", v);
    json_int_t i = json_integer_value(v);
    if (i < min || i > max)
        return sv_fail(c->err, DELTA_ACTION_E_INVALID, 0, "%s: %s\"%s\": %lld is out of range (%" PRId64
                       " to %" PRId64 ")", c->action, c->scope, name, (long long)i, min, max);
    *out = (int64_t)i;
    return 0;
}

static int get_int32(const ctx *c, const json_t *obj, const char *name, int32_t min, int32_t *out)
{
    int64_t v = 0;
    SV_TRY(get_int(c, obj, name, true, min, INT32_MAX, &v));
    *out = (int32_t)v;
    return 0;
}

static int get_bool(const ctx *c, const json_t *obj, const char *name, bool required, bool *out)
{
    json_t *v = field(obj, name);
    if (!v && !required)
        return 0;
    if (!json_is_boolean(v))
        return type_error(c, name, "a boolean", v);
    *out = json_is_true(v);
    return 0;
}

static int hex_value(char ch)
{
    if (ch >= '0' && ch <= '9')
        return ch - '0';
    if (ch >= 'a' && ch <= 'f')
        return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F')
        return ch - 'A' + 10;
    return -1;
}

int delta_path_decode(const char *s, size_t len, char **out, sv_error *err)
{
    char *p = malloc(len + 1);
    if (!p)
        return sv_fail(err, DELTA_ACTION_E_NOMEM, 0, "out of memory");
    size_t o = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] != '%') {
            p[o++] = s[i];
            continue;
        }
        int hi = i + 2 < len ? hex_value(s[i + 1]) : -1, lo = i + 2 < len ? hex_value(s[i + 2]) : -1;
        if (hi < 0 || lo < 0 || (hi == 0 && lo == 0)) {
            free(p);
            return sv_fail(err, DELTA_ACTION_E_INVALID, i,
                           "bad percent-escape at byte %zu of \"%.200s\" (%%XX with hex digits, not %%00)", i, s);
        }
        p[o++] = (char)(hi << 4 | lo);
        i += 2;
    }
    p[o] = '\0';
    *out = p;
    return 0;
}

/* A URI-encoded path field, decoded. */
static int get_path(const ctx *c, const json_t *obj, const char *name, char **out)
{
    json_t *v = field(obj, name);
    if (!json_is_string(v))
        return type_error(c, name, "a string", v);
    const char *s = json_string_value(v);
    size_t len = json_string_length(v);
    if (len == 0 || len > DELTA_ACTION_MAX_PATH)
        return sv_fail(c->err, len ? DELTA_ACTION_E_LIMIT : DELTA_ACTION_E_INVALID, 0,
                       "%s: %s\"%s\": a path must have 1 to %u bytes (it has %zu)", c->action, c->scope, name,
                       DELTA_ACTION_MAX_PATH, len);
    int rc = delta_path_decode(s, len, out, c->err);
    if (rc)
        sv_error_prefix(c->err, "%s: %s\"%s\"", c->action, c->scope, name);
    return rc;
}

/* A Map[String, String] field. Partition values (null_ok) may be null, and
 * "" reads as null; other maps need strings. *present: whether it was there. */
static int get_map(const ctx *c, const json_t *obj, const char *name, bool required, bool null_ok, delta_kv **out,
                   size_t *n, bool *present)
{
    json_t *m = field(obj, name);
    if (!m && !required)
        return 0;
    if (!json_is_object(m))
        return type_error(c, name, "an object", m);
    size_t count = json_object_size(m);
    if (count > DELTA_ACTION_MAX_ENTRIES)
        return sv_fail(c->err, DELTA_ACTION_E_LIMIT, 0, "%s: %s\"%s\": %zu entries; the limit is %u", c->action,
                       c->scope, name, count, DELTA_ACTION_MAX_ENTRIES);
    *out = calloc(count ? count : 1, sizeof **out);
    if (!*out)
        return nomem(c);
    if (present)
        *present = true;
    const char *key;
    json_t *val;
    json_object_foreach(m, key, val)
    {
        delta_kv *kv = &(*out)[*n];
        kv->key = strdup(key);
        if (!kv->key)
            return nomem(c);
        ++*n;
        if (json_is_string(val) && !(null_ok && json_string_length(val) == 0))
            SV_TRY(copy_string(c, val, &kv->value));
        else if (!json_is_string(val) && !(null_ok && json_is_null(val)))
            return sv_fail(c->err, DELTA_ACTION_E_INVALID, 0, "%s: %s\"%s\".\"%.200s\": expected a string%s, found %s",
                           c->action, c->scope, name, key, null_ok ? " or null" : "", type_name(val));
    }
    return 0;
}

/* An Array[String] field. */
static int get_strings(const ctx *c, const json_t *obj, const char *name, bool required, char ***out, size_t *n,
                       bool *present)
{
    json_t *a = field(obj, name);
    if (!a && !required)
        return 0;
    if (!json_is_array(a))
        return type_error(c, name, "an array of strings", a);
    size_t count = json_array_size(a);
    if (count > DELTA_ACTION_MAX_ENTRIES)
        return sv_fail(c->err, DELTA_ACTION_E_LIMIT, 0, "%s: %s\"%s\": %zu entries; the limit is %u", c->action,
                       c->scope, name, count, DELTA_ACTION_MAX_ENTRIES);
    *out = calloc(count ? count : 1, sizeof **out);
    if (!*out)
        return nomem(c);
    if (present)
        *present = true;
    for (size_t i = 0; i < count; i++) {
        json_t *s = json_array_get(a, i);
        if (!json_is_string(s))
            return sv_fail(c->err, DELTA_ACTION_E_INVALID, 0, "%s: %s\"%s\"[%zu]: expected a string, found %s",
                           c->action, c->scope, name, i, type_name(s));
        SV_TRY(copy_string(c, s, &(*out)[i]));
        ++*n;
    }
    return 0;
}

/* ---- actions ---- */

static int parse_dv(const ctx *c, const json_t *o, bool *has, delta_action_dv *dv)
{
    json_t *d = field(o, "deletionVector");
    if (!d)
        return 0;
    if (!json_is_object(d))
        return type_error(c, "deletionVector", "an object", d);
    ctx in = {c->action, "\"deletionVector\".", c->err};
    char *type = NULL;
    SV_TRY(get_string(&in, d, "storageType", true, &type));
    bool ok = strlen(type) == 1 && strchr("uip", type[0]);
    dv->storage_type = type[0];
    free(type);
    if (!ok)
        return sv_fail(c->err, DELTA_ACTION_E_INVALID, 0,
                       "%s: \"deletionVector\".\"storageType\": expected \"u\", \"i\" or \"p\"", c->action);
    SV_TRY(get_string(&in, d, "pathOrInlineDv", true, &dv->path_or_inline));
    dv->offset = -1;
    SV_TRY(get_int(&in, d, "offset", false, 0, INT32_MAX, &dv->offset));
    SV_TRY(get_int32(&in, d, "sizeInBytes", 0, &dv->size_in_bytes));
    SV_TRY(get_int(&in, d, "cardinality", true, 0, INT64_MAX, &dv->cardinality));
    *has = true;
    return 0;
}

static int parse_add(const ctx *c, const json_t *o, delta_add *a)
{
    a->base_row_id = a->default_row_commit_version = -1;
    SV_TRY(get_path(c, o, "path", &a->path));
    SV_TRY(get_map(c, o, "partitionValues", true, true, &a->partition_values, &a->n_partition_values, NULL));
    SV_TRY(get_int(c, o, "size", true, 0, INT64_MAX, &a->size));
    SV_TRY(get_int(c, o, "modificationTime", true, INT64_MIN, INT64_MAX, &a->modification_time));
    SV_TRY(get_bool(c, o, "dataChange", true, &a->data_change));
    SV_TRY(get_string(c, o, "stats", false, &a->stats));
    SV_TRY(parse_dv(c, o, &a->has_dv, &a->dv));
    SV_TRY(get_int(c, o, "baseRowId", false, 0, INT64_MAX, &a->base_row_id));
    SV_TRY(get_int(c, o, "defaultRowCommitVersion", false, 0, INT64_MAX, &a->default_row_commit_version));
    return 0;
}

static int parse_remove(const ctx *c, const json_t *o, delta_remove *r)
{
    r->deletion_timestamp = r->size = r->base_row_id = r->default_row_commit_version = -1;
    SV_TRY(get_path(c, o, "path", &r->path));
    SV_TRY(get_int(c, o, "deletionTimestamp", false, INT64_MIN, INT64_MAX, &r->deletion_timestamp));
    SV_TRY(get_bool(c, o, "dataChange", true, &r->data_change));
    SV_TRY(get_map(c, o, "partitionValues", false, true, &r->partition_values, &r->n_partition_values,
                &r->has_partition_values));
    SV_TRY(get_int(c, o, "size", false, 0, INT64_MAX, &r->size));
    SV_TRY(parse_dv(c, o, &r->has_dv, &r->dv));
    SV_TRY(get_int(c, o, "baseRowId", false, 0, INT64_MAX, &r->base_row_id));
    SV_TRY(get_int(c, o, "defaultRowCommitVersion", false, 0, INT64_MAX, &r->default_row_commit_version));
    return 0;
}

static int parse_metadata(const ctx *c, const json_t *o, delta_metadata *m)
{
    m->created_time = -1;
    SV_TRY(get_string(c, o, "id", true, &m->id));
    SV_TRY(get_string(c, o, "name", false, &m->name));
    SV_TRY(get_string(c, o, "description", false, &m->description));
    json_t *format = field(o, "format");
    if (!json_is_object(format))
        return type_error(c, "format", "an object", format);
    ctx in = {c->action, "\"format\".", c->err};
    SV_TRY(get_string(&in, format, "provider", true, &m->provider));
    SV_TRY(get_string(c, o, "schemaString", false, &m->schema_string)); /* Delta Live Tables writes none at first */
    SV_TRY(get_strings(c, o, "partitionColumns", true, &m->partition_columns, &m->n_partition_columns, NULL));
    SV_TRY(get_map(c, o, "configuration", true, false, &m->configuration, &m->n_configuration, NULL));
    SV_TRY(get_int(c, o, "createdTime", false, INT64_MIN, INT64_MAX, &m->created_time));
    return 0;
}

static int parse_protocol(const ctx *c, const json_t *o, delta_protocol *p)
{
    SV_TRY(get_int32(c, o, "minReaderVersion", 1, &p->min_reader_version));
    SV_TRY(get_int32(c, o, "minWriterVersion", 1, &p->min_writer_version));
    SV_TRY(get_strings(c, o, "readerFeatures", false, &p->reader_features, &p->n_reader_features,
                    &p->has_reader_features));
    SV_TRY(get_strings(c, o, "writerFeatures", false, &p->writer_features, &p->n_writer_features,
                    &p->has_writer_features));
    return 0;
}

static int parse_commit_info(const ctx *c, const json_t *o, delta_commit_info *ci)
{
    json_t *ts = field(o, "timestamp");
    if (json_is_integer(ts)) { /* free-form provenance: not checked */
        ci->has_timestamp = true;
        ci->timestamp = (int64_t)json_integer_value(ts);
    }
    if (field(o, "inCommitTimestamp")) {
        SV_TRY(get_int(c, o, "inCommitTimestamp", true, INT64_MIN, INT64_MAX, &ci->in_commit_timestamp));
        ci->has_in_commit_timestamp = true;
    }
    return 0;
}

static int parse_txn(const ctx *c, const json_t *o, delta_txn *t)
{
    t->last_updated = -1;
    SV_TRY(get_string(c, o, "appId", true, &t->app_id));
    SV_TRY(get_int(c, o, "version", true, INT64_MIN, INT64_MAX, &t->version));
    SV_TRY(get_int(c, o, "lastUpdated", false, INT64_MIN, INT64_MAX, &t->last_updated));
    return 0;
}

static int parse_domain_metadata(const ctx *c, const json_t *o, delta_domain_metadata *d)
{
    SV_TRY(get_string(c, o, "domain", true, &d->domain));
    SV_TRY(get_string(c, o, "configuration", true, &d->configuration));
    SV_TRY(get_bool(c, o, "removed", true, &d->removed));
    return 0;
}

static int parse_cdc(const ctx *c, const json_t *o, delta_cdc *cdc)
{
    SV_TRY(get_path(c, o, "path", &cdc->path));
    SV_TRY(get_map(c, o, "partitionValues", true, true, &cdc->partition_values, &cdc->n_partition_values, NULL));
    SV_TRY(get_int(c, o, "size", true, 0, INT64_MAX, &cdc->size));
    SV_TRY(get_bool(c, o, "dataChange", false, &cdc->data_change));
    return 0;
}

static int parse_sidecar(const ctx *c, const json_t *o, delta_sidecar *s)
{
    SV_TRY(get_path(c, o, "path", &s->path));
    SV_TRY(get_int(c, o, "sizeInBytes", true, 0, INT64_MAX, &s->size_in_bytes));
    SV_TRY(get_int(c, o, "modificationTime", true, INT64_MIN, INT64_MAX, &s->modification_time));
    return 0;
}

static int parse_checkpoint_metadata(const ctx *c, const json_t *o, delta_checkpoint_metadata *cm)
{
    return get_int(c, o, "version", true, 0, INT64_MAX, &cm->version);
}

static int parse_body(const ctx *c, const json_t *o, delta_action *a)
{
    switch (a->kind) {
    case DELTA_ACTION_ADD:
        return parse_add(c, o, &a->add);
    case DELTA_ACTION_REMOVE:
        return parse_remove(c, o, &a->remove);
    case DELTA_ACTION_METADATA:
        return parse_metadata(c, o, &a->metadata);
    case DELTA_ACTION_PROTOCOL:
        return parse_protocol(c, o, &a->protocol);
    case DELTA_ACTION_COMMIT_INFO:
        return parse_commit_info(c, o, &a->commit_info);
    case DELTA_ACTION_TXN:
        return parse_txn(c, o, &a->txn);
    case DELTA_ACTION_DOMAIN_METADATA:
        return parse_domain_metadata(c, o, &a->domain_metadata);
    case DELTA_ACTION_CDC:
        return parse_cdc(c, o, &a->cdc);
    case DELTA_ACTION_SIDECAR:
        return parse_sidecar(c, o, &a->sidecar);
    case DELTA_ACTION_CHECKPOINT_METADATA:
        return parse_checkpoint_metadata(c, o, &a->checkpoint_metadata);
    default:
        return 0;
    }
}

static delta_action_kind kind_of(const char *key)
{
    for (size_t k = 0; k < sizeof action_names / sizeof action_names[0]; k++) {
        if (action_names[k] && strcmp(action_names[k], key) == 0)
            return (delta_action_kind)k;
    }
    return DELTA_ACTION_OTHER;
}

static bool is_blank(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r' && s[i] != '\n')
            return false;
    }
    return true;
}

/* The one top-level key with a non-null value. */
static int find_action(const json_t *root, const char **key, json_t **body, sv_error *err)
{
    *key = NULL;
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)root, k, v)
    {
        if (json_is_null(v))
            continue;
        if (*key)
            return sv_fail(err, DELTA_ACTION_E_JSON, 0, "a line holds one action, this one \"%.100s\" and \"%.100s\"",
                           *key, k);
        *key = k;
        *body = v;
    }
    if (!*key)
        return sv_fail(err, DELTA_ACTION_E_JSON, 0, "a line holds one action; this object has none");
    return 0;
}

int delta_action_parse(const char *line, size_t len, delta_action *out, sv_error *err)
{
    memset(out, 0, sizeof *out);
    if (len > DELTA_ACTION_MAX_LINE)
        return sv_fail(err, DELTA_ACTION_E_LIMIT, 0, "a log line of %zu bytes; the limit is %u", len,
                       DELTA_ACTION_MAX_LINE);
    if (is_blank(line, len))
        return 0; /* DELTA_ACTION_BLANK */
    json_error_t jerr;
    json_t *root = json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!root)
        return sv_fail(err, DELTA_ACTION_E_JSON, (size_t)jerr.position, "malformed JSON at byte %d: %s",
                       jerr.position, jerr.text);
    const char *key = NULL;
    json_t *body = NULL;
    int rc = json_is_object(root)
                 ? find_action(root, &key, &body, err)
                 : sv_fail(err, DELTA_ACTION_E_JSON, 0, "a log line must be a JSON object, not %s", type_name(root));
    if (!rc) {
        out->kind = kind_of(key);
        ctx c = {delta_action_name(out->kind), "", err};
        if (out->kind != DELTA_ACTION_OTHER && !json_is_object(body))
            rc = sv_fail(err, DELTA_ACTION_E_INVALID, 0, "%s: expected an object, found %s", c.action,
                         type_name(body));
        else
            rc = parse_body(&c, body, out);
    }
    json_decref(root);
    if (rc)
        delta_action_free(out);
    return rc;
}
