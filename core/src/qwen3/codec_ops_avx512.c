/* q3_matmul_nn for f16 / bf16 weights, AVX-512 (body: codec_ops_simd.c). */
#include <immintrin.h>
#include <string.h>

#include "codec.h"

#define Q3_W 16
#define Q3_FN(name) name##_avx512
#define VF __m512
#define VZERO() _mm512_setzero_ps()
#define VSET1(a) _mm512_set1_ps(a)
#define VFMA(a, b, c) _mm512_fmadd_ps(a, b, c)
#define VSTOREU(p, v) _mm512_storeu_ps(p, v)
#define VBF16(p) _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(p))), 16))
#define VF16(p) _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(p)))

void q3_matmul_nn16_avx512(const vx_mat *wm, const float *x, int64_t n, float *y, int64_t c0, int64_t c1);
#include "codec_ops_simd.c"
