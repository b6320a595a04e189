/* The portable scalar path: the readable definition of every kernel in kernels.h.
 *
 * Plain float32 arithmetic in index order (this file is compiled as ISO C, so GCC does not contract
 * a * b + c into FMAs: every product and sum is rounded as written). Transcendental functions come
 * from libm. The SIMD paths compute the same functions; they may sum in a different (fixed) order
 * and use vectorized exp/sin/erf that stay within a few ulps of libm. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "cpu/dispatch.h"

/* ------------------------------------------------------------------------------ conversions */
float vx_f16_to_f32(uint16_t h) {
    union { uint32_t u; float f; } v;
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    if (e == 0) {
        v.f = (float)m * 0x1p-24f; /* zero or subnormal: exact, a normal float */
        v.u |= sign;
    } else if (e == 31) {
        v.u = sign | 0x7f800000u | (m << 13); /* inf, NaN (payload kept) */
    } else {
        v.u = sign | ((e + 112) << 23) | (m << 13);
    }
    return v.f;
}

static float weight_at(const vx_mat *w, int64_t r, int64_t k) {
    int64_t i = r * w->cols + k;
    switch (w->dtype) {
    case VOX_DTYPE_F32: return ((const float *)w->data)[i];
    case VOX_DTYPE_F16: return vx_f16_to_f32(((const uint16_t *)w->data)[i]);
    case VOX_DTYPE_BF16: return vx_bf16_to_f32(((const uint16_t *)w->data)[i]);
    case VOX_DTYPE_Q8: return (float)((const int8_t *)w->data)[i] * w->scales[i / 32];
    case VOX_DTYPE_Q4: {
        /* byte j of a block: element j in the low nibble, element j + 16 in the high nibble */
        const uint8_t *blk = (const uint8_t *)w->data + (i / 32) * 16;
        int j = (int)(i % 32);
        int nib = j < 16 ? blk[j] & 0xf : blk[j - 16] >> 4;
        return (float)(nib - 8) * w->scales[i / 32];
    }
    default: return 0.0f;
    }
}

/* ------------------------------------------------------------------------------ linear */
/* outputs i .. i + 3 of weight row r (y at row i, column r; rows apart), each + bias when there is one */
static void store4(float *y, int64_t rows, const float *bias, float a0, float a1, float a2, float a3) {
    const float b = bias ? *bias : 0.0f;
    y[0] = bias ? a0 + b : a0;
    y[rows] = bias ? a1 + b : a1;
    y[2 * rows] = bias ? a2 + b : a2;
    y[3 * rows] = bias ? a3 + b : a3;
}

static void linear_float(const vx_mat *w, const float *bias, const float *x, float *y, int64_t i0, int64_t i1,
                         int64_t r0, int64_t r1) {
    int64_t cols = w->cols, rows = w->rows;
    int64_t i = i0;
    if (w->dtype == VOX_DTYPE_F32) {
        /* four x rows at a time, each summed in index order (independent chains: the same bits) */
        for (; i + 4 <= i1; i += 4) {
            const float *x0 = x + i * cols, *x1 = x0 + cols, *x2 = x1 + cols, *x3 = x2 + cols;
            for (int64_t r = r0; r < r1; r++) {
                const float *wr = (const float *)w->data + r * cols;
                float a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f;
                for (int64_t k = 0; k < cols; k++) {
                    a0 += x0[k] * wr[k];
                    a1 += x1[k] * wr[k];
                    a2 += x2[k] * wr[k];
                    a3 += x3[k] * wr[k];
                }
                store4(y + i * rows + r, rows, bias ? &bias[r] : NULL, a0, a1, a2, a3);
            }
        }
    }
    for (; i < i1; i++) {
        const float *xi = x + i * cols;
        for (int64_t r = r0; r < r1; r++) {
            float acc = 0.0f;
            if (w->dtype == VOX_DTYPE_F32) {
                const float *wr = (const float *)w->data + r * cols;
                for (int64_t k = 0; k < cols; k++) acc += xi[k] * wr[k];
            } else {
                for (int64_t k = 0; k < cols; k++) acc += xi[k] * weight_at(w, r, k);
            }
            y[i * rows + r] = bias ? acc + bias[r] : acc;
        }
    }
}

