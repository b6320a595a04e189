// The codec decoder's tiled GEMM (codec_gemm_common.glsl: implicit im2col, [N][K] or [K][N] weights,
// K summed in chunks of KC, split K, codec_epilogue.glsl) on cooperative matrices (VK_KHR_cooperative_
// matrix: tensor cores), for f16 and bf16 weights, taken as float16 (f16: exact; bf16: exact below
// 65536 in magnitude down to float16's subnormal step, which the host checks at upload). The device
// must offer 16x16x16 products of float16 A and B into float32. x is float32: each value goes in as
// two float16, hi = x cut to 11 significant bits and lo = f16((x - hi) * 2^12), accumulated apart,
// x . w = hi . w + (lo . w) / 2^12 (gemm_cm.glsl's scheme: x keeps about 22 of its 24 bits).
// A workgroup of NSG = 4 subgroups computes TM = 64 rows by TN = 32 outputs; subgroup s owns rows
// 16 s .. 16 s + 15 and both 16-wide column blocks. K goes BK = 64 a step through shared memory. Each
// chunk's products are joined (hi + lo / 2^12) in shared memory and added, in chunk order, to a
// running total per output held by one invocation, so every output is ((c_0 + c_1) + c_2) + ... of
// the same chunk values whatever M, the tile or the split: the same bits split or not, for any M
// (not the bits of the float32 GEMM). The workgroup's size is NSG times the subgroup size the host
// passes (specialization constant 0); a device that runs it with other subgroups gets NaN outputs.
#include "cm_tile.glsl"
#define PER 32        // outputs per invocation at most (TM * TN / the smallest workgroup, 4 x 16)
layout(local_size_x_id = 0) in;
layout(std430, binding = 0) readonly buffer X { float x[]; };
#include "codec_epilogue.glsl"


void main() {
    uint lid = gl_LocalInvocationID.x, nt = gl_WorkGroupSize.x;
    uint n0 = gl_WorkGroupID.x * TN, m0 = gl_WorkGroupID.y * TM;
    bool nn = (p.flags & 8u) != 0u, split = (p.flags & 64u) != 0u;
    if (gl_NumSubgroups != NSG || nt * PER < TM * TN) {   // uniform over the workgroup
        for (uint e = lid; e < TM * TN; e += nt) {
            uint gm = m0 + e / TN, gn = n0 + e % TN;
            if (gm < p.M && gn < p.N) {
                if (split) y0[p.y_base + (gl_WorkGroupID.z * p.M + gm) * p.N + gn] = uintBitsToFloat(0x7fc00000u);
                else codec_store(gm, gn, uintBitsToFloat(0x7fc00000u));
            }
        }
        return;
    }
    uint sg = gl_SubgroupID;
    uint nc = (p.K + KC - 1u) / KC;
    uint c0 = split ? gl_WorkGroupID.z : 0u, c1 = split ? c0 + 1u : nc;
    float tot[PER];
    for (uint i = 0; i < PER; i++) tot[i] = 0.0;
    for (uint c = c0; c < c1; c++) {
        coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> acc[TN / 16];
        coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> acl[TN / 16];
        for (uint b = 0; b < TN / 16; b++) {
            acc[b] = coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(0.0);
            acl[b] = coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(0.0);
        }
        uint kend = min(p.K, (c + 1u) * KC);
        for (uint k0 = c * KC; k0 < kend; k0 += BK) {
            for (uint e = lid; e < TM * BK; e += nt) {
                uint i = e / BK, k = e % BK, gm = m0 + i, gk = k0 + k;
                float v = 0.0;
                if (gm < p.M && gk < kend) {
                    uint ci = gk / p.taps, j = gk - ci * p.taps;
                    v = x[p.x_base + (gm + j * p.dil) * p.cin + ci];
                }
                CM_SPLIT_X(i * LD + k, v)
            }
            for (uint e = lid; e < TN * BK; e += nt) {
                // [N][K]: k fastest (contiguous); [K][N]: n fastest
                uint j = nn ? e % TN : e / BK, k = nn ? e / TN : e % BK, gn = n0 + j, gk = k0 + k;
                float v = 0.0;
                if (gn < p.N && gk < kend) v = wload(p.w_base + (nn ? gk * p.N + gn : gn * p.K + gk));
                wt[j * LD + k] = float16_t(v);
            }
            barrier();
            CM_MMA_STEP()
            barrier();
        }
        CM_STORE_ACC()
        barrier();
        for (uint i = 0; i < PER; i++) {
            uint e = lid + i * nt;
            if (e < TM * TN) {
                precise float v = outs[e] + outl[e] * (1.0 / 4096.0);
                tot[i] = c == c0 ? v : tot[i] + v;
            }
        }
        barrier();
    }
    for (uint i = 0; i < PER; i++) {
        uint e = lid + i * nt;
        if (e >= TM * TN) break;
        uint gm = m0 + e / TN, gn = n0 + e % TN;
        if (gm >= p.M || gn >= p.N) continue;
        if (split) y0[p.y_base + (c0 * p.M + gm) * p.N + gn] = tot[i];
        else codec_store(gm, gn, tot[i]);
    }
}
