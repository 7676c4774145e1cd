#define FUSE_USE_VERSION 314
#include "fuse_adapter.h"

#include <errno.h>
#include <fcntl.h>
#include <fuse_lowlevel.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "mountinfo.h"

typedef struct {
    sv_fs *fs;
    const sv_fuse_config *cfg;
    struct fuse_session *se; /* set before the loop starts, read-only after */
} adapter;

static sv_fs *fs_of(fuse_req_t req)
{
    return ((adapter *)fuse_req_userdata(req))->fs;
}

static void to_stat(const sv_attr *a, struct stat *st)
{
    memset(st, 0, sizeof *st);
    st->st_ino = a->ino;
    st->st_mode = a->mode;
    st->st_nlink = a->nlink;
    st->st_size = (off_t)a->size;
    st->st_blksize = 1 << 20;
    st->st_blocks = (blkcnt_t)((a->size + 511) / 512);
    st->st_uid = getuid();
    st->st_gid = getgid();
    st->st_mtim.tv_sec = a->mtime;
    st->st_ctim.tv_sec = a->mtime;
    st->st_atim.tv_sec = a->mtime;
}

static void op_init(void *userdata, struct fuse_conn_info *conn)
{
    adapter *ad = userdata;
    conn->max_readahead = ad->cfg->max_readahead;
    /* libfuse derives max_pages (and so the largest read) from max_write. */
    conn->max_write = 1u << 20;
    conn->want |= FUSE_CAP_ASYNC_READ;
    /* O_TRUNC arrives with the open of a hint, so a truncate without an open
     * writer can be refused (hints are immutable once judged). */
    conn->want |= FUSE_CAP_ATOMIC_O_TRUNC;
    /* O_DIRECT reads as synchronous requests: the kernel waits for an async
     * one uninterruptibly and never sends INTERRUPT for it, so a reader
     * blocked on a stalled fetch could not even be SIGKILLed. */
    conn->want &= ~FUSE_CAP_ASYNC_DIO;
    /* Inodes are immutable object versions: never drop their pages on mtime checks. */
    conn->want &= ~FUSE_CAP_AUTO_INVAL_DATA;
}

static void entry_of(const sv_attr *a, struct fuse_entry_param *e)
{
    memset(e, 0, sizeof *e);
    e->ino = a->ino;
    e->generation = 1;
    e->attr_timeout = a->timeout;
    e->entry_timeout = a->entry_timeout > 0 && a->entry_timeout < a->timeout ? a->entry_timeout : a->timeout;
    to_stat(a, &e->attr);
}

/* The kernel interrupts a request when its reader gets a signal; libfuse
 * calls this on the worker that received the INTERRUPT, under the request's
 * lock (so it never runs after the read unregistered it). */
static void on_interrupt(fuse_req_t req, void *data)
{
    (void)req;
    sv_cancel_fire(data, EINTR);
}

static void op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
    sv_attr a;
    /* A lookup may wait for a listing: bounded and interruptible like a read. */
    sv_cancel tok;
    sv_fs_cancel_init(fs_of(req), &tok);
    fuse_req_interrupt_func(req, on_interrupt, &tok);
    int r = sv_fs_lookup(fs_of(req), parent, name, &a, &tok);
    fuse_req_interrupt_func(req, NULL, NULL); /* tok goes out of scope */
    if (r < 0) {
        fuse_reply_err(req, -r);
        return;
    }
    struct fuse_entry_param e;
    entry_of(&a, &e);
    fuse_reply_entry(req, &e);
}

static void op_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
    (void)ino;
    (void)nlookup;
    fuse_reply_none(req);
}

/* Reply to getattr and setattr with the node's attributes. */
static void reply_attr(fuse_req_t req, fuse_ino_t ino)
{
    sv_attr a;
    int r = sv_fs_getattr(fs_of(req), ino, &a);
    if (r < 0) {
        fuse_reply_err(req, -r);
        return;
    }
    struct stat st;
    to_stat(&a, &st);
    fuse_reply_attr(req, &st, a.timeout);
}

static void op_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    (void)fi;
    reply_attr(req, ino);
}

