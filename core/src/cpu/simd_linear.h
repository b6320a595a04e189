/* Internal: vx_linear for f32/f16/bf16 weights and vx_matmul_nn_f32 on the simd.h abstraction;
 * included once by kernels_avx2.c and kernels_avx512.c.
 *
 * linear (y = x W^T, W [rows, cols] row-major, used in place): "dot form". Output (i, r) keeps a
 * vector accumulator whose lane j sums x[i][k] * w[r][k] for k = j, j + VL, j + 2 VL, ... in order,
 * one FMA each (the last, partial vector of a row is masked: absent lanes add 0 * 0); then v_hsum's
 * fixed tree and + bias[r]. f16/bf16 weights are widened to f32 exactly (vcvtph2ps / a 16-bit shift),
 * so bf16 and f16 weights get exact f32 products, not bf16 dot products.
 * That order depends only on cols, so kernels tile freely:
 *  - GEMV (one x row): 8 weight rows at a time, each streamed once, the x vector shared;
 *  - small n: register tiles of MR x rows by NR weight rows, each weight load used MR times;
 *  - large n and long rows: K is cut in blocks of LF_KC and the vector accumulators of the task's
 *    outputs are parked in a per-thread buffer between blocks (storing and reloading a vector is
 *    exact, so the FMA sequence per lane is unchanged), which keeps a weight micro-panel in L1 and the
 *    activation block in L2. Without that buffer (out of memory) the same tiles run over whole rows.
 *
 * matmul_nn (y = x W, W [k, m]): "outer form". Output (i, c) is one FMA chain over kk = 0..k-1 in
 * order, vectorized across c (MR rows by NV vectors of columns per tile). Between K blocks the
 * partial sums live in y itself, again exactly. */
#ifndef VOX_CPU_SIMD_LINEAR_H
#define VOX_CPU_SIMD_LINEAR_H

#include "cpu/dispatch.h"
#include "cpu/scratch.h"
#include "cpu/simd.h"

#if VL == 16
#  define LF_MR 4 /* x rows per register tile */
#  define LF_NR 6 /* weight rows per register tile */
#  define NN_NV 4 /* column vectors per matmul_nn tile */
#else
#  define LF_MR 3
#  define LF_NR 4
#  define NN_NV 2
#endif
#define LF_GEMV_NR 8
#define LF_KC 1024 /* floats of a row per K block (multiple of 16) */
#define NN_MR 6
#define NN_KC 128

enum { DT_F32 = 0, DT_F16 = 1, DT_BF16 = 2 };

V_INLINE vf lf_wload(const int dt, const void *row, int64_t k) {
    if (dt == DT_F32) return v_load((const float *)row + k);
    if (dt == DT_F16) return v_load_f16((const uint16_t *)row + k);
    return v_load_bf16((const uint16_t *)row + k);
}
V_INLINE vf lf_wload_part(const int dt, const void *row, int64_t k, int64_t n) {
    if (dt == DT_F32) return v_load_part((const float *)row + k, n);
    if (dt == DT_F16) return v_load_f16_part((const uint16_t *)row + k, n);
    return v_load_bf16_part((const uint16_t *)row + k, n);
}

