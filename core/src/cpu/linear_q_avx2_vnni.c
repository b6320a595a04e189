/* vx_linear for q8/q4 weights with AVX-VNNI: vpdpbusd on 256-bit registers, the same lane sums as the
 * AVX2 kernel (body: linear_q_avx2.h). */
#define Q_VNNI 1
#define Q_INIT vx_linear_q_init_avx2_vnni
#include "cpu/linear_q_avx2.h"