static void op_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    sv_dir *d;
    sv_cancel tok; /* as for a lookup */
    sv_fs_cancel_init(fs_of(req), &tok);
    fuse_req_interrupt_func(req, on_interrupt, &tok);
    int r = sv_fs_opendir(fs_of(req), ino, &d, &tok);
    fuse_req_interrupt_func(req, NULL, NULL);
    if (r < 0) {
        fuse_reply_err(req, -r);
        return;
    }
    fi->fh = (uint64_t)(uintptr_t)d;
    fi->cache_readdir = 0;
    if (fuse_reply_open(req, fi) == -ENOENT)
        sv_fs_releasedir(fs_of(req), d); /* the opener was interrupted */
}

static void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
                       struct fuse_file_info *fi)
{
    (void)ino;
    sv_dir *d = (sv_dir *)(uintptr_t)fi->fh;
    char *buf = malloc(size);
    if (!buf) {
        fuse_reply_err(req, ENOMEM);
        return;
    }
    size_t used = 0;
    const sv_dirents *list = sv_dir_entries(d);
    for (size_t i = (size_t)off; i < list->n; i++) {
        struct stat st;
        memset(&st, 0, sizeof st);
        st.st_ino = list->entries[i].ino;
        st.st_mode = list->entries[i].mode;
        size_t need = fuse_add_direntry(req, buf + used, size - used, list->entries[i].name, &st,
                                        (off_t)(i + 1));
        if (need > size - used)
            break;
        used += need;
    }
    fuse_reply_buf(req, buf, used);
    free(buf);
}

static void op_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    (void)ino;
    sv_fs_releasedir(fs_of(req), (sv_dir *)(uintptr_t)fi->fh);
    fuse_reply_err(req, 0);
}

static void op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    sv_file *f;
    sv_open_flags of;
    /* An open may wait for a Parquet footer: interruptible like a read. */
    sv_cancel tok;
    sv_fs_cancel_init(fs_of(req), &tok);
    fuse_req_interrupt_func(req, on_interrupt, &tok);
    int r = sv_fs_open(fs_of(req), ino, fi->flags, &f, &of, &tok);
    fuse_req_interrupt_func(req, NULL, NULL); /* tok goes out of scope */
    if (r < 0) {
        fuse_reply_err(req, -r);
        return;
    }
    fi->fh = (uint64_t)(uintptr_t)f;
    fi->keep_cache = of.keep_cache;
    fi->direct_io = of.direct_io;
    /* Only a hint being written needs FLUSH (its verdict is close()'s result). */
    fi->noflush = (fi->flags & O_ACCMODE) == O_RDONLY;
    if (fuse_reply_open(req, fi) == -ENOENT)
        sv_fs_release(fs_of(req), f);
}

static void op_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
                      struct fuse_file_info *fi)
{
    (void)mode;
    sv_file *f;
    sv_attr a;
    int r = sv_fs_create_file(fs_of(req), parent, name, fi->flags, &f, &a);
    if (r < 0) {
        fuse_reply_err(req, -r);
        return;
    }
    struct fuse_entry_param e;
    entry_of(&a, &e);
    fi->fh = (uint64_t)(uintptr_t)f;
    fi->direct_io = 1;
    if (fuse_reply_create(req, &e, fi) == -ENOENT)
        sv_fs_release(fs_of(req), f);
}

static void op_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off,
                     struct fuse_file_info *fi)
{
    (void)ino;
    if (off < 0) {
        fuse_reply_err(req, EINVAL);
        return;
    }
    ssize_t n = sv_fs_write(fs_of(req), (sv_file *)(uintptr_t)fi->fh, (uint64_t)off, buf, size);
    if (n < 0)
        fuse_reply_err(req, (int)-n);
    else
        fuse_reply_write(req, (size_t)n);
}

static void op_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    (void)ino;
    int r = sv_fs_flush(fs_of(req), (sv_file *)(uintptr_t)fi->fh);
    fuse_reply_err(req, r < 0 ? -r : 0);
}

