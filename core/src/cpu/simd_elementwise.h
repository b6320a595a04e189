/* Internal: elementwise kernels, normalizations, softmax, RoPE, depthwise convolution and attention on
 * the simd.h abstraction; included once by kernels_avx2.c and kernels_avx512.c.
 *
 * Orders of operations (per path, fixed):
 *  - elementwise: the scalar definition's operations, with simd_math.h in place of libm; array tails
 *    use masked vectors of the same function, so an element's value never depends on its position.
 *  - reductions over a row (norms, attention dot products): lane j accumulates elements j, j+VL,
 *    ... with FMA, then v_hsum's fixed tree; the row length alone decides the order.
 *  - softmax and attention sum their exponentials in index (key) order, as kernels.h states. */
#ifndef VOX_CPU_SIMD_ELEMENTWISE_H
#define VOX_CPU_SIMD_ELEMENTWISE_H

#include "cpu/dispatch.h"
#include "cpu/simd_math.h"

#include <stdint.h>
#include <string.h>

/* y[i] = EXPR(v) over x[0..n) where v is the loaded vector (and u the vector of a second input). */
#define VX_MAP1(x, n, y, EXPR)                                                     \
    do {                                                                           \
        int64_t i_ = 0;                                                            \
        for (; i_ + VL <= (n); i_ += VL) {                                         \
            vf v = v_load((x) + i_);                                               \
            v_store((y) + i_, (EXPR));                                             \
        }                                                                          \
        if (i_ < (n)) {                                                            \
            vf v = v_load_part((x) + i_, (n)-i_);                                  \
            v_store_part((y) + i_, (EXPR), (n)-i_);                                \
        }                                                                          \
    } while (0)
#define VX_MAP2(x, x2, n, y, EXPR)                                                 \
    do {                                                                           \
        int64_t i_ = 0;                                                            \
        for (; i_ + VL <= (n); i_ += VL) {                                         \
            vf v = v_load((x) + i_), u = v_load((x2) + i_);                        \
            v_store((y) + i_, (EXPR));                                             \
        }                                                                          \
        if (i_ < (n)) {                                                            \
            vf v = v_load_part((x) + i_, (n)-i_), u = v_load_part((x2) + i_, (n)-i_); \
            v_store_part((y) + i_, (EXPR), (n)-i_);                                \
        }                                                                          \
    } while (0)

static void e_add(const float *a, const float *b, int64_t n, float *y) { VX_MAP2(a, b, n, y, v_add(v, u)); }
static void e_mul(const float *a, const float *b, int64_t n, float *y) { VX_MAP2(a, b, n, y, v_mul(v, u)); }
static void e_scale_channels(const float *x, const float *s, int64_t rows, int64_t d, float *y) {
    for (int64_t r = 0; r < rows; r++) VX_MAP2(x + r * d, s, d, y + r * d, v_mul(v, u));
}
static void e_add_channels(const float *x, const float *b, int64_t rows, int64_t d, float *y) {
    for (int64_t r = 0; r < rows; r++) VX_MAP2(x + r * d, b, d, y + r * d, v_add(v, u));
}
static void e_silu(const float *x, int64_t n, float *y) { VX_MAP1(x, n, y, v_mul(v, v_sigmoid(v))); }
static void e_silu_mul(const float *g, const float *up, int64_t n, float *y) {
    VX_MAP2(g, up, n, y, v_mul(v_mul(v, v_sigmoid(v)), u));
}
static void e_gelu(const float *x, int64_t n, float *y) { VX_MAP1(x, n, y, v_mul(v, v_gelu_factor(v))); }
static void e_elu(const float *x, int64_t n, float *y) {
    VX_MAP1(x, n, y, v_sel(v_gt(v, v_zero()), v_expm1(v_min(v, v_zero())), v));
}
/* (x < 0) ? 0 : x, so NaN passes (as the scalar definition) */
static void e_relu(const float *x, int64_t n, float *y) { VX_MAP1(x, n, y, v_sel(v_lt(v, v_zero()), v, v_zero())); }
static void e_tanh(const float *x, int64_t n, float *y) { VX_MAP1(x, n, y, v_tanh(v)); }
static void e_sigmoid(const float *x, int64_t n, float *y) { VX_MAP1(x, n, y, v_sigmoid(v)); }
static void e_clamp(const float *x, int64_t n, float lo, float hi, float *y) {
    vf vlo = v_set1(lo), vhi = v_set1(hi);
    VX_MAP1(x, n, y, v_sel(v_lt(v, vlo), v_sel(v_gt(v, vhi), v, vhi), vlo)); /* x < lo ? lo : x > hi ? hi : x */
}
static void e_snake_beta(const float *x, const float *alpha, const float *inv_beta, int64_t t, int64_t c, float *y) {
    for (int64_t r = 0; r < t; r++) {
        const float *xr = x + r * c;
        float *yr = y + r * c;
        int64_t i = 0;
        for (; i + VL <= c; i += VL) {
            vf v = v_load(xr + i), s = v_sin(v_mul(v, v_load(alpha + i)));
            v_store(yr + i, v_add(v, v_mul(v_load(inv_beta + i), v_mul(s, s))));
        }
        if (i < c) {
            int64_t m = c - i;
            vf v = v_load_part(xr + i, m), s = v_sin(v_mul(v, v_load_part(alpha + i, m)));
            v_store_part(yr + i, v_add(v, v_mul(v_load_part(inv_beta + i, m), v_mul(s, s))), m);
        }
    }
}