float vx_quantize_block_q8(const float *x, int8_t *q) {
    /* max |x| on the bit patterns: exact, and a NaN anywhere makes amax NaN (then r = 0, d = NaN, and
     * the block's contribution is NaN: non-finite inputs are not silently hidden). */
    uint32_t amax_bits = 0;
    for (int j = 0; j < 32; j++) {
        union { float f; uint32_t u; } v = {x[j]};
        uint32_t a = v.u & 0x7fffffffu;
        if (a > amax_bits) amax_bits = a;
    }
    union { uint32_t u; float f; } amax = {amax_bits};
    float d = amax.f / 127.0f;
    float r = d > 0.0f ? 1.0f / d : 0.0f;
    for (int j = 0; j < 32; j++) {
        float v = x[j] * r;
        if (!(v == v)) v = 0.0f;
        v = roundf(v); /* half away from zero, as docs/formats.md */
        v = v < -127.0f ? -127.0f : v > 127.0f ? 127.0f : v;
        q[j] = (int8_t)v;
    }
    return d;
}

/* Scalar activation row: d[cols / 32] (float), then q[cols] (int8). */
static size_t qact_row_bytes(int64_t cols, vox_dtype wtype) {
    (void)wtype;
    size_t b = (size_t)cols / 32 * sizeof(float) + (size_t)cols;
    return (b + 63) & ~(size_t)63;
}

static void qact_quantize(const float *x, int64_t cols, vox_dtype wtype, void *row) {
    (void)wtype;
    float *d = row;
    int8_t *q = (int8_t *)(d + cols / 32);
    for (int64_t b = 0; b < cols / 32; b++) d[b] = vx_quantize_block_q8(x + 32 * b, q + 32 * b);
}

static void linear_quant(const vx_mat *w, const float *bias, const void *qact, size_t row_bytes, float *y,
                         int64_t i0, int64_t i1, int64_t r0, int64_t r1) {
    int64_t cols = w->cols, rows = w->rows, nb = cols / 32;
    for (int64_t r = r0; r < r1; r++) {
        const float *sw = w->scales + r * nb;
        for (int64_t i = i0; i < i1; i++) {
            const float *d = (const float *)((const char *)qact + (size_t)i * row_bytes);
            const int8_t *q = (const int8_t *)(d + nb);
            float acc = 0.0f;
            for (int64_t b = 0; b < nb; b++) {
                int32_t isum = 0;
                if (w->dtype == VOX_DTYPE_Q8) {
                    const int8_t *wq = (const int8_t *)w->data + r * cols + 32 * b;
                    for (int j = 0; j < 32; j++) isum += (int32_t)wq[j] * q[32 * b + j];
                } else {
                    const uint8_t *wq = (const uint8_t *)w->data + (r * cols + 32 * b) / 2;
                    for (int j = 0; j < 16; j++) {
                        isum += ((wq[j] & 0xf) - 8) * q[32 * b + j];
                        isum += ((wq[j] >> 4) - 8) * q[32 * b + j + 16];
                    }
                }
                acc += (float)isum * (sw[b] * d[b]);
            }
            y[i * rows + r] = bias ? acc + bias[r] : acc;
        }
    }
}

/* The generic GEMV entries: part by part through the table's linear kernels (paths that stream the
 * weights across parts override them). */
static void gemv_float(const vx_kernels *k, const vx_gemv_part *parts, int n_parts, const float *x, int64_t n_x) {
    for (int p = 0; p < n_parts; p++)
        k->linear_float(parts[p].w, parts[p].bias, x, parts[p].y, 0, n_x, parts[p].r0, parts[p].r1);
}
static void gemv_quant(const vx_kernels *k, const vx_gemv_part *parts, int n_parts, const void *qact, size_t row_bytes,
                       int64_t n_x) {
    for (int p = 0; p < n_parts; p++)
        k->linear_quant(parts[p].w, parts[p].bias, qact, row_bytes, parts[p].y, 0, n_x, parts[p].r0, parts[p].r1);
}

