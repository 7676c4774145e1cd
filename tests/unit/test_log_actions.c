/* delta_action_parse: action lines as Spark and delta-rs write them, percent
 * decoding, partition values, deletion vectors, table features, and the
 * messages for wrong or missing fields. */
#include "log_actions.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static delta_action parse_ok(const char *line)
{
    delta_action a;
    sv_error e = {0};
    int rc = delta_action_parse(line, strlen(line), &a, &e);
    cr_assert_eq(rc, DELTA_ACTION_OK, "rejected %s: %s", line, e.msg);
    return a;
}

static void rejects(const char *line, int code, const char *needle)
{
    delta_action a;
    sv_error e = {0};
    int rc = delta_action_parse(line, strlen(line), &a, &e);
    cr_assert_eq(rc, code, "code %d for %s (%s), expected %d", rc, line, e.msg, code);
    cr_assert(strstr(e.msg, needle), "error for %s is '%s', expected it to mention '%s'", line, e.msg, needle);
    cr_assert_eq(a.kind, DELTA_ACTION_BLANK, "a rejected line leaves an empty action");
}

Test(log_actions, add_with_stats_and_tags)
{
    delta_action a = parse_ok(
        "{\"add\":{\"path\":\"part-00000-fae5310a-a37d-4e51-827b-c3d5516560ca-c000.snappy.parquet\","
        "\"partitionValues\":{},\"size\":635,\"modificationTime\":1677811178336,\"dataChange\":true,"
        "\"stats\":\"{\\\"numRecords\\\":10,\\\"minValues\\\":{\\\"value\\\":0},\\\"maxValues\\\":{\\\"value\\\":9},"
        "\\\"nullCount\\\":{\\\"value\\\":0},\\\"tightBounds\\\":true}\","
        "\"tags\":{\"INSERTION_TIME\":\"1677811178336000\",\"OPTIMIZE_TARGET_SIZE\":\"268435456\"}}}\n");
    cr_assert_eq(a.kind, DELTA_ACTION_ADD);
    cr_assert_str_eq(a.add.path, "part-00000-fae5310a-a37d-4e51-827b-c3d5516560ca-c000.snappy.parquet");
    cr_assert_eq(a.add.n_partition_values, 0);
    cr_assert_eq(a.add.size, 635);
    cr_assert_eq(a.add.modification_time, 1677811178336);
    cr_assert(a.add.data_change);
    cr_assert_str_eq(a.add.stats, "{\"numRecords\":10,\"minValues\":{\"value\":0},\"maxValues\":{\"value\":9},"
                                  "\"nullCount\":{\"value\":0},\"tightBounds\":true}");
    cr_assert_not(a.add.has_dv);
    cr_assert_eq(a.add.base_row_id, -1);
    cr_assert_eq(a.add.default_row_commit_version, -1);
    delta_action_free(&a);
    cr_assert_eq(a.kind, DELTA_ACTION_BLANK);
}

