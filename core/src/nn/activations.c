/* Elementwise activations and row-parallel norms of nn.h. */
#include <math.h>
#include <string.h>

#include "nn.h"

#define ACT_BLOCK 1024 /* elements per pass through a stack buffer */

void vx_nn_gelu_tanh(const float *x, int64_t n, float *y) {
    /* the polynomial in plain float operations (vectorizable), the tanh through the kernel */
    const float c = 0.7978845608028654f, a = 0.044715f;
    float u[ACT_BLOCK];
    for (int64_t i0 = 0; i0 < n; i0 += ACT_BLOCK) {
        int64_t m = n - i0 < ACT_BLOCK ? n - i0 : ACT_BLOCK;
        for (int64_t i = 0; i < m; i++) {
            float v = x[i0 + i];
            u[i] = c * (v + a * (v * v * v));
        }
        vx_tanh(u, m, u);
        for (int64_t i = 0; i < m; i++) {
            float v = x[i0 + i];
            y[i0 + i] = 0.5f * v * (1.0f + u[i]);
        }
    }
}

void vx_nn_mish(const float *x, int64_t n, float *y) {
    for (int64_t i = 0; i < n; i++) {
        float v = x[i];
        if (v > 20.0f) { /* tanh(softplus(v)) is 1 to float precision */
            y[i] = v;
            continue;
        }
        double u = exp((double)v), p = u * (u + 2.0);
        y[i] = (float)((double)v * (p / (p + 2.0)));
    }
}

typedef struct rows_job {
    float *x;
    const float *cx, *w, *b;
    float *y;
    int64_t d;
    float eps;
    int op;
} rows_job;

enum { OP_GELU_TANH, OP_MISH, OP_LN };

static void rows_range(void *ctx, int64_t r0, int64_t r1) {
    const rows_job *j = ctx;
    int64_t d = j->d;
    switch (j->op) {
    case OP_GELU_TANH: vx_nn_gelu_tanh(j->x + r0 * d, (r1 - r0) * d, j->x + r0 * d); break;
    case OP_MISH: vx_nn_mish(j->x + r0 * d, (r1 - r0) * d, j->x + r0 * d); break;
    default: vx_layer_norm(j->cx + r0 * d, j->w, j->b, r1 - r0, d, j->eps, j->y + r0 * d); break;
    }
}

static int64_t grain_of(int64_t d) { return d >= 4096 ? 1 : 4096 / (d > 0 ? d : 1); }

void vx_nn_gelu_tanh_pool(vx_pool *pool, float *x, int64_t rows, int64_t d) {
    rows_job j = {.x = x, .d = d, .op = OP_GELU_TANH};
    vx_pool_for(pool, rows, grain_of(d), rows_range, &j);
}

void vx_nn_mish_pool(vx_pool *pool, float *x, int64_t rows, int64_t d) {
    rows_job j = {.x = x, .d = d, .op = OP_MISH};
    vx_pool_for(pool, rows, grain_of(d), rows_range, &j);
}

void vx_nn_layer_norm(vx_pool *pool, const float *x, const float *w, const float *b, int64_t rows, int64_t d, float eps,
                      float *y) {
    rows_job j = {.cx = x, .w = w, .b = b, .y = y, .d = d, .eps = eps, .op = OP_LN};
    vx_pool_for(pool, rows, grain_of(d), rows_range, &j);
}

vx_mat vx_mat_rows(const vx_mat *w, int64_t r0, int64_t n) {
    vx_mat s = *w;
    s.rows = n;
    if (w->dtype == VOX_DTYPE_Q8 || w->dtype == VOX_DTYPE_Q4) {
        /* the values plane, then the scales plane: both advance by whole rows */
        size_t row_bytes = (size_t)(w->dtype == VOX_DTYPE_Q8 ? w->cols : w->cols / 2);
        s.data = (const char *)w->data + (size_t)r0 * row_bytes;
        s.scales = w->scales + r0 * (w->cols / 32);
    } else {
        size_t esz = w->dtype == VOX_DTYPE_F32 ? 4 : 2;
        s.data = (const char *)w->data + (size_t)r0 * (size_t)w->cols * esz;
    }
    return s;
}

void vx_nn_leaky_relu(float *x, int64_t n, float slope) {
    for (int64_t i = 0; i < n; i++) x[i] = vx_nn_lrelu(x[i], slope);
}
