/* What both renderings of `sievefs inspect` print alike: footer strings made
 * valid UTF-8 (and, for the text, printable), ConvertedType names. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "inspect_internal.h"

const char *ins_converted_name(int32_t ct)
{
    static const char *const n[] = {
        "UTF8",        "MAP",         "MAP_KEY_VALUE",    "LIST",   "ENUM",   "DECIMAL",
        "DATE",        "TIME_MILLIS", "TIME_MICROS",      "TIMESTAMP_MILLIS",
        "TIMESTAMP_MICROS",           "UINT_8",           "UINT_16", "UINT_32", "UINT_64",
        "INT_8",       "INT_16",      "INT_32",           "INT_64", "JSON",   "BSON",
        "INTERVAL"};
    if (ct == PQ_CT_NONE)
        return "NONE";
    return ct >= 0 && ct < (int32_t)(sizeof n / sizeof n[0]) ? n[ct] : "UNKNOWN";
}

/* Length of the valid UTF-8 sequence at s (n bytes left), 0 if invalid. */
static size_t utf8_seq(const uint8_t *s, size_t n)
{
    const uint8_t c = s[0];
    if (c < 0x80)
        return 1;
    size_t k;
    uint8_t lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF)
        k = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        k = 3;
        if (c == 0xE0)
            lo = 0xA0;
        else if (c == 0xED)
            hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        k = 4;
        if (c == 0xF0)
            lo = 0x90;
        else if (c == 0xF4)
            hi = 0x8F;
    } else
        return 0;
    if (n < k || s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < k; i++)
        if (s[i] < 0x80 || s[i] > 0xBF)
            return 0;
    return k;
}

char *ins_clean_str(const char *s, size_t len, bool printable)
{
    char *out = malloc(len * 3 + 1);
    if (!out)
        return NULL;
    size_t o = 0;
    const uint8_t *u = (const uint8_t *)s;
    for (size_t i = 0; i < len;) {
        const size_t k = utf8_seq(u + i, len - i);
        if (k == 0) {
            memcpy(out + o, "\xEF\xBF\xBD", 3);
            o += 3;
            i++;
        } else if (k == 1 && printable && (u[i] < 0x20 || u[i] == 0x7F)) {
            out[o++] = '?';
            i++;
        } else {
            memcpy(out + o, s + i, k);
            o += k;
            i += k;
        }
    }
    out[o] = 0;
    return out;
}
