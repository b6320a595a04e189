#version 450
// y = silu(g) * u = g / (1 + exp(-g)) * u, elementwise (vx_silu_mul); y may alias g.
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer G { float g[]; };
layout(std430, binding = 1) readonly buffer U { float u[]; };
layout(std430, binding = 2) buffer Y { float y[]; };
layout(push_constant) uniform Push { uint n, g_base, u_base, y_base; } p;

void main() {
    uint i = gl_GlobalInvocationID.x + gl_NumWorkGroups.x * 64 * gl_GlobalInvocationID.y;
    if (i >= p.n) return;
    float v = g[p.g_base + i];
    y[p.y_base + i] = v / (1.0 + exp(-v)) * u[p.u_base + i];
}
