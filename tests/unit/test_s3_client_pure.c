/* The parts of the S3 client and stats that need no server. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "s3_client.h"
#include "stats.h"

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

Test(s3_status, errno_mapping)
{
    cr_assert_eq(s3_status_errno(S3_OK), 0);
    cr_assert_eq(s3_status_errno(S3_ERR_NOT_FOUND), ENOENT);
    cr_assert_eq(s3_status_errno(S3_ERR_ACCESS), EACCES);
    cr_assert_eq(s3_status_errno(S3_ERR_CHANGED), EIO);
    cr_assert_eq(s3_status_errno(S3_ERR_PROTOCOL), EIO);
    cr_assert_str_eq(s3_status_name(S3_ERR_CHANGED), "object changed");
}

Test(stats, renders_valid_counters)
{
    sv_stats st = {0};
    STAT_ADD(&st, fuse_reads, 3);
    STAT_ADD(&st, s3_bytes_fetched, 12345678901ull);
    char buf[2048];
    size_t n = sv_stats_render_json(&st, 7, 9, buf, sizeof buf);
    cr_assert_gt(n, 0);
    cr_assert_eq(strlen(buf), n);
    cr_assert_not_null(strstr(buf, "\"fuse_reads\": 3,"));
    cr_assert_not_null(strstr(buf, "\"s3_bytes_fetched\": 12345678901,"));
    cr_assert_not_null(strstr(buf, "\"cache_bytes\": 7,"));
    cr_assert_eq(sv_stats_render_json(&st, 0, 0, buf, 10), 0, "too small a buffer is refused");
}
