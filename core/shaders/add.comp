#version 450
// y = a + b, elementwise (vx_add); y may alias a or b.
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer A { float a[]; };
layout(std430, binding = 1) readonly buffer B { float b[]; };
layout(std430, binding = 2) buffer Y { float y[]; };
layout(push_constant) uniform Push { uint n, a_base, b_base, y_base; } p;

void main() {
    uint i = gl_GlobalInvocationID.x + gl_NumWorkGroups.x * 64 * gl_GlobalInvocationID.y;
    if (i >= p.n) return;
    y[p.y_base + i] = a[p.a_base + i] + b[p.b_base + i];
}
