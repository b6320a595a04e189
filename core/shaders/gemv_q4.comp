#version 450
// GEMV with q4 weights: per 32-block 16 bytes (one load), byte j holding element j in its low nibble
// and element j + 16 in its high nibble, code c standing for c - 8; one f32 scale per block.
// sum (c - 8) x = sum c x - 8 sum x, all exact integers.
layout(std430, binding = 0) readonly buffer W { uvec4 w[]; };
#extension GL_GOOGLE_include_directive : require
#include "gemv_quant_common.glsl"

uvec4 lo, hi;
void load_block(uint r, uint b) {
    uvec4 v = w[(r * p.cols + 32 * b) / 32];
    lo = v & 0x0f0f0f0fu;
    hi = (v >> 4) & 0x0f0f0f0fu;
}

int block_dot(uint xb) {
    uvec4 x0 = xq[2 * xb], x1 = xq[2 * xb + 1];
    int s = dot4(lo.x, x0.x) + dot4(lo.y, x0.y) + dot4(lo.z, x0.z) + dot4(lo.w, x0.w) +
            dot4(hi.x, x1.x) + dot4(hi.y, x1.y) + dot4(hi.z, x1.z) + dot4(hi.w, x1.w);
    const uint ones = 0x01010101u;
    int xs = dot4(ones, x0.x) + dot4(ones, x0.y) + dot4(ones, x0.z) + dot4(ones, x0.w) +
             dot4(ones, x1.x) + dot4(ones, x1.y) + dot4(ones, x1.z) + dot4(ones, x1.w);
    return s - 8 * xs;
}