Test(log_actions, add_with_deletion_vector_and_row_tracking)
{
    delta_action a = parse_ok(
        "{\"add\":{\"path\":\"part-00000-fae5310a-a37d-4e51-827b-c3d5516560ca-c000.snappy.parquet\","
        "\"partitionValues\":{},\"size\":635,\"modificationTime\":1677811178336,\"dataChange\":true,"
        "\"stats\":\"{\\\"numRecords\\\":10}\",\"baseRowId\":4071,\"defaultRowCommitVersion\":41,"
        "\"deletionVector\":{\"storageType\":\"u\",\"pathOrInlineDv\":\"vBn[lx{q8@P<9BNH/isA\",\"offset\":1,"
        "\"sizeInBytes\":36,\"cardinality\":2}}}");
    cr_assert(a.add.has_dv);
    cr_assert_eq(a.add.dv.storage_type, 'u');
    cr_assert_str_eq(a.add.dv.path_or_inline, "vBn[lx{q8@P<9BNH/isA");
    cr_assert_eq(a.add.dv.offset, 1);
    cr_assert_eq(a.add.dv.size_in_bytes, 36);
    cr_assert_eq(a.add.dv.cardinality, 2);
    cr_assert_eq(a.add.base_row_id, 4071);
    cr_assert_eq(a.add.default_row_commit_version, 41);
    delta_action_free(&a);

    /* Inline: no offset. A null deletionVector is none. */
    a = parse_ok("{\"add\":{\"path\":\"p.parquet\",\"partitionValues\":{},\"size\":1,\"modificationTime\":2,"
                 "\"dataChange\":false,\"deletionVector\":{\"storageType\":\"i\","
                 "\"pathOrInlineDv\":\"wi5b=000010000siXQKl0rr91000f55c8Xg0@@D72lkbi5=-{L\",\"sizeInBytes\":40,"
                 "\"cardinality\":6}}}");
    cr_assert_eq(a.add.dv.storage_type, 'i');
    cr_assert_eq(a.add.dv.offset, -1);
    cr_assert_not(a.add.data_change);
    delta_action_free(&a);
    a = parse_ok("{\"add\":{\"path\":\"p.parquet\",\"partitionValues\":{},\"size\":1,\"modificationTime\":2,"
                 "\"dataChange\":true,\"deletionVector\":null,\"stats\":null}}");
    cr_assert_not(a.add.has_dv);
    cr_assert_null(a.add.stats);
    delta_action_free(&a);
}

Test(log_actions, percent_encoded_paths)
{
    delta_action a = parse_ok("{\"add\":{\"path\":\"a%20b/part%3D1.parquet\",\"partitionValues\":{\"a\":\"b\"},"
                              "\"size\":10,\"modificationTime\":0,\"dataChange\":true}}");
    cr_assert_str_eq(a.add.path, "a b/part=1.parquet");
    delta_action_free(&a);
    /* Spark: the directory x=A%2FA (Hive escaping of "A/A"), URI-encoded once more; '+' stays '+'. */
    a = parse_ok("{\"add\":{\"path\":\"x=A%252FA/part-00007-b350e235.c000.snappy.parquet\","
                 "\"partitionValues\":{\"x\":\"A/A\"},\"size\":460,\"modificationTime\":1631873480391,"
                 "\"dataChange\":true}}");
    cr_assert_str_eq(a.add.path, "x=A%2FA/part-00007-b350e235.c000.snappy.parquet");
    cr_assert_str_eq(a.add.partition_values[0].value, "A/A");
    delta_action_free(&a);
    a = parse_ok("{\"remove\":{\"path\":\"s3://bucket/t/c%3a%c3%a9+d.parquet\",\"dataChange\":true}}");
    cr_assert_str_eq(a.remove.path, "s3://bucket/t/c:\xc3\xa9+d.parquet");
    delta_action_free(&a);

    rejects("{\"add\":{\"path\":\"a%2\",\"partitionValues\":{},\"size\":1,\"modificationTime\":2,\"dataChange\":true}}",
            DELTA_ACTION_E_INVALID, "add: \"path\": bad percent-escape at byte 1");
    rejects("{\"add\":{\"path\":\"a%zz.parquet\",\"partitionValues\":{},\"size\":1,\"modificationTime\":2,"
            "\"dataChange\":true}}",
            DELTA_ACTION_E_INVALID, "bad percent-escape");
    rejects("{\"add\":{\"path\":\"a%00.parquet\",\"partitionValues\":{},\"size\":1,\"modificationTime\":2,"
            "\"dataChange\":true}}",
            DELTA_ACTION_E_INVALID, "not %00");
    rejects("{\"add\":{\"path\":\"\",\"partitionValues\":{},\"size\":1,\"modificationTime\":2,\"dataChange\":true}}",
            DELTA_ACTION_E_INVALID, "1 to 8192 bytes");
    /* A raw U+0000 is refused by jansson already. */
    rejects("{\"add\":{\"path\":\"a\\u0000b\",\"partitionValues\":{},\"size\":1,\"modificationTime\":2,"
            "\"dataChange\":true}}",
            DELTA_ACTION_E_JSON, "malformed JSON");

    size_t n = DELTA_ACTION_MAX_PATH + 1;
    char *longline = malloc(n + 200);
    cr_assert_not_null(longline);
    int off = sprintf(longline, "{\"remove\":{\"dataChange\":true,\"path\":\"");
    memset(longline + off, 'x', n);
    strcpy(longline + off + n, "\"}}");
    rejects(longline, DELTA_ACTION_E_LIMIT, "1 to 8192 bytes (it has 8193)");
    free(longline);
}

