/* Whole files on local disk; see sv_file.h. */
#include "sv_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

int sv_write_file_atomic(const char *path, const void *buf, size_t len, unsigned seq)
{
    char tmp[4400];
    if (snprintf(tmp, sizeof tmp, "%s.tmp.%ld.%u", path, (long)getpid(), seq) >= (int)sizeof tmp)
        return ENAMETOOLONG;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return errno;
    int err = 0;
    for (size_t done = 0; !err && done < len;) {
        ssize_t n = write(fd, (const uint8_t *)buf + done, len - done);
        if (n > 0)
            done += (size_t)n;
        else if (n < 0 && errno != EINTR)
            err = errno;
        else if (n == 0)
            err = EIO;
    }
    if (close(fd) != 0 && !err)
        err = errno;
    if (!err && rename(tmp, path) != 0)
        err = errno;
    if (err)
        unlink(tmp);
    return err;
}

uint8_t *sv_read_file(const char *path, size_t max, size_t *len_out)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    struct stat st;
    uint8_t *buf = NULL;
    size_t len = 0;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 && (uint64_t)st.st_size <= max) {
        len = (size_t)st.st_size;
        buf = malloc(len);
        for (size_t done = 0; buf && done < len;) {
            ssize_t n = read(fd, buf + done, len - done);
            if (n > 0) {
                done += (size_t)n;
            } else if (n == 0 || errno != EINTR) {
                free(buf);
                buf = NULL;
            }
        }
    }
    close(fd);
    *len_out = buf ? len : 0;
    return buf;
}
