/* q8 weights packed for int8 GEMMs of many rows (vx_linear_q8w): the packing, the job (quantizing x,
 * splitting the work over the pool) and the scalar tile, which is the definition the SIMD tiles match
 * bit for bit (q8w_avx512.c).
 *
 * Packed layout (the same on every path): groups of 16 weight rows, gstride = nb * 640 bytes each; per
 * block b of 32 columns, 640 bytes:
 *   [8 steps s][16 rows r][4 bytes]  signed codes w[r][32 b + 4 s .. + 3]   (512 bytes: one 64-byte
 *                                    vector a step, lane r holding row r's 4 codes)
 *   int32 corr[16]                   -128 * sum of row r's 32 codes of the block
 *   float sw[16]                     row r's block scale
 * x rows are quantized per 32-block exactly as vx_linear's q8 path (vx_quantize_block_q8: d = max|x| /
 * 127, codes rounded half away from zero) and stored as unsigned bytes u = q + 128, so that a product
 * of unsigned by signed bytes (vpdpbusd) started from corr gives the exact block sum
 *   isum_b = sum (q + 128) w - 128 sum w = sum q w.
 * Order of operations per output (every path, any n, any thread count): acc = 0; for b in order:
 * acc = fma(float(isum_b), sw_b * d_b, acc) (the scale product rounded to float first); y = acc + bias.
 * Partial sums go through y between K blocks of Q8W_KB blocks, which is exact. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../error.h"
#include "cpu/dispatch.h"
#include "cpu/scratch.h"

#define Q8W_NR 16   /* weight rows per group */
#define Q8W_BLOCK 640
#define Q8W_MR 4    /* x rows per register tile */
#define Q8W_NG 3    /* groups per register tile */
#define Q8W_KB 32   /* blocks per K block: 3 groups x 32 blocks = 60 KB of weights, in L2; rows of up to 1024
                     * columns in one pass (no partial sums through y): 4-6% faster than 8 blocks (15 KB, in L1)
                     * on Zen 4 for F5's layers */
#define Q8W_TASK 96 /* x rows per pool task */

/* Block b of group g of w (16 rows by 32 columns) into the packed layout at blk (Q8W_BLOCK bytes). */
static void pack_block(const vx_mat *w, int64_t g, int64_t b, unsigned char *blk) {
    const int64_t nb = w->cols / 32;
    const int8_t *codes = w->data;
    int32_t corr[Q8W_NR];
    float sw[Q8W_NR];
    for (int r = 0; r < Q8W_NR; r++) {
        const int64_t row = g * Q8W_NR + r;
        const int8_t *src = codes + row * w->cols + 32 * b;
        int32_t sum = 0;
        for (int k = 0; k < 32; k++) {
            blk[(k / 4) * 64 + r * 4 + k % 4] = (unsigned char)src[k];
            sum += src[k];
        }
        corr[r] = -128 * sum;
        sw[r] = w->scales[row * nb + b];
    }
    memcpy(blk + 512, corr, sizeof corr);
    memcpy(blk + 576, sw, sizeof sw);
}

/* Group g, all its blocks, at dst (nb * Q8W_BLOCK bytes): the path's packer where it has one (the same
 * bytes), else block by block. */
static void pack_group(const vx_mat *w, int64_t g, unsigned char *dst) {
    const vx_kernels *kt = vx_kernels_active();
    const int64_t nb = w->cols / 32;
    if (kt->q8w_pack_group) {
        kt->q8w_pack_group((const int8_t *)w->data + g * Q8W_NR * w->cols, w->cols, w->scales + g * Q8W_NR * nb, nb, dst);
        return;
    }
    for (int64_t b = 0; b < nb; b++) pack_block(w, g, b, dst + b * Q8W_BLOCK);
}

static int packable(const vx_mat *w) { return w->dtype == VOX_DTYPE_Q8 && w->rows % Q8W_NR == 0 && w->cols % 32 == 0 && w->cols > 0; }

