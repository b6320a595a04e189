/* vx_linear_q8w's tile with NEON sdot (q8w_neon.h). */
#define Q8W_USDOT 0
#include "cpu/q8w_neon.h"

void vx_q8w_init_neon_dotprod(vx_kernels *t) {
    t->q8w_tile = q8w_tile_neon;
    t->q8w_pack_group = q8w_pack_group_neon;
    t->dots.q8 = "NEON sdot";
}
