/* ListObjectsV2 page parsing, <Error> parsing and ISO 8601 timestamps, on
 * documents shaped like real S3 and moto responses. */
#include "s3_listing.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S3_NS "http://s3.amazonaws.com/doc/2006-03-01/"
#define XML_DECL "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"

static sv_error parse_err;
#define err (parse_err.msg) /* the message of the last parse */

static s3_listing_err parse(const char *xml, store_listing *l)
{
    err[0] = '\0';
    return s3_listing_parse(xml, strlen(xml), l, &parse_err);
}

/* A page with the given body inside a namespaced ListBucketResult. */
static char *page(const char *body)
{
    static const char head[] = XML_DECL "<ListBucketResult xmlns=\"" S3_NS "\">"
                               "<Name>sieve-test</Name><Prefix></Prefix><MaxKeys>1000</MaxKeys>";
    static const char tail[] = "</ListBucketResult>";
    const size_t n = strlen(head) + strlen(body) + strlen(tail) + 1;
    char *s = malloc(n);
    cr_assert_not_null(s);
    snprintf(s, n, "%s%s%s", head, body, tail);
    return s;
}

/* Parse xml, which must succeed. */
static void parse_ok(const char *xml, store_listing *l)
{
    cr_assert_eq(parse(xml, l), S3_LISTING_OK, "%s", err);
}

/* Parse the page around body, which must succeed. */
static void parse_page_ok(const char *body, store_listing *l)
{
    char *xml = page(body);
    parse_ok(xml, l);
    free(xml);
}

/* Parse a page that must fail with `want`, and check *out stays empty. */
static void expect_failure(const char *body, s3_listing_err want, const char *needle)
{
    char *xml = page(body);
    store_listing l;
    memset(&l, 0x5A, sizeof l);
    const s3_listing_err rc = parse(xml, &l);
    cr_expect_eq(rc, want, "body %.120s: got %d want %d (%s)", body, rc, want, err);
    cr_expect(l.objects == NULL && l.n_objects == 0 && l.prefixes == NULL && l.n_prefixes == 0 &&
                  l.next_token == NULL && !l.truncated,
              "output not left empty");
    cr_expect_neq(err[0], '\0', "no message");
    cr_expect_null(strchr(err, '\n'), "message is one line: %s", err);
    if (needle)
        cr_expect(strstr(err, needle) != NULL, "message \"%s\" lacks \"%s\"", err, needle);
    free(xml);
}

/* ---- real-shaped successes --------------------------------------------- */

/* Captured shape of an AWS ListObjectsV2 response with delimiter=/ (compact,
 * namespaced, entity-escaped ETags, checksum and storage class fields). */
static const char aws_page[] =
    XML_DECL
    "<ListBucketResult xmlns=\"" S3_NS "\"><Name>sieve-test</Name><Prefix>data/</Prefix>"
    "<NextContinuationToken>1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=</NextContinuationToken>"
    "<KeyCount>4</KeyCount><MaxKeys>4</MaxKeys><Delimiter>/</Delimiter>"
    "<IsTruncated>true</IsTruncated>"
    "<Contents><Key>data/a.parquet</Key><LastModified>2024-01-02T03:04:05.000Z</LastModified>"
    "<ETag>&quot;d41d8cd98f00b204e9800998ecf8427e&quot;</ETag>"
    "<ChecksumAlgorithm>CRC32</ChecksumAlgorithm><Size>1234</Size>"
    "<StorageClass>STANDARD</StorageClass></Contents>"
    "<Contents><Key>data/big.bin</Key><LastModified>2023-12-31T23:59:59.999Z</LastModified>"
    "<ETag>\"9b2cf535f27731c974343645a3985328-1024\"</ETag><Size>18446744073709551615</Size>"
    "<Owner><ID>abc</ID><DisplayName>me</DisplayName></Owner>"
    "<StorageClass>INTELLIGENT_TIERING</StorageClass></Contents>"
    "<CommonPrefixes><Prefix>data/year=2023/</Prefix></CommonPrefixes>"
    "<CommonPrefixes><Prefix>data/year=2024/</Prefix></CommonPrefixes>"
    "</ListBucketResult>";

Test(s3_listing, aws_page_with_prefixes_and_token)
{
    store_listing l;
    parse_ok(aws_page, &l);
    cr_assert_eq(l.n_objects, 2);
    cr_expect_str_eq(l.objects[0].key, "data/a.parquet");
    cr_expect_eq(l.objects[0].size, 1234);
    cr_expect_str_eq(l.objects[0].etag, "\"d41d8cd98f00b204e9800998ecf8427e\"");
    cr_expect_eq(l.objects[0].mtime, 1704164645); /* 2024-01-02T03:04:05Z */
    cr_expect_str_eq(l.objects[1].key, "data/big.bin");
    cr_expect_eq(l.objects[1].size, UINT64_MAX);
    cr_expect_str_eq(l.objects[1].etag, "\"9b2cf535f27731c974343645a3985328-1024\"");
    cr_expect_eq(l.objects[1].mtime, 1704067199);
    cr_assert_eq(l.n_prefixes, 2);
    cr_expect_str_eq(l.prefixes[0], "data/year=2023/");
    cr_expect_str_eq(l.prefixes[1], "data/year=2024/");
    cr_expect(l.truncated);
    cr_expect_str_eq(l.next_token, "1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=");
    cr_expect_eq(l.key_count, 4);
    store_listing_free(&l);
    cr_expect_null(l.objects);
    store_listing_free(&l); /* freeing twice is harmless after the reset */
}

