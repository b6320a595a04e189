/* The AVX2 + FMA + F16C path (the x86-64 baseline): 8-lane instances of the float kernels
 * (simd_elementwise.h, simd_linear.h) and the q8/q4 integer-dot kernels (linear_q_avx2.c). */
#define VX_SIMD_WIDTH 8
#include "cpu/simd.h"
#include "cpu/simd_elementwise.h"
#include "cpu/simd_linear.h"

void vx_kernels_init_avx2(vx_kernels *t) {
    t->name = "avx2";
    fill_elementwise(t);
    fill_linear(t);
    vx_linear_q_init_avx2(t);
}
