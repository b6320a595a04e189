/* Internal: vx_linear for q8/q4 weights on aarch64, int8 activations; included by linear_q_neon.c
 * (Q_DOT 0: smull + pairwise adds, any aarch64) and linear_q_neon_dotprod.c (Q_DOT 1: sdot). Both
 * compute the same exact int32 lane sums, so they give the same bits.
 *
 * The function of dispatch.h (as the x86 kernels, with 4 lanes): lane l of a 32-block holds the exact
 * partial sum of the products of elements 4l .. 4l + 3 and 16 + 4l .. 16 + 4l + 3 (sdot's lanes over
 * the block's two 16-byte halves; without sdot, smull products paired into int16, |2 * 127 * 127| <
 * 32768, then pairwise widened into int32), converted to float, times sw * d, accumulated lane by lane
 * with FMA in block order; then v_hsum's fixed tree and + bias.
 * q4: byte j of a block holds element j in its low nibble and element 16 + j in its high one
 * (docs/formats.md); nibble - 8 fits int8, so the weights are signed bytes as q8's and no correction
 * is needed.
 *
 * Activation row (64-byte aligned pieces, P = cols rounded up to 64): int8 q[P] | float d[nb]; the
 * same for q8 and q4. Quantized by vx_quantize_block_q8 itself (the definition, so the codes are
 * those of every path). */
#ifndef Q_DOT
#  error "define Q_DOT (0 or 1) and Q_INIT before including linear_q_neon.h"
#endif
#define VX_SIMD_WIDTH 4
#include <string.h>

#include "cpu/dispatch.h"
#include "cpu/simd.h"

#define Q_MR 4 /* x rows per tile */
#define Q_NR 4 /* weight rows per tile */

static size_t pad64(size_t b) { return (b + 63) & ~(size_t)63; }

static size_t qact_row_bytes(int64_t cols, vox_dtype wtype) {
    (void)wtype;
    return pad64((size_t)cols) + pad64((size_t)cols / 32 * sizeof(float));
}

static void qact_quantize(const float *x, int64_t cols, vox_dtype wtype, void *row) {
    (void)wtype;
    int8_t *q = row;
    float *d = (float *)((unsigned char *)row + pad64((size_t)cols));
    for (int64_t b = 0; b < cols / 32; b++) d[b] = vx_quantize_block_q8(x + 32 * b, q + 32 * b);
}

/* The lane sums of 16 products w[j] x[j] (lane l: j = 4l .. 4l + 3) added to acc. */
V_INLINE int32x4_t q_dot16(int32x4_t acc, int8x16_t w, int8x16_t x) {
#if Q_DOT
    return vdotq_s32(acc, w, x);
#else
    const int16x8_t p = vpaddq_s16(vmull_s8(vget_low_s8(w), vget_low_s8(x)), vmull_high_s8(w, x));
    return vpadalq_s16(acc, p);
#endif
}

typedef struct qargs {
    const unsigned char *w; /* the tile's first weight row */
    const float *sw;        /* its block scales */
    int64_t nb;
    size_t wrow, srow;
    const unsigned char *xa; /* the tile's first activation row */
    size_t xrow, dx_off;
    float *y;
    int64_t ldy;
    const float *bias;
} qargs;

