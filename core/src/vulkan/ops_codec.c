/* The codec decoder's GPU ops (ops_codec.h). */

#include "ops_codec.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "shaders.h"

static vox_status grid_dispatch(vx_gpu *g, int shader, const vx_gbind *b, int nb, const void *push, uint32_t ps,
                                uint64_t items, const char *label) {
    uint32_t gx, gy;
    vx_gop_grid(items, &gx, &gy);
    return vx_gpu_dispatch(g, shader, b, nb, push, ps, gx, gy, 1, label);
}

/* The tile count below which a tiled GEMM splits its K chunks over workgroups: VOX_VK_CODEC_SPLIT_TILES
 * (0: never), else VX_CODEC_SPLIT_TILES, or 0 on a CPU renderer (lavapipe gains nothing from more
 * workgroups and pays for the partial sums: 2.4x slower convolutions). The bits do not depend on it. */
static int64_t split_tiles(const vx_gpu *g) {
    const char *e = getenv("VOX_VK_CODEC_SPLIT_TILES");
    return e && *e ? atoll(e) : vx_gpu_info(g)->software ? 0 : VX_CODEC_SPLIT_TILES;
}

int vx_codec_f16_exact(vox_dtype dt, const void *w, int64_t n) {
    if (dt == VOX_DTYPE_F16) return 1;
    if (dt != VOX_DTYPE_BF16) return 0;
    const uint16_t *v = w;
    for (int64_t e = 0; e < n; e++)
        if ((v[e] & 0x7fff) >= 0x4780) return 0;   /* 65536 and above (and inf/nan) overflow float16 */
    return 1;
}

int vx_codec_coopmat_enabled(void) {
    const char *e = getenv("VOX_VK_CODEC_COOPMAT");
    return e && !strcmp(e, "1");
}

int vx_codec_gemm_coopmat(vx_gpu *g, const vx_gconv *c) {
    return !c->gemv && c->coopmat && vx_gpu_coopmat(g) && vx_codec_coopmat_enabled() &&
           (c->w_dtype == VOX_DTYPE_F16 || c->w_dtype == VOX_DTYPE_BF16);
}

