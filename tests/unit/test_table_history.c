/* A table's history (fs/table/table_history.c) through the plain path over an
 * in-memory store: which schema epochs each file was active in, partition
 * values that change between adds, logs that start at a checkpoint, gaps,
 * and extension as commits arrive. */
#include "table_history.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fixture_files.h"
#include "log.h"
#include "mem_store.h"
#include "table_fixture.h"
#include "table_snapshot.h"

static mem_store *m;
static plain_fs *p;
static sv_stats stats;

static void setup(void)
{
    sv_log_init(SV_LOG_ERROR, false);
    m = mem_store_create();
    p = table_fixture_plain(m, &stats, 0);
    cr_assert_not_null(p);
}

static void teardown(void)
{
    plain_fs_destroy(p);
    store_destroy(mem_store_base(m));
}

TestSuite(table_history, .init = setup, .fini = teardown);

static uint64_t dir_ino(const char *name)
{
    tree_attr ta;
    cr_assert_eq(tree_lookup(p->tree, TREE_ROOT_INO, name, &ta, NULL), STORE_OK, "%s", name);
    return ta.ino;
}

/* A schema of two long columns named a and b (physical pa and pb, ids 1
 * and 2) in mode name, partitioned by q (physical pq, id 3). */
static const char *schema_with(const char *a, const char *pa, const char *b, const char *pb)
{
    static char buf[2048];
    snprintf(buf, sizeof buf,
             "{\\\"type\\\":\\\"struct\\\",\\\"fields\\\":["
             "{\\\"name\\\":\\\"%s\\\",\\\"type\\\":\\\"long\\\",\\\"nullable\\\":true,\\\"metadata\\\":{"
             "\\\"delta.columnMapping.id\\\":1,\\\"delta.columnMapping.physicalName\\\":\\\"%s\\\"}},"
             "{\\\"name\\\":\\\"%s\\\",\\\"type\\\":\\\"long\\\",\\\"nullable\\\":true,\\\"metadata\\\":{"
             "\\\"delta.columnMapping.id\\\":2,\\\"delta.columnMapping.physicalName\\\":\\\"%s\\\"}},"
             "{\\\"name\\\":\\\"q\\\",\\\"type\\\":\\\"string\\\",\\\"nullable\\\":true,\\\"metadata\\\":{"
             "\\\"delta.columnMapping.id\\\":3,\\\"delta.columnMapping.physicalName\\\":\\\"pq\\\"}}]}",
             a, pa, b, pb);
    return buf;
}

static char *metadata(const char *schema)
{
    char *s = NULL;
    cr_assert(asprintf(&s,
                       "{\"metaData\":{\"id\":\"t\",\"format\":{\"provider\":\"parquet\",\"options\":{}},"
                       "\"schemaString\":\"%s\",\"partitionColumns\":[\"q\"],"
                       "\"configuration\":{\"delta.columnMapping.mode\":\"name\"},\"createdTime\":1}}\n",
                       schema) > 0);
    return s;
}

/* ",\"deletionVector\":{...}" of an inline vector dv, or "" (static). */
static const char *dv_field(const char *dv)
{
    static char text[256];
    text[0] = '\0';
    if (dv)
        snprintf(text, sizeof text,
                 ",\"deletionVector\":{\"storageType\":\"i\",\"pathOrInlineDv\":\"%s\",\"sizeInBytes\":1,"
                 "\"cardinality\":1}",
                 dv);
    return text;
}

static char *add(const char *path, const char *q, const char *dv)
{
    char *s = NULL;
    cr_assert(asprintf(&s,
                       "{\"add\":{\"path\":\"%s\",\"partitionValues\":{\"pq\":\"%s\"},\"size\":1,"
                       "\"modificationTime\":1,\"dataChange\":true%s}}\n",
                       path, q, dv_field(dv)) > 0);
    return s;
}

static char *rm(const char *path, const char *dv)
{
    char *s = NULL;
    cr_assert(asprintf(&s, "{\"remove\":{\"path\":\"%s\",\"deletionTimestamp\":1,\"dataChange\":true%s}}\n", path,
                       dv_field(dv)) > 0);
    return s;
}