/* Channel moments: vectorized across channels (doubles), each channel's sums over time in order with
 * separate multiplies and adds, so every path gives the scalar definition's bits. */
#if VL == 16
#  define CM_VD 8
typedef __m512d cm_vd;
#  define cm_zero() _mm512_setzero_pd()
#  define cm_cvt(p) _mm512_cvtps_pd(_mm256_loadu_ps(p))
#  define cm_add _mm512_add_pd
#  define cm_sub _mm512_sub_pd
#  define cm_mul _mm512_mul_pd
#  define cm_div _mm512_div_pd
#  define cm_set1 _mm512_set1_pd
#  define cm_store _mm512_storeu_pd
#elif VL == 4
#  define CM_VD 2
typedef float64x2_t cm_vd;
#  define cm_zero() vdupq_n_f64(0.0)
#  define cm_cvt(p) vcvt_f64_f32(vld1_f32(p))
#  define cm_add vaddq_f64
#  define cm_sub vsubq_f64
#  define cm_mul vmulq_f64
#  define cm_div vdivq_f64
#  define cm_set1 vdupq_n_f64
#  define cm_store vst1q_f64
#else
#  define CM_VD 4
typedef __m256d cm_vd;
#  define cm_zero() _mm256_setzero_pd()
#  define cm_cvt(p) _mm256_cvtps_pd(_mm_loadu_ps(p))
#  define cm_add _mm256_add_pd
#  define cm_sub _mm256_sub_pd
#  define cm_mul _mm256_mul_pd
#  define cm_div _mm256_div_pd
#  define cm_set1 _mm256_set1_pd
#  define cm_store _mm256_storeu_pd
#endif
#define CM_NB 8 /* double vectors per sweep over the rows */

V_INLINE void cm_block(const int NB, const float *x, int64_t t, int64_t c, double *mean, double *m2) {
    cm_vd s[CM_NB], q[CM_NB], tt = cm_set1((double)t);
#pragma GCC unroll 8
    for (int b = 0; b < NB; b++) s[b] = cm_zero(), q[b] = cm_zero();
    for (int64_t i = 0; i < t; i++)
#pragma GCC unroll 8
        for (int b = 0; b < NB; b++) s[b] = cm_add(s[b], cm_cvt(x + i * c + b * CM_VD));
#pragma GCC unroll 8
    for (int b = 0; b < NB; b++) s[b] = cm_div(s[b], tt);
    for (int64_t i = 0; i < t; i++)
#pragma GCC unroll 8
        for (int b = 0; b < NB; b++) {
            cm_vd d = cm_sub(cm_cvt(x + i * c + b * CM_VD), s[b]);
            q[b] = cm_add(q[b], cm_mul(d, d));
        }
#pragma GCC unroll 8
    for (int b = 0; b < NB; b++) cm_store(mean + b * CM_VD, s[b]), cm_store(m2 + b * CM_VD, q[b]);
}