static vox_status gemm(vx_gpu *g, const vx_gconv *c, vx_gbind x, vx_gbind w, const vx_gbind *bias, const vx_gbind *scale,
                       const vx_gbind *res, const vx_gbind *ys, int n_out, const int64_t *seg, int64_t y_stride,
                       const char *label) {
    if (c->M <= 0) return VOX_OK;
    if (c->w_dtype != VOX_DTYPE_F32 && c->w_dtype != VOX_DTYPE_BF16 && c->w_dtype != VOX_DTYPE_F16)
        return vox_set_error(VOX_ERR_INTERNAL, "vx_gop_codec_gemm: weights of dtype %d", (int)c->w_dtype);
    const int cm = vx_codec_gemm_coopmat(g, c);
    const int64_t tiles_n = (c->N + (cm ? 31 : 63)) / (cm ? 32 : 64), tiles_m = (c->M + 63) / 64, chunks = (c->K + 255) / 256;
    if (c->taps < 1 || c->dil < 1 || c->K != c->cin * c->taps || tiles_n > 65535 || tiles_m > 65535 ||
        (c->gemv && (c->w_kn || (c->M + 15) / 16 > 65535)))
        return vox_set_error(VOX_ERR_INTERNAL, "vx_gop_codec_gemm: bad shape (M %lld N %lld K %lld%s)", (long long)c->M,
                             (long long)c->N, (long long)c->K, c->gemv ? ", small-M kernel" : "");
    if (c->act == VX_CODEC_ACT_SNAKE && (scale || res))
        return vox_set_error(VOX_ERR_INTERNAL, "vx_gop_codec_gemm: SnakeBeta after a layer scale or residual");
    const int shader = cm ? (c->w_dtype == VOX_DTYPE_BF16 ? VX_SH_CODEC_GEMM_CM_BF16 : VX_SH_CODEC_GEMM_CM_F16)
                     : c->gemv ? (c->w_dtype == VOX_DTYPE_BF16 ? VX_SH_CODEC_GEMV_BF16
                                  : c->w_dtype == VOX_DTYPE_F16 ? VX_SH_CODEC_GEMV_F16 : VX_SH_CODEC_GEMV)
                               : (c->w_dtype == VOX_DTYPE_BF16 ? VX_SH_CODEC_GEMM_BF16
                                  : c->w_dtype == VOX_DTYPE_F16 ? VX_SH_CODEC_GEMM_F16 : VX_SH_CODEC_GEMM);
    struct {
        uint32_t M, N, K, cin, taps, dil, flags, x_base, w_base, b_base, s_base, r_base, y_base, y_stride, r_stride;
        uint32_t seg1, seg2, y_base1, y_base2, y_stride1, y_stride2, ncol;
    } push = {(uint32_t)c->M, (uint32_t)c->N, (uint32_t)c->K, (uint32_t)c->cin, (uint32_t)c->taps, (uint32_t)c->dil,
              (bias ? 1u : 0u) | (scale ? 2u : 0u) | (res ? 4u : 0u) | (c->w_kn ? 8u : 0u) |
                  (c->act == VX_CODEC_ACT_SNAKE ? 16u : 0u) | (c->act == VX_CODEC_ACT_GELU ? 32u : 0u),
              0, 0, 0, 0, 0, 0, (uint32_t)(y_stride > 0 ? y_stride : c->N), (uint32_t)c->N,
              UINT32_MAX, UINT32_MAX, 0, 0, 0, 0, 1};
    vx_gbind b[8] = {vx_gop_whole(g, x, &push.x_base), vx_gop_whole(g, w, &push.w_base), {0}, {0}, {0},
                     vx_gop_whole(g, ys[0], &push.y_base), {0}, {0}};
    if (c->w_dtype != VOX_DTYPE_F32) {   /* 16-bit weights: the offset in elements, from a 4-byte word */
        if (w.offset % 4) return vox_set_error(VOX_ERR_INTERNAL, "vx_gop_codec_gemm: 16-bit weights at an odd offset");
        push.w_base = (uint32_t)(w.offset / 2);
    }
    b[2] = bias ? vx_gop_whole(g, *bias, &push.b_base) : b[1];   /* unused bindings: any buffer */
    b[3] = scale ? vx_gop_whole(g, *scale, &push.s_base) : b[1];
    b[4] = res ? vx_gop_whole(g, *res, &push.r_base) : b[1];
    if (c->act == VX_CODEC_ACT_SNAKE) {   /* alpha as the scale, inv_beta as the residual (one offset) */
        uint32_t ib;
        b[3] = vx_gop_whole(g, c->alpha, &push.s_base);
        b[4] = vx_gop_whole(g, c->inv_beta, &ib);
        push.r_base = ib;
    }
    b[6] = b[7] = b[5];
    if (n_out > 1) {
        push.seg1 = (uint32_t)seg[0];
        push.seg2 = (uint32_t)(n_out > 2 ? seg[1] : c->N);
        push.y_stride = push.seg1;
        b[6] = vx_gop_whole(g, ys[1], &push.y_base1);
        push.y_stride1 = push.seg2 - push.seg1;
        if (n_out > 2) {
            b[7] = vx_gop_whole(g, ys[2], &push.y_base2);
            push.y_stride2 = (uint32_t)c->N - push.seg2;
        }
    }
    if (c->gemv) {   /* a workgroup per ncol output columns (folded into y beyond 65535) and 16 rows */
        /* 4 columns a workgroup when its rows of x (up to 16 x K) would not stay in L1 for every workgroup
           and 4 still leave 256 or more workgroups (the ConvNeXt MLP): x read from L2 a quarter as often.
           The sums are the same either way. */
        const int64_t rows = c->M < 16 ? c->M : 16;
        push.ncol = rows * c->K * 4 > 48 * 1024 && c->N >= 1024 ? 4 : 1;
        uint32_t gx, gy;
        vx_gop_row_grid((uint64_t)((c->N + push.ncol - 1) / push.ncol), &gx, &gy);
        return vx_gpu_dispatch(g, shader, b, 8, &push, sizeof push, gx, gy, (uint32_t)((c->M + 15) / 16), label);
    }
    const int64_t st = split_tiles(g);
    const uint64_t part_bytes = (uint64_t)chunks * (uint64_t)c->M * (uint64_t)c->N * 4;
    if (chunks > 1 && tiles_m * tiles_n < st && c->scratch && part_bytes <= c->scratch->size &&
        part_bytes <= vx_gpu_max_range(g) && chunks <= 65535) {
        /* split K: partial sums of every chunk into the scratch, then the ordered sum and the epilogue */
        vx_gbind pb[8];
        memcpy(pb, b, sizeof pb);
        uint32_t ybase = push.y_base;
        pb[5] = pb[6] = pb[7] = vx_gop_whole(g, (vx_gbind){c->scratch, 0, part_bytes}, &push.y_base);
        pb[2] = pb[3] = pb[4] = b[1];   /* the epilogue's inputs are the second pass's */
        push.flags |= 64u;
        vox_status e = vx_gpu_dispatch(g, shader, pb, 8, &push, sizeof push, (uint32_t)tiles_n, (uint32_t)tiles_m,
                                       (uint32_t)chunks, label);
        if (e != VOX_OK) return e;
        push.flags &= ~64u;
        push.y_base = ybase;
        b[0] = pb[5];
        push.x_base = 0;
        uint32_t gx, gy;
        vx_gop_grid((uint64_t)(c->M * c->N), &gx, &gy);
        return vx_gpu_dispatch(g, VX_SH_CODEC_GEMM_REDUCE, b, 8, &push, sizeof push, gx, gy, 1, label);
    }
    return vx_gpu_dispatch(g, shader, b, 8, &push, sizeof push, (uint32_t)tiles_n, (uint32_t)tiles_m, 1, label);
}