static void op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
                       struct fuse_file_info *fi)
{
    sv_fs *fs = fs_of(req);
    /* Only hint files take attribute changes: a truncate is part of writing
     * one (through its open writer), times (touch) are accepted and
     * ignored; modes and owners are refused. */
    if (!sv_fs_is_writable(fs, ino)) {
        fuse_reply_err(req, EROFS);
        return;
    }
    if (to_set & (FUSE_SET_ATTR_MODE | FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)) {
        fuse_reply_err(req, EPERM); /* a hint's mode and owner are the mount's */
        return;
    }
    if (to_set & FUSE_SET_ATTR_SIZE) {
        int r = sv_fs_truncate(fs, ino, fi ? (sv_file *)(uintptr_t)fi->fh : NULL, (uint64_t)attr->st_size);
        if (r < 0) {
            fuse_reply_err(req, -r);
            return;
        }
    }
    /* Times are not settable; touch(1) on a hint is accepted and ignored. */
    reply_attr(req, ino);
}

/* The mount is read-write only so that hints can be written; everything
 * else that would change the namespace is refused as on a read-only mount. */
static void op_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
    (void)parent, (void)name, (void)mode;
    fuse_reply_err(req, EROFS);
}

static void op_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, dev_t rdev)
{
    (void)parent, (void)name, (void)mode, (void)rdev;
    fuse_reply_err(req, EROFS);
}

static void op_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
    (void)parent, (void)name;
    fuse_reply_err(req, EROFS);
}

static void op_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
                      const char *newname, unsigned int flags)
{
    (void)parent, (void)name, (void)newparent, (void)newname, (void)flags;
    fuse_reply_err(req, EROFS);
}

static void op_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name)
{
    (void)link, (void)parent, (void)name;
    fuse_reply_err(req, EROFS);
}

static void op_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname)
{
    (void)ino, (void)newparent, (void)newname;
    fuse_reply_err(req, EROFS);
}

static void op_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
    adapter *ad = fuse_req_userdata(req);
    sv_stale_entry stale;
    int r = sv_fs_unlink(ad->fs, parent, name, &stale);
    /* Before the reply, or the caller could stat the stale name before the
     * kernel forgot it. Not a deadlock: the entry is in another directory
     * than this unlink's (libfuse: only operations on the entry's own parent
     * or inode must not wait for it), and no lock is held here. */
    if (stale.parent) {
        int e = fuse_lowlevel_notify_inval_entry(ad->se, stale.parent, stale.name, strlen(stale.name));
        if (e != 0 && e != -ENOENT)
            log_debug("cannot invalidate the entry %s: %s", stale.name, strerror(-e));
    }
    fuse_reply_err(req, r < 0 ? -r : 0);
}

static void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
                    struct fuse_file_info *fi)
{
    (void)ino;
    if (off < 0) {
        fuse_reply_err(req, EINVAL);
        return;
    }
    /* Reply straight from the pinned cache blocks: no intermediate copy. */
    struct iovec iov[SV_READ_MAX_IOV];
    size_t niov = 0;
    sv_read_pins pins;
    sv_fs *fs = fs_of(req);
    sv_cancel tok;
    sv_fs_cancel_init(fs, &tok);
    fuse_req_interrupt_func(req, on_interrupt, &tok); /* runs at once if already interrupted */
    ssize_t n = sv_fs_read_pinned(fs, (sv_file *)(uintptr_t)fi->fh, (uint64_t)off, size, iov,
                                  SV_READ_MAX_IOV, &niov, &pins, &tok);
    fuse_req_interrupt_func(req, NULL, NULL); /* tok goes out of scope */
    if (n < 0) {
        fuse_reply_err(req, (int)-n);
        return;
    }
    if (niov == 0)
        fuse_reply_buf(req, NULL, 0);
    else
        fuse_reply_iov(req, iov, (int)niov);
    sv_fs_read_release(fs, &pins);
}

static void op_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    (void)ino;
    sv_fs_release(fs_of(req), (sv_file *)(uintptr_t)fi->fh);
    fuse_reply_err(req, 0);
}

static void op_statfs(fuse_req_t req, fuse_ino_t ino)
{
    (void)ino;
    struct statvfs sv;
    memset(&sv, 0, sizeof sv);
    sv.f_bsize = 4096;
    sv.f_frsize = 4096;
    sv.f_namemax = 255;
    fuse_reply_statfs(req, &sv);
}

