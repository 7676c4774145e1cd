/* The name of an enum value from a table indexed by the value, in one place
 * instead of a switch or a bounds check in every name function:
 *
 *   static const char *const names[] = {[PQD_OK] = "ok", [PQD_E_TRUNCATED] = "truncated"};
 *   return SV_NAME(names, s, "unknown");
 */
#ifndef SIEVE_SV_NAME_H
#define SIEVE_SV_NAME_H
#include <stddef.h>

/* names[v], or fallback when v is outside the n entries or names[v] is NULL. */
static inline const char *sv_name(const char *const *names, size_t n, long long v,
                                  const char *fallback)
{
    return v >= 0 && (unsigned long long)v < n && names[v] ? names[v] : fallback;
}

#define SV_NAME(names, v, fallback) \
    sv_name(names, sizeof(names) / sizeof((names)[0]), (v), fallback)

#endif