vox_status vx_gop_codec_gemm(vx_gpu *g, const vx_gconv *c, vx_gbind x, vx_gbind w, const vx_gbind *bias,
                             const vx_gbind *scale, const vx_gbind *res, vx_gbind y, int64_t y_stride,
                             const char *label) {
    return gemm(g, c, x, w, bias, scale, res, &y, 1, NULL, y_stride, label);
}

vox_status vx_gop_codec_gemm_split(vx_gpu *g, const vx_gconv *c, vx_gbind x, vx_gbind w, const vx_gbind *bias,
                                   const vx_gbind *ys, int n_out, const int64_t *seg, const char *label) {
    if (n_out < 2 || n_out > 3 || seg[0] <= 0 || (n_out > 2 && (seg[1] <= seg[0] || seg[1] >= c->N)) || seg[0] >= c->N)
        return vox_set_error(VOX_ERR_INTERNAL, "vx_gop_codec_gemm_split: bad segments");
    return gemm(g, c, x, w, bias, NULL, NULL, ys, n_out, seg, 0, label);
}

vox_status vx_gop_codec_rvq(vx_gpu *g, vx_gbind codes, vx_gbind cb, int64_t n, int64_t nq, int64_t size, int64_t half,
                            vx_gbind first, vx_gbind rest, const char *label) {
    if (nq < 2) return vox_set_error(VOX_ERR_INTERNAL, "vx_gop_codec_rvq: %lld groups", (long long)nq);
    struct { uint32_t n, nq, half, size, c_base, f_base, r_base; } push = {(uint32_t)n, (uint32_t)nq, (uint32_t)half,
                                                                          (uint32_t)size, 0, 0, 0};
    uint32_t cbb;
    vx_gbind b[4] = {vx_gop_whole(g, codes, &push.c_base), vx_gop_whole(g, cb, &cbb), vx_gop_whole(g, first, &push.f_base),
                     vx_gop_whole(g, rest, &push.r_base)};
    if (cbb) return vox_set_error(VOX_ERR_INTERNAL, "vx_gop_codec_rvq: the codebooks must start their buffer");
    return grid_dispatch(g, VX_SH_CODEC_RVQ, b, 4, &push, sizeof push, (uint64_t)(n * half), label);
}