static void matmul_nn(const vx_mat *w, const float *x, float *y, int64_t i0, int64_t i1, int64_t c0, int64_t c1) {
    /* y[i][c] = sum over kk in order of x[i][kk] * w[kk][c] */
    const int64_t k = w->rows, m = w->cols;
    for (int64_t i = i0; i < i1; i++) {
        float *yi = y + i * m;
        for (int64_t c = c0; c < c1; c++) yi[c] = 0.0f;
        for (int64_t kk = 0; kk < k; kk++) {
            float xv = x[i * k + kk];
            if (w->dtype == VOX_DTYPE_F32) {
                const float *wr = (const float *)w->data + kk * m;
                for (int64_t c = c0; c < c1; c++) yi[c] += xv * wr[c];
            } else {
                for (int64_t c = c0; c < c1; c++) yi[c] += xv * weight_at(w, kk, c);
            }
        }
    }
}

/* ------------------------------------------------------------------------------ attention */
static float dot(const float *a, const float *b, int64_t d) {
    float s = 0.0f;
    for (int64_t i = 0; i < d; i++) s += a[i] * b[i];
    return s;
}

static void attention_one(const float *q, const float *k, const float *v, int64_t kstride, int64_t j0, int64_t j1,
                          int64_t d, float scale, float *out) {
    /* Two passes over the keys (max, then exponentials) recomputing the scores: no scratch memory. */
    float m = -INFINITY;
    for (int64_t j = j0; j < j1; j++) {
        float s = dot(q, k + j * kstride, d) * scale;
        if (s > m) m = s;
    }
    if (!isfinite(m)) m = 0.0f;
    for (int64_t t = 0; t < d; t++) out[t] = 0.0f;
    float sum = 0.0f;
    for (int64_t j = j0; j < j1; j++) {
        float p = expf(dot(q, k + j * kstride, d) * scale - m);
        sum += p;
        const float *vj = v + j * kstride;
        for (int64_t t = 0; t < d; t++) out[t] += p * vj[t];
    }
    for (int64_t t = 0; t < d; t++) out[t] /= sum;
}

static void attention_heads(const float *q, int64_t group, const float *k, const float *v, int64_t kstride, int64_t j0,
                            int64_t j1, int64_t d, float scale, float *out) {
    for (int64_t h = 0; h < group; h++) attention_one(q + h * d, k, v, kstride, j0, j1, d, scale, out + h * d);
}

/* ------------------------------------------------------------------------------ normalization */
static void rms_norm(const float *x, const float *w, int64_t rows, int64_t d, float eps, float *y) {
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * d;
        float *yr = y + r * d;
        float ss = 0.0f;
        for (int64_t i = 0; i < d; i++) ss += xr[i] * xr[i];
        float inv = 1.0f / sqrtf(ss / (float)d + eps);
        for (int64_t i = 0; i < d; i++) yr[i] = w ? w[i] * (xr[i] * inv) : xr[i] * inv;
    }
}

static void layer_norm(const float *x, const float *w, const float *b, int64_t rows, int64_t d, float eps, float *y) {
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * d;
        float *yr = y + r * d;
        float s = 0.0f;
        for (int64_t i = 0; i < d; i++) s += xr[i];
        float mean = s / (float)d, ss = 0.0f;
        for (int64_t i = 0; i < d; i++) ss += (xr[i] - mean) * (xr[i] - mean);
        float inv = 1.0f / sqrtf(ss / (float)d + eps);
        for (int64_t i = 0; i < d; i++) {
            float v = (xr[i] - mean) * inv;
            if (w) v = v * w[i];
            if (b) v = v + b[i];
            yr[i] = v;
        }
    }
}

static void softmax_rows(float *x, int64_t rows, int64_t d) {
    for (int64_t r = 0; r < rows; r++) {
        float *xr = x + r * d;
        float m = -INFINITY;
        for (int64_t i = 0; i < d; i++) m = xr[i] > m ? xr[i] : m;
        if (!isfinite(m)) m = 0.0f; /* as the reference: an all -inf row gives 0/0 */
        float sum = 0.0f;
        for (int64_t i = 0; i < d; i++) {
            xr[i] = expf(xr[i] - m);
            sum += xr[i];
        }
        for (int64_t i = 0; i < d; i++) xr[i] = xr[i] / sum;
    }
}

