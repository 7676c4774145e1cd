#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>
#include <time.h>

volatile int sv_log_threshold = SV_LOG_WARN;
static bool log_to_syslog;

static const char *const level_names[] = {"error", "warn", "info", "debug", "trace"};

void sv_log_init(sv_log_level level, bool to_syslog)
{
    sv_log_threshold = (int)level;
    log_to_syslog = to_syslog;
    if (to_syslog)
        openlog("sievefs", LOG_PID, LOG_DAEMON);
}

int sv_log_parse_level(const char *name)
{
    for (size_t i = 0; i < sizeof level_names / sizeof level_names[0]; i++)
        if (strcmp(name, level_names[i]) == 0)
            return (int)i;
    return -1;
}

void sv_vformat_line(char *buf, size_t cap, const char *fmt, va_list ap)
{
    vsnprintf(buf, cap, fmt, ap);
    for (char *p = buf; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
}

void sv_log_write(sv_log_level level, const char *file, int line, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    sv_vformat_line(msg, sizeof msg, fmt, ap); /* one log record, one line */
    va_end(ap);
    const char *base = strrchr(file, '/');
    base = base ? base + 1 : file;
    if (log_to_syslog) {
        static const int prio[] = {LOG_ERR, LOG_WARNING, LOG_INFO, LOG_DEBUG, LOG_DEBUG};
        syslog(prio[level], "%s: %s (%s:%d)", level_names[level], msg, base, line);
        return;
    }
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    fprintf(stderr, "%02d:%02d:%02d.%03ld sievefs %s: %s (%s:%d)\n", tm.tm_hour, tm.tm_min,
            tm.tm_sec, ts.tv_nsec / 1000000, level_names[level], msg, base, line);
}
