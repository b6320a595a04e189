#version 450
// Full (bidirectional, unmasked) multi-head attention of `batch` sequences of n rows, as vx_nn_attention:
// q, k, v rows of [heads][d] (row r of sequence b is row b n + r, ld floats apart), out likewise;
//   out_h = softmax(scale q_h k_h^T) v_h.
// One workgroup of 64 per (64 queries, head, sequence), one invocation per query: the keys and values
// go through shared memory in tiles of 64 rows, read by every invocation at once (broadcast), with an
// online softmax key by key (running maximum m and sum l; the output rescaled by exp(m_old - m_new)
// when the maximum grows), so no score row goes through memory. d <= 64 and d % 4 == 0. A query's result
// depends only on its row and the keys, in a fixed order: the same on every run.
#define WG 64
#define TK 64
#define D4 16
layout(local_size_x = WG) in;
layout(std430, binding = 0) readonly buffer Q { float q[]; };
layout(std430, binding = 1) readonly buffer K { float k[]; };
layout(std430, binding = 2) readonly buffer V { float v[]; };
layout(std430, binding = 3) writeonly buffer O { float o[]; };
layout(push_constant) uniform Push { uint n, heads, d, ld, q_base, k_base, v_base, o_base; float scale; } p;
shared vec4 ks[TK][D4];
shared vec4 vs[TK][D4];

void main() {
    uint b = gl_WorkGroupID.z, h = gl_WorkGroupID.y, t = gl_LocalInvocationID.x;
    uint qi = gl_WorkGroupID.x * WG + t, d4 = p.d / 4u;
    bool live = qi < p.n;
    uint qo = p.q_base + (b * p.n + (live ? qi : 0u)) * p.ld + h * p.d;
    vec4 qr[D4], acc[D4];
    for (uint e = 0u; e < D4; e++) {
        qr[e] = e < d4 ? vec4(q[qo + 4u * e], q[qo + 4u * e + 1u], q[qo + 4u * e + 2u], q[qo + 4u * e + 3u]) : vec4(0.0);
        acc[e] = vec4(0.0);
    }
    float m = -1e30, l = 0.0;
    for (uint k0 = 0u; k0 < p.n; k0 += TK) {
        for (uint idx = t; idx < TK * d4; idx += WG) {
            uint kk = idx / d4, e = idx % d4, key = k0 + kk;
            vec4 kv = vec4(0.0), vv = vec4(0.0);
            if (key < p.n) {
                uint ko = p.k_base + (b * p.n + key) * p.ld + h * p.d + 4u * e;
                uint vo = p.v_base + (b * p.n + key) * p.ld + h * p.d + 4u * e;
                kv = vec4(k[ko], k[ko + 1u], k[ko + 2u], k[ko + 3u]);
                vv = vec4(v[vo], v[vo + 1u], v[vo + 2u], v[vo + 3u]);
            }
            ks[kk][e] = kv;
            vs[kk][e] = vv;
        }
        barrier();
        uint nk = min(uint(TK), p.n - k0);
        for (uint j = 0u; j < nk; j++) {
            vec4 a = vec4(0.0);
            for (uint e = 0u; e < D4; e++)
                if (e < d4) a += qr[e] * ks[j][e];
            float sc = ((a.x + a.y) + (a.z + a.w)) * p.scale;
            if (sc > m) {   // a new maximum: rescale what was summed (rare once the maximum settles)
                float corr = exp(m - sc);
                l *= corr;
                for (uint e = 0u; e < D4; e++) acc[e] *= corr;
                m = sc;
            }
            float pj = exp(sc - m);
            l += pj;
            for (uint e = 0u; e < D4; e++)
                if (e < d4) acc[e] += pj * vs[j][e];
        }
        barrier();
    }
    if (!live) return;
    uint oo = p.o_base + (b * p.n + qi) * p.ld + h * p.d;
    float inv = 1.0 / l;
    for (uint e = 0u; e < D4; e++)
        if (e < d4) {
            vec4 r = acc[e] * inv;
            o[oo + 4u * e] = r.x;
            o[oo + 4u * e + 1u] = r.y;
            o[oo + 4u * e + 2u] = r.z;
            o[oo + 4u * e + 3u] = r.w;
        }
}
