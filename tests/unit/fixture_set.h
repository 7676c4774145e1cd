/* Every committed Parquet fixture with the JSON its generator expects of it
 * (tests/fixtures/gen_parquet_fixtures.py writes name.parquet and name.json
 * side by side), for the tests that check files against those facts. */
#ifndef SIEVE_TEST_FIXTURE_SET_H
#define SIEVE_TEST_FIXTURE_SET_H
#include "fixture_files.h"
#include "parquet_meta.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char name[128]; /* the file name without ".parquet" */
    uint8_t *data;
    size_t len;
    json_t *exp;     /* name.json */
    pq_file_meta *m; /* NULL unless the test parses the footer itself */
} fixture;

/* Up to max fixtures into out, in directory order; the committed ones (8 or
 * more) must all be there and readable. Returns how many. */
static inline int fixtures_load(fixture *out, int max)
{
    const char *dir = FIXTURE_DIR;
    DIR *d = opendir(dir);
    cr_assert(d != NULL, "no fixture dir %s", dir);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && n < max) {
        const size_t l = strlen(e->d_name);
        if (l < 9 || strcmp(e->d_name + l - 8, ".parquet") != 0)
            continue;
        fixture *fx = &out[n++];
        memset(fx, 0, sizeof *fx);
        snprintf(fx->name, sizeof fx->name, "%.*s", (int)(l - 8), e->d_name);
        char path[1400];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        fx->data = fixture_read(path, &fx->len);
        snprintf(path, sizeof path, "%s/%s.json", dir, fx->name);
        json_error_t je;
        fx->exp = json_load_file(path, 0, &je);
        cr_assert(fx->exp != NULL, "%s: %s", path, je.text);
    }
    closedir(d);
    cr_assert(n >= 8, "expected the committed fixtures, found %d", n);
    return n;
}

static inline void fixtures_free(fixture *fx, int n)
{
    for (int i = 0; i < n; i++) {
        pq_file_meta_free(fx[i].m);
        json_decref(fx[i].exp);
        free(fx[i].data);
    }
}

/* fixtures_load, each fixture's footer parsed (which must parse). */
static inline int fixtures_load_parsed(fixture *out, int max)
{
    int n = fixtures_load(out, max);
    for (int i = 0; i < n; i++) {
        tc_error err;
        cr_assert_eq(pq_file_meta_from_tail(out[i].data, out[i].len, out[i].len, &out[i].m, NULL, &err), TC_OK,
                     "%s: %s", out[i].name, err.msg);
    }
    return n;
}

/* Every fixture, each footer parsed, in loaded[0..n_loaded) before each
 * test of the suites that name load_fixtures and free_fixtures (as
 * FIXTURE_SUITE(name) does for one suite). */
#define FIXTURES_LOADED_PARSED                                                                                   \
    static fixture loaded[32];                                                                                   \
    static int n_loaded;                                                                                         \
    static void load_fixtures(void) { n_loaded = fixtures_load_parsed(loaded, 32); }                             \
    static void free_fixtures(void) { fixtures_free(loaded, n_loaded); }
#define FIXTURE_SUITE(suite)                                                                                     \
    FIXTURES_LOADED_PARSED                                                                                       \
    TestSuite(suite, .init = load_fixtures, .fini = free_fixtures)

/* The loaded fixture called name (which must be there). */
static inline fixture *fixtures_find(fixture *fx, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(fx[i].name, name) == 0)
            return &fx[i];
    cr_assert_fail("no fixture %s", name);
    return NULL;
}

/* The integer o[key], which must be there. */
static inline int64_t jint(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    cr_assert(json_is_integer(v), "missing integer %s", key);
    return json_integer_value(v);
}

#endif