static void e_channel_moments(const float *x, int64_t t, int64_t c, int64_t c0, int64_t c1, double *mean, double *m2) {
    int64_t ch = c0;
    for (; ch + CM_NB * CM_VD <= c1; ch += CM_NB * CM_VD) cm_block(CM_NB, x + ch, t, c, mean + (ch - c0), m2 + (ch - c0));
    for (; ch + CM_VD <= c1; ch += CM_VD) cm_block(1, x + ch, t, c, mean + (ch - c0), m2 + (ch - c0));
    for (; ch < c1; ch++) {
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

/* ------------------------------------------------------------------------------ reductions */
static float e_sum_squares(const float *x, int64_t d, float center) {
    vf acc = v_zero(), c = v_set1(center);
    int64_t i = 0;
    for (; i + VL <= d; i += VL) {
        vf v = v_sub(v_load(x + i), c);
        acc = v_fma(v, v, acc);
    }
    if (i < d) { /* masked lanes: 0 - 0, adding nothing */
        float cb[VL];
        for (int j = 0; j < VL; j++) cb[j] = center;
        vf v = v_sub(v_load_part(x + i, d - i), v_load_part(cb, d - i));
        acc = v_fma(v, v, acc);
    }
    return v_hsum(acc);
}

static float e_sum(const float *x, int64_t d) {
    vf acc = v_zero();
    int64_t i = 0;
    for (; i + VL <= d; i += VL) acc = v_add(acc, v_load(x + i));
    if (i < d) acc = v_add(acc, v_load_part(x + i, d - i));
    return v_hsum(acc);
}

static void e_rms_norm(const float *x, const float *w, int64_t rows, int64_t d, float eps, float *y) {
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * d;
        float *yr = y + r * d;
        float inv = 1.0f / sqrtf(e_sum_squares(xr, d, 0.0f) / (float)d + eps);
        vf vi_ = v_set1(inv);
        if (w)
            VX_MAP2(xr, w, d, yr, v_mul(u, v_mul(v, vi_)));
        else
            VX_MAP1(xr, d, yr, v_mul(v, vi_));
    }
}

static void e_layer_norm(const float *x, const float *w, const float *b, int64_t rows, int64_t d, float eps, float *y) {
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * d;
        float *yr = y + r * d;
        float mean = e_sum(xr, d) / (float)d;
        float inv = 1.0f / sqrtf(e_sum_squares(xr, d, mean) / (float)d + eps);
        vf vm_ = v_set1(mean), vi_ = v_set1(inv);
        int64_t i = 0;
        for (; i < d; i += VL) {
            int64_t m = d - i < VL ? d - i : VL;
            vf v = m == VL ? v_load(xr + i) : v_load_part(xr + i, m);
            v = v_mul(v_sub(v, vm_), vi_);
            if (w) v = v_mul(v, m == VL ? v_load(w + i) : v_load_part(w + i, m));
            if (b) v = v_add(v, m == VL ? v_load(b + i) : v_load_part(b + i, m));
            if (m == VL)
                v_store(yr + i, v);
            else
                v_store_part(yr + i, v, m);
        }
    }
}

/* A row's max by vectors (exact in any order; a NaN element is skipped, as the scalar comparison does),
 * 0 for a row without a finite one (all -inf: 0/0, as the reference). */
static inline float row_max(const float *x, int64_t d) {
    vf acc = v_set1(-INFINITY);
    int64_t i = 0;
    for (; i + VL <= d; i += VL) acc = v_max(v_load(x + i), acc);
    float m = v_hmax(acc);
    for (; i < d; i++) m = x[i] > m ? x[i] : m;
    return isfinite(m) ? m : 0.0f;
}

/* The max by vectors (row_max),
 * the exponentials by vectors, and each row's sum in index order, as the scalar definition; the sum
 * is one dependent chain per row, so the chains of up to 8 rows are interleaved (an attention's score
 * block: rows of ~1000 keys, where one chain alone left the core waiting on each add). */