/* acc[i * NR + r] += x[i][k] w[r][k] over k in [k0, k1); k1 == cols takes the masked tail. */
V_INLINE void lf_ukr(const int dt, const int MR, const int NR, const float *x, int64_t ldx, const void *w,
                     size_t wrow_bytes, int64_t k0, int64_t k1, int64_t cols, vf *acc) {
    const char *wb = (const char *)w;
    int64_t kfull = k1 < cols ? k1 : k0 + ((cols - k0) / VL) * VL;
    int64_t k = k0;
    for (; k < kfull; k += VL) {
        vf xv[4];
#pragma GCC unroll 4
        for (int i = 0; i < MR; i++) xv[i] = v_load(x + i * ldx + k);
#pragma GCC unroll 8
        for (int r = 0; r < NR; r++) {
            vf wv = lf_wload(dt, wb + r * wrow_bytes, k);
#pragma GCC unroll 4
            for (int i = 0; i < MR; i++) acc[i * NR + r] = v_fma(xv[i], wv, acc[i * NR + r]);
        }
    }
    if (k1 == cols && k < cols) {
        int64_t m = cols - k;
        vf xv[4];
#pragma GCC unroll 4
        for (int i = 0; i < MR; i++) xv[i] = v_load_part(x + i * ldx + k, m);
#pragma GCC unroll 8
        for (int r = 0; r < NR; r++) {
            vf wv = lf_wload_part(dt, wb + r * wrow_bytes, k, m);
#pragma GCC unroll 4
            for (int i = 0; i < MR; i++) acc[i * NR + r] = v_fma(xv[i], wv, acc[i * NR + r]);
        }
    }
}

/* One register tile over [k0, k1): start from zero (first) or the parked accumulators, and either
 * finish (hsum + bias into y) or park them again. park == NULL: whole rows in one go. */
V_INLINE void lf_tile(const int dt, const int MR, const int NR, const float *x, int64_t ldx, const void *w,
                      size_t wrow_bytes, int64_t k0, int64_t k1, int64_t cols, vf *park, int64_t park_ld, int first,
                      int last, float *y, int64_t ldy, const float *bias) {
    vf acc[LF_GEMV_NR * 4 > LF_MR * LF_NR ? LF_GEMV_NR * 4 : LF_MR * LF_NR];
#pragma GCC unroll 4
    for (int i = 0; i < MR; i++)
#pragma GCC unroll 8
        for (int r = 0; r < NR; r++) acc[i * NR + r] = first ? v_zero() : park[i * park_ld + r];
    lf_ukr(dt, MR, NR, x, ldx, w, wrow_bytes, k0, k1, cols, acc);
#pragma GCC unroll 4
    for (int i = 0; i < MR; i++)
#pragma GCC unroll 8
        for (int r = 0; r < NR; r++) {
            if (last) {
                float s = v_hsum(acc[i * NR + r]);
                y[i * ldy + r] = bias ? s + bias[r] : s;
            } else {
                park[i * park_ld + r] = acc[i * NR + r];
            }
        }
}

/* Dispatch a tile of runtime size mr x nr (mr <= LF_MR, nr <= LF_NR) to its compiled shape. */
#define LF_TILE_ARGS x, ldx, w, wrow_bytes, k0, k1, cols, park, park_ld, first, last, y, ldy, bias
V_INLINE void lf_tile_any(const int dt, int mr, int nr, const float *x, int64_t ldx, const void *w, size_t wrow_bytes,
                          int64_t k0, int64_t k1, int64_t cols, vf *park, int64_t park_ld, int first, int last, float *y,
                          int64_t ldy, const float *bias) {
#define LF_NR_CASES(MR)                                                  \
    if (nr >= LF_NR) lf_tile(dt, MR, LF_NR, LF_TILE_ARGS);               \
    else if (nr == 5) lf_tile(dt, MR, 5 < LF_NR ? 5 : 1, LF_TILE_ARGS);  \
    else if (nr == 4) lf_tile(dt, MR, 4 < LF_NR ? 4 : 1, LF_TILE_ARGS);  \
    else if (nr == 3) lf_tile(dt, MR, 3, LF_TILE_ARGS);                  \
    else if (nr == 2) lf_tile(dt, MR, 2, LF_TILE_ARGS);                  \
    else lf_tile(dt, MR, 1, LF_TILE_ARGS);
    switch (mr) {
    case 4: LF_NR_CASES(4) break;
    case 3: LF_NR_CASES(3) break;
    case 2: LF_NR_CASES(2) break;
    default: LF_NR_CASES(1) break;
    }
#undef LF_NR_CASES
}