/* getxattr and listxattr share the size-query protocol: size 0 asks for the length. */
static void reply_xattr(fuse_req_t req, size_t size,
                        ssize_t (*get)(sv_fs *, uint64_t, const char *, char *, size_t),
                        fuse_ino_t ino, const char *name)
{
    char *buf = size ? malloc(size) : NULL;
    if (size && !buf) {
        fuse_reply_err(req, ENOMEM);
        return;
    }
    ssize_t n = get(fs_of(req), ino, name, buf, size);
    if (n < 0)
        fuse_reply_err(req, (int)-n);
    else if (size == 0)
        fuse_reply_xattr(req, (size_t)n);
    else
        fuse_reply_buf(req, buf, (size_t)n);
    free(buf);
}

static ssize_t list_xattr_names(sv_fs *fs, uint64_t ino, const char *unused, char *buf, size_t size)
{
    (void)unused;
    return sv_fs_listxattr(fs, ino, buf, size);
}

static void op_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
    reply_xattr(req, size, sv_fs_getxattr, ino, name);
}

static void op_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
    reply_xattr(req, size, list_xattr_names, ino, NULL);
}

static const struct fuse_lowlevel_ops ops = {
    .init = op_init,
    .lookup = op_lookup,
    .forget = op_forget,
    .getattr = op_getattr,
    .opendir = op_opendir,
    .readdir = op_readdir,
    .releasedir = op_releasedir,
    .open = op_open,
    .create = op_create,
    .read = op_read,
    .write = op_write,
    .flush = op_flush,
    .setattr = op_setattr,
    .unlink = op_unlink,
    .mkdir = op_mkdir,
    .mknod = op_mknod,
    .rmdir = op_rmdir,
    .rename = op_rename,
    .symlink = op_symlink,
    .link = op_link,
    .release = op_release,
    .statfs = op_statfs,
    .getxattr = op_getxattr,
    .listxattr = op_listxattr,
};

/* The kernel caps a FUSE mount's readahead at its default (128 KiB), which also
 * caps buffered read requests at that size. Raise it through the mount's
 * backing device in sysfs; this needs root and is skipped quietly otherwise. */
static void set_kernel_readahead(const char *mountpoint, unsigned bytes)
{
    unsigned major, minor;
    if (!bytes || !mountinfo_find(mountpoint, &major, &minor))
        return;
    char path[128];
    snprintf(path, sizeof path, "/sys/class/bdi/%u:%u/read_ahead_kb", major, minor);
    FILE *f = fopen(path, "w");
    if (!f) {
        log_debug("cannot raise readahead via %s: %s", path, strerror(errno));
        return;
    }
    fprintf(f, "%u\n", bytes / 1024);
    if (fclose(f) != 0)
        log_debug("cannot raise readahead via %s: %s", path, strerror(errno));
}

/* The session and filesystem the exit signals stop. A signal handler can
 * only reach them through static storage; set while serving. */
static struct fuse_session *volatile serving_se;
static sv_fs *volatile serving_fs;
static pthread_t serving_thread; /* runs the session loop; set before the handlers */

/* How long the workers get after an exit signal before the mount is detached
 * and the daemon exits anyway. Every read gives up within a wait slice, but
 * a listing or HEAD waits inside the store, which no token reaches. */
#define EXIT_GRACE_S 5

static sem_t exit_sem;           /* posted by each exit signal and by the end of serving */
static atomic_bool serving_over; /* the session loop has returned */

/* SIGTERM, SIGINT, SIGHUP: end the session loop and make every waiting read
 * give up at once. libfuse's own handler only ends the loop, which then
 * joins each worker after its request completes: a worker waiting on a
 * stalled fetch kept the daemon up for minutes. All of it is
 * async-signal-safe: atomic stores, sem_post, pthread_kill. */
static void on_exit_signal(int sig)
{
    (void)sig;
    sv_fs *fs = serving_fs;
    struct fuse_session *se = serving_se;
    if (fs)
        sv_fs_shutdown(fs);
    if (se)
        fuse_session_exit(se);
    sem_post(&exit_sem); /* async-signal-safe: the watchdog counts from here */
    /* The loop's thread sleeps until a signal interrupts it or a worker
     * ends; if another thread (the store's) took this one, pass it on. */
    if (se && !pthread_equal(pthread_self(), serving_thread))
        pthread_kill(serving_thread, sig);
}

