/* Packing weights for the bf16 dot-product GEMM (the kernel and the layout: linear_bf16_avx512.c). */
#include <stdlib.h>
#include <string.h>

#include "../error.h"
#include "../kernels.h"

#define BW_NR 64

/* float -> bf16 bits, round-to-nearest-even, denormals to signed zero (as vcvtneps2bf16 under DAZ) */
uint16_t vx_bf16_rne(float f);
uint16_t vx_bf16_rne(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((u & 0x7f800000u) == 0) return (uint16_t)((u >> 16) & 0x8000u); /* zero / denormal: signed 0 */
    if ((u & 0x7f800000u) == 0x7f800000u) return (uint16_t)((u >> 16) | ((u & 0xffff) ? 0x40 : 0)); /* inf, nan */
    return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

vox_status vx_bf16w_pack(const vx_mat *w, vx_bf16w *out) {
    memset(out, 0, sizeof *out);
    const vx_cpu_info *cpu = vx_cpu();
    if (cpu->path != VX_PATH_AVX512 || !cpu->avx512bf16)
        return vox_set_error(VOX_ERR_UNSUPPORTED, "bf16 dot products need AVX512-BF16 (CPU path %s)", cpu->name);
    if ((w->dtype != VOX_DTYPE_F32 && w->dtype != VOX_DTYPE_BF16) || w->rows % BW_NR || w->cols <= 0)
        return vox_set_error(VOX_ERR_UNSUPPORTED, "bf16 packing: %lldx%lld matrix (needs f32/bf16, rows %% %d == 0)",
                             (long long)w->rows, (long long)w->cols, BW_NR);
    const int64_t rows = w->rows, cols = w->cols, pairs = (cols + 1) / 2;
    uint32_t *d = aligned_alloc(64, (size_t)(rows * pairs) * sizeof *d);
    if (!d) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    for (int64_t g = 0; g < rows / BW_NR; g++)
        for (int64_t r = 0; r < BW_NR; r++) {
            int64_t row = g * BW_NR + r;
            for (int64_t p = 0; p < pairs; p++) {
                uint16_t h[2] = {0, 0};
                for (int e = 0; e < 2; e++) {
                    int64_t k = 2 * p + e;
                    if (k >= cols) break;
                    if (w->dtype == VOX_DTYPE_F32) h[e] = vx_bf16_rne(((const float *)w->data)[row * cols + k]);
                    else h[e] = ((const uint16_t *)w->data)[row * cols + k];
                }
                d[(g * pairs + p) * BW_NR + r] = (uint32_t)h[0] | (uint32_t)h[1] << 16;
            }
        }
    out->rows = rows, out->cols = cols, out->pairs = pairs, out->data = d;
    return VOX_OK;
}

void vx_bf16w_free(vx_bf16w *w) {
    free(w->data);
    memset(w, 0, sizeof *w);
}

#if defined(__x86_64__) || defined(_M_X64)
vox_status vx_linear_bf16w_avx512(vx_pool *pool, const vx_bf16w *w, const float *bias, const float *x, int64_t n, float *y);
#endif

vox_status vx_linear_bf16w(vx_pool *pool, const vx_bf16w *w, const float *bias, const float *x, int64_t n, float *y) {
#if defined(__x86_64__) || defined(_M_X64)
    if (w->data) return vx_linear_bf16w_avx512(pool, w, bias, x, n, y); /* packed only where supported */
#endif
    (void)pool, (void)bias, (void)x, (void)n, (void)y;
    return vox_set_error(VOX_ERR_UNSUPPORTED, "bf16 dot products are not available on this CPU");
}
