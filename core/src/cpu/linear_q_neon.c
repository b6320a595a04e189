/* vx_linear for q8/q4 weights on any aarch64: smull + pairwise adds (body: linear_q_neon.h). */
#define Q_DOT 0
#define Q_INIT vx_linear_q_init_neon
#include "cpu/linear_q_neon.h"
