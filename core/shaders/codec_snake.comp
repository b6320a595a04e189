#version 450
// SnakeBeta on time-major x[t][c] (vx_snake_beta, codec_snake.glsl); y may alias x.
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer A { float alpha[]; };
layout(std430, binding = 2) readonly buffer IB { float inv_beta[]; };
layout(std430, binding = 3) buffer Y { float y[]; };
layout(push_constant) uniform Push { uint n, c, x_base, a_base, y_base; } p;
#include "codec_snake.glsl"

void main() {
    uint e = gl_GlobalInvocationID.x + gl_NumWorkGroups.x * 64 * gl_GlobalInvocationID.y;
    if (e >= p.n) return;
    uint ch = e % p.c;
    y[p.y_base + e] = snake_beta(x[p.x_base + e], alpha[p.a_base + ch], inv_beta[p.a_base + ch]);
}
