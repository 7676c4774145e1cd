#include "checkpoint_read.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "chunk_values.h"
#include "parquet_meta.h"

/* The columns read, by role. */
enum {
    ADD_PATH,
    ADD_PV_KEY,
    ADD_PV_VALUE,
    ADD_SIZE,
    ADD_MTIME,
    ADD_DATA_CHANGE,
    ADD_STATS,
    ADD_DV_TYPE,
    ADD_DV_PATH,
    ADD_DV_OFFSET,
    ADD_DV_SIZE,
    ADD_DV_CARD,
    ADD_BASE_ROW_ID,
    ADD_ROW_COMMIT,
    RM_PATH,
    RM_DEL_TS,
    RM_DATA_CHANGE,
    RM_SIZE,
    RM_DV_TYPE,
    RM_DV_PATH,
    RM_DV_OFFSET,
    RM_DV_SIZE,
    RM_DV_CARD,
    MD_ID,
    MD_NAME,
    MD_DESC,
    MD_PROVIDER,
    MD_SCHEMA,
    MD_PART_COLS,
    MD_CONF_KEY,
    MD_CONF_VALUE,
    MD_CREATED,
    PR_MIN_READER,
    PR_MIN_WRITER,
    PR_READER_FEATURES,
    PR_WRITER_FEATURES,
    SC_PATH,
    SC_SIZE,
    SC_MTIME,
    CM_VERSION,
    N_COLS
};

/* How a role finds its leaf: a scalar's dotted path; a list's element (the
 * one leaf under the path); a map's key or value (the first or second). */
typedef enum { SCALAR, LIST_ELEMENT, MAP_KEY, MAP_VALUE } shape;

static const struct {
    const char *path;
    shape shape;
} specs[N_COLS] = {
    [ADD_PATH] = {"add.path", SCALAR},
    [ADD_PV_KEY] = {"add.partitionValues", MAP_KEY},
    [ADD_PV_VALUE] = {"add.partitionValues", MAP_VALUE},
    [ADD_SIZE] = {"add.size", SCALAR},
    [ADD_MTIME] = {"add.modificationTime", SCALAR},
    [ADD_DATA_CHANGE] = {"add.dataChange", SCALAR},
    [ADD_STATS] = {"add.stats", SCALAR},
    [ADD_DV_TYPE] = {"add.deletionVector.storageType", SCALAR},
    [ADD_DV_PATH] = {"add.deletionVector.pathOrInlineDv", SCALAR},
    [ADD_DV_OFFSET] = {"add.deletionVector.offset", SCALAR},
    [ADD_DV_SIZE] = {"add.deletionVector.sizeInBytes", SCALAR},
    [ADD_DV_CARD] = {"add.deletionVector.cardinality", SCALAR},
    [ADD_BASE_ROW_ID] = {"add.baseRowId", SCALAR},
    [ADD_ROW_COMMIT] = {"add.defaultRowCommitVersion", SCALAR},
    [RM_PATH] = {"remove.path", SCALAR},
    [RM_DEL_TS] = {"remove.deletionTimestamp", SCALAR},
    [RM_DATA_CHANGE] = {"remove.dataChange", SCALAR},
    [RM_SIZE] = {"remove.size", SCALAR},
    [RM_DV_TYPE] = {"remove.deletionVector.storageType", SCALAR},
    [RM_DV_PATH] = {"remove.deletionVector.pathOrInlineDv", SCALAR},
    [RM_DV_OFFSET] = {"remove.deletionVector.offset", SCALAR},
    [RM_DV_SIZE] = {"remove.deletionVector.sizeInBytes", SCALAR},
    [RM_DV_CARD] = {"remove.deletionVector.cardinality", SCALAR},
    [MD_ID] = {"metaData.id", SCALAR},
    [MD_NAME] = {"metaData.name", SCALAR},
    [MD_DESC] = {"metaData.description", SCALAR},
    [MD_PROVIDER] = {"metaData.format.provider", SCALAR},
    [MD_SCHEMA] = {"metaData.schemaString", SCALAR},
    [MD_PART_COLS] = {"metaData.partitionColumns", LIST_ELEMENT},
    [MD_CONF_KEY] = {"metaData.configuration", MAP_KEY},
    [MD_CONF_VALUE] = {"metaData.configuration", MAP_VALUE},
    [MD_CREATED] = {"metaData.createdTime", SCALAR},
    [PR_MIN_READER] = {"protocol.minReaderVersion", SCALAR},
    [PR_MIN_WRITER] = {"protocol.minWriterVersion", SCALAR},
    [PR_READER_FEATURES] = {"protocol.readerFeatures", LIST_ELEMENT},
    [PR_WRITER_FEATURES] = {"protocol.writerFeatures", LIST_ELEMENT},
    [SC_PATH] = {"sidecar.path", SCALAR},
    [SC_SIZE] = {"sidecar.sizeInBytes", SCALAR},
    [SC_MTIME] = {"sidecar.modificationTime", SCALAR},
    [CM_VERSION] = {"checkpointMetadata.version", SCALAR},
};

