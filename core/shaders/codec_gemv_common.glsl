// The codec decoder's products with few rows (the frame-rate layers: RVQ projections, pre-conv, the
// transformer's linears, the ConvNeXt MLP; M = a chunk's frames or a small multiple), as a GEMV:
//   y[m][n] = epilogue(sum over kk of A[m][kk] * W[n][kk])
// with A the implicit im2col of codec_gemm_common.glsl (taps, dil, cin) and W stored [N][K] (no
// transposed weights). One workgroup of 64 invocations per p.ncol (1 to NC) output columns and group of
// up to NX rows (gl_WorkGroupID.z): each weight row is read once for the group, coalesced, and each x
// value once for the ncol columns (several columns when x is too large to stay in L1 for every
// workgroup); invocation t adds the products of kk = t, t + 64, ... in order with fused multiply-adds,
// then a fixed tree in shared memory adds the 64 partial sums. The order depends on K alone (not on M,
// ncol, the grouping or the device's subgroup size), so a frame decoded alone or in a chunk gets the
// same bits. Callers pick this shader per layer, never by M (its sums differ from the tiled GEMM's).
// Workgroups beyond 65535 continue in gl_WorkGroupID.y. The epilogue, outputs and push constants are
// codec_epilogue.glsl's.
#define WG 64
#define NX 16
#define NC 4
layout(local_size_x = WG) in;
layout(std430, binding = 0) readonly buffer X { float x[]; };
#include "codec_epilogue.glsl"
shared float red[NX][WG];

void main() {
    uint n0 = (gl_WorkGroupID.x + gl_NumWorkGroups.x * gl_WorkGroupID.y) * p.ncol;
    if (n0 >= p.N) return;   // the whole workgroup leaves together
    uint nc = min(p.ncol, p.N - n0);
    uint t = gl_LocalInvocationID.x, m0 = gl_WorkGroupID.z * NX, nx = min(uint(NX), p.M - m0);
    float acc[NC][NX];
    for (uint c = 0; c < NC; c++)
        for (uint i = 0; i < NX; i++) acc[c][i] = 0.0;
    uint rs = p.cin;
    for (uint kk = t; kk < p.K; kk += WG) {
        float wv[NC];
        for (uint c = 0; c < NC; c++) wv[c] = c < nc ? wload(p.w_base + (n0 + c) * p.K + kk) : 0.0;
        uint ci = kk / p.taps, j = kk - ci * p.taps;
        uint xo = p.x_base + (m0 + j * p.dil) * rs + ci;
        for (uint i = 0; i < NX; i++)
            if (i < nx) {
                float xv = x[xo + i * rs];
                for (uint c = 0; c < NC; c++)
                    if (c < nc) acc[c][i] = fma(xv, wv[c], acc[c][i]);
            }
    }
    for (uint c = 0; c < nc; c++) {   // one column's fixed tree at a time
        for (uint i = 0; i < NX; i++) red[i][t] = acc[c][i];
        barrier();
        for (uint s = WG / 2; s > 0; s >>= 1) {
            if (t < s)   // only the rows this workgroup has
                for (uint i = 0; i < NX; i++)
                    if (i < nx) red[i][t] = red[i][t] + red[i][t + s];
            barrier();
        }
        if (t < nx) codec_store(m0 + t, n0 + c, red[t][0]);
        barrier();
    }
}
