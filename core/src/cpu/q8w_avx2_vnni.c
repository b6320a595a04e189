/* vx_linear_q8w's tile with AVX-VNNI vpdpbusd on 256-bit registers (q8w_avx2.h): the same sums. */
#define Q8W_VNNI 1
#include "cpu/q8w_avx2.h"

void vx_q8w_init_avx2_vnni(vx_kernels *t) {
    t->q8w_tile = q8w_tile_avx2;
    t->q8w_pack_group = q8w_pack_group_avx2;
    t->dots.q8 = "AVX-VNNI";
}