/* The definition levels a role's entries are read at. */
typedef struct {
    int64_t leaf;          /* index into m->leaves; -1: not in this file */
    uint16_t d_action;     /* the action struct (add, remove, ...) is present */
    uint16_t d_parent;     /* the field's own struct (deletionVector, format) is present */
    uint16_t d_field;      /* a list or map: it is present (not null) */
    uint16_t d_entry;      /* a list or map: an entry exists */
    pq_chunk_values v;     /* the current row group's entries */
    uint32_t *row_start;   /* repeated leaves: first entry of each row, n_rows + 1 */
} column;

typedef struct {
    const pq_file_meta *m;
    column cols[N_COLS];
    sv_error *err;
} reader;

/* ---- finding leaves and their levels ---- */


/* The child of element parent named name[0..len), or -1. */
static int64_t child_named(const pq_file_meta *m, uint32_t parent, const char *name, size_t len)
{
    const int32_t n = m->schema[parent].num_children;
    uint32_t c = parent + 1;
    for (int32_t k = 0; k < n && c < m->n_schema; k++) {
        const pq_schema_element *e = &m->schema[c];
        if (e->name_len == len && memcmp(e->name, name, len) == 0)
            return c;
        c = pq_schema_subtree_end(m, c);
    }
    return -1;
}

static uint16_t level_of(const pq_schema_element *e)
{
    return e->repetition == PQ_OPTIONAL || e->repetition == PQ_REPEATED ? 1 : 0;
}

/* Walk the dotted path from the root: *elem gets its element, *def the
 * definition level at it, *d1 the level at its first component (the
 * action) and *d_up the level at its parent. False when absent. */
static bool find_path(const pq_file_meta *m, const char *path, uint32_t *elem, uint16_t *def, uint16_t *d1,
                      uint16_t *d_up)
{
    uint32_t at = 0;
    uint16_t d = 0, prev = 0;
    *d1 = 0;
    for (const char *p = path; *p;) {
        const char *dot = strchr(p, '.');
        const size_t n = dot ? (size_t)(dot - p) : strlen(p);
        const int64_t c = child_named(m, at, p, n);
        if (c < 0)
            return false;
        prev = d;
        at = (uint32_t)c;
        d = (uint16_t)(d + level_of(&m->schema[at]));
        if (p == path)
            *d1 = d;
        p += n;
        if (*p == '.')
            p++;
    }
    *elem = at;
    *def = d;
    *d_up = prev;
    return true;
}

/* The leaf whose schema element is elem, or -1. */
static int64_t leaf_of(const pq_file_meta *m, uint32_t elem)
{
    for (uint32_t i = 0; i < m->n_leaves; i++)
        if (m->leaves[i].schema_index == elem)
            return i;
    return -1;
}

