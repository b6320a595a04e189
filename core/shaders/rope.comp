#version 450
// Rotary embedding, rotate-half form, in place, as vx_rope: for row r, head h, i < d/2:
//   y[i] = x[i] cos[r][i] - x[i + d/2] sin[r][i],  y[i + d/2] = x[i + d/2] cos[r][i + d/2] + x[i] sin[r][i + d/2]
// cos/sin: [n][d] tables (the multi-axis mrope is in the tables). One invocation per (r, h, i).
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer C { float c[]; };
layout(std430, binding = 2) readonly buffer S { float s[]; };
layout(push_constant) uniform Push { uint n, heads, d, x_base, cs_base; } p;

void main() {
    uint half_d = p.d / 2;
    uint id = gl_GlobalInvocationID.x + gl_NumWorkGroups.x * 64 * gl_GlobalInvocationID.y;
    if (id >= p.n * p.heads * half_d) return;
    uint i = id % half_d, rh = id / half_d, r = rh / p.heads;
    uint o = p.x_base + rh * p.d, t = p.cs_base + r * p.d;
    float a = x[o + i], b = x[o + i + half_d];
    x[o + i] = a * c[t + i] - b * s[t + i];
    x[o + i + half_d] = b * c[t + i + half_d] + a * s[t + i + half_d];
}
