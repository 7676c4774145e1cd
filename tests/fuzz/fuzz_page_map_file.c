/* Fuzz the on-disk page map format (--cache-dir): parsing never reads out
 * of bounds, and a file that parses encodes back to the same bytes. */
#include "page_map_file.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    page_map_file f;
    if (!page_map_file_parse(data, size, &f))
        return 0;
    pq_header_walk w;
    memset(&w, 0, sizeof w);
    w.confirmed = f.windows;
    w.n_pages = f.n;
    w.done = true;
    size_t len = 0;
    uint8_t *again = page_map_file_encode(f.key, f.etag, f.size, f.rg, f.col, &w, &len);
    if (!again || len != size || memcmp(again, data, size) != 0)
        abort();
    free(again);
    page_map_file_free(&f);
    return 0;
}
