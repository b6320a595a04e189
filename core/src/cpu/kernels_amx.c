/* The amx path (kernels.h): the avx512-vnni-bf16 table with the large products on AMX tiles: the
 * int8 convolution (AMX-INT8, the same bits as AVX512-VNNI: conv_i8_amx.c) and the bf16 convolution /
 * GEMM (AMX-BF16: linear_bf16_amx.c). The GEMVs of one or a few rows stay on AVX-512: a tile product
 * computes 16 rows, so a single row would waste 15/16 of it. */
#include "cpu/dispatch.h"

void vx_kernels_init_amx(vx_kernels *t) {
    vx_conv_i8_init_amx(t);
    vx_conv_bf16_init_amx(t);
}
