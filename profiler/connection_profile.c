/* The connection profile; see connection_profile.h. */
#include "connection_profile.h"

double conn_profile_capacity_at(const conn_profile *p, uint32_t in_flight)
{
    if (!p || p->n_capacity == 0 || in_flight == 0)
        return 0.0;
    const uint32_t n = p->n_capacity < PROFILE_MAX_CAPACITY_POINTS ? p->n_capacity
                                                                   : PROFILE_MAX_CAPACITY_POINTS;
    const capacity_point *c = p->capacity;
    double at;
    if (in_flight <= c[0].in_flight) {
        at = c[0].per_s * in_flight / (c[0].in_flight ? c[0].in_flight : 1);
    } else if (in_flight >= c[n - 1].in_flight) {
        at = c[n - 1].per_s;
    } else {
        uint32_t i = 1;
        while (i < n - 1 && c[i].in_flight < in_flight)
            i++;
        const double span = (double)c[i].in_flight - c[i - 1].in_flight;
        const double t = span > 0 ? (in_flight - (double)c[i - 1].in_flight) / span : 1.0;
        at = c[i - 1].per_s + t * (c[i].per_s - c[i - 1].per_s);
    }
    /* No more than in_flight round trips per latency can complete. */
    if (p->latency_s > 0) {
        const double bound = in_flight / p->latency_s;
        if (at > bound)
            at = bound;
    }
    return at > 0 ? at : 0.0;
}