Test(log_actions, partition_values_keep_order_and_nulls)
{
    delta_action a = parse_ok(
        "{\"add\":{\"path\":\"k=__HIVE_DEFAULT_PARTITION__/d=2024-01-02/part-00001.c000.snappy.parquet\","
        "\"partitionValues\":{\"k\":null,\"d\":\"2024-01-02\",\"e\":\"\",\"a\":\"x\"},\"size\":460,"
        "\"modificationTime\":1627990384000,\"dataChange\":true}}");
    cr_assert_eq(a.add.n_partition_values, 4);
    cr_assert_str_eq(a.add.partition_values[0].key, "k");
    cr_assert_null(a.add.partition_values[0].value);
    cr_assert_str_eq(a.add.partition_values[1].key, "d");
    cr_assert_str_eq(a.add.partition_values[1].value, "2024-01-02");
    cr_assert_str_eq(a.add.partition_values[2].key, "e");
    cr_assert_null(a.add.partition_values[2].value, "an empty partition value is null");
    cr_assert_str_eq(a.add.partition_values[3].key, "a", "document order, not sorted");
    delta_action_free(&a);
    rejects("{\"add\":{\"path\":\"p\",\"partitionValues\":{\"k\":1},\"size\":1,\"modificationTime\":2,"
            "\"dataChange\":true}}",
            DELTA_ACTION_E_INVALID, "add: \"partitionValues\".\"k\": expected a string or null, found an integer");
    rejects("{\"add\":{\"path\":\"p\",\"partitionValues\":[],\"size\":1,\"modificationTime\":2,\"dataChange\":true}}",
            DELTA_ACTION_E_INVALID, "add: \"partitionValues\": expected an object, found an array");
}

