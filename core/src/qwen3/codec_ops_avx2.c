/* q3_matmul_nn for f16 / bf16 weights, AVX2 + FMA + F16C (body: codec_ops_simd.c). */
#include <immintrin.h>
#include <string.h>

#include "codec.h"

#define Q3_W 8
#define Q3_FN(name) name##_avx2
#define VF __m256
#define VZERO() _mm256_setzero_ps()
#define VSET1(a) _mm256_set1_ps(a)
#define VFMA(a, b, c) _mm256_fmadd_ps(a, b, c)
#define VSTOREU(p, v) _mm256_storeu_ps(p, v)
#define VBF16(p) _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(p))), 16))
#define VF16(p) _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(p)))

void q3_matmul_nn16_avx2(const vx_mat *wm, const float *x, int64_t n, float *y, int64_t c0, int64_t c1);
#include "codec_ops_simd.c"
