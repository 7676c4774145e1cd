/* The only code that touches libfuse: translates low-level FUSE requests into
 * sv_fs calls and their negative errno results into replies. */
#ifndef SIEVE_FUSE_ADAPTER_H
#define SIEVE_FUSE_ADAPTER_H
#include "fs.h"

typedef struct {
    const char *mountpoint;
    const char *fsname;       /* shown in /proc/mounts */
    const char *extra_opts;   /* user's -o options, or NULL */
    unsigned max_threads;
    unsigned max_readahead;   /* bytes */
    bool debug;               /* libfuse debug output */
    /* Called once the mount is in place (before serving); may be NULL. */
    void (*on_mounted)(void *ud);
    void *ud;
} sv_fuse_config;

/* Mount and serve until unmounted or SIGTERM/SIGINT/SIGHUP. Returns 0 on a
 * clean unmount; on failure to mount, returns -1 with err saying why. */
int sv_fuse_serve(sv_fs *fs, const sv_fuse_config *cfg, sv_error *err);

#endif
