/* The bf16 dot-product GEMM / convolution with AMX-BF16 (tdpbf16ps): y = x . W^T + bias with W packed
 * once as bf16 pairs (bf16w.c) and each x row rounded to bf16 as the call gathers it, as the
 * AVX512-BF16 kernel (linear_bf16_avx512.c) computes it, 16 x rows by 16 weight rows by 16 pairs per
 * instruction (8192 products) instead of 16 x 2 per vdpbf16ps.
 *
 * The packed layout is already tdpbf16ps's second operand: per pair p, 64 uint32 words (one per weight
 * row of the group), so the B tile of 16 pairs and rows 16v .. 16v + 15 is 16 rows of 64 bytes, 256
 * bytes apart; the A tile is 16 x rows of 16 pairs. A pair count that is not a multiple of 16 leaves
 * the last, narrower pair of tiles (tmm6 / tmm7, vx_amx_configure).
 *
 * Order of operations per output (fixed, never dependent on n, the tiling or the thread count): the
 * products of the pairs in index order (taps, then pairs within a tap) accumulated in the f32 tile
 * from 0, then + bias. Within a pair the hardware's order (and its handling of the two products) is
 * its own: the same function as the AVX512-BF16 kernel up to f32 rounding, held to the same bound by
 * test_kernels (bf16 operands, f32 sums); every output's chain is independent of the other rows, so
 * a row alone gives the bits it gives in a batch. */
#include <immintrin.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../error.h"
#include "cpu/dispatch.h"

#define BA_NR 64   /* weight rows per group (the packed layout) */
#define BA_MR 16   /* x rows per tile */
#define BA_TASK 96 /* x rows per pool task (a multiple of BA_MR) */

typedef struct ba_job {
    const vx_bf16w *w;
    const float *bias, *x;
    float *y;
    uint32_t *xb; /* [n_in + BA_MR][tap_pairs]: the input rows rounded to bf16, then zero rows */
    const uint32_t *tail; /* rows given already rounded: the last partial tile's rows, zero-padded to BA_MR */
    int64_t n_in, n_out, dil, cols_in;
    int64_t gsplit, n16;  /* n16: the first row of that tile */
} ba_job;

static void ba_round(void *ctx, int64_t begin, int64_t end) {
    const ba_job *j = ctx;
    for (int64_t i = begin; i < end; i++) vx_bf16_round_row(j->x + i * j->cols_in, j->cols_in, j->xb + i * j->w->tap_pairs);
}

/* mr (<= 16) output rows from x row i by the group's 64 weight rows, all taps and pairs. */
static void ba_tile(const ba_job *j, int64_t g, int64_t i, int64_t mr) {
    const vx_bf16w *w = j->w;
    const int64_t rows = w->rows, tp = w->tap_pairs, taps = w->taps, full = tp / 16;
    const int rem = (int)(tp % 16);
    const size_t ldx = (size_t)tp * 4;
    float c[4][16][16] __attribute__((aligned(64)));
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
    for (int64_t tap = 0; tap < taps; tap++) {
        /* rows given rounded come as a matrix (taps 1), their last partial tile from the padded copy */
        const uint32_t *xi = j->tail && i >= j->n16 ? j->tail + (i - j->n16) * tp : j->xb + (i + tap * j->dil) * tp;
        const uint32_t *P = w->data + (g * w->pairs + tap * tp) * BA_NR;
        for (int64_t k = 0; k < full; k++) {
            const uint32_t *pw = P + k * 16 * BA_NR;
            _tile_loadd(4, xi + k * 16, ldx);
            _tile_loadd(5, pw, BA_NR * 4);
            _tile_dpbf16ps(0, 4, 5);
            _tile_loadd(5, pw + 16, BA_NR * 4);
            _tile_dpbf16ps(1, 4, 5);
            _tile_loadd(5, pw + 32, BA_NR * 4);
            _tile_dpbf16ps(2, 4, 5);
            _tile_loadd(5, pw + 48, BA_NR * 4);
            _tile_dpbf16ps(3, 4, 5);
        }
        if (rem) {
            const uint32_t *pw = P + full * 16 * BA_NR;
            _tile_loadd(6, xi + full * 16, ldx);
            _tile_loadd(7, pw, BA_NR * 4);
            _tile_dpbf16ps(0, 6, 7);
            _tile_loadd(7, pw + 16, BA_NR * 4);
            _tile_dpbf16ps(1, 6, 7);
            _tile_loadd(7, pw + 32, BA_NR * 4);
            _tile_dpbf16ps(2, 6, 7);
            _tile_loadd(7, pw + 48, BA_NR * 4);
            _tile_dpbf16ps(3, 6, 7);
        }
    }
    const float *b = j->bias ? j->bias + g * BA_NR : NULL;
    if (!b && mr == BA_MR) {   /* a whole tile and nothing to add: the sums straight to y */
        float *y = j->y + i * rows + g * BA_NR;
        _tile_stored(0, y, rows * 4);
        _tile_stored(1, y + 16, rows * 4);
        _tile_stored(2, y + 32, rows * 4);
        _tile_stored(3, y + 48, rows * 4);
        __asm__ volatile("" : : : "memory");
        return;
    }
    _tile_stored(0, c[0], 64);
    _tile_stored(1, c[1], 64);
    _tile_stored(2, c[2], 64);
    _tile_stored(3, c[3], 64);
    __asm__ volatile("" : : : "memory");   /* the sums are in c now (GCC 12: see vx_amx_configure) */
    for (int64_t r = 0; r < mr; r++) {
        float *y = j->y + (i + r) * rows + g * BA_NR;
        for (int v = 0; v < 4; v++) {
            __m512 a = _mm512_load_ps(c[v][r]);
            if (b) a = _mm512_add_ps(a, _mm512_loadu_ps(b + v * 16));
            _mm512_storeu_ps(y + v * 16, a);
        }
    }
}

