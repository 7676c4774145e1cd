/* The predicate's status names and error helpers; see predicate.h. */
#include "predicate_internal.h"

#include <stdarg.h>
#include <stdio.h>

const char *pred_status_name(pred_status s)
{
    switch (s) {
    case PRED_OK: return "ok";
    case PRED_E_SYNTAX: return "syntax";
    case PRED_E_COLUMN: return "column";
    case PRED_E_TYPE: return "type";
    case PRED_E_LIMIT: return "limit";
    case PRED_E_NOMEM: return "nomem";
    case PRED_E_INVALID: return "invalid";
    }
    return "unknown";
}

pred_status pred_fail_at(pred_error *err, pred_status s, size_t pos, const char *fmt, ...)
{
    if (err) {
        char detail[SV_ERROR_MSG];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(detail, sizeof detail, fmt, ap);
        va_end(ap);
        sv_fail(err, s, pos, "at %zu: %s", pos, detail);
    }
    return s;
}

pred_status pred_nomem(pred_error *err)
{
    return sv_fail(err, PRED_E_NOMEM, 0, "out of memory");
}
