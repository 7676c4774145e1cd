/* Reading the committed Parquet fixtures (tests/fixtures/parquet/) from unit
 * tests. SIEVE_SOURCE_DIR is set by CMake for every unit test. */
#ifndef SIEVE_TEST_FIXTURE_FILES_H
#define SIEVE_TEST_FIXTURE_FILES_H
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define FIXTURE_DIR SIEVE_SOURCE_DIR "/tests/fixtures/parquet"

/* Whole file into a malloc'd buffer (fails the test when unreadable). */
static inline uint8_t *fixture_read(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    cr_assert(f != NULL, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    const long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *buf = malloc(n > 0 ? (size_t)n : 1);
    cr_assert(buf && fread(buf, 1, (size_t)n, f) == (size_t)n);
    fclose(f);
    *len = (size_t)n;
    return buf;
}

#endif
