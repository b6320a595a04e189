/* The int8 dot-product convolution with the DotProd extension (sdot on offset codes; conv_i8_neon.h). */
#define CI_DOT 1
#define CI_SUFFIX(name) name##_neon_dotprod
#include "cpu/conv_i8_neon.h"

void vx_conv_i8_init_neon_dotprod(vx_kernels *t) {
    t->conv_i8 = ci_conv_neon_dotprod;
    t->conv_i8_work = ci_work_size_neon_dotprod;
    t->dots.int8 = "NEON DotProd sdot";
    t->dots.int8_widened = 0;
}
