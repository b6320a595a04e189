/* vx_linear for q8/q4 weights with the DotProd extension: sdot, the same lane sums as the baseline
 * kernel (body: linear_q_neon.h). */
#define Q_DOT 1
#define Q_INIT vx_linear_q_init_neon_dotprod
#include "cpu/linear_q_neon.h"
