#version 450
// Causal (optionally windowed) attention with grouped KV heads, as vx_attention:
// q [nq][hq][d], k/v [nk][hkv][d]; query i sits at position nk - nq + i and sees key j iff j <= pos
// and (window <= 0 or j > pos - window); query head h reads KV head h / (hq / hkv); d <= WG.
//
// One workgroup of 256 per (query, head), one pass over the keys in tiles of 256 with an online
// softmax (running maximum m, running sum l, output rescaled by exp(m_old - m_new) per tile), so no
// score row goes through memory and a decode step (one query, a few hundred keys) is a single tile:
//   1. invocation t scores key tile + t (a dot product in index order with q from shared memory);
//      fixed trees give the tile's maximum and, after p = exp(s - m), its sum;
//   2. the output: NG = WG / d groups of d invocations; group g, element e accumulates p_j v[j][e]
//      over the tile's keys g, g + NG, ... in order; at the end the NG partial sums of an element
//      are added in group order.
// Every sum has a fixed order that depends only on the shapes: a device gives the same result for
// the same inputs (subgroup size plays no part).
#define WG 256
layout(local_size_x = WG) in;
layout(std430, binding = 0) readonly buffer Q { float q[]; };
layout(std430, binding = 1) readonly buffer K { float k[]; };
layout(std430, binding = 2) readonly buffer V { float v[]; };
layout(std430, binding = 3) writeonly buffer O { float o[]; };
layout(push_constant) uniform Push {
    uint nq, hq, nk, hkv, d;
    int window;
    float scale;
    uint q_base, k_base, v_base, o_base;
} p;
shared float qs[WG];    // the query row, scaled
shared float ps[WG];    // the tile's probabilities
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
    uint qo = p.q_base + (qi * p.hq + h) * p.d;
    if (t < p.d) qs[t] = q[qo + t];
    barrier();

    uint ng = WG / p.d, g = t / p.d, e = t - g * p.d;   // output group and element of this invocation
    bool out_lane = g < ng;
    float m = -1.0 / 0.0, l = 0.0, acc = 0.0;
    for (uint tile = j0; tile < j1; tile += WG) {
        uint j = tile + t;
        float s = -1.0 / 0.0;
        if (j < j1) {
            uint ko = p.k_base + (j * p.hkv + kh) * p.d;
            s = 0.0;
            for (uint i = 0; i < p.d; i++) s += qs[i] * k[ko + i];
            s *= p.scale;
        }
        float mn = max(m, tree(s, true));
        float pj = j < j1 ? exp(s - mn) : 0.0;
        ps[t] = pj;
        float tile_sum = tree(pj, false);   // its barriers also publish ps
        float alpha = exp(m - mn);          // 0 on the first tile (m = -inf)
        l = l * alpha + tile_sum;
        m = mn;
        if (out_lane) {
            uint n = min(uint(WG), j1 - tile);
            float a = 0.0;
            for (uint jj = g; jj < n; jj += ng) a += ps[jj] * v[p.v_base + ((tile + jj) * p.hkv + kh) * p.d + e];
            acc = acc * alpha + a;
        }
        barrier();   // ps is rewritten by the next tile
    }
    red[t] = acc;
    barrier();
    if (t < p.d) {
        float r = 0.0;
        for (uint gg = 0; gg < ng; gg++) r += red[gg * p.d + t];
        o[p.o_base + (qi * p.hq + h) * p.d + t] = r / l;
    }
}
