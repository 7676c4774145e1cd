/* Stable names of the parquet.thrift enums, for messages and tools. */
#include "parquet_meta.h"
#include "sv_name.h"

const char *pq_logical_kind_name(pq_logical_kind k)
{
    /* PQ_LT_OTHER and ids this decoder does not know are "OTHER". */
    static const char *const names[] = {
        [PQ_LT_NONE] = "NONE", [PQ_LT_STRING] = "STRING", [PQ_LT_MAP] = "MAP",
        [PQ_LT_LIST] = "LIST", [PQ_LT_ENUM] = "ENUM", [PQ_LT_DECIMAL] = "DECIMAL",
        [PQ_LT_DATE] = "DATE", [PQ_LT_TIME] = "TIME", [PQ_LT_TIMESTAMP] = "TIMESTAMP",
        [PQ_LT_INTEGER] = "INTEGER", [PQ_LT_UNKNOWN] = "UNKNOWN", [PQ_LT_JSON] = "JSON",
        [PQ_LT_BSON] = "BSON", [PQ_LT_UUID] = "UUID", [PQ_LT_FLOAT16] = "FLOAT16",
        [PQ_LT_VARIANT] = "VARIANT", [PQ_LT_GEOMETRY] = "GEOMETRY", [PQ_LT_GEOGRAPHY] = "GEOGRAPHY",
        [PQ_LT_VECTOR] = "VECTOR",
    };
    return SV_NAME(names, k, "OTHER");
}

const char *pq_physical_type_name(int t)
{
    static const char *const n[] = {"BOOLEAN", "INT32",  "INT64",      "INT96",
                                    "FLOAT",   "DOUBLE", "BYTE_ARRAY", "FIXED_LEN_BYTE_ARRAY"};
    return SV_NAME(n, t, "UNKNOWN");
}

const char *pq_encoding_name(int e)
{
    static const char *const n[] = {"PLAIN",
                                    "GROUP_VAR_INT",
                                    "PLAIN_DICTIONARY",
                                    "RLE",
                                    "BIT_PACKED",
                                    "DELTA_BINARY_PACKED",
                                    "DELTA_LENGTH_BYTE_ARRAY",
                                    "DELTA_BYTE_ARRAY",
                                    "RLE_DICTIONARY",
                                    "BYTE_STREAM_SPLIT"};
    return SV_NAME(n, e, "UNKNOWN");
}

const char *pq_codec_name(int c)
{
    static const char *const n[] = {"UNCOMPRESSED", "SNAPPY", "GZIP", "LZO",
                                    "BROTLI",       "LZ4",    "ZSTD", "LZ4_RAW"};
    return SV_NAME(n, c, "UNKNOWN");
}

const char *pq_page_type_name(int t)
{
    static const char *const n[] = {"DATA_PAGE", "INDEX_PAGE", "DICTIONARY_PAGE", "DATA_PAGE_V2"};
    return SV_NAME(n, t, "UNKNOWN");
}
