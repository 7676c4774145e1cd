/* JSON documents sievefs serves (.sieve/stats, NAME.stats), written with
 * jansson, the one JSON writer of the project. */
#ifndef SIEVE_SV_JSON_H
#define SIEVE_SV_JSON_H
#include <jansson.h>
#include <stddef.h>

/* doc as text with a final newline (malloc'd; *len its length), keys in
 * insertion order; NULL when doc is NULL or out of memory. Takes doc's
 * reference. */
char *sv_json_text(json_t *doc, size_t flags, size_t *len);

#endif
