/* MOUNTPOINT/.sieve: the control directory (hidden from the root listing,
 * opened by path) and .sieve/stats, a JSON document of the process-wide
 * counters. Its hints/ and views/ belong to the views (view.h). */
#ifndef SIEVE_CONTROL_H
#define SIEVE_CONTROL_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "plain.h"
#include "vfs_types.h"

/* Whether ino is .sieve or .sieve/stats. */
bool control_owns(uint64_t ino);
void control_attr(const plain_fs *p, uint64_t ino, sv_attr *out);
/* A name directly under .sieve that this module serves ("stats"): 0 or -ENOENT. */
int control_lookup(const plain_fs *p, const char *name, sv_attr *out);
int control_readdir(sv_dirents *out);
/* .sieve/stats as JSON text (malloc'd; *len its length), or NULL when out of memory. */
char *control_render_stats(const plain_fs *p, size_t *len);

#endif
