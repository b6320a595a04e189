#version 450
// The per-head RMSNorm of q or k (Qwen3's q_norm / k_norm) and then the rotary embedding, in place,
// for x [n][heads][d]: exactly vx_rms_norm(x, w, n * heads, d, eps) followed by vx_rope(x, n, heads,
// d, cos, sin), in one pass. One workgroup of 64 per (row, head); the sum of squares is the same
// fixed tree as rms_norm.comp.
#define WG 64
layout(local_size_x = WG) in;
layout(std430, binding = 0) buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer W { float w[]; };
layout(std430, binding = 2) readonly buffer C { float c[]; };
layout(std430, binding = 3) readonly buffer S { float s[]; };
layout(push_constant) uniform Push { uint n, heads, d, x_base, w_base, cs_base; float eps; } p;
shared float red[WG];

void main() {
    uint rh = gl_WorkGroupID.x + gl_NumWorkGroups.x * gl_WorkGroupID.y;
    if (rh >= p.n * p.heads) return;
    uint t = gl_LocalInvocationID.x, o = p.x_base + rh * p.d, tb = p.cs_base + (rh / p.heads) * p.d;
    uint half_d = p.d / 2;
    float ss = 0.0;
    for (uint i = t; i < p.d; i += WG) ss += x[o + i] * x[o + i];
    red[t] = ss;
    barrier();
    for (uint k = WG / 2; k > 0; k >>= 1) {
        if (t < k) red[t] = red[t] + red[t + k];
        barrier();
    }
    float inv = 1.0 / sqrt(red[0] / float(p.d) + p.eps);
    for (uint i = t; i < half_d; i += WG) {
        float a = w[p.w_base + i] * (x[o + i] * inv);
        float b = w[p.w_base + i + half_d] * (x[o + i + half_d] * inv);
        x[o + i] = a * c[tb + i] - b * s[tb + i];
        x[o + i + half_d] = b * c[tb + i + half_d] + a * s[tb + i + half_d];
    }
}