static void exp_rows(const float *s, int64_t lds, int64_t rows, int64_t n, float scale, float *p, float *sum) {
    for (int64_t r = 0; r < rows; r++) {
        const float *sr = s + r * lds;
        float m = -INFINITY, acc = 0.0f;
        for (int64_t i = 0; i < n; i++) m = sr[i] > m ? sr[i] : m;
        if (!isfinite(m)) m = 0.0f;
        for (int64_t i = 0; i < n; i++) acc += (p[r * n + i] = expf((sr[i] - m) * scale));
        sum[r] = acc;
    }
}

static void exp_rows_bf16(const float *s, int64_t lds, int64_t rows, int64_t n, float scale, uint16_t *p, int64_t ldp,
                          float *sum) {
    for (int64_t r = 0; r < rows; r++) {
        const float *sr = s + r * lds;
        float m = -INFINITY, acc = 0.0f;
        for (int64_t i = 0; i < n; i++) m = sr[i] > m ? sr[i] : m;
        if (!isfinite(m)) m = 0.0f;
        for (int64_t i = 0; i < n; i++) {
            const float e = expf((sr[i] - m) * scale);
            p[r * ldp + i] = vx_bf16_rne(e);
            acc += e;
        }
        sum[r] = acc;
    }
}

/* ------------------------------------------------------------------------------ elementwise */
static void add(const float *a, const float *b, int64_t n, float *y) {
    for (int64_t i = 0; i < n; i++) y[i] = a[i] + b[i];
}
static void mul(const float *a, const float *b, int64_t n, float *y) {
    for (int64_t i = 0; i < n; i++) y[i] = a[i] * b[i];
}
static void scale_channels(const float *x, const float *s, int64_t rows, int64_t d, float *y) {
    for (int64_t r = 0; r < rows; r++)
        for (int64_t i = 0; i < d; i++) y[r * d + i] = x[r * d + i] * s[i];
}
static void add_channels(const float *x, const float *b, int64_t rows, int64_t d, float *y) {
    for (int64_t r = 0; r < rows; r++)
        for (int64_t i = 0; i < d; i++) y[r * d + i] = x[r * d + i] + b[i];
}

/* Split by sign so exp never overflows (as the reference). */
static float sigmoidf(float x) {
    if (x >= 0.0f) return 1.0f / (1.0f + expf(-x));
    float e = expf(x);
    return e / (1.0f + e);
}

static void silu(const float *x, int64_t n, float *y) {
    for (int64_t i = 0; i < n; i++) y[i] = x[i] * sigmoidf(x[i]);
}
static void silu_mul(const float *gate, const float *up, int64_t n, float *y) {
    for (int64_t i = 0; i < n; i++) y[i] = gate[i] * sigmoidf(gate[i]) * up[i];
}
static void gelu(const float *x, int64_t n, float *y) {
    /* 0.5 x (1 + erf(x / sqrt 2)) = 0.5 x erfc(-x / sqrt 2): the erfc form has no cancellation for
     * negative x. Evaluated in double and rounded once. */
    for (int64_t i = 0; i < n; i++) y[i] = (float)(0.5 * (double)x[i] * erfc(-(double)x[i] * M_SQRT1_2));
}
static void elu(const float *x, int64_t n, float *y) {
    for (int64_t i = 0; i < n; i++) y[i] = x[i] > 0.0f ? x[i] : expm1f(x[i]);
}
static void relu(const float *x, int64_t n, float *y) {
    for (int64_t i = 0; i < n; i++) y[i] = x[i] < 0.0f ? 0.0f : x[i]; /* NaN passes, as torch */
}
static void tanh_(const float *x, int64_t n, float *y) {
    for (int64_t i = 0; i < n; i++) y[i] = tanhf(x[i]);
}
static void sigmoid(const float *x, int64_t n, float *y) {
    for (int64_t i = 0; i < n; i++) y[i] = sigmoidf(x[i]);
}
static void snake_beta(const float *x, const float *alpha, const float *inv_beta, int64_t t, int64_t c, float *y) {
    for (int64_t r = 0; r < t; r++)
        for (int64_t i = 0; i < c; i++) {
            float s = sinf(x[r * c + i] * alpha[i]);
            y[r * c + i] = x[r * c + i] + inv_beta[i] * (s * s);
        }
}
static void channel_moments(const float *x, int64_t t, int64_t c, int64_t c0, int64_t c1, double *mean, double *m2) {
    for (int64_t ch = c0; ch < c1; ch++) {
        double s = 0.0, q = 0.0;
        for (int64_t i = 0; i < t; i++) s += x[i * c + ch];
        s /= (double)t;
        for (int64_t i = 0; i < t; i++) {
            double d = x[i * c + ch] - s;
            q += d * d;
        }
        mean[ch - c0] = s, m2[ch - c0] = q;
    }
}
static void clamp(const float *x, int64_t n, float lo, float hi, float *y) {
    for (int64_t i = 0; i < n; i++) y[i] = x[i] < lo ? lo : x[i] > hi ? hi : x[i]; /* NaN passes */
}

