#version 450
// Tiled GEMM (prefill) with q4 weights: per 32-block 16 bytes, byte j holding element j in its low
// nibble and element j + 16 in its high nibble, code c standing for c - 8; one f32 scale per block.
#extension GL_GOOGLE_include_directive : require
#include "gemm_quant.glsl"
layout(std430, binding = 0) readonly buffer W { uint w[]; };
int wq_load(uint r, uint b, uint k) {
    uint j = k & 15u, word = w[(r * p.cols + 32u * b) / 8u + j / 4u];
    uint byte = (word >> (8u * (j & 3u))) & 0xffu;
    return int(k < 16u ? byte & 15u : byte >> 4) - 8;
}