V_INLINE void lf_range(const int dt, const vx_mat *w, const float *bias, const float *x, float *y, int64_t i0, int64_t i1,
                       int64_t r0, int64_t r1) {
    const int64_t cols = w->cols, rows = w->rows;
    const size_t esz = dt == DT_F32 ? 4 : 2, wrow = (size_t)cols * esz;
    const char *wd = (const char *)w->data;
    const int64_t ni = i1 - i0, nr = r1 - r0;

    if (ni == 1) { /* GEMV: 8 weight rows stream together, then 4, 2, 1 for the rest */
        const float *xi = x + i0 * cols;
        float *yi = y + i0 * rows;
        int64_t r = r0;
        for (; r + LF_GEMV_NR <= r1; r += LF_GEMV_NR)
            lf_tile(dt, 1, LF_GEMV_NR, xi, cols, wd + r * wrow, wrow, 0, cols, cols, NULL, 0, 1, 1, yi + r, rows,
                    bias ? bias + r : NULL);
        for (; r + 4 <= r1; r += 4)
            lf_tile(dt, 1, 4, xi, cols, wd + r * wrow, wrow, 0, cols, cols, NULL, 0, 1, 1, yi + r, rows, bias ? bias + r : NULL);
        for (; r < r1; r++)
            lf_tile(dt, 1, 1, xi, cols, wd + r * wrow, wrow, 0, cols, cols, NULL, 0, 1, 1, yi + r, rows, bias ? bias + r : NULL);
        return;
    }
    /* Several x rows: K blocks with parked accumulators when the rows are long and there are enough x
     * rows to reuse each weight block; otherwise whole rows per tile. */
    vf *park = NULL;
    int64_t kc = cols;
    if (cols > LF_KC && ni > LF_MR) {
        park = vx_scratch(VX_SLOT_TILE, sizeof(vf) * (size_t)(ni * nr));
        if (park) kc = LF_KC;
    }
    for (int64_t k0 = 0; k0 < cols; k0 += kc) {
        int64_t k1 = cols - k0 > kc ? k0 + kc : cols;
        int first = k0 == 0, last = k1 == cols;
        for (int64_t r = r0; r < r1; r += LF_NR) {
            int nrr = (int)(r1 - r < LF_NR ? r1 - r : LF_NR);
            for (int64_t i = i0; i < i1; i += LF_MR) {
                int mr = (int)(i1 - i < LF_MR ? i1 - i : LF_MR);
                vf *pk = park ? park + (i - i0) * nr + (r - r0) : NULL;
                lf_tile_any(dt, mr, nrr, x + i * cols, cols, wd + r * wrow, wrow, k0, k1, cols, pk, nr, first, last,
                            y + i * rows + r, rows, bias ? bias + r : NULL);
            }
        }
    }
}

static void lf_linear_float(const vx_mat *w, const float *bias, const float *x, float *y, int64_t i0, int64_t i1,
                            int64_t r0, int64_t r1) {
    switch (w->dtype) {
    case VOX_DTYPE_F32: lf_range(DT_F32, w, bias, x, y, i0, i1, r0, r1); break;
    case VOX_DTYPE_F16: lf_range(DT_F16, w, bias, x, y, i0, i1, r0, r1); break;
    case VOX_DTYPE_BF16: lf_range(DT_BF16, w, bias, x, y, i0, i1, r0, r1); break;
    default: break;
    }
}

/* ------------------------------------------------------------------------------ matmul_nn */
/* y[i][c..] over kk in [k0, k1) for MR rows and NV column vectors (the last one masked to `tail`
 * columns when tail < VL). */
