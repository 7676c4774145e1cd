/* Stable names of the parquet.thrift enums, for messages and tools. */
#include "parquet_meta.h"

const char *pq_logical_kind_name(pq_logical_kind k)
{
    switch (k) {
    case PQ_LT_NONE: return "NONE";
    case PQ_LT_STRING: return "STRING";
    case PQ_LT_MAP: return "MAP";
    case PQ_LT_LIST: return "LIST";
    case PQ_LT_ENUM: return "ENUM";
    case PQ_LT_DECIMAL: return "DECIMAL";
    case PQ_LT_DATE: return "DATE";
    case PQ_LT_TIME: return "TIME";
    case PQ_LT_TIMESTAMP: return "TIMESTAMP";
    case PQ_LT_INTEGER: return "INTEGER";
    case PQ_LT_UNKNOWN: return "UNKNOWN";
    case PQ_LT_JSON: return "JSON";
    case PQ_LT_BSON: return "BSON";
    case PQ_LT_UUID: return "UUID";
    case PQ_LT_FLOAT16: return "FLOAT16";
    case PQ_LT_VARIANT: return "VARIANT";
    case PQ_LT_GEOMETRY: return "GEOMETRY";
    case PQ_LT_GEOGRAPHY: return "GEOGRAPHY";
    case PQ_LT_VECTOR: return "VECTOR";
    case PQ_LT_OTHER: return "OTHER";
    }
    return "OTHER";
}

const char *pq_physical_type_name(int t)
{
    static const char *const n[] = {"BOOLEAN", "INT32",  "INT64",      "INT96",
                                    "FLOAT",   "DOUBLE", "BYTE_ARRAY", "FIXED_LEN_BYTE_ARRAY"};
    return t >= 0 && t < 8 ? n[t] : "UNKNOWN";
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
    return e >= 0 && e < 10 ? n[e] : "UNKNOWN";
}

const char *pq_codec_name(int c)
{
    static const char *const n[] = {"UNCOMPRESSED", "SNAPPY", "GZIP", "LZO",
                                    "BROTLI",       "LZ4",    "ZSTD", "LZ4_RAW"};
    return c >= 0 && c < 8 ? n[c] : "UNKNOWN";
}

const char *pq_page_type_name(int t)
{
    static const char *const n[] = {"DATA_PAGE", "INDEX_PAGE", "DICTIONARY_PAGE", "DATA_PAGE_V2"};
    return t >= 0 && t < 4 ? n[t] : "UNKNOWN";
}