/* moto pretty-prints its template: whitespace between elements. */
static const char moto_page[] =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    "<ListBucketResult xmlns=\"" S3_NS "\">\n"
    "  <Name>sieve-test</Name>\n"
    "  <Prefix>logs/</Prefix>\n"
    "  <MaxKeys>1000</MaxKeys>\n"
    "  <KeyCount>1</KeyCount>\n"
    "  <Delimiter>/</Delimiter>\n"
    "  <IsTruncated>false</IsTruncated>\n"
    "  <Contents>\n"
    "    <Key>logs/2024-01-01.json</Key>\n"
    "    <LastModified>2024-01-01T00:00:00.000Z</LastModified>\n"
    "    <ETag>&#34;3858f62230ac3c915f300c664312c11f&#34;</ETag>\n"
    "    <Size>\n      42\n    </Size>\n"
    "    <StorageClass>STANDARD</StorageClass>\n"
    "  </Contents>\n"
    "</ListBucketResult>\n";

Test(s3_listing, moto_pretty_printed_not_truncated)
{
    store_listing l;
    parse_ok(moto_page, &l);
    cr_assert_eq(l.n_objects, 1);
    cr_expect_str_eq(l.objects[0].key, "logs/2024-01-01.json");
    cr_expect_eq(l.objects[0].size, 42, "numbers tolerate surrounding whitespace");
    cr_expect_str_eq(l.objects[0].etag, "\"3858f62230ac3c915f300c664312c11f\"");
    cr_expect_eq(l.objects[0].mtime, 1704067200);
    cr_expect_eq(l.n_prefixes, 0);
    cr_expect_not(l.truncated);
    cr_expect_null(l.next_token);
    store_listing_free(&l);
}

Test(s3_listing, without_namespace)
{
    static const char xml[] =
        "<ListBucketResult><Name>b</Name><KeyCount>1</KeyCount><IsTruncated>false</IsTruncated>"
        "<Contents><Key>x</Key><Size>0</Size><LastModified>1970-01-01T00:00:00Z</LastModified>"
        "<ETag>\"e\"</ETag></Contents><CommonPrefixes><Prefix>p/</Prefix></CommonPrefixes>"
        "</ListBucketResult>";
    store_listing l;
    parse_ok(xml, &l);
    cr_assert_eq(l.n_objects, 1);
    cr_expect_eq(l.objects[0].size, 0);
    cr_expect_eq(l.objects[0].mtime, 0);
    cr_assert_eq(l.n_prefixes, 1);
    cr_expect_str_eq(l.prefixes[0], "p/");
    store_listing_free(&l);
}

Test(s3_listing, namespace_prefix)
{
    static const char xml[] =
        "<s3:ListBucketResult xmlns:s3=\"" S3_NS "\"><s3:IsTruncated>false</s3:IsTruncated>"
        "<s3:Contents><s3:Key>k</s3:Key><s3:Size>7</s3:Size>"
        "<s3:LastModified>2020-02-29T12:00:00Z</s3:LastModified></s3:Contents>"
        "</s3:ListBucketResult>";
    store_listing l;
    parse_ok(xml, &l);
    cr_assert_eq(l.n_objects, 1);
    cr_expect_eq(l.objects[0].size, 7);
    cr_expect_str_eq(l.objects[0].etag, "", "missing ETag is an empty string");
    cr_expect_eq(l.objects[0].mtime, 1582977600);
    store_listing_free(&l);
}

Test(s3_listing, keys_with_special_characters)
{
    static const char body[] =
        "<KeyCount>7</KeyCount><IsTruncated>false</IsTruncated>"
        "<Contents><Key>dir with spaces/file name.csv</Key><Size>1</Size>"
        "<LastModified>2024-05-06T07:08:09Z</LastModified><ETag>\"1\"</ETag></Contents>"
        "<Contents><Key>unicode/\xC3\xA9t\xC3\xA9/\xE6\x97\xA5\xE6\x9C\xAC/\xF0\x9F\x98\x80.txt</Key>"
        "<Size>2</Size><LastModified>2024-05-06T07:08:09Z</LastModified><ETag>\"2\"</ETag></Contents>"
        "<Contents><Key>a+b%20c=d&amp;e&lt;f&gt;&apos;&quot;</Key><Size>3</Size>"
        "<LastModified>2024-05-06T07:08:09Z</LastModified><ETag>\"3\"</ETag></Contents>"
        "<Contents><Key>  leading and trailing  </Key><Size>4</Size>"
        "<LastModified>2024-05-06T07:08:09Z</LastModified><ETag>\"4\"</ETag></Contents>"
        "<Contents><Key>tab&#9;and&#x20AC;ref</Key><Size>5</Size>"
        "<LastModified>2024-05-06T07:08:09Z</LastModified><ETag>\"5\"</ETag></Contents>"
        "<Contents><Key><![CDATA[cdata/<raw>&stuff]]></Key><Size>6</Size>"
        "<LastModified>2024-05-06T07:08:09Z</LastModified><ETag>\"6\"</ETag></Contents>"
        "<Contents><Key>split<!-- comment -->key</Key><Size>7</Size>"
        "<LastModified>2024-05-06T07:08:09Z</LastModified><ETag>\"7\"</ETag></Contents>";
    store_listing l;
    parse_page_ok(body, &l);
    cr_assert_eq(l.n_objects, 7);
    cr_expect_str_eq(l.objects[0].key, "dir with spaces/file name.csv");
    cr_expect_str_eq(l.objects[1].key,
                     "unicode/\xC3\xA9t\xC3\xA9/\xE6\x97\xA5\xE6\x9C\xAC/\xF0\x9F\x98\x80.txt");
    cr_expect_str_eq(l.objects[2].key, "a+b%20c=d&e<f>'\"", "no URL decoding without EncodingType");
    cr_expect_str_eq(l.objects[3].key, "  leading and trailing  ", "keys are not trimmed");
    cr_expect_str_eq(l.objects[4].key, "tab\tand\xE2\x82\xAC" "ref");
    cr_expect_str_eq(l.objects[5].key, "cdata/<raw>&stuff");
    cr_expect_str_eq(l.objects[6].key, "splitkey");
    store_listing_free(&l);
}

