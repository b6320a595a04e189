/* The aarch64 paths. neon (Advanced SIMD, the aarch64 baseline): 4-lane instances of the float kernels
 * (simd_elementwise.h, simd_linear.h), the bf16-weight convolution with the weights widened
 * (conv_bf16.h), the q8/q4 integer-dot kernels (linear_q_neon.c) and the int8 convolution
 * (conv_i8_neon.c, smlal). neon-dotprod replaces the integer kernels by sdot ones (the same bits) and
 * adds vx_linear_q8w's tile (q8w_neon_dotprod.c), neon-i8mm the int8 convolution and that tile by usdot
 * ones (the same bits), neon-i8mm-bf16 the bf16 convolution by bfdot (x rounded to bf16 too). This file is compiled for the baseline only: the extensions' kernels
 * live in files of their own (CMakeLists.txt gives each its -march). */
#define VX_SIMD_WIDTH 4
#include "cpu/simd.h"
#include "cpu/simd_elementwise.h"
#include "cpu/simd_linear.h"
#include "cpu/conv_bf16.h"

void vx_linear_q_init_neon(vx_kernels *t);
void vx_linear_q_init_neon_dotprod(vx_kernels *t);
void vx_conv_i8_init_neon(vx_kernels *t);
void vx_conv_i8_init_neon_dotprod(vx_kernels *t);
void vx_conv_i8_init_neon_i8mm(vx_kernels *t);
void vx_conv_bf16_init_neon_bf16(vx_kernels *t);
void vx_q8w_init_neon_dotprod(vx_kernels *t);
void vx_q8w_init_neon_i8mm(vx_kernels *t);

void vx_kernels_init_neon(vx_kernels *t) {
    fill_elementwise(t);
    fill_linear(t);
    fill_conv_bf16(t);
    vx_linear_q_init_neon(t);
    vx_conv_i8_init_neon(t);
}

void vx_kernels_init_neon_dotprod(vx_kernels *t) {
    vx_linear_q_init_neon_dotprod(t);
    vx_conv_i8_init_neon_dotprod(t);
    vx_q8w_init_neon_dotprod(t);
}

void vx_kernels_init_neon_i8mm(vx_kernels *t) {
    vx_conv_i8_init_neon_i8mm(t);
    vx_q8w_init_neon_i8mm(t);
}

void vx_kernels_init_neon_bf16(vx_kernels *t) { vx_conv_bf16_init_neon_bf16(t); }
