#version 450
// Causal (optionally windowed) attention with grouped KV heads, as vx_attention:
// q [nq][hq][d], k/v [nk][hkv][d]; query i sits at position nk - nq + i and sees key j iff j <= pos
// and (window <= 0 or j > pos - window); query head h reads KV head h / (hq / hkv).
// One workgroup of 64 per (query, head). Scores go to a scratch row [nk] of `sc`:
//   1. invocation t computes the scores of keys t, t + 64, ... (a dot product in index order) and
//      their maximum; a fixed tree gives the row maximum m;
//   2. p_j = exp(s_j - m) in place; a fixed tree gives their sum;
//   3. output element e (e = t, t + 64, ...) = sum over j in key order of p_j v[j][e], divided by the sum.
#define WG 64
layout(local_size_x = WG) in;
layout(std430, binding = 0) readonly buffer Q { float q[]; };
layout(std430, binding = 1) readonly buffer K { float k[]; };
layout(std430, binding = 2) readonly buffer V { float v[]; };
layout(std430, binding = 3) buffer SC { float sc[]; };     // [nq * hq][nk]
layout(std430, binding = 4) writeonly buffer O { float o[]; };
layout(push_constant) uniform Push {
    uint nq, hq, nk, hkv, d;
    int window;
    float scale;
    uint q_base, k_base, v_base, o_base, s_base;
} p;
shared float red[WG];

float tree(float val, bool is_max) {
    uint t = gl_LocalInvocationID.x;
    red[t] = val;
    barrier();
    for (uint s = WG / 2; s > 0; s >>= 1) {
        if (t < s) red[t] = is_max ? max(red[t], red[t + s]) : red[t] + red[t + s];
        barrier();
    }
    float r = red[0];
    barrier();
    return r;
}

void main() {
    uint qi = gl_WorkGroupID.x, h = gl_WorkGroupID.y, t = gl_LocalInvocationID.x;
    uint kh = h / (p.hq / p.hkv);
    uint pos = p.nk - p.nq + qi;
    uint j0 = 0;
    if (p.window > 0 && pos + 1 > uint(p.window)) j0 = pos + 1 - uint(p.window);
    uint j1 = pos + 1;
    uint qo = p.q_base + (qi * p.hq + h) * p.d, srow = p.s_base + (qi * p.hq + h) * p.nk;
    float m = -1.0 / 0.0;
    for (uint j = j0 + t; j < j1; j += WG) {
        uint ko = p.k_base + (j * p.hkv + kh) * p.d;
        float s = 0.0;
        for (uint e = 0; e < p.d; e++) s += q[qo + e] * k[ko + e];
        s *= p.scale;
        sc[srow + j] = s;
        m = max(m, s);
    }
    m = tree(m, true);
    float sum = 0.0;
    for (uint j = j0 + t; j < j1; j += WG) {
        float e = exp(sc[srow + j] - m);
        sc[srow + j] = e;
        sum += e;
    }
    sum = tree(sum, false);   // its barriers also make the p_j of every invocation visible
    memoryBarrierBuffer();
    barrier();
    uint oo = p.o_base + (qi * p.hq + h) * p.d;
    for (uint e = t; e < p.d; e += WG) {
        float acc = 0.0;
        for (uint j = j0; j < j1; j++) acc += sc[srow + j] * v[p.v_base + (j * p.hkv + kh) * p.d + e];
        o[oo + e] = acc / sum;
    }
}
