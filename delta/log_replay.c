#include "log_replay.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sv_grow.h"

/* Reader features a view can honour (deletion vectors are applied, column
 * mapping resolves names, the rest change nothing a reader of rows sees
 * through its own Parquet reader). */
static const char *const known_reader_features[] = {
    "columnMapping", "deletionVectors", "timestampNtz",        "v2Checkpoint",
    "vacuumProtocolCheck", "typeWidening", "typeWidening-preview", "variantType",
    "variantType-preview",
};

#define EMPTY 0u
#define GONE UINT32_MAX

struct delta_replay {
    delta_add *files; /* in the order added; a removed one has path NULL */
    char **keys;
    size_t n, cap, cap_keys, live;
    uint32_t *slots;  /* open addressing: index + 1, EMPTY or GONE */
    size_t n_slots, used_slots;
    bool has_protocol, has_metadata;
    delta_protocol protocol;
    delta_metadata metadata;
};

char *delta_file_key(const char *path, bool has_dv, const delta_action_dv *dv)
{
    char *id = has_dv ? dv_unique_id(dv) : NULL;
    if (has_dv && !id)
        return NULL;
    char *k = NULL;
    /* the path's length first: no path and id can run together ambiguously */
    int n = asprintf(&k, "%zu:%s%s", strlen(path), path, id ? id : "");
    free(id);
    return n < 0 ? NULL : k;
}

static uint64_t hash(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 1099511628211ull;
    return h;
}

delta_replay *delta_replay_new(void)
{
    return calloc(1, sizeof(delta_replay));
}

void delta_replay_free(delta_replay *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n; i++) {
        delta_add_free(&r->files[i]);
        free(r->keys[i]);
    }
    free(r->files);
    free(r->keys);
    free(r->slots);
    delta_protocol_free(&r->protocol);
    delta_metadata_free(&r->metadata);
    free(r);
}

/* The slot holding key, or (when absent) the slot to put it in. */
static size_t find_slot(const delta_replay *r, const char *key, bool *found)
{
    size_t mask = r->n_slots - 1, i = (size_t)hash(key) & mask, first_gone = SIZE_MAX;
    for (;; i = (i + 1) & mask) {
        const uint32_t s = r->slots[i];
        if (s == EMPTY) {
            *found = false;
            return first_gone != SIZE_MAX ? first_gone : i;
        }
        if (s == GONE) {
            if (first_gone == SIZE_MAX)
                first_gone = i;
            continue;
        }
        if (strcmp(r->keys[s - 1], key) == 0) {
            *found = true;
            return i;
        }
    }
}

/* Room in the index for one more key (rehashing the live ones at 1/2 load). */
static bool grow_index(delta_replay *r)
{
    if (r->n_slots && (r->used_slots + 1) * 2 <= r->n_slots)
        return true;
    size_t want = 1024;
    while (want < (r->live + 1) * 4)
        want *= 2;
    uint32_t *slots = calloc(want, sizeof *slots);
    if (!slots)
        return false;
    free(r->slots);
    r->slots = slots;
    r->n_slots = want;
    r->used_slots = 0;
    for (size_t i = 0; i < r->n; i++) {
        if (!r->files[i].path)
            continue;
        bool found;
        const size_t s = find_slot(r, r->keys[i], &found);
        r->slots[s] = (uint32_t)(i + 1);
        r->used_slots++;
    }
    return true;
}

