/* Replays fuzz corpus files through LLVMFuzzerTestOneInput without libFuzzer,
 * so that ctest (and sanitizer builds with gcc) exercise every committed input.
 * Usage: fuzz_x FILE|DIR...  (directories are read one level deep). */
#include <dirent.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Far above any committed input; a bigger file is a mistake, not a test. */
#define REPLAY_MAX_INPUT (64u << 20)

static int replay_file(const char *path, size_t *count)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "replay: %s: cannot open: %s\n", path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || st.st_size < 0 || (uint64_t)st.st_size > REPLAY_MAX_INPUT) {
        fprintf(stderr, "replay: %s: cannot stat or larger than %u bytes\n", path,
                REPLAY_MAX_INPUT);
        fclose(f);
        return -1;
    }
    const size_t size = (size_t)st.st_size;
    /* An exact-size heap copy lets ASan catch reads one past the input. */
    uint8_t *data = malloc(size ? size : 1);
    if (!data || fread(data, 1, size, f) != size) {
        fprintf(stderr, "replay: %s: read failed\n", path);
        free(data);
        fclose(f);
        return -1;
    }
    fclose(f);
    LLVMFuzzerTestOneInput(data, size);
    free(data);
    ++*count;
    return 0;
}

static int join_path(char *buf, size_t buflen, const char *dir, const char *name)
{
    const int n = snprintf(buf, buflen, "%s/%s", dir, name);
    return (n < 0 || (size_t)n >= buflen) ? -1 : 0;
}

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Regular files directly inside dir, in name order for reproducible runs. */
static int replay_dir(const char *dir, size_t *count)
{
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "replay: %s: cannot open directory: %s\n", dir, strerror(errno));
        return -1;
    }
    char **names = NULL;
    size_t n_names = 0, cap = 0;
    int rc = 0;
    struct dirent *ent;
    while (rc == 0 && (ent = readdir(d)) != NULL) {
        if (ent->d_name[0] == '.')
            continue; /* ".", "..", and hidden files such as .gitkeep */
        if (n_names == cap) {
            const size_t new_cap = cap ? cap * 2 : 64;
            char **bigger = realloc(names, new_cap * sizeof *names);
            if (!bigger) {
                rc = -1;
                break;
            }
            names = bigger;
            cap = new_cap;
        }
        names[n_names] = strdup(ent->d_name);
        if (!names[n_names])
            rc = -1;
        else
            n_names++;
    }
    closedir(d);
    if (n_names > 0)
        qsort(names, n_names, sizeof *names, compare_names);
    char path[4096];
    for (size_t i = 0; rc == 0 && i < n_names; i++) {
        struct stat st;
        if (join_path(path, sizeof path, dir, names[i]) != 0) {
            fprintf(stderr, "replay: %s/%s: path too long\n", dir, names[i]);
            rc = -1;
        } else if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
            rc = replay_file(path, count);
        }
        /* Subdirectories are not descended into: one level only. */
    }
    for (size_t i = 0; i < n_names; i++)
        free(names[i]);
    free(names);
    if (rc != 0)
        fprintf(stderr, "replay: %s: failed\n", dir);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
        return 2;
    }
    size_t count = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            fprintf(stderr, "replay: %s: %s\n", argv[i], strerror(errno));
            return 1;
        }
        const int rc = S_ISDIR(st.st_mode) ? replay_dir(argv[i], &count)
                                           : replay_file(argv[i], &count);
        if (rc != 0)
            return 1;
    }
    printf("replayed %zu inputs\n", count);
    if (count == 0) {
        fprintf(stderr, "replay: no inputs found\n");
        return 1;
    }
    return 0;
}
