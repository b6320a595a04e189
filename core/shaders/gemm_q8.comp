#version 450
// Tiled GEMM (prefill) with q8 weights: int8 codes [rows][cols], one f32 scale per 32-block.
#extension GL_GOOGLE_include_directive : require
#include "gemm_quant.glsl"
layout(std430, binding = 0) readonly buffer W { uint w[]; };
int wq_load(uint r, uint b, uint k) {
    uint e = r * p.cols + 32u * b + k;
    return bitfieldExtract(int(w[e >> 2]), int(8u * (e & 3u)), 8);
}
