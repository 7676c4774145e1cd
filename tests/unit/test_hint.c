/* hint_parse: the JSON format, normalisation of rows and paths, limits and
 * error messages. */
#include "hint.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* err: where the message goes (at least SV_ERROR_MSG bytes). */
static sv_hint *parse(const char *json, char *err)
{
    sv_error e = {0};
    sv_hint *h = hint_parse(json, strlen(json), &e);
    memcpy(err, e.msg, sizeof e.msg);
    if (!h)
        cr_expect_neq(e.code, HINT_OK, "a rejection carries a code: %s", e.msg);
    return h;
}

static void rejects(const char *json, const char *needle)
{
    char err[SV_ERROR_MSG] = "";
    sv_hint *h = parse(json, err);
    cr_assert_null(h, "accepted: %s", json);
    cr_assert(strstr(err, needle), "error for %s is '%s', expected it to mention '%s'", json, err, needle);
}

Test(hint, full_document)
{
    char err[SV_ERROR_MSG] = "";
    sv_hint *h = parse("{\"where\": \"a > 5 AND b = 'x'\", "
                       "\"rows\": {\"./t/part-1.parquet\": [[10, 20], [0, 5], [15, 30], [40, 40]],"
                       "           \"t/part-0.parquet\": [[1, 2]]},"
                       " \"columns\": [\"a\", \"c\"]}",
                       err);
    cr_assert_not_null(h, "%s", err);
    cr_assert_str_eq(h->where, "a > 5 AND b = 'x'");
    cr_assert_not_null(h->pred);
    cr_assert_eq(h->n_files, 2);
    cr_assert_str_eq(h->files[0].path, "t/part-0.parquet"); /* sorted */
    const hint_file_rows *fr = hint_rows_for(h, "t/part-1.parquet");
    cr_assert_not_null(fr);
    cr_assert_eq(fr->ranges.n, 2, "ranges are sorted, merged, empty ones dropped");
    cr_assert_eq(fr->ranges.r[0].start, 0);
    cr_assert_eq(fr->ranges.r[0].end, 5);
    cr_assert_eq(fr->ranges.r[1].start, 10);
    cr_assert_eq(fr->ranges.r[1].end, 30);
    cr_assert_null(hint_rows_for(h, "t/part-2.parquet"));
    cr_assert_eq(h->n_columns, 2);
    cr_assert_str_eq(h->columns[1], "c");
    hint_free(h);
}

Test(hint, empty_object_selects_everything)
{
    char err[SV_ERROR_MSG];
    sv_hint *h = parse("{}", err);
    cr_assert_not_null(h);
    cr_assert_null(h->pred);
    cr_assert_eq(h->n_files, 0);
    hint_free(h);
    h = parse("{\"where\": null, \"version\": 1}", err);
    cr_assert_not_null(h, "%s", err);
    hint_free(h);
}

Test(hint, bad_documents)
{
    rejects("", "malformed JSON");
    rejects("{\"where\": ", "malformed JSON");
    rejects("[1]", "JSON object");
    rejects("{\"wher\": \"a = 1\"}", "unknown hint field \"wher\"");
    rejects("{\"where\": 5}", "\"where\" must be a string");
    rejects("{\"where\": \"a = \"}", "where:");
    rejects("{\"where\": \"a = 1\", \"where\": \"b = 2\"}", "malformed JSON");
    rejects("{\"version\": 2}", "version");
    rejects("{\"rows\": []}", "\"rows\" must be an object");
    rejects("{\"rows\": {\"f\": [[1]]}}", "[start, end]");
    rejects("{\"rows\": {\"f\": [[-1, 3]]}}", "non-negative");
    rejects("{\"rows\": {\"f\": [[5, 3]]}}", "before start");
    rejects("{\"rows\": {\"f\": [[1.5, 3]]}}", "integers");
    rejects("{\"rows\": {\"/etc/passwd\": [[0, 1]]}}", "outside the mount");
    rejects("{\"rows\": {\"../x.parquet\": [[0, 1]]}}", "'..'");
    rejects("{\"rows\": {\"a//b\": [[0, 1]]}}", "empty");
    rejects("{\"rows\": {\"a/./b\": [[0, 1]]}}", "'.'");
    rejects("{\"rows\": {\"\": [[0, 1]]}}", "1 to");
    rejects("{\"rows\": {\"a\": [[0, 1]], \"./a\": [[2, 3]]}}", "appears twice");
    rejects("{\"columns\": \"a\"}", "array of column names");
    rejects("{\"columns\": [1]}", "columns[0]");
    rejects("{\"columns\": [\"\"]}", "columns[0]");
}

Test(hint, where_error_has_a_position)
{
    char err[SV_ERROR_MSG] = "";
    sv_hint *h = parse("{\"where\": \"a = 1 AND (b < 2\"}", err);
    cr_assert_null(h);
    cr_assert(strstr(err, "where:"), "%s", err);
    cr_assert(strpbrk(err, "0123456789"), "no position in '%s'", err);
}

Test(hint, size_limit)
{
    size_t n = HINT_MAX_BYTES + 10;
    char *big = malloc(n + 1);
    memset(big, ' ', n);
    big[0] = '{';
    big[n - 1] = '}';
    big[n] = '\0';
    sv_error e = {0};
    cr_assert_null(hint_parse(big, n, &e));
    cr_assert(strstr(e.msg, "limit"), "%s", e.msg);
    cr_assert_eq(e.code, HINT_E_LIMIT);
    free(big);
}

Test(hint, names)
{
    cr_assert(hint_name_valid("q1", 2));
    cr_assert(hint_name_valid("my-query_2.v1", 13));
    cr_assert_not(hint_name_valid("", 0));
    cr_assert_not(hint_name_valid(".hidden", 7));
    cr_assert_not(hint_name_valid("a/b", 3));
    cr_assert_not(hint_name_valid("a b", 3));
    char longname[200];
    memset(longname, 'x', sizeof longname);
    cr_assert_not(hint_name_valid(longname, 129));
    cr_assert(hint_name_valid(longname, 128));
}
