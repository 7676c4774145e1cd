/* The connection profile from samples; see profile_estimate.h. */
#include "profile_estimate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static bool usable(double s)
{
    return isfinite(s) && s > 0;
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Nearest rank: the smallest value with at least q of the samples at or below it. */
static double rank(const double *sorted, size_t n, double q)
{
    size_t k = (size_t)ceil(q * (double)n);
    if (k < 1)
        k = 1;
    if (k > n)
        k = n;
    return sorted[k - 1];
}

bool profile_latency(const latency_sample *s, size_t n, size_t min_samples, double *median,
                     double *p90)
{
    *median = *p90 = 0;
    if (!s || n == 0)
        return false;
    double *v = malloc(n * sizeof *v);
    if (!v)
        return false;
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (s[i].ok && usable(s[i].seconds))
            v[m++] = s[i].seconds;
    bool ok = m > 0 && m >= min_samples;
    if (ok) {
        qsort(v, m, sizeof *v, cmp_double);
        /* The median of an even count is the mean of the middle two. */
        *median = m % 2 ? v[m / 2] : (v[m / 2 - 1] + v[m / 2]) / 2;
        *p90 = rank(v, m, 0.9);
    }
    free(v);
    return ok;
}

typedef struct {
    double a, b;
} interval;

static int cmp_interval(const void *x, const void *y)
{
    const interval *p = x, *q = y;
    return (p->a > q->a) - (p->a < q->a);
}

static bool usable_delivery(const delivery_sample *d)
{
    return d->ok && d->bytes > 0 && isfinite(d->start_s) && isfinite(d->end_s) && d->end_s > d->start_s;
}

uint64_t profile_bandwidth_bytes(const delivery_sample *d, size_t n)
{
    uint64_t bytes = 0;
    for (size_t i = 0; d && i < n; i++)
        if (usable_delivery(&d[i]))
            bytes += d[i].bytes;
    return bytes;
}

double profile_bandwidth(const delivery_sample *d, size_t n)
{
    if (!d || n == 0)
        return 0;
    interval *iv = malloc(n * sizeof *iv);
    if (!iv)
        return 0;
    size_t m = 0;
    double bytes = 0;
    for (size_t i = 0; i < n; i++) {
        if (!usable_delivery(&d[i]))
            continue;
        iv[m++] = (interval){d[i].start_s, d[i].end_s};
        bytes += (double)d[i].bytes;
    }
    /* Overlapping deliveries shared the link: count their time once. */
    qsort(iv, m, sizeof *iv, cmp_interval);
    double covered = 0;
    for (size_t i = 0; i < m;) {
        double a = iv[i].a, b = iv[i].b;
        for (i++; i < m && iv[i].a <= b; i++)
            if (iv[i].b > b)
                b = iv[i].b;
        covered += b - a;
    }
    free(iv);
    return covered > 0 ? bytes / covered : 0;
}

static int cmp_sent(const void *x, const void *y)
{
    const wave_request *p = x, *q = y;
    return (p->sent_s > q->sent_s) - (p->sent_s < q->sent_s);
}

double profile_wave_rate(const capacity_wave *w)
{
    if (!w || w->in_flight == 0 || !w->req || w->n <= w->in_flight)
        return 0;
    wave_request *r = malloc(w->n * sizeof *r);
    if (!r)
        return 0;
    memcpy(r, w->req, w->n * sizeof *r);
    /* Requests that never got a send time sort first and are skipped with the ramp. */
    for (size_t i = 0; i < w->n; i++)
        if (!isfinite(r[i].sent_s))
            r[i].sent_s = -INFINITY;
    qsort(r, w->n, sizeof *r, cmp_sent);
    /* The first in_flight requests open the connections; the rest are sent
     * as others complete, with in_flight out: by Little's law the rate is
     * in_flight over their mean time. */
    size_t ok = 0, failed = 0;
    double sum = 0;
    for (size_t i = w->in_flight; i < w->n; i++) {
        double d = r[i].done_s - r[i].sent_s;
        if (r[i].ok && isfinite(r[i].sent_s) && usable(d)) {
            ok++;
            sum += d;
        } else {
            failed++;
        }
    }
    free(r);
    if (ok < PROFILE_MIN_WAVE_SAMPLES || failed > ok)
        return 0;
    double rate = (double)w->in_flight / (sum / (double)ok);
    return isfinite(rate) ? rate : 0;
}

static int cmp_point(const void *x, const void *y)
{
    const capacity_point *p = x, *q = y;
    return (p->in_flight > q->in_flight) - (p->in_flight < q->in_flight);
}

/* The capacity curve (one point per level, the best wave of a level kept,
 * levels ascending, at most PROFILE_MAX_CAPACITY_POINTS of the lowest). */
static void estimate_capacity(const capacity_wave *w, size_t n, conn_profile *out, uint64_t *used)
{
    capacity_point pts[PROFILE_MAX_CAPACITY_POINTS];
    uint32_t np = 0;
    for (size_t i = 0; w && i < n; i++) {
        double r = profile_wave_rate(&w[i]);
        if (r <= 0)
            continue;
        *used += w[i].n;
        uint32_t j = 0;
        while (j < np && pts[j].in_flight != w[i].in_flight)
            j++;
        if (j < np) {
            if (r > pts[j].per_s)
                pts[j].per_s = r;
            continue;
        }
        if (np < PROFILE_MAX_CAPACITY_POINTS) {
            pts[np++] = (capacity_point){w[i].in_flight, r};
            continue;
        }
        /* Full: keep the lowest levels (a lower level replaces the highest). */
        uint32_t hi = 0;
        for (uint32_t k = 1; k < np; k++)
            if (pts[k].in_flight > pts[hi].in_flight)
                hi = k;
        if (w[i].in_flight < pts[hi].in_flight)
            pts[hi] = (capacity_point){w[i].in_flight, r};
    }
    qsort(pts, np, sizeof *pts, cmp_point);
    memcpy(out->capacity, pts, np * sizeof *pts);
    out->n_capacity = np;
    double best = 0;
    for (uint32_t k = 0; k < np; k++)
        if (pts[k].per_s > best)
            best = pts[k].per_s;
    out->suggested_in_flight = 0;
    for (uint32_t k = 0; k < np; k++)
        if (pts[k].per_s >= PROFILE_CAPACITY_SHARE * best) {
            out->suggested_in_flight = pts[k].in_flight;
            break;
        }
}

void profile_estimate(const profile_samples *s, conn_profile *out)
{
    memset(out, 0, sizeof *out);
    if (!s)
        return;
    uint64_t used = 0;
    double med, p90;
    bool have_latency = profile_latency(s->warm, s->n_warm, PROFILE_MIN_LATENCY_SAMPLES, &med, &p90);
    if (have_latency) {
        out->latency_s = med;
        out->latency_p90_s = p90;
        for (size_t i = 0; i < s->n_warm; i++)
            used += s->warm[i].ok && usable(s->warm[i].seconds);
        double fmed, fp90;
        if (profile_latency(s->fresh, s->n_fresh, PROFILE_MIN_FRESH_SAMPLES, &fmed, &fp90)) {
            /* Noise can put the fresh median below the warm one: no cost, not a negative one. */
            out->connect_s = fmed > med ? fmed - med : 0;
            for (size_t i = 0; i < s->n_fresh; i++)
                used += s->fresh[i].ok && usable(s->fresh[i].seconds);
        }
    }
    out->bandwidth_Bps = profile_bandwidth(s->large, s->n_large);
    if (out->bandwidth_Bps > 0) {
        out->bandwidth_bytes = profile_bandwidth_bytes(s->large, s->n_large);
        for (size_t i = 0; i < s->n_large; i++)
            used += s->large[i].ok;
    }
    estimate_capacity(s->waves, s->n_waves, out, &used);
    out->samples = used;
    out->valid = have_latency && out->bandwidth_Bps > 0;
}
