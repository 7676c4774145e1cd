/* Fuzz the AWS shared-file INI parser and its lookups. */
#include "aws_config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void check(bool ok)
{
    if (!ok)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    aws_ini *ini = NULL;
    sv_error e;
    const aws_config_err rc = aws_ini_parse((const char *)data, size, "fuzz.ini", &ini, &e);
    const char *err = e.msg;
    if (rc != AWS_CONFIG_OK) {
        check(ini == NULL);
        check(memchr(err, '\0', sizeof e.msg) != NULL && e.code == (int)rc);
        check(strncmp(err, "fuzz.ini", 8) == 0); /* messages name the file */
        check(strchr(err, '\n') == NULL);
        return 0;
    }
    static const char *const sections[] = { "default", "profile default", "profile dev", "dev",
                                            "profile", "" };
    static const char *const keys[] = { "aws_access_key_id", "aws_secret_access_key", "region",
                                        "endpoint_url", "s3", "" };
    for (size_t s = 0; s < sizeof sections / sizeof sections[0]; s++) {
        const bool has = aws_ini_has_section(ini, sections[s]);
        for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
            const char *v = aws_ini_get(ini, sections[s], keys[k]);
            check(!v || has); /* a value implies its section */
            check(!v || strlen(v) <= AWS_INI_MAX_VALUE);
        }
    }
    /* A section and key named by the input itself: the text of its first
     * bracketed name and the first word of the following line. */
    char name[64] = "", key[64] = "";
    const char *open = memchr(data, '[', size);
    if (open) {
        const char *end = (const char *)data + size;
        const char *close = memchr(open, ']', (size_t)(end - open));
        if (close && close - open - 1 < (long)sizeof name) {
            memcpy(name, open + 1, (size_t)(close - open - 1));
            name[close - open - 1] = '\0';
            const char *k = close + 1;
            while (k < end && (*k == '\n' || *k == '\r' || *k == ' '))
                k++;
            size_t n = 0;
            while (k + n < end && n + 1 < sizeof key && k[n] != '=' && k[n] != ' ' &&
                   k[n] != '\n' && k[n] != '\0')
                n++;
            memcpy(key, k, n);
            key[n] = '\0';
        }
    }
    aws_ini_has_section(ini, name);
    aws_ini_get(ini, name, key);
    aws_ini_free(ini);
    return 0;
}
