/* Internal: vx_linear and vx_matmul_nn_f32 on the simd.h abstraction; included once by kernels_avx2.c
 * and kernels_avx512.c.
 *
 * Two fixed orders of operations, chosen by the weight's dtype (never by n):
 *
 * f32 weights, "column order": output (i, r) is ONE FMA chain over k = 0, 1, ..., cols-1 in order,
 * y = fma(x[i][k], w[r][k], y) starting from 0, then + bias[r]; vectorized across r. This is the
 * order of a classic register-blocked GEMM, which runs near the FMA peak:
 *  - GEMM (n >= 2): per K block, a panel of LC_NR weight rows is transposed into [k][r] (packed once,
 *    reused by every x row of the task), and tiles of LC_MR x rows by LC_NR weight rows accumulate with
 *    broadcast x values; partial sums live in y between K blocks (storing and reloading a float is
 *    exact, so the chain is unchanged);
 *  - GEMV (n = 1): 16 x 16 (AVX2: 8 x 8) blocks of W are transposed in registers on the fly, two row
 *    groups interleaved so two FMA chains overlap; the transposes cost ~4 floats/cycle, well above
 *    the memory rate of f32 weights.
 *
 * f16/bf16 weights, "dot order": output (i, r) keeps a vector accumulator whose lane j sums
 * x[i][k] * w[r][k] for k = j, j + VL, j + 2 VL, ... in order, one FMA each (the last, partial vector
 * of a row is masked: absent lanes add 0 * 0); then v_hsum's fixed tree and + bias[r]. Weights are
 * widened to f32 exactly (vcvtph2ps / a 16-bit shift), so bf16 and f16 weights get exact f32 products,
 * not bf16 dot products. Used because GEMV on 2-byte weights must stay memory-bound (no transposes):
 *  - GEMV (one x row): 8 weight rows at a time, each streamed once, the x vector shared;
 *  - small n: register tiles of MR x rows by NR weight rows, each weight load used MR times;
 *  - large n and long rows: K is cut in blocks of LF_KC and the vector accumulators of the task's
 *    outputs are parked in a per-thread buffer between blocks (exact, as above).
 *
 * Streamed products (GEMV and up to VX_STREAM_MAX_X x rows, lf_stream / lc_gemv) prefetch the next
 * tile of rows in address order while the current one is multiplied: rows are short and read several
 * at a time, which hardware prefetchers pick up too late (and a row-interleaved prefetch order streams
 * at half the bandwidth).
 *
 * matmul_nn (y = x W, W [k, m] in f32, f16 or bf16): column order too (one FMA chain over kk in order,
 * vectorized across c, 16-bit weights widened exactly); W is already [k][m], so tiles read it directly,
 * partial sums in y between K blocks. */
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
#ifndef LF_GEMV_NR
#  define LF_GEMV_NR 8
#endif
#ifndef LF_STREAM_NR
#  define LF_STREAM_NR 2 /* weight rows per streaming tile: from DRAM 2 (a 4 KB tile of 1024 bf16
                          * columns) streams ~5% faster than 4 and ~9% faster than 8 */
#endif
/* GEMV look-ahead (see linear_q_avx512.c): the next tile's bytes, sequentially, a tile ahead. */
#if !defined(VX_GEMV_HINT) && VL != 4
#  define VX_GEMV_HINT _MM_HINT_T0
#endif
#ifndef LF_KC
#  define LF_KC 1024 /* floats of a row per K block (multiple of 16) */
#endif
#define NN_MR 6
#ifndef NN_KC
#  define NN_KC 128
#endif

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

/* acc[i * NR + r] += x[i][k] w[r][k] over k in [k0, k1); k1 == cols takes the masked tail. PF
 * (streaming, whole rows from k0 = 0): prefetch the next tile's bytes pw sequentially, NR * VL
 * weights' worth per step (a tile ahead, as linear_q_avx512.c). */
