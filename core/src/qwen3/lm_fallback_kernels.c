/* TEMPORARY: weak, portable definitions of the kernels the language model uses, so the LM builds and
 * runs before the kernels branch (core/src/cpu/) is merged. Every definition here is weak: the real
 * kernels, once linked in, replace them without any change to the callers. They keep the
 * determinism rules of kernels.h (an output element is computed by one thread in a fixed order).
 * q8/q4 weights are dequantized to float32 (q * s) and dotted in float32, as the reference does. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "../kernels.h"

#define VX_WEAK __attribute__((weak))

static float f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, man = h & 0x3ffu, bits;
    if (exp == 0) {
        if (man == 0) {
            bits = sign;
        } else { /* subnormal: normalize */
            int e = -1;
            do {
                e++;
                man <<= 1;
            } while (!(man & 0x400u));
            bits = sign | ((uint32_t)(127 - 15 - e) << 23) | ((man & 0x3ffu) << 13);
        }
    } else if (exp == 31) {
        bits = sign | 0x7f800000u | (man << 13);
    } else {
        bits = sign | ((exp + 127 - 15) << 23) | (man << 13);
    }
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

static void row_to_f32(const vx_mat *w, int64_t r, float *out) {
    const int64_t c = w->cols;
    switch (w->dtype) {
    case VOX_DTYPE_F32:
        memcpy(out, (const float *)w->data + r * c, (size_t)c * sizeof(float));
        break;
    case VOX_DTYPE_F16: {
        const uint16_t *p = (const uint16_t *)w->data + r * c;
        for (int64_t i = 0; i < c; i++) out[i] = f16_to_f32(p[i]);
        break;
    }
    case VOX_DTYPE_BF16: {
        const uint16_t *p = (const uint16_t *)w->data + r * c;
        for (int64_t i = 0; i < c; i++) {
            uint32_t b = (uint32_t)p[i] << 16;
            memcpy(&out[i], &b, 4);
        }
        break;
    }
    case VOX_DTYPE_Q8: {
        const int8_t *p = (const int8_t *)w->data + r * c;
        const float *s = w->scales + r * (c / 32);
        for (int64_t i = 0; i < c; i++) out[i] = (float)p[i] * s[i / 32];
        break;
    }
    case VOX_DTYPE_Q4: {
        const uint8_t *p = (const uint8_t *)w->data + r * (c / 2);
        const float *s = w->scales + r * (c / 32);
        for (int64_t b = 0; b < c / 32; b++)
            for (int j = 0; j < 16; j++) {
                uint8_t byte = p[b * 16 + j];
                out[b * 32 + j] = (float)((int)(byte & 15) - 8) * s[b];
                out[b * 32 + j + 16] = (float)((int)(byte >> 4) - 8) * s[b];
            }
        break;
    }
    default:
        memset(out, 0, (size_t)c * sizeof(float));
    }
}

static float dot_f32(const float *a, const float *b, int64_t n) {
    float acc[8] = {0};
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int j = 0; j < 8; j++) acc[j] += a[i + j] * b[i + j];
    float s = ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
    for (; i < n; i++) s += a[i] * b[i];
    return s;
}

typedef struct {
    const vx_mat *w;
    const float *bias, *x;
    int64_t n;
    float *y;
} linear_ctx;

static void linear_range(void *p, int64_t r0, int64_t r1) {
    const linear_ctx *c = p;
    float row[16384];
    const int64_t k = c->w->cols, m = c->w->rows;
    for (int64_t r = r0; r < r1; r++) {
        const float *wr;
        if (c->w->dtype == VOX_DTYPE_F32) {
            wr = (const float *)c->w->data + r * k;
        } else {
            row_to_f32(c->w, r, row);
            wr = row;
        }
        for (int64_t i = 0; i < c->n; i++) {
            float v = dot_f32(c->x + i * k, wr, k);
            if (c->bias) v += c->bias[r];
            c->y[i * m + r] = v;
        }
    }
}

