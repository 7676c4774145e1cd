/* Refining a profile with uncontended reads; see profile_refine.h. */
#include "profile_refine.h"

#include <math.h>

static double blend(double old, double sample)
{
    return old + PROFILE_REFINE_WEIGHT * (sample - old);
}

bool conn_profile_refine(conn_profile *p, uint64_t bytes, double seconds, int64_t now_s)
{
    if (!p || !p->valid || !isfinite(seconds) || seconds <= 0 || bytes == 0 || !(p->bandwidth_Bps > 0))
        return false;
    if (bytes <= PROFILE_REFINE_SMALL_MAX) {
        /* The transfer of the bytes themselves is not latency. */
        const double latency = seconds - (double)bytes / p->bandwidth_Bps;
        if (latency <= 0)
            return false;
        const double ratio = p->latency_s > 0 ? p->latency_p90_s / p->latency_s : 1.0;
        p->latency_s = blend(p->latency_s, latency);
        if (isfinite(ratio) && ratio >= 1.0)
            p->latency_p90_s = p->latency_s * ratio;
    } else if (bytes >= PROFILE_REFINE_LARGE_MIN) {
        const double flowing = seconds - p->latency_s;
        if (flowing <= 0)
            return false;
        p->bandwidth_Bps = blend(p->bandwidth_Bps, (double)bytes / flowing);
    } else {
        return false;
    }
    p->samples++;
    p->measured_at_s = now_s;
    return true;
}
