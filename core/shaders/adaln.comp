#version 450
// A LayerNorm without affine weights modulated by vectors (the adaLN of a DiT block):
//   y[r] = (x[r] - mean) / sqrt(var + eps) * (1 + scale) + shift      (biased variance)
// scale and shift are [d] (a modulation vector computed on the device); 1 + scale is rounded as the CPU
// rounds it before vx_layer_norm. One workgroup of 64 per row, fixed 64-way trees (codec_layernorm.comp).
#define WG 64
layout(local_size_x = WG) in;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer M { float mo[]; };
layout(std430, binding = 2) writeonly buffer Y { float y[]; };
layout(push_constant) uniform Push { uint rows, d, x_base, scale_base, shift_base, y_base; float eps; } p;
shared float red[WG];

float tree(float v) {
    uint t = gl_LocalInvocationID.x;
    red[t] = v;
    barrier();
    for (uint s = WG / 2; s > 0; s >>= 1) {
        if (t < s) red[t] = red[t] + red[t + s];
        barrier();
    }
    float r = red[0];
    barrier();
    return r;
}

void main() {
    uint r = gl_WorkGroupID.x + gl_NumWorkGroups.x * gl_WorkGroupID.y;
    if (r >= p.rows) return;
    uint t = gl_LocalInvocationID.x, xo = p.x_base + r * p.d, yo = p.y_base + r * p.d;
    float s = 0.0;
    for (uint i = t; i < p.d; i += WG) s += x[xo + i];
    float mean = tree(s) / float(p.d);
    float ss = 0.0;
    for (uint i = t; i < p.d; i += WG) {
        float c = x[xo + i] - mean;
        ss += c * c;
    }
    float inv = 1.0 / sqrt(tree(ss) / float(p.d) + p.eps);
    for (uint i = t; i < p.d; i += WG) {
        precise float w = 1.0 + mo[p.scale_base + i];
        precise float v = (x[xo + i] - mean) * inv;
        v = v * w;
        y[yo + i] = v + mo[p.shift_base + i];
    }
}
