/* The avx2 path (AVX2 + FMA + F16C, the x86-64 baseline): 8-lane instances of the float kernels
 * (simd_elementwise.h, simd_linear.h), the bf16-weight convolution (conv_bf16.h), the q8/q4
 * integer-dot kernels (linear_q_avx2.c) and the int8 convolution (conv_i8_avx2.c, vpmaddwd). */
#define VX_SIMD_WIDTH 8
#include "cpu/simd.h"
#include "cpu/simd_elementwise.h"
#include "cpu/simd_linear.h"
#include "cpu/conv_bf16.h"

void vx_kernels_init_avx2(vx_kernels *t) {
    fill_elementwise(t);
    fill_linear(t);
    fill_conv_bf16(t);
    vx_linear_q_init_avx2(t);
    vx_conv_i8_init_avx2(t);
    vx_q8w_init_avx2(t);
}

/* avx2-vnni: the avx2 table with AVX-VNNI's vpdpbusd in the integer kernels (the same bits). */
void vx_kernels_init_avx2_vnni(vx_kernels *t) {
    vx_linear_q_init_avx2_vnni(t);
    vx_conv_i8_init_avx2_vnni(t);
    vx_q8w_init_avx2_vnni(t);
}
