/* Planning a view's column chunks page by page. A chunk is planned when a
 * read first touches it; with a hint naming its columns, every chunk of
 * those columns in row groups with selected rows is planned on the first
 * touch, together. Each page goes to the page planner (page_plan.h), which
 * answers real, sparse (an image of the page), or what bytes it needs next;
 * the needs of all pages are merged and fetched at once, round after round,
 * outside the block cache. Whether a partial read pays is the cost model's
 * call (profiler/). Then the real pages the reader will want are prefetched. */
#ifndef SIEVE_CHUNK_PLAN_H
#define SIEVE_CHUNK_PLAN_H
#include <stddef.h>

#include "cost_model.h"
#include "view_file.h"

/* The prices the view plans with now: the override, else the profile, else
 * none (no partial reads). Without a profile because the warmup failed, the
 * first query retries it once and waits for it within tok
 * (link_profile_retry_once). */
cost_link view_cost_link(const view_env *env, const sv_cancel *tok);

/* Make sure chunk ci of vf is planned. Called with vf->lock held; releases it
 * while planning (the chunks being planned are claimed: CH_PLANNING). 0, or
 * -errno when tok gave up waiting for another reader's planning (which goes
 * on). Planning itself has a read deadline of its own and obeys shutdown and
 * tok's interrupt: given up, the pages not yet planned are served real. */
int chunk_plan_ensure(const view_env *env, const sv_view *v, const plain_file *pf, view_file *vf, size_t ci,
                      const sv_cancel *tok);

#endif
