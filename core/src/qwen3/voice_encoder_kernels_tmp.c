/* TEMPORARY (deleted when the kernels branch lands): plain scalar stand-ins for the kernels of
 * kernels.h that voice creation uses, defined weak so that the real core/src/cpu/ kernels replace
 * them at link time. They follow the contracts of kernels.h (one output element per thread, an
 * order of operations independent of n and of the thread count). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../error.h"
#include "../kernels.h"
#include "../pool.h"

#define WEAK __attribute__((weak))

static float h2f(uint16_t h) {
    uint32_t s = (uint32_t)(h >> 15) << 31, e = (h >> 10) & 31, m = h & 1023, u;
    if (e == 0) {
        if (!m) u = s;
        else {
            float f = ldexpf((float)m, -24);
            return s ? -f : f;
        }
    } else if (e == 31) u = s | 0x7f800000u | (m << 13);
    else u = s | ((e + 112) << 23) | (m << 13);
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static float bf2f(uint16_t h) {
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static float wat(const vx_mat *w, int64_t r, int64_t c) {
    int64_t i = r * w->cols + c;
    switch (w->dtype) {
    case VOX_DTYPE_F32: return ((const float *)w->data)[i];
    case VOX_DTYPE_F16: return h2f(((const uint16_t *)w->data)[i]);
    case VOX_DTYPE_BF16: return bf2f(((const uint16_t *)w->data)[i]);
    case VOX_DTYPE_Q8: return (float)((const int8_t *)w->data)[i] * w->scales[i / 32];
    case VOX_DTYPE_Q4: {
        uint8_t b = ((const uint8_t *)w->data)[i / 2];
        int q = (i & 1) ? (b >> 4) : (b & 15);
        return (float)(q - 8) * w->scales[i / 32];
    }
    default: return 0;
    }
}

typedef struct {
    const vx_mat *w;
    const float *bias, *x;
    int64_t n;
    float *y;
} lin_ctx;

static void lin_range(void *p, int64_t b, int64_t e) {
    lin_ctx *c = p;
    int64_t k = c->w->cols;
    float *row = malloc((size_t)k * sizeof *row);
    for (int64_t o = b; o < e; o++) {
        if (row && c->w->dtype == VOX_DTYPE_F32) memcpy(row, (const float *)c->w->data + o * k, (size_t)k * 4);
        else if (row)
            for (int64_t j = 0; j < k; j++) row[j] = wat(c->w, o, j);
        for (int64_t t = 0; t < c->n; t++) {
            const float *x = c->x + t * k;
            float s = 0;
            for (int64_t j = 0; j < k; j++) s += x[j] * row[j];
            c->y[t * c->w->rows + o] = c->bias ? s + c->bias[o] : s;
        }
    }
    free(row);
}

WEAK void vx_linear(vx_pool *pool, const vx_mat *w, const float *bias, const float *x, int64_t n, float *y) {
    lin_ctx c = {w, bias, x, n, y};
    vx_pool_for(pool, w->rows, 1, lin_range, &c);
}

WEAK void vx_layer_norm(const float *x, const float *w, const float *b, int64_t rows, int64_t d, float eps, float *y) {
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * d;
        float *yr = y + r * d;
        float mu = 0, var = 0;
        for (int64_t i = 0; i < d; i++) mu += xr[i];
        mu /= (float)d;
        for (int64_t i = 0; i < d; i++) var += (xr[i] - mu) * (xr[i] - mu);
        var /= (float)d;
        float inv = sqrtf(var + eps);
        for (int64_t i = 0; i < d; i++) yr[i] = (xr[i] - mu) / inv * (w ? w[i] : 1.0f) + (b ? b[i] : 0.0f);
    }
}

WEAK void vx_add(const float *a, const float *b, int64_t n, float *y) {
    for (int64_t i = 0; i < n; i++) y[i] = a[i] + b[i];
}
WEAK void vx_gelu(const float *x, int64_t n, float *y) {
    for (int64_t i = 0; i < n; i++) y[i] = (float)(0.5 * x[i] * (1.0 + erf(x[i] / sqrt(2.0))));
}
WEAK void vx_elu(const float *x, int64_t n, float *y) {
    for (int64_t i = 0; i < n; i++) y[i] = x[i] > 0 ? x[i] : expm1f(x[i]);
}
WEAK void vx_relu(const float *x, int64_t n, float *y) {
    for (int64_t i = 0; i < n; i++) y[i] = x[i] > 0 ? x[i] : 0.0f;
}
WEAK void vx_tanh(const float *x, int64_t n, float *y) {
    for (int64_t i = 0; i < n; i++) y[i] = tanhf(x[i]);
}
WEAK void vx_sigmoid(const float *x, int64_t n, float *y) {
    for (int64_t i = 0; i < n; i++) {
        if (x[i] >= 0) y[i] = 1.0f / (1.0f + expf(-x[i]));
        else {
            float e = expf(x[i]);
            y[i] = e / (1.0f + e);
        }
    }
}

WEAK void vx_rope(float *x, int64_t n, int64_t heads, int64_t d, const float *cos, const float *sin) {
    int64_t half = d / 2;
    float tmp[1024];
    for (int64_t r = 0; r < n; r++)
        for (int64_t h = 0; h < heads; h++) {
            float *v = x + (r * heads + h) * d;
            const float *c = cos + r * d, *s = sin + r * d;
            for (int64_t i = 0; i < d; i++)
                tmp[i] = i < half ? v[i] * c[i] - v[i + half] * s[i] : v[i] * c[i] + v[i - half] * s[i];
            memcpy(v, tmp, (size_t)d * sizeof *v);
        }
}

WEAK void vx_attention(vx_pool *pool, const float *q, int64_t nq, int64_t hq, const float *k, const float *v,
                       int64_t nk, int64_t hkv, int64_t d, float scale, int64_t window, float *out) {
    (void)pool;
    float *s = malloc((size_t)nk * sizeof *s);
    if (!s) return;
    for (int64_t i = 0; i < nq; i++) {
        int64_t pos = nk - nq + i;
        int64_t j0 = window > 0 && pos - window + 1 > 0 ? pos - window + 1 : 0;
        for (int64_t h = 0; h < hq; h++) {
            int64_t kh = h / (hq / hkv);
            const float *qv = q + (i * hq + h) * d;
            float mx = -INFINITY;
            for (int64_t j = j0; j <= pos; j++) {
                const float *kv = k + (j * hkv + kh) * d;
                float a = 0;
                for (int64_t t = 0; t < d; t++) a += qv[t] * kv[t];
                s[j] = a * scale;
                if (s[j] > mx) mx = s[j];
            }
            float sum = 0;
            for (int64_t j = j0; j <= pos; j++) sum += (s[j] = expf(s[j] - mx));
            float *o = out + (i * hq + h) * d;
            for (int64_t t = 0; t < d; t++) o[t] = 0;
            for (int64_t j = j0; j <= pos; j++) {
                float p = s[j] / sum;
                const float *vv = v + (j * hkv + kh) * d;
                for (int64_t t = 0; t < d; t++) o[t] += p * vv[t];
            }
        }
    }
    free(s);
}

WEAK void vx_im2col(const float *x, int64_t t_in, int64_t c, int64_t k, int64_t dilation, int64_t stride,
                    int64_t t_out, float *out) {
    (void)t_in;
    for (int64_t t = 0; t < t_out; t++)
        for (int64_t ci = 0; ci < c; ci++)
            for (int64_t j = 0; j < k; j++) out[(t * c + ci) * k + j] = x[(t * stride + j * dilation) * c + ci];
}

struct vx_rfft {
    int64_t n;
    double *cs, *sn;
};

WEAK vox_status vx_rfft_create(int64_t n, vx_rfft **out) {
    vx_rfft *p = calloc(1, sizeof *p);
    if (!p || n < 2 || (n & (n - 1))) {
        free(p);
        return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "rfft size %lld", (long long)n);
    }
    p->n = n;
    p->cs = malloc((size_t)n / 2 * sizeof(double));
    p->sn = malloc((size_t)n / 2 * sizeof(double));
    if (!p->cs || !p->sn) {
        free(p->cs), free(p->sn), free(p);
        return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    }
    for (int64_t i = 0; i < n / 2; i++) {
        p->cs[i] = cos(2 * M_PI * (double)i / (double)n);
        p->sn[i] = -sin(2 * M_PI * (double)i / (double)n);
    }
    *out = p;
    return VOX_OK;
}
WEAK void vx_rfft_free(vx_rfft *p) {
    if (p) free(p->cs), free(p->sn), free(p);
}
WEAK void vx_rfft_run(const vx_rfft *p, const float *in, float *out) {
    int64_t n = p->n;
    double *re = malloc((size_t)n * sizeof *re), *im = calloc((size_t)n, sizeof *im);
    if (!re || !im) {
        free(re), free(im);
        return;
    }
    int bits = 0;
    while ((1ll << bits) < n) bits++;
    for (int64_t i = 0; i < n; i++) {
        int64_t r = 0;
        for (int b = 0; b < bits; b++)
            if (i >> b & 1) r |= 1ll << (bits - 1 - b);
        re[r] = in[i];
    }
    for (int64_t len = 2; len <= n; len <<= 1) {
        int64_t step = n / len;
        for (int64_t s = 0; s < n; s += len)
            for (int64_t j = 0; j < len / 2; j++) {
                double wr = p->cs[j * step], wi = p->sn[j * step];
                int64_t a = s + j, b = s + j + len / 2;
                double tr = re[b] * wr - im[b] * wi, ti = re[b] * wi + im[b] * wr;
                re[b] = re[a] - tr, im[b] = im[a] - ti;
                re[a] += tr, im[a] += ti;
            }
    }
    for (int64_t i = 0; i <= n / 2; i++) out[2 * i] = (float)re[i], out[2 * i + 1] = (float)im[i];
    free(re), free(im);
}

WEAK void vx_gather_rows(const vx_mat *w, const int32_t *ids, int64_t n, float *out) {
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < w->cols; j++) out[i * w->cols + j] = wat(w, ids[i], j);
}
