/* Internal: vx_conv1d_bf16w on the paths without AVX512-BF16 (simd.h abstraction; included once by
 * kernels_avx2.c and kernels_avx512.c): the packed bf16 weights (bf16w.c has the layout) widened to
 * f32 in registers (a 16-bit shift or mask of each pair word, exact) and multiplied by the f32 input
 * rows, one FMA per product: the f32 FMA rate with half the weight bytes of f32, and no im2col (each
 * tap reads its input rows where they are).
 *
 * Order of operations per output (fixed, never dependent on n, the tiling or the thread count): one
 * FMA chain starting from 0 over the packed columns in order (taps, then the channel pairs of a tap,
 * low half before high half), partial sums stored in y between K blocks (exact), then + bias.
 *
 * Tile: BF_MR x rows by BF_NV vectors of weight rows of one group; a K block of BF_KC pairs of the
 * group (a 32 KB panel) stays in L1 while every tile of the task's rows runs against it. */
#ifndef VOX_CPU_CONV_BF16_H
#define VOX_CPU_CONV_BF16_H

#include <stdlib.h>

#include "../error.h"
#include "cpu/dispatch.h"
#include "cpu/simd.h"

#define BF_NR 64   /* weight rows per packed group */
#define BF_MR 4    /* x rows per register tile */
#define BF_NV (VL == 8 ? 2 : 4) /* weight-row vectors per tile: 64 rows (AVX-512), 16 (AVX2, NEON) */
#define BF_KC 128  /* pairs per K block */
#define BF_TASK 96 /* x rows per pool task */

/* rows [0, MR) of the tile: y[i][c0 .. c0 + BF_NV VL) (+)= sum over pairs p < kn of the widened pair
 * times x[i][2p], x[i][2p + 1] (odd: the last pair has no high column). */
V_INLINE void bf_tile(const int MR, const float *x, int64_t ldx, const uint32_t *P, int64_t kn, int odd, float *y,
                      int64_t ldy, int first, int last, const float *bias) {
    vf acc[BF_MR][BF_NV];
    const vi hi_mask = vi_set1((int32_t)0xffff0000u);
#pragma GCC unroll 4
    for (int i = 0; i < MR; i++)
#pragma GCC unroll 4
        for (int v = 0; v < BF_NV; v++) acc[i][v] = first ? v_zero() : v_load(y + i * ldy + v * VL);
    for (int64_t p = 0; p < kn; p++) {
        vf wl[BF_NV], wh[BF_NV];
#pragma GCC unroll 4
        for (int v = 0; v < BF_NV; v++) {
            const vi wv = v_bits(v_load((const float *)(P + p * BF_NR + v * VL)));
            wl[v] = v_frombits(vi_sll16(wv));
            wh[v] = v_frombits(vi_and(wv, hi_mask));
        }
        const int has_hi = !(odd && p == kn - 1);
#pragma GCC unroll 4
        for (int i = 0; i < MR; i++) {
            const vf x0 = v_set1(x[i * ldx + 2 * p]);
#pragma GCC unroll 4
            for (int v = 0; v < BF_NV; v++) acc[i][v] = v_fma(x0, wl[v], acc[i][v]);
            if (has_hi) {
                const vf x1 = v_set1(x[i * ldx + 2 * p + 1]);
#pragma GCC unroll 4
                for (int v = 0; v < BF_NV; v++) acc[i][v] = v_fma(x1, wh[v], acc[i][v]);
            }
        }
    }
#pragma GCC unroll 4
    for (int v = 0; v < BF_NV; v++) {
        const vf b = last && bias ? v_load(bias + v * VL) : v_zero();
#pragma GCC unroll 4
        for (int i = 0; i < MR; i++) v_store(y + i * ldy + v * VL, last && bias ? v_add(acc[i][v], b) : acc[i][v]);
    }
}

typedef struct bf_job {
    const vx_bf16w *w;
    const float *bias, *x;
    float *y;
    int64_t n_out, dil, cols_in; /* cols_in: floats per input row (c_in, or cols for a matrix) */
    int64_t gsplit;
} bf_job;

