/* Local-file and S3 byte sources; see byte_source.h. */
#include "byte_source.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"

int byte_source_read(byte_source *src, uint64_t off, size_t len, void *buf, sv_error *err)
{
    if (off > src->size || len > src->size - off) {
        sv_fail(err, EINVAL, 0, "read of %zu bytes at offset %llu runs past the end (%llu bytes)",
                 len, (unsigned long long)off, (unsigned long long)src->size);
        return -1;
    }
    if (len == 0)
        return 0;
    log_debug("read %zu bytes at %llu", len, (unsigned long long)off);
    src->n_reads++;
    src->bytes_read += len;
    return src->read(src, off, len, buf, err);
}

void byte_source_close(byte_source *src)
{
    if (src)
        src->close(src);
}

/* ---------------- local file ---------------- */

typedef struct {
    byte_source base;
    int fd;
} file_source;

static int file_read(byte_source *s, uint64_t off, size_t len, void *buf, sv_error *err)
{
    file_source *f = (file_source *)s;
    size_t done = 0;
    while (done < len) {
        ssize_t n = pread(f->fd, (char *)buf + done, len - done, (off_t)(off + done));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            sv_fail(err, errno, 0, "read at offset %llu: %s", (unsigned long long)(off + done),
                     strerror(errno));
            return -1;
        }
        if (n == 0) {
            sv_fail(err, EIO, 0, "file ended at offset %llu, before the %llu bytes it had when opened "
                     "(truncated while reading?)",
                     (unsigned long long)(off + done), (unsigned long long)s->size);
            return -1;
        }
        done += (size_t)n;
    }
    return 0;
}

static void file_close(byte_source *s)
{
    file_source *f = (file_source *)s;
    close(f->fd);
    free(f);
}

byte_source *byte_source_open_file(const char *path, sv_error *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        sv_fail(err, errno, 0, "%s", strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        sv_fail(err, errno, 0, "%s", strerror(errno));
        close(fd);
        return NULL;
    }
    if (S_ISDIR(st.st_mode)) {
        sv_fail(err, EISDIR, 0, "is a directory, not a Parquet file");
        close(fd);
        return NULL;
    }
    if (!S_ISREG(st.st_mode)) {
        sv_fail(err, EINVAL, 0, "not a regular file");
        close(fd);
        return NULL;
    }
    file_source *f = calloc(1, sizeof *f);
    if (!f) {
        sv_fail(err, ENOMEM, 0, "out of memory");
        close(fd);
        return NULL;
    }
    f->fd = fd;
    f->base.size = (uint64_t)st.st_size;
    f->base.read = file_read;
    f->base.close = file_close;
    return &f->base;
}

/* ---------------- S3 object ---------------- */

typedef struct {
    byte_source base;
    cli_s3 *s3;
    char *key;
    char *where;
    char etag[S3_ETAG_MAX + 1];
} s3_source;

static int s3_read(byte_source *s, uint64_t off, size_t len, void *buf, sv_error *err)
{
    s3_source *o = (s3_source *)s;
    sv_error e = {0};
    store_status st = store_get(s3_client_store(o->s3->client), o->key, o->etag[0] ? o->etag : NULL, off, len,
                                buf, &e);
    const char *detail = e.msg;
    if (st == STORE_OK)
        return 0;
    sv_error why;
    cli_s3_explain(o->s3, st, o->where, "reading", "read", detail, &why);
    sv_fail(err, st, 0, "bytes %llu-%llu: %s", (unsigned long long)off,
             (unsigned long long)(off + len - 1), why.msg);
    return -1;
}

static void s3_close(byte_source *s)
{
    s3_source *o = (s3_source *)s;
    free(o->key);
    free(o->where);
    free(o);
}

byte_source *byte_source_open_s3(cli_s3 *s, const char *key, const char *where, sv_error *err)
{
    store_object_info info;
    sv_error e = {0};
    store_status st = store_head(s3_client_store(s->client), key, &info, &e);
    const char *detail = e.msg;
    if (st != STORE_OK) {
        cli_s3_explain(s, st, where, "reading", "read", detail, err);
        return NULL;
    }
    s3_source *o = calloc(1, sizeof *o);
    if (o) {
        o->key = strdup(key);
        o->where = strdup(where);
    }
    if (!o || !o->key || !o->where) {
        if (o)
            s3_close(&o->base);
        sv_fail(err, ENOMEM, 0, "out of memory");
        return NULL;
    }
    o->s3 = s;
    snprintf(o->etag, sizeof o->etag, "%s", info.etag);
    o->base.size = info.size;
    o->base.read = s3_read;
    o->base.close = s3_close;
    return &o->base;
}
