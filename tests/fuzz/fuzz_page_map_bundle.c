/* Fuzz the page-map bundle format (`sievefs index`, _sieve/pagemaps/):
 * parsing never reads out of bounds, and a bundle that parses encodes back
 * to the same bytes. */
#include "page_map_bundle.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    page_map_bundle b;
    if (!page_map_bundle_parse(data, size, &b))
        return 0;
    page_map_bundle_writer wr;
    memset(&wr, 0, sizeof wr);
    for (uint32_t i = 0; i < b.n; i++) {
        const page_map_file *f = &b.maps[i];
        pq_header_walk w;
        memset(&w, 0, sizeof w);
        w.confirmed = f->windows;
        w.n_pages = f->n;
        w.done = true;
        page_map_bundle_writer_add(&wr, f->key, f->etag, f->size, f->rg, f->col, &w);
    }
    size_t len = 0;
    uint8_t *again = page_map_bundle_writer_finish(&wr, &len);
    if (!again || len != size || memcmp(again, data, size) != 0)
        abort();
    free(again);
    page_map_bundle_free(&b);
    return 0;
}
