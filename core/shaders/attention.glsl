// Causal (optionally windowed) attention with grouped KV heads, as vx_attention:
// q [nq][hq][d], k/v [nk][hkv][d]; query i sits at position nk - nq + i and sees key j iff j <= pos
// and (window <= 0 or j > pos - window); query head h reads KV head h / (hq / hkv); d <= WG.
//
// One workgroup of 256 per (query, head), one pass over the keys in tiles of 256 with an online
// softmax (running maximum m, running sum l, output rescaled by exp(m_old - m_new) per tile), so no
// score row goes through memory and a decode step (one query, a few hundred keys) is a single tile:
//   1. the scores, 32 keys at a time: KL = 8 invocations per key, invocation r of a key sums
//      q[i] k[i] over i = r, r + 8, ... (adjacent invocations read adjacent elements, and each issues
//      d / 8 independent loads instead of one invocation walking a whole row); then the key's first
//      invocation adds the 8 partial sums in a fixed tree; fixed trees give the tile's maximum and,
//      after p = exp(s - m), its sum;
//   2. the output: NG = WG / d groups of d invocations; group g, element e accumulates p_j v[j][e]
//      over the tile's keys g, g + NG, ... in four interleaved partial sums (independent loads in
//      flight) added in a fixed order; at the end the NG partial sums of an element are added in
//      group order.
// Every sum has a fixed order that depends only on the shapes: a device gives the same result for
// the same inputs (subgroup size plays no part).
#define WG 256
layout(local_size_x = WG) in;
layout(std430, binding = 0) readonly buffer Q { float q[]; };
#ifdef ATT_NORM_ROPE
layout(std430, binding = 1) buffer K { float k[]; };   // the new rows are written here (normalized, rotated)
#else
layout(std430, binding = 1) readonly buffer K { float k[]; };
#endif
layout(std430, binding = 2) readonly buffer V { float v[]; };
layout(std430, binding = 3) writeonly buffer O { float o[]; };
layout(push_constant) uniform Push {
    uint nq, hq, nk, hkv, d;
    int window;
    float scale;
    uint q_base, k_base, v_base, o_base;
    uint kr_base, w_base, cs_base;   // ATT_NORM_ROPE: the raw new keys, q_norm | k_norm, cos/sin rows
    float eps;
} p;
#ifdef ATT_NORM_ROPE
layout(std430, binding = 4) readonly buffer KR { float kr[]; };   // [nq][hkv][d]: the new keys before their norm
layout(std430, binding = 5) readonly buffer W { float wn[]; };    // q_norm [d] then k_norm [d]
layout(std430, binding = 6) readonly buffer C { float cosb[]; };  // [nq][d]
layout(std430, binding = 7) readonly buffer S { float sinb[]; };
#define NR_MAX 4
shared float kn[NR_MAX * WG];   // the new keys of this KV head, normalized and rotated
#endif
shared float qs[WG];    // the query row, scaled
shared float ps[WG];    // the tile's scores, then its probabilities
#define KL 8            // invocations per key in the scores
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

#ifdef ATT_NORM_ROPE
// norm_rope.comp on one head vector SRC[o .. o + d) into shared DST[doff ..]: the sum of squares by its
// 64 lanes and fixed 64-way tree, then w * (x * inv) and the rotation, the same operations (and bits)
#define NORM_ROPE(SRC, o, wb, tb, DST, doff)                                                         \
    {                                                                                                \
        float ss = 0.0;                                                                              \
        if (t < 64)                                                                                  \
            for (uint i = t; i < p.d; i += 64) ss += SRC[o + i] * SRC[o + i];                        \
        red[t] = ss;                                                                                 \
        barrier();                                                                                   \
        for (uint k2 = 32; k2 > 0; k2 >>= 1) {                                                       \
            if (t < k2) red[t] = red[t] + red[t + k2];                                               \
            barrier();                                                                               \
        }                                                                                            \
        float inv = 1.0 / sqrt(red[0] / float(p.d) + p.eps);                                         \
        barrier();                                                                                   \
        uint half_d = p.d / 2;                                                                       \
        if (t < 64)                                                                                  \
            for (uint i = t; i < half_d; i += 64) {                                                  \
                float a = wn[wb + i] * (SRC[o + i] * inv);                                           \
                float b = wn[wb + i + half_d] * (SRC[o + i + half_d] * inv);                         \
                DST[doff + i] = a * cosb[tb + i] - b * sinb[tb + i];                                 \
                DST[doff + i + half_d] = b * cosb[tb + i + half_d] + a * sinb[tb + i + half_d];      \
            }                                                                                        \
    }
