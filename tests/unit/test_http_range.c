/* Content-Range parsing and byte_range_split. */
#include "http_range.h"

#include <criterion/criterion.h>
#include <string.h>

static int parse(const char *s, http_content_range *r)
{
    return http_parse_content_range(s, strlen(s), r);
}

Test(content_range, simple)
{
    http_content_range r;
    cr_assert_eq(parse("bytes 0-99/1000", &r), 0);
    cr_expect_eq(r.first, 0);
    cr_expect_eq(r.last, 99);
    cr_expect_eq(r.total, 1000);
}

Test(content_range, last_byte_of_object)
{
    http_content_range r;
    cr_assert_eq(parse("bytes 999-999/1000", &r), 0);
    cr_expect_eq(r.first, 999);
    cr_expect_eq(r.last, 999);
}

Test(content_range, unknown_total)
{
    http_content_range r;
    cr_assert_eq(parse("bytes 100-199/*", &r), 0);
    cr_expect_eq(r.first, 100);
    cr_expect_eq(r.last, 199);
    cr_expect_eq(r.total, UINT64_MAX);
}

Test(content_range, surrounding_whitespace_and_case)
{
    http_content_range r;
    cr_assert_eq(parse("  \tbytes 5-9/10 \t", &r), 0);
    cr_expect_eq(r.first, 5);
    cr_expect_eq(r.total, 10);
    cr_expect_eq(parse("Bytes 0-0/1", &r), 0); /* range units are case-insensitive */
    cr_expect_eq(parse("BYTES 0-0/1", &r), 0);
}

Test(content_range, large_values)
{
    http_content_range r;
    cr_assert_eq(parse("bytes 18446744073709551613-18446744073709551613/18446744073709551614", &r),
                 0);
    cr_expect_eq(r.first, UINT64_MAX - 2);
    cr_expect_eq(r.total, UINT64_MAX - 1);
    cr_assert_eq(parse("bytes 0-18446744073709551615/*", &r), 0);
    cr_expect_eq(r.last, UINT64_MAX);
    cr_expect_eq(parse("bytes 00000000000000000000000000007-8/9", &r), 0, "leading zeros");
    cr_expect_eq(r.first, 7);
}

Test(content_range, not_nul_terminated)
{
    /* The header value may be a slice of a larger buffer: len is authoritative. */
    const char buf[] = "bytes 0-9/100GARBAGE";
    http_content_range r;
    cr_assert_eq(http_parse_content_range(buf, 13, &r), 0);
    cr_expect_eq(r.total, 100);
    cr_expect_eq(http_parse_content_range(buf, 14, &r), -1);
    cr_expect_eq(http_parse_content_range(buf, 12, &r), 0); /* "bytes 0-9/10" */
    cr_expect_eq(r.total, 10);
}

Test(content_range, rejects_malformed)
{
    static const char *const bad[] = {
        "",
        "   ",
        "bytes",
        "bytes ",
        "0-99/1000",                 /* no unit */
        "items 0-99/1000",           /* other unit */
        "bytes=0-99/1000",           /* request syntax, not response */
        "bytes0-99/1000",            /* no space */
        "bytes 99-0/1000",           /* last < first */
        "bytes 0-99/99",             /* last == total */
        "bytes 0-99/50",             /* last > total */
        "bytes 0-99/0",
        "bytes */1000",              /* unsatisfied-range form carries no range */
        "bytes 0-99",                /* no total */
        "bytes 0-99/",
        "bytes 0-/1000",
        "bytes -99/1000",
        "bytes 0-99/1000x",          /* trailing junk */
        "bytes 0-99/1000 x",
        "bytes 0-99/**",
        "bytes 0-99/*1",
        "bytes +0-99/1000",
        "bytes 0 -99/1000",
        "bytes 0- 99/1000",
        "bytes 0-99 /1000",
        "bytes -1-99/1000",
        "bytes 0x10-0x20/1000",
        "bytes 0-99/1000,100-199/1000",
        "bytes 18446744073709551616-18446744073709551616/*", /* 2^64 */
        "bytes 0-18446744073709551616/*",
        "bytes 0-1/18446744073709551616",
        "bytes 0-1/99999999999999999999999",
        "bytes 0-1/18446744073709551615", /* UINT64_MAX is reserved for "*" */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        http_content_range r = { 1, 2, 3 };
        cr_expect_eq(parse(bad[i], &r), -1, "accepted \"%s\"", bad[i]);
        cr_expect(r.first == 1 && r.last == 2 && r.total == 3, "\"%s\" modified the output",
                  bad[i]);
    }
}

Test(content_range, embedded_nul_and_null_args)
{
    http_content_range r;
    cr_expect_eq(http_parse_content_range("bytes 0-1\0/2", 12, &r), -1);
    cr_expect_eq(http_parse_content_range(NULL, 5, &r), -1);
    cr_expect_eq(http_parse_content_range("bytes 0-1/2", 11, NULL), -1);
}

/* Checks that parts tile [offset, offset+length) exactly. */
static void expect_tiling(const byte_range *p, size_t n, uint64_t offset, uint64_t length)
{
    uint64_t at = offset;
    for (size_t i = 0; i < n; i++) {
        cr_expect_eq(p[i].offset, at, "part %zu starts at %lu, want %lu", i,
                     (unsigned long)p[i].offset, (unsigned long)at);
        cr_expect_gt(p[i].length, 0);
        at += p[i].length;
    }
    cr_expect_eq(at, offset + length);
}