vox_status vx_q8w_pack(const vx_mat *w, vx_q8w *out) {
    memset(out, 0, sizeof *out);
    if (!packable(w))
        return vox_set_error(VOX_ERR_UNSUPPORTED, "q8 packing: %lldx%lld matrix of dtype %d (needs q8, rows %% %d == 0)",
                             (long long)w->rows, (long long)w->cols, (int)w->dtype, Q8W_NR);
    const int64_t nb = w->cols / 32, groups = w->rows / Q8W_NR;
    unsigned char *d = aligned_alloc(64, (size_t)(groups * nb) * Q8W_BLOCK);
    if (!d) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    for (int64_t g = 0; g < groups; g++) pack_group(w, g, d + (size_t)(g * nb) * Q8W_BLOCK);
    out->rows = w->rows, out->cols = w->cols, out->nb = nb, out->data = d;
    return VOX_OK;
}

size_t vx_q8w_bytes(int64_t rows, int64_t cols) { return (size_t)(rows / Q8W_NR) * (size_t)(cols / 32) * Q8W_BLOCK; }

/* Rows of f32 quantized per 32-block as vx_linear_q8w quantizes its x (the path's quant_block_q8, the
 * bits of vx_quantize_block_q8), packed as stored q8 weights are: the attention's keys, so that its
 * scores are vx_linear_q8w products. Rows from `rows` to rows_pad are zero codes with scale 0. */
void vx_q8w_pack_f32(const float *src, int64_t ld, int64_t rows, int64_t cols, int64_t rows_pad, unsigned char *data,
                     vx_q8w *out) {
    float (*quant)(const float *, int8_t *) = vx_kernels_active()->quant_block_q8;
    const int64_t nb = cols / 32;
    memset(data, 0, vx_q8w_bytes(rows_pad, cols));
    for (int64_t row = 0; row < rows; row++)
        for (int64_t b = 0; b < nb; b++) {
            unsigned char *blk = data + ((row / Q8W_NR) * nb + b) * Q8W_BLOCK;
            const int r = (int)(row % Q8W_NR);
            int8_t q[32];
            const float d = quant(src + row * ld + 32 * b, q);
            int32_t sum = 0;
            for (int s = 0; s < 8; s++) {
                memcpy(blk + s * 64 + r * 4, q + 4 * s, 4);
                sum += q[4 * s] + q[4 * s + 1] + q[4 * s + 2] + q[4 * s + 3];
            }
            const int32_t corr = -128 * sum;
            memcpy(blk + 512 + 4 * r, &corr, 4);
            memcpy(blk + 576 + 4 * r, &d, 4);
        }
    out->rows = rows_pad, out->cols = cols, out->nb = nb, out->data = data;
}

void vx_q8w_free(vx_q8w *w) {
    free(w->data);
    memset(w, 0, sizeof *w);
}

/* The definition: one output at a time, in the order above. */
static void tile_scalar(const vx_q8w_tile *t) {
    for (int i = 0; i < t->mr; i++)
        for (int g = 0; g < t->ng; g++)
            for (int r = 0; r < Q8W_NR; r++) {
                float *yo = t->y + i * t->ldy + g * Q8W_NR + r;
                float acc = t->first ? 0.0f : *yo;
                for (int64_t b = 0; b < t->kb; b++) {
                    const unsigned char *blk = t->p + g * t->gstride + (size_t)b * Q8W_BLOCK;
                    const unsigned char *xq = t->xq + i * t->xrow + 32 * (t->b0 + b);
                    int32_t isum;
                    memcpy(&isum, blk + 512 + 4 * r, 4);
                    for (int k = 0; k < 32; k++) isum += (int32_t)xq[k] * (int8_t)blk[(k / 4) * 64 + r * 4 + k % 4];
                    float sw;
                    memcpy(&sw, blk + 576 + 4 * r, 4);
                    acc = fmaf((float)isum, sw * t->dx[i * t->dxrow + t->b0 + b], acc);
                }
                *yo = t->last && t->bias ? acc + t->bias[g * Q8W_NR + r] : acc;
            }
}

typedef struct q8w_job {
    const vx_q8w *w;   /* packed; or (vx_linear_q8t) only its shape, the groups packed as they are needed */
    const vx_mat *wm;  /* vx_linear_q8t's matrix */
    const float *bias, *x;
    float *y;
    unsigned char *xq; /* [n][cols]: codes + 128 */
    float *dx;         /* [n][nb] */
    int64_t n, gsplit;
    void (*tile)(const vx_q8w_tile *t);
} q8w_job;

