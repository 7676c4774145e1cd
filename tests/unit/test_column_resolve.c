/* Column names to leaves (planner/format/column_resolve): exact paths first,
 * then a unique ASCII case-insensitive match; unknown and ambiguous names
 * told apart, ambiguity reported with the first two leaves in schema order. */
#include "column_resolve.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A pq_file_meta holding only leaf paths: all the resolver reads. */
typedef struct {
    pq_file_meta m;
    pq_leaf *leaves;
} schema;

static schema make_schema(const char *const *paths, uint32_t n)
{
    schema s;
    memset(&s, 0, sizeof s);
    s.leaves = calloc(n ? n : 1, sizeof *s.leaves);
    cr_assert_not_null(s.leaves);
    for (uint32_t i = 0; i < n; i++)
        s.leaves[i].path = (char *)paths[i];
    s.m.leaves = s.leaves;
    s.m.n_leaves = n;
    return s;
}

static pq_resolve_status resolve(const schema *s, const char *name, pq_column_match *out)
{
    pq_column_resolver *r = pq_column_resolver_new(&s->m);
    cr_assert_not_null(r);
    const pq_resolve_status st = pq_column_resolve(r, name, out);
    pq_column_resolver_free(r);
    return st;
}

/* name resolves to leaf, exactly or by case. */
static void expect_leaf(const schema *s, const char *name, uint32_t leaf, bool exact)
{
    pq_column_match m;
    cr_assert_eq(resolve(s, name, &m), PQ_RESOLVE_OK, "'%s'", name);
    cr_expect_eq(m.leaf, leaf, "'%s': leaf %u, want %u", name, m.leaf, leaf);
    cr_expect_eq(m.exact, exact, "'%s': exact %d, want %d", name, m.exact, exact);
}

/* name is ambiguous, first found at leaves first and second. */
static void expect_ambiguous(const schema *s, const char *name, uint32_t first, uint32_t second)
{
    pq_column_match m;
    cr_assert_eq(resolve(s, name, &m), PQ_RESOLVE_AMBIGUOUS, "'%s'", name);
    cr_expect_eq(m.candidates[0], first, "'%s'", name);
    cr_expect_eq(m.candidates[1], second, "'%s'", name);
}

Test(column_resolve, exact_path)
{
    static const char *const paths[] = {"id", "st.a", "st.b", "Name"};
    schema s = make_schema(paths, 4);
    expect_leaf(&s, "st.b", 2, true);
    expect_leaf(&s, "Name", 3, true);
    free(s.leaves);
}

Test(column_resolve, unique_case_insensitive_match)
{
    static const char *const paths[] = {"id", "Ship.Mode", "price"};
    schema s = make_schema(paths, 3);
    expect_leaf(&s, "ship.mode", 1, false);
    expect_leaf(&s, "PRICE", 2, false);
    free(s.leaves);
}

Test(column_resolve, exact_match_wins_over_case_variants)
{
    static const char *const paths[] = {"ab", "Ab", "aB"};
    schema s = make_schema(paths, 3);
    expect_leaf(&s, "Ab", 1, true);
    free(s.leaves);
}

Test(column_resolve, ambiguous_without_case_names_first_two_in_schema_order)
{
    static const char *const paths[] = {"x", "aB", "y", "AB", "Ab", "z"};
    schema s = make_schema(paths, 6);
    expect_ambiguous(&s, "ab", 1, 3);
    free(s.leaves);
}

Test(column_resolve, repeated_exact_path_is_ambiguous)
{
    static const char *const paths[] = {"a", "dup", "b", "dup"};
    schema s = make_schema(paths, 4);
    expect_ambiguous(&s, "dup", 1, 3);
    free(s.leaves);
}

Test(column_resolve, unknown_names)
{
    static const char *const paths[] = {"id", "st.a"};
    schema s = make_schema(paths, 2);
    pq_column_match m;
    cr_expect_eq(resolve(&s, "st", &m), PQ_RESOLVE_UNKNOWN);
    cr_expect_eq(resolve(&s, "st.a.b", &m), PQ_RESOLVE_UNKNOWN);
    cr_expect_eq(resolve(&s, "", &m), PQ_RESOLVE_UNKNOWN);
    cr_expect_eq(resolve(&s, "i", NULL), PQ_RESOLVE_UNKNOWN);
    free(s.leaves);
    schema empty = make_schema(NULL, 0);
    cr_expect_eq(resolve(&empty, "id", &m), PQ_RESOLVE_UNKNOWN);
    free(empty.leaves);
}

Test(column_resolve, case_folding_is_ascii_only)
{
    /* 0xC3 0x84 is "Ä" in UTF-8; "ä" is 0xC3 0xA4: different bytes, no match. */
    static const char *const paths[] = {"\xc3\x84pfel"};
    schema s = make_schema(paths, 1);
    pq_column_match m;
    cr_expect_eq(resolve(&s, "\xc3\xa4pfel", &m), PQ_RESOLVE_UNKNOWN);
    cr_expect_eq(resolve(&s, "\xc3\x84PFEL", &m), PQ_RESOLVE_OK);
    free(s.leaves);
}

Test(column_resolve, thousands_of_leaves_and_lookups)
{
    enum { N = 20000 };
    char (*names)[24] = malloc(N * sizeof *names);
    const char **paths = malloc(N * sizeof *paths);
    cr_assert(names && paths);
    for (uint32_t i = 0; i < N; i++) {
        snprintf(names[i], sizeof names[i], "grp%u.Col_%u", i % 97, i);
        paths[i] = names[i];
    }
    schema s = make_schema(paths, N);
    const clock_t t0 = clock();
    pq_column_resolver *r = pq_column_resolver_new(&s.m);
    cr_assert_not_null(r);
    for (uint32_t i = 0; i < N; i++) {
        char upper[24];
        snprintf(upper, sizeof upper, "GRP%u.COL_%u", i % 97, i);
        pq_column_match m;
        cr_assert_eq(pq_column_resolve(r, upper, &m), PQ_RESOLVE_OK);
        cr_assert_eq(m.leaf, i);
        cr_assert_eq(pq_column_resolve(r, names[i], &m), PQ_RESOLVE_OK);
        cr_assert(m.exact && m.leaf == i);
    }
    pq_column_resolver_free(r);
    /* Two sorts and 4 binary searches a name: far below a second even
     * under sanitizers; a linear scan per name would take ~10^9 steps. */
    cr_expect_lt((double)(clock() - t0) / CLOCKS_PER_SEC, 5.0);
    free(s.leaves);
    free(paths);
    free(names);
}