/* An empty <EncodingType/> says nothing is encoded (versitygw sends one on
 * every page, whatever was asked): keys are taken as they are. */
Test(s3_listing, empty_encoding_type_means_not_encoded)
{
    static const char *const forms[] = {"<EncodingType></EncodingType>", "<EncodingType/>",
                                        "<EncodingType> </EncodingType>"};
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
        char body[512];
        snprintf(body, sizeof body,
                 "%s<IsTruncated>false</IsTruncated><Contents><Key>a+b%%20c</Key><Size>1</Size>"
                 "<LastModified>2024-05-06T07:08:09Z</LastModified></Contents>", forms[i]);
        store_listing l;
        parse_page_ok(body, &l);
        cr_assert_eq(l.n_objects, 1);
        cr_expect_str_eq(l.objects[0].key, "a+b%20c", "form %zu", i);
        store_listing_free(&l);
    }
}

Test(s3_listing, url_encoding_type_decodes_keys_and_prefixes)
{
    static const char body[] =
        "<EncodingType>url</EncodingType><IsTruncated>false</IsTruncated>"
        "<Contents><Key>dir+with+spaces/a%2Bb%3Dc%26d%0A.csv</Key><Size>1</Size>"
        "<LastModified>2024-05-06T07:08:09Z</LastModified><ETag>\"1\"</ETag></Contents>"
        "<Contents><Key>%C3%A9t%C3%A9</Key><Size>1</Size>"
        "<LastModified>2024-05-06T07:08:09Z</LastModified><ETag>\"1\"</ETag></Contents>"
        "<CommonPrefixes><Prefix>year%3D2024/</Prefix></CommonPrefixes>";
    store_listing l;
    parse_page_ok(body, &l);
    cr_assert_eq(l.n_objects, 2);
    cr_expect_str_eq(l.objects[0].key, "dir with spaces/a+b=c&d\n.csv");
    cr_expect_str_eq(l.objects[1].key, "\xC3\xA9t\xC3\xA9");
    cr_expect_str_eq(l.prefixes[0], "year=2024/");
    store_listing_free(&l);
}

/* One object whose key (the %s) is URL-encoded. */
#define URL_KEY_OBJ \
    "<EncodingType>url</EncodingType><Contents><Key>%s</Key><Size>1</Size>" \
    "<LastModified>2024-05-06T07:08:09Z</LastModified></Contents>"

Test(s3_listing, url_encoding_rejects_bad_escapes)
{
    static const char *const keys[] = { "bad%2", "bad%zz", "nul%00byte", "%FF%FE", "%C3", "%ED%A0%80" };
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        char body[512];
        snprintf(body, sizeof body, URL_KEY_OBJ, keys[i]);
        expect_failure(body, S3_LISTING_ERR_INVALID, "URL encoding");
    }
    expect_failure("<EncodingType>base64</EncodingType>", S3_LISTING_ERR_INVALID, "EncodingType");
}

Test(s3_listing, url_encoded_key_limit_applies_after_decoding)
{
    /* 1024 bytes decoded, 3072 on the wire: allowed. 1025 decoded: refused. */
    char key[3 * 1025 + 1] = "";
    for (int i = 0; i < 1024; i++)
        strcat(key, "%41");
    char body[4096];
    snprintf(body, sizeof body, URL_KEY_OBJ, key);
    store_listing l;
    parse_page_ok(body, &l);
    cr_expect_eq(strlen(l.objects[0].key), 1024);
    store_listing_free(&l);
    strcat(key, "A");
    snprintf(body, sizeof body, URL_KEY_OBJ, key);
    expect_failure(body, S3_LISTING_ERR_LIMIT, "1024");
}

Test(s3_listing, empty_listing)
{
    static const char xml[] =
        XML_DECL "<ListBucketResult xmlns=\"" S3_NS "\"><Name>sieve-test</Name>"
        "<Prefix>nothing-here/</Prefix><KeyCount>0</KeyCount><MaxKeys>1000</MaxKeys>"
        "<Delimiter>/</Delimiter><IsTruncated>false</IsTruncated></ListBucketResult>";
    store_listing l;
    parse_ok(xml, &l);
    cr_expect_eq(l.n_objects, 0);
    cr_expect_null(l.objects);
    cr_expect_eq(l.n_prefixes, 0);
    cr_expect_null(l.prefixes);
    cr_expect_eq(l.key_count, 0);
    cr_expect_not(l.truncated);
    store_listing_free(&l);
    parse_ok("<ListBucketResult/>", &l);
    store_listing_free(&l);
}

