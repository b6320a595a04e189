/* The harmonic source's per-sample loop on AVX-512 (source.c has the scalar statement and the
 * arithmetic's origin): 16 samples at a time, the index and blend arithmetic with the same fused
 * multiply-adds, the sines and the tanh through the vectorized sin/tanh of simd_math.h (a few ulps
 * from libm's). Noise, when on, is already in src (one scalar normal per sample) and is added last,
 * as the scalar loop does. */
#define VX_SIMD_WIDTH 16
#include <stdint.h>

#include "cpu/simd.h"
#include "cpu/simd_math.h"

void kk_source_samples_avx512(const float *f0_curve, const float *phase, int64_t t2, const float *lw, float lb,
                              float sine_amp, float voiced_threshold, int64_t hop, int add_noise, int64_t begin,
                              int64_t end, float *src);

void kk_source_samples_avx512(const float *f0_curve, const float *phase, int64_t t2, const float *lw, float lb,
                              float sine_amp, float voiced_threshold, int64_t hop, int add_noise, int64_t begin,
                              int64_t end, float *src) {
    const __m512 scale = _mm512_set1_ps((float)(1.0 / 300.0)), half = _mm512_set1_ps(0.5f), one = _mm512_set1_ps(1.0f);
    const __m512i last = _mm512_set1_epi32((int32_t)(t2 - 1)), lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9,
                                                                                           10, 11, 12, 13, 14, 15);
    const __m512i nine = _mm512_set1_epi32(9);
    for (int64_t j0 = begin; j0 < end; j0 += 16) {
        const int64_t m = end - j0 < 16 ? end - j0 : 16;
        const __mmask16 k = (__mmask16)((1u << m) - 1u);
        const __m512i jv = _mm512_add_epi32(_mm512_set1_epi32((int32_t)j0), lane);
        /* s = fma(1/300, j + 0.5, -0.5) clamped at 0; i0 = floor(s); i1 = i0 + 1 below the last frame */
        __m512 s = _mm512_fmadd_ps(scale, _mm512_add_ps(_mm512_cvtepi32_ps(jv), half), _mm512_set1_ps(-0.5f));
        s = _mm512_max_ps(s, _mm512_setzero_ps());
        const __m512i i0 = _mm512_cvttps_epi32(s);
        const __m512i i1 = _mm512_mask_add_epi32(i0, _mm512_cmplt_epi32_mask(i0, last), i0, _mm512_set1_epi32(1));
        const __m512 l1 = _mm512_sub_ps(s, _mm512_cvtepi32_ps(i0)), l0 = _mm512_sub_ps(one, l1);
        /* the frame of each sample (j / hop): the block crosses at most one frame boundary */
        const int64_t f0i = j0 / hop, rem = j0 % hop;
        const __m512i fi = _mm512_mask_add_epi32(_mm512_set1_epi32((int32_t)f0i),
                                                 _mm512_cmpge_epi32_mask(_mm512_add_epi32(lane, _mm512_set1_epi32((int32_t)rem)),
                                                                         _mm512_set1_epi32((int32_t)hop)),
                                                 _mm512_set1_epi32((int32_t)f0i), _mm512_set1_epi32(1));
        const __m512 f0 = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), k, fi, f0_curve, 4);
        const __mmask16 voiced = _mm512_cmp_ps_mask(f0, _mm512_set1_ps(voiced_threshold), _CMP_GT_OQ);
        const __m512 uv = _mm512_maskz_mov_ps(voiced, one);
        const __m512i b0 = _mm512_mullo_epi32(i0, nine), b1 = _mm512_mullo_epi32(i1, nine);
        __m512 acc = _mm512_set1_ps(lb);
        for (int h = 0; h < 9; h++) {
            const __m512i hh = _mm512_set1_epi32(h);
            const __m512 p0 = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), k, _mm512_add_epi32(b0, hh), phase, 4);
            const __m512 p1 = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), k, _mm512_add_epi32(b1, hh), phase, 4);
            const __m512 ph = _mm512_fmadd_ps(l0, p0, _mm512_mul_ps(l1, p1));
            const __m512 sw = _mm512_mul_ps(_mm512_mul_ps(v_sin(ph), _mm512_set1_ps(sine_amp)), uv);
            acc = _mm512_add_ps(acc, _mm512_mul_ps(_mm512_set1_ps(lw[h]), sw));
        }
        if (add_noise) acc = _mm512_add_ps(acc, _mm512_maskz_loadu_ps(k, src + j0));
        _mm512_mask_storeu_ps(src + j0, k, v_tanh(acc));
    }
}
