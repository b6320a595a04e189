/* TEMPORARY (deleted when the kernels branch lands): plain scalar versions of the kernels.h functions
 * the codec decoder uses, so the codec builds and is tested before core/src/cpu/ arrives. Each output
 * element is computed with a fixed order of operations that does not depend on n (kernels.h rule 1). */
#include <math.h>
#include <string.h>

#include "../kernels.h"

static float h2f(uint16_t h) {
    uint32_t sign = (uint32_t)(h >> 15) << 31, e = (h >> 10) & 31u, m = h & 1023u, bits;
    if (e == 0) {
        if (m == 0) {
            bits = sign;
        } else {
            e = 113;
            while (!(m & 1024u)) m <<= 1, e--;
            bits = sign | (e << 23) | ((m & 1023u) << 13);
        }
    } else if (e == 31) {
        bits = sign | 0x7F800000u | (m << 13);
    } else {
        bits = sign | ((e + 112u) << 23) | (m << 13);
    }
    float f;
    memcpy(&f, &bits, 4);
    return f;
}
static float bf2f(uint16_t h) {
    uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

static void row_f32(const vx_mat *w, int64_t r, float *out) {
    const int64_t c = w->cols;
    if (w->dtype == VOX_DTYPE_F32) {
        memcpy(out, (const float *)w->data + r * c, (size_t)c * sizeof(float));
    } else if (w->dtype == VOX_DTYPE_F16) {
        const uint16_t *p = (const uint16_t *)w->data + r * c;
        for (int64_t i = 0; i < c; i++) out[i] = h2f(p[i]);
    } else if (w->dtype == VOX_DTYPE_BF16) {
        const uint16_t *p = (const uint16_t *)w->data + r * c;
        for (int64_t i = 0; i < c; i++) out[i] = bf2f(p[i]);
    } else if (w->dtype == VOX_DTYPE_Q8) {
        const int8_t *p = (const int8_t *)w->data + r * c;
        const float *s = w->scales + r * (c / 32);
        for (int64_t i = 0; i < c; i++) out[i] = (float)p[i] * s[i / 32];
    } else {
        const uint8_t *p = (const uint8_t *)w->data + r * c / 2;
        const float *s = w->scales + r * (c / 32);
        for (int64_t b = 0; b < c / 32; b++)
            for (int j = 0; j < 16; j++) {
                out[b * 32 + j] = (float)((int)(p[b * 16 + j] & 15) - 8) * s[b];
                out[b * 32 + j + 16] = (float)((int)(p[b * 16 + j] >> 4) - 8) * s[b];
            }
    }
}

void vx_linear(vx_pool *pool, const vx_mat *w, const float *bias, const float *x, int64_t n, float *y) {
    (void)pool;
    float wr[65536];
    float *tmp = w->cols <= 65536 ? wr : NULL;
    if (!tmp) return;
    for (int64_t r = 0; r < w->rows; r++) {
        row_f32(w, r, tmp);
        for (int64_t i = 0; i < n; i++) {
            const float *xi = x + i * w->cols;
            float acc = 0.0f;
            for (int64_t c = 0; c < w->cols; c++) acc += xi[c] * tmp[c];
            y[i * w->rows + r] = bias ? acc + bias[r] : acc;
        }
    }
}

void vx_matmul_nn_f32(vx_pool *pool, const float *w, int64_t k, int64_t m, const float *x, int64_t n, float *y) {
    (void)pool;
    for (int64_t i = 0; i < n; i++) {
        float *yi = y + i * m;
        for (int64_t j = 0; j < m; j++) yi[j] = 0.0f;
        for (int64_t kk = 0; kk < k; kk++) {
            const float a = x[i * k + kk], *wr = w + kk * m;
            for (int64_t j = 0; j < m; j++) yi[j] += a * wr[j];
        }
    }
}

void vx_gather_rows(const vx_mat *w, const int32_t *ids, int64_t n, float *out) {
    for (int64_t i = 0; i < n; i++) row_f32(w, ids[i], out + i * w->cols);
}

void vx_rms_norm(const float *x, const float *w, int64_t rows, int64_t d, float eps, float *y) {
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * d;
        float s = 0.0f;
        for (int64_t i = 0; i < d; i++) s += xr[i] * xr[i];
        const float inv = 1.0f / sqrtf(s / (float)d + eps);
        for (int64_t i = 0; i < d; i++) y[r * d + i] = w ? w[i] * (xr[i] * inv) : xr[i] * inv;
    }
}

void vx_layer_norm(const float *x, const float *w, const float *b, int64_t rows, int64_t d, float eps, float *y) {
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * d;
        float s = 0.0f, v = 0.0f;
        for (int64_t i = 0; i < d; i++) s += xr[i];
        const float mu = s / (float)d;
        for (int64_t i = 0; i < d; i++) v += (xr[i] - mu) * (xr[i] - mu);
        const float inv = 1.0f / sqrtf(v / (float)d + eps);
        for (int64_t i = 0; i < d; i++) y[r * d + i] = (xr[i] - mu) * inv * w[i] + b[i];
    }
}

