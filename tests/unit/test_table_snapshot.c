/* Delta log replay end to end, through the plain path over an in-memory
 * store: every version of every fixture table (tests/fixtures/delta/,
 * written by deltalake and Spark) gives the active files, sizes, partition
 * values, record counts and deletion vectors their writers' own readers
 * report (<table>.expected.json), and each file's deletion vector deletes
 * the rows those readers found deleted. */
#include "table_snapshot.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fixture_files.h"
#include "fs.h"
#include "log.h"
#include "mem_store.h"
#include "table_fixture.h"
#include "table_registry.h"
#include "table_json.h"

#define DELTA_DIR SIEVE_SOURCE_DIR "/tests/fixtures/delta"

static mem_store *m;
static plain_fs *p;
static sv_stats stats;

/* Every file under dir into the store, keyed prefix/relative path. */
static void put_tree(const char *dir, const char *prefix)
{
    DIR *d = opendir(dir);
    cr_assert_not_null(d, "%s", dir);
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.' && (e->d_name[1] == '\0' || (e->d_name[1] == '.' && e->d_name[2] == '\0')))
            continue;
        char path[4096], key[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        snprintf(key, sizeof key, "%s%s%s", prefix, prefix[0] ? "/" : "", e->d_name);
        struct stat st;
        cr_assert(stat(path, &st) == 0);
        if (S_ISDIR(st.st_mode)) {
            put_tree(path, key);
            continue;
        }
        size_t len;
        uint8_t *data = fixture_read(path, &len);
        cr_assert(mem_store_put(m, key, data, len));
        free(data);
    }
    closedir(d);
}

static void setup(void)
{
    sv_log_init(SV_LOG_ERROR, false);
    m = mem_store_create();
    p = table_fixture_plain(m, &stats, 60000);
    cr_assert_not_null(p);
}

static void teardown(void)
{
    plain_fs_destroy(p);
    store_destroy(mem_store_base(m));
}

TestSuite(table_snapshot, .init = setup, .fini = teardown);

static uint64_t dir_ino(const char *name)
{
    tree_attr ta;
    cr_assert_eq(tree_lookup(p->tree, TREE_ROOT_INO, name, &ta, NULL), STORE_OK, "%s", name);
    return ta.ino;
}

static json_t *expected(const char *table)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.expected.json", DELTA_DIR, table);
    json_error_t jerr;
    json_t *doc = json_load_file(path, 0, &jerr);
    cr_assert_not_null(doc, "%s: %s", path, jerr.text);
    return doc;
}

/* The snapshot's file with path, or NULL. */
static const delta_add *file_at(const delta_snapshot *s, const char *path)
{
    return delta_snapshot_find(s, path);
}

/* One version of one table against what its writers' readers saw. */
static void check_version(const char *table, uint64_t dir, const char *version, json_t *facts)
{
    table_version_spec spec = {.kind = DELTA_VERSION_AT, .version = strtoll(version, NULL, 10)};
    delta_snapshot *s = NULL;
    sv_error err = {0};
    cr_assert_eq(table_snapshot_load(p, dir, &spec, &s, &err, NULL), 0, "%s v%s: %s", table, version, err.msg);
    cr_expect_eq(s->version, spec.version);
    cr_expect_str_eq(s->unsupported, "", "%s v%s: %s", table, version, s->unsupported);
    json_t *files = json_object_get(facts, "files");
    cr_expect_eq(s->n_files, json_array_size(files), "%s v%s: %zu files, expected %zu", table, version, s->n_files,
                 json_array_size(files));
    size_t i;
    json_t *f;
    json_array_foreach(files, i, f)
    {
        const char *path = json_string_value(json_object_get(f, "path"));
        const delta_add *a = file_at(s, path);
        cr_assert_not_null(a, "%s v%s: %s is not active", table, version, path);
        cr_expect_eq(a->size, json_integer_value(json_object_get(f, "size")), "%s v%s: %s size", table, version,
                     path);
        json_t *nr = json_object_get(f, "num_records");
        if (json_is_integer(nr))
            cr_expect_eq(table_file_num_records(a), json_integer_value(nr), "%s: %s records", table, path);
        json_t *pv = json_object_get(f, "partition_values");
        const char *key;
        json_t *val;
        json_object_foreach(pv, key, val)
        {
            bool found;
            const char *got = delta_file_partition_value(a, key, &found);
            if (json_is_null(val))
                cr_expect_null(got, "%s: %s partition %s should be null, is %s", table, path, key, got);
            else
                cr_expect(got && strcmp(got, json_string_value(val)) == 0, "%s: %s partition %s = %s, expected %s",
                          table, path, key, got ? got : "(null)", json_string_value(val));
        }
        json_t *card = json_object_get(f, "dv_cardinality");
        cr_expect_eq(a->has_dv, json_is_integer(card), "%s v%s: %s deletion vector", table, version, path);
        if (a->has_dv && json_is_integer(card))
            cr_expect_eq(a->dv.cardinality, json_integer_value(card));
    }
    /* The logical and physical names of the schema at this version. */
    json_t *schema = json_object_get(facts, "schema");
    json_array_foreach(schema, i, f)
    {
        const char *logical = json_string_value(json_object_get(f, "logical"));
        const delta_field *fd = delta_schema_find(&s->schema, logical);
        cr_assert_not_null(fd, "%s v%s: no field %s", table, version, logical);
        cr_expect_str_eq(fd->physical, json_string_value(json_object_get(f, "physical")), "%s v%s: %s", table,
                         version, logical);
    }
    delta_snapshot_free(s);
}

