/* Fuzz the ListObjectsV2 and <Error> parsers (and the timestamp parser) with
 * the same bytes, and check the invariants promised by s3_listing.h. */
#include "s3_listing.h"

#include <stdlib.h>
#include <string.h>

static void check(bool ok)
{
    if (!ok)
        abort(); /* an invariant broke: let the fuzzer record the input */
}

static bool has_control(const char *s)
{
    for (; *s; s++) {
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            return true;
    }
    return false;
}

static void check_listing(const uint8_t *data, size_t size)
{
    store_listing l;
    sv_error e;
    const s3_listing_err rc = s3_listing_parse((const char *)data, size, &l, &e);
    const char *err = e.msg;
    if (rc != S3_LISTING_OK) {
        check(l.objects == NULL && l.n_objects == 0 && l.prefixes == NULL &&
              l.n_prefixes == 0 && l.next_token == NULL);
        check(memchr(err, '\0', sizeof e.msg) != NULL && err[0] != '\0' && e.code == (int)rc);
        return;
    }
    check(l.n_objects + l.n_prefixes <= S3_LISTING_MAX_ENTRIES);
    check(!l.truncated || (l.next_token && l.next_token[0]));
    for (size_t i = 0; i < l.n_objects; i++) {
        const size_t n = strlen(l.objects[i].key);
        check(n >= 1 && n <= S3_KEY_MAX);
        check(l.objects[i].etag && strlen(l.objects[i].etag) <= S3_ETAG_MAX);
    }
    for (size_t i = 0; i < l.n_prefixes; i++) {
        const size_t n = strlen(l.prefixes[i]);
        check(n >= 1 && n <= S3_KEY_MAX);
    }
    store_listing_free(&l);
    check(l.objects == NULL && l.n_objects == 0);
}

static void check_error_doc(const uint8_t *data, size_t size)
{
    /* Small output buffers exercise truncation at UTF-8 boundaries. */
    const size_t code_len = size > 0 ? 1 + data[0] % 24 : 16;
    char code[24], message[64];
    s3_error_parse((const char *)data, size, code, code_len, message, sizeof message);
    check(memchr(code, '\0', code_len) != NULL && memchr(message, '\0', sizeof message) != NULL);
    check(!has_control(code) && !has_control(message));
}

static void check_timestamp(const uint8_t *data, size_t size)
{
    char text[64];
    const size_t n = size < sizeof text - 1 ? size : sizeof text - 1;
    memcpy(text, data, n);
    text[n] = '\0';
    int64_t t;
    s3_parse_iso8601(text, &t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    check_listing(data, size);
    check_error_doc(data, size);
    check_timestamp(data, size);
    return 0;
}