static void e_softmax_rows(float *x, int64_t rows, int64_t d) {
    for (int64_t r0 = 0; r0 < rows; r0 += 8) {
        const int nr = rows - r0 < 8 ? (int)(rows - r0) : 8;
        float sum[8] = {0};
        for (int j = 0; j < nr; j++) {
            float *xr = x + (r0 + j) * d;
            vf vmx = v_set1(row_max(xr, d));
            VX_MAP1(xr, d, xr, v_exp(v_sub(v, vmx)));
        }
        float *x0 = x + r0 * d;
        if (nr == 8) {
            for (int64_t i = 0; i < d; i++)
#pragma GCC unroll 8
                for (int j = 0; j < 8; j++) sum[j] += x0[j * d + i]; /* index order, as kernels.h states */
        } else {
            for (int j = 0; j < nr; j++)
                for (int64_t i = 0; i < d; i++) sum[j] += x0[j * d + i];
        }
        for (int j = 0; j < nr; j++) {
            vf vs = v_set1(sum[j]);
            VX_MAP1(x0 + j * d, d, x0 + j * d, v_div(v, vs));
        }
    }
}

/* exp(x) for the softmax's x = scale (s - max) <= 0 (NaN passes): fewer operations than v_exp, whose
 * range, clamps and NaN select the softmax does not need, at 2e-7 relative error (v_exp: ~1e-7).
 *   n = round(x log2 e) by the 1.5 2^23 shifter, whose low bits hold n + 127 (the exponent of 2^n);
 *   r = x - n ln 2 with one float ln 2 (the error, n ulps of ln 2, only touches terms below 2^-20 of the
 *   row's largest); e^r by a degree-5 polynomial of least relative error on [-ln2/2, ln2/2] (1.05e-7).
 * Below -87.3 (2^n no longer normal) the result is that of -87.3, 1e-38: nothing next to the max's 1. */
V_INLINE vf v_exp_nonpos(vf x) {
    const vf shifter = v_set1(12583039.0f); /* 1.5 2^23 + 127 */
    x = v_max(v_set1(-87.3f), x);           /* x second: a NaN x is returned */
    vf t = v_fma(x, v_set1(1.44269504088896341f), shifter);
    vf n = v_sub(t, shifter);
    vf r = v_fnma(n, v_set1(0.693147180559945309f), x);
    vf p = v_fma(v_set1(0.00831251f), r, v_set1(0.04189009f));
    p = v_fma(p, r, v_set1(0.16667115f));
    p = v_fma(p, r, v_set1(0.49999232f));
    p = v_fma(p, r, v_set1(1.0f));
    p = v_fma(p, r, v_set1(1.0f));
    return v_mul(p, v_frombits(vi_sll23(v_bits(t))));
}

/* vx_exp_rows_bf16 stores each value as its bf16 bits (round to nearest even on the float bits:
 * vx_bf16_rne's for every normal value and NaN, here where the exponentials are never denormal). */
V_INLINE vi v_bf16_bits(vf e) {
    const vi u = v_bits(e);
    const vi r = vi_srai16(vi_add(vi_add(u, vi_set1(0x7fff)), vi_and(vi_srai16(u), vi_set1(1))));
    return vi_sel(v_isnan(e), r, vi_or(vi_srai16(u), vi_set1(0x40)));
}

V_INLINE void v_store_bf16_bits(int16_t *p, vf e) { vi_store_i16(p, v_bf16_bits(e)); }

/* vx_exp_rows and vx_exp_rows_bf16: per row the max by vectors, then exp(scale s - scale max) (one fused
 * product) by vectors, stored, and summed lane by lane (element c in lane c % VL) then v_hsum's tree: one
 * pass over the row after the max, no division (the bf16 attention normalizes its 64 outputs instead of
 * the row). store16 NULL: floats into pf, rows n apart; else VL values as bf16 into pb, rows ldp apart
 * (a path with a conversion instruction passes its own store: the same bits). */
V_INLINE void exp_rows_with(const float *s, int64_t lds, int64_t rows, int64_t n, float scale, float *pf, uint16_t *pb,
                            int64_t ldp, float *sum, void (*store16)(int16_t *, vf)) {
    const vf vsc = v_set1(scale);
    for (int64_t r = 0; r < rows; r++) {
        const float *sr = s + r * lds;
        float *pr = store16 ? NULL : pf + r * n;
        int16_t *hr = store16 ? (int16_t *)(pb + r * ldp) : NULL;
        const vf vms = v_set1(-(row_max(sr, n) * scale));
        vf vs = v_zero();
        int64_t i = 0;
        for (; i + VL <= n; i += VL) {
            vf e = v_exp_nonpos(v_fma(v_load(sr + i), vsc, vms));
            if (store16) store16(hr + i, e);
            else v_store(pr + i, e);
            vs = v_add(vs, e);
        }
        if (i < n) {
            vf e = v_exp_nonpos(v_fma(v_load_part(sr + i, n - i), vsc, vms));
            float ef[VL];
            v_store(ef, e);
            if (store16) {
                int16_t tail[VL];
                store16(tail, e);
                memcpy(hr + i, tail, (size_t)(n - i) * sizeof *tail);
            } else {
                memcpy(pr + i, ef, (size_t)(n - i) * sizeof *ef);
            }
            vs = v_add(vs, v_load_part(ef, n - i));
        }
        sum[r] = v_hsum(vs);
    }
}