Test(s3_listing, empty_token_when_not_truncated_is_no_token)
{
    store_listing l;
    parse_page_ok("<IsTruncated>false</IsTruncated><NextContinuationToken></NextContinuationToken>",
                  &l);
    cr_expect_null(l.next_token);
    store_listing_free(&l);
}

Test(s3_listing, latin1_document_is_converted_to_utf8)
{
    static const char xml[] =
        "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><ListBucketResult>"
        "<Contents><Key>caf\xE9</Key><Size>1</Size><LastModified>2024-01-01T00:00:00Z</LastModified>"
        "</Contents></ListBucketResult>";
    store_listing l;
    parse_ok(xml, &l);
    cr_expect_str_eq(l.objects[0].key, "caf\xC3\xA9");
    store_listing_free(&l);
}

/* ---- invalid fields ----------------------------------------------------- */

#define OBJ(key, size, mtime) \
    "<Contents><Key>" key "</Key><Size>" size "</Size><LastModified>" mtime \
    "</LastModified><ETag>\"e\"</ETag></Contents>"
#define GOOD_TIME "2024-01-01T00:00:00.000Z"

Test(s3_listing, truncated_without_token_is_invalid)
{
    expect_failure("<IsTruncated>true</IsTruncated>" OBJ("a", "1", GOOD_TIME),
                   S3_LISTING_ERR_INVALID, "NextContinuationToken");
    expect_failure("<IsTruncated>true</IsTruncated><NextContinuationToken></NextContinuationToken>",
                   S3_LISTING_ERR_INVALID, "NextContinuationToken");
}

Test(s3_listing, bad_is_truncated)
{
    expect_failure("<IsTruncated>yes</IsTruncated>", S3_LISTING_ERR_INVALID, "IsTruncated");
    expect_failure("<IsTruncated>TRUE</IsTruncated>", S3_LISTING_ERR_INVALID, "IsTruncated");
    expect_failure("<IsTruncated></IsTruncated>", S3_LISTING_ERR_INVALID, "IsTruncated");
    expect_failure("<IsTruncated>false</IsTruncated><IsTruncated>true</IsTruncated>",
                   S3_LISTING_ERR_INVALID, "duplicate");
}

Test(s3_listing, bad_sizes)
{
    static const char *const sizes[] = {
        "-1", "+1", "1.5", "", " ", "1e3", "0x10", "12 34", "18446744073709551616",
        "99999999999999999999999999", "&#x661;", /* Arabic-Indic digit one */
    };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        char body[512];
        snprintf(body, sizeof body, OBJ("k", "%s", GOOD_TIME), sizes[i]);
        expect_failure(body, S3_LISTING_ERR_INVALID, "Size");
    }
    expect_failure("<Contents><Key>k</Key><Size><b>1</b></Size>"
                   "<LastModified>" GOOD_TIME "</LastModified></Contents>",
                   S3_LISTING_ERR_INVALID, "Size");
}

Test(s3_listing, bad_key_count)
{
    expect_failure("<KeyCount>4294967296</KeyCount>", S3_LISTING_ERR_INVALID, "KeyCount");
    expect_failure("<KeyCount>-3</KeyCount>", S3_LISTING_ERR_INVALID, "KeyCount");
    store_listing l;
    parse_page_ok("<KeyCount>4294967295</KeyCount>", &l);
    cr_expect_eq(l.key_count, UINT32_MAX);
    store_listing_free(&l);
}

Test(s3_listing, bad_last_modified)
{
    expect_failure(OBJ("k", "1", "yesterday"), S3_LISTING_ERR_INVALID, "LastModified");
    expect_failure(OBJ("k", "1", "2024-13-01T00:00:00Z"), S3_LISTING_ERR_INVALID, "LastModified");
    expect_failure(OBJ("k", "1", "Tue, 02 Jan 2024 03:04:05 GMT"), S3_LISTING_ERR_INVALID,
                   "LastModified");
}

Test(s3_listing, missing_required_fields)
{
    expect_failure("<Contents><Size>1</Size><LastModified>" GOOD_TIME "</LastModified></Contents>",
                   S3_LISTING_ERR_INVALID, "missing <Key>");
    expect_failure("<Contents><Key>k</Key><LastModified>" GOOD_TIME "</LastModified></Contents>",
                   S3_LISTING_ERR_INVALID, "missing <Size>");
    expect_failure("<Contents><Key>k</Key><Size>1</Size></Contents>", S3_LISTING_ERR_INVALID,
                   "missing <LastModified>");
    expect_failure("<CommonPrefixes></CommonPrefixes>", S3_LISTING_ERR_INVALID, "missing <Prefix>");
}

Test(s3_listing, empty_or_markup_keys)
{
    expect_failure(OBJ("", "1", GOOD_TIME), S3_LISTING_ERR_INVALID, "empty");
    expect_failure(OBJ("<i>k</i>", "1", GOOD_TIME), S3_LISTING_ERR_INVALID, "markup");
    expect_failure("<CommonPrefixes><Prefix></Prefix></CommonPrefixes>", S3_LISTING_ERR_INVALID,
                   "empty");
}

