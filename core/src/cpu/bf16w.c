/* Packing weights for the bf16 convolution / GEMM kernels and their entry points (the kernels:
 * conv_bf16_avx512.c with AVX512-BF16, conv_bf16.h on the other SIMD paths).
 *
 * Packed layout (the same on every path): groups of 64 weight rows; per group, for each pair p of
 * packed columns (2p, 2p + 1), 64 uint32 words (row r: bf16 w[r][2p] in the low half, w[r][2p + 1] in
 * the high half, 0 beyond cols). */
#include <stdlib.h>
#include <string.h>

#include "../error.h"
#include "cpu/dispatch.h"

#define BW_NR 64

/* float -> bf16 bits, round-to-nearest-even, denormals to signed zero (as vcvtneps2bf16 under DAZ) */
uint16_t vx_bf16_rne(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((u & 0x7f800000u) == 0) return (uint16_t)((u >> 16) & 0x8000u); /* zero / denormal: signed 0 */
    if ((u & 0x7f800000u) == 0x7f800000u) return (uint16_t)((u >> 16) | ((u & 0xffff) ? 0x40 : 0)); /* inf, nan */
    return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

/* Packed column kc reads source column kc (a matrix) or, for a convolution's [c_out][c_in * k]
 * weight, tap j = kc / c_in of channel kc % c_in (tap-major: each tap's columns are one input row). */
static vox_status pack(const vx_mat *w, int64_t taps, int64_t c_in, vx_bf16w *out) {
    memset(out, 0, sizeof *out);
    const vx_kernels *kt = vx_kernels_active();
    if (!kt->conv_bf16)
        return vox_set_error(VOX_ERR_UNSUPPORTED, "bf16 products: the CPU path %s has no bf16 kernel", kt->name);
    if ((w->dtype != VOX_DTYPE_F32 && w->dtype != VOX_DTYPE_BF16) || w->rows % BW_NR || w->cols <= 0 ||
        (taps > 1 && (c_in % 2 || c_in * taps != w->cols)))
        return vox_set_error(VOX_ERR_UNSUPPORTED,
                             "bf16 packing: %lldx%lld matrix, %lld taps (needs f32/bf16, rows %% %d == 0, even c_in)",
                             (long long)w->rows, (long long)w->cols, (long long)taps, BW_NR);
    const int64_t rows = w->rows, cols = w->cols, pairs = (cols + 1) / 2;
    uint32_t *d = aligned_alloc(64, (size_t)(rows * pairs) * sizeof *d);
    if (!d) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    /* one source row at a time: its columns in packed order into a bf16 row (sequential reads of the
     * source), then spread over the row's lane of its group's pair words */
    uint16_t *h = calloc((size_t)(2 * pairs), sizeof *h);
    if (!h) {
        free(d);
        return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    }
    for (int64_t row = 0; row < rows; row++) {
        int64_t kc = 0;
        for (int64_t j = 0; j < (taps > 1 ? taps : 1); j++)
            for (int64_t c = 0; c < (taps > 1 ? c_in : cols); c++, kc++) {
                int64_t src = row * cols + (taps > 1 ? c * taps + j : c);
                h[kc] = w->dtype == VOX_DTYPE_F32 ? vx_bf16_rne(((const float *)w->data)[src]) : ((const uint16_t *)w->data)[src];
            }
        uint32_t *dst = d + (row / BW_NR) * pairs * BW_NR + row % BW_NR;
        for (int64_t p = 0; p < pairs; p++) dst[p * BW_NR] = (uint32_t)h[2 * p] | (uint32_t)h[2 * p + 1] << 16;
    }
    free(h);
    out->rows = rows, out->cols = cols, out->pairs = pairs, out->data = d;
    out->taps = taps > 1 ? taps : 1;
    out->tap_pairs = taps > 1 ? c_in / 2 : pairs;
    return VOX_OK;
}

vox_status vx_bf16w_pack(const vx_mat *w, vx_bf16w *out) { return pack(w, 1, w->cols, out); }

void vx_bf16_round(const float *x, int64_t n, uint16_t *h) {
    for (int64_t i = 0; i < n; i++) h[i] = vx_bf16_rne(x[i]);
}

/* Straight from a strided f32 matrix, without a contiguous copy: the attention packs its keys and its
 * values' transpose this way for every (sequence, head), where vx_bf16w_pack's one-element-at-a-time
 * gather had cost a tenth of the attention. Packed row r, column c is src[r ld + c], or src[c ld + r]
 * transposed; the words come out as vx_bf16w_pack makes them (the path's bf16_round: the same bits).
 *   row-major: each source row's 64-column block rounded along the row into a 64 x 32-word tile, then
 *   the tile transposed into the group's 32 pair columns;
 *   transposed: a pair's two source rows rounded along the packed rows, then interleaved. */
void vx_bf16w_pack_f32(const float *src, int64_t ld, int64_t rows, int64_t cols, int64_t rows_pad, int transposed,
                       uint32_t *data, vx_bf16w *out) {
    void (*round)(const float *, int64_t, uint16_t *) = vx_kernels_active()->bf16_round;
    const int64_t pairs = (cols + 1) / 2;
    memset(out, 0, sizeof *out);
    _Alignas(64) uint32_t tile[BW_NR][32];
    _Alignas(64) uint16_t lo[BW_NR], hi[BW_NR];
    for (int64_t g = 0; g < rows_pad / BW_NR; g++) {
        uint32_t *dg = data + g * pairs * BW_NR;
        const int64_t r0 = g * BW_NR, nr = rows - r0 < BW_NR ? (rows - r0 > 0 ? rows - r0 : 0) : BW_NR;
        if (transposed) {
            for (int64_t p = 0; p < pairs; p++) {
                uint32_t *d = dg + p * BW_NR;
                round(src + 2 * p * ld + r0, nr, lo);
                if (2 * p + 1 < cols) round(src + (2 * p + 1) * ld + r0, nr, hi);
                else memset(hi, 0, sizeof hi);
                for (int64_t r = 0; r < nr; r++) d[r] = (uint32_t)lo[r] | (uint32_t)hi[r] << 16;
                for (int64_t r = nr; r < BW_NR; r++) d[r] = 0;
            }
            continue;
        }
        for (int64_t p0 = 0; p0 < pairs; p0 += 32) {
            const int64_t np = pairs - p0 < 32 ? pairs - p0 : 32, c0 = 2 * p0, nc = cols - c0 < 64 ? cols - c0 : 64;
            memset(tile, 0, sizeof tile);
            for (int64_t r = 0; r < nr; r++) round(src + (r0 + r) * ld + c0, nc, (uint16_t *)tile[r]);
            for (int64_t p = 0; p < np; p++)
                for (int64_t r = 0; r < BW_NR; r++) dg[(p0 + p) * BW_NR + r] = tile[r][p];
        }
    }
    out->rows = rows_pad, out->cols = cols, out->pairs = pairs, out->taps = 1, out->tap_pairs = pairs, out->data = data;
}

vox_status vx_bf16w_pack_conv(const vx_mat *w, int64_t c_in, int64_t k, vx_bf16w *out) { return pack(w, k, c_in, out); }

void vx_bf16w_free(vx_bf16w *w) {
    free(w->data);
    memset(w, 0, sizeof *w);
}

vox_status vx_conv1d_bf16w(vx_pool *pool, const vx_bf16w *w, const float *bias, const float *x, int64_t n_out, int64_t dil,
                           float *y) {
    const vx_kernels *kt = vx_kernels_active();
    if (!w->data || !kt->conv_bf16)
        return vox_set_error(VOX_ERR_UNSUPPORTED, "bf16 products: %s", w->data ? "the CPU path has no bf16 kernel"
                                                                             : "the weight is not packed");
    return kt->conv_bf16(pool, w, bias, x, n_out, dil, y);
}

int vx_bf16w_takes_rounded(void) { return vx_kernels_active()->linear_bf16_rounded != NULL; }

vox_status vx_linear_bf16w_rounded(vx_pool *pool, const vx_bf16w *w, const uint16_t *xb, int64_t n, float *y) {
    const vx_kernels *kt = vx_kernels_active();
    if (!w->data || w->taps != 1 || !kt->linear_bf16_rounded)
        return vox_set_error(VOX_ERR_UNSUPPORTED, "vx_linear_bf16w_rounded: %s",
                             !kt->linear_bf16_rounded ? "the CPU path has no kernel for rounded rows" : "not a packed matrix");
    return kt->linear_bf16_rounded(pool, w, xb, n, y);
}

vox_status vx_linear_bf16w(vx_pool *pool, const vx_bf16w *w, const float *bias, const float *x, int64_t n, float *y) {
    if (w->taps != 1) return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "vx_linear_bf16w: a convolution's packed weight");
    return vx_conv1d_bf16w(pool, w, bias, x, n, 0, y);
}
