#version 450
// Tiled GEMM (prefill) with bf16 weights [rows][cols], two per word (element e in half e & 1).
#extension GL_GOOGLE_include_directive : require
#include "gemm_float.glsl"
layout(std430, binding = 0) readonly buffer W { uint w[]; };
float w_load(uint r, uint k) {
    uint e = r * p.cols + k;
    return uintBitsToFloat(((w[e >> 1] >> (16u * (e & 1u))) & 0xffffu) << 16);
}
