/* The bf16 dot-product GEMM / convolution with the aarch64 BF16 extension (BFDOT): y = x . W^T + bias
 * with W packed once as bf16 pairs (bf16w.c) and each x row rounded to bf16 (round-to-nearest-even,
 * vx_bf16_rne) as the call gathers it; the counterpart of linear_bf16_avx512.c (vdpbf16ps), with the
 * same packed layout, the same rounding of x and the same order: per output one chain over the pairs in
 * index order starting from 0 (partial sums stored in y between K blocks, exact), then + bias.
 *
 * BFDOT adds the two products of a pair to the lane as the architecture defines it (FEAT_BF16 without
 * EBF16: the products and their sum rounded to odd, then added to the accumulator with the FPCR
 * rounding, denormals flushed), so the bits differ from vdpbf16ps's; the error bound (kernels.h) is of
 * the same size and the C tests hold it to the double-precision sums of the rounded operands.
 *
 * Tile: 6 x rows by 16 weight rows of a group (four 4-lane accumulators per row); per pair one load of
 * 16 words, one broadcast of each row's x pair and one bfdot per row and vector. */
#define VX_SIMD_WIDTH 4
#include <stdlib.h>
#include <string.h>

#include "../error.h"
#include "cpu/dispatch.h"
#include "cpu/simd.h"

#define BW_NR 64   /* weight rows per packed group */
#define BW_NC 16   /* weight rows per tile */
#define BW_MR 6    /* x rows per register tile (24 accumulators) */
#define BW_KC 128  /* pairs per K block */
#define BW_TASK 96 /* x rows per pool task (a multiple of BW_MR) */

uint16_t vx_bf16_rne(float f);

/* x row (cols floats) -> pairs words of bf16 (a zero pads an odd count). */
static void round_row(const float *x, int64_t cols, uint32_t *o) {
    uint16_t *h = (uint16_t *)o;
    for (int64_t k = 0; k < cols; k++) h[k] = vx_bf16_rne(x[k]);
    if (cols & 1) h[cols] = 0;
}

V_INLINE void bw_tile(const int MR, const uint32_t *x, int64_t ldx, const uint32_t *P, int64_t kn, float *y, int64_t ldy,
                      int first, int last, const float *bias) {
    float32x4_t acc[BW_MR][4];
#pragma GCC unroll 6
    for (int i = 0; i < MR; i++)
#pragma GCC unroll 4
        for (int v = 0; v < 4; v++) acc[i][v] = first ? vdupq_n_f32(0.0f) : vld1q_f32(y + i * ldy + v * 4);
    for (int64_t p = 0; p < kn; p++) {
        bfloat16x8_t wv[4];
#pragma GCC unroll 4
        for (int v = 0; v < 4; v++) wv[v] = vreinterpretq_bf16_u32(vld1q_u32(P + p * BW_NR + v * 4));
#pragma GCC unroll 6
        for (int i = 0; i < MR; i++) {
            const bfloat16x8_t xb = vreinterpretq_bf16_u32(vdupq_n_u32(x[i * ldx + p]));
#pragma GCC unroll 4
            for (int v = 0; v < 4; v++) acc[i][v] = vbfdotq_f32(acc[i][v], wv[v], xb);
        }
    }
#pragma GCC unroll 4
    for (int v = 0; v < 4; v++) {
        const float32x4_t b = last && bias ? vld1q_f32(bias + v * 4) : vdupq_n_f32(0.0f);
#pragma GCC unroll 6
        for (int i = 0; i < MR; i++) vst1q_f32(y + i * ldy + v * 4, last && bias ? vaddq_f32(acc[i][v], b) : acc[i][v]);
    }
}

typedef struct bw_job {
    const vx_bf16w *w;
    const float *bias, *x;
    float *y;
    uint32_t *xb; /* [n_in][tap_pairs]: the input rows rounded to bf16 */
    int64_t n_in, n_out, dil, cols_in;
    int64_t gsplit; /* each block of BW_TASK rows is split over this many ranges of weight groups */
} bw_job;

static void bw_round(void *ctx, int64_t begin, int64_t end) {
    const bw_job *j = ctx;
    for (int64_t i = begin; i < end; i++) round_row(j->x + i * j->cols_in, j->cols_in, j->xb + i * j->w->tap_pairs);
}

