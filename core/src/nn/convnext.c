/* The ConvNeXt block (Liu et al. 2022) and the Global Response Normalization of ConvNeXt-V2 (Woo et al.
 * 2023), as F5-TTS's text encoder (ConvNeXtV2Block) and Vocos's backbone (ConvNeXtBlock) use them. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../error.h"
#include "nn.h"

typedef struct grn_job {
    const float *x;
    int64_t t, c;
    double *g;   /* [c] */
} grn_job;

/* G[c] = sqrt(sum over time of x^2), channels [c0, c1): each channel's sum in time order, in double
 * (the official torch.norm over the time axis is float32 with its own order; double sums are the
 * reference's). */
static void grn_norms(void *ctx, int64_t c0, int64_t c1) {
    const grn_job *j = ctx;
    for (int64_t ch = c0; ch < c1; ch++) j->g[ch] = 0.0;
    for (int64_t i = 0; i < j->t; i++) {
        const float *r = j->x + i * j->c;
        for (int64_t ch = c0; ch < c1; ch++) j->g[ch] += (double)r[ch] * (double)r[ch];
    }
}

typedef struct grn_apply {
    float *x;
    int64_t c;
    const float *nx, *gamma, *beta;
} grn_apply;

static void grn_rows(void *ctx, int64_t r0, int64_t r1) {
    const grn_apply *j = ctx;
    for (int64_t i = r0; i < r1; i++) {
        float *r = j->x + i * j->c;
        for (int64_t ch = 0; ch < j->c; ch++) r[ch] = j->gamma[ch] * (r[ch] * j->nx[ch]) + j->beta[ch] + r[ch];
    }
}

vox_status vx_nn_grn(vx_pool *pool, float *x, int64_t t, int64_t c, const float *gamma, const float *beta) {
    double *g = malloc((size_t)c * sizeof *g);
    float *nx = malloc((size_t)c * sizeof *nx);
    if (!g || !nx) {
        free(g), free(nx);
        return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    }
    grn_job j = {x, t, c, g};
    vx_pool_for(pool, c, 16, grn_norms, &j);
    double mean = 0.0;   /* of the float32 norms, as torch's mean of the float32 Gx */
    for (int64_t ch = 0; ch < c; ch++) mean += (double)(float)sqrt(g[ch]);
    float den = (float)(mean / (double)c) + 1e-6f;
    for (int64_t ch = 0; ch < c; ch++) nx[ch] = (float)sqrt(g[ch]) / den;
    grn_apply a = {x, c, nx, gamma, beta};
    vx_pool_for(pool, t, 16, grn_rows, &a);
    free(g), free(nx);
    return VOX_OK;
}

typedef struct dw_job {
    const float *xp, *w, *b;
    float *y;
    int64_t c, k;
} dw_job;

static void dw_rows(void *ctx, int64_t t0, int64_t t1) {
    const dw_job *j = ctx;
    vx_depthwise_conv(j->xp + t0 * j->c, t1 - t0, j->c, j->w, j->k, 1, j->b, j->y + t0 * j->c);
}

vox_status vx_nn_convnext(vx_pool *pool, const vx_convnext *b, float *x, int64_t t) {
    const int64_t d = b->dim, h = b->hidden, pad = (b->k - 1) / 2;
    float *xp = calloc((size_t)((t + b->k - 1) * d), sizeof *xp);
    float *a = malloc((size_t)(t * d) * sizeof *a);
    float *u = malloc((size_t)(t * h) * sizeof *u);
    if (!xp || !a || !u) {
        free(xp), free(a), free(u);
        return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory (ConvNeXt block over %lld frames)", (long long)t);
    }
    memcpy(xp + pad * d, x, (size_t)(t * d) * sizeof *xp);
    dw_job dj = {xp, b->dw_w, b->dw_b, a, d, b->k};
    vx_pool_for(pool, t, 16, dw_rows, &dj);
    vx_nn_layer_norm(pool, a, b->ln_w, b->ln_b, t, d, b->eps, a);
    vx_linear(pool, &b->pw1, b->pw1_b, a, t, u);
    vx_gelu(u, t * h, u);
    vox_status st = VOX_OK;
    if (b->grn_gamma) st = vx_nn_grn(pool, u, t, h, b->grn_gamma, b->grn_beta);
    if (st == VOX_OK) {
        vx_linear(pool, &b->pw2, b->pw2_b, u, t, a);
        if (b->gamma) vx_scale_channels(a, b->gamma, t, d, a);
        vx_add(x, a, t * d, x);
    }
    free(xp), free(a), free(u);
    return st;
}