#endif

void main() {
    uint qi = gl_WorkGroupID.x, h = gl_WorkGroupID.y, t = gl_LocalInvocationID.x;
    uint kh = h / (p.hq / p.hkv);
    uint pos = p.nk - p.nq + qi;
    uint j0 = 0;
    if (p.window > 0 && pos + 1 > uint(p.window)) j0 = pos + 1 - uint(p.window);
    uint j1 = pos + 1;
    uint qo = p.q_base + (qi * p.hq + h) * p.d;
#ifdef ATT_NORM_ROPE
    uint pos0 = p.nk - p.nq;   // the first new row
    NORM_ROPE(q, qo, p.w_base, p.cs_base + qi * p.d, qs, 0)
    for (uint r = 0; r < p.nq; r++) NORM_ROPE(kr, p.kr_base + (r * p.hkv + kh) * p.d, p.w_base + p.d, p.cs_base + r * p.d, kn, r * WG)
    barrier();
    if (qi == 0 && h % (p.hq / p.hkv) == 0 && t < p.d)   // one workgroup per KV head stores its new keys
        for (uint r = 0; r < p.nq; r++) k[p.k_base + ((pos0 + r) * p.hkv + kh) * p.d + t] = kn[r * WG + t];
#else
    if (t < p.d) qs[t] = q[qo + t];
    barrier();
#endif

    uint ng = WG / p.d, g = t / p.d, e = t - g * p.d;   // output group and element of this invocation
    bool out_lane = g < ng;
    float m = -1.0 / 0.0, l = 0.0, acc = 0.0;
    for (uint tile = j0; tile < j1; tile += WG) {
        uint n = min(uint(WG), j1 - tile);
        for (uint base = 0; base < n; base += WG / KL) {   // 1. the scores of keys base .. base + 31
            uint jj = base + t / KL, r = t % KL, j = tile + jj;
            float part = 0.0;
            if (jj < n) {
#ifdef ATT_NORM_ROPE
                if (j >= pos0)   // a new key: from shared memory (the cache row is being written)
                    for (uint i = r; i < p.d; i += KL) part += qs[i] * kn[(j - pos0) * WG + i];
                else
#endif
                {
                    uint ko = p.k_base + (j * p.hkv + kh) * p.d;
                    for (uint i = r; i < p.d; i += KL) part += qs[i] * k[ko + i];
                }
            }
            red[t] = part;
            barrier();
            if (r == 0 && jj < n)
                ps[jj] = (((red[t] + red[t + 1]) + (red[t + 2] + red[t + 3])) +
                          ((red[t + 4] + red[t + 5]) + (red[t + 6] + red[t + 7]))) * p.scale;
            barrier();
        }
        float s = t < n ? ps[t] : -1.0 / 0.0;
        float mn = max(m, tree(s, true));
        float pj = t < n ? exp(s - mn) : 0.0;
        ps[t] = pj;
        float tile_sum = tree(pj, false);   // its barriers also publish ps
        float alpha = exp(m - mn);          // 0 on the first tile (m = -inf)
        l = l * alpha + tile_sum;
        m = mn;
        if (out_lane) {   // 2. four partial sums over keys g, g + ng, ...: key g + ng (4 c + u) goes to a[u]
            float a0 = 0.0, a1 = 0.0, a2 = 0.0, a3 = 0.0;
            uint vo = p.v_base + (tile * p.hkv + kh) * p.d + e, vs = p.hkv * p.d;
            uint jj = g;
            for (; jj + 3 * ng < n; jj += 4 * ng) {
                a0 += ps[jj] * v[vo + jj * vs];
                a1 += ps[jj + ng] * v[vo + (jj + ng) * vs];
                a2 += ps[jj + 2 * ng] * v[vo + (jj + 2 * ng) * vs];
                a3 += ps[jj + 3 * ng] * v[vo + (jj + 3 * ng) * vs];
            }
            if (jj < n) a0 += ps[jj] * v[vo + jj * vs];
            if (jj + ng < n) a1 += ps[jj + ng] * v[vo + (jj + ng) * vs];
            if (jj + 2 * ng < n) a2 += ps[jj + 2 * ng] * v[vo + (jj + 2 * ng) * vs];
            acc = acc * alpha + ((a0 + a1) + (a2 + a3));
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
