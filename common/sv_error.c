#include "sv_error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int sv_fail(sv_error *err, int code, size_t offset, const char *fmt, ...)
{
    if (err) {
        err->code = code;
        err->offset = offset;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return code;
}

void sv_error_prefix(sv_error *err, const char *fmt, ...)
{
    if (!err)
        return;
    char head[SV_ERROR_MSG];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(head, sizeof head, fmt, ap);
    va_end(ap);
    char tmp[SV_ERROR_MSG];
    snprintf(tmp, sizeof tmp, "%s: %s", head, err->msg);
    memcpy(err->msg, tmp, sizeof tmp);
}

void sv_error_clear(sv_error *err)
{
    if (err)
        memset(err, 0, sizeof *err);
}
