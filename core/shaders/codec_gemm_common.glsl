// The codec decoder's convolutions as one tiled GEMM:
//   y[m][n] = epilogue(sum over kk of A[m][kk] * B[kk][n]),   m < M, n < N, kk < K
// A is the input read as an implicit im2col of a causal convolution (no column matrix in memory):
// with taps k and dilation dil, A[m][kk] = x[(m + j * dil) * cin + ci] for kk = ci * k + j (the order
// of a torch Conv1d weight [c_out][c_in][k] flattened to [c_out][c_in * k]); x holds the (k-1) * dil
// context rows before the M new ones. taps = 1 is a plain product x[M][K] (cin = K).
// B is the weight, float32 (codec_gemm.comp), bf16 (codec_gemm_bf16.comp) or f16 (codec_gemm_f16.comp)
// as stored in the .tmod, widened exactly when loaded (WLOAD, defined by the shader; 16-bit weights
// are read as 32-bit words, element i in half i % 2, little-endian): the same values, so the same bits
// as a float32 copy. flags bit 3 clear: stored [N][K] (a convolution or linear weight, B[kk][n] = w[n][kk]);
// set: stored [K][N] (a transposed convolution's [c_in][c_out * k], B[kk][n] = w[kk][n]).
// w_base counts elements (16-bit weights: must be even).
// Epilogue, in the CPU decoder's order: v = acc (+ bias[n], bit 0) (* scale[n], bit 1), then
// (bit 2) y = res[m][n] + v (res may be y itself: each element is read and written by one invocation).
// Up to three outputs (q|k|v, gate|up stacked by rows in one weight): column n goes to y0 below seg1,
// to y1 below seg2, else to y2, at its column within that segment (one output: seg1 = seg2 = ~0).
// Tiles of 64 x 64 outputs, 256 invocations with 4 x 4 outputs each (4 consecutive rows by 4
// consecutive columns, read from shared memory as vec4s), K in steps of 16 through shared memory. Every output is one sum over kk in index order, whatever M, the tile it falls in or the
// device: a row decoded alone or inside a longer chunk gets the same bits.
#define BM 64
#define BN 64
#define BK 16
layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 2) readonly buffer Bi { float bias[]; };
layout(std430, binding = 3) readonly buffer S { float sc[]; };
layout(std430, binding = 4) readonly buffer R { float res[]; };
layout(std430, binding = 5) buffer Y0 { float y0[]; };
layout(std430, binding = 6) buffer Y1 { float y1[]; };
layout(std430, binding = 7) buffer Y2 { float y2[]; };
layout(push_constant) uniform Push {
    uint M, N, K, cin, taps, dil, flags;
    uint x_base, w_base, b_base, s_base, r_base, y_base;
    uint y_stride, r_stride;   // floats between rows of y0 / res
    uint seg1, seg2, y_base1, y_base2, y_stride1, y_stride2;
} p;
shared vec4 As[BK][BM / 4];
shared vec4 Bs[BK][BN / 4];

void main() {
    uint tid = gl_LocalInvocationID.x;
    uint m0 = gl_WorkGroupID.y * BM, n0 = gl_WorkGroupID.x * BN;
    uint tm = tid / 16u, tn = tid % 16u;
    bool nn = (p.flags & 8u) != 0u;
    float acc[4][4];
    for (uint i = 0; i < 4; i++)
        for (uint j = 0; j < 4; j++) acc[i][j] = 0.0;
    for (uint k0 = 0; k0 < p.K; k0 += BK) {
        for (uint r = 0; r < 4; r++) {
            uint e = tid + 256u * r;
            // A: kk fastest (contiguous input channels for taps = 1)
            uint am = e / BK, ak = e % BK, gm = m0 + am, gk = k0 + ak;
            float av = 0.0;
            if (gm < p.M && gk < p.K) {
                uint ci = gk / p.taps, j = gk - ci * p.taps;
                av = x[p.x_base + (gm + j * p.dil) * p.cin + ci];
            }
            As[ak][am >> 2][am & 3u] = av;
            // B: the stored layout's fast index fastest
            uint bk, bn;
            if (nn) { bk = e / BN; bn = e % BN; } else { bn = e / BK; bk = e % BK; }
            uint gn = n0 + bn, gkb = k0 + bk;
            float bv = 0.0;
            if (gn < p.N && gkb < p.K) bv = WLOAD(p.w_base + (nn ? gkb * p.N + gn : gn * p.K + gkb));
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
    for (uint i = 0; i < 4; i++) {
        uint gm = m0 + tm * 4u + i;
        if (gm >= p.M) continue;
        for (uint j = 0; j < 4; j++) {
            uint gn = n0 + tn * 4u + j;
            if (gn >= p.N) continue;
            float v = acc[i][j];
            if ((p.flags & 1u) != 0u) v = v + bias[p.b_base + gn];
            if ((p.flags & 2u) != 0u) v = v * sc[p.s_base + gn];
            if ((p.flags & 4u) != 0u) v = res[p.r_base + gm * p.r_stride + gn] + v;
            if (gn < p.seg1) y0[p.y_base + gm * p.y_stride + gn] = v;
            else if (gn < p.seg2) y1[p.y_base1 + gm * p.y_stride1 + (gn - p.seg1)] = v;
            else y2[p.y_base2 + gm * p.y_stride2 + (gn - p.seg2)] = v;
        }
    }
}