void vx_add(const float *a, const float *b, int64_t n, float *y) {
    for (int64_t i = 0; i < n; i++) y[i] = a[i] + b[i];
}
void vx_mul(const float *a, const float *b, int64_t n, float *y) {
    for (int64_t i = 0; i < n; i++) y[i] = a[i] * b[i];
}
void vx_scale_channels(const float *x, const float *s, int64_t rows, int64_t d, float *y) {
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < d; c++) y[r * d + c] = x[r * d + c] * s[c];
}
void vx_add_channels(const float *x, const float *b, int64_t rows, int64_t d, float *y) {
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < d; c++) y[r * d + c] = x[r * d + c] + b[c];
}
void vx_silu_mul(const float *gate, const float *up, int64_t n, float *y) {
    for (int64_t i = 0; i < n; i++) y[i] = gate[i] / (1.0f + expf(-gate[i])) * up[i];
}
void vx_gelu(const float *x, int64_t n, float *y) {
    for (int64_t i = 0; i < n; i++) y[i] = x[i] * 0.5f * (1.0f + erff(x[i] * 0.70710678118654752f));
}
void vx_snake_beta(const float *x, const float *alpha, const float *inv_beta, int64_t t, int64_t c, float *y) {
    for (int64_t r = 0; r < t; r++)
        for (int64_t i = 0; i < c; i++) {
            const float v = x[r * c + i], s = sinf(v * alpha[i]);
            y[r * c + i] = v + inv_beta[i] * (s * s);
        }
}
void vx_clamp(const float *x, int64_t n, float lo, float hi, float *y) {
    for (int64_t i = 0; i < n; i++) y[i] = x[i] < lo ? lo : x[i] > hi ? hi : x[i];
}

void vx_rope(float *x, int64_t n, int64_t heads, int64_t d, const float *cos, const float *sin) {
    const int64_t half = d / 2;
    float tmp[1024];
    for (int64_t r = 0; r < n; r++)
        for (int64_t h = 0; h < heads; h++) {
            float *v = x + (r * heads + h) * d;
            const float *c = cos + r * d, *s = sin + r * d;
            for (int64_t i = 0; i < d; i++) tmp[i] = v[i];
            for (int64_t i = 0; i < half; i++) v[i] = tmp[i] * c[i] - tmp[i + half] * s[i];
            for (int64_t i = half; i < d; i++) v[i] = tmp[i] * c[i] + tmp[i - half] * s[i];
        }
}

void vx_attention(vx_pool *pool, const float *q, int64_t nq, int64_t hq, const float *k, const float *v,
                  int64_t nk, int64_t hkv, int64_t d, float scale, int64_t window, float *out) {
    (void)pool;
    float sc[4096];
    for (int64_t i = 0; i < nq; i++) {
        const int64_t p = nk - nq + i, lo = window > 0 && p - window + 1 > 0 ? p - window + 1 : 0;
        for (int64_t h = 0; h < hq; h++) {
            const int64_t g = h / (hq / hkv);
            const float *qi = q + (i * hq + h) * d;
            float mx = -INFINITY;
            for (int64_t j = lo; j <= p; j++) {
                const float *kj = k + (j * hkv + g) * d;
                float s = 0.0f;
                for (int64_t e = 0; e < d; e++) s += qi[e] * kj[e];
                sc[j - lo] = s * scale;
                if (sc[j - lo] > mx) mx = sc[j - lo];
            }
            float sum = 0.0f;
            for (int64_t j = lo; j <= p; j++) sum += (sc[j - lo] = expf(sc[j - lo] - mx));
            float *o = out + (i * hq + h) * d;
            for (int64_t e = 0; e < d; e++) o[e] = 0.0f;
            for (int64_t j = lo; j <= p; j++) {
                const float pj = sc[j - lo] / sum, *vj = v + (j * hkv + g) * d;
                for (int64_t e = 0; e < d; e++) o[e] += pj * vj[e];
            }
        }
    }
}

void vx_im2col(const float *x, int64_t t_in, int64_t c, int64_t k, int64_t dilation, int64_t stride, int64_t t_out,
               float *out) {
    (void)t_in;
    for (int64_t t = 0; t < t_out; t++)
        for (int64_t ci = 0; ci < c; ci++)
            for (int64_t j = 0; j < k; j++) out[(t * c + ci) * k + j] = x[(t * stride + j * dilation) * c + ci];
}

void vx_depthwise_conv(const float *x, int64_t t_out, int64_t c, const float *w, int64_t k, int64_t dilation,
                       const float *b, float *y) {
    for (int64_t t = 0; t < t_out; t++)
        for (int64_t ch = 0; ch < c; ch++) {
            float acc = 0.0f;
            for (int64_t j = 0; j < k; j++) acc += w[ch * k + j] * x[(t + j * dilation) * c + ch];
            y[t * c + ch] = b ? acc + b[ch] : acc;
        }
}
