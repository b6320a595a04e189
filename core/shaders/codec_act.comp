#version 450
// Elementwise activations of the codec decoder, y may alias x:
//   mode 0  exact GELU (vx_gelu, codec_gelu.glsl)
//   mode 1  clamp to [lo, hi] (vx_clamp: the decoder's final clamp to [-1, 1])
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) buffer Y { float y[]; };
layout(push_constant) uniform Push { uint n, mode, x_base, y_base; float lo, hi; } p;
#include "codec_gelu.glsl"

void main() {
    uint e = gl_GlobalInvocationID.x + gl_NumWorkGroups.x * 64 * gl_GlobalInvocationID.y;
    if (e >= p.n) return;
    float v = x[p.x_base + e];
    y[p.y_base + e] = p.mode == 0u ? gelu(v) : min(max(v, p.lo), p.hi);
}