static void e_exp_rows(const float *s, int64_t lds, int64_t rows, int64_t n, float scale, float *p, float *sum) {
    exp_rows_with(s, lds, rows, n, scale, p, NULL, 0, sum, NULL);
}

static void e_exp_rows_bf16(const float *s, int64_t lds, int64_t rows, int64_t n, float scale, uint16_t *p, int64_t ldp,
                            float *sum) {
    exp_rows_with(s, lds, rows, n, scale, NULL, p, ldp, sum, v_store_bf16_bits);
}

/* ------------------------------------------------------------------------------ rope */
static void e_rope(float *x, int64_t n, int64_t heads, int64_t d, const float *cos, const float *sin) {
    int64_t half = d / 2;
    for (int64_t r = 0; r < n; r++) {
        const float *c = cos + r * d, *s = sin + r * d;
        for (int64_t h = 0; h < heads; h++) {
            float *v = x + (r * heads + h) * d;
            for (int64_t i = 0; i < half; i += VL) {
                int64_t m = half - i < VL ? half - i : VL;
                vf a, b, c0, c1, s0, s1;
                if (m == VL) {
                    a = v_load(v + i), b = v_load(v + i + half);
                    c0 = v_load(c + i), c1 = v_load(c + i + half), s0 = v_load(s + i), s1 = v_load(s + i + half);
                } else {
                    a = v_load_part(v + i, m), b = v_load_part(v + i + half, m);
                    c0 = v_load_part(c + i, m), c1 = v_load_part(c + i + half, m);
                    s0 = v_load_part(s + i, m), s1 = v_load_part(s + i + half, m);
                }
                /* the scalar definition's roundings: two products, then the sum */
                vf lo = v_sub(v_mul(a, c0), v_mul(b, s0)), hi = v_add(v_mul(b, c1), v_mul(a, s1));
                if (m == VL) {
                    v_store(v + i, lo);
                    v_store(v + i + half, hi);
                } else {
                    v_store_part(v + i, lo, m);
                    v_store_part(v + i + half, hi, m);
                }
            }
        }
    }
}

/* ------------------------------------------------------------------------------ im2col */
/* out[t][ci * k + j] = x[t * stride + j * dilation][ci]: each output row interleaves k input rows,
 * i.e. transposes a k x c block. For k <= VL: load VL channels of the k taps as k vectors (the rest
 * zero), transpose in registers, and store channel l's k taps with one masked store. Plain copies:
 * the same bits as the scalar definition. (Gathers were slower on some CPUs, faster on others.) */
static void e_im2col(const float *x, int64_t t_in, int64_t c, int64_t k, int64_t dilation, int64_t stride, int64_t t_out,
                     float *out) {
    if (k == 1) {
        for (int64_t t = 0; t < t_out; t++) memcpy(out + t * c, x + t * stride * c, sizeof(float) * (size_t)c);
        return;
    }
    if (k > VL) {
        vx_kernels s;
        vx_kernels_init_scalar(&s);
        s.im2col(x, t_in, c, k, dilation, stride, t_out, out);
        return;
    }
    const int64_t cfull = c / VL * VL;
    for (int64_t t = 0; t < t_out; t++) {
        const float *base = x + t * stride * c;
        float *o = out + t * c * k;
        for (int64_t q = 0; q < cfull; q += VL) {
            vf r[VL];
            for (int64_t j = 0; j < VL; j++) r[j] = j < k ? v_load(base + j * dilation * c + q) : v_zero();
            v_transpose(r);
            if (k == VL)
                for (int l = 0; l < VL; l++) v_store(o + (q + l) * k, r[l]);
            else
                for (int l = 0; l < VL; l++) v_store_part(o + (q + l) * k, r[l], k);
        }
        for (int64_t ci = cfull; ci < c; ci++)
            for (int64_t j = 0; j < k; j++) o[ci * k + j] = base[j * dilation * c + ci];
    }
}