/* Resolve role r: its leaf and levels (leaf -1 when the file lacks it). */
static int resolve(reader *R, int r)
{
    const pq_file_meta *m = R->m;
    column *c = &R->cols[r];
    c->leaf = -1;
    uint32_t elem;
    uint16_t def, d1, d_up;
    if (!find_path(m, specs[r].path, &elem, &def, &d1, &d_up))
        return 0;
    c->d_action = d1;
    c->d_parent = d_up;
    if (specs[r].shape == SCALAR) {
        if (m->schema[elem].num_children > 0)
            return sv_fail(R->err, DELTA_CHECKPOINT_E_SCHEMA, 0, "checkpoint: %s is a group, expected a value",
                           specs[r].path);
        c->leaf = leaf_of(m, elem);
        return 0;
    }
    /* A list or map: a group holding one repeated group (or a repeated leaf,
     * the legacy two-level list) whose leaves are the elements, or keys then
     * values. */
    c->d_field = def;
    const pq_schema_element *g = &m->schema[elem];
    if (g->num_children != 1 || elem + 1 >= m->n_schema || m->schema[elem + 1].repetition != PQ_REPEATED)
        return sv_fail(R->err, DELTA_CHECKPOINT_E_SCHEMA, 0, "checkpoint: %s is not a list or map", specs[r].path);
    const uint32_t rep = elem + 1;
    c->d_entry = (uint16_t)(def + 1);
    if (m->schema[rep].num_children <= 0) { /* legacy list: the repeated element is the value */
        if (specs[r].shape != LIST_ELEMENT)
            return sv_fail(R->err, DELTA_CHECKPOINT_E_SCHEMA, 0, "checkpoint: %s is not a map", specs[r].path);
        c->leaf = leaf_of(m, rep);
        return 0;
    }
    const int want = specs[r].shape == MAP_VALUE ? 2 : 1;
    const int have = m->schema[rep].num_children;
    if ((specs[r].shape == LIST_ELEMENT && have != 1) || (specs[r].shape != LIST_ELEMENT && have != 2))
        return sv_fail(R->err, DELTA_CHECKPOINT_E_SCHEMA, 0, "checkpoint: %s has %d fields per entry", specs[r].path,
                       have);
    uint32_t child = rep + 1;
    for (int k = 1; k < want; k++)
        child = pq_schema_subtree_end(m, child);
    if (child >= m->n_schema || m->schema[child].num_children > 0)
        return sv_fail(R->err, DELTA_CHECKPOINT_E_SCHEMA, 0, "checkpoint: %s: nested entries are not supported",
                       specs[r].path);
    c->leaf = leaf_of(m, child);
    return 0;
}

/* ---- reading a row group ---- */

static void free_row_group(reader *R)
{
    for (int r = 0; r < N_COLS; r++) {
        pq_chunk_values_free(&R->cols[r].v);
        free(R->cols[r].row_start);
        R->cols[r].row_start = NULL;
    }
}

static int load_row_group(reader *R, const uint8_t *file, size_t len, uint32_t g)
{
    const pq_file_meta *m = R->m;
    const pq_row_group *rg = &m->row_groups[g];
    if (rg->num_rows < 0 || rg->num_rows > DELTA_CHECKPOINT_MAX_ROWS)
        return sv_fail(R->err, DELTA_CHECKPOINT_E_LIMIT, 0, "checkpoint: row group %u has %lld rows", g,
                       (long long)rg->num_rows);
    const pq_chunk_limits lim = {.max_entries = 4 * DELTA_CHECKPOINT_MAX_ROWS,
                                 .max_value_bytes = DELTA_CHECKPOINT_MAX_BYTES};
    for (int r = 0; r < N_COLS; r++) {
        column *c = &R->cols[r];
        if (c->leaf < 0)
            continue;
        uint64_t off, n;
        if (!pq_column_chunk_range(&rg->columns[c->leaf], &off, &n) || off > len || n > len - off)
            return sv_fail(R->err, DELTA_CHECKPOINT_E_PARQUET, 0, "checkpoint: column %s of row group %u is out of the file",
                           m->leaves[c->leaf].path, g);
        if (pq_chunk_values_decode(m, g, (uint32_t)c->leaf, file + off, (size_t)n, rg->num_rows, &lim, &c->v, R->err) != 0) {
            sv_error_prefix(R->err, "checkpoint");
            return DELTA_CHECKPOINT_E_PARQUET;
        }
        if (c->v.rep) {
            c->row_start = malloc(((size_t)c->v.n_rows + 1) * sizeof *c->row_start);
            if (!c->row_start)
                return sv_fail(R->err, DELTA_CHECKPOINT_E_NOMEM, 0, "out of memory");
            uint32_t row = 0;
            for (uint32_t e = 0; e < c->v.n_entries; e++)
                if (c->v.rep[e] == 0)
                    c->row_start[row++] = e;
            c->row_start[row] = c->v.n_entries;
        }
    }
    /* A map's keys and values stand in the same entries. */
    const int pairs[][2] = {{ADD_PV_KEY, ADD_PV_VALUE}, {MD_CONF_KEY, MD_CONF_VALUE}};
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        const column *k = &R->cols[pairs[i][0]], *v = &R->cols[pairs[i][1]];
        if (k->leaf >= 0 && v->leaf >= 0 && k->v.n_entries != v->v.n_entries)
            return sv_fail(R->err, DELTA_CHECKPOINT_E_INVALID, 0, "checkpoint: %s: %u keys for %u values",
                           specs[pairs[i][0]].path, k->v.n_entries, v->v.n_entries);
    }
    return 0;
}

