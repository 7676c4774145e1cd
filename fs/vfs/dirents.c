#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sv_grow.h"
#include "vfs_types.h"

bool sv_dirents_push(sv_dirents *d, const char *name, uint64_t ino, mode_t mode)
{
    if (!sv_grow((void **)&d->entries, &d->cap, d->n + 1, sizeof *d->entries, 16, SIZE_MAX / 2))
        return false;
    char *n = strdup(name);
    if (!n)
        return false;
    d->entries[d->n++] = (sv_dirent){n, ino, mode};
    return true;
}

void sv_dirents_free(sv_dirents *d)
{
    for (size_t i = 0; i < d->n; i++)
        free(d->entries[i].name);
    free(d->entries);
    memset(d, 0, sizeof *d);
}