static void check_table(const char *table)
{
    put_tree(DELTA_DIR, "");
    json_t *doc = expected(table);
    uint64_t dir = dir_ino(table);
    const char *version;
    json_t *facts;
    json_t *versions = json_object_get(doc, "versions");
    cr_assert(json_object_size(versions) > 0);
    json_object_foreach(versions, version, facts)
    {
        check_version(table, dir, version, facts);
    }
    /* the latest version by default */
    delta_snapshot *s = NULL;
    sv_error err = {0};
    cr_assert_eq(table_snapshot_load(p, dir, NULL, &s, &err, NULL), 0, "%s", err.msg);
    cr_expect_eq(s->version, json_integer_value(json_object_get(doc, "latest_version")));
    delta_snapshot_free(s);
    json_decref(doc);
}

Test(table_snapshot, rs_partitioned) { check_table("rs_partitioned"); }
Test(table_snapshot, rs_compaction) { check_table("rs_compaction"); }
Test(table_snapshot, spark_dv) { check_table("spark_dv"); }
Test(table_snapshot, spark_v2_checkpoint) { check_table("spark_v2_checkpoint"); }
Test(table_snapshot, spark_multipart) { check_table("spark_multipart"); }
Test(table_snapshot, spark_colmap_name) { check_table("spark_colmap_name"); }
Test(table_snapshot, spark_colmap_id) { check_table("spark_colmap_id"); }
Test(table_snapshot, spark_compaction) { check_table("spark_compaction"); }

/* Every deletion vector of spark_dv's latest version deletes exactly the
 * rows Spark found deleted. */
Test(table_snapshot, deletion_vectors_delete_the_rows_spark_deleted)
{
    put_tree(DELTA_DIR, "");
    json_t *doc = expected("spark_dv");
    uint64_t dir = dir_ino("spark_dv");
    json_t *versions = json_object_get(doc, "versions");
    const char *version;
    json_t *facts;
    size_t checked = 0;
    json_object_foreach(versions, version, facts)
    {
        table_version_spec spec = {.kind = DELTA_VERSION_AT, .version = strtoll(version, NULL, 10)};
        delta_snapshot *s = NULL;
        sv_error err = {0};
        cr_assert_eq(table_snapshot_load(p, dir, &spec, &s, &err, NULL), 0, "%s", err.msg);
        size_t i;
        json_t *f;
        json_array_foreach(json_object_get(facts, "files"), i, f)
        {
            json_t *deleted = json_object_get(f, "deleted_row_indexes");
            const delta_add *a = file_at(s, json_string_value(json_object_get(f, "path")));
            if (!a || !a->has_dv || !json_is_array(deleted))
                continue;
            dv_bitmap *b = NULL;
            if (a->dv.storage_type == 'i') {
                cr_assert_eq(dv_bitmap_from_inline(&a->dv, &b, &err), 0, "%s", err.msg);
            } else {
                char *rel = NULL;
                uint64_t off, len;
                cr_assert_eq(dv_relative_path(&a->dv, &rel, &err), 0, "%s", err.msg);
                cr_assert_eq(dv_file_range(&a->dv, &off, &len, &err), 0, "%s", err.msg);
                tree_attr ta;
                cr_assert_eq(tree_lookup(p->tree, dir, rel, &ta, NULL), STORE_OK, "%s", rel);
                object_ref o;
                cr_assert_eq(plain_bind_object(p, ta.ino, &o), 0);
                uint8_t *buf = malloc(len);
                cr_assert_eq(object_read(p->io, &o, off, (size_t)len, buf, NULL), (ssize_t)len);
                cr_assert_eq(dv_bitmap_from_file_bytes(buf, (size_t)len, &a->dv, &b, &err), 0, "%s", err.msg);
                free(buf);
                free(rel);
                object_ref_free(&o);
            }
            cr_expect_eq(dv_bitmap_cardinality(b), json_array_size(deleted));
            size_t k;
            json_t *row;
            json_array_foreach(deleted, k, row)
                cr_expect(dv_bitmap_contains(b, (uint64_t)json_integer_value(row)), "v%s: row %lld", version,
                          (long long)json_integer_value(row));
            dv_bitmap_free(b);
            checked++;
        }
        delta_snapshot_free(s);
    }
    cr_expect_gt(checked, 3, "deletion vectors checked: %zu", checked);
    json_decref(doc);
}

