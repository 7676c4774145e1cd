/* A call's deadline and cancellation: what every wait on the read path obeys.
 *
 * A token says when the call must give up (a CLOCK_MONOTONIC deadline) and
 * whether it has been cancelled: the kernel interrupted the reader (EINTR)
 * or the mount is going away (ESHUTDOWN, through the parent token every
 * call's token points to). Cancelling is one atomic store, so a signal
 * handler may do it.
 *
 * Waits are pthread_cond_timedwait in slices of SV_CANCEL_SLICE_MS: a token
 * does not know which module's condition variable its caller sleeps on, and
 * registering it there would put the token's lock and the module's lock in
 * both orders. Only threads already waiting wake per slice, so the cost is
 * nil and a cancellation is seen within one slice. */
#ifndef SIEVE_SV_CANCEL_H
#define SIEVE_SV_CANCEL_H
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#define SV_CANCEL_SLICE_MS 50

typedef struct sv_cancel {
    atomic_int reason;              /* 0, or the errno a cancelled wait returns (lock-free) */
    struct timespec deadline;       /* CLOCK_MONOTONIC; zero: none. Set before the call starts */
    const struct sv_cancel *parent; /* also obeyed (the mount's shutdown token); may be NULL */
} sv_cancel;

/* A token with a deadline timeout_ms from now (0: none) under parent (may be NULL). */
void sv_cancel_init(sv_cancel *t, const sv_cancel *parent, uint64_t timeout_ms);
/* Cancel with reason (an errno, e.g. EINTR): the first reason stays.
 * Async-signal-safe. */
void sv_cancel_fire(sv_cancel *t, int reason);
/* 0 while the call may go on; otherwise the reason it may not: a
 * cancellation of t or of a parent, or ETIMEDOUT past t's deadline. NULL: 0. */
int sv_cancel_check(const sv_cancel *t);

/* pthread_cond_init on CLOCK_MONOTONIC, which sv_cancel_wait needs. */
int sv_cond_init(pthread_cond_t *c);
/* Wait on c (m held, as pthread_cond_wait) for at most one slice and never
 * past t's deadline. 0: woken or the slice ended (re-check the condition
 * and call again); otherwise sv_cancel_check's reason. t may be NULL (then
 * only the slice bounds the wait). */
int sv_cancel_wait(const sv_cancel *t, pthread_cond_t *c, pthread_mutex_t *m);

#endif