/* ------------------------------------------------------------------------------ depthwise conv */
#define DW_MAXK 64
static void e_depthwise_conv(const float *x, int64_t t_out, int64_t c, const float *w, int64_t k, int64_t dilation,
                             const float *b, float *y) {
    if (k > DW_MAXK) {
        /* no real model has such kernels; the scalar definition handles them */
        vx_kernels s;
        vx_kernels_init_scalar(&s);
        s.depthwise_conv(x, t_out, c, w, k, dilation, b, y);
        return;
    }
    _Alignas(64) float wt[DW_MAXK * VL];
    for (int64_t c0 = 0; c0 < c; c0 += VL) {
        int64_t m = c - c0 < VL ? c - c0 : VL;
        /* this channel block's taps, transposed to [j][lane] */
        for (int64_t j = 0; j < k; j++)
            for (int64_t l = 0; l < VL; l++) wt[j * VL + l] = l < m ? w[(c0 + l) * k + j] : 0.0f;
        vf bias = b ? (m == VL ? v_load(b + c0) : v_load_part(b + c0, m)) : v_zero();
        for (int64_t t = 0; t < t_out; t++) {
            vf acc = bias;
            const float *xt = x + t * c + c0;
            for (int64_t j = 0; j < k; j++) {
                vf xv = m == VL ? v_load(xt + j * dilation * c) : v_load_part(xt + j * dilation * c, m);
                acc = v_fma(v_load(wt + j * VL), xv, acc);
            }
            if (m == VL)
                v_store(y + t * c + c0, acc);
            else
                v_store_part(y + t * c + c0, acc, m);
        }
    }
}

/* ------------------------------------------------------------------------------ attention */
/* Scores of keys [j, j + m) (m <= VL): lane-split dot products over d, reduced by v_hsum_batch
 * (bit-identical to v_hsum per key), times scale. A key's score is the same whatever group it is
 * computed in. Always VL keys so the accumulators stay in registers; lanes past m repeat key j. */
V_INLINE vf att_scores(const float *q, const float *k, int64_t kstride, int64_t j, int64_t m, int64_t d, float scale) {
    const float *kr[VL];
    for (int u = 0; u < VL; u++) kr[u] = k + (j + (u < m ? u : 0)) * kstride;
    vf acc[VL];
    for (int u = 0; u < VL; u++) acc[u] = v_zero();
    int64_t t = 0;
    for (; t + VL <= d; t += VL) {
        vf qv = v_load(q + t);
#pragma GCC unroll 16
        for (int u = 0; u < VL; u++) acc[u] = v_fma(qv, v_load(kr[u] + t), acc[u]);
    }
    if (t < d) {
        vf qv = v_load_part(q + t, d - t);
#pragma GCC unroll 16
        for (int u = 0; u < VL; u++) acc[u] = v_fma(qv, v_load_part(kr[u] + t, d - t), acc[u]);
    }
    return v_mul(v_hsum_batch(acc), v_set1(scale));
}

#define ATT_SCORES 4096 /* scores kept on the stack for a group of heads (a multiple of VL) */
#define ATT_DCHUNK 8     /* output vectors per head kept in registers while sweeping the keys */
#define ATT_HEADS 8      /* heads processed together (bounded by the stack and registers) */

/* out_h (+)= sum over keys [0, nb) of p_h[j] v[j] for the heads of a group (FMA, key order): each value
 * row is loaded once for every head; d goes in register chunks. */
