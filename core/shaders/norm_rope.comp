#version 450
// The per-head RMSNorm of q and of k (Qwen3's q_norm / k_norm), each followed by the rotary embedding,
// in place, for q [n][hq][d] and k [n][hk][d] in one dispatch: exactly vx_rms_norm(x, w, n * heads, d,
// eps) followed by vx_rope(x, n, heads, d, cos, sin) for each (hk = 0: q only). One workgroup of 64
// per (row, head) of q, then per (row, head) of k; the sum of squares is the same fixed tree as
// rms_norm.comp.
#define WG 64
layout(local_size_x = WG) in;
layout(std430, binding = 0) buffer Q { float xq[]; };
layout(std430, binding = 1) buffer K { float xk[]; };
layout(std430, binding = 2) readonly buffer WQ { float wq[]; };
layout(std430, binding = 3) readonly buffer WK { float wk[]; };
layout(std430, binding = 4) readonly buffer C { float c[]; };
layout(std430, binding = 5) readonly buffer S { float s[]; };
layout(push_constant) uniform Push { uint n, hq, hk, d, q_base, k_base, wq_base, wk_base, cs_base; float eps; } p;
shared float red[WG];

// one head of one row of X: o its first element, tb its row's first cos/sin, wb the norm weights
#define NORM_ROPE(X, W, o, tb, wb)                                                                   \
    {                                                                                                \
        uint t = gl_LocalInvocationID.x, half_d = p.d / 2;                                           \
        float ss = 0.0;                                                                              \
        for (uint i = t; i < p.d; i += WG) ss += X[o + i] * X[o + i];                                \
        red[t] = ss;                                                                                 \
        barrier();                                                                                   \
        for (uint k = WG / 2; k > 0; k >>= 1) {                                                      \
            if (t < k) red[t] = red[t] + red[t + k];                                                 \
            barrier();                                                                               \
        }                                                                                            \
        float inv = 1.0 / sqrt(red[0] / float(p.d) + p.eps);                                         \
        for (uint i = t; i < half_d; i += WG) {                                                      \
            float a = W[wb + i] * (X[o + i] * inv);                                                  \
            float b = W[wb + i + half_d] * (X[o + i + half_d] * inv);                                \
            X[o + i] = a * c[tb + i] - b * s[tb + i];                                                \
            X[o + i + half_d] = b * c[tb + i + half_d] + a * s[tb + i + half_d];                     \
        }                                                                                            \
    }

void main() {
    uint rh = gl_WorkGroupID.x + gl_NumWorkGroups.x * gl_WorkGroupID.y, nq = p.n * p.hq;
    if (rh < nq) {   // the whole workgroup takes one branch
        NORM_ROPE(xq, wq, p.q_base + rh * p.d, p.cs_base + (rh / p.hq) * p.d, p.wq_base)
    } else if (rh - nq < p.n * p.hk) {
        uint rk = rh - nq;
        NORM_ROPE(xk, wk, p.k_base + rk * p.d, p.cs_base + (rk / p.hk) * p.d, p.wk_base)
    }
}
