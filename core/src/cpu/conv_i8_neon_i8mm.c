/* The int8 dot-product convolution with the I8MM extension (usdot: unsigned codes times signed weight
 * codes, as vpdpbusd; conv_i8_neon.h). */
#define CI_DOT 2
#define CI_SUFFIX(name) name##_neon_i8mm
#include "cpu/conv_i8_neon.h"

void vx_conv_i8_init_neon_i8mm(vx_kernels *t) {
    t->conv_i8 = ci_conv_neon_i8mm;
    t->conv_i8_work = ci_work_size_neon_i8mm;
    t->dots.int8 = "NEON I8MM usdot";
    t->dots.int8_widened = 0;
}