static int put_file(delta_replay *r, delta_add *a, sv_error *err)
{
    char *key = delta_file_key(a->path, a->has_dv, &a->dv);
    if (!key || !grow_index(r)) {
        free(key);
        delta_add_free(a);
        return sv_fail(err, DELTA_REPLAY_E_NOMEM, 0, "out of memory");
    }
    bool found;
    const size_t s = find_slot(r, key, &found);
    if (found) { /* the same file added again: the newer add wins */
        const uint32_t i = r->slots[s] - 1;
        delta_add_free(&r->files[i]);
        r->files[i] = *a;
        memset(a, 0, sizeof *a);
        free(key);
        return 0;
    }
    if (r->n >= DELTA_REPLAY_MAX_FILES) {
        free(key);
        delta_add_free(a);
        return sv_fail(err, DELTA_REPLAY_E_LIMIT, 0, "log replay: more than %u files", DELTA_REPLAY_MAX_FILES);
    }
    if (!sv_grow((void **)&r->files, &r->cap, r->n + 1, sizeof *r->files, 64, DELTA_REPLAY_MAX_FILES) ||
        !sv_grow((void **)&r->keys, &r->cap_keys, r->n + 1, sizeof *r->keys, 64, DELTA_REPLAY_MAX_FILES)) {
        free(key);
        delta_add_free(a);
        return sv_fail(err, DELTA_REPLAY_E_NOMEM, 0, "out of memory");
    }
    r->files[r->n] = *a;
    memset(a, 0, sizeof *a);
    r->keys[r->n] = key;
    if (r->slots[s] == EMPTY)
        r->used_slots++;
    r->slots[s] = (uint32_t)(++r->n);
    r->live++;
    return 0;
}

static int remove_file(delta_replay *r, const delta_remove *rm, sv_error *err)
{
    if (!r->n_slots)
        return 0;
    char *key = delta_file_key(rm->path, rm->has_dv, &rm->dv);
    if (!key)
        return sv_fail(err, DELTA_REPLAY_E_NOMEM, 0, "out of memory");
    bool found;
    const size_t s = find_slot(r, key, &found);
    free(key);
    if (!found)
        return 0; /* a tombstone of a file already gone (checkpoints carry them) */
    const uint32_t i = r->slots[s] - 1;
    delta_add_free(&r->files[i]);
    free(r->keys[i]);
    r->keys[i] = NULL;
    r->slots[s] = GONE;
    r->live--;
    return 0;
}

int delta_replay_apply(delta_replay *r, delta_action *a, sv_error *err)
{
    int rc = 0;
    switch (a->kind) {
    case DELTA_ACTION_ADD:
        rc = put_file(r, &a->add, err);
        break;
    case DELTA_ACTION_REMOVE:
        rc = remove_file(r, &a->remove, err);
        break;
    case DELTA_ACTION_PROTOCOL:
        delta_protocol_free(&r->protocol);
        r->protocol = a->protocol;
        memset(&a->protocol, 0, sizeof a->protocol);
        r->has_protocol = true;
        break;
    case DELTA_ACTION_METADATA:
        delta_metadata_free(&r->metadata);
        r->metadata = a->metadata;
        memset(&a->metadata, 0, sizeof a->metadata);
        r->has_metadata = true;
        break;
    default:
        break;
    }
    delta_action_free(a);
    return rc;
}

static int by_path(const void *x, const void *y)
{
    const delta_add *a = x, *b = y;
    int c = strcmp(a->path, b->path);
    if (c)
        return c;
    if (a->has_dv != b->has_dv)
        return a->has_dv ? 1 : -1;
    if (!a->has_dv)
        return 0;
    c = strcmp(a->dv.path_or_inline ? a->dv.path_or_inline : "", b->dv.path_or_inline ? b->dv.path_or_inline : "");
    return c ? c : (a->dv.offset > b->dv.offset) - (a->dv.offset < b->dv.offset);
}

static const char *config_value(const delta_metadata *m, const char *key)
{
    for (size_t i = 0; i < m->n_configuration; i++)
        if (strcmp(m->configuration[i].key, key) == 0)
            return m->configuration[i].value;
    return NULL;
}

/* Why a view cannot read rows of this protocol, into s->unsupported. */
static void judge_protocol(delta_snapshot *s)
{
    const delta_protocol *p = &s->protocol;
    if (p->min_reader_version > 3) {
        snprintf(s->unsupported, sizeof s->unsupported, "reader version %d (this sievefs reads up to 3)",
                 p->min_reader_version);
        return;
    }
    for (size_t i = 0; p->min_reader_version == 3 && i < p->n_reader_features; i++) {
        bool known = false;
        for (size_t k = 0; k < sizeof known_reader_features / sizeof *known_reader_features; k++)
            known |= strcmp(p->reader_features[i], known_reader_features[k]) == 0;
        if (!known) {
            snprintf(s->unsupported, sizeof s->unsupported, "reader feature \"%s\"", p->reader_features[i]);
            return;
        }
    }
}

