/* The bf16 dot-product GEMM (AVX512-BF16 vdpbf16ps): y = x . W^T + bias with W packed once as bf16
 * pairs and each x row rounded to bf16 as the call gathers it. Two products per lane per
 * instruction: twice the f32 FMA rate, at the price of rounding both operands to bf16 (8-bit
 * mantissa); products are exact in f32, sums are f32.
 *
 * Packed layout (bf16w.c): groups of 64 weight rows; per group, for each pair p of columns (2p, 2p + 1),
 * 64 uint32 words (row r: bf16 w[r][2p] in the low half, w[r][2p + 1] in the high half, 0 beyond cols).
 * A K block of BW_KC pairs of one group is a contiguous 128 KB panel, in L2: rows of up to 1024 columns in
 * one pass, no partial sums through y (3-5% faster on F5's layers than 128 pairs, a 32 KB panel in L1).
 *
 * Order of operations per output (fixed, never dependent on n, the tiling or the thread count): one
 * vdpbf16ps chain over the pairs in index order starting from 0 (partial sums stored in y between K
 * blocks, which is exact), then + bias. Rounding: round-to-nearest-even; denormals flush to zero. */
#include <immintrin.h>
#include <stdlib.h>
#include <string.h>

#include "../error.h"
#include "cpu/dispatch.h"

#define BW_NR 64  /* weight rows per group: four 16-lane accumulators per x row */
#define BW_MR 6   /* x rows per register tile (24 accumulators) */
#define BW_KC 512 /* pairs per K block */
#define BW_TASK 96 /* x rows per pool task (a multiple of BW_MR) */


/* n floats -> bf16 (vcvtneps2bf16: round-to-nearest-even, denormals to zero under DAZ: vx_bf16_rne's bits) */
static void round_bf16(const float *x, int64_t n, uint16_t *h) {
    int64_t k = 0;
    for (; k + 16 <= n; k += 16) _mm256_storeu_si256((__m256i *)(h + k), (__m256i)_mm512_cvtneps_pbh(_mm512_loadu_ps(x + k)));
    for (; k < n; k++) h[k] = vx_bf16_rne(x[k]);
}

/* x row (cols floats) -> pairs words of bf16 (a zero pads an odd count); the AMX kernel's too. */
void vx_bf16_round_row(const float *x, int64_t cols, uint32_t *o) {
    uint16_t *h = (uint16_t *)o;
    round_bf16(x, cols, h);
    if (cols & 1) h[cols] = 0;
}

static inline __attribute__((always_inline)) void bw_tile(const int MR, const uint32_t *x, int64_t ldx, const uint32_t *P,
                                                          int64_t kn, float *y, int64_t ldy, int first, int last,
                                                          const float *bias) {
    __m512 acc[BW_MR][4];
#pragma GCC unroll 6
    for (int i = 0; i < MR; i++)
#pragma GCC unroll 4
        for (int v = 0; v < 4; v++) acc[i][v] = first ? _mm512_setzero_ps() : _mm512_loadu_ps(y + i * ldy + v * 16);
    for (int64_t p = 0; p < kn; p++) {
        __m512bh wv[4];
#pragma GCC unroll 4
        for (int v = 0; v < 4; v++) wv[v] = (__m512bh)_mm512_load_si512((const void *)(P + p * BW_NR + v * 16));
#pragma GCC unroll 6
        for (int i = 0; i < MR; i++) {
            __m512bh xb = (__m512bh)_mm512_set1_epi32((int)x[i * ldx + p]);
#pragma GCC unroll 4
            for (int v = 0; v < 4; v++) acc[i][v] = _mm512_dpbf16_ps(acc[i][v], xb, wv[v]);
        }
    }
#pragma GCC unroll 4
    for (int v = 0; v < 4; v++) {
        __m512 b = last && bias ? _mm512_loadu_ps(bias + v * 16) : _mm512_setzero_ps();
#pragma GCC unroll 6
        for (int i = 0; i < MR; i++) _mm512_storeu_ps(y + i * ldy + v * 16, last && bias ? _mm512_add_ps(acc[i][v], b) : acc[i][v]);
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
    for (int64_t i = begin; i < end; i++) vx_bf16_round_row(j->x + i * j->cols_in, j->cols_in, j->xb + i * j->w->tap_pairs);
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
                    const uint32_t *P = j->w->data + (g * pairs + tap * tp + q0) * BW_NR;
                    const float *b = j->bias ? j->bias + g * BW_NR : NULL;
                    for (int64_t i = i0; i < i1; i += BW_MR) {
                        const uint32_t *xi = j->xb + (i + tap * j->dil) * tp + q0;
                        float *yi = j->y + i * rows + g * BW_NR;
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

/* The products of xb's rows (already bf16: rounded here, or given) over the pool. */
static void bw_run(vx_pool *pool, const vx_bf16w *w, const float *bias, const float *x, uint32_t *xb, int64_t n_out,
                   int64_t dil, float *y) {
    const int64_t n_in = n_out + dil * (w->taps - 1);
    /* few rows (a short span's decoder: one or two blocks of BW_TASK rows) would leave threads idle:
     * then the weight groups are split too. Every output is still one chain in the same order, so
     * the split never changes a bit. */
    const int64_t row_tasks = (n_out + BW_TASK - 1) / BW_TASK, groups = w->rows / BW_NR;
    /* 16 tasks per thread, in as many chunks: the one that finishes first waits for a small task */
    const int64_t want = 16 * (int64_t)(pool ? vx_pool_size(pool) : 1);
    int64_t gsplit = row_tasks >= want ? 1 : (want + row_tasks - 1) / row_tasks;
    if (gsplit > groups) gsplit = groups;
    bw_job j = {.w = w, .bias = bias, .x = x, .y = y, .xb = xb, .n_in = n_in, .n_out = n_out, .dil = dil,
                .cols_in = w->taps > 1 ? w->cols / w->taps : w->cols, .gsplit = gsplit};
    uint32_t fp = vx_fp_fast();
    if (x) vx_pool_for(pool, n_in, 16, bw_round, &j);
    vx_pool_for_chunks(pool, row_tasks * gsplit, 1, 16, bw_tasks, &j);
    vx_fp_restore(fp);
}

/* x: [n_out + dil (taps - 1)][cols / taps] f32 (a matrix: taps 1, dil unused). */
static vox_status conv_bf16(vx_pool *pool, const vx_bf16w *w, const float *bias, const float *x, int64_t n_out,
                            int64_t dil, float *y) {
    if (n_out <= 0) return VOX_OK;
    const int64_t n_in = n_out + dil * (w->taps - 1);
    uint32_t *xb = aligned_alloc(64, (size_t)(((n_in * w->tap_pairs * 4) + 63) / 64 * 64));
    if (!xb) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    bw_run(pool, w, bias, x, xb, n_out, dil, y);
    free(xb);
    return VOX_OK;
}

/* x rows already rounded (vx_linear_bf16w_rounded): the products alone, the same bits as conv_bf16's. */
static vox_status linear_bf16_rounded(vx_pool *pool, const vx_bf16w *w, const uint16_t *xb, int64_t n, float *y) {
    if (n > 0) bw_run(pool, w, NULL, NULL, (uint32_t *)(uintptr_t)xb, n, 0, y);
    return VOX_OK;
}

void vx_conv_bf16_init_avx512(vx_kernels *t) {
    t->conv_bf16 = conv_bf16;
    t->linear_bf16_rounded = linear_bf16_rounded;
    t->bf16_round = round_bf16;
    t->dots.bf16 = "AVX512-BF16";
    t->dots.bf16_rounds_x = 1;
}
