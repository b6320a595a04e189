#version 450
// GEMM on cooperative matrices (tensor cores), f16 weights [rows][cols], two per word.
#extension GL_GOOGLE_include_directive : require
#include "gemm_cm.glsl"
layout(std430, binding = 0) readonly buffer W { uint w[]; };
float w_load(uint r, uint k) {
    uint e = r * p.cols + k;
    return unpackHalf2x16(w[e >> 1] >> (16u * (e & 1u))).x;   // no dynamic index into a vector
}
layout(std430, binding = 0) readonly buffer W4 { uvec4 w4[]; };   // the same buffer, 8 weights at a time
void w_load8(uint r, uint k, out vec4 a, out vec4 b) {
    uvec4 q = w4[(r * p.cols + k) >> 3];
    a = vec4(unpackHalf2x16(q.x), unpackHalf2x16(q.y));
    b = vec4(unpackHalf2x16(q.z), unpackHalf2x16(q.w));
}