Test(s3_listing, duplicate_fields_in_object)
{
    expect_failure("<Contents><Key>a</Key><Key>b</Key><Size>1</Size>"
                   "<LastModified>" GOOD_TIME "</LastModified></Contents>",
                   S3_LISTING_ERR_INVALID, "duplicate <Key>");
    expect_failure("<CommonPrefixes><Prefix>a/</Prefix><Prefix>b/</Prefix></CommonPrefixes>",
                   S3_LISTING_ERR_INVALID, "duplicate <Prefix>");
}

Test(s3_listing, failure_after_some_objects_frees_everything)
{
    /* Valid objects first, then a bad one: ASan/valgrind check nothing leaks. */
    expect_failure(OBJ("a", "1", GOOD_TIME) OBJ("b", "2", GOOD_TIME)
                   "<CommonPrefixes><Prefix>p/</Prefix></CommonPrefixes>"
                   OBJ("c", "x", GOOD_TIME),
                   S3_LISTING_ERR_INVALID, "'c'");
}

/* ---- limits ------------------------------------------------------------- */

static char *repeated(char c, size_t n)
{
    char *s = malloc(n + 1);
    cr_assert_not_null(s);
    memset(s, c, n);
    s[n] = '\0';
    return s;
}

Test(s3_listing, key_length_limit)
{
    char *key = repeated('k', S3_KEY_MAX);
    char body[2048];
    snprintf(body, sizeof body, OBJ("%s", "1", GOOD_TIME), key);
    store_listing l;
    parse_page_ok(body, &l);
    cr_expect_eq(strlen(l.objects[0].key), S3_KEY_MAX);
    store_listing_free(&l);
    free(key);

    key = repeated('k', S3_KEY_MAX + 1);
    snprintf(body, sizeof body, OBJ("%s", "1", GOOD_TIME), key);
    expect_failure(body, S3_LISTING_ERR_LIMIT, "1024");
    snprintf(body, sizeof body, "<CommonPrefixes><Prefix>%s</Prefix></CommonPrefixes>", key);
    expect_failure(body, S3_LISTING_ERR_LIMIT, "1024");
    free(key);

    /* Multi-byte characters count in bytes: 342 x 3 bytes = 1026 bytes. */
    char wide[342 * 3 + 1] = "";
    for (int i = 0; i < 342; i++)
        strcat(wide, "\xE2\x82\xAC");
    snprintf(body, sizeof body, OBJ("%s", "1", GOOD_TIME), wide);
    expect_failure(body, S3_LISTING_ERR_LIMIT, "1024");
}

/* One object whose ETag is the %s. */
#define ETAG_OBJ \
    "<Contents><Key>k</Key><Size>1</Size><LastModified>" GOOD_TIME \
    "</LastModified><ETag>%s</ETag></Contents>"

Test(s3_listing, etag_length_limit)
{
    char *etag = repeated('e', S3_ETAG_MAX + 1);
    char body[1024];
    snprintf(body, sizeof body, ETAG_OBJ, etag);
    expect_failure(body, S3_LISTING_ERR_LIMIT, "ETag");
    etag[S3_ETAG_MAX] = '\0';
    snprintf(body, sizeof body, ETAG_OBJ, etag);
    store_listing l;
    parse_page_ok(body, &l);
    cr_expect_eq(strlen(l.objects[0].etag), S3_ETAG_MAX);
    store_listing_free(&l);
    free(etag);
}

Test(s3_listing, token_length_limit)
{
    char *token = repeated('t', S3_TOKEN_MAX + 1);
    char *body = malloc(S3_TOKEN_MAX + 256);
    cr_assert_not_null(body);
    sprintf(body, "<IsTruncated>true</IsTruncated><NextContinuationToken>%s</NextContinuationToken>",
            token);
    expect_failure(body, S3_LISTING_ERR_LIMIT, "NextContinuationToken");
    free(body);
    free(token);
}

/* n objects (or prefixes) in one page. */
static char *page_with_entries(size_t n, bool prefixes)
{
    const char *one = prefixes ? "<CommonPrefixes><Prefix>p/</Prefix></CommonPrefixes>"
                               : OBJ("k", "1", GOOD_TIME);
    const size_t one_len = strlen(one);
    char *body = malloc(n * one_len + 1);
    cr_assert_not_null(body);
    for (size_t i = 0; i < n; i++)
        memcpy(body + i * one_len, one, one_len);
    body[n * one_len] = '\0';
    char *xml = page(body);
    free(body);
    return xml;
}

Test(s3_listing, entry_count_limit)
{
    char *xml = page_with_entries(S3_LISTING_MAX_ENTRIES, false);
    store_listing l;
    parse_ok(xml, &l);
    cr_expect_eq(l.n_objects, S3_LISTING_MAX_ENTRIES);
    store_listing_free(&l);
    free(xml);

    xml = page_with_entries(S3_LISTING_MAX_ENTRIES + 1, false);
    cr_expect_eq(parse(xml, &l), S3_LISTING_ERR_LIMIT);
    cr_expect(strstr(err, "10000") != NULL, "%s", err);
    free(xml);

    xml = page_with_entries(S3_LISTING_MAX_ENTRIES + 1, true);
    cr_expect_eq(parse(xml, &l), S3_LISTING_ERR_LIMIT);
    free(xml);
}

