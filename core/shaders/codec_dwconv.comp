#version 450
// Depthwise causal convolution (vx_depthwise_conv): y[t][c] = b[c] + sum over j of w[c][j] x[t + j dil][c],
// x time-major with (k-1) * dil context rows before the t_out new ones; w [c][k] float32.
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer W { float w[]; };
layout(std430, binding = 2) readonly buffer B { float b[]; };
layout(std430, binding = 3) writeonly buffer Y { float y[]; };
layout(push_constant) uniform Push { uint t_out, c, k, dil, x_base, w_base, b_base, y_base; } p;

void main() {
    uint e = gl_GlobalInvocationID.x + gl_NumWorkGroups.x * 64 * gl_GlobalInvocationID.y;
    if (e >= p.t_out * p.c) return;
    uint t = e / p.c, ch = e % p.c;
    float s = 0.0;
    for (uint j = 0; j < p.k; j++) s = fma(w[p.w_base + ch * p.k + j], x[p.x_base + (t + j * p.dil) * p.c + ch], s);
    y[p.y_base + e] = b[p.b_base + ch] + s;
}