Test(log_actions, remove_with_deletion_vector)
{
    delta_action a = parse_ok(
        "{\"remove\":{\"path\":\"part-00000-fae5310a-a37d-4e51-827b-c3d5516560ca-c000.snappy.parquet\","
        "\"deletionTimestamp\":1677811194426,\"dataChange\":true,\"extendedFileMetadata\":true,"
        "\"partitionValues\":{},\"size\":635,\"deletionVector\":{\"storageType\":\"p\","
        "\"pathOrInlineDv\":\"s3://mytable/deletion_vector_d2c639aa-8816-431a-aaf6-d3fe2512ff61.bin\",\"offset\":4,"
        "\"sizeInBytes\":40,\"cardinality\":6},\"tags\":{\"INSERTION_TIME\":\"1677811178336000\"}}}");
    cr_assert_eq(a.kind, DELTA_ACTION_REMOVE);
    cr_assert_eq(a.remove.deletion_timestamp, 1677811194426);
    cr_assert(a.remove.data_change);
    cr_assert(a.remove.has_partition_values);
    cr_assert_eq(a.remove.size, 635);
    cr_assert(a.remove.has_dv);
    cr_assert_eq(a.remove.dv.storage_type, 'p');
    cr_assert_str_eq(a.remove.dv.path_or_inline,
                     "s3://mytable/deletion_vector_d2c639aa-8816-431a-aaf6-d3fe2512ff61.bin");
    cr_assert_eq(a.remove.dv.offset, 4);
    delta_action_free(&a);

    /* Delta 0.2: the minimal remove. */
    a = parse_ok("{\"remove\":{\"path\":\"part-00000-512e1537-8aaa-4193-b8b4-bef3de0de409-c000.snappy.parquet\","
                 "\"deletionTimestamp\":1564524298213,\"dataChange\":true}}");
    cr_assert_not(a.remove.has_partition_values);
    cr_assert_eq(a.remove.size, -1);
    cr_assert_not(a.remove.has_dv);
    cr_assert_eq(a.remove.base_row_id, -1);
    delta_action_free(&a);
    a = parse_ok("{\"remove\":{\"path\":\"f\",\"dataChange\":false}}");
    cr_assert_eq(a.remove.deletion_timestamp, -1);
    delta_action_free(&a);

    rejects("{\"remove\":{\"path\":\"f\"}}", DELTA_ACTION_E_INVALID,
            "remove: \"dataChange\": expected a boolean, but the field is missing");
    rejects("{\"remove\":{\"path\":\"f\",\"dataChange\":true,\"deletionVector\":{\"storageType\":\"x\","
            "\"pathOrInlineDv\":\"a\",\"sizeInBytes\":1,\"cardinality\":1}}}",
            DELTA_ACTION_E_INVALID, "remove: \"deletionVector\".\"storageType\": expected \"u\", \"i\" or \"p\"");
    rejects("{\"remove\":{\"path\":\"f\",\"dataChange\":true,\"deletionVector\":{\"storageType\":\"u\","
            "\"pathOrInlineDv\":\"a\",\"sizeInBytes\":\"1\",\"cardinality\":1}}}",
            DELTA_ACTION_E_INVALID, "remove: \"deletionVector\".\"sizeInBytes\": expected an integer, found a string");
    rejects("{\"remove\":{\"path\":\"f\",\"dataChange\":true,\"deletionVector\":{\"storageType\":\"u\","
            "\"pathOrInlineDv\":\"a\",\"sizeInBytes\":2147483648,\"cardinality\":1}}}",
            DELTA_ACTION_E_INVALID, "\"sizeInBytes\": 2147483648 is out of range");
    rejects("{\"remove\":{\"path\":\"f\",\"dataChange\":true,\"deletionVector\":{\"storageType\":\"u\","
            "\"pathOrInlineDv\":\"a\",\"sizeInBytes\":1}}}",
            DELTA_ACTION_E_INVALID, "\"deletionVector\".\"cardinality\": expected an integer, but the field is missing");
    rejects("{\"remove\":{\"path\":\"f\",\"dataChange\":true,\"deletionVector\":[]}}", DELTA_ACTION_E_INVALID,
            "remove: \"deletionVector\": expected an object");
}