static const int exit_signals[] = {SIGTERM, SIGINT, SIGHUP, SIGPIPE};
static struct sigaction saved_actions[sizeof exit_signals / sizeof exit_signals[0]];

/* Install the handlers (saving what was there), or put the saved ones back. */
static int set_exit_handlers(bool on)
{
    int rc = 0;
    for (size_t i = 0; i < sizeof exit_signals / sizeof exit_signals[0]; i++) {
        if (!on) {
            sigaction(exit_signals[i], &saved_actions[i], NULL);
            continue;
        }
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sigemptyset(&sa.sa_mask);
        /* A reader gone mid-reply must not kill the daemon (libfuse's handlers do the same). */
        sa.sa_handler = exit_signals[i] == SIGPIPE ? SIG_IGN : on_exit_signal;
        if (sigaction(exit_signals[i], &sa, &saved_actions[i]) != 0)
            rc = -1;
    }
    return rc;
}

/* Detach the mount, as fuse_session_unmount would: umount2 as root, else
 * the setuid helper (given a second, it is quick). */
static void force_detach(const char *mountpoint)
{
    if (umount2(mountpoint, MNT_DETACH) == 0 || errno != EPERM)
        return;
    char *argv[] = {"fusermount3", "-u", "-z", "-q", (char *)mountpoint, NULL};
    extern char **environ;
    pid_t pid;
    if (posix_spawnp(&pid, "fusermount3", NULL, NULL, argv, environ) != 0)
        return;
    for (int i = 0; i < 20 && waitpid(pid, NULL, WNOHANG) == 0; i++)
        nanosleep(&(struct timespec){0, 50 * 1000 * 1000}, NULL);
}

/* Waits for an exit signal (or the end of serving: no deadline, it is the
 * event itself), then gives the session EXIT_GRACE_S to end. If it has not,
 * a worker is stuck where no token reaches: detach the mount and exit, so
 * that SIGTERM ends the mount in seconds whatever is in flight. */
static void *exit_watchdog(void *ud)
{
    const char *mountpoint = ud;
    while (sem_wait(&exit_sem) != 0 && errno == EINTR)
        ;
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += EXIT_GRACE_S;
    while (!atomic_load(&serving_over)) {
        if (sem_clockwait(&exit_sem, CLOCK_MONOTONIC, &until) == 0 || errno != ETIMEDOUT)
            continue; /* another signal, the end of serving, or EINTR: look again */
        if (atomic_load(&serving_over))
            break;
        log_warn("%s: requests still running %d s after the exit signal or unmount (waiting in the store): "
                 "detaching the mount and exiting", mountpoint, EXIT_GRACE_S);
        force_detach(mountpoint);
        _exit(1);
    }
    return NULL;
}

/* The watchdog takes no exit signal itself: they go to the loop's thread. */
static int start_watchdog(pthread_t *t, const char *mountpoint)
{
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &block, &old);
    int r = pthread_create(t, NULL, exit_watchdog, (void *)mountpoint);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return r;
}

/* Tells the kernel to forget names whose object a listing found replaced or
 * removed, so the next open by path looks up the new version. Its own
 * thread: an invalidation waits for the directory's lock, which a request in
 * flight in that directory may hold until a worker answers it. It is joined
 * before serving counts as over, so the exit watchdog covers that wait too;
 * after an unmount the kernel answers at once. */
static atomic_bool notifier_stop;

static void *stale_notifier(void *arg)
{
    adapter *ad = arg;
    bool shut = false;
    while (!atomic_load(&notifier_stop)) {
        /* An unmount (fusermount3 -u) ends the session, whose loop then joins
         * each worker after its request completes: a worker waiting on a
         * stalled fetch (a readahead, which no reader can interrupt) would
         * keep the daemon up until --read-timeout. Give up every wait, as an
         * exit signal does, and let the watchdog bound what no token reaches. */
        if (!shut && fuse_session_exited(ad->se)) {
            shut = true;
            sv_fs_shutdown(ad->fs);
            sem_post(&exit_sem);
        }
        sv_stale_entry stale[32];
        size_t n = sv_fs_take_stale(ad->fs, stale, sizeof stale / sizeof stale[0]);
        for (size_t i = 0; i < n && !atomic_load(&notifier_stop); i++) {
            int e = fuse_lowlevel_notify_inval_entry(ad->se, stale[i].parent, stale[i].name,
                                                     strlen(stale[i].name));
            if (e != 0 && e != -ENOENT)
                log_debug("cannot invalidate the entry %s: %s", stale[i].name, strerror(-e));
            else if (e == 0)
                log_debug("invalidated the entry %s (its object changed)", stale[i].name);
        }
        if (n < sizeof stale / sizeof stale[0]) {
            struct timespec pause = {0, 200 * 1000000L};
            nanosleep(&pause, NULL);
        }
    }
    return NULL;
}