/* MR x rows by NR weight rows; Q4: the weight's dtype */
V_INLINE void q_tile(const int Q4, const int MR, const int NR, const qargs *a) {
    vf acc[Q_MR * Q_NR];
#pragma GCC unroll 16
    for (int t = 0; t < MR * NR; t++) acc[t] = v_zero();
    for (int64_t b = 0; b < a->nb; b++) {
        int8x16_t x0[Q_MR], x1[Q_MR];
        float dx[Q_MR];
#pragma GCC unroll 4
        for (int i = 0; i < MR; i++) {
            const unsigned char *xr = a->xa + i * a->xrow;
            x0[i] = vld1q_s8((const int8_t *)xr + 32 * b);
            x1[i] = vld1q_s8((const int8_t *)xr + 32 * b + 16);
            dx[i] = ((const float *)(xr + a->dx_off))[b];
        }
#pragma GCC unroll 4
        for (int r = 0; r < NR; r++) {
            int8x16_t w0, w1;
            if (Q4) {
                const uint8x16_t wv = vld1q_u8(a->w + r * a->wrow + 16 * b);
                const int8x16_t eight = vdupq_n_s8(8);
                w0 = vsubq_s8(vreinterpretq_s8_u8(vandq_u8(wv, vdupq_n_u8(0x0f))), eight);
                w1 = vsubq_s8(vreinterpretq_s8_u8(vshrq_n_u8(wv, 4)), eight);
            } else {
                w0 = vld1q_s8((const int8_t *)a->w + r * a->wrow + 32 * b);
                w1 = vld1q_s8((const int8_t *)a->w + r * a->wrow + 32 * b + 16);
            }
            const float sw = a->sw[r * a->srow + b];
#pragma GCC unroll 4
            for (int i = 0; i < MR; i++) {
                const int32x4_t p = q_dot16(q_dot16(vdupq_n_s32(0), w0, x0[i]), w1, x1[i]);
                acc[i * NR + r] = v_fma(v_cvt_f(p), v_set1(sw * dx[i]), acc[i * NR + r]);
            }
        }
    }
#pragma GCC unroll 4
    for (int i = 0; i < MR; i++)
#pragma GCC unroll 4
        for (int r = 0; r < NR; r++) {
            const float s = v_hsum(acc[i * NR + r]);
            a->y[i * a->ldy + r] = a->bias ? s + a->bias[r] : s;
        }
}

#define Q_CASE(Q4, M, N) \
    case (M) * 8 + (N): q_tile(Q4, M, N, a); break;
#define Q_ROWS(Q4, M) Q_CASE(Q4, M, 1) Q_CASE(Q4, M, 2) Q_CASE(Q4, M, 3) Q_CASE(Q4, M, 4)
static void q8_any(int mr, int nr, const qargs *a) {
    switch (mr * 8 + nr) { Q_ROWS(0, 1) Q_ROWS(0, 2) Q_ROWS(0, 3) Q_ROWS(0, 4) default: break; }
}
static void q4_any(int mr, int nr, const qargs *a) {
    switch (mr * 8 + nr) { Q_ROWS(1, 1) Q_ROWS(1, 2) Q_ROWS(1, 3) Q_ROWS(1, 4) default: break; }
}
#undef Q_ROWS
#undef Q_CASE

static void linear_quant(const vx_mat *w, const float *bias, const void *qact, size_t row_bytes, float *y, int64_t i0,
                         int64_t i1, int64_t r0, int64_t r1) {
    const int q4 = w->dtype == VOX_DTYPE_Q4;
    const int64_t cols = w->cols, nb = cols / 32, rows = w->rows;
    const size_t wrow = q4 ? (size_t)cols / 2 : (size_t)cols;
    qargs a = {.nb = nb, .wrow = wrow, .srow = (size_t)nb, .xrow = row_bytes, .dx_off = pad64((size_t)cols),
               .ldy = rows};
    for (int64_t r = r0; r < r1; r += Q_NR) {
        const int nr = (int)(r1 - r < Q_NR ? r1 - r : Q_NR);
        a.w = (const unsigned char *)w->data + (size_t)r * wrow;
        a.sw = w->scales + r * nb;
        a.bias = bias ? bias + r : NULL;
        if (r + Q_NR < r1) v_prefetch(a.w + (size_t)Q_NR * wrow); /* the next tile's first row */
        for (int64_t i = i0; i < i1; i += Q_MR) {
            const int mr = (int)(i1 - i < Q_MR ? i1 - i : Q_MR);
            a.xa = (const unsigned char *)qact + (size_t)i * row_bytes;
            a.y = y + i * rows + r;
            if (q4) q4_any(mr, nr, &a);
            else q8_any(mr, nr, &a);
        }
    }
}

/* Streamed products (n_x <= VX_STREAM_MAX_X = Q_MR rows): every tile holds all the x rows, so each
 * weight row is read once; part by part. */
static void gemv_quant(const vx_kernels *k, const vx_gemv_part *parts, int n_parts, const void *qact, size_t row_bytes,
                       int64_t n_x) {
    (void)k;
    for (int p = 0; p < n_parts; p++)
        linear_quant(parts[p].w, parts[p].bias, qact, row_bytes, parts[p].y, 0, n_x, parts[p].r0, parts[p].r1);
}

void Q_INIT(vx_kernels *t) {
    t->qact_row_bytes = qact_row_bytes;
    t->qact_quantize = qact_quantize;
    t->linear_quant = linear_quant;
    t->gemv_quant = gemv_quant;
}
