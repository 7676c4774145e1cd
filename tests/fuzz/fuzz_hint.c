/* Fuzz the hint parser (JSON, rows, paths, the predicate inside). */
#include "hint.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void check(bool ok)
{
    if (!ok)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sv_error e;
    memset(&e, 0, sizeof e);
    sv_hint *h = hint_parse((const char *)data, size, &e);
    const char *err = e.msg;
    if (!h) {
        check(memchr(err, '\0', sizeof e.msg) != NULL && e.code != HINT_OK);
        check(err[0] != '\0'); /* every rejection says why */
        return 0;
    }
    for (size_t i = 0; i < h->n_files; i++) {
        const hint_file_rows *fr = &h->files[i];
        check(fr->path[0] != '/' && fr->path[0] != '\0');
        size_t len = strlen(fr->path);
        check(strcmp(fr->path, "..") != 0 && strncmp(fr->path, "../", 3) != 0 &&
              strstr(fr->path, "/../") == NULL && strstr(fr->path, "//") == NULL &&
              !(len >= 3 && strcmp(fr->path + len - 3, "/..") == 0));
        if (i)
            check(strcmp(h->files[i - 1].path, fr->path) < 0);
        check(hint_rows_for(h, fr->path) == fr);
        for (size_t k = 0; k < fr->ranges.n; k++) {
            check(fr->ranges.r[k].start < fr->ranges.r[k].end);
            if (k)
                check(fr->ranges.r[k - 1].end < fr->ranges.r[k].start);
        }
    }
    check((h->where == NULL) == (h->pred == NULL));
    hint_free(h);
    return 0;
}