VX_WEAK void vx_linear(vx_pool *pool, const vx_mat *w, const float *bias, const float *x, int64_t n, float *y) {
    linear_ctx c = {w, bias, x, n, y};
    vx_pool_for(pool, w->rows, 16, linear_range, &c);
}

VX_WEAK void vx_gather_rows(const vx_mat *w, const int32_t *ids, int64_t n, float *out) {
    for (int64_t i = 0; i < n; i++) row_to_f32(w, ids[i], out + i * w->cols);
}

VX_WEAK void vx_rms_norm(const float *x, const float *w, int64_t rows, int64_t d, float eps, float *y) {
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * d;
        float *yr = y + r * d;
        float ss = 0;
        for (int64_t i = 0; i < d; i++) ss += xr[i] * xr[i];
        float inv = 1.0f / sqrtf(ss / (float)d + eps);
        for (int64_t i = 0; i < d; i++) yr[i] = (w ? w[i] : 1.0f) * (xr[i] * inv);
    }
}

VX_WEAK void vx_add(const float *a, const float *b, int64_t n, float *y) {
    for (int64_t i = 0; i < n; i++) y[i] = a[i] + b[i];
}

static float silu1(float x) {
    float s = x >= 0 ? 1.0f / (1.0f + expf(-x)) : expf(x) / (1.0f + expf(x));
    return x * s;
}

VX_WEAK void vx_silu(const float *x, int64_t n, float *y) {
    for (int64_t i = 0; i < n; i++) y[i] = silu1(x[i]);
}

VX_WEAK void vx_silu_mul(const float *gate, const float *up, int64_t n, float *y) {
    for (int64_t i = 0; i < n; i++) y[i] = silu1(gate[i]) * up[i];
}

VX_WEAK void vx_rope(float *x, int64_t n, int64_t heads, int64_t d, const float *cos, const float *sin) {
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

typedef struct {
    const float *q, *k, *v;
    int64_t nq, hq, nk, hkv, d, window;
    float scale;
    float *out;
} attn_ctx;

static void attn_range(void *p, int64_t b, int64_t e) {
    const attn_ctx *c = p;
    for (int64_t t = b; t < e; t++) {
        const int64_t i = t / c->hq, h = t % c->hq, kh = h / (c->hq / c->hkv);
        const int64_t pos = c->nk - c->nq + i;
        int64_t j0 = 0;
        if (c->window > 0 && pos - c->window + 1 > 0) j0 = pos - c->window + 1;
        const float *q = c->q + (i * c->hq + h) * c->d;
        float m = -INFINITY;
        for (int64_t j = j0; j <= pos; j++) {
            float s = dot_f32(q, c->k + (j * c->hkv + kh) * c->d, c->d) * c->scale;
            if (s > m) m = s;
        }
        float sum = 0, *o = c->out + (i * c->hq + h) * c->d;
        for (int64_t x = 0; x < c->d; x++) o[x] = 0;
        for (int64_t j = j0; j <= pos; j++) {
            const float w = expf(dot_f32(q, c->k + (j * c->hkv + kh) * c->d, c->d) * c->scale - m);
            const float *vv = c->v + (j * c->hkv + kh) * c->d;
            sum += w;
            for (int64_t x = 0; x < c->d; x++) o[x] += w * vv[x];
        }
        for (int64_t x = 0; x < c->d; x++) o[x] /= sum;
    }
}

VX_WEAK void vx_attention(vx_pool *pool, const float *q, int64_t nq, int64_t hq, const float *k, const float *v,
                          int64_t nk, int64_t hkv, int64_t d, float scale, int64_t window, float *out) {
    attn_ctx c = {q, k, v, nq, hq, nk, hkv, d, window, scale, out};
    vx_pool_for(pool, nq * hq, 1, attn_range, &c);
}