Test(log_actions, metadata_with_column_mapping)
{
    delta_action a = parse_ok(
        "{\"metaData\":{\"id\":\"592de637-dd77-4aaa-af00-97d723a7f1f1\",\"format\":{\"provider\":\"parquet\","
        "\"options\":{}},\"schemaString\":\"{\\\"type\\\":\\\"struct\\\",\\\"fields\\\":[{\\\"name\\\":"
        "\\\"Company Very Short\\\",\\\"type\\\":\\\"string\\\",\\\"nullable\\\":true,\\\"metadata\\\":"
        "{\\\"delta.columnMapping.id\\\":1,\\\"delta.columnMapping.physicalName\\\":"
        "\\\"col-173b4db9-b5ad-427f-9e75-516aae37fbbb\\\"}}]}\",\"partitionColumns\":[\"Company Very Short\"],"
        "\"configuration\":{\"delta.columnMapping.mode\":\"name\",\"delta.columnMapping.maxColumnId\":\"2\","
        "\"delta.enableDeletionVectors\":\"true\"},\"createdTime\":1699946083038}}");
    cr_assert_eq(a.kind, DELTA_ACTION_METADATA);
    cr_assert_str_eq(a.metadata.id, "592de637-dd77-4aaa-af00-97d723a7f1f1");
    cr_assert_null(a.metadata.name);
    cr_assert_null(a.metadata.description);
    cr_assert_str_eq(a.metadata.provider, "parquet");
    cr_assert(strstr(a.metadata.schema_string, "\"delta.columnMapping.physicalName\":"
                                               "\"col-173b4db9-b5ad-427f-9e75-516aae37fbbb\""));
    cr_assert_eq(a.metadata.n_partition_columns, 1);
    cr_assert_str_eq(a.metadata.partition_columns[0], "Company Very Short");
    cr_assert_eq(a.metadata.n_configuration, 3);
    cr_assert_str_eq(a.metadata.configuration[0].key, "delta.columnMapping.mode");
    cr_assert_str_eq(a.metadata.configuration[0].value, "name");
    cr_assert_str_eq(a.metadata.configuration[2].key, "delta.enableDeletionVectors");
    cr_assert_eq(a.metadata.created_time, 1699946083038);
    delta_action_free(&a);

    a = parse_ok("{\"metaData\":{\"id\":\"t\",\"name\":\"events\",\"description\":\"d\",\"format\":{\"provider\":"
                 "\"parquet\"},\"schemaString\":\"{}\",\"partitionColumns\":[],\"configuration\":{}}}");
    cr_assert_str_eq(a.metadata.name, "events");
    cr_assert_str_eq(a.metadata.description, "d");
    cr_assert_eq(a.metadata.created_time, -1);
    cr_assert_eq(a.metadata.n_configuration, 0);
    delta_action_free(&a);

    rejects("{\"metaData\":{\"id\":\"t\",\"format\":{},\"schemaString\":\"{}\",\"partitionColumns\":[],"
            "\"configuration\":{}}}",
            DELTA_ACTION_E_INVALID, "metaData: \"format\".\"provider\": expected a string, but the field is missing");
    rejects("{\"metaData\":{\"id\":\"t\",\"format\":{\"provider\":\"parquet\"},\"schemaString\":\"{}\","
            "\"partitionColumns\":[\"a\",3],\"configuration\":{}}}",
            DELTA_ACTION_E_INVALID, "metaData: \"partitionColumns\"[1]: expected a string, found an integer");
    rejects("{\"metaData\":{\"id\":\"t\",\"format\":{\"provider\":\"parquet\"},\"schemaString\":\"{}\","
            "\"partitionColumns\":[],\"configuration\":{\"k\":null}}}",
            DELTA_ACTION_E_INVALID, "metaData: \"configuration\".\"k\": expected a string, found null");
    /* Delta Live Tables commits a first metaData without a schema: taken, without one. */
    delta_action dlt;
    sv_error e = {0};
    const char *noschema = "{\"metaData\":{\"id\":\"t\",\"format\":{\"provider\":\"parquet\"},\"partitionColumns\":[],"
                           "\"configuration\":{}}}";
    cr_assert_eq(delta_action_parse(noschema, strlen(noschema), &dlt, &e), 0, "%s", e.msg);
    cr_expect_null(dlt.metadata.schema_string);
    delta_action_free(&dlt);
    rejects("{\"metaData\":{\"id\":\"t\",\"format\":{\"provider\":\"parquet\"},\"partitionColumns\":[],"
            "\"schemaString\":7,\"configuration\":{}}}",
            DELTA_ACTION_E_INVALID, "metaData: \"schemaString\": expected a string");
}