static vox_status snake(vx_gpu *g, int mode, vx_gbind x, const vx_gbind *alpha, const vx_gbind *inv_beta, int64_t t,
                        int64_t c, vx_gbind y, int64_t ctx, const vx_gbind *state, const char *label) {
    struct { uint32_t n, c, x_base, a_base, y_base, ctx, s_base, mode; } push = {
        (uint32_t)(t * c), (uint32_t)c, 0, 0, 0, (uint32_t)ctx, 0, (uint32_t)mode};
    uint32_t ib = 0;
    vx_gbind b[5] = {vx_gop_whole(g, x, &push.x_base), {0}, {0}, vx_gop_whole(g, y, &push.y_base), {0}};
    b[1] = alpha ? vx_gop_whole(g, *alpha, &push.a_base) : b[0];   /* unused bindings: any buffer */
    b[2] = inv_beta ? vx_gop_whole(g, *inv_beta, &ib) : b[0];
    b[4] = state ? vx_gop_whole(g, *state, &push.s_base) : b[3];
    if (ib != push.a_base) return vox_set_error(VOX_ERR_INTERNAL, "vx_gop_snake: alpha and inv_beta at different offsets");
    return grid_dispatch(g, VX_SH_CODEC_SNAKE, b, 5, &push, sizeof push, (uint64_t)((t + (ctx > t ? ctx - t : 0)) * c),
                         label);
}

vox_status vx_gop_snake(vx_gpu *g, vx_gbind x, vx_gbind alpha, vx_gbind inv_beta, int64_t t, int64_t c, vx_gbind y,
                        const char *label) {
    return snake(g, 0, x, &alpha, &inv_beta, t, c, y, 0, NULL, label);
}

vox_status vx_gop_snake_ctx(vx_gpu *g, vx_gbind x, vx_gbind alpha, vx_gbind inv_beta, int64_t t, int64_t c,
                            vx_gbind y, int64_t ctx, vx_gbind state, const char *label) {
    return snake(g, 0, x, &alpha, &inv_beta, t, c, y, ctx, &state, label);
}

vox_status vx_gop_copy_ctx(vx_gpu *g, vx_gbind x, int64_t t, int64_t c, vx_gbind y, int64_t ctx, vx_gbind state,
                           const char *label) {
    return snake(g, 1, x, NULL, NULL, t, c, y, ctx, &state, label);
}

vox_status vx_gop_dwconv(vx_gpu *g, vx_gbind x, int64_t t_out, int64_t c, vx_gbind w, int64_t k, int64_t dil,
                         vx_gbind bb, vx_gbind y, const char *label) {
    struct { uint32_t t_out, c, k, dil, x_base, w_base, b_base, y_base; } push = {
        (uint32_t)t_out, (uint32_t)c, (uint32_t)k, (uint32_t)dil, 0, 0, 0, 0};
    vx_gbind b[4] = {vx_gop_whole(g, x, &push.x_base), vx_gop_whole(g, w, &push.w_base), vx_gop_whole(g, bb, &push.b_base),
                     vx_gop_whole(g, y, &push.y_base)};
    return grid_dispatch(g, VX_SH_CODEC_DWCONV, b, 4, &push, sizeof push, (uint64_t)(t_out * c), label);
}

