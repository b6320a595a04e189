#version 450
// A gated residual connection: h[r][i] = h[r][i] + gate[i] * y[r][i] over rows x d (a DiT block's
// adaLN-Zero gate; gate is a device vector [d]).
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer H { float h[]; };
layout(std430, binding = 1) readonly buffer Yb { float y[]; };
layout(std430, binding = 2) readonly buffer G { float gt[]; };
layout(push_constant) uniform Push { uint n, d, h_base, y_base, g_base; } p;

void main() {
    uint i = gl_GlobalInvocationID.x + gl_NumWorkGroups.x * 64 * gl_GlobalInvocationID.y;
    if (i >= p.n) return;
    precise float v = gt[p.g_base + i % p.d] * y[p.y_base + i];
    h[p.h_base + i] = h[p.h_base + i] + v;
}