/* Split [offset, offset+length) into at most max_parts parts of p, which must
 * give n parts that tile it. */
static void expect_split(byte_range *p, size_t max_parts, uint64_t offset, uint64_t length,
                         uint64_t part_size, uint64_t align, size_t n)
{
    const size_t got = byte_range_split(offset, length, part_size, align, p, max_parts);
    cr_assert_eq(got, n, "split %lu+%lu (part %lu, align %lu, max %zu): %zu parts, want %zu",
                 (unsigned long)offset, (unsigned long)length, (unsigned long)part_size,
                 (unsigned long)align, max_parts, got, n);
    expect_tiling(p, n, offset, length);
}

Test(split, exact_multiple)
{
    byte_range p[8];
    expect_split(p, 8, 1000, 400, 100, 1, 4);
    for (int i = 0; i < 4; i++)
        cr_expect_eq(p[i].length, 100);
}

Test(split, last_part_shorter)
{
    byte_range p[8];
    expect_split(p, 8, 0, 250, 100, 1, 3);
    cr_expect_eq(p[2].length, 50);
}

Test(split, smaller_than_one_part)
{
    byte_range p[2];
    cr_assert_eq(byte_range_split(7, 10, 100, 4096, p, 2), 1);
    cr_expect_eq(p[0].offset, 7);
    cr_expect_eq(p[0].length, 10);
}

Test(split, exactly_max_parts_needs_no_growth)
{
    byte_range p[4];
    cr_assert_eq(byte_range_split(0, 400, 100, 64, p, 4), 4);
    cr_expect_eq(p[0].length, 100, "part size kept even when not aligned");
}

Test(split, grows_to_max_parts_aligned)
{
    /* 10 MiB in 1 MiB parts, at most 4 parts of 256 KiB alignment:
     * 10 MiB / 4 = 2.5 MiB, already a multiple of 256 KiB. */
    byte_range p[4];
    const uint64_t mib = 1u << 20;
    expect_split(p, 4, 0, 10 * mib, mib, 256 * 1024, 4);
    for (int i = 0; i < 3; i++)
        cr_expect_eq(p[i].length, 5 * mib / 2);
    cr_expect_eq(p[3].length, 5 * mib / 2);
}

Test(split, grown_part_rounded_down_final_absorbs_remainder)
{
    /* 1000 bytes, part 100, max 3, align 256: 333 -> 256; final = 1000 - 512. */
    byte_range p[3];
    expect_split(p, 3, 4096, 1000, 100, 256, 3);
    cr_expect_eq(p[0].length, 256);
    cr_expect_eq(p[1].length, 256);
    cr_expect_eq(p[2].length, 488);
    cr_expect_eq(p[1].offset % 256, 0, "aligned offsets stay aligned");
}

Test(split, grown_unaligned_remainder)
{
    byte_range p[3];
    expect_split(p, 3, 0, 1001, 10, 1, 3);
    cr_expect_eq(p[0].length, 333);
    cr_expect_eq(p[2].length, 335);
}

Test(split, alignment_larger_than_share_uses_aligned_parts)
{
    /* 10 bytes, max 4 parts, align 8: 2 bytes a part rounds to 0, so use
     * 8-byte parts: two of them, still within max_parts. */
    byte_range p[4];
    expect_split(p, 4, 0, 10, 1, 8, 2);
    cr_expect_eq(p[0].length, 8);
    cr_expect_eq(p[1].length, 2);
}

Test(split, never_writes_past_max_parts)
{
    byte_range p[6];
    memset(p, 0x5A, sizeof p);
    expect_split(p, 5, 0, 1u << 30, 1, 1, 5);
    cr_expect_eq(p[5].offset, 0x5A5A5A5A5A5A5A5Au);
}

Test(split, huge_range_near_uint64_max)
{
    byte_range p[16];
    const uint64_t offset = UINT64_MAX - 1000;
    expect_split(p, 16, offset, 1000, 1, 1, 16);
    cr_expect_eq(byte_range_split(offset, 1002, 1, 1, p, 16), 0, "wraps past 2^64");
    cr_expect_eq(byte_range_split(0, UINT64_MAX, UINT64_MAX, 1, p, 16), 1);
    cr_expect_eq(byte_range_split(0, UINT64_MAX, 1, 1, p, 16), 16);
    expect_tiling(p, 16, 0, UINT64_MAX);
}

Test(split, invalid_arguments)
{
    byte_range p[4];
    cr_expect_eq(byte_range_split(0, 0, 100, 1, p, 4), 0, "zero length");
    cr_expect_eq(byte_range_split(0, 100, 0, 1, p, 4), 0, "zero part size");
    cr_expect_eq(byte_range_split(0, 100, 10, 0, p, 4), 0, "zero alignment");
    cr_expect_eq(byte_range_split(0, 100, 10, 1, p, 0), 0, "no room");
    cr_expect_eq(byte_range_split(0, 100, 10, 1, NULL, 4), 0, "no output");
}

Test(split, single_part_allowed)
{
    byte_range p[1];
    cr_assert_eq(byte_range_split(10, 5000, 100, 4096, p, 1), 1);
    cr_expect_eq(p[0].offset, 10);
    cr_expect_eq(p[0].length, 5000);
}