Test(log_actions, protocol_with_features)
{
    delta_action a = parse_ok("{\"protocol\":{\"minReaderVersion\":3,\"minWriterVersion\":7,"
                              "\"readerFeatures\":[\"deletionVectors\",\"columnMapping\"],"
                              "\"writerFeatures\":[\"deletionVectors\",\"columnMapping\",\"rowTracking\"]}}");
    cr_assert_eq(a.kind, DELTA_ACTION_PROTOCOL);
    cr_assert_eq(a.protocol.min_reader_version, 3);
    cr_assert_eq(a.protocol.min_writer_version, 7);
    cr_assert(a.protocol.has_reader_features);
    cr_assert_eq(a.protocol.n_reader_features, 2);
    cr_assert_str_eq(a.protocol.reader_features[1], "columnMapping");
    cr_assert_eq(a.protocol.n_writer_features, 3);
    cr_assert_str_eq(a.protocol.writer_features[2], "rowTracking");
    delta_action_free(&a);

    a = parse_ok("{\"protocol\":{\"minReaderVersion\":1,\"minWriterVersion\":2}}");
    cr_assert_not(a.protocol.has_reader_features);
    cr_assert_not(a.protocol.has_writer_features);
    delta_action_free(&a);
    a = parse_ok("{\"protocol\":{\"minReaderVersion\":3,\"minWriterVersion\":7,\"readerFeatures\":[],"
                 "\"writerFeatures\":[\"appendOnly\"]}}");
    cr_assert(a.protocol.has_reader_features, "present though empty");
    cr_assert_eq(a.protocol.n_reader_features, 0);
    delta_action_free(&a);

    rejects("{\"protocol\":{\"minReaderVersion\":\"3\",\"minWriterVersion\":7}}", DELTA_ACTION_E_INVALID,
            "protocol: \"minReaderVersion\": expected an integer, found a string");
    rejects("{\"protocol\":{\"minReaderVersion\":0,\"minWriterVersion\":7}}", DELTA_ACTION_E_INVALID,
            "\"minReaderVersion\": 0 is out of range");
    rejects("{\"protocol\":{\"minReaderVersion\":3,\"minWriterVersion\":7,\"readerFeatures\":\"x\"}}",
            DELTA_ACTION_E_INVALID, "protocol: \"readerFeatures\": expected an array of strings, found a string");
}

Test(log_actions, commit_info_timestamps)
{
    delta_action a = parse_ok(
        "{\"commitInfo\":{\"inCommitTimestamp\":1683874206883,\"timestamp\":1783874206883,\"operation\":\"WRITE\","
        "\"operationParameters\":{\"mode\":\"Append\",\"partitionBy\":\"[]\"},\"readVersion\":0,"
        "\"isolationLevel\":\"Serializable\",\"isBlindAppend\":true,\"engineInfo\":\"Apache-Spark/4.1.2 "
        "Delta-Lake/4.3.1\",\"txnId\":\"9906d50c-b00d-40c0-b7de-e538678b5ca9\"}}");
    cr_assert_eq(a.kind, DELTA_ACTION_COMMIT_INFO);
    cr_assert(a.commit_info.has_timestamp);
    cr_assert_eq(a.commit_info.timestamp, 1783874206883);
    cr_assert(a.commit_info.has_in_commit_timestamp);
    cr_assert_eq(a.commit_info.in_commit_timestamp, 1683874206883);
    delta_action_free(&a);
    a = parse_ok("{\"commitInfo\":{\"timestamp\":\"yesterday\",\"anything\":[1,{\"x\":null}]}}");
    cr_assert_not(a.commit_info.has_timestamp, "free-form: a string timestamp is ignored");
    cr_assert_not(a.commit_info.has_in_commit_timestamp);
    delta_action_free(&a);
    rejects("{\"commitInfo\":{\"inCommitTimestamp\":1.5}}", DELTA_ACTION_E_INVALID,
            "commitInfo: \"inCommitTimestamp\": expected an integer");
}

