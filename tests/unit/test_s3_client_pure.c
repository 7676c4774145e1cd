/* The parts of the S3 client that need no server. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "s3_client.h"

static void check_enc(const char *in, bool slash, const char *want)
{
    char *got = s3_uri_encode(in, slash);
    cr_assert_not_null(got);
    cr_assert_str_eq(got, want);
    free(got);
}

Test(s3_uri_encode, sigv4_rules)
{
    check_enc("abcXYZ019-_.~", true, "abcXYZ019-_.~");
    check_enc("a b+c%d=e", true, "a%20b%2Bc%25d%3De");
    check_enc("dir/sub/file", true, "dir/sub/file");
    check_enc("dir/sub/file", false, "dir%2Fsub%2Ffile");
    check_enc("\xc3\xa9", true, "%C3%A9");
    check_enc("*&?#", true, "%2A%26%3F%23");
    check_enc("", true, "");
}

Test(store_status, errno_mapping)
{
    cr_assert_eq(store_status_errno(STORE_OK), 0);
    cr_assert_eq(store_status_errno(STORE_ERR_NOT_FOUND), ENOENT);
    cr_assert_eq(store_status_errno(STORE_ERR_ACCESS), EACCES);
    cr_assert_eq(store_status_errno(STORE_ERR_CHANGED), EIO);
    cr_assert_eq(store_status_errno(STORE_ERR_PROTOCOL), EIO);
    cr_assert_str_eq(store_status_name(STORE_ERR_CHANGED), "object changed");
}