Test(s3_listing, objects_and_prefixes_count_together)
{
    const size_t half = S3_LISTING_MAX_ENTRIES / 2 + 1;
    char *objs = page_with_entries(half, false);
    char *prefs = page_with_entries(half, true);
    /* Splice: the objects page with the prefixes page's body before its end tag. */
    const char *pbody = strstr(prefs, "<CommonPrefixes>");
    char *end = strstr(objs, "</ListBucketResult>");
    *end = '\0';
    const size_t n = strlen(objs) + strlen(pbody) + 1;
    char *xml = malloc(n);
    cr_assert_not_null(xml);
    snprintf(xml, n, "%s%s", objs, pbody);
    store_listing l;
    cr_expect_eq(parse(xml, &l), S3_LISTING_ERR_LIMIT, "%s", err);
    free(xml);
    free(objs);
    free(prefs);
}

Test(s3_listing, document_size_limit)
{
    const size_t n = S3_LISTING_MAX_XML + 1;
    char *xml = malloc(n);
    cr_assert_not_null(xml);
    memset(xml, ' ', n);
    store_listing l;
    cr_expect_eq(s3_listing_parse(xml, n, &l, &parse_err), S3_LISTING_ERR_LIMIT);
    cr_expect(strstr(err, "limit") != NULL, "%s", err);
    free(xml);
}

/* ---- malformed and hostile documents ----------------------------------- */

Test(s3_listing, malformed_xml)
{
    static const char *const docs[] = {
        "",
        "   ",
        "not xml at all",
        "<ListBucketResult>",
        "<ListBucketResult><Contents></ListBucketResult>",
        "<ListBucketResult></listbucketresult>",
        "<ListBucketResult><Key>a&b</Key></ListBucketResult>",
        "<ListBucketResult><Key>&undefined;</Key></ListBucketResult>",
        "<ListBucketResult><Key>&#0;</Key></ListBucketResult>",
        "<ListBucketResult><Key>&#1;</Key></ListBucketResult>",
        "<ListBucketResult></ListBucketResult><Extra/>",
        "<?xml version=\"1.0\" encoding=\"x-no-such-encoding\"?><ListBucketResult/>",
        "<ListBucketResult><Contents><Key>\xFF\xFE</Key></Contents></ListBucketResult>",
    };
    for (size_t i = 0; i < sizeof docs / sizeof docs[0]; i++) {
        store_listing l;
        cr_expect_eq(parse(docs[i], &l), S3_LISTING_ERR_PARSE, "doc %zu accepted: %s", i, docs[i]);
        cr_expect_neq(err[0], '\0');
        cr_expect_null(strchr(err, '\n'), "one line: %s", err);
    }
}

Test(s3_listing, malformed_message_names_line)
{
    store_listing l;
    cr_expect_eq(parse("<ListBucketResult>\n<Contents>\n</Bad>\n</ListBucketResult>", &l),
                 S3_LISTING_ERR_PARSE);
    cr_expect(strstr(err, "line 3") != NULL, "%s", err);
    cr_expect_neq(err[strlen(err) - 1], ' ', "libxml2's trailing newline is trimmed: \"%s\"", err);
}

Test(s3_listing, embedded_nul)
{
    static const char xml[] = "<ListBucketResult><Contents><Key>a\0b</Key></Contents></ListBucketResult>";
    store_listing l;
    cr_expect_eq(s3_listing_parse(xml, sizeof xml - 1, &l, &parse_err), S3_LISTING_ERR_PARSE);
}

Test(s3_listing, wrong_root)
{
    store_listing l;
    cr_expect_eq(parse("<ListAllMyBucketsResult/>", &l), S3_LISTING_ERR_PARSE);
    cr_expect(strstr(err, "ListAllMyBucketsResult") != NULL, "%s", err);
    cr_expect_eq(parse("<ListVersionsResult xmlns=\"" S3_NS "\"/>", &l), S3_LISTING_ERR_PARSE);
}

Test(s3_listing, error_document_instead_of_listing)
{
    store_listing l;
    cr_expect_eq(parse(XML_DECL "<Error><Code>NoSuchBucket</Code><Message>The specified bucket "
                                "does not exist</Message></Error>",
                       &l),
                 S3_LISTING_ERR_PARSE);
    cr_expect(strstr(err, "NoSuchBucket") != NULL, "%s", err);
}

Test(s3_listing, billion_laughs_refused_quickly)
{
    static const char xml[] =
        "<?xml version=\"1.0\"?>\n<!DOCTYPE lolz [\n"
        " <!ENTITY lol \"lol\">\n"
        " <!ENTITY lol1 \"&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;\">\n"
        " <!ENTITY lol2 \"&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;\">\n"
        " <!ENTITY lol3 \"&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;\">\n"
        " <!ENTITY lol4 \"&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;\">\n"
        " <!ENTITY lol5 \"&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;\">\n"
        " <!ENTITY lol6 \"&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;\">\n"
        " <!ENTITY lol7 \"&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;\">\n"
        " <!ENTITY lol8 \"&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;\">\n"
        " <!ENTITY lol9 \"&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;\">\n"
        "]>\n<ListBucketResult><Contents><Key>&lol9;</Key><Size>1</Size>"
        "<LastModified>2024-01-01T00:00:00Z</LastModified></Contents></ListBucketResult>";
    store_listing l;
    cr_expect_eq(parse(xml, &l), S3_LISTING_ERR_PARSE);
    cr_expect(strstr(err, "DOCTYPE") != NULL, "%s", err);
    char code[32], message[32];
    cr_expect_eq(s3_error_parse(xml, strlen(xml), code, sizeof code, message, sizeof message),
                 S3_LISTING_ERR_PARSE);
}

