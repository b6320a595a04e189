/* The avx512 paths (AVX-512 F/BW/DQ/VL): 16-lane instances of the float kernels (simd_elementwise.h,
 * simd_linear.h) and of the bf16-weight convolution (conv_bf16.h); avx512-vnni adds the q8/q4 and int8
 * convolution kernels with AVX512-VNNI (linear_q_avx512.c, conv_i8_avx512.c), avx512-vnni-bf16 the
 * vdpbf16ps convolution (linear_bf16_avx512.c). Without VNNI the integer work stays on the avx2
 * kernels inherited from that table (the same integer sums; the q8/q4 float order is the avx2 one). */
#define VX_SIMD_WIDTH 16
#include "cpu/simd.h"
#include "cpu/simd_elementwise.h"
#include "cpu/simd_linear.h"
#include "cpu/conv_bf16.h"

void vx_kernels_init_avx512(vx_kernels *t) {
    fill_elementwise(t);
    fill_linear(t);
    fill_conv_bf16(t);
}

void vx_kernels_init_avx512_vnni(vx_kernels *t) {
    vx_linear_q_init_avx512(t);
    vx_conv_i8_init_avx512(t);
    vx_q8w_init_avx512(t);
}

/* vcvtneps2bf16: the bits of v_bf16_bits in one instruction (avx512-vnni-bf16 and up only) */
V_INLINE void store_bf16_cvt(int16_t *p, vf e) { _mm256_storeu_si256((__m256i *)p, (__m256i)_mm512_cvtneps_pbh(e)); }
static void exp_rows_bf16_cvt(const float *s, int64_t lds, int64_t rows, int64_t n, float scale, uint16_t *p,
                              int64_t ldp, float *sum) {
    exp_rows_with(s, lds, rows, n, scale, NULL, p, ldp, sum, store_bf16_cvt);
}

void vx_kernels_init_avx512_bf16(vx_kernels *t) {
    vx_conv_bf16_init_avx512(t);
    t->exp_rows_bf16 = exp_rows_bf16_cvt;
}
