#version 450
// GEMV with q8 weights: int8 codes [rows][cols] and one f32 scale per 32-block; a block is two
// 16-byte loads of the weights and two of the activation codes.
layout(std430, binding = 0) readonly buffer W { uvec4 w[]; };
#extension GL_GOOGLE_include_directive : require
#include "gemv_quant_common.glsl"

uvec4 w0, w1;
void load_block(uint r, uint b) {
    uint wo = (r * p.cols + 32 * b) / 16;
    w0 = w[wo];
    w1 = w[wo + 1];
}

int block_dot(uint xb) {
    uvec4 x0 = xq[2 * xb], x1 = xq[2 * xb + 1];
    return dot4(w0.x, x0.x) + dot4(w0.y, x0.y) + dot4(w0.z, x0.z) + dot4(w0.w, x0.w) +
           dot4(w1.x, x1.x) + dot4(w1.y, x1.y) + dot4(w1.z, x1.z) + dot4(w1.w, x1.w);
}
