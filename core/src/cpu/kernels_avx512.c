#include "cpu/dispatch.h"
void vx_kernels_init_avx512(vx_kernels *t) { t->name = "avx512"; }