V_INLINE void lf_ukr(const int dt, const int MR, const int NR, const int PF, const float *x, int64_t ldx, const void *w,
                     size_t wrow_bytes, int64_t k0, int64_t k1, int64_t cols, vf *acc, const char *pw) {
    const char *wb = (const char *)w;
    const int esz = dt == DT_F32 ? 4 : 2, lines = NR * VL * esz / 64 > 0 ? NR * VL * esz / 64 : 1;
    int64_t kfull = k1 < cols ? k1 : k0 + ((cols - k0) / VL) * VL;
    int64_t k = k0;
    for (; k < kfull; k += VL) {
        vf xv[4];
#pragma GCC unroll 4
        for (int i = 0; i < MR; i++) xv[i] = v_load(x + i * ldx + k);
#pragma GCC unroll 8
        for (int r = 0; r < NR; r++) {
            if (PF && r < lines) v_prefetch(pw + (size_t)(k / VL) * NR * VL * esz + r * 64);
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
V_INLINE void lf_tile_pf(const int dt, const int MR, const int NR, const int PF, const float *x, int64_t ldx,
                         const void *w, size_t wrow_bytes, int64_t k0, int64_t k1, int64_t cols, vf *park,
                         int64_t park_ld, int first, int last, float *y, int64_t ldy, const float *bias, const char *pw) {
    vf acc[LF_GEMV_NR * 4 > LF_MR * LF_NR ? LF_GEMV_NR * 4 : LF_MR * LF_NR];
#pragma GCC unroll 4
    for (int i = 0; i < MR; i++)
#pragma GCC unroll 8
        for (int r = 0; r < NR; r++) acc[i * NR + r] = first ? v_zero() : park[i * park_ld + r];
    lf_ukr(dt, MR, NR, PF, x, ldx, w, wrow_bytes, k0, k1, cols, acc, pw);
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

V_INLINE void lf_tile(const int dt, const int MR, const int NR, const float *x, int64_t ldx, const void *w,
                      size_t wrow_bytes, int64_t k0, int64_t k1, int64_t cols, vf *park, int64_t park_ld, int first,
                      int last, float *y, int64_t ldy, const float *bias) {
    lf_tile_pf(dt, MR, NR, 0, x, ldx, w, wrow_bytes, k0, k1, cols, park, park_ld, first, last, y, ldy, bias, NULL);
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

/* Streaming (f16/bf16; GEMV and up to VX_STREAM_MAX_X x rows): tiles of all the x rows by
 * LF_STREAM_NR weight rows (then single rows), each prefetching the next tile
 * (the next part's first after a part's last); the first tile is prefetched in a burst. */
static void lf_stream_tile(const int dt, int mr, int nr, const float *x, int64_t cols, const char *w, size_t wrow,
                           float *y, int64_t ldy, const float *bias, const char *pw) {
#define LF_ST(MR, NR) lf_tile_pf(dt, MR, NR, 1, x, cols, w, wrow, 0, cols, cols, NULL, 0, 1, 1, y, ldy, bias, pw)
    const int full = nr == LF_STREAM_NR;
    switch (mr) {
    case 1: if (full) LF_ST(1, LF_STREAM_NR); else LF_ST(1, 1); break;
    case 2: if (full) LF_ST(2, LF_STREAM_NR); else LF_ST(2, 1); break;
    case 3: if (full) LF_ST(3, LF_STREAM_NR); else LF_ST(3, 1); break;
    default: if (full) LF_ST(4, LF_STREAM_NR); else LF_ST(4, 1); break;
    }
#undef LF_ST
}

static void lf_stream(const int dt, const vx_gemv_part *parts, int n_parts, const float *x, int64_t n_x) {
    const int mr = (int)n_x, NR = LF_STREAM_NR;
    for (int p = 0; p < n_parts; p++) {
        const vx_mat *w = parts[p].w;
        const int64_t cols = w->cols, r0 = parts[p].r0, r1 = parts[p].r1;
        const size_t wrow = (size_t)cols * 2;
        const char *wd = (const char *)w->data;
        if (r0 >= r1) continue;
        if (p == 0) {
            const size_t nb = (size_t)(r1 - r0 < NR ? r1 - r0 : NR) * wrow;
            for (size_t o = 0; o < nb; o += 64) v_prefetch(wd + (size_t)r0 * wrow + o);
        }
        for (int64_t r = r0; r < r1;) {
            const int nr = r1 - r >= NR ? NR : 1;
            const char *wt = wd + (size_t)r * wrow, *pw;
            if (r + nr < r1) pw = wt + (size_t)nr * wrow;
            else if (p + 1 < n_parts) pw = (const char *)parts[p + 1].w->data + (size_t)parts[p + 1].r0 * wrow;
            else if (r1 < w->rows) pw = wd + (size_t)r1 * wrow; /* the pool's next chunk for this thread */
            else pw = wt; /* nothing more: this tile (in cache) */
            lf_stream_tile(dt, mr, nr, x, cols, wt, wrow, parts[p].y + r, w->rows, parts[p].bias ? parts[p].bias + r : NULL, pw);
            r += nr;
        }
    }
}

V_INLINE void lf_range(const int dt, const vx_mat *w, const float *bias, const float *x, float *y, int64_t i0, int64_t i1,
                       int64_t r0, int64_t r1) {
    const int64_t cols = w->cols, rows = w->rows;
    const size_t esz = dt == DT_F32 ? 4 : 2, wrow = (size_t)cols * esz;
    const char *wd = (const char *)w->data;
    const int64_t ni = i1 - i0, nr = r1 - r0;

    if (ni == 1) { /* GEMV: streamed */
        vx_gemv_part part = {w, bias, y + i0 * rows, r0, r1};
        lf_stream(dt, &part, 1, x + i0 * cols, 1);
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

/* ------------------------------------------------------------------------------ f32: column order */
#if VL == 16
#  define LC_NV 4 /* weight-row vectors per GEMM tile: LC_NR = 64 rows */
#elif VL == 4
#  define LC_NV 4 /* NEON: 16 rows (24 accumulators of its 32 registers) */
#else
#  define LC_NV 2 /* 16 rows */
#endif
#define LC_NR (LC_NV * VL)
#define LC_MR 6
#ifndef LC_KC
#  define LC_KC 128 /* the packed panel (LC_KC x LC_NR floats) stays in L1 */
#endif

/* P[kk][LC_NR] = w[r + j][k0 + kk] for j < nr (0 beyond), kk < kn. */
static void lc_pack(const float *w, int64_t cols, int64_t r, int64_t nr, int64_t k0, int64_t kn, float *P) {
    for (int64_t j0 = 0; j0 < LC_NR; j0 += VL) {
        for (int64_t kk = 0; kk < kn; kk += VL) {
            int64_t kv = kn - kk < VL ? kn - kk : VL;
            vf t[VL];
            for (int u = 0; u < VL; u++) {
                const float *src = w + (r + j0 + u) * cols + k0 + kk;
                t[u] = j0 + u >= nr ? v_zero() : kv == VL ? v_load(src) : v_load_part(src, kv);
            }
            v_transpose(t);
            for (int64_t c = 0; c < kv; c++) v_store(P + (kk + c) * LC_NR + j0, t[c]);
        }
    }
}

/* y[i][0..nr) (+)= sum over kk < kn of x[i][kk] P[kk][..] for MR rows; first: start from 0, else from
 * the partial sums in y; last: add the bias. off (a convolution read in place, lc_conv): x[i][kk] is
 * x[i * ldx + off[kk]] instead of x[i * ldx + kk]. */
V_INLINE void lc_tile(const int MR, const int NV, const float *x, int64_t ldx, const int32_t *off, const float *P,
                      int64_t kn, float *y, int64_t ldy, int64_t nr, int first, int last, const float *bias) {
    vf acc[LC_MR][LC_NV];
#pragma GCC unroll 6
    for (int i = 0; i < MR; i++)
#pragma GCC unroll 4
        for (int v = 0; v < NV; v++) {
            int64_t cnt = nr - v * VL;
            const float *src = y + i * ldy + v * VL;
            acc[i][v] = first || cnt <= 0 ? v_zero() : cnt >= VL ? v_load(src) : v_load_part(src, cnt);
        }
    for (int64_t kk = 0; kk < kn; kk++) {
        vf wv[LC_NV];
#pragma GCC unroll 4
        for (int v = 0; v < NV; v++) wv[v] = v_load(P + kk * LC_NR + v * VL);
        const int64_t xo = off ? off[kk] : kk;
#pragma GCC unroll 6
        for (int i = 0; i < MR; i++) {
            vf xb = v_set1(x[i * ldx + xo]);
#pragma GCC unroll 4
            for (int v = 0; v < NV; v++) acc[i][v] = v_fma(xb, wv[v], acc[i][v]);
        }
    }
#pragma GCC unroll 4
    for (int v = 0; v < NV; v++) {
        int64_t cnt = nr - v * VL;
        if (cnt <= 0) break;
        vf b = v_zero();
        if (last && bias) b = cnt >= VL ? v_load(bias + v * VL) : v_load_part(bias + v * VL, cnt);
#pragma GCC unroll 6
        for (int i = 0; i < MR; i++) {
            vf o = last && bias ? v_add(acc[i][v], b) : acc[i][v];
            if (cnt >= VL) v_store(y + i * ldy + v * VL, o);
            else v_store_part(y + i * ldy + v * VL, o, cnt);
        }
    }
}

V_INLINE void lc_tile_any(int mr, int nv, const float *x, int64_t ldx, const int32_t *off, const float *P, int64_t kn,
                          float *y, int64_t ldy, int64_t nr, int first, int last, const float *bias) {
#define LC_NV_CASES(MR)                                                                                   \
    if (nv >= LC_NV) lc_tile(MR, LC_NV, x, ldx, off, P, kn, y, ldy, nr, first, last, bias);                \
    else if (nv == 3) lc_tile(MR, 3 < LC_NV ? 3 : 1, x, ldx, off, P, kn, y, ldy, nr, first, last, bias);   \
    else if (nv == 2) lc_tile(MR, 2 < LC_NV ? 2 : 1, x, ldx, off, P, kn, y, ldy, nr, first, last, bias);   \
    else lc_tile(MR, 1, x, ldx, off, P, kn, y, ldy, nr, first, last, bias);
    switch (mr) {
    case 6: LC_NV_CASES(6) break;
    case 5: LC_NV_CASES(5) break;
    case 4: LC_NV_CASES(4) break;
    case 3: LC_NV_CASES(3) break;
    case 2: LC_NV_CASES(2) break;
    default: LC_NV_CASES(1) break;
    }
#undef LC_NV_CASES
}

/* Loop nest: for each group of LC_NR weight rows and each K block, pack the group's panel (it stays in
 * L1) and run every LC_MR-row micro-panel of x against it: the broadcast operand x is cheap to stream
 * (a few bytes per cycle), while the vector operand must come from L1. */
static void lc_gemm(const vx_mat *w, const float *bias, const float *x, float *y, int64_t i0, int64_t i1, int64_t r0,
                    int64_t r1) {
    const int64_t cols = w->cols, rows = w->rows;
    const float *wd = (const float *)w->data;
    _Alignas(64) float P[LC_KC * LC_NR];
    for (int64_t r = r0; r < r1; r += LC_NR) {
        int64_t nr = r1 - r < LC_NR ? r1 - r : LC_NR;
        int nv = (int)((nr + VL - 1) / VL); /* a tail group computes only the vectors it has */
        for (int64_t k0 = 0; k0 < cols; k0 += LC_KC) {
            int64_t kn = cols - k0 < LC_KC ? cols - k0 : LC_KC;
            int first = k0 == 0, last = k0 + kn == cols;
            lc_pack(wd, cols, r, nr, k0, kn, P);
            for (int64_t i = i0; i < i1; i += LC_MR) {
                int mr = (int)(i1 - i < LC_MR ? i1 - i : LC_MR);
                lc_tile_any(mr, nv, x + i * cols + k0, cols, NULL, P, kn, y + i * rows + r, rows, nr, first, last,
                            bias ? bias + r : NULL);
            }
        }
    }
}

/* The convolution read in place (vx_conv1d_f32): lc_gemm with the column k = ci * taps + j of output
 * row i read from input row i * stride + j * dil, channel ci, so every output is the same FMA chain as im2col
 * + lc_gemm (the same bits) without the column buffer. */
static void lc_conv(const vx_mat *w, int64_t c_in, int64_t taps, int64_t dil, int64_t stride, const float *bias,
                    const float *x, float *y, int64_t i0, int64_t i1, int64_t r0, int64_t r1) {
    const int64_t cols = w->cols, rows = w->rows;
    const float *wd = (const float *)w->data;
    _Alignas(64) float P[LC_KC * LC_NR];
    int32_t off[LC_KC];
    for (int64_t r = r0; r < r1; r += LC_NR) {
        int64_t nr = r1 - r < LC_NR ? r1 - r : LC_NR;
        int nv = (int)((nr + VL - 1) / VL);
        for (int64_t k0 = 0; k0 < cols; k0 += LC_KC) {
            const int64_t kn = cols - k0 < LC_KC ? cols - k0 : LC_KC;
            for (int64_t kk = 0; kk < kn; kk++) {
                const int64_t k = k0 + kk;
                off[kk] = (int32_t)((k % taps) * dil * c_in + k / taps);
            }
            lc_pack(wd, cols, r, nr, k0, kn, P);
            for (int64_t i = i0; i < i1; i += LC_MR) {
                int mr = (int)(i1 - i < LC_MR ? i1 - i : LC_MR);
                lc_tile_any(mr, nv, x + i * stride * c_in, stride * c_in, off, P, kn, y + i * rows + r, rows, nr, k0 == 0,
                            k0 + kn == cols, bias ? bias + r : NULL);
            }
        }
    }
}

/* One group of VL weight rows (row pointers rp, clamped to valid rows) over k in [k, k + kv):
 * transpose the block and continue the group's FMA chain. */
V_INLINE vf lc_gemv_block(const float *const *rp, const float *x, int64_t k, int64_t kv, vf acc) {
    vf t[VL];
    if (kv == VL) {
#pragma GCC unroll 16
        for (int u = 0; u < VL; u++) t[u] = v_load(rp[u] + k);
        v_transpose(t);
#pragma GCC unroll 16
        for (int c = 0; c < VL; c++) acc = v_fma(v_set1(x[k + c]), t[c], acc);
    } else {
        for (int u = 0; u < VL; u++) t[u] = v_load_part(rp[u] + k, kv);
        v_transpose(t);
        for (int64_t c = 0; c < kv; c++) acc = v_fma(v_set1(x[k + c]), t[c], acc);
    }
    return acc;
}

static void lc_gemv(const vx_mat *w, const float *bias, const float *x, float *y, int64_t r0, int64_t r1) {
    const int64_t cols = w->cols;
    const float *wd = (const float *)w->data;
    for (int64_t r = r0; r < r1; r += 2 * VL) {
        int64_t nr = r1 - r < 2 * VL ? r1 - r : 2 * VL;
        const float *rp[2 * VL];
        for (int u = 0; u < 2 * VL; u++) rp[u] = wd + (r + (u < nr ? u : nr - 1)) * cols;
        vf acc0 = v_zero(), acc1 = v_zero();
        /* the next group's rows, sequentially: 2 VL lines per step (a group ahead) */
        const char *pw = (const char *)(wd + (r + 2 * VL < r1 ? r + 2 * VL : r) * cols);
        for (int64_t k = 0; k < cols; k += VL) {
            int64_t kv = cols - k < VL ? cols - k : VL;
            for (int u = 0; u < 2 * VL; u++) v_prefetch(pw + (k / VL * 2 * VL + u) * 64);
            acc0 = lc_gemv_block(rp, x, k, kv, acc0);
            if (nr > VL) acc1 = lc_gemv_block(rp + VL, x, k, kv, acc1);
        }
        for (int g = 0; g < 2; g++) {
            int64_t cnt = nr - g * VL;
            if (cnt <= 0) break;
            vf o = g ? acc1 : acc0;
            if (bias) o = v_add(o, cnt >= VL ? v_load(bias + r + g * VL) : v_load_part(bias + r + g * VL, cnt));
            if (cnt >= VL) v_store(y + r + g * VL, o);
            else v_store_part(y + r + g * VL, o, cnt);
        }
    }
}

static void lf_linear_float(const vx_mat *w, const float *bias, const float *x, float *y, int64_t i0, int64_t i1,
                            int64_t r0, int64_t r1) {
    switch (w->dtype) {
    case VOX_DTYPE_F32:
        if (i1 - i0 == 1) lc_gemv(w, bias, x + i0 * w->cols, y + i0 * w->rows, r0, r1);
        else lc_gemm(w, bias, x, y, i0, i1, r0, r1);
        break;
    case VOX_DTYPE_F16: lf_range(DT_F16, w, bias, x, y, i0, i1, r0, r1); break;
    case VOX_DTYPE_BF16: lf_range(DT_BF16, w, bias, x, y, i0, i1, r0, r1); break;
    default: break;
    }
}

/* ------------------------------------------------------------------------------ matmul_nn */
/* y[i][c..] over kk in [k0, k1) for MR rows and NV column vectors (the last one masked to `tail`
 * columns when tail < VL); W's rows widened from dt (DT_F32 / DT_F16 / DT_BF16, exact). */
V_INLINE vf nn_wload(const int dt, const void *w, int64_t i, int64_t n) {
    if (dt == DT_F32) return n < VL ? v_load_part((const float *)w + i, n) : v_load((const float *)w + i);
    if (dt == DT_F16) return n < VL ? v_load_f16_part((const uint16_t *)w + i, n) : v_load_f16((const uint16_t *)w + i);
    return n < VL ? v_load_bf16_part((const uint16_t *)w + i, n) : v_load_bf16((const uint16_t *)w + i);
}

V_INLINE void nn_tile(const int dt, const int MR, const int NV, const void *w, int64_t m, const float *x, int64_t k,
                      float *y, int64_t k0, int64_t k1, int first, int64_t tail) {
    vf acc[NN_MR * NN_NV];
#pragma GCC unroll 6
    for (int i = 0; i < MR; i++)
#pragma GCC unroll 4
        for (int v = 0; v < NV; v++) {
            if (first) acc[i * NV + v] = v_zero();
            else acc[i * NV + v] = v == NV - 1 && tail < VL ? v_load_part(y + i * m + v * VL, tail) : v_load(y + i * m + v * VL);
        }
    for (int64_t kk = k0; kk < k1; kk++) {
        vf wv[NN_NV];
#pragma GCC unroll 4
        for (int v = 0; v < NV; v++) wv[v] = nn_wload(dt, w, kk * m + v * VL, v == NV - 1 ? tail : VL);
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

V_INLINE void nn_tile_any(const int dt, int mr, int nv, const void *w, int64_t m, const float *x, int64_t k, float *y,
                          int64_t k0, int64_t k1, int first, int64_t tail) {
#define NN_NV_CASES(MR)                                                                       \
    if (nv >= NN_NV) nn_tile(dt, MR, NN_NV, w, m, x, k, y, k0, k1, first, tail);             \
    else if (nv == 3) nn_tile(dt, MR, 3 < NN_NV ? 3 : 1, w, m, x, k, y, k0, k1, first, tail); \
    else if (nv == 2) nn_tile(dt, MR, 2 < NN_NV ? 2 : 1, w, m, x, k, y, k0, k1, first, tail); \
    else nn_tile(dt, MR, 1, w, m, x, k, y, k0, k1, first, tail);
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

static void nn_matmul_dt(const int dt, const void *w, int64_t k, int64_t m, const float *x, float *y, int64_t i0,
                         int64_t i1, int64_t c0, int64_t c1) {
    const size_t es = dt == DT_F32 ? 4 : 2;
    for (int64_t k0 = 0; k0 < k; k0 += NN_KC) {
        int64_t k1 = k - k0 > NN_KC ? k0 + NN_KC : k;
        for (int64_t c = c0; c < c1; c += NN_NV * VL) {
            int64_t cw = c1 - c < NN_NV * VL ? c1 - c : NN_NV * VL;
            int nv = (int)((cw + VL - 1) / VL);
            int64_t tail = cw - (int64_t)(nv - 1) * VL;
            for (int64_t i = i0; i < i1; i += NN_MR) {
                int mr = (int)(i1 - i < NN_MR ? i1 - i : NN_MR);
                nn_tile_any(dt, mr, nv, (const char *)w + (size_t)c * es, m, x + i * k, k, y + i * m + c, k0, k1, k0 == 0,
                            tail);
            }
        }
    }
}

static void nn_matmul(const vx_mat *w, const float *x, float *y, int64_t i0, int64_t i1, int64_t c0, int64_t c1) {
    const int64_t k = w->rows, m = w->cols;
    if (k == 0) {
        for (int64_t i = i0; i < i1; i++)
            for (int64_t c = c0; c < c1; c++) y[i * m + c] = 0.0f;
        return;
    }
    switch (w->dtype) {
    case VOX_DTYPE_F16: nn_matmul_dt(DT_F16, w->data, k, m, x, y, i0, i1, c0, c1); break;
    case VOX_DTYPE_BF16: nn_matmul_dt(DT_BF16, w->data, k, m, x, y, i0, i1, c0, c1); break;
    default: nn_matmul_dt(DT_F32, w->data, k, m, x, y, i0, i1, c0, c1); break;
    }
}

static void lf_gemv_float(const vx_kernels *k, const vx_gemv_part *parts, int n_parts, const float *x, int64_t n_x) {
    const vox_dtype dt = parts[0].w->dtype;
    if (dt == VOX_DTYPE_F16 || dt == VOX_DTYPE_BF16) {
        lf_stream(dt == VOX_DTYPE_F16 ? DT_F16 : DT_BF16, parts, n_parts, x, n_x);
        return;
    }
    for (int p = 0; p < n_parts; p++)
        k->linear_float(parts[p].w, parts[p].bias, x, parts[p].y, 0, n_x, parts[p].r0, parts[p].r1);
}

static void fill_linear(vx_kernels *t) {
    t->conv_f32 = lc_conv;
    t->gemv_float = lf_gemv_float;
    t->linear_float = lf_linear_float;
    t->matmul_nn = nn_matmul;
}

#endif