/* Output rows [i0, i1) of one task, per group of 64 weight rows: K blocks in order (taps, then blocks
 * of BW_KC pairs within a tap); a block's x rows are input rows i + j * dil, contiguous in xb. */
static void bw_tasks(void *ctx, int64_t t0, int64_t t1) {
    const bw_job *j = ctx;
    const int64_t rows = j->w->rows, tp = j->w->tap_pairs, taps = j->w->taps, pairs = j->w->pairs;
    const int64_t groups = rows / BW_NR;
    for (int64_t t = t0; t < t1; t++) {
        int64_t rt = t / j->gsplit, gs = t % j->gsplit;
        int64_t i0 = rt * BW_TASK, i1 = i0 + BW_TASK < j->n_out ? i0 + BW_TASK : j->n_out;
        int64_t g0 = groups * gs / j->gsplit, g1 = groups * (gs + 1) / j->gsplit;
        for (int64_t g = g0; g < g1; g++)
            for (int64_t tap = 0; tap < taps; tap++)
                for (int64_t q0 = 0; q0 < tp; q0 += BW_KC) {
                    int64_t kn = tp - q0 < BW_KC ? tp - q0 : BW_KC;
                    int first = tap == 0 && q0 == 0, last = tap == taps - 1 && q0 + kn == tp;
                    for (int64_t c = 0; c < BW_NR; c += BW_NC) {
                        const uint32_t *P = j->w->data + (g * pairs + tap * tp + q0) * BW_NR + c;
                        const float *b = j->bias ? j->bias + g * BW_NR + c : NULL;
                        for (int64_t i = i0; i < i1; i += BW_MR) {
                            const uint32_t *xi = j->xb + (i + tap * j->dil) * tp + q0;
                            float *yi = j->y + i * rows + g * BW_NR + c;
                            switch (i1 - i < BW_MR ? i1 - i : BW_MR) {
                            case 6: bw_tile(6, xi, tp, P, kn, yi, rows, first, last, b); break;
                            case 5: bw_tile(5, xi, tp, P, kn, yi, rows, first, last, b); break;
                            case 4: bw_tile(4, xi, tp, P, kn, yi, rows, first, last, b); break;
                            case 3: bw_tile(3, xi, tp, P, kn, yi, rows, first, last, b); break;
                            case 2: bw_tile(2, xi, tp, P, kn, yi, rows, first, last, b); break;
                            default: bw_tile(1, xi, tp, P, kn, yi, rows, first, last, b); break;
                            }
                        }
                    }
                }
    }
}

/* x: [n_out + dil (taps - 1)][cols / taps] f32 (a matrix: taps 1, dil unused). */
static vox_status conv_bf16(vx_pool *pool, const vx_bf16w *w, const float *bias, const float *x, int64_t n_out,
                            int64_t dil, float *y) {
    if (n_out <= 0) return VOX_OK;
    const int64_t n_in = n_out + dil * (w->taps - 1);
    uint32_t *xb = aligned_alloc(64, (size_t)(((n_in * w->tap_pairs * 4) + 63) / 64 * 64));
    if (!xb) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    /* few rows leave threads idle: the weight groups are split too (the same bits: every output keeps
     * its one chain) */
    const int64_t row_tasks = (n_out + BW_TASK - 1) / BW_TASK, groups = w->rows / BW_NR;
    const int64_t want = 16 * (int64_t)(pool ? vx_pool_size(pool) : 1);
    int64_t gsplit = row_tasks >= want ? 1 : (want + row_tasks - 1) / row_tasks;
    if (gsplit > groups) gsplit = groups;
    bw_job j = {.w = w, .bias = bias, .x = x, .y = y, .xb = xb, .n_in = n_in, .n_out = n_out, .dil = dil,
                .cols_in = w->taps > 1 ? w->cols / w->taps : w->cols, .gsplit = gsplit};
    uint32_t fp = vx_fp_fast();
    vx_pool_for(pool, n_in, 16, bw_round, &j);
    vx_pool_for_chunks(pool, row_tasks * gsplit, 1, 16, bw_tasks, &j);
    vx_fp_restore(fp);
    free(xb);
    return VOX_OK;
}

void vx_conv_bf16_init_neon_bf16(vx_kernels *t) {
    t->conv_bf16 = conv_bf16;
    t->dots.bf16 = "NEON BF16 bfdot";
    t->dots.bf16_rounds_x = 1;
}
