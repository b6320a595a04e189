#version 450
// Full (bidirectional, unmasked) multi-head attention of `batch` sequences of n rows, as vx_nn_attention:
// q, k, v rows of [heads][d] (row r of sequence b is row b n + r, ld floats apart), out likewise;
//   out_h = softmax(scale q_h k_h^T) v_h.
// One workgroup of 128 per (64 queries, head, sequence), two invocations per query: the keys and values
// go through shared memory in tiles of 64 rows, read by every invocation at once (broadcast); each of
// a query's two invocations takes one half of every tile, in groups of four keys (four independent dot
// products), with an online softmax (running maximum m and sum l; its output rescaled by
// exp(m_old - m_new) when the maximum grows), so no score row goes through memory; at the end the second
// half's (m, l, output) is merged into the first's. d <= 64 and d % 4 == 0. A query's result depends only
// on its row and the keys, in a fixed order: the same on every run.
#define WG 128
#define NQ 64
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
shared float ml[NQ][2];

void main() {
    uint b = gl_WorkGroupID.z, h = gl_WorkGroupID.y, t = gl_LocalInvocationID.x, half_k = t / NQ;
    uint qi = gl_WorkGroupID.x * NQ + t % NQ, d4 = p.d / 4u;
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
        uint j0 = half_k * (TK / 2u), j1 = min(j0 + TK / 2u, min(uint(TK), p.n - k0));
        for (uint j = j0; j < j1; j += 4u) {
            vec4 a0 = vec4(0.0), a1 = vec4(0.0), a2 = vec4(0.0), a3 = vec4(0.0);
            for (uint e = 0u; e < D4; e++)
                if (e < d4) {
                    a0 += qr[e] * ks[j][e];
                    a1 += qr[e] * ks[j + 1u][e];
                    a2 += qr[e] * ks[j + 2u][e];
                    a3 += qr[e] * ks[j + 3u][e];
                }
            vec4 sc = vec4((a0.x + a0.y) + (a0.z + a0.w), (a1.x + a1.y) + (a1.z + a1.w), (a2.x + a2.y) + (a2.z + a2.w),
                           (a3.x + a3.y) + (a3.z + a3.w)) * p.scale;
            if (j + 1u >= j1) sc.y = -1e30;   // past the half's last key
            if (j + 2u >= j1) sc.z = -1e30;
            if (j + 3u >= j1) sc.w = -1e30;
            float mx = max(max(sc.x, sc.y), max(sc.z, sc.w));
            if (mx > m) {   // a new maximum: rescale what was summed (rare once the maximum settles)
                float corr = exp(m - mx);
                l *= corr;
                for (uint e = 0u; e < D4; e++) acc[e] *= corr;
                m = mx;
            }
            vec4 pj = exp(sc - m);
            l += (pj.x + pj.y) + (pj.z + pj.w);
            for (uint e = 0u; e < D4; e++)
                if (e < d4) acc[e] += pj.x * vs[j][e] + pj.y * vs[j + 1u][e] + pj.z * vs[j + 2u][e] + pj.w * vs[j + 3u][e];
        }
        barrier();
    }
    // the second half's state through shared memory (the tiles are free now), merged by the first half
    uint ql = t % NQ;
    if (half_k == 1u) {
        ml[ql][0] = m;
        ml[ql][1] = l;
        for (uint e = 0u; e < D4; e++) ks[ql][e] = acc[e];
    }
    barrier();
    if (half_k == 1u || !live) return;
    float m1 = ml[ql][0], l1 = ml[ql][1], mm = max(m, m1), c0 = exp(m - mm), c1 = exp(m1 - mm);
    float inv = 1.0 / (l * c0 + l1 * c1);
    uint oo = p.o_base + (b * p.n + qi) * p.ld + h * p.d;
    for (uint e = 0u; e < D4; e++)
        if (e < d4) {
            vec4 r = (acc[e] * c0 + ks[ql][e] * c1) * inv;
            o[oo + 4u * e] = r.x;
            o[oo + 4u * e + 1u] = r.y;
            o[oo + 4u * e + 2u] = r.z;
            o[oo + 4u * e + 3u] = r.w;
        }
}
