#version 450
// GEMV with q4 weights: per 32-block 16 bytes, byte j holding element j in its low nibble and element
// j + 16 in its high nibble, code c standing for c - 8; one f32 scale per block.
layout(std430, binding = 0) readonly buffer W { uint w[]; };
#extension GL_GOOGLE_include_directive : require
#include "gemv_quant_common.glsl"

int block_dot(uint r, uint b, uint xb) {
    uint wo = (r * p.cols + 32 * b) / 8, xo = 8 * xb;
    int s = 0;
    for (uint k = 0; k < 4; k++) {
        uint v = w[wo + k];
        uint lo = v & 0x0f0f0f0fu, hi = (v >> 4) & 0x0f0f0f0fu;
        // nibble - 8 as signed bytes: (c ^ 8) - 8 per byte would need care; subtract per lane instead
        s += dot4(lo, xq[xo + k]) + dot4(hi, xq[xo + 4 + k]);
        // sum of the x codes times 8, taken off below
        s -= 8 * (dot4(0x01010101u, xq[xo + k]) + dot4(0x01010101u, xq[xo + 4 + k]));
    }
    return s;
}