static void rope(float *x, int64_t n, int64_t heads, int64_t d, const float *cos, const float *sin) {
    int64_t half = d / 2;
    for (int64_t r = 0; r < n; r++) {
        const float *c = cos + r * d, *s = sin + r * d;
        for (int64_t h = 0; h < heads; h++) {
            float *v = x + (r * heads + h) * d;
            for (int64_t i = 0; i < half; i++) {
                float a = v[i], b = v[i + half];
                v[i] = a * c[i] - b * s[i];
                v[i + half] = b * c[i + half] + a * s[i + half];
            }
        }
    }
}

/* ------------------------------------------------------------------------------ convolution */
static void im2col(const float *x, int64_t t_in, int64_t c, int64_t k, int64_t dilation, int64_t stride,
                   int64_t t_out, float *out) {
    (void)t_in;
    for (int64_t t = 0; t < t_out; t++) {
        float *o = out + t * c * k;
        for (int64_t ci = 0; ci < c; ci++)
            for (int64_t j = 0; j < k; j++) o[ci * k + j] = x[(t * stride + j * dilation) * c + ci];
    }
}

static void depthwise_conv(const float *x, int64_t t_out, int64_t c, const float *w, int64_t k, int64_t dilation,
                           const float *b, float *y) {
    for (int64_t t = 0; t < t_out; t++)
        for (int64_t ch = 0; ch < c; ch++) {
            float acc = b ? b[ch] : 0.0f;
            for (int64_t j = 0; j < k; j++) acc += w[ch * k + j] * x[(t + j * dilation) * c + ch];
            y[t * c + ch] = acc;
        }
}

static void gather_rows(const vx_mat *w, const int32_t *ids, int64_t n, float *out) {
    for (int64_t i = 0; i < n; i++) {
        float *o = out + i * w->cols;
        if (w->dtype == VOX_DTYPE_F32) {
            memcpy(o, (const float *)w->data + (int64_t)ids[i] * w->cols, (size_t)w->cols * sizeof(float));
            continue;
        }
        for (int64_t k = 0; k < w->cols; k++) o[k] = weight_at(w, ids[i], k);
    }
}

/* the f32 linear layer's loop with the im2col column read in place (vx_conv1d_f32): column k of the
 * weight row is input channel k / taps at tap k % taps. Four output positions at a time, each summed
 * in that index order (four independent chains, so the adds overlap; the same bits as one at a time),
 * and every weight row applied to those four before the next four (the rows stay in cache). */
