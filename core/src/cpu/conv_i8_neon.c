/* The int8 dot-product convolution on any aarch64 (smlal on int16-widened codes; conv_i8_neon.h). */
#define CI_DOT 0
#define CI_SUFFIX(name) name##_neon
#include "cpu/conv_i8_neon.h"

void vx_conv_i8_init_neon(vx_kernels *t) {
    t->conv_i8 = ci_conv_neon;
    t->conv_i8_work = ci_work_size_neon;
    t->dots.int8 = "NEON smlal";
    t->dots.int8_widened = 1;
}
