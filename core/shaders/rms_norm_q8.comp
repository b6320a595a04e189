#version 450
// rms_norm.comp and quantize_q8.comp in one pass: y[r] = x[r] / sqrt(mean(x[r]^2) + eps) * w (written,
// for the float layers and the residual) and its int8 codes and block scales (for the q8/q4 layers),
// with exactly the operations of the two shaders: the same bits as running them in turn.
// One workgroup of 64 per row (d % 32 == 0).
#extension GL_GOOGLE_include_directive : require
#include "div_rn.glsl"
#define WG 64
layout(local_size_x = WG) in;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer W { float w[]; };
layout(std430, binding = 2) buffer Y { float y[]; };
layout(std430, binding = 3) writeonly buffer Q { uint q[]; };    // [rows][d / 32][8]
layout(std430, binding = 4) writeonly buffer D { float dsc[]; }; // [rows][d / 32]
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
    uint nb = p.d / 32;
    for (uint b = t; b < nb; b += WG) {   // one block of 32 per invocation
        float v[32];
        uint amax = 0u;
        for (uint j = 0; j < 32; j++) {
            uint i = 32 * b + j;
            float u = x[xo + i] * inv;
            v[j] = p.has_w != 0 ? w[p.w_base + i] * u : u;
            y[yo + i] = v[j];
            amax = max(amax, floatBitsToUint(v[j]) & 0x7fffffffu);
        }
        float dd = amax == 0u ? 0.0 : div_rn(uintBitsToFloat(amax), 127.0);
        float rr = dd > 0.0 ? div_rn(1.0, dd) : 0.0;
        for (uint k = 0; k < 8; k++) {
            uint packed = 0u;
            for (uint e = 0; e < 4; e++) {
                float vv = v[4 * k + e] * rr;
                float a = abs(vv), tt = trunc(a);
                if (a - tt >= 0.5) tt += 1.0;
                int qi = int(min(tt, 127.0)) * (vv < 0.0 ? -1 : 1);
                packed |= (uint(qi) & 0xffu) << (8 * e);
            }
            q[(r * nb + b) * 8 + k] = packed;
        }
        dsc[r * nb + b] = dd;
    }
}
