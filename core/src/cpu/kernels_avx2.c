#include "cpu/dispatch.h"
void vx_kernels_init_avx2(vx_kernels *t) { t->name = "avx2"; }
