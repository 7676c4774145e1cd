/* Fuzz the thrift compact reader (generic skipping of any value) and the
 * standalone thrift structs of parquet_meta (OffsetIndex, ColumnIndex,
 * Statistics), checking their contracts. */
#include "parquet_meta.h"
#include "thrift_compact.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static void check(bool ok)
{
    if (!ok)
        abort();
}

static void check_reader(const tc_reader *r, size_t size)
{
    check(r->pos <= r->len && r->len == size);
    if (r->failed) {
        check(r->err.code != TC_OK);
        check(r->err.msg[0] != '\0');
        check(r->err.offset <= size);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tc_reader r;
    tc_reader_init(&r, data, size);
    if (tc_skip(&r, TC_STRUCT))
        check(r.depth == 0 && !r.failed);
    check_reader(&r, size);

    if (size > 0) {
        /* Any type, with a small budget and a shallow depth limit too. */
        tc_reader_init(&r, data + 1, size - 1);
        if (data[0] & 0x80) {
            r.budget = data[0] & 0x3f;
            r.max_depth = 1 + (data[0] & 0x0f);
        }
        tc_skip(&r, data[0] & 0x0f);
        check_reader(&r, size - 1);
    }

    pq_offset_index oi;
    tc_error err;
    if (pq_offset_index_parse(data, size, &oi, &err) == TC_OK) {
        for (uint32_t i = 1; i < oi.n_pages; i++) {
            check(oi.pages[i].offset > oi.pages[i - 1].offset);
            check(oi.pages[i].first_row_index > oi.pages[i - 1].first_row_index);
        }
        for (uint32_t i = 0; i < oi.n_pages; i++)
            check(oi.pages[i].compressed_page_size > 0);
        check(!oi.unencoded_byte_array_data_bytes || oi.n_unencoded == oi.n_pages);
        pq_offset_index_free(&oi);
    } else {
        check(err.msg[0] != '\0' && oi.pages == NULL);
    }

    pq_column_index ci;
    if (pq_column_index_parse(data, size, &ci, &err) == TC_OK) {
        for (uint32_t i = 0; i < ci.n_pages; i++) {
            /* Entries point into the private copy. */
            check(ci.min_values[i].len <= size && ci.max_values[i].len <= size);
            check(ci.min_values[i].len == 0 || (ci.min_values[i].ptr >= ci.owned &&
                                                 ci.min_values[i].ptr + ci.min_values[i].len <=
                                                     ci.owned + size));
            (void)ci.null_pages[i];
        }
        check(ci.boundary_order >= 0 && ci.boundary_order <= 2);
        pq_column_index_free(&ci);
    } else {
        check(err.msg[0] != '\0' && ci.owned == NULL);
    }

    pq_statistics st;
    size_t used = 0;
    if (pq_statistics_parse(data, size, &st, &used, &err) == TC_OK) {
        check(used <= size);
        if (st.has_max_value)
            check(st.max_value.ptr >= data && st.max_value.ptr + st.max_value.len <= data + used);
    }
    return 0;
}
