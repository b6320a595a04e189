/* vx_linear for q8/q4 weights on AVX2: vpmaddubsw + vpmaddwd (body: linear_q_avx2.h). */
#define Q_VNNI 0
#define Q_INIT vx_linear_q_init_avx2
#include "cpu/linear_q_avx2.h"