/* The entry range of row `row` of a column (one entry when not repeated). */
static void entries_of(const column *c, uint32_t row, uint32_t *from, uint32_t *to)
{
    if (c->row_start) {
        *from = c->row_start[row];
        *to = c->row_start[row + 1];
    } else {
        *from = row;
        *to = row + 1;
    }
}

static uint16_t def_at(const column *c, uint32_t e)
{
    return c->v.def ? c->v.def[e] : c->v.max_def;
}

/* Whether the action (or struct) a column lies in is present in a row. */
static bool present(const column *c, uint32_t row, uint16_t level)
{
    if (c->leaf < 0)
        return false;
    uint32_t from, to;
    entries_of(c, row, &from, &to);
    return from < to && def_at(c, from) >= level;
}

static bool has_value(const column *c, uint32_t e)
{
    return c->leaf >= 0 && pq_chunk_has_value(&c->v, e);
}

/* A string value (copied), or NULL when null or absent; an error for a
 * value of another kind or holding a NUL. */
static int get_string(reader *R, int r, uint32_t e, char **out)
{
    const column *c = &R->cols[r];
    *out = NULL;
    if (!has_value(c, e))
        return 0;
    const pqv *v = &c->v.values[e];
    if (v->kind != PQV_BYTES || memchr(v->v.bytes.ptr, 0, v->v.bytes.len))
        return sv_fail(R->err, DELTA_CHECKPOINT_E_INVALID, 0, "checkpoint: %s: expected a string", specs[r].path);
    *out = strndup((const char *)v->v.bytes.ptr, v->v.bytes.len);
    return *out ? 0 : sv_fail(R->err, DELTA_CHECKPOINT_E_NOMEM, 0, "out of memory");
}

static int get_int(reader *R, int r, uint32_t e, int64_t absent, int64_t *out)
{
    const column *c = &R->cols[r];
    *out = absent;
    if (!has_value(c, e))
        return 0;
    const pqv *v = &c->v.values[e];
    if (v->kind != PQV_INT)
        return sv_fail(R->err, DELTA_CHECKPOINT_E_INVALID, 0, "checkpoint: %s: expected an integer", specs[r].path);
    *out = v->v.i;
    return 0;
}

static int get_bool(reader *R, int r, uint32_t e, bool *out)
{
    const column *c = &R->cols[r];
    *out = false;
    if (!has_value(c, e))
        return 0;
    const pqv *v = &c->v.values[e];
    if (v->kind != PQV_BOOL)
        return sv_fail(R->err, DELTA_CHECKPOINT_E_INVALID, 0, "checkpoint: %s: expected a boolean", specs[r].path);
    *out = v->v.b;
    return 0;
}

static int required(reader *R, int r, uint32_t row, const void *got)
{
    if (got)
        return 0;
    return sv_fail(R->err, DELTA_CHECKPOINT_E_INVALID, 0, "checkpoint: row %u: %s is missing", row, specs[r].path);
}

/* A percent-encoded path, decoded. */
static int get_path(reader *R, int r, uint32_t row, char **out)
{
    char *raw = NULL;
    int rc = get_string(R, r, row, &raw);
    if (rc == 0 && (rc = required(R, r, row, raw)) == 0) {
        rc = delta_path_decode(raw, strlen(raw), out, R->err);
        if (rc)
            sv_error_prefix(R->err, "checkpoint: row %u: %s", row, specs[r].path);
    }
    free(raw);
    return rc ? DELTA_CHECKPOINT_E_INVALID : 0;
}

/* A map in row `row`: its entries as key/value pairs (an empty value is
 * NULL when empty_is_null: partition values). */