Test(s3_listing, external_entity_not_loaded)
{
    static const char xml[] =
        "<?xml version=\"1.0\"?><!DOCTYPE r [<!ENTITY xxe SYSTEM \"file:///etc/passwd\">]>"
        "<ListBucketResult><Contents><Key>&xxe;</Key><Size>1</Size>"
        "<LastModified>2024-01-01T00:00:00Z</LastModified></Contents></ListBucketResult>";
    store_listing l;
    cr_expect_eq(parse(xml, &l), S3_LISTING_ERR_PARSE);
    static const char ext_dtd[] =
        "<?xml version=\"1.0\"?><!DOCTYPE ListBucketResult SYSTEM \"http://127.0.0.1:1/x.dtd\">"
        "<ListBucketResult/>";
    cr_expect_eq(parse(ext_dtd, &l), S3_LISTING_ERR_PARSE);
}

Test(s3_listing, deep_nesting_is_refused_by_libxml2)
{
    /* libxml2 caps depth at 256 without XML_PARSE_HUGE. */
    const size_t depth = 5000;
    char *xml = malloc(depth * 7 + 64);
    cr_assert_not_null(xml);
    char *p = xml;
    p += sprintf(p, "<ListBucketResult>");
    for (size_t i = 0; i < depth; i++)
        p += sprintf(p, "<a>");
    for (size_t i = 0; i < depth; i++)
        p += sprintf(p, "</a>");
    sprintf(p, "</ListBucketResult>");
    store_listing l;
    cr_expect_eq(parse(xml, &l), S3_LISTING_ERR_PARSE, "%s", err);
    free(xml);
}

Test(s3_listing, null_arguments)
{
    store_listing l;
    cr_expect_eq(s3_listing_parse(NULL, 10, &l, &parse_err), S3_LISTING_ERR_PARSE);
    cr_expect_neq(s3_listing_parse(aws_page, strlen(aws_page), NULL, &parse_err),
                  S3_LISTING_OK);
    cr_expect_eq(s3_listing_parse("<x/>", 4, &l, NULL), S3_LISTING_ERR_PARSE, "no error wanted");
    sv_error e;
    memset(&e, 'x', sizeof e);
    cr_expect_eq(s3_listing_parse("<x/>", 4, &l, &e), S3_LISTING_ERR_PARSE);
    cr_expect_eq(e.code, S3_LISTING_ERR_PARSE, "the error carries the code");
    cr_expect(memchr(e.msg, '\0', sizeof e.msg) != NULL && e.msg[0], "a terminated message");
    store_listing_free(NULL);
}

/* ---- <Error> documents ---------------------------------------------------- */

/* Parse an <Error> document into code and message buffers of exactly these
 * sizes (on the heap, so ASan sees a write past them, and full of junk); it
 * must succeed with want_code and want_message. */
static void expect_error_doc(const char *xml, size_t code_size, size_t message_size,
                             const char *want_code, const char *want_message)
{
    char *code = malloc(code_size), *message = malloc(message_size);
    cr_assert(code && message);
    memset(code, 'J', code_size);
    memset(message, 'J', message_size);
    cr_assert_eq(s3_error_parse(xml, strlen(xml), code, code_size, message, message_size),
                 S3_LISTING_OK, "%s", xml);
    cr_expect_str_eq(code, want_code);
    cr_expect_str_eq(message, want_message);
    free(code);
    free(message);
}

Test(s3_error, aws_error_document)
{
    static const char xml[] =
        XML_DECL "<Error><Code>NoSuchBucket</Code><Message>The specified bucket does not "
                 "exist</Message><BucketName>nope</BucketName><RequestId>4442587FB7D0A2F9</RequestId>"
                 "<HostId>abc=</HostId></Error>";
    expect_error_doc(xml, 64, 128, "NoSuchBucket", "The specified bucket does not exist");
}

Test(s3_error, namespaced_and_missing_fields)
{
    static const char xml[] = "<Error xmlns=\"" S3_NS "\"><Code>AccessDenied</Code></Error>";
    expect_error_doc(xml, 64, 64, "AccessDenied", "");
    expect_error_doc("<Error/>", 64, 64, "", "");
}

Test(s3_error, moto_error_with_entities)
{
    static const char xml[] =
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error>\n    <Code>SlowDown</Code>\n"
        "    <Message>Please reduce your request rate &amp; retry &lt;soon&gt;</Message>\n"
        "    <RequestID>7a62c49f</RequestID>\n</Error>";
    expect_error_doc(xml, 64, 128, "SlowDown", "Please reduce your request rate & retry <soon>");
}

Test(s3_error, control_characters_replaced)
{
    static const char xml[] =
        "<Error><Code>Bad&#9;Code</Code><Message>line1\nline2\r&#x85;end&#x7f;</Message></Error>";
    /* libxml2 normalises the CR; NEL (U+0085, a C1 control) and DEL become '?'. */
    expect_error_doc(xml, 64, 64, "Bad?Code", "line1?line2??end?");
}

