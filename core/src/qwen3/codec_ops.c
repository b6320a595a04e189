/* Kernels the codec decoder needs beyond kernels.h.
 *
 * q3_matmul_nn: y[n][m] = x[n][k] . W[k][m] with W stored [k, m] (a torch ConvTranspose1d weight
 * [c_in][c_out * taps] used in place) in f32, f16 or bf16. f32 is vx_matmul_nn_f32; the 16-bit
 * dtypes are done here (kernels.h has no 16-bit nn product): portable C below, AVX2 / AVX-512 in
 * codec_ops_avx2.c / codec_ops_avx512.c (one body, codec_ops_simd.c), chosen once per process from
 * vx_cpu()->path. Determinism as kernels.h rule 1: an element y[i][j] is computed by one thread as
 * ((0 + x[i][0] w[0][j]) + x[i][1] w[1][j]) + ..., in k order (fused multiply-adds on the SIMD
 * paths), whatever n, the thread count or the column range a thread gets. */
#include <string.h>

#include "codec.h"

static inline float h2f(uint16_t h) {
    uint32_t sign = (uint32_t)(h >> 15) << 31, e = (h >> 10) & 31u, m = h & 1023u, bits;
    if (e == 0) {
        if (m == 0) {
            bits = sign;
        } else { /* subnormal half: normalize */
            e = 113;
            while (!(m & 1024u)) m <<= 1, e--;
            bits = sign | (e << 23) | ((m & 1023u) << 13);
        }
    } else if (e == 31) {
        bits = sign | 0x7F800000u | (m << 13);
    } else {
        bits = sign | ((e + 112u) << 23) | (m << 13);
    }
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

static inline float bf2f(uint16_t h) {
    uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

#define JB 256 /* columns per work item */

typedef struct {
    const vx_mat *w;
    const float *x;
    float *y;
    int64_t n;
} nn_job;

static void nn_range(void *ctx, int64_t b0, int64_t b1) {
    const nn_job *J = ctx;
    const int64_t k = J->w->rows, m = J->w->cols;
    float wb[JB];
    const uint16_t *w16 = J->w->data;
    const int bf = J->w->dtype == VOX_DTYPE_BF16;
    for (int64_t blk = b0; blk < b1; blk++) {
        const int64_t j0 = blk * JB, nj = m - j0 < JB ? m - j0 : JB;
        for (int64_t i = 0; i < J->n; i++) memset(J->y + i * m + j0, 0, (size_t)nj * sizeof(float));
        for (int64_t kk = 0; kk < k; kk++) {
            const uint16_t *src = w16 + kk * m + j0;
            if (bf)
                for (int64_t j = 0; j < nj; j++) wb[j] = bf2f(src[j]);
            else
                for (int64_t j = 0; j < nj; j++) wb[j] = h2f(src[j]);
            for (int64_t i = 0; i < J->n; i++) {
                const float a = J->x[i * k + kk];
                float *yr = J->y + i * m + j0;
                for (int64_t j = 0; j < nj; j++) yr[j] = yr[j] + a * wb[j];
            }
        }
    }
}

#ifdef VOX_X86
void q3_matmul_nn16_avx2(const vx_mat *wm, const float *x, int64_t n, float *y, int64_t c0, int64_t c1);
void q3_matmul_nn16_avx512(const vx_mat *wm, const float *x, int64_t n, float *y, int64_t c0, int64_t c1);

static void nn_range_avx2(void *ctx, int64_t b0, int64_t b1) {
    const nn_job *J = ctx;
    const int64_t m = J->w->cols;
    q3_matmul_nn16_avx2(J->w, J->x, J->n, J->y, b0 * JB, b1 * JB < m ? b1 * JB : m);
}
static void nn_range_avx512(void *ctx, int64_t b0, int64_t b1) {
    const nn_job *J = ctx;
    const int64_t m = J->w->cols;
    q3_matmul_nn16_avx512(J->w, J->x, J->n, J->y, b0 * JB, b1 * JB < m ? b1 * JB : m);
}
#endif

void q3_matmul_nn(vx_pool *pool, const vx_mat *w, const float *x, int64_t n, float *y) {
    if (n <= 0) return;
    if (w->dtype == VOX_DTYPE_F32) {
        vx_matmul_nn_f32(pool, w->data, w->rows, w->cols, x, n, y);
        return;
    }
    /* the path is fixed per process (kernels.h rule 2): vx_cpu()->path, as the kernels choose it */
    vx_range_fn fn = nn_range;
#ifdef VOX_X86
    const vx_cpu_info *c = vx_cpu();
    if (c->path >= VX_PATH_AVX512)
        fn = nn_range_avx512;
    else if (c->path >= VX_PATH_AVX2 && c->fma && c->f16c)
        fn = nn_range_avx2;
#endif
    nn_job j = {.w = w, .x = x, .y = y, .n = n};
    vx_pool_for(pool, (w->cols + JB - 1) / JB, 1, fn, &j);
}
