#version 450
// SnakeBeta on time-major x[t][c] (vx_snake_beta, codec_snake.glsl); y may alias x. Mode 1 copies x
// instead. With ctx > 0, y is a causal convolution's input [ctx][c] of context then [t][c] (y_base at
// its start; the context rows already there, copied from the carried state) and this also writes the
// new carried context, state [ctx][c] = y rows t .. t + ctx - 1: invocations beyond t * c copy the
// rows that come from the old context (t < ctx; read from y, so the state is only written here).
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer A { float alpha[]; };
layout(std430, binding = 2) readonly buffer IB { float inv_beta[]; };
layout(std430, binding = 3) buffer Y { float y[]; };
layout(std430, binding = 4) buffer St { float state[]; };
layout(push_constant) uniform Push { uint n, c, x_base, a_base, y_base, ctx, s_base, mode; } p;
#include "codec_snake.glsl"

void main() {
    uint e = gl_GlobalInvocationID.x + gl_NumWorkGroups.x * 64 * gl_GlobalInvocationID.y;
    uint t = p.n / p.c, head = p.ctx * p.c;
    if (e < p.n) {
        uint ch = e % p.c;
        float v = x[p.x_base + e];
        if (p.mode == 0u) v = snake_beta(v, alpha[p.a_base + ch], inv_beta[p.a_base + ch]);
        y[p.y_base + head + e] = v;
        if (p.ctx > 0u && e / p.c + p.ctx >= t) state[p.s_base + e + head - t * p.c] = v;
        return;
    }
    uint r = e - p.n;   // new context rows taken from the old one: y rows t .. ctx - 1
    if (p.ctx > t && r < (p.ctx - t) * p.c) state[p.s_base + r] = y[p.y_base + t * p.c + r];
}