static int get_map(reader *R, int rk, int rv, uint32_t row, bool empty_is_null, delta_kv **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    const column *k = &R->cols[rk];
    if (k->leaf < 0)
        return 0;
    uint32_t from, to;
    entries_of(k, row, &from, &to);
    size_t count = 0;
    for (uint32_t e = from; e < to; e++)
        count += def_at(k, e) >= k->d_entry;
    if (count == 0)
        return 0;
    if (count > DELTA_ACTION_MAX_ENTRIES)
        return sv_fail(R->err, DELTA_CHECKPOINT_E_LIMIT, 0, "checkpoint: %s: more than %u entries", specs[rk].path,
                       DELTA_ACTION_MAX_ENTRIES);
    delta_kv *kv = calloc(count, sizeof *kv);
    if (!kv)
        return sv_fail(R->err, DELTA_CHECKPOINT_E_NOMEM, 0, "out of memory");
    *out = kv;
    for (uint32_t e = from; e < to; e++) {
        if (def_at(k, e) < k->d_entry)
            continue;
        delta_kv *p = &kv[(*n)++];
        int rc = get_string(R, rk, e, &p->key);
        if (rc == 0)
            rc = required(R, rk, row, p->key);
        if (rc == 0)
            rc = get_string(R, rv, e, &p->value);
        if (rc)
            return rc;
        if (empty_is_null && p->value && !p->value[0]) {
            free(p->value);
            p->value = NULL;
        }
    }
    return 0;
}

/* A list of strings in row `row`; *has: the list is present. */
static int get_list(reader *R, int r, uint32_t row, bool *has, char ***out, size_t *n)
{
    *out = NULL;
    *n = 0;
    const column *c = &R->cols[r];
    if (has)
        *has = present(c, row, c->d_field);
    if (c->leaf < 0)
        return 0;
    uint32_t from, to;
    entries_of(c, row, &from, &to);
    size_t count = 0;
    for (uint32_t e = from; e < to; e++)
        count += def_at(c, e) >= c->d_entry;
    if (count == 0)
        return 0;
    if (count > DELTA_ACTION_MAX_ENTRIES)
        return sv_fail(R->err, DELTA_CHECKPOINT_E_LIMIT, 0, "checkpoint: %s: more than %u entries", specs[r].path,
                       DELTA_ACTION_MAX_ENTRIES);
    char **s = calloc(count, sizeof *s);
    if (!s)
        return sv_fail(R->err, DELTA_CHECKPOINT_E_NOMEM, 0, "out of memory");
    *out = s;
    for (uint32_t e = from; e < to; e++) {
        if (def_at(c, e) < c->d_entry)
            continue;
        int rc = get_string(R, r, e, &s[*n]);
        if (rc == 0)
            rc = required(R, r, row, s[*n]);
        (*n)++;
        if (rc)
            return rc;
    }
    return 0;
}

static int get_dv(reader *R, int first, uint32_t row, bool *has, delta_action_dv *dv)
{
    const column *t = &R->cols[first];
    *has = present(t, row, (uint16_t)(t->d_parent + 1)) && t->leaf >= 0;
    memset(dv, 0, sizeof *dv);
    if (!*has)
        return 0;
    /* storageType, pathOrInlineDv, offset, sizeInBytes, cardinality follow in that order */
    char *type = NULL;
    int64_t size = 0, card = 0;
    int rc = get_string(R, first, row, &type);
    if (rc == 0)
        rc = required(R, first, row, type);
    if (rc == 0 && strlen(type) != 1)
        rc = sv_fail(R->err, DELTA_CHECKPOINT_E_INVALID, 0, "checkpoint: row %u: %s: not one character", row,
                     specs[first].path);
    if (rc == 0)
        dv->storage_type = type[0];
    free(type);
    if (rc == 0 && (rc = get_string(R, first + 1, row, &dv->path_or_inline)) == 0)
        rc = required(R, first + 1, row, dv->path_or_inline);
    if (rc == 0)
        rc = get_int(R, first + 2, row, -1, &dv->offset);
    if (rc == 0 && (rc = get_int(R, first + 3, row, -1, &size)) == 0 && (size < 0 || size > INT32_MAX))
        rc = sv_fail(R->err, DELTA_CHECKPOINT_E_INVALID, 0, "checkpoint: row %u: %s missing or out of range", row,
                     specs[first + 3].path);
    if (rc == 0 && (rc = get_int(R, first + 4, row, -1, &card)) == 0 && card < 0)
        rc = sv_fail(R->err, DELTA_CHECKPOINT_E_INVALID, 0, "checkpoint: row %u: %s missing", row, specs[first + 4].path);
    dv->size_in_bytes = (int32_t)size;
    dv->cardinality = card;
    return rc;
}

