/* Levelled logging to stderr or syslog. The level check happens before any
 * formatting, so disabled levels cost one comparison. Never pass credentials
 * or signatures to these macros. */
#ifndef SIEVE_LOG_H
#define SIEVE_LOG_H
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

typedef enum {
    SV_LOG_ERROR = 0,
    SV_LOG_WARN = 1,
    SV_LOG_INFO = 2,
    SV_LOG_DEBUG = 3,
    SV_LOG_TRACE = 4,
} sv_log_level;

/* Current threshold; written once at start-up, read everywhere. */
extern volatile int sv_log_threshold;

void sv_log_init(sv_log_level level, bool to_syslog);
/* "error", "warn", "info", "debug", "trace" -> level; -1 if unknown. */
int sv_log_parse_level(const char *name);
/* fmt formatted into buf (cut to cap), its line breaks made spaces: a
 * message that stays one line whatever its arguments hold. */
void sv_vformat_line(char *buf, size_t cap, const char *fmt, va_list ap) __attribute__((format(printf, 3, 0)));

void sv_log_write(sv_log_level level, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#define SV_LOG(lvl, ...)                                                   \
    do {                                                                   \
        if ((int)(lvl) <= sv_log_threshold)                                \
            sv_log_write((lvl), __FILE__, __LINE__, __VA_ARGS__);          \
    } while (0)
#define log_error(...) SV_LOG(SV_LOG_ERROR, __VA_ARGS__)
#define log_warn(...)  SV_LOG(SV_LOG_WARN, __VA_ARGS__)
#define log_info(...)  SV_LOG(SV_LOG_INFO, __VA_ARGS__)
#define log_debug(...) SV_LOG(SV_LOG_DEBUG, __VA_ARGS__)
#define log_trace(...) SV_LOG(SV_LOG_TRACE, __VA_ARGS__)

#endif
