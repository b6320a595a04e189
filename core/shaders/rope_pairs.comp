#version 450
// Rotary embedding on interleaved pairs (x_transformers' RotaryEmbedding, as DiT flow models apply it),
// in place on q and k [rows][inner] (heads of d): row r sits at position r % n, and the first
// `heads` heads of each row rotate: (a, b) at (2i, 2i + 1) -> (a c - b s, b c + a s) with c = cos[pos][2i],
// s = sin[pos][2i] (the tables [n][d] repeat each angle for both elements of a pair).
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer Q { float q[]; };
layout(std430, binding = 1) buffer K { float k[]; };
layout(std430, binding = 2) readonly buffer C { float cs[]; };
layout(push_constant) uniform Push { uint rows, n, inner, d, heads, q_base, k_base, c_base, s_base; } p;

void main() {
    uint i = gl_GlobalInvocationID.x + gl_NumWorkGroups.x * 64 * gl_GlobalInvocationID.y;
    uint half_d = p.d / 2, per = p.heads * half_d, total = p.rows * per;
    if (i >= 2u * total) return;
    uint which = i / total, j = i % total;
    uint r = j / per, h = (j % per) / half_d, e = 2u * (j % half_d);
    uint pos = r % p.n, o = r * p.inner + h * p.d + e;
    float c0 = cs[p.c_base + pos * p.d + e], s0 = cs[p.s_base + pos * p.d + e];
    float c1 = cs[p.c_base + pos * p.d + e + 1u], s1 = cs[p.s_base + pos * p.d + e + 1u];
    if (which == 0u) {
        float a = q[p.q_base + o], b = q[p.q_base + o + 1u];
        precise float y0 = a * c0 + (-b) * s0, y1 = b * c1 + a * s1;
        q[p.q_base + o] = y0;
        q[p.q_base + o + 1u] = y1;
    } else {
        float a = k[p.k_base + o], b = k[p.k_base + o + 1u];
        precise float y0 = a * c0 + (-b) * s0, y1 = b * c1 + a * s1;
        k[p.k_base + o] = y0;
        k[p.k_base + o + 1u] = y1;
    }
}
