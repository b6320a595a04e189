#version 450
// The second pass of a split-K codec GEMM (codec_gemm_common.glsl, flags bit 6): output (m, n) is the
// partial sums P[c][m][n] (bound at binding 0, from x_base) added in chunk order, ((P0 + P1) + P2) + ...,
// then codec_epilogue.glsl's epilogue: the same bits as a workgroup that walks every chunk itself.
// Binding 1 (the weight) is not read.
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer P { float part[]; };
layout(std430, binding = 1) readonly buffer W { float w_unused[]; };
#include "codec_epilogue.glsl"

void main() {
    uint e = gl_GlobalInvocationID.x + gl_NumWorkGroups.x * 64 * gl_GlobalInvocationID.y;
    uint mn = p.M * p.N;
    if (e >= mn) return;
    uint nc = (p.K + KC - 1u) / KC;
    float v = part[p.x_base + e];
    for (uint c = 1; c < nc; c++) v = v + part[p.x_base + c * mn + e];
    codec_store(e / p.N, e % p.N, v);
}