static void quantize_rows(void *ctx, int64_t begin, int64_t end) {
    const q8w_job *j = ctx;
    const int64_t cols = j->w->cols, nb = j->w->nb;
    const vx_kernels *kt = vx_kernels_active();
    for (int64_t i = begin; i < end; i++)
        for (int64_t b = 0; b < nb; b++) {
            int8_t q[32];
            float d = kt->quant_block_q8(j->x + i * cols + 32 * b, q);
            j->dx[i * nb + b] = d;
            unsigned char *u = j->xq + i * cols + 32 * b;
            for (int k = 0; k < 32; k++) u[k] = (unsigned char)(q[k] + 128);
        }
}

/* Rows [i0, i1) of x by groups [g0, g1), blocks [kb0, kb1) in K steps of kstep, whose packed blocks
 * are at p (block kb0 of group g0; gstride bytes a group): the tile calls in the order that fixes every
 * output's chain (a chain goes on through y from one K step to the next: exact). */
static void tile_range(const q8w_job *j, int64_t i0, int64_t i1, int64_t g0, int64_t g1, const unsigned char *p,
                       size_t gstride, int64_t kb0, int64_t kb1, int64_t kstep) {
    const int64_t nb = j->w->nb, rows = j->w->rows;
    for (int64_t g = g0; g < g1; g += Q8W_NG)
        for (int64_t b0 = kb0; b0 < kb1; b0 += kstep)
            for (int64_t i = i0; i < i1; i += Q8W_MR) {
                vx_q8w_tile tl = {.mr = (int)(i1 - i < Q8W_MR ? i1 - i : Q8W_MR),
                                  .ng = (int)(g1 - g < Q8W_NG ? g1 - g : Q8W_NG),
                                  .first = b0 == 0,
                                  .last = b0 + kstep >= nb,
                                  .xq = j->xq + i * j->w->cols,
                                  .xrow = (size_t)j->w->cols,
                                  .dx = j->dx + i * nb,
                                  .dxrow = (size_t)nb,
                                  .p = p + (size_t)(g - g0) * gstride + (size_t)(b0 - kb0) * Q8W_BLOCK,
                                  .gstride = gstride,
                                  .b0 = b0,
                                  .kb = kb1 - b0 < kstep ? kb1 - b0 : kstep,
                                  .y = j->y + i * rows + g * Q8W_NR,
                                  .ldy = rows,
                                  .bias = j->bias ? j->bias + g * Q8W_NR : NULL};
                j->tile(&tl);
            }
}

/* Output rows of one task (Q8W_TASK x rows by a range of groups): per NG groups, K blocks in order. */
static void tasks(void *ctx, int64_t t0, int64_t t1) {
    const q8w_job *j = ctx;
    const int64_t groups = j->w->rows / Q8W_NR;
    const size_t gstride = (size_t)j->w->nb * Q8W_BLOCK;
    for (int64_t t = t0; t < t1; t++) {
        const int64_t rt = t / j->gsplit, gs = t % j->gsplit;
        const int64_t i0 = rt * Q8W_TASK, i1 = i0 + Q8W_TASK < j->n ? i0 + Q8W_TASK : j->n;
        const int64_t g0 = groups * gs / j->gsplit, g1 = groups * (gs + 1) / j->gsplit;
        tile_range(j, i0, i1, g0, g1, j->w->data + (size_t)g0 * gstride, gstride, 0, j->w->nb, Q8W_KB);
    }
}

/* vx_linear_q8t's tasks: NG groups each, packed into the thread's scratch, then every x row; without
 * scratch memory, one block of the groups at a time in a small buffer (the same bits). */