int sv_fuse_serve(sv_fs *fs, const sv_fuse_config *cfg, sv_error *err)
{
    adapter ad = {fs, cfg, NULL};
    char opts[4096];
    snprintf(opts, sizeof opts, "rw,default_permissions,fsname=%s,subtype=sievefs%s%s",
             cfg->fsname, cfg->extra_opts ? "," : "", cfg->extra_opts ? cfg->extra_opts : "");
    char *argv[] = {"sievefs", "-o", opts, cfg->debug ? "-d" : NULL, NULL};
    struct fuse_args args = FUSE_ARGS_INIT(cfg->debug ? 4 : 3, argv);
    struct fuse_session *se = fuse_session_new(&args, &ops, sizeof ops, &ad);
    fuse_opt_free_args(&args);
    ad.se = se;
    if (!se) {
        sv_fail(err, EIO, 0, "cannot create the FUSE session (bad -o options '%s'?)",
                 cfg->extra_opts ? cfg->extra_opts : "");
        return -1;
    }
    serving_thread = pthread_self();
    serving_fs = fs;
    serving_se = se;
    atomic_store(&serving_over, false);
    sem_init(&exit_sem, 0, 0);
    if (set_exit_handlers(true) != 0) {
        set_exit_handlers(false);
        serving_se = NULL;
        serving_fs = NULL;
        fuse_session_destroy(se);
        sem_destroy(&exit_sem);
        sv_fail(err, EIO, 0, "cannot install signal handlers");
        return -1;
    }
    if (fuse_session_mount(se, cfg->mountpoint) != 0) {
        set_exit_handlers(false);
        serving_se = NULL;
        serving_fs = NULL;
        fuse_session_destroy(se);
        sem_destroy(&exit_sem);
        sv_fail(err, EIO, 0, "cannot mount on %s (see messages above)", cfg->mountpoint);
        return -1;
    }
    pthread_t watchdog;
    bool have_watchdog = start_watchdog(&watchdog, cfg->mountpoint) == 0;
    if (!have_watchdog)
        log_warn("cannot start the exit watchdog: SIGTERM waits for requests still in the store");
    log_info("mounted on %s", cfg->mountpoint);
    set_kernel_readahead(cfg->mountpoint, cfg->max_readahead);
    if (cfg->on_mounted)
        cfg->on_mounted(cfg->ud);
    pthread_t notifier;
    atomic_store(&notifier_stop, false);
    bool have_notifier = pthread_create(&notifier, NULL, stale_notifier, &ad) == 0;
    if (!have_notifier)
        log_warn("cannot start the entry notifier: a replaced object is seen by path only after --dir-ttl");
    struct fuse_loop_config *lc = fuse_loop_cfg_create();
    fuse_loop_cfg_set_max_threads(lc, cfg->max_threads ? cfg->max_threads : 16);
    fuse_loop_cfg_set_clone_fd(lc, 0);
    int rc = fuse_session_loop_mt(se, lc);
    fuse_loop_cfg_destroy(lc);
    atomic_store(&notifier_stop, true);
    if (have_notifier)
        pthread_join(notifier, NULL);
    atomic_store(&serving_over, true);
    sem_post(&exit_sem);
    if (have_watchdog)
        pthread_join(watchdog, NULL); /* it returns at once: serving is over */
    fuse_session_unmount(se);
    set_exit_handlers(false);
    serving_se = NULL;
    serving_fs = NULL;
    sem_destroy(&exit_sem);
    fuse_session_destroy(se);
    log_info("unmounted %s", cfg->mountpoint);
    return rc < 0 ? -1 : 0;
}