Test(s3_error, truncated_to_buffer_on_utf8_boundary)
{
    static const char xml[] =
        "<Error><Code>InternalError</Code><Message>caf\xC3\xA9 \xE2\x82\xAC\xE2\x82\xAC</Message></Error>";
    char code[5], message[6];
    cr_assert_eq(s3_error_parse(xml, strlen(xml), code, sizeof code, message, sizeof message),
                 S3_LISTING_OK);
    cr_expect_str_eq(code, "Inte");
    cr_expect_str_eq(message, "caf\xC3\xA9", "é fits in 5 bytes");
    char message4[5];
    cr_assert_eq(s3_error_parse(xml, strlen(xml), code, sizeof code, message4, sizeof message4),
                 S3_LISTING_OK);
    cr_expect_str_eq(message4, "caf", "a split é is dropped, not cut in half");
    char one[1];
    cr_assert_eq(s3_error_parse(xml, strlen(xml), one, 1, NULL, 0), S3_LISTING_OK);
    cr_expect_eq(one[0], '\0');
}

Test(s3_error, not_an_error_document)
{
    char code[16] = "junk", message[16] = "junk";
    cr_expect_eq(s3_error_parse(aws_page, strlen(aws_page), code, sizeof code, message,
                                sizeof message),
                 S3_LISTING_ERR_PARSE);
    cr_expect_str_eq(code, "");
    cr_expect_str_eq(message, "");
    cr_expect_eq(s3_error_parse("<Error><Code>x</Error>", 22, code, sizeof code, message,
                                sizeof message),
                 S3_LISTING_ERR_PARSE);
    cr_expect_str_eq(code, "");
    cr_expect_eq(s3_error_parse("", 0, code, sizeof code, message, sizeof message),
                 S3_LISTING_ERR_PARSE);
    cr_expect_eq(s3_error_parse(NULL, 3, code, sizeof code, message, sizeof message),
                 S3_LISTING_ERR_PARSE);
    /* HTML from a proxy, not S3. */
    static const char html[] = "<html><body><h1>502 Bad Gateway</h1></body></html>";
    cr_expect_eq(s3_error_parse(html, strlen(html), code, sizeof code, message, sizeof message),
                 S3_LISTING_ERR_PARSE);
}

/* ---- ISO 8601 --------------------------------------------------------------- */

typedef struct {
    const char *text;
    int64_t want;
} time_case;

Test(iso8601, valid)
{
    static const time_case cases[] = {
        { "1970-01-01T00:00:00Z", 0 },
        { "1970-01-01T00:00:00.000Z", 0 },
        { "2024-01-02T03:04:05.000Z", 1704164645 },
        { "2024-01-02T03:04:05Z", 1704164645 },
        { "2024-01-02t03:04:05z", 1704164645 },
        { "2024-01-02T03:04:05.123456789Z", 1704164645 },
        { "2024-01-02T05:04:05+02:00", 1704164645 },
        { "2024-01-01T22:04:05-05:00", 1704164645 },
        { "2000-02-29T00:00:00Z", 951782400 },
        { "1969-12-31T23:59:59Z", -1 },
        { "1900-01-01T00:00:00Z", -2208988800 },
        { "2038-01-19T03:14:08Z", 2147483648 },
        { "9999-12-31T23:59:59Z", 253402300799 },
        { "0000-01-01T00:00:00Z", -62167219200 },
        { "2016-12-31T23:59:60Z", 1483228800 }, /* leap second: the next minute's 0 */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int64_t t = 12345;
        cr_expect_eq(s3_parse_iso8601(cases[i].text, &t), 0, "%s rejected", cases[i].text);
        cr_expect_eq(t, cases[i].want, "%s: got %lld want %lld", cases[i].text, (long long)t,
                     (long long)cases[i].want);
    }
}

Test(iso8601, invalid)
{
    static const char *const bad[] = {
        "", "2024", "2024-01-02", "2024-01-02T03:04:05", "2024-01-02 03:04:05Z",
        "2024-1-02T03:04:05Z", "2024-01-02T3:04:05Z", "2024-00-10T00:00:00Z",
        "2024-13-10T00:00:00Z", "2024-01-00T00:00:00Z", "2024-01-32T00:00:00Z",
        "2023-02-29T00:00:00Z", "1900-02-29T00:00:00Z", "2024-04-31T00:00:00Z",
        "2024-01-02T24:00:00Z", "2024-01-02T03:60:00Z", "2024-01-02T03:04:61Z",
        "2024-01-02T03:04:05.Z", "2024-01-02T03:04:05ZZ", "2024-01-02T03:04:05Z ",
        " 2024-01-02T03:04:05Z", "2024-01-02T03:04:05+0200", "2024-01-02T03:04:05+24:00",
        "2024-01-02T03:04:05+02:60", "2024-01-02T03:04:05GMT", "+2024-01-02T03:04:05Z",
        "-001-01-02T03:04:05Z", "2024-01-02T03:04:05.5.5Z", "Tue, 02 Jan 2024 03:04:05 GMT",
        "２０２４-01-02T03:04:05Z",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int64_t t = 777;
        cr_expect_eq(s3_parse_iso8601(bad[i], &t), -1, "\"%s\" accepted", bad[i]);
        cr_expect_eq(t, 777, "\"%s\" modified the output", bad[i]);
    }
    int64_t t;
    cr_expect_eq(s3_parse_iso8601(NULL, &t), -1);
    cr_expect_eq(s3_parse_iso8601("1970-01-01T00:00:00Z", NULL), -1);
}