static void tasks_unpacked(void *ctx, int64_t t0, int64_t t1) {
    const q8w_job *j = ctx;
    const int64_t groups = j->w->rows / Q8W_NR, nb = j->w->nb;
    const size_t gstride = (size_t)nb * Q8W_BLOCK;
    unsigned char *p = vx_scratch(VX_SLOT_TILE, Q8W_NG * gstride);
    for (int64_t t = t0; t < t1; t++) {
        const int64_t g0 = t * Q8W_NG, g1 = g0 + Q8W_NG < groups ? g0 + Q8W_NG : groups;
        if (p) {
            for (int64_t g = g0; g < g1; g++) pack_group(j->wm, g, p + (size_t)(g - g0) * gstride);
            tile_range(j, 0, j->n, g0, g1, p, gstride, 0, nb, Q8W_KB);
            continue;
        }
        _Alignas(64) unsigned char blk[Q8W_NG * Q8W_BLOCK];
        for (int64_t b = 0; b < nb; b++) {
            for (int64_t g = g0; g < g1; g++) pack_block(j->wm, g, b, blk + (g - g0) * Q8W_BLOCK);
            tile_range(j, 0, j->n, g0, g1, blk, Q8W_BLOCK, b, b + 1, 1);
        }
    }
}

vox_status vx_linear_q8w(vx_pool *pool, const vx_q8w *w, const float *bias, const float *x, int64_t n, float *y) {
    if (!w->data) return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "vx_linear_q8w: the weight is not packed");
    if (n <= 0) return VOX_OK;
    const vx_kernels *kt = vx_kernels_active();
    unsigned char *xq = aligned_alloc(64, (size_t)((n * w->cols + 63) / 64 * 64));
    float *dx = malloc((size_t)(n * w->nb) * sizeof *dx);
    if (!xq || !dx) {
        free(xq), free(dx);
        return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    }
    /* few rows would leave threads idle: then the groups are split too (never a bit of difference) */
    const int64_t row_tasks = (n + Q8W_TASK - 1) / Q8W_TASK, groups = w->rows / Q8W_NR;
    const int64_t want = 16 * (int64_t)(pool ? vx_pool_size(pool) : 1);
    int64_t gsplit = row_tasks >= want ? 1 : (want + row_tasks - 1) / row_tasks;
    if (gsplit > groups) gsplit = groups;
    q8w_job j = {.w = w, .bias = bias, .x = x, .y = y, .xq = xq, .dx = dx, .n = n, .gsplit = gsplit,
                 .tile = kt->q8w_tile ? kt->q8w_tile : tile_scalar};
    uint32_t fp = vx_fp_fast();
    vx_pool_for(pool, n, 16, quantize_rows, &j);
    vx_pool_for_chunks(pool, row_tasks * gsplit, 1, 16, tasks, &j);
    vx_fp_restore(fp);
    free(xq), free(dx);
    return VOX_OK;
}

vox_status vx_linear_q8t(vx_pool *pool, const vx_mat *w, const float *bias, const float *x, int64_t n, float *y) {
    if (!packable(w)) {
        vx_linear(pool, w, bias, x, n, y);
        return VOX_OK;
    }
    if (n <= 0) return VOX_OK;
    const vx_kernels *kt = vx_kernels_active();
    const vx_q8w shape = {.rows = w->rows, .cols = w->cols, .nb = w->cols / 32, .data = NULL};
    unsigned char *xq = aligned_alloc(64, (size_t)((n * w->cols + 63) / 64 * 64));
    float *dx = malloc((size_t)(n * shape.nb) * sizeof *dx);
    if (!xq || !dx) {
        free(xq), free(dx);
        return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    }
    q8w_job j = {.w = &shape, .wm = w, .bias = bias, .x = x, .y = y, .xq = xq, .dx = dx, .n = n, .gsplit = 1,
                 .tile = kt->q8w_tile ? kt->q8w_tile : tile_scalar};
    uint32_t fp = vx_fp_fast();
    vx_pool_for(pool, n, 16, quantize_rows, &j);
    vx_pool_for_chunks(pool, (w->rows / Q8W_NR + Q8W_NG - 1) / Q8W_NG, 1, 1, tasks_unpacked, &j);
    vx_fp_restore(fp);
    free(xq), free(dx);
    return VOX_OK;
}

int vx_linear_q8t_fast(void) {
    const vx_kernels *kt = vx_kernels_active();
    return kt->q8w_tile && kt->q8w_pack_group;
}
