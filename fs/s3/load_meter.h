/* The load the client's own requests put on the link and the server, as
 * the client sees it: how fast its responses start (answers per second) and
 * how fast their bodies arrive (bytes per second), over the last seconds.
 * With them, the client tells a response that is late because the requests
 * and bytes ahead of it in its own queue take that long from one that is
 * stalled: a first-byte deadline counts from when the work ahead should be
 * done, not from when the request went out, so a server or link saturated
 * by our own requests does not see them cut and sent again (a retry
 * storm). Pure; the transfer thread owns one. */
#ifndef SIEVE_LOAD_METER_H
#define SIEVE_LOAD_METER_H
#include <stddef.h>
#include <stdint.h>

#define LOAD_METER_SAMPLES 64
#define LOAD_METER_WINDOW_NS 2000000000ll /* rates over the last 2 s */
/* Rates assumed when less has been seen: a quiet client waking up with a
 * burst gets generous deadlines until its answers show the real rate. */
#define LOAD_METER_MIN_ANSWERS_PER_S 20.0
#define LOAD_METER_MIN_BYTES_PER_S (1024.0 * 1024.0)

typedef struct {
    int64_t t_ns[LOAD_METER_SAMPLES];
    uint64_t answers[LOAD_METER_SAMPLES], bytes[LOAD_METER_SAMPLES];
    size_t n, next;
    double answers_per_s, bytes_per_s; /* over the window, at least the minimums */
} load_meter;

void load_meter_init(load_meter *m);
/* The totals so far (monotonic: responses that started, body bytes
 * received) at time now_ns; updates the rates. */
void load_meter_sample(load_meter *m, int64_t now_ns, uint64_t answers_total, uint64_t bytes_total);
/* How long the given requests and bytes ahead take at the rates seen, in
 * ms, at most cap_ms. */
uint32_t load_meter_wait_ms(const load_meter *m, uint64_t ahead_requests, uint64_t ahead_bytes, uint32_t cap_ms);

#endif