/* Commit version v of table t, its lines given (each freed). */
static void commit(const char *t, int v, int n, ...)
{
    char key[256];
    snprintf(key, sizeof key, "%s/_delta_log/%020d.json", t, v);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (v == 0)
        fputs("{\"protocol\":{\"minReaderVersion\":2,\"minWriterVersion\":5}}\n", f);
    va_list ap;
    va_start(ap, n);
    for (int i = 0; i < n; i++) {
        char *line = va_arg(ap, char *);
        fputs(line, f);
        free(line);
    }
    va_end(ap);
    fclose(f);
    cr_assert(mem_store_put(m, key, (const uint8_t *)text, len));
    free(text);
}

/* Accepts a schema when `a_name` names the field of physical name `physical`. */
typedef struct {
    const char *a_name;
    const char *physical;
    int calls;
} binding;

static bool binds(void *ctx, const delta_schema *s)
{
    binding *b = ctx;
    b->calls++;
    const delta_field *f = s ? delta_schema_find(s, b->a_name) : NULL;
    return f && strcmp(f->physical, b->physical) == 0;
}

static history_verdict check(table_history *h, const char *path, const char *q, binding *b)
{
    delta_kv pv = {.key = "pq", .value = (char *)q};
    char why[256];
    return table_history_check(h, path, &pv, 1, binds, b, why, sizeof why);
}

Test(table_history, a_file_is_judged_by_the_epochs_it_was_active_in)
{
    commit("t", 0, 4, metadata(schema_with("k", "pa", "x", "pb")), add("f1", "a", NULL), add("f2", "b", NULL),
           add("gone", "a", NULL));
    /* a deletion vector added to f1 (remove and add): f1 stays active; gone is removed */
    commit("t", 1, 3, rm("f1", NULL), add("f1", "a", "abcde"), rm("gone", NULL));
    /* k and x swap names: k now reads pb */
    commit("t", 2, 1, metadata(schema_with("x", "pa", "k", "pb")));
    commit("t", 3, 1, add("f3", "a", NULL));
    table_history *h = table_history_new();
    sv_error err = {0};
    cr_assert_eq(table_history_extend(h, p, dir_ino("t"), 3, &err, NULL), 0, "%s", err.msg);
    cr_assert_eq(table_history_last_version(h), 3);
    binding as_pa = {"k", "pa", 0}, as_pb = {"k", "pb", 0};
    /* f1 and f2 were active before and after the swap */
    cr_assert_eq(check(h, "f1", "a", &as_pa), HISTORY_SCHEMA);
    cr_assert_eq(check(h, "f1", "a", &as_pb), HISTORY_SCHEMA);
    cr_assert_eq(check(h, "f2", "b", &as_pa), HISTORY_SCHEMA);
    /* f3 only after it, gone only before it */
    cr_assert_eq(check(h, "f3", "a", &as_pb), HISTORY_SAFE);
    cr_assert_eq(check(h, "f3", "a", &as_pa), HISTORY_SCHEMA);
    cr_assert_eq(check(h, "gone", "a", &as_pa), HISTORY_SAFE);
    cr_assert_eq(check(h, "gone", "a", &as_pb), HISTORY_SCHEMA);
    cr_assert_eq(check(h, "never", "a", &as_pa), HISTORY_UNKNOWN_FILE);
    table_history_free(h);
}

Test(table_history, a_metadata_that_changes_nothing_is_the_same_epoch)
{
    commit("t", 0, 2, metadata(schema_with("k", "pa", "x", "pb")), add("f1", "a", NULL));
    commit("t", 1, 1, metadata(schema_with("k", "pa", "x", "pb")));
    table_history *h = table_history_new();
    sv_error err = {0};
    cr_assert_eq(table_history_extend(h, p, dir_ino("t"), 1, &err, NULL), 0, "%s", err.msg);
    binding b = {"k", "pa", 0};
    cr_assert_eq(check(h, "f1", "a", &b), HISTORY_SAFE);
    cr_assert_eq(b.calls, 1, "one epoch judged, not %d", b.calls);
    table_history_free(h);
}

Test(table_history, partition_values_that_change_between_adds)
{
    commit("t", 0, 3, metadata(schema_with("k", "pa", "x", "pb")), add("f1", "a", NULL), add("f2", "a", NULL));
    commit("t", 1, 2, rm("f1", NULL), add("f1", "b", NULL)); /* the same path, another partition */
    table_history *h = table_history_new();
    sv_error err = {0};
    cr_assert_eq(table_history_extend(h, p, dir_ino("t"), 1, &err, NULL), 0, "%s", err.msg);
    binding b = {"k", "pa", 0};
    cr_assert_eq(check(h, "f1", "b", &b), HISTORY_PARTITION_VALUES);
    cr_assert_eq(check(h, "f2", "a", &b), HISTORY_SAFE);
    cr_assert_eq(check(h, "f2", "b", &b), HISTORY_PARTITION_VALUES); /* not what the history says */
    table_history_free(h);
}

