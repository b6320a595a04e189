#version 450
// The one-product cooperative-matrix GEMM (gemm_cmh.glsl), bf16 weights [rows][cols], two per word, taken
// as float16: exact for 2^-17 <= |w| < 65504 (the host uses it only for matrices below 65504; smaller
// values round to float16's subnormal step, 6e-8).
#extension GL_GOOGLE_include_directive : require
#include "gemm_cmh.glsl"
f16vec4 w_lo(uvec4 q) {
    return f16vec4(vec4(uintBitsToFloat(q.x << 16), uintBitsToFloat(q.x & 0xffff0000u), uintBitsToFloat(q.y << 16),
                        uintBitsToFloat(q.y & 0xffff0000u)));
}
f16vec4 w_hi(uvec4 q) {
    return f16vec4(vec4(uintBitsToFloat(q.z << 16), uintBitsToFloat(q.z & 0xffff0000u), uintBitsToFloat(q.w << 16),
                        uintBitsToFloat(q.w & 0xffff0000u)));
}
