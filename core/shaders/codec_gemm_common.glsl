// The codec decoder's convolutions as one tiled GEMM:
//   y[m][n] = epilogue(sum over kk of A[m][kk] * B[kk][n]),   m < M, n < N, kk < K
// A is the input read as an implicit im2col of a causal convolution (no column matrix in memory):
// with taps k and dilation dil, A[m][kk] = x[(m + j * dil) * cin + ci] for kk = ci * k + j (the order
// of a torch Conv1d weight [c_out][c_in][k] flattened to [c_out][c_in * k]); x holds the (k-1) * dil
// context rows before the M new ones. taps = 1 is a plain product x[M][K] (cin = K).
// B is the weight (wload, codec_wload.glsl): flags bit 3 clear: stored [N][K] (a convolution or linear
// weight, B[kk][n] = w[n][kk]); set: stored [K][N] (a transposed convolution's [c_in][c_out * k],
// B[kk][n] = w[kk][n]). The epilogue, outputs and push constants are codec_epilogue.glsl's.
// Tiles of 64 x 64 outputs, 256 invocations with 4 x 4 outputs each (4 consecutive rows by 4
// consecutive columns, read from shared memory as vec4s), K in steps of 16 through shared memory,
// summed in chunks of KC (codec_epilogue.glsl): a workgroup walks every chunk (gl_WorkGroupID.z = 0), or
// with flags bit 6 (split K) only chunk gl_WorkGroupID.z, whose partial sums it writes to y0 as
// [chunk][M][N] for codec_gemm_reduce.comp (a grid of tiles x chunks: the small-M convolutions, whose few
// tiles would leave most of a large GPU idle). Either way every output is the same sum in the same
// order, whatever M, the tile it falls in or the device: a row decoded alone or inside a longer chunk
// gets the same bits.
#define BM 64
#define BN 64
#define BK 16
layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer X { float x[]; };
#include "codec_epilogue.glsl"
shared vec4 As[BK][BM / 4];
shared vec4 Bs[BK][BN / 4];

void main() {
    uint tid = gl_LocalInvocationID.x;
    uint m0 = gl_WorkGroupID.y * BM, n0 = gl_WorkGroupID.x * BN;
    uint tm = tid / 16u, tn = tid % 16u;
    bool nn = (p.flags & 8u) != 0u, split = (p.flags & 64u) != 0u;
    uint nc = (p.K + KC - 1u) / KC;
    uint c0 = split ? gl_WorkGroupID.z : 0u, c1 = split ? c0 + 1u : nc;
    float acc[4][4], tot[4][4];
    for (uint c = c0; c < c1; c++) {
        for (uint i = 0; i < 4; i++)
            for (uint j = 0; j < 4; j++) acc[i][j] = 0.0;
        uint kend = min(p.K, (c + 1u) * KC);
        for (uint k0 = c * KC; k0 < kend; k0 += BK) {
            for (uint r = 0; r < 4; r++) {
                uint e = tid + 256u * r;
                // A: kk fastest (contiguous input channels for taps = 1)
                uint am = e / BK, ak = e % BK, gm = m0 + am, gk = k0 + ak;
                float av = 0.0;
                if (gm < p.M && gk < kend) {
                    uint ci = gk / p.taps, j = gk - ci * p.taps;
                    av = x[p.x_base + (gm + j * p.dil) * p.cin + ci];
                }
                As[ak][am >> 2][am & 3u] = av;
                // B: the stored layout's fast index fastest
                uint bk, bn;
                if (nn) { bk = e / BN; bn = e % BN; } else { bn = e / BK; bk = e % BK; }
                uint gn = n0 + bn, gkb = k0 + bk;
                float bv = 0.0;
                if (gn < p.N && gkb < kend) bv = wload(p.w_base + (nn ? gkb * p.N + gn : gn * p.K + gkb));
                Bs[bk][bn >> 2][bn & 3u] = bv;
            }
            barrier();
            for (uint kk = 0; kk < BK; kk++) {
                vec4 a = As[kk][tm], b = Bs[kk][tn];
                for (uint i = 0; i < 4; i++)
                    for (uint j = 0; j < 4; j++) acc[i][j] = fma(a[i], b[j], acc[i][j]);
            }
            barrier();
        }
        for (uint i = 0; i < 4; i++)
            for (uint j = 0; j < 4; j++) tot[i][j] = c == c0 ? acc[i][j] : tot[i][j] + acc[i][j];
    }
    for (uint i = 0; i < 4; i++) {
        uint gm = m0 + tm * 4u + i;
        if (gm >= p.M) continue;
        for (uint j = 0; j < 4; j++) {
            uint gn = n0 + tn * 4u + j;
            if (gn >= p.N) continue;
            if (split) y0[p.y_base + (c0 * p.M + gm) * p.N + gn] = tot[i][j];
            else codec_store(gm, gn, tot[i][j]);
        }
    }
}
