#include "decode_error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *pqd_status_name(pqd_status s)
{
    switch (s) {
    case PQD_OK: return "ok";
    case PQD_E_TRUNCATED: return "truncated";
    case PQD_E_CORRUPT: return "corrupt";
    case PQD_E_UNSUPPORTED: return "unsupported";
    case PQD_E_LIMIT: return "limit";
    case PQD_E_RANGE: return "range";
    case PQD_E_MISMATCH: return "mismatch";
    case PQD_E_NOMEM: return "nomem";
    case PQD_E_INVALID: return "invalid";
    }
    return "unknown";
}

pqd_status pqd_fail(pqd_error *err, pqd_status s, size_t offset, const char *fmt, ...)
{
    if (err) {
        err->code = s;
        err->offset = offset;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return s;
}

void pqd_error_prefix(pqd_error *err, const char *what)
{
    if (!err || !what)
        return;
    char tmp[PQD_ERROR_MSG];
    snprintf(tmp, sizeof tmp, "%s: %s", what, err->msg);
    memcpy(err->msg, tmp, sizeof tmp);
}