static void att_accumulate(const float *p, int64_t pstride, int64_t nh, const float *val, int64_t kstride, int64_t nb,
                           int64_t d, int first, float *out) {
    for (int64_t t0 = 0; t0 < d; t0 += ATT_DCHUNK * VL) {
        int64_t dc = d - t0 < ATT_DCHUNK * VL ? d - t0 : ATT_DCHUNK * VL;
        int nv = (int)((dc + VL - 1) / VL);
        int64_t tail = dc - (int64_t)(nv - 1) * VL;
        /* two heads at a time when their accumulators fit in the registers */
        int64_t hstep = VL == 16 || nv <= ATT_DCHUNK / 2 ? 2 : 1;
        for (int64_t h0 = 0; h0 < nh; h0 += hstep) {
            int64_t hh = nh - h0 < hstep ? nh - h0 : hstep;
            vf acc[2][ATT_DCHUNK];
            for (int64_t h = 0; h < hh; h++)
                for (int c = 0; c < nv; c++) {
                    const float *o = out + (h0 + h) * d + t0 + c * VL;
                    acc[h][c] = first ? v_zero() : (c == nv - 1 ? v_load_part(o, tail) : v_load(o));
                }
            for (int64_t j = 0; j < nb; j++) {
                const float *vj = val + j * kstride + t0;
                vf vv[ATT_DCHUNK];
                for (int c = 0; c < nv - 1; c++) vv[c] = v_load(vj + c * VL);
                vv[nv - 1] = tail == VL ? v_load(vj + (nv - 1) * VL) : v_load_part(vj + (nv - 1) * VL, tail);
                for (int64_t h = 0; h < hh; h++) {
                    vf pj = v_set1(p[(h0 + h) * pstride + j]);
                    for (int c = 0; c < nv; c++) acc[h][c] = v_fma(pj, vv[c], acc[h][c]);
                }
            }
            for (int64_t h = 0; h < hh; h++) {
                float *o = out + (h0 + h) * d + t0;
                for (int c = 0; c < nv - 1; c++) v_store(o + c * VL, acc[h][c]);
                v_store_part(o + (nv - 1) * VL, acc[h][nv - 1], tail);
            }
        }
    }
}

/* Up to ATT_HEADS heads sharing the keys: per head the scores, their max, the exponentials (vector
 * exp, position-independent), their sum in key order, and the weighted sum of values. Keys beyond the
 * score buffer go block by block, recomputing scores after the max pass. Every step is per (head,
 * key), so a head's result depends neither on the blocking nor on the other heads. */
static void att_heads(const float *q, int64_t nh, const float *k, const float *val, int64_t kstride, int64_t j0,
                      int64_t j1, int64_t d, float scale, float *out) {
    _Alignas(64) float s[ATT_SCORES];
    const int64_t bk = ATT_SCORES / nh / VL * VL; /* keys per block */
    const int64_t nk = j1 - j0;
    const int one_block = nk <= bk;
    float mx[ATT_HEADS], sum[ATT_HEADS];
    for (int64_t h = 0; h < nh; h++) {
        vf vmax = v_set1(-INFINITY);
        for (int64_t j = 0; j < nk; j += VL) {
            int64_t m = nk - j < VL ? nk - j : VL;
            float tmp[VL];
            v_store(tmp, att_scores(q + h * d, k, kstride, j0 + j, m, d, scale));
            if (one_block) memcpy(s + h * bk + j, tmp, sizeof(float) * (size_t)m);
            for (int64_t u = m; u < VL; u++) tmp[u] = -INFINITY;
            vmax = v_max(vmax, v_load(tmp));
        }
        mx[h] = v_hmax(vmax);
        if (!isfinite(mx[h])) mx[h] = 0.0f;
        sum[h] = 0.0f;
    }
    for (int64_t b0 = 0; b0 < nk; b0 += bk) {
        int64_t nb = nk - b0 < bk ? nk - b0 : bk;
        for (int64_t h = 0; h < nh; h++) {
            float *sh = s + h * bk;
            if (!one_block)
                for (int64_t j = 0; j < nb; j += VL) {
                    int64_t m = nb - j < VL ? nb - j : VL;
                    float tmp[VL];
                    v_store(tmp, att_scores(q + h * d, k, kstride, j0 + b0 + j, m, d, scale));
                    memcpy(sh + j, tmp, sizeof(float) * (size_t)m);
                }
            vf vmx = v_set1(mx[h]);
            VX_MAP1(sh, nb, sh, v_exp(v_sub(v, vmx)));
            float sm = sum[h];
            for (int64_t j = 0; j < nb; j++) sm += sh[j]; /* key order, as kernels.h states */
            sum[h] = sm;
        }
        att_accumulate(s, bk, nh, val + (j0 + b0) * kstride, kstride, nb, d, b0 == 0, out);
    }
    for (int64_t h = 0; h < nh; h++) {
        vf vs = v_set1(sum[h]);
        VX_MAP1(out + h * d, d, out + h * d, v_div(v, vs));
    }
}