static void conv_f32(const vx_mat *w, int64_t c_in, int64_t taps, int64_t dil, int64_t stride, const float *bias,
                     const float *x, float *y, int64_t i0, int64_t i1, int64_t r0, int64_t r1) {
    const int64_t cols = w->cols, rows = w->rows, step = stride * c_in, tap = dil * c_in;
    const float *wd = (const float *)w->data;
    int64_t i = i0;
    for (; i + 4 <= i1; i += 4) {
        const float *x0 = x + i * step, *x1 = x0 + step, *x2 = x1 + step, *x3 = x2 + step;
        for (int64_t r = r0; r < r1; r++) {
            const float *wr = wd + r * cols;
            float a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f;
            for (int64_t c = 0; c < c_in; c++) {
                for (int64_t t = 0; t < taps; t++) {
                    const float wv = wr[c * taps + t];
                    const int64_t o = t * tap + c;
                    a0 += x0[o] * wv;
                    a1 += x1[o] * wv;
                    a2 += x2[o] * wv;
                    a3 += x3[o] * wv;
                }
            }
            store4(y + i * rows + r, rows, bias ? &bias[r] : NULL, a0, a1, a2, a3);
        }
    }
    for (; i < i1; i++) {
        const float *xi = x + i * step;
        for (int64_t r = r0; r < r1; r++) {
            const float *wr = wd + r * cols;
            float acc = 0.0f;
            for (int64_t c = 0; c < c_in; c++)
                for (int64_t t = 0; t < taps; t++) acc += xi[t * tap + c] * wr[c * taps + t];
            y[i * rows + r] = bias ? acc + bias[r] : acc;
        }
    }
}

/* ------------------------------------------------------------------------------ sources */
static void harmonic_source(const vx_harmonic *a, int64_t begin, int64_t end, float *y) {
    for (int64_t j = begin; j < end; j++) {
        /* torch's CPU kernel computes the source index and the blend with fused multiply-adds; the
         * phase reaches ~1e5 rad, where one rounding more or less is an audible-scale phase step */
        float s = fmaf(a->scale, (float)j + 0.5f, -0.5f);
        if (s < 0.0f) s = 0.0f;
        const int64_t i0 = (int64_t)s, i1 = i0 + (i0 < a->t2 - 1 ? 1 : 0);
        const float l1 = s - (float)i0, l0 = 1.0f - l1;
        const float uv = a->f0[j / a->hop] > a->threshold ? 1.0f : 0.0f;
        float acc = a->b;
        for (int64_t h = 0; h < a->n_h; h++) {
            const float ph = fmaf(l0, a->phase[i0 * a->n_h + h], l1 * a->phase[i1 * a->n_h + h]);
            acc += a->w[h] * (sinf(ph) * a->amp * uv);
        }
        if (a->noise) acc += a->noise[j];
        y[j] = tanhf(acc);
    }
}

void vx_kernels_init_scalar(vx_kernels *t) {
    t->name = "scalar";
    t->linear_float = linear_float;
    t->qact_row_bytes = qact_row_bytes;
    t->qact_quantize = qact_quantize;
    t->linear_quant = linear_quant;
    t->gemv_float = gemv_float;
    t->gemv_quant = gemv_quant;
    t->matmul_nn = matmul_nn;
    t->conv_f32 = conv_f32;
    t->attention_heads = attention_heads;
    t->rms_norm = rms_norm;
    t->layer_norm = layer_norm;
    t->softmax_rows = softmax_rows;
    t->exp_rows = exp_rows;
    t->exp_rows_bf16 = exp_rows_bf16;
    t->quant_block_q8 = vx_quantize_block_q8;
    t->bf16_round = vx_bf16_round;
    t->add = add;
    t->mul = mul;
    t->scale_channels = scale_channels;
    t->add_channels = add_channels;
    t->silu = silu;
    t->silu_mul = silu_mul;
    t->gelu = gelu;
    t->elu = elu;
    t->relu = relu;
    t->tanh = tanh_;
    t->sigmoid = sigmoid;
    t->snake_beta = snake_beta;
    t->channel_moments = channel_moments;
    t->clamp = clamp;
    t->rope = rope;
    t->im2col = im2col;
    t->depthwise_conv = depthwise_conv;
    t->gather_rows = gather_rows;
    t->harmonic_source = harmonic_source;
    /* no packed-weight kernels: conv_i8, conv_bf16 NULL (the f32 kernels are the definition) */
}