static void bf_tasks(void *ctx, int64_t t0, int64_t t1) {
    const bf_job *j = ctx;
    const vx_bf16w *w = j->w;
    const int64_t rows = w->rows, tp = w->tap_pairs, taps = w->taps, pairs = w->pairs, groups = rows / BF_NR;
    /* the columns of a tap: c_in (even) for a convolution, cols (maybe odd) for a matrix */
    const int64_t tap_cols = taps > 1 ? j->cols_in : w->cols;
    for (int64_t t = t0; t < t1; t++) {
        const int64_t rt = t / j->gsplit, gs = t % j->gsplit;
        const int64_t i0 = rt * BF_TASK, i1 = i0 + BF_TASK < j->n_out ? i0 + BF_TASK : j->n_out;
        const int64_t g0 = groups * gs / j->gsplit, g1 = groups * (gs + 1) / j->gsplit;
        for (int64_t g = g0; g < g1; g++)
            for (int64_t tap = 0; tap < taps; tap++)
                for (int64_t q0 = 0; q0 < tp; q0 += BF_KC) {
                    const int64_t kn = tp - q0 < BF_KC ? tp - q0 : BF_KC;
                    const int first = tap == 0 && q0 == 0, last = tap == taps - 1 && q0 + kn == tp;
                    const int odd = (tap_cols & 1) && q0 + kn == tp;
                    for (int64_t c = 0; c < BF_NR; c += BF_NV * VL) {
                        const uint32_t *P = w->data + (g * pairs + tap * tp + q0) * BF_NR + c;
                        const float *b = j->bias ? j->bias + g * BF_NR + c : NULL;
                        for (int64_t i = i0; i < i1; i += BF_MR) {
                            const float *xi = j->x + (i + tap * j->dil) * j->cols_in + 2 * q0;
                            float *yi = j->y + i * rows + g * BF_NR + c;
                            switch (i1 - i < BF_MR ? i1 - i : BF_MR) {
                            case 4: bf_tile(4, xi, j->cols_in, P, kn, odd, yi, rows, first, last, b); break;
                            case 3: bf_tile(3, xi, j->cols_in, P, kn, odd, yi, rows, first, last, b); break;
                            case 2: bf_tile(2, xi, j->cols_in, P, kn, odd, yi, rows, first, last, b); break;
                            default: bf_tile(1, xi, j->cols_in, P, kn, odd, yi, rows, first, last, b); break;
                            }
                        }
                    }
                }
    }
}

/* x: [n_out + dil (taps - 1)][cols / taps] f32 (a matrix: taps 1, dil unused). */
static vox_status bf_conv(vx_pool *pool, const vx_bf16w *w, const float *bias, const float *x, int64_t n_out, int64_t dil,
                          float *y) {
    if (n_out <= 0) return VOX_OK;
    /* few rows would leave threads idle: the weight groups are split too (every output is still one
     * chain in the same order, so the split never changes a bit); 16 tasks per thread */
    const int64_t row_tasks = (n_out + BF_TASK - 1) / BF_TASK, groups = w->rows / BF_NR;
    const int64_t want = 16 * (int64_t)(pool ? vx_pool_size(pool) : 1);
    int64_t gsplit = row_tasks >= want ? 1 : (want + row_tasks - 1) / row_tasks;
    if (gsplit > groups) gsplit = groups;
    bf_job j = {.w = w, .bias = bias, .x = x, .y = y, .n_out = n_out, .dil = dil,
                .cols_in = w->taps > 1 ? w->cols / w->taps : w->cols, .gsplit = gsplit};
    uint32_t fp = vx_fp_fast();
    vx_pool_for_chunks(pool, row_tasks * gsplit, 1, 16, bf_tasks, &j);
    vx_fp_restore(fp);
    return VOX_OK;
}

static void fill_conv_bf16(vx_kernels *t) {
    t->conv_bf16 = bf_conv;
    t->dots.bf16 = "bf16 weights widened, f32 FMA";
    t->dots.bf16_rounds_x = 0;
}

#endif