static int read_add(reader *R, uint32_t row, delta_add *a)
{
    int rc = get_path(R, ADD_PATH, row, &a->path);
    if (rc == 0)
        rc = get_map(R, ADD_PV_KEY, ADD_PV_VALUE, row, true, &a->partition_values, &a->n_partition_values);
    if (rc == 0 && (rc = get_int(R, ADD_SIZE, row, -1, &a->size)) == 0 && a->size < 0)
        rc = sv_fail(R->err, DELTA_CHECKPOINT_E_INVALID, 0, "checkpoint: row %u: add.size missing or negative", row);
    if (rc == 0)
        rc = get_int(R, ADD_MTIME, row, 0, &a->modification_time);
    if (rc == 0)
        rc = get_bool(R, ADD_DATA_CHANGE, row, &a->data_change);
    if (rc == 0)
        rc = get_string(R, ADD_STATS, row, &a->stats);
    if (rc == 0)
        rc = get_dv(R, ADD_DV_TYPE, row, &a->has_dv, &a->dv);
    if (rc == 0)
        rc = get_int(R, ADD_BASE_ROW_ID, row, -1, &a->base_row_id);
    if (rc == 0)
        rc = get_int(R, ADD_ROW_COMMIT, row, -1, &a->default_row_commit_version);
    return rc;
}

static int read_remove(reader *R, uint32_t row, delta_remove *r)
{
    int rc = get_path(R, RM_PATH, row, &r->path);
    if (rc == 0)
        rc = get_int(R, RM_DEL_TS, row, -1, &r->deletion_timestamp);
    if (rc == 0)
        rc = get_bool(R, RM_DATA_CHANGE, row, &r->data_change);
    if (rc == 0)
        rc = get_int(R, RM_SIZE, row, -1, &r->size);
    if (rc == 0)
        rc = get_dv(R, RM_DV_TYPE, row, &r->has_dv, &r->dv);
    r->base_row_id = r->default_row_commit_version = -1;
    return rc;
}

static int read_metadata(reader *R, uint32_t row, delta_metadata *md)
{
    int rc = get_string(R, MD_ID, row, &md->id);
    if (rc == 0)
        rc = required(R, MD_ID, row, md->id);
    if (rc == 0)
        rc = get_string(R, MD_NAME, row, &md->name);
    if (rc == 0)
        rc = get_string(R, MD_DESC, row, &md->description);
    if (rc == 0)
        rc = get_string(R, MD_PROVIDER, row, &md->provider);
    if (rc == 0)
        rc = get_string(R, MD_SCHEMA, row, &md->schema_string); /* may be absent, as in JSON commits */
    if (rc == 0)
        rc = get_list(R, MD_PART_COLS, row, NULL, &md->partition_columns, &md->n_partition_columns);
    if (rc == 0)
        rc = get_map(R, MD_CONF_KEY, MD_CONF_VALUE, row, false, &md->configuration, &md->n_configuration);
    for (size_t i = 0; rc == 0 && i < md->n_configuration; i++)
        if (!md->configuration[i].value)
            rc = sv_fail(R->err, DELTA_CHECKPOINT_E_INVALID, 0, "checkpoint: row %u: configuration \"%s\" is null", row,
                         md->configuration[i].key);
    if (rc == 0)
        rc = get_int(R, MD_CREATED, row, -1, &md->created_time);
    return rc;
}

static int read_protocol(reader *R, uint32_t row, delta_protocol *p)
{
    int64_t rv = -1, wv = -1;
    int rc = get_int(R, PR_MIN_READER, row, -1, &rv);
    if (rc == 0)
        rc = get_int(R, PR_MIN_WRITER, row, -1, &wv);
    if (rc == 0 && (rv < 1 || rv > INT32_MAX || wv < 1 || wv > INT32_MAX))
        rc = sv_fail(R->err, DELTA_CHECKPOINT_E_INVALID, 0, "checkpoint: row %u: protocol versions missing or out of range",
                     row);
    p->min_reader_version = (int32_t)rv;
    p->min_writer_version = (int32_t)wv;
    if (rc == 0)
        rc = get_list(R, PR_READER_FEATURES, row, &p->has_reader_features, &p->reader_features, &p->n_reader_features);
    if (rc == 0)
        rc = get_list(R, PR_WRITER_FEATURES, row, &p->has_writer_features, &p->writer_features, &p->n_writer_features);
    return rc;
}

