/* torchaudio's sinc/Hann resampler (sinc_resample.h). With g = gcd(orig, new), o = orig / g, m = new / g,
 * base = min(o, m) * 0.99, W = ceil(6 o / base), kernel phase j < m, tap k < 2 W + o:
 *   t = clamp((float(-j / m) + (k - W) / o) * base, -6, 6)
 *   h[j][k] = sinc(pi t) * cos(pi t / 12)^2 * base / o      (double, rounded to float once)
 * and output sample m q + j = sum over k of x[o q + k - W] h[j][k], zeros outside the input. */
#include "sinc_resample.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../error.h"

static int64_t gcd64(int64_t a, int64_t b) {
    while (b) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

typedef struct rs_job {
    const float *x;
    const float *h;  /* [m][taps] */
    int64_t n, o, m, w, taps, n_out;
    float *y;
} rs_job;

static void rs_range(void *ctx, int64_t s0, int64_t s1) {
    const rs_job *j = ctx;
    for (int64_t s = s0; s < s1; s++) {
        const int64_t q = s / j->m, ph = s % j->m, base = q * j->o - j->w;
        const float *h = j->h + ph * j->taps;
        double acc = 0.0;
        for (int64_t k = 0; k < j->taps; k++) {
            int64_t i = base + k;
            if (i >= 0 && i < j->n) acc += (double)j->x[i] * (double)h[k];
        }
        j->y[s] = (float)acc;
    }
}

vox_status vx_resample_sinc(vx_pool *pool, const float *x, int64_t n, int64_t orig, int64_t new_rate, float **out,
                            int64_t *n_out) {
    *out = NULL;
    *n_out = 0;
    if (orig <= 0 || new_rate <= 0)
        return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "resampling from %lld Hz to %lld Hz", (long long)orig,
                             (long long)new_rate);
    if (orig == new_rate) {
        float *y = malloc((size_t)(n ? n : 1) * sizeof *y);
        if (!y) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
        memcpy(y, x, (size_t)n * sizeof *y);
        *out = y;
        *n_out = n;
        return VOX_OK;
    }
    const int64_t g = gcd64(orig, new_rate), o = orig / g, m = new_rate / g;
    const double base = (double)(o < m ? o : m) * 0.99;
    const int64_t w = (int64_t)ceil((double)(6 * o) / base), taps = 2 * w + o;
    const int64_t total = (m * n + o - 1) / o;
    float *h = malloc((size_t)(m * taps) * sizeof *h), *y = malloc((size_t)(total ? total : 1) * sizeof *y);
    if (!h || !y) {
        free(h), free(y);
        return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory (resampling %lld samples)", (long long)n);
    }
    for (int64_t ph = 0; ph < m; ph++) {
        const double tj = (double)((float)(-ph) / (float)m);
        for (int64_t k = 0; k < taps; k++) {
            double t = (tj + (double)(k - w) / (double)o) * base;
            if (t < -6.0) t = -6.0;
            if (t > 6.0) t = 6.0;
            double c = cos(t * M_PI / 6.0 / 2.0), win = c * c;
            t = t * M_PI;
            double s = t == 0.0 ? 1.0 : sin(t) / t;
            h[ph * taps + k] = (float)(s * (win * (base / (double)o)));
        }
    }
    rs_job j = {x, h, n, o, m, w, taps, total, y};
    vx_pool_for(pool, total, 256, rs_range, &j);
    free(h);
    *out = y;
    *n_out = total;
    return VOX_OK;
}
