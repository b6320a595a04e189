/* vx_linear_q8w's tile with NEON I8MM usdot (q8w_neon.h): unsigned x codes from the block's correction,
 * as the AVX512-VNNI tile. */
#define Q8W_USDOT 1
#include "cpu/q8w_neon.h"

void vx_q8w_init_neon_i8mm(vx_kernels *t) {
    t->q8w_tile = q8w_tile_neon;
    t->q8w_pack_group = q8w_pack_group_neon;
    t->dots.q8 = "NEON I8MM usdot";
}
