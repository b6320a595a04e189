/* Logits processing and choosing codes, bit-identical to vox.reference.qwen3.sampling (see its
 * docstring): float32 elementwise processing with float32 parameters; top-p and the inverse-CDF walk
 * in float64 in index order, driven by u = vox_philox_uniform(seed, frame, codebook). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../error.h"
#include "lm_internal.h"

vox_status q3_sample_work_init(q3_sample_work *w, int64_t v) {
    memset(w, 0, sizeof *w);
    w->cap = v;
    w->sel = malloc((size_t)v * sizeof *w->sel);
    w->w = malloc((size_t)v * sizeof *w->w);
    w->order = malloc((size_t)v * sizeof *w->order);
    if (!w->sel || !w->w || !w->order) {
        q3_sample_work_free(w);
        return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    }
    return VOX_OK;
}

void q3_sample_work_free(q3_sample_work *w) {
    free(w->sel), free(w->w), free(w->order);
    memset(w, 0, sizeof *w);
}

/* The k-th largest of a[0..n) (1 <= k <= n), by quickselect on a scratch copy. -inf compares as a
 * number; there are no NaNs in processed scores. */
static float kth_largest(const float *s, int64_t n, int64_t k, float *a) {
    memcpy(a, s, (size_t)n * sizeof *a);
    int64_t lo = 0, hi = n - 1, want = k - 1; /* index in descending order */
    while (lo < hi) {
        const float pivot = a[lo + (hi - lo) / 2];
        int64_t i = lo, j = hi;
        while (i <= j) {
            while (a[i] > pivot) i++;
            while (a[j] < pivot) j--;
            if (i <= j) {
                float t = a[i];
                a[i] = a[j];
                a[j] = t;
                i++;
                j--;
            }
        }
        if (want <= j) hi = j;
        else if (want >= i) lo = i;
        else return a[want];
    }
    return a[want];
}

/* w_i = exp(float64(s_i) - max), 0 for -inf; returns the float64 sum in index order (c_{V-1}). */
static double weights(const float *s, int64_t v, double *w) {
    double m = -INFINITY;
    for (int64_t i = 0; i < v; i++)
        if ((double)s[i] > m) m = (double)s[i];
    double c = 0;
    for (int64_t i = 0; i < v; i++) {
        w[i] = s[i] > -INFINITY ? exp((double)s[i] - m) : 0.0;
        c += w[i];
    }
    return c;
}

/* Stable ascending order of the scores (merge sort: no global state, thread-safe). */
static void sort_order(const float *s, int32_t *o, int32_t *tmp, int64_t n) {
    for (int64_t i = 0; i < n; i++) o[i] = (int32_t)i;
    for (int64_t width = 1; width < n; width *= 2) {
        for (int64_t lo = 0; lo < n; lo += 2 * width) {
            int64_t mid = lo + width < n ? lo + width : n, hi = lo + 2 * width < n ? lo + 2 * width : n;
            int64_t a = lo, b = mid, k = lo;
            while (a < mid && b < hi) tmp[k++] = s[o[b]] < s[o[a]] ? o[b++] : o[a++];
            while (a < mid) tmp[k++] = o[a++];
            while (b < hi) tmp[k++] = o[b++];
        }
        memcpy(o, tmp, (size_t)n * sizeof *o);
    }
}

static void top_p(float *s, int64_t v, double p, q3_sample_work *w) {
    const double total = weights(s, v, w->w);
    int32_t *tmp = (int32_t *)w->sel; /* sel is free here: float and int32 are the same size */
    sort_order(s, w->order, tmp, v);
    /* probs in the sorted order, accumulated sequentially; remove while cum <= 1 - p, never the last */
    const double limit = 1.0 - p;
    double cum = 0;
    for (int64_t r = 0; r < v - 1; r++) {
        const int32_t i = w->order[r];
        cum += w->w[i] / total;
        if (cum <= limit) s[i] = -INFINITY;
    }
}

void q3_warp(float *s, int64_t v, const q3_sampler *p, q3_sample_work *w) {
    if (!p->do_sample) return;
    if (p->temperature != 1.0f) {
        const float t = p->temperature;
        for (int64_t i = 0; i < v; i++) s[i] = s[i] / t;
    }
    if (p->top_k != 0) {
        int64_t k = p->top_k < 1 ? 1 : p->top_k;
        if (k > v) k = v;
        const float kth = kth_largest(s, v, k, w->sel);
        for (int64_t i = 0; i < v; i++)
            if (s[i] < kth) s[i] = -INFINITY;
    }
    if (p->top_p < 1.0f) top_p(s, v, (double)p->top_p, w);
}

void q3_process_talker(float *s, int64_t v, const int32_t *distinct, int64_t n_distinct, int64_t n_generated,
                       float penalty, int32_t eos, int64_t min_new, const q3_sampler *p, q3_sample_work *w) {
    if (penalty != 1.0f)
        for (int64_t j = 0; j < n_distinct; j++) {
            float *x = &s[distinct[j]];
            *x = *x < 0 ? *x * penalty : *x / penalty;
        }
    if (n_generated < min_new) s[eos] = -INFINITY;
    for (int64_t i = v - 1024 < 0 ? 0 : v - 1024; i < v; i++)
        if (i != eos) s[i] = -INFINITY;
    q3_warp(s, v, p, w);
}

int32_t q3_greedy(const float *s, int64_t v) {
    int64_t best = 0;
    for (int64_t i = 1; i < v; i++)
        if (s[i] > s[best]) best = i;
    return (int32_t)best;
}

int32_t q3_sample(const float *s, int64_t v, double u, q3_sample_work *w) {
    double *c = w->w;
    double m = -INFINITY;
    for (int64_t i = 0; i < v; i++)
        if ((double)s[i] > m) m = (double)s[i];
    double acc = 0;
    int64_t last_pos = 0;
    for (int64_t i = 0; i < v; i++) {
        const double wi = s[i] > -INFINITY ? exp((double)s[i] - m) : 0.0;
        if (wi > 0) last_pos = i;
        acc += wi;
        c[i] = acc;
    }
    const double t = u * acc;
    /* the first i with t < c_i (np.searchsorted side="right"); c is non-decreasing */
    int64_t lo = 0, hi = v;
    while (lo < hi) {
        const int64_t mid = lo + (hi - lo) / 2;
        if (c[mid] > t) hi = mid;
        else lo = mid + 1;
    }
    return (int32_t)(lo < v ? lo : last_pos);
}

int32_t q3_choose(const float *s, int64_t v, int do_sample, uint64_t seed, uint32_t frame, uint32_t codebook,
                  q3_sample_work *w) {
    if (!do_sample) return q3_greedy(s, v);
    return q3_sample(s, v, vox_philox_uniform(seed, frame, codebook), w);
}
