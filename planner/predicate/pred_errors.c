/* The predicate's status names and error helpers; see predicate.h. */
#include "predicate_internal.h"

#include "sv_name.h"

#include <stdarg.h>
#include <stdio.h>

const char *pred_status_name(pred_status s)
{
    static const char *const names[] = {
        [PRED_OK] = "ok", [PRED_E_SYNTAX] = "syntax", [PRED_E_COLUMN] = "column",
        [PRED_E_TYPE] = "type", [PRED_E_LIMIT] = "limit", [PRED_E_NOMEM] = "nomem",
        [PRED_E_INVALID] = "invalid",
    };
    return SV_NAME(names, s, "unknown");
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
