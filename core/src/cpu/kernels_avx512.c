/* The AVX-512 path (F/BW/DQ/VL): 16-lane instances of the float kernels (simd_elementwise.h,
 * simd_linear.h) and the q8/q4 integer-dot kernels (linear_q_avx512.c, VNNI where present). */
#define VX_SIMD_WIDTH 16
#include "cpu/simd.h"
#include "cpu/simd_elementwise.h"
#include "cpu/simd_linear.h"

void vx_kernels_init_avx512(vx_kernels *t) {
    t->name = "avx512";
    fill_elementwise(t);
    fill_linear(t);
    /* Without VNNI the AVX2 integer kernels (already in the table) do the q8/q4 work: the integer
     * partial sums are exact either way, only the float accumulation order is the AVX2 one. */
    if (vx_cpu()->avx512vnni) vx_linear_q_init_avx512(t);
}
