/* The one error shape of every module: a status code (the module's own enum,
 * 0 = success), the byte offset into the input the error is about (0 when it
 * is not about an input buffer), and a one-line message that names the object
 * and the cause, e.g. "t1/part-0.parquet: footer: list<RowGroup>[2]: truncated".
 *
 *   return sv_fail(err, PQD_E_TRUNCATED, pos, "def levels: run at byte %zu", pos);
 *
 *   if (parse_footer(buf, len, &meta, err) != 0) {
 *       sv_error_prefix(err, "%s", key);   -> "t1/part-0.parquet: footer: ..."
 *       return err->code;
 *   }
 *
 * Functions take a possibly NULL sv_error * and fill it when they fail. */
#ifndef SIEVE_SV_ERROR_H
#define SIEVE_SV_ERROR_H
#include <stddef.h>

#define SV_ERROR_MSG 1024 /* the longest messages (credential advice with paths) are a few hundred bytes */

typedef struct {
    int code;               /* the module's status; 0 = no error */
    size_t offset;          /* byte offset into the parsed input; 0 if none */
    char msg[SV_ERROR_MSG]; /* NUL-terminated, one line */
} sv_error;

/* Fill err (when not NULL) and return code. */
int sv_fail(sv_error *err, int code, size_t offset, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Prefix err->msg with the formatted text and ": " (a caller adding the
 * object a lower layer's error is about). No-op when err is NULL. */
void sv_error_prefix(sv_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Clear err to "no error" (when not NULL). */
void sv_error_clear(sv_error *err);

/* Evaluate expr (a status, 0 = success) and return it from the calling
 * function when it is not 0. */
#define SV_TRY(expr)      \
    do {                  \
        int rc_ = (expr); \
        if (rc_)          \
            return rc_;   \
    } while (0)

#endif