static void e_attention_heads(const float *q, int64_t group, const float *k, const float *val, int64_t kstride, int64_t j0,
                              int64_t j1, int64_t d, float scale, float *out) {
    for (int64_t h = 0; h < group; h += ATT_HEADS) {
        int64_t nh = group - h < ATT_HEADS ? group - h : ATT_HEADS;
        att_heads(q + h * d, nh, k, val, kstride, j0, j1, d, scale, out + h * d);
    }
}

/* ------------------------------------------------------------------------------ harmonic source */
/* vx_harmonic_source VL samples at a time: the index and blend arithmetic with the same operations as
 * the scalar definition (the same bits), the sines and the tanh through simd_math.h. Lanes past the
 * end compute sample `end - 1` again (clamped indices) and are not stored. */
static void e_harmonic_source(const vx_harmonic *a, int64_t begin, int64_t end, float *y) {
    const vf scale = v_set1(a->scale), half = v_set1(0.5f), one = v_set1(1.0f), amp = v_set1(a->amp);
    const vi last = vi_set1((int32_t)(a->t2 - 1)), nh = vi_set1((int32_t)a->n_h);
    for (int64_t j0 = begin; j0 < end; j0 += VL) {
        const int64_t m = end - j0 < VL ? end - j0 : VL;
        int32_t jj[VL], fi[VL];
        const int64_t f0i = j0 / a->hop, rem = j0 % a->hop;
        for (int l = 0; l < VL; l++) {
            int64_t r = rem + (l < m ? l : m - 1), f = f0i;
            for (; r >= a->hop; r -= a->hop) f++;
            jj[l] = (int32_t)(j0 + (l < m ? l : m - 1)), fi[l] = (int32_t)f;
        }
        const vi jv = v_bits(v_load((const float *)jj));
        /* s = fma(scale, j + 0.5, -0.5) clamped at 0; i0 = (int) s; i1 = i0 + 1 below the last frame */
        vf s = v_fma(scale, v_add(v_cvt_f(jv), half), v_set1(-0.5f));
        s = v_max(s, v_zero());
        const vi i0 = v_cvtt_i(s);
        const vi i1 = vi_sel(vi_lt(i0, last), i0, vi_add(i0, vi_set1(1)));
        const vf l1 = v_sub(s, v_cvt_f(i0)), l0 = v_sub(one, l1);
        const vf f0 = v_gather(a->f0, fi);
        const vf uv = v_sel(v_gt(f0, v_set1(a->threshold)), v_zero(), one);
        const vi b0 = vi_mul(i0, nh), b1 = vi_mul(i1, nh);
        vf acc = v_set1(a->b);
        for (int64_t h = 0; h < a->n_h; h++) {
            const vi hh = vi_set1((int32_t)h);
            const vf p0 = v_gather_i(a->phase, vi_add(b0, hh)), p1 = v_gather_i(a->phase, vi_add(b1, hh));
            const vf ph = v_fma(l0, p0, v_mul(l1, p1));
            acc = v_add(acc, v_mul(v_set1(a->w[h]), v_mul(v_mul(v_sin(ph), amp), uv)));
        }
        if (a->noise) acc = v_add(acc, v_load_part(a->noise + j0, m));
        v_store_part(y + j0, v_tanh(acc), m);
    }
}

static void fill_elementwise(vx_kernels *t) {
    t->harmonic_source = e_harmonic_source;
    t->attention_heads = e_attention_heads;
    t->rms_norm = e_rms_norm;
    t->layer_norm = e_layer_norm;
    t->softmax_rows = e_softmax_rows;
    t->exp_rows = e_exp_rows;
    t->exp_rows_bf16 = e_exp_rows_bf16;
    t->add = e_add;
    t->mul = e_mul;
    t->scale_channels = e_scale_channels;
    t->add_channels = e_add_channels;
    t->silu = e_silu;
    t->silu_mul = e_silu_mul;
    t->gelu = e_gelu;
    t->elu = e_elu;
    t->relu = e_relu;
    t->tanh = e_tanh;
    t->sigmoid = e_sigmoid;
    t->snake_beta = e_snake_beta;
    t->channel_moments = e_channel_moments;
    t->clamp = e_clamp;
    t->rope = e_rope;
    t->depthwise_conv = e_depthwise_conv;
    t->im2col = e_im2col;
}

#endif