V_INLINE void nn_tile(const int MR, const int NV, const float *w, int64_t m, const float *x, int64_t k, float *y,
                      int64_t k0, int64_t k1, int first, int64_t tail) {
    vf acc[NN_MR * NN_NV];
#pragma GCC unroll 6
    for (int i = 0; i < MR; i++)
#pragma GCC unroll 4
        for (int v = 0; v < NV; v++) {
            if (first) acc[i * NV + v] = v_zero();
            else acc[i * NV + v] = v == NV - 1 && tail < VL ? v_load_part(y + i * m + v * VL, tail) : v_load(y + i * m + v * VL);
        }
    for (int64_t kk = k0; kk < k1; kk++) {
        const float *wr = w + kk * m;
        vf wv[NN_NV];
#pragma GCC unroll 4
        for (int v = 0; v < NV; v++) wv[v] = v == NV - 1 && tail < VL ? v_load_part(wr + v * VL, tail) : v_load(wr + v * VL);
#pragma GCC unroll 6
        for (int i = 0; i < MR; i++) {
            vf xb = v_set1(x[i * k + kk]);
#pragma GCC unroll 4
            for (int v = 0; v < NV; v++) acc[i * NV + v] = v_fma(xb, wv[v], acc[i * NV + v]);
        }
    }
#pragma GCC unroll 6
    for (int i = 0; i < MR; i++)
#pragma GCC unroll 4
        for (int v = 0; v < NV; v++) {
            if (v == NV - 1 && tail < VL) v_store_part(y + i * m + v * VL, acc[i * NV + v], tail);
            else v_store(y + i * m + v * VL, acc[i * NV + v]);
        }
}

V_INLINE void nn_tile_any(int mr, int nv, const float *w, int64_t m, const float *x, int64_t k, float *y, int64_t k0,
                          int64_t k1, int first, int64_t tail) {
#define NN_NV_CASES(MR)                                                                   \
    if (nv >= NN_NV) nn_tile(MR, NN_NV, w, m, x, k, y, k0, k1, first, tail);             \
    else if (nv == 3) nn_tile(MR, 3 < NN_NV ? 3 : 1, w, m, x, k, y, k0, k1, first, tail); \
    else if (nv == 2) nn_tile(MR, 2 < NN_NV ? 2 : 1, w, m, x, k, y, k0, k1, first, tail); \
    else nn_tile(MR, 1, w, m, x, k, y, k0, k1, first, tail);
    switch (mr) {
    case 6: NN_NV_CASES(6) break;
    case 5: NN_NV_CASES(5) break;
    case 4: NN_NV_CASES(4) break;
    case 3: NN_NV_CASES(3) break;
    case 2: NN_NV_CASES(2) break;
    default: NN_NV_CASES(1) break;
    }
#undef NN_NV_CASES
}

static void nn_matmul(const float *w, int64_t k, int64_t m, const float *x, float *y, int64_t i0, int64_t i1, int64_t c0,
                      int64_t c1) {
    if (k == 0) {
        for (int64_t i = i0; i < i1; i++)
            for (int64_t c = c0; c < c1; c++) y[i * m + c] = 0.0f;
        return;
    }
    for (int64_t k0 = 0; k0 < k; k0 += NN_KC) {
        int64_t k1 = k - k0 > NN_KC ? k0 + NN_KC : k;
        for (int64_t c = c0; c < c1; c += NN_NV * VL) {
            int64_t cw = c1 - c < NN_NV * VL ? c1 - c : NN_NV * VL;
            int nv = (int)((cw + VL - 1) / VL);
            int64_t tail = cw - (int64_t)(nv - 1) * VL;
            for (int64_t i = i0; i < i1; i += NN_MR) {
                int mr = (int)(i1 - i < NN_MR ? i1 - i : NN_MR);
                nn_tile_any(mr, nv, w + c, m, x + i * k, k, y + i * m + c, k0, k1, k0 == 0, tail);
            }
        }
    }
}

static void fill_linear(vx_kernels *t) {
    t->linear_float = lf_linear_float;
    t->matmul_nn = nn_matmul;
}

#endif