static int read_sidecar(reader *R, uint32_t row, delta_sidecar *s)
{
    int rc = get_path(R, SC_PATH, row, &s->path);
    if (rc == 0)
        rc = get_int(R, SC_SIZE, row, -1, &s->size_in_bytes);
    if (rc == 0)
        rc = get_int(R, SC_MTIME, row, 0, &s->modification_time);
    return rc;
}

/* The action of one row, or kind OTHER when it holds none this reader uses. */
static int read_row(reader *R, uint32_t row, delta_action *a)
{
    memset(a, 0, sizeof *a);
    const column *c = R->cols;
    int rc = 0;
    if (present(&c[ADD_PATH], row, c[ADD_PATH].d_action)) {
        a->kind = DELTA_ACTION_ADD;
        rc = read_add(R, row, &a->add);
    } else if (present(&c[RM_PATH], row, c[RM_PATH].d_action)) {
        a->kind = DELTA_ACTION_REMOVE;
        rc = read_remove(R, row, &a->remove);
    } else if (present(&c[MD_ID], row, c[MD_ID].d_action) || present(&c[MD_SCHEMA], row, c[MD_SCHEMA].d_action)) {
        a->kind = DELTA_ACTION_METADATA;
        rc = read_metadata(R, row, &a->metadata);
    } else if (present(&c[PR_MIN_READER], row, c[PR_MIN_READER].d_action)) {
        a->kind = DELTA_ACTION_PROTOCOL;
        rc = read_protocol(R, row, &a->protocol);
    } else if (present(&c[SC_PATH], row, c[SC_PATH].d_action)) {
        a->kind = DELTA_ACTION_SIDECAR;
        rc = read_sidecar(R, row, &a->sidecar);
    } else if (present(&c[CM_VERSION], row, c[CM_VERSION].d_action)) {
        a->kind = DELTA_ACTION_CHECKPOINT_METADATA;
        rc = get_int(R, CM_VERSION, row, -1, &a->checkpoint_metadata.version);
    } else {
        a->kind = DELTA_ACTION_OTHER;
    }
    if (rc)
        delta_action_free(a);
    return rc;
}

int delta_checkpoint_read(const uint8_t *file, size_t len, delta_action_fn fn, void *ctx, sv_error *err)
{
    if (len > DELTA_CHECKPOINT_MAX_BYTES)
        return sv_fail(err, DELTA_CHECKPOINT_E_LIMIT, 0, "checkpoint: %zu bytes (limit %llu)", len,
                       (unsigned long long)DELTA_CHECKPOINT_MAX_BYTES);
    pq_file_meta *m = NULL;
    tc_error terr;
    memset(&terr, 0, sizeof terr);
    uint64_t need = 0;
    if (pq_file_meta_from_tail(file, len, len, &m, &need, &terr) != TC_OK)
        return sv_fail(err, DELTA_CHECKPOINT_E_PARQUET, terr.offset, "checkpoint: %s", terr.msg);
    reader R = {.m = m, .err = err};
    int rc = 0;
    for (int r = 0; rc == 0 && r < N_COLS; r++)
        rc = resolve(&R, r);
    if (rc == 0 && R.cols[ADD_PATH].leaf < 0 && R.cols[RM_PATH].leaf < 0 && R.cols[MD_ID].leaf < 0 &&
        R.cols[PR_MIN_READER].leaf < 0 && R.cols[SC_PATH].leaf < 0)
        rc = sv_fail(err, DELTA_CHECKPOINT_E_SCHEMA, 0, "checkpoint: none of add, remove, metaData, protocol, sidecar");
    for (uint32_t g = 0; rc == 0 && g < m->n_row_groups; g++) {
        rc = load_row_group(&R, file, len, g);
        for (uint32_t row = 0; rc == 0 && row < (uint32_t)m->row_groups[g].num_rows; row++) {
            delta_action a;
            if ((rc = read_row(&R, row, &a)) != 0)
                break;
            if (a.kind == DELTA_ACTION_OTHER)
                continue;
            if (fn(ctx, &a) != 0)
                rc = sv_fail(err, DELTA_CHECKPOINT_E_STOPPED, 0, "checkpoint: stopped");
        }
        free_row_group(&R);
    }
    free_row_group(&R);
    pq_file_meta_free(m);
    return rc;
}
