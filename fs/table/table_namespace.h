/* MOUNTPOINT/.sieve/tables: one directory per table the mount has seen, at
 * its path relative to the mount (the directories above it too), holding
 * snapshot.json (table_json.h); the mount root's own table, if it is one,
 * has .sieve/tables/snapshot.json. A path not listed yet can be looked up
 * all the same (every directory of the mount can): a table is seen once its
 * path is asked for, so a driver can open TABLE/snapshot.json directly.
 *
 * Inodes: .sieve/tables is SV_INO_TABLES; below it a directory is
 * SV_INO_TABLE_NS_FLAG | the plain-path inode of the directory it stands
 * for, and a snapshot.json that | TABLE_NS_SNAPSHOT. */
#ifndef SIEVE_TABLE_NAMESPACE_H
#define SIEVE_TABLE_NAMESPACE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "plain.h"
#include "table_registry.h"
#include "vfs_types.h"

#define TABLE_NS_SNAPSHOT (1ull << 60)
#define TABLE_NS_SNAPSHOT_NAME "snapshot.json"

bool tables_ns_owns(uint64_t ino);
/* parent: SV_INO_TABLES or an inode tables_ns_owns. */
int tables_ns_lookup(table_registry *r, plain_fs *p, uint64_t parent, const char *name, sv_attr *out,
                     const sv_cancel *tok);
int tables_ns_getattr(table_registry *r, plain_fs *p, uint64_t ino, sv_attr *out);
int tables_ns_readdir(table_registry *r, plain_fs *p, uint64_t ino, sv_dirents *out, const sv_cancel *tok);
/* A snapshot.json's document, loaded now (malloc'd text). */
int tables_ns_open(table_registry *r, plain_fs *p, uint64_t ino, char **text, size_t *len, const sv_cancel *tok);

#endif
