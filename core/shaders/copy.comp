#version 450
// y[i] = x[i] for i < n (moves rows between host-visible and device-local buffers inside a chain).
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer Y { float y[]; };
layout(push_constant) uniform Push { uint n, x_base, y_base; } p;

void main() {
    uint i = gl_GlobalInvocationID.x + gl_NumWorkGroups.x * 64 * gl_GlobalInvocationID.y;
    if (i >= p.n) return;
    y[p.y_base + i] = x[p.x_base + i];
}
