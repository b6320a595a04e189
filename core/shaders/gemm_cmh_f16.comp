#version 450
// The one-product cooperative-matrix GEMM (gemm_cmh.glsl), f16 weights [rows][cols], two per word.
#extension GL_GOOGLE_include_directive : require
#include "gemm_cmh.glsl"
f16vec4 w_lo(uvec4 q) { return f16vec4(unpackFloat2x16(q.x), unpackFloat2x16(q.y)); }
f16vec4 w_hi(uvec4 q) { return f16vec4(unpackFloat2x16(q.z), unpackFloat2x16(q.w)); }
