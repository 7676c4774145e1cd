/* Look up a mount point in the mountinfo file of procfs (no FUSE, no stat of the
 * mount itself, so it is safe to call before the daemon serves requests). */
#ifndef SIEVE_MOUNTINFO_H
#define SIEVE_MOUNTINFO_H
#include <stdbool.h>

/* True if `path` (canonical) is a mount point; its device numbers go to
 * major and minor when those are non-NULL. */
bool mountinfo_find(const char *path, unsigned *major, unsigned *minor);

/* Parse one mountinfo line: the mount point (octal escapes decoded) into
 * mp (capacity mpcap) and the device numbers. Returns false on a malformed line. */
bool mountinfo_parse_line(const char *line, char *mp, unsigned long mpcap, unsigned *major,
                          unsigned *minor);

#endif
