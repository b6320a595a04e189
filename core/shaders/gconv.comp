#version 450
// A grouped Conv1d with zero padding over time-major x [batch n][c] (each sequence of n rows padded on
// its own), kernel KS = 31, c / groups channels per group in and out (a divisor of 64), as vx_nn_conv1d:
//   y[t][co] = act(bias[co] + sum_{ci, j} w[co][ci KS + j] x[t + j - pad][g c_g + ci]), then + res[t][co]
// act: none (0) or Mish (1); res optional (flag 2; res may be y). The weight is given transposed,
// wt[(ci KS + j) c + co], so the 64 invocations of a workgroup (one per output channel of a block of 64)
// read it coalesced; the block's 64 input channels (its groups' inputs) over TT + KS - 1 rows go through
// shared memory, each column into registers, so the TT outputs of an invocation are register FMAs.
#define KS 31
#define TT 32
#define NR (TT + KS - 1)
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer W { float wt[]; };
layout(std430, binding = 2) readonly buffer B { float bias[]; };
layout(std430, binding = 3) readonly buffer R { float res[]; };
layout(std430, binding = 4) writeonly buffer Y { float y[]; };
layout(push_constant) uniform Push { uint n, c, cg, pad, flags, x_base, w_base, b_base, r_base, y_base; } p;
shared float xs[NR][64];

void main() {
    uint t0 = gl_WorkGroupID.x * TT, cb = gl_WorkGroupID.y * 64u, b = gl_WorkGroupID.z, l = gl_LocalInvocationID.x;
    for (uint idx = l; idx < NR * 64u; idx += 64u) {
        uint r = idx / 64u, ch = idx % 64u;
        int tr = int(t0 + r) - int(p.pad);
        xs[r][ch] = tr >= 0 && uint(tr) < p.n ? x[p.x_base + (b * p.n + uint(tr)) * p.c + cb + ch] : 0.0;
    }
    barrier();
    uint co = cb + l, g0 = (l / p.cg) * p.cg;
    float acc[TT];
    for (uint i = 0u; i < TT; i++) acc[i] = 0.0;
    for (uint ci = 0u; ci < p.cg; ci++) {
        float xr[NR];
        for (uint r = 0u; r < NR; r++) xr[r] = xs[r][g0 + ci];
        uint wo = p.w_base + ci * KS * p.c + co;
        for (uint j = 0u; j < KS; j++) {
            float w = wt[wo + j * p.c];
            for (uint i = 0u; i < TT; i++) acc[i] += w * xr[i + j];
        }
    }
    float bv = bias[p.b_base + co];
    for (uint i = 0u; i < TT; i++) {
        uint t = t0 + i;
        if (t >= p.n) break;
        float v = acc[i] + bv;
        if ((p.flags & 1u) != 0u && v <= 20.0) {
            float u = exp(v), q = u * (u + 2.0);
            v = v * (q / (q + 2.0));
        }
        uint o = (b * p.n + t) * p.c + co;
        if ((p.flags & 2u) != 0u) v = res[p.r_base + o] + v;
        y[p.y_base + o] = v;
    }
}
