#version 450
// y[r] = x[r] / sqrt(mean(x[r]^2) + eps) * w, as vx_rms_norm: inv = 1 / sqrt(ss / d + eps), then
// w[i] * (x[i] * inv). One workgroup of 64 per row; the sum of squares is a fixed 64-way tree.
// In place (x == y) is allowed: each row is read completely before it is written.
#define WG 64
layout(local_size_x = WG) in;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer W { float w[]; };
layout(std430, binding = 2) buffer Y { float y[]; };
layout(push_constant) uniform Push { uint rows, d, has_w, x_base, w_base, y_base; float eps; } p;
shared float red[WG];

void main() {
    uint r = gl_WorkGroupID.x + gl_NumWorkGroups.x * gl_WorkGroupID.y;
    if (r >= p.rows) return;
    uint t = gl_LocalInvocationID.x, xo = p.x_base + r * p.d, yo = p.y_base + r * p.d;
    float ss = 0.0;
    for (uint i = t; i < p.d; i += WG) ss += x[xo + i] * x[xo + i];
    red[t] = ss;
    barrier();
    for (uint s = WG / 2; s > 0; s >>= 1) {
        if (t < s) red[t] = red[t] + red[t + s];
        barrier();
    }
    float inv = 1.0 / sqrt(red[0] / float(p.d) + p.eps);
    for (uint i = t; i < p.d; i += WG) {
        float v = x[xo + i] * inv;
        y[yo + i] = p.has_w != 0 ? w[p.w_base + i] * v : v;
    }
}
