#include "sv_json.h"

#include <stdlib.h>
#include <string.h>

char *sv_json_text(json_t *doc, size_t flags, size_t *len)
{
    *len = 0;
    char *text = doc ? json_dumps(doc, flags | JSON_PRESERVE_ORDER) : NULL;
    json_decref(doc);
    if (!text)
        return NULL;
    size_t n = strlen(text);
    char *out = realloc(text, n + 2);
    if (!out) {
        free(text);
        return NULL;
    }
    out[n] = '\n';
    out[n + 1] = '\0';
    *len = n + 1;
    return out;
}