static void ba_tasks(void *ctx, int64_t t0, int64_t t1) {
    const ba_job *j = ctx;
    const int64_t groups = j->w->rows / BA_NR;
    vx_amx_configure((int)(j->w->tap_pairs % 16));   /* once for the tasks of this call on this thread */
    for (int64_t t = t0; t < t1; t++) {
        int64_t rt = t / j->gsplit, gs = t % j->gsplit;
        int64_t i0 = rt * BA_TASK, i1 = i0 + BA_TASK < j->n_out ? i0 + BA_TASK : j->n_out;
        int64_t g0 = groups * gs / j->gsplit, g1 = groups * (gs + 1) / j->gsplit;
        for (int64_t g = g0; g < g1; g++)
            for (int64_t i = i0; i < i1; i += BA_MR) ba_tile(j, g, i, i1 - i < BA_MR ? i1 - i : BA_MR);
    }
}

/* The job over the pool: tasks of BA_TASK rows by a share of the groups (split so that a short input
 * still gives every thread work), x rounded first where it comes as floats (j->x). */
static void ba_run(vx_pool *pool, ba_job *j) {
    const int64_t row_tasks = (j->n_out + BA_TASK - 1) / BA_TASK, groups = j->w->rows / BA_NR;
    const int64_t want = 16 * (int64_t)(pool ? vx_pool_size(pool) : 1);
    j->gsplit = row_tasks >= want ? 1 : (want + row_tasks - 1) / row_tasks;
    if (j->gsplit > groups) j->gsplit = groups;
    uint32_t fp = vx_fp_fast();
    if (j->x) vx_pool_for(pool, j->n_in, 16, ba_round, j);
    vx_pool_for_chunks(pool, row_tasks * j->gsplit, 1, 16, ba_tasks, j);
    vx_fp_restore(fp);
}

/* x: [n_out + dil (taps - 1)][cols / taps] f32 (a matrix: taps 1, dil unused). */
static vox_status conv_bf16_amx(vx_pool *pool, const vx_bf16w *w, const float *bias, const float *x, int64_t n_out,
                                int64_t dil, float *y) {
    if (n_out <= 0) return VOX_OK;
    const int64_t n_in = n_out + dil * (w->taps - 1), tp = w->tap_pairs;
    /* BA_MR zero rows after the input: a tile at the end reads them (and drops their sums) */
    const size_t bytes = (size_t)((n_in + BA_MR) * tp * 4);
    uint32_t *xb = aligned_alloc(64, (bytes + 63) / 64 * 64);
    if (!xb) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    memset(xb + n_in * tp, 0, (size_t)(BA_MR * tp * 4));
    ba_job j = {.w = w, .bias = bias, .x = x, .y = y, .xb = xb, .n_in = n_in, .n_out = n_out, .dil = dil,
                .cols_in = w->taps > 1 ? w->cols / w->taps : w->cols};
    ba_run(pool, &j);
    free(xb);
    return VOX_OK;
}

/* x rows already rounded to bf16 (vx_linear_bf16w_rounded; the attention's probabilities, which
 * vx_exp_rows_bf16 stores as bf16): the tiles read them where they are, with no pass that rounds and
 * copies them, so the bits conv_bf16_amx gives for the floats they round. The tiles read 16 rows: a last
 * partial tile reads a zero-padded copy of its rows, so the caller's rows need no padding after them. */
static vox_status linear_bf16_rounded_amx(vx_pool *pool, const vx_bf16w *w, const uint16_t *xb, int64_t n, float *y) {
    if (n <= 0) return VOX_OK;
    const int64_t tp = w->tap_pairs, n16 = n / BA_MR * BA_MR;
    uint32_t *tail = NULL;
    if (n16 < n) {
        tail = aligned_alloc(64, (size_t)(BA_MR * tp * 4 + 63) / 64 * 64);
        if (!tail) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
        memset(tail, 0, (size_t)(BA_MR * tp * 4));
        memcpy(tail, (const uint32_t *)(const void *)xb + n16 * tp, (size_t)((n - n16) * tp * 4));
    }
    ba_job j = {.w = w, .y = y, .xb = (uint32_t *)(uintptr_t)xb, .tail = tail, .n16 = n16, .n_in = n, .n_out = n,
                .cols_in = w->cols};
    ba_run(pool, &j);
    free(tail);
    return VOX_OK;
}

void vx_conv_bf16_init_amx(vx_kernels *t) {
    t->conv_bf16 = conv_bf16_amx;
    t->linear_bf16_rounded = linear_bf16_rounded_amx;
    t->dots.bf16 = "AMX-BF16";
    t->dots.bf16_rounds_x = 1;
    t->dots.bf16_tiles = 1;
}
