#version 450
// GEMV with f32 weights, 16-byte loads (cols % 4 == 0, x 16-byte aligned): invocation t takes the
// 4-element chunks t, t + 64, ... and adds their products in element order.
#extension GL_GOOGLE_include_directive : require
#define YB 2
#include "gemv_common.glsl"
layout(std430, binding = 0) readonly buffer W { vec4 w[]; };
layout(std430, binding = 1) readonly buffer X { vec4 x[]; };

void main() {
    uint r = gemv_row();
    if (r >= p.rows) return;
    uint i = gl_WorkGroupID.z, n4 = p.cols / 4;
    uint wo = r * n4, xo = (p.x_base + i * p.x_stride) / 4;
    float acc = 0.0;
    for (uint k = gl_LocalInvocationID.x; k < n4; k += WG) {
        vec4 a = w[wo + k], b = x[xo + k];
        acc += a.x * b.x;
        acc += a.y * b.y;
        acc += a.z * b.z;
        acc += a.w * b.w;
    }
    float s = reduce(acc);
    if (gl_LocalInvocationID.x == 0) gemv_store(s, i, r);
}