/* snapshot.json of a table: its files and logical partition names. */
Test(table_snapshot, snapshot_json_names_files_by_logical_partition)
{
    put_tree(DELTA_DIR, "");
    delta_snapshot *s = NULL;
    sv_error err = {0};
    cr_assert_eq(table_snapshot_load(p, dir_ino("spark_colmap_name"), NULL, &s, &err, NULL), 0, "%s", err.msg);
    size_t len = 0;
    char *text = table_snapshot_json(s, "spark_colmap_name", &len);
    cr_assert_not_null(text);
    json_t *doc = json_loadb(text, len, 0, NULL);
    cr_assert_not_null(doc);
    cr_expect_eq(json_integer_value(json_object_get(doc, "num_files")), (json_int_t)s->n_files);
    cr_expect_str_eq(json_string_value(json_object_get(doc, "column_mapping")), "name");
    json_t *f0 = json_array_get(json_object_get(doc, "files"), 0);
    cr_expect_not_null(json_object_get(json_object_get(f0, "partition_values"), "region"), "keyed by logical name");
    json_decref(doc);
    free(text);
    delta_snapshot_free(s);
}

/* A directory without a log, a gap in the log, and a version past the
 * latest are errors with messages, never a snapshot. */
Test(table_snapshot, broken_logs_are_errors)
{
    put_tree(DELTA_DIR "/rs_compaction", "gap");
    cr_assert(mem_store_put(m, "plain/x.parquet", "x", 1));
    delta_snapshot *s = NULL;
    sv_error err = {0};
    cr_expect_eq(table_snapshot_load(p, dir_ino("plain"), NULL, &s, &err, NULL), TABLE_E_NOT_A_TABLE, "%s", err.msg);
    table_version_spec far = {.kind = DELTA_VERSION_AT, .version = 99};
    cr_expect_neq(table_snapshot_load(p, dir_ino("gap"), &far, &s, &err, NULL), 0);
    cr_expect(strstr(err.msg, "99") != NULL, "%s", err.msg);
    cr_expect_null(s);
}

/* What the warmup may sample: files of a table's current snapshot, and
 * files under no table; not files the table has removed. */
Test(table_snapshot, only_current_files_are_sampled)
{
    put_tree(DELTA_DIR, "");
    cr_assert(mem_store_put(m, "loose/data.parquet", "x", 1));
    json_t *doc = expected("spark_dv");
    char lv[32];
    snprintf(lv, sizeof lv, "%lld", (long long)json_integer_value(json_object_get(doc, "latest_version")));
    json_t *latest = json_object_get(json_object_get(doc, "versions"), lv);
    const char *current = json_string_value(json_object_get(json_array_get(json_object_get(latest, "files"), 0), "path"));
    const char *removed = NULL;
    const char *ver;
    json_t *facts;
    json_object_foreach(json_object_get(doc, "versions"), ver, facts)
    {
        size_t i;
        json_t *f;
        json_array_foreach(json_object_get(facts, "files"), i, f)
        {
            const char *p0 = json_string_value(json_object_get(f, "path"));
            bool live = false;
            size_t k;
            json_t *g;
            json_array_foreach(json_object_get(latest, "files"), k, g)
                live |= strcmp(p0, json_string_value(json_object_get(g, "path"))) == 0;
            if (!live)
                removed = p0;
        }
    }
    cr_assert(current && removed, "the fixture has a current and a removed file");
    sv_fs_config cfg;
    sv_fs_config_defaults(&cfg);
    sv_fs *fs = sv_fs_create(mem_store_base(m), &stats, &cfg);
    cr_assert_not_null(fs);
    char key[4096];
    snprintf(key, sizeof key, "spark_dv/%s", current);
    cr_expect(sv_fs_key_is_current(fs, key, NULL), "%s", key);
    snprintf(key, sizeof key, "spark_dv/%s", removed);
    cr_expect_not(sv_fs_key_is_current(fs, key, NULL), "%s", key);
    cr_expect(sv_fs_key_is_current(fs, "loose/data.parquet", NULL));
    sv_fs_destroy(fs);
    json_decref(doc);
}
