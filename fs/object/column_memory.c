/* Column sets shared by the files of one table; see column_memory.h. */
#include "column_memory.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "partition_path.h"

struct column_memory {
    pthread_mutex_t lock;              /* guards slots[] and every set's refs */
    column_set *slots[COLUMN_MEMORY_SETS];
};

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

uint64_t column_memory_key(const char *object_key, const pq_file_meta *m)
{
    uint64_t h = 14695981039346656037ull;
    /* the table's directory: partitions of one table are read alike */
    h = fnv(h, object_key, partition_table_dir_len(object_key));
    h = fnv(h, "/", 1);
    for (uint32_t i = 0; i < m->n_leaves; i++) {
        const pq_leaf *lf = &m->leaves[i];
        h = fnv(h, lf->path, strlen(lf->path) + 1);
        h = fnv(h, &lf->type, sizeof lf->type);
    }
    return fnv(h, &m->n_leaves, sizeof m->n_leaves);
}

column_memory *column_memory_create(void)
{
    column_memory *cm = calloc(1, sizeof *cm);
    if (cm)
        pthread_mutex_init(&cm->lock, NULL);
    return cm;
}

static void set_free(column_set *s)
{
    if (s) {
        free(s->read);
        free(s->covered);
        free(s);
    }
}

void column_memory_destroy(column_memory *cm)
{
    if (!cm)
        return;
    for (size_t i = 0; i < COLUMN_MEMORY_SETS; i++)
        set_free(cm->slots[i]);
    pthread_mutex_destroy(&cm->lock);
    free(cm);
}

static void set_clear(column_set *s)
{
    for (uint32_t c = 0; c < s->n_columns; c++) {
        atomic_store_explicit(&s->read[c], 0, memory_order_relaxed);
        atomic_store_explicit(&s->covered[c], 0, memory_order_relaxed);
    }
}

column_set *column_memory_get(column_memory *cm, uint64_t key, uint32_t n_columns)
{
    if (!cm)
        return NULL;
    const int64_t now = now_ms();
    column_set *got = NULL;
    pthread_mutex_lock(&cm->lock);
    size_t free_slot = COLUMN_MEMORY_SETS, oldest = COLUMN_MEMORY_SETS;
    for (size_t i = 0; i < COLUMN_MEMORY_SETS; i++) {
        column_set *s = cm->slots[i];
        if (!s) {
            free_slot = free_slot < COLUMN_MEMORY_SETS ? free_slot : i;
            continue;
        }
        if (s->key == key && s->n_columns == n_columns) {
            got = s;
            break;
        }
        if (s->refs == 0 && (oldest == COLUMN_MEMORY_SETS ||
                             atomic_load(&s->updated_ms) < atomic_load(&cm->slots[oldest]->updated_ms)))
            oldest = i;
    }
    if (got) {
        /* No file of it open for a while: another query, which may read
         * other columns. */
        if (got->refs == 0 && now - atomic_load(&got->updated_ms) > COLUMN_MEMORY_TTL_MS)
            set_clear(got);
    } else {
        size_t slot = free_slot < COLUMN_MEMORY_SETS ? free_slot : oldest;
        if (slot < COLUMN_MEMORY_SETS) {
            got = calloc(1, sizeof *got);
            if (got) {
                got->read = calloc(n_columns ? n_columns : 1, sizeof *got->read);
                got->covered = calloc(n_columns ? n_columns : 1, sizeof *got->covered);
            }
            if (got && got->read && got->covered) {
                got->key = key;
                got->n_columns = n_columns;
                atomic_init(&got->updated_ms, now);
                set_free(cm->slots[slot]);
                cm->slots[slot] = got;
            } else {
                set_free(got);
                got = NULL;
            }
        }
    }
    if (got)
        got->refs++;
    pthread_mutex_unlock(&cm->lock);
    return got;
}

void column_memory_put(column_memory *cm, column_set *s)
{
    if (!cm || !s)
        return;
    pthread_mutex_lock(&cm->lock);
    s->refs--;
    atomic_store(&s->updated_ms, now_ms()); /* the TTL runs from the last file closed */
    pthread_mutex_unlock(&cm->lock);
}

void column_set_add(column_set *s, uint32_t c)
{
    if (s && c < s->n_columns && !atomic_load_explicit(&s->read[c], memory_order_relaxed)) {
        atomic_store_explicit(&s->read[c], 1, memory_order_relaxed);
        atomic_store(&s->updated_ms, now_ms());
    }
}

bool column_set_has(const column_set *s, uint32_t c)
{
    return s && c < s->n_columns && atomic_load_explicit(&s->read[c], memory_order_relaxed);
}

void column_set_add_covered(column_set *s, uint32_t c)
{
    if (s && c < s->n_columns && !atomic_load_explicit(&s->covered[c], memory_order_relaxed)) {
        atomic_store_explicit(&s->covered[c], 1, memory_order_relaxed);
        atomic_store(&s->updated_ms, now_ms());
    }
}

bool column_set_has_covered(const column_set *s, uint32_t c)
{
    return s && c < s->n_columns && atomic_load_explicit(&s->covered[c], memory_order_relaxed);
}
