/* An object store in memory, for unit tests of the core without a server:
 * the test puts, replaces and deletes objects; HEAD, delimiter listings in
 * pages with continuation tokens, and ranged GETs with If-Match behave as
 * S3's do. GETs complete on a worker thread, as the S3 client's do on its
 * transfer thread. Every request is counted. */
#ifndef SIEVE_MEM_STORE_H
#define SIEVE_MEM_STORE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "object_store.h"

typedef struct mem_store mem_store;

mem_store *mem_store_create(void);
/* The store's interface; store_destroy(mem_store_base(m)) frees it. */
object_store *mem_store_base(mem_store *m);

/* Put (or replace) key with a copy of data under a new ETag. */
bool mem_store_put(mem_store *m, const char *key, const void *data, size_t len);
/* The same with a given ETag (e.g. an object that changed behind an
 * unchanged ETag, as a broken server might). */
bool mem_store_put_etag(mem_store *m, const char *key, const void *data, size_t len, const char *etag);
bool mem_store_delete(mem_store *m, const char *key);
/* The ETag of key (into etag, S3_ETAG_MAX + 1 bytes): false when absent. */
bool mem_store_etag(mem_store *m, const char *key, char *etag);
/* Keys per listing page (default 1000, as S3). */
void mem_store_set_page_keys(mem_store *m, unsigned keys);

/* Hold GETs queued (true) or serve them again (false): a test's stand-in
 * for a slow server. A held GET whose cancel token fires is dropped
 * (STORE_ERR_CANCELLED) when it comes to be served. */
void mem_store_hold(mem_store *m, bool hold);

typedef struct {
    uint64_t gets, get_bytes, heads, lists;
    uint64_t cancelled; /* GETs dropped unserved: their cancel token had fired */
} mem_store_counts;

mem_store_counts mem_store_counts_now(mem_store *m);
/* Wait until no GET is queued or running (a test's way to let prefetch settle). */
void mem_store_drain(mem_store *m);

#endif