Test(log_actions, small_actions)
{
    delta_action a = parse_ok("{\"txn\":{\"appId\":\"3ae45b72-24e1-865a-a211-34987ae02f2a\",\"version\":4389}}");
    cr_assert_eq(a.kind, DELTA_ACTION_TXN);
    cr_assert_str_eq(a.txn.app_id, "3ae45b72-24e1-865a-a211-34987ae02f2a");
    cr_assert_eq(a.txn.version, 4389);
    cr_assert_eq(a.txn.last_updated, -1);
    delta_action_free(&a);

    a = parse_ok("{\"domainMetadata\":{\"domain\":\"delta.rowTracking\",\"configuration\":"
                 "\"{\\\"rowIdHighWaterMark\\\":9}\",\"removed\":false}}");
    cr_assert_eq(a.kind, DELTA_ACTION_DOMAIN_METADATA);
    cr_assert_str_eq(a.domain_metadata.domain, "delta.rowTracking");
    cr_assert_str_eq(a.domain_metadata.configuration, "{\"rowIdHighWaterMark\":9}");
    cr_assert_not(a.domain_metadata.removed);
    delta_action_free(&a);

    a = parse_ok("{\"cdc\":{\"path\":\"_change_data/birthyear=1995/cdc-00000-2a898d42.c000.snappy.parquet\","
                 "\"partitionValues\":{\"birthyear\":\"1995\"},\"size\":976,\"dataChange\":false}}");
    cr_assert_eq(a.kind, DELTA_ACTION_CDC);
    cr_assert_str_eq(a.cdc.path, "_change_data/birthyear=1995/cdc-00000-2a898d42.c000.snappy.parquet");
    cr_assert_eq(a.cdc.size, 976);
    delta_action_free(&a);

    a = parse_ok("{\"sidecar\":{\"path\":\"00000000000000000006.checkpoint.0000000001.0000000001."
                 "1a1516f4-8a39-48f0-9ccd-cc3790d824c7.parquet\",\"sizeInBytes\":14740,"
                 "\"modificationTime\":1754751124000}}");
    cr_assert_eq(a.kind, DELTA_ACTION_SIDECAR);
    cr_assert_str_eq(a.sidecar.path,
                     "00000000000000000006.checkpoint.0000000001.0000000001.1a1516f4-8a39-48f0-9ccd-cc3790d824c7.parquet");
    cr_assert_eq(a.sidecar.size_in_bytes, 14740);
    cr_assert_eq(a.sidecar.modification_time, 1754751124000);
    delta_action_free(&a);
    a = parse_ok("{\"sidecar\":{\"path\":\"side%20car.parquet\",\"sizeInBytes\":1,\"modificationTime\":2,"
                 "\"tags\":{}}}");
    cr_assert_str_eq(a.sidecar.path, "side car.parquet", "sidecar paths are URI-encoded too");
    delta_action_free(&a);

    a = parse_ok("{\"checkpointMetadata\":{\"version\":364475,\"tags\":{}}}");
    cr_assert_eq(a.kind, DELTA_ACTION_CHECKPOINT_METADATA);
    cr_assert_eq(a.checkpoint_metadata.version, 364475);
    delta_action_free(&a);

    rejects("{\"txn\":{\"appId\":\"a\"}}", DELTA_ACTION_E_INVALID,
            "txn: \"version\": expected an integer, but the field is missing");
    rejects("{\"domainMetadata\":{\"domain\":\"d\",\"configuration\":\"{}\",\"removed\":\"no\"}}",
            DELTA_ACTION_E_INVALID, "domainMetadata: \"removed\": expected a boolean, found a string");
    rejects("{\"sidecar\":{\"path\":\"s.parquet\",\"sizeInBytes\":-1,\"modificationTime\":2}}",
            DELTA_ACTION_E_INVALID, "sidecar: \"sizeInBytes\": -1 is out of range");
    rejects("{\"checkpointMetadata\":{}}", DELTA_ACTION_E_INVALID, "checkpointMetadata: \"version\"");
}

Test(log_actions, blank_and_unknown_lines)
{
    const char *blanks[] = {"", "\n", "  \t\r\n"};
    for (size_t i = 0; i < sizeof blanks / sizeof blanks[0]; i++) {
        delta_action a = parse_ok(blanks[i]);
        cr_assert_eq(a.kind, DELTA_ACTION_BLANK);
    }
    delta_action a = parse_ok("{\"futureAction\":{\"anything\":[1,2,3]}}");
    cr_assert_eq(a.kind, DELTA_ACTION_OTHER);
    delta_action_free(&a);
    a = parse_ok("{\"futureScalar\":5}");
    cr_assert_eq(a.kind, DELTA_ACTION_OTHER);
    a = parse_ok("{\"add\":null,\"txn\":{\"appId\":\"a\",\"version\":1}}\r\n");
    cr_assert_eq(a.kind, DELTA_ACTION_TXN, "a null key is no action");
    delta_action_free(&a);
    cr_assert_str_eq(delta_action_name(DELTA_ACTION_METADATA), "metaData");
    cr_assert_str_eq(delta_action_name(DELTA_ACTION_OTHER), "");
}

