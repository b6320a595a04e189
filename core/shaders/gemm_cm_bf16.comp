#version 450
// GEMM on cooperative matrices (tensor cores), bf16 weights [rows][cols], two per word, taken as float16:
// exact for 2^-17 <= |w| < 65504 (the host uses this shader only for matrices below 65504; smaller
// values round to float16's subnormal step, 6e-8).
#extension GL_GOOGLE_include_directive : require
#include "gemm_cm.glsl"
layout(std430, binding = 0) readonly buffer W { uint w[]; };
float w_load(uint r, uint k) {
    uint e = r * p.cols + k;
    return uintBitsToFloat(((w[e >> 1] >> (16u * (e & 1u))) & 0xffffu) << 16);
}
layout(std430, binding = 0) readonly buffer W4 { uvec4 w4[]; };   // the same buffer, 8 weights at a time
void w_load8(uint r, uint k, out vec4 a, out vec4 b) {
    uvec4 q = w4[(r * p.cols + k) >> 3];
    a = vec4(uintBitsToFloat(q.x << 16), uintBitsToFloat(q.x & 0xffff0000u), uintBitsToFloat(q.y << 16),
             uintBitsToFloat(q.y & 0xffff0000u));
    b = vec4(uintBitsToFloat(q.z << 16), uintBitsToFloat(q.z & 0xffff0000u), uintBitsToFloat(q.w << 16),
             uintBitsToFloat(q.w & 0xffff0000u));
}
