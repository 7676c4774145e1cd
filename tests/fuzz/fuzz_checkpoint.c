/* Fuzz the Parquet checkpoint reader: any bytes give actions or an error,
 * never a crash; every action it gives is whole (an add has a path and a
 * size, a deletion vector a storage type), and replaying them never fails
 * for want of memory on small inputs. */
#include "checkpoint_read.h"
#include "log_replay.h"

#include <stdlib.h>
#include <string.h>

static void check(int ok)
{
    if (!ok)
        abort();
}

static int take(void *ctx, delta_action *a)
{
    if (a->kind == DELTA_ACTION_ADD) {
        check(a->add.path != NULL && a->add.size >= 0);
        check(!a->add.has_dv || (a->add.dv.path_or_inline && a->add.dv.storage_type));
        for (size_t i = 0; i < a->add.n_partition_values; i++)
            check(a->add.partition_values[i].key != NULL);
    } else if (a->kind == DELTA_ACTION_REMOVE) {
        check(a->remove.path != NULL);
    } else if (a->kind == DELTA_ACTION_METADATA) {
        check(a->metadata.id != NULL);
    }
    delta_replay_apply(ctx, a, NULL);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    delta_replay *r = delta_replay_new();
    if (!r)
        return 0;
    sv_error err;
    memset(&err, 0, sizeof err);
    if (delta_checkpoint_read(data, size, take, r, &err) != 0)
        check(err.code != 0 && err.msg[0] != '\0');
    delta_snapshot *s = NULL;
    if (delta_replay_finish(r, 0, -1, &s, &err) == 0) {
        for (size_t i = 1; i < s->n_files; i++)
            check(strcmp(s->files[i - 1].path, s->files[i].path) <= 0);
    }
    delta_snapshot_free(s);
    delta_replay_free(r);
    return 0;
}
