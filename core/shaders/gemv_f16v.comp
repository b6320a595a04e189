#version 450
// GEMV with f16 weights, 16-byte loads (cols % 8 == 0, x 16-byte aligned): invocation t takes the
// 8-element chunks t, t + 64, ... and adds their products in element order.
#extension GL_GOOGLE_include_directive : require
#define YB 2
#include "gemv_common.glsl"
layout(std430, binding = 0) readonly buffer W { uvec4 w[]; };
layout(std430, binding = 1) readonly buffer X { vec4 x[]; };

vec2 widen(uint v) {
    return unpackHalf2x16(v);
}

void main() {
    uint r = gemv_row();
    if (r >= p.rows) return;
    uint i = gl_WorkGroupID.z, n8 = p.cols / 8;
    uint wo = r * n8, xo = (p.x_base + i * p.x_stride) / 4;
    float acc = 0.0;
    for (uint k = gl_LocalInvocationID.x; k < n8; k += WG) {
        uvec4 q = w[wo + k];
        vec4 x0 = x[xo + 2 * k], x1 = x[xo + 2 * k + 1];
        vec2 a = widen(q.x), b = widen(q.y), c = widen(q.z), d = widen(q.w);
        acc += a.x * x0.x;
        acc += a.y * x0.y;
        acc += b.x * x0.z;
        acc += b.y * x0.w;
        acc += c.x * x1.x;
        acc += c.y * x1.y;
        acc += d.x * x1.z;
        acc += d.y * x1.w;
    }
    float s = reduce(acc);
    if (gl_LocalInvocationID.x == 0) gemv_store(s, i, r);
}
