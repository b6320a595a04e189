/* AdaIN1d (Huang & Belongie 2017, as StyleTTS 2 and Kokoro use it): instance normalization over time
 * whose affine map comes from a style vector, and the per-channel moments it is computed from. */
#include <math.h>
#include <stdlib.h>

#include "../error.h"
#include "nn.h"


/* The moments of x [t][c] per channel (vx_channel_moments, channel blocks over the pool). */
typedef struct mom_job {
    const float *x;
    int64_t t, c;
    double *mean, *m2;
} mom_job;

static void mom_blocks(void *ctx, int64_t begin, int64_t end) {
    const mom_job *j = ctx;
    const int64_t c0 = begin * 16, c1 = end * 16 < j->c ? end * 16 : j->c;
    vx_channel_moments(j->x, j->t, j->c, c0, c1, j->mean + c0, j->m2 + c0);
}

void vx_nn_channel_moments(vx_pool *pool, const float *x, int64_t t, int64_t c, double *mean, double *m2) {
    mom_job j = {.x = x, .t = t, .c = c, .mean = mean, .m2 = m2};
    vx_pool_for(pool, (c + 15) / 16, 4, mom_blocks, &j);
}

/* AdaIN1d: (1 + gamma) * InstanceNorm(x) + beta with [gamma | beta] = fc(s); statistics per channel
 * over time (biased variance, eps 1e-5), accumulated in double (vx_channel_moments); tasks of 64
 * channels (four cache lines of a row, one sweep of the SIMD moments) for the statistics, row ranges
 * for the affine map. */
typedef struct adain_job {
    const float *x, *h, *nw, *nb;
    float *y, *mul, *add;
    int64_t t, c;
    int lrelu;   /* then the leaky ReLU of the residual blocks */
    float slope;
} adain_job;

/* mul/add of channels [c0, c0 + nb) from their moments (m2: sum of squared deviations over t rows) */
static void adain_coeffs(const adain_job *j, int64_t c0, int64_t nb, const double *mean, const double *m2) {
    const int64_t c = j->c;
    for (int64_t k = 0; k < nb; k++) {
        int64_t ch = c0 + k;
        float rstd = (float)(1.0 / sqrt(m2[k] / (double)j->t + 1e-5));
        float w = j->nw ? j->nw[ch] : 1.0f, nbias = j->nb ? j->nb[ch] : 0.0f;
        float g = 1.0f + j->h[ch], be = j->h[c + ch];
        j->mul[ch] = g * rstd * w;
        j->add[ch] = g * (nbias - (float)mean[k] * rstd * w) + be;
    }
}

static void adain_stats(void *ctx, int64_t begin, int64_t end) {
    adain_job *j = ctx;
    const int64_t c = j->c, c0 = begin * 16, c1 = end * 16 < c ? end * 16 : c;
    double mean[64], var[64];
    for (int64_t b = c0; b < c1; b += 64) {
        int64_t nb = c1 - b < 64 ? c1 - b : 64;
        vx_channel_moments(j->x, j->t, c, b, b + nb, mean, var);
        adain_coeffs(j, b, nb, mean, var);
    }
}

/* Rows [begin, end): y = x * mul + add, then (lrelu) the leaky ReLU (vx_nn_lrelu: vectorizes), the
 * pointers in restrict locals. */
static void adain_apply(void *ctx, int64_t begin, int64_t end) {
    const adain_job *j = ctx;
    const int64_t c = j->c;
    const float *restrict x = j->x, *restrict mul = j->mul, *restrict add = j->add;
    float *restrict y = j->y;
    const float slope = j->slope;
    if (j->lrelu) {
        for (int64_t i = begin; i < end; i++)
            for (int64_t ch = 0; ch < c; ch++) {
                y[i * c + ch] = vx_nn_lrelu(x[i * c + ch] * mul[ch] + add[ch], slope);
            }
        return;
    }
    for (int64_t i = begin; i < end; i++)
        for (int64_t ch = 0; ch < c; ch++) y[i * c + ch] = x[i * c + ch] * mul[ch] + add[ch];
}

/* The AdaIN map of x as per-channel y = x * mul + add (mul, add: [c] each); mean/m2 ([c] each): x's
 * moments when already known (from the convolution that produced x), NULL to compute them here. */
vox_status vx_nn_adain_map(vx_pool *pool, const vx_adain *a, const float *s, const float *x, int64_t t,
                           const double *mean, const double *m2, float *mul, float *add) {
    const int64_t c = a->c;
    float *h = malloc((size_t)(2 * c) * sizeof *h);
    if (!h) return vox_oom();
    vx_linear(pool, &a->fc, a->fc_b, s, 1, h);
    adain_job j = {.x = x, .h = h, .nw = a->norm_w, .nb = a->norm_b, .mul = mul, .add = add, .t = t, .c = c};
    if (mean)
        adain_coeffs(&j, 0, c, mean, m2);
    else
        vx_pool_for(pool, (c + 15) / 16, 4, adain_stats, &j);
    free(h);
    return VOX_OK;
}

vox_status vx_nn_adain(vx_pool *pool, const vx_adain *a, const float *s, const float *x, int64_t t, int lrelu,
                       float slope, float *y) {
    const int64_t c = a->c;
    float *ma = malloc((size_t)(2 * c) * sizeof *ma);
    if (!ma) return vox_oom();
    vox_status st = vx_nn_adain_map(pool, a, s, x, t, NULL, NULL, ma, ma + c);
    if (st == VOX_OK) {
        adain_job j = {.x = x, .y = y, .mul = ma, .add = ma + c, .t = t, .c = c, .lrelu = lrelu, .slope = slope};
        vx_pool_for(pool, t, 64, adain_apply, &j);
    }
    free(ma);
    return st;
}
