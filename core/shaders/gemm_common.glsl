// Shared by the tiled GEMM shaders (prefill, n > 4 x rows): y[i][y_offset + r] = x[i] . W[r]
// (+ bias), or y += that, with the push constants, bindings and outputs of the GEMV (gemv_common.glsl:
// stacked q|k|v and gate|up outputs, bias, residual add), so the host records either with one call.
// A workgroup of 256 computes a tile of TM = 64 x rows by TN = 32 weight rows: K goes in steps of
// BK columns through shared memory (64 for float weights, one 32-block for q8/q4); invocation (tx, ty)
// owns outputs (ty + 16 i, tx + 16 j), i < 4, j < 2, and adds their products in column order 0, 1, 2, ...
// (quantized: block by block).
// So an output's order of operations depends only on the row length: the same bits in any tile, for
// any n and any grouping of the prefill; it differs from the GEMV's (64-way tree), which serves n <= 4.
// gl_WorkGroupID.x: the tile of weight rows; .y: the tile of x rows. No subgroup size is assumed.
#define TM 64
#define TN 32
layout(local_size_x = 16, local_size_y = 16) in;
#include "linear_out.glsl"

uint gemm_tx() { return gl_LocalInvocationID.x; }
uint gemm_ty() { return gl_LocalInvocationID.y; }
uint gemm_lid() { return gl_LocalInvocationID.y * 16u + gl_LocalInvocationID.x; }   // 0 .. 255
uint gemm_r0() { return gl_WorkGroupID.x * TN; }   // first weight row (of this part) of the tile
uint gemm_i0() { return gl_WorkGroupID.y * TM; }   // first x row of the tile

// the epilogue of the tile's outputs
void gemm_finish(float acc[4][2]) {
    for (uint i = 0; i < 4; i++) {
        uint xi = gemm_i0() + gemm_ty() + 16u * i;
        if (xi >= p.n) continue;
        for (uint j = 0; j < 2; j++) {
            uint r = gemm_r0() + gemm_tx() + 16u * j;
            if (r < p.rows) linear_store(acc[i][j], xi, r);
        }
    }
}
