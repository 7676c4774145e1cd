/* delta_schema_parse: logical and physical names, column mapping modes,
 * partition columns, nested structs, and refusals. */
#include "delta_schema.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

static const char *mapped =
    "{\"type\":\"struct\",\"fields\":["
    "{\"name\":\"id\",\"type\":\"long\",\"nullable\":true,\"metadata\":{\"delta.columnMapping.id\":1,"
    "\"delta.columnMapping.physicalName\":\"col-1a\"}},"
    "{\"name\":\"Region\",\"type\":\"string\",\"nullable\":false,\"metadata\":{\"delta.columnMapping.id\":2,"
    "\"delta.columnMapping.physicalName\":\"col-2b\"}},"
    "{\"name\":\"s\",\"type\":{\"type\":\"struct\",\"fields\":["
    "  {\"name\":\"a b\",\"type\":\"decimal(10,2)\",\"nullable\":true,\"metadata\":{\"delta.columnMapping.id\":4,"
    "   \"delta.columnMapping.physicalName\":\"col-4d\"}}]},"
    " \"nullable\":true,\"metadata\":{\"delta.columnMapping.id\":3,\"delta.columnMapping.physicalName\":\"col-3c\"}},"
    "{\"name\":\"tags\",\"type\":{\"type\":\"array\",\"elementType\":\"string\",\"containsNull\":true},"
    " \"nullable\":true,\"metadata\":{\"delta.columnMapping.id\":5,\"delta.columnMapping.physicalName\":\"col-5e\"}}"
    "]}";

Test(delta_schema, name_mapping_gives_physical_paths)
{
    char *parts[] = {"Region"};
    delta_schema s;
    sv_error e = {0};
    cr_assert_eq(delta_schema_parse(mapped, strlen(mapped), DELTA_MAPPING_NAME, parts, 1, &s, &e), 0, "%s", e.msg);
    cr_assert_eq(s.n_fields, 5);
    const delta_field *f = delta_schema_find(&s, "s.a b");
    cr_assert_not_null(f);
    cr_assert_str_eq(f->physical, "col-3c.col-4d");
    cr_assert_str_eq(f->type, "decimal(10,2)");
    cr_assert_eq(f->field_id, 4);
    cr_assert_eq(f->depth, 2);
    cr_assert_str_eq(s.fields[f->parent].logical, "s");
    f = delta_schema_find(&s, "region"); /* case-insensitive when unique */
    cr_assert_not_null(f);
    cr_assert(f->partition);
    cr_assert_not(f->nullable);
    cr_assert_str_eq(f->physical, "col-2b");
    cr_assert_str_eq(delta_schema_find(&s, "tags")->type, "array");
    cr_assert_null(delta_schema_find(&s, "nope"));
    delta_schema_free(&s);
}

Test(delta_schema, without_mapping_physical_is_logical)
{
    delta_schema s;
    sv_error e = {0};
    cr_assert_eq(delta_schema_parse(mapped, strlen(mapped), DELTA_MAPPING_NONE, NULL, 0, &s, &e), 0, "%s", e.msg);
    cr_assert_str_eq(delta_schema_find(&s, "s.a b")->physical, "s.a b");
    cr_assert_eq(delta_schema_find(&s, "id")->field_id, -1);
    delta_schema_free(&s);
}

static void refused(const char *json, delta_mapping_mode mode, char **parts, size_t np, const char *needle)
{
    delta_schema s;
    sv_error e = {0};
    cr_assert_neq(delta_schema_parse(json, strlen(json), mode, parts, np, &s, &e), 0, "accepted %s", json);
    cr_assert(strstr(e.msg, needle), "'%s' should mention '%s'", e.msg, needle);
}

Test(delta_schema, refusals)
{
    refused("{\"type\":\"struct\",\"fields\":[{\"name\":\"a\",\"type\":\"long\",\"nullable\":true,\"metadata\":{}}]}",
            DELTA_MAPPING_NAME, NULL, 0, "physicalName");
    refused("[1,2]", DELTA_MAPPING_NONE, NULL, 0, "not a struct");
    refused("{\"type\":\"struct\"", DELTA_MAPPING_NONE, NULL, 0, "schema");
    char *bad[] = {"missing"};
    refused("{\"type\":\"struct\",\"fields\":[{\"name\":\"a\",\"type\":\"long\",\"nullable\":true,\"metadata\":{}}]}",
            DELTA_MAPPING_NONE, bad, 1, "partition column \"missing\"");
    char *nested[] = {"s"};
    refused(mapped, DELTA_MAPPING_NAME, nested, 1, "is a struct");
    refused("{\"type\":\"struct\",\"fields\":[{\"name\":\"a\",\"nullable\":true}]}", DELTA_MAPPING_NONE, NULL, 0,
            "expected name, type");
    cr_assert_eq(delta_mapping_mode_parse("id"), DELTA_MAPPING_ID);
    cr_assert_eq(delta_mapping_mode_parse(NULL), DELTA_MAPPING_NONE);
    cr_assert_eq(delta_mapping_mode_parse("bogus"), -1);
}

Test(delta_schema, deep_nesting_is_limited)
{
    char buf[16384];
    size_t n = 0;
    n += (size_t)snprintf(buf + n, sizeof buf - n, "{\"type\":\"struct\",\"fields\":[");
    for (int d = 0; d < 70; d++)
        n += (size_t)snprintf(buf + n, sizeof buf - n,
                              "{\"name\":\"f\",\"nullable\":true,\"type\":{\"type\":\"struct\",\"fields\":[");
    n += (size_t)snprintf(buf + n, sizeof buf - n, "{\"name\":\"x\",\"type\":\"long\",\"nullable\":true}");
    for (int d = 0; d < 70; d++)
        n += (size_t)snprintf(buf + n, sizeof buf - n, "]}}");
    n += (size_t)snprintf(buf + n, sizeof buf - n, "]}");
    refused(buf, DELTA_MAPPING_NONE, NULL, 0, "deeper");
}