Test(log_actions, structural_errors)
{
    rejects("{", DELTA_ACTION_E_JSON, "malformed JSON");
    rejects("[1]", DELTA_ACTION_E_JSON, "must be a JSON object, not an array");
    rejects("{}", DELTA_ACTION_E_JSON, "has none");
    rejects("{\"add\":{},\"remove\":{}}", DELTA_ACTION_E_JSON, "one action, this one \"add\" and \"remove\"");
    rejects("{\"txn\":{\"appId\":\"a\",\"version\":1}} {\"txn\":{}}", DELTA_ACTION_E_JSON, "malformed JSON");
    rejects("{\"txn\":{\"appId\":\"a\",\"appId\":\"b\",\"version\":1}}", DELTA_ACTION_E_JSON, "duplicate");
    rejects("{\"add\":[]}", DELTA_ACTION_E_INVALID, "add: expected an object, found an array");
    rejects("{\"add\":{\"path\":\"p\",\"partitionValues\":{},\"size\":-1,\"modificationTime\":2,"
            "\"dataChange\":true}}",
            DELTA_ACTION_E_INVALID, "add: \"size\": -1 is out of range");
    rejects("{\"add\":{\"path\":\"p\",\"partitionValues\":{},\"size\":\"5\",\"modificationTime\":2,"
            "\"dataChange\":true}}",
            DELTA_ACTION_E_INVALID, "add: \"size\": expected an integer");
    rejects("{\"add\":{\"path\":\"p\",\"partitionValues\":{},\"size\":5.0,\"modificationTime\":2,"
            "\"dataChange\":true}}",
            DELTA_ACTION_E_INVALID, "add: \"size\": expected an integer, found a number");
    rejects("{\"add\":{\"path\":\"p\",\"partitionValues\":{},\"size\":5,\"modificationTime\":2,"
            "\"dataChange\":1}}",
            DELTA_ACTION_E_INVALID, "add: \"dataChange\": expected a boolean, found an integer");
    rejects("{\"add\":{\"partitionValues\":{},\"size\":5,\"modificationTime\":2,\"dataChange\":true}}",
            DELTA_ACTION_E_INVALID, "add: \"path\": expected a string, but the field is missing");
    rejects("{\"add\":{\"path\":\"p\",\"partitionValues\":{},\"size\":5,\"modificationTime\":2,"
            "\"dataChange\":true,\"stats\":{}}}",
            DELTA_ACTION_E_INVALID, "add: \"stats\": expected a string, found an object");
}

Test(log_actions, limits)
{
    /* One more partition value than allowed. */
    size_t n = DELTA_ACTION_MAX_ENTRIES + 1;
    char *line = malloc(n * 16 + 200);
    cr_assert_not_null(line);
    size_t off = (size_t)sprintf(line, "{\"cdc\":{\"path\":\"p\",\"size\":1,\"partitionValues\":{");
    for (size_t i = 0; i < n; i++)
        off += (size_t)sprintf(line + off, "%s\"k%zu\":null", i ? "," : "", i);
    strcpy(line + off, "}}}");
    rejects(line, DELTA_ACTION_E_LIMIT, "cdc: \"partitionValues\": 100001 entries; the limit is 100000");
    free(line);

    delta_action a;
    sv_error e = {0};
    cr_assert_eq(delta_action_parse("{}", (size_t)DELTA_ACTION_MAX_LINE + 1, &a, &e), DELTA_ACTION_E_LIMIT,
                 "the length is checked before the bytes are read");
}