int delta_metadata_schema(const delta_metadata *m, delta_schema *out, sv_error *err)
{
    memset(out, 0, sizeof *out);
    const char *mode_text = config_value(m, "delta.columnMapping.mode");
    const int mode = delta_mapping_mode_parse(mode_text);
    if (mode < 0)
        return sv_fail(err, DELTA_REPLAY_E_INVALID, 0, "column mapping mode \"%s\" is unknown", mode_text);
    if (!m->schema_string) /* metaData without a schema yet (Delta Live Tables): no columns */
        return 0;
    if (delta_schema_parse(m->schema_string, strlen(m->schema_string), (delta_mapping_mode)mode,
                           m->partition_columns, m->n_partition_columns, out, err) != 0) {
        sv_error_prefix(err, "metaData");
        return DELTA_REPLAY_E_INVALID;
    }
    return 0;
}

int delta_replay_finish(delta_replay *r, int64_t version, int64_t timestamp_ms, delta_snapshot **out,
                        sv_error *err)
{
    *out = NULL;
    if (!r->has_protocol)
        return sv_fail(err, DELTA_REPLAY_E_INVALID, 0, "log replay: no protocol action up to version %" PRId64,
                       version);
    if (!r->has_metadata)
        return sv_fail(err, DELTA_REPLAY_E_INVALID, 0, "log replay: no metaData action up to version %" PRId64,
                       version);
    delta_snapshot *s = calloc(1, sizeof *s);
    if (!s)
        return sv_fail(err, DELTA_REPLAY_E_NOMEM, 0, "out of memory");
    s->version = version;
    s->timestamp_ms = timestamp_ms;
    s->protocol = r->protocol;
    s->metadata = r->metadata;
    memset(&r->protocol, 0, sizeof r->protocol);
    memset(&r->metadata, 0, sizeof r->metadata);
    r->has_protocol = r->has_metadata = false;
    judge_protocol(s);
    int rc = delta_metadata_schema(&s->metadata, &s->schema, err);
    if (rc)
        sv_error_prefix(err, "log replay");
    if (rc == 0) {
        s->files = malloc((r->live ? r->live : 1) * sizeof *s->files);
        if (!s->files)
            rc = sv_fail(err, DELTA_REPLAY_E_NOMEM, 0, "out of memory");
    }
    for (size_t i = 0; rc == 0 && i < r->n; i++) {
        if (!r->files[i].path)
            continue;
        s->files[s->n_files++] = r->files[i];
        s->total_bytes += (uint64_t)r->files[i].size;
        memset(&r->files[i], 0, sizeof r->files[i]);
    }
    if (rc) {
        delta_snapshot_free(s);
        return rc;
    }
    qsort(s->files, s->n_files, sizeof *s->files, by_path);
    *out = s;
    return 0;
}

void delta_snapshot_free(delta_snapshot *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n_files; i++)
        delta_add_free(&s->files[i]);
    free(s->files);
    delta_protocol_free(&s->protocol);
    delta_metadata_free(&s->metadata);
    delta_schema_free(&s->schema);
    free(s);
}

const delta_add *delta_snapshot_find(const delta_snapshot *s, const char *path)
{
    size_t lo = 0, hi = s->n_files;
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        const int c = strcmp(s->files[mid].path, path);
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < s->n_files && strcmp(s->files[lo].path, path) == 0 ? &s->files[lo] : NULL;
}

const char *delta_file_partition_value(const delta_add *f, const char *physical, bool *found)
{
    for (size_t i = 0; i < f->n_partition_values; i++) {
        if (strcmp(f->partition_values[i].key, physical) == 0) {
            *found = true;
            return f->partition_values[i].value;
        }
    }
    *found = false;
    return NULL;
}
