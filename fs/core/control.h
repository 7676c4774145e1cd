/* MOUNTPOINT/.sieve: the control directory (hidden from the root listing,
 * opened by path), .sieve/stats, a JSON document of the process-wide
 * counters, and .sieve/profile, the connection profile and the warmup's
 * state (fs/warmup/link_profile.h). Its hints/ and views/ belong to the
 * views (view.h). */
#ifndef SIEVE_CONTROL_H
#define SIEVE_CONTROL_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "link_profile.h"
#include "plain.h"
#include "vfs_types.h"

/* Whether ino is .sieve, .sieve/stats or .sieve/profile. */
bool control_owns(uint64_t ino);
/* lp may be NULL (no profile: state none). */
void control_attr(const plain_fs *p, link_profile *lp, uint64_t ino, sv_attr *out);
/* A name directly under .sieve that this module serves ("stats", "profile"): 0 or -ENOENT. */
int control_lookup(const plain_fs *p, link_profile *lp, const char *name, sv_attr *out);
int control_readdir(sv_dirents *out);
/* .sieve/stats as JSON text (malloc'd; *len its length), or NULL when out of memory. */
char *control_render_stats(const plain_fs *p, size_t *len);
/* .sieve/profile as JSON text: state, age_s (null without a profile) and
 * the profile's figures (null when not measured); now_s is Unix seconds. */
char *control_render_profile(link_profile *lp, int64_t now_s, size_t *len);

#endif
