/* The body of q3_matmul_nn's 16-bit SIMD paths, included by codec_ops_avx2.c and codec_ops_avx512.c
 * with these macros defined (on its own this file compiles to nothing):
 *   Q3_W          floats per vector (8 or 16)          Q3_FN(name)   name with the path's suffix
 *   VF            the float vector type                VZERO(), VSET1(a), VFMA(a, b, c) = a * b + c
 *   VLOADU(p), VSTOREU(p, v)                           VBF16(p), VF16(p): Q3_W 16-bit values at p
 *                                                      widened to float32
 * y[i][j] = sum over kk (in order) of x[i][kk] * w[kk][j], each step one fused multiply-add starting
 * from 0; the column tail uses fmaf, the same correctly rounded operation, so an element's value does
 * not depend on n, on the row block it falls in, or on the columns a task gets. */
#ifdef Q3_W
#include <math.h>

#define NV 4            /* vectors per column block */
#define NB (NV * Q3_W)  /* columns per block */
#define MR 4            /* rows per register block */

static inline VF load_w(const uint16_t *p, int bf) { return bf ? VBF16(p) : VF16(p); }

static inline float w_scalar(const uint16_t *p, int bf) {
    if (bf) {
        uint32_t b = (uint32_t)*p << 16;
        float f;
        memcpy(&f, &b, 4);
        return f;
    }
    return _cvtsh_ss(*p);
}

/* rows [i0, i0 + MR) of one full column block */
static inline void block_rows4(const uint16_t *w, int64_t k, int64_t m, const float *x, float *y, int64_t i0,
                               int64_t j, int bf) {
    VF acc[MR][NV];
    for (int r = 0; r < MR; r++)
        for (int v = 0; v < NV; v++) acc[r][v] = VZERO();
    const float *x0 = x + i0 * k;
    for (int64_t kk = 0; kk < k; kk++) {
        VF wv[NV];
        for (int v = 0; v < NV; v++) wv[v] = load_w(w + kk * m + j + v * Q3_W, bf);
        for (int r = 0; r < MR; r++) {
            const VF a = VSET1(x0[r * k + kk]);
            for (int v = 0; v < NV; v++) acc[r][v] = VFMA(a, wv[v], acc[r][v]);
        }
    }
    for (int r = 0; r < MR; r++)
        for (int v = 0; v < NV; v++) VSTOREU(y + (i0 + r) * m + j + v * Q3_W, acc[r][v]);
}

static inline void block_row1(const uint16_t *w, int64_t k, int64_t m, const float *x, float *y, int64_t i, int64_t j,
                              int bf) {
    VF acc[NV];
    for (int v = 0; v < NV; v++) acc[v] = VZERO();
    const float *xi = x + i * k;
    for (int64_t kk = 0; kk < k; kk++) {
        const VF a = VSET1(xi[kk]);
        for (int v = 0; v < NV; v++) acc[v] = VFMA(a, load_w(w + kk * m + j + v * Q3_W, bf), acc[v]);
    }
    for (int v = 0; v < NV; v++) VSTOREU(y + i * m + j + v * Q3_W, acc[v]);
}

/* Columns [c0, c1) of every row. */
void Q3_FN(q3_matmul_nn16)(const vx_mat *wm, const float *x, int64_t n, float *y, int64_t c0, int64_t c1) {
    const uint16_t *w = wm->data;
    const int64_t k = wm->rows, m = wm->cols;
    const int bf = wm->dtype == VOX_DTYPE_BF16;
    int64_t j = c0;
    for (; j + NB <= c1; j += NB) {
        int64_t i = 0;
        for (; i + MR <= n; i += MR) block_rows4(w, k, m, x, y, i, j, bf);
        for (; i < n; i++) block_row1(w, k, m, x, y, i, j, bf);
    }
    for (; j < c1; j++) /* column tail */
        for (int64_t i = 0; i < n; i++) {
            float acc = 0.0f;
            for (int64_t kk = 0; kk < k; kk++) acc = fmaf(x[i * k + kk], w_scalar(w + kk * m + j, bf), acc);
            y[i * m + j] = acc;
        }
}
#else
typedef int q3_codec_ops_simd_body_only; /* see the top of the file */
#endif