vox_status vx_gop_layer_norm(vx_gpu *g, vx_gbind x, vx_gbind w, vx_gbind bb, int64_t rows, int64_t d, float eps,
                             vx_gbind y, const char *label) {
    struct { uint32_t rows, d, x_base, w_base, b_base, y_base; float eps; } push = {(uint32_t)rows, (uint32_t)d, 0, 0, 0, 0,
                                                                                   eps};
    vx_gbind b[4] = {vx_gop_whole(g, x, &push.x_base), vx_gop_whole(g, w, &push.w_base), vx_gop_whole(g, bb, &push.b_base),
                     vx_gop_whole(g, y, &push.y_base)};
    uint32_t gx, gy;
    vx_gop_row_grid((uint64_t)rows, &gx, &gy);
    return vx_gpu_dispatch(g, VX_SH_CODEC_LAYERNORM, b, 4, &push, sizeof push, gx, gy, 1, label);
}

static vox_status act(vx_gpu *g, vx_gbind x, int64_t n, int mode, float lo, float hi, vx_gbind y, const char *label) {
    struct { uint32_t n, mode, x_base, y_base; float lo, hi; } push = {(uint32_t)n, (uint32_t)mode, 0, 0, lo, hi};
    vx_gbind b[2] = {vx_gop_whole(g, x, &push.x_base), vx_gop_whole(g, y, &push.y_base)};
    return grid_dispatch(g, VX_SH_CODEC_ACT, b, 2, &push, sizeof push, (uint64_t)n, label);
}
vox_status vx_gop_gelu(vx_gpu *g, vx_gbind x, int64_t n, vx_gbind y, const char *label) {
    return act(g, x, n, 0, 0.0f, 0.0f, y, label);
}
vox_status vx_gop_clamp(vx_gpu *g, vx_gbind x, int64_t n, float lo, float hi, vx_gbind y, const char *label) {
    return act(g, x, n, 1, lo, hi, y, label);
}

vox_status vx_gop_ola(vx_gpu *g, vx_gbind Y, int64_t T, int64_t co, int64_t k, int64_t r, vx_gbind tail, vx_gbind bias,
                      vx_gbind out, const char *label) {
    if (k != r && k != 2 * r) return vox_set_error(VOX_ERR_INTERNAL, "vx_gop_ola: k %lld, stride %lld", (long long)k, (long long)r);
    struct { uint32_t T, co, k, r, mode, y_base, t_base, b_base, o_base; } push = {
        (uint32_t)T, (uint32_t)co, (uint32_t)k, (uint32_t)r, 0, 0, 0, 0, 0};
    vx_gbind b[4] = {vx_gop_whole(g, Y, &push.y_base), vx_gop_whole(g, k != r ? tail : Y, &push.t_base),
                     vx_gop_whole(g, bias, &push.b_base), vx_gop_whole(g, out, &push.o_base)};
    vox_status st = grid_dispatch(g, VX_SH_CODEC_OLA, b, 4, &push, sizeof push, (uint64_t)(T * r * co), label);
    if (st != VOX_OK || k == r) return st;
    push.mode = 1;
    return grid_dispatch(g, VX_SH_CODEC_OLA, b, 4, &push, sizeof push, (uint64_t)(r * co), label);
}

vox_status vx_gop_ring(vx_gpu *g, vx_gbind kring, vx_gbind vring, vx_gbind kc, vx_gbind vc, int64_t n, int64_t kvd,
                       int64_t W, int64_t p0, int64_t src, int mode, int64_t layers, int64_t c_stride,
                       const char *label) {
    if (n <= 0 || layers <= 0) return VOX_OK;
    struct { uint32_t n, kvd, W, p0, src, mode, r_base, vr_base, c_base, vc_base, layers, c_stride; } push = {
        (uint32_t)n, (uint32_t)kvd, (uint32_t)W, (uint32_t)(p0 % W), (uint32_t)src, (uint32_t)mode, 0, 0, 0, 0,
        (uint32_t)layers, (uint32_t)c_stride};
    vx_gbind b[4] = {vx_gop_whole(g, kring, &push.r_base), vx_gop_whole(g, vring, &push.vr_base),
                     vx_gop_whole(g, kc, &push.c_base), vx_gop_whole(g, vc, &push.vc_base)};
    return grid_dispatch(g, VX_SH_CODEC_RING, b, 4, &push, sizeof push, (uint64_t)(layers * n * kvd), label);
}