Test(table_history, extends_as_commits_arrive)
{
    commit("t", 0, 2, metadata(schema_with("k", "pa", "x", "pb")), add("f1", "a", NULL));
    table_history *h = table_history_new();
    sv_error err = {0};
    cr_assert_eq(table_history_extend(h, p, dir_ino("t"), 0, &err, NULL), 0, "%s", err.msg);
    binding b = {"k", "pa", 0};
    cr_assert_eq(check(h, "f1", "a", &b), HISTORY_SAFE);
    commit("t", 1, 1, metadata(schema_with("old_k", "pa", "k", "pb")));
    cr_assert_eq(table_history_extend(h, p, dir_ino("t"), 1, &err, NULL), 0, "%s", err.msg);
    cr_assert_eq(table_history_last_version(h), 1);
    cr_assert_eq(check(h, "f1", "a", &b), HISTORY_SCHEMA);
    table_history_free(h);
}

Test(table_history, a_missing_commit_without_a_checkpoint_leaves_it_incomplete)
{
    commit("t", 0, 2, metadata(schema_with("k", "pa", "x", "pb")), add("f1", "a", NULL));
    commit("t", 2, 1, add("f2", "a", NULL));
    table_history *h = table_history_new();
    sv_error err = {0};
    cr_assert_eq(table_history_extend(h, p, dir_ino("t"), 2, &err, NULL), 0, "%s", err.msg);
    binding b = {"k", "pa", 0};
    delta_kv pv = {.key = "pq", .value = "a"};
    char why[256];
    cr_assert_eq(table_history_check(h, "f1", &pv, 1, binds, &b, why, sizeof why), HISTORY_INCOMPLETE);
    cr_assert(strstr(why, "commit 1 is missing"), "%s", why);
    table_history_free(h);
}

/* Every file under dir into the store, keyed prefix/relative path, but
 * commits before version `from`. */
static void put_tree_from(const char *dir, const char *prefix, int from)
{
    DIR *d = opendir(dir);
    cr_assert_not_null(d, "%s", dir);
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        char path[4096], key[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        snprintf(key, sizeof key, "%s/%s", prefix, e->d_name);
        struct stat st;
        cr_assert(stat(path, &st) == 0);
        if (S_ISDIR(st.st_mode)) {
            put_tree_from(path, key, from);
            continue;
        }
        if (strlen(e->d_name) == 25 && strcmp(e->d_name + 20, ".json") == 0 && atoi(e->d_name) < from)
            continue;
        size_t len;
        uint8_t *data = fixture_read(path, &len);
        cr_assert(mem_store_put(m, key, data, len));
        free(data);
    }
    closedir(d);
}

static bool any_schema(void *ctx, const delta_schema *s)
{
    (void)ctx;
    return s != NULL;
}

Test(table_history, a_log_whose_first_commits_are_gone_starts_at_its_oldest_checkpoint)
{
    /* spark_dv keeps checkpoints at 2, 4, ...: without commits 0 to 3, a
     * reader starts at checkpoint 2, and goes on past the missing commit 3
     * from checkpoint 4 */
    put_tree_from(SIEVE_SOURCE_DIR "/tests/fixtures/delta/spark_dv", "t", 4);
    delta_snapshot *s = NULL;
    sv_error err = {0};
    table_version_spec at4 = {.kind = DELTA_VERSION_AT, .version = 4};
    cr_assert_eq(table_snapshot_load(p, dir_ino("t"), &at4, &s, &err, NULL), 0, "%s", err.msg);
    cr_assert_gt(s->n_files, 0);
    table_history *h = table_history_new();
    cr_assert_eq(table_history_extend(h, p, dir_ino("t"), 11, &err, NULL), 0, "%s", err.msg);
    cr_assert_eq(table_history_last_version(h), 11);
    for (size_t i = 0; i < s->n_files; i++) {
        const delta_add *f = &s->files[i];
        history_verdict v =
            table_history_check(h, f->path, f->partition_values, f->n_partition_values, any_schema, NULL, NULL, 0);
        cr_assert(v == HISTORY_SAFE, "%s: %d", f->path, v);
    }
    delta_snapshot_free(s);
    table_history_free(h);
}
