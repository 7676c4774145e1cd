/* Rates of the client's own responses; see load_meter.h. */
#include "load_meter.h"

#include <string.h>

void load_meter_init(load_meter *m)
{
    memset(m, 0, sizeof *m);
    m->answers_per_s = LOAD_METER_MIN_ANSWERS_PER_S;
    m->bytes_per_s = LOAD_METER_MIN_BYTES_PER_S;
}

void load_meter_sample(load_meter *m, int64_t now_ns, uint64_t answers_total, uint64_t bytes_total)
{
    m->t_ns[m->next] = now_ns;
    m->answers[m->next] = answers_total;
    m->bytes[m->next] = bytes_total;
    m->next = (m->next + 1) % LOAD_METER_SAMPLES;
    if (m->n < LOAD_METER_SAMPLES)
        m->n++;
    /* The oldest sample still within the window (or the oldest kept). */
    size_t oldest = (m->next + LOAD_METER_SAMPLES - m->n) % LOAD_METER_SAMPLES, from = oldest;
    for (size_t k = 0; k < m->n; k++) {
        const size_t i = (oldest + k) % LOAD_METER_SAMPLES;
        if (now_ns - m->t_ns[i] <= LOAD_METER_WINDOW_NS) {
            from = i;
            break;
        }
    }
    const double span_s = (double)(now_ns - m->t_ns[from]) / 1e9;
    double answers = LOAD_METER_MIN_ANSWERS_PER_S, bytes = LOAD_METER_MIN_BYTES_PER_S;
    if (span_s >= 0.1 && answers_total >= m->answers[from] && bytes_total >= m->bytes[from]) {
        const double a = (double)(answers_total - m->answers[from]) / span_s;
        const double b = (double)(bytes_total - m->bytes[from]) / span_s;
        answers = a > answers ? a : answers;
        bytes = b > bytes ? b : bytes;
    }
    m->answers_per_s = answers;
    m->bytes_per_s = bytes;
}

uint32_t load_meter_wait_ms(const load_meter *m, uint64_t ahead_requests, uint64_t ahead_bytes, uint32_t cap_ms)
{
    const double ms = 1000.0 * ((double)ahead_requests / m->answers_per_s + (double)ahead_bytes / m->bytes_per_s);
    return ms >= (double)cap_ms ? cap_ms : (uint32_t)ms;
}
