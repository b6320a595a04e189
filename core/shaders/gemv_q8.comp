#version 450
// GEMV with q8 weights: int8 codes [rows][cols] (4 per word) and one f32 scale per 32-block.
layout(std430, binding = 0) readonly buffer W { uint w[]; };
#extension GL_GOOGLE_include_directive : require
#include "gemv_quant_common.glsl"

int block_dot(uint r, uint b, uint xb) {
    uint wo = (r * p.cols + 32 * b) / 4, xo = 8 * xb;
    int s = 0;
    for (uint k = 0; k < 8; k++) s += dot4(w[wo + k], xq[xo + k]);
    return s;
}
