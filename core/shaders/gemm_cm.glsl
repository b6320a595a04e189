// The GEMM on cooperative matrices (VK_KHR_cooperative_matrix: tensor cores), for f16 and bf16 weights,
// with the push constants, bindings and epilogues of the other linear layers (linear_out.glsl).
// The device must offer 16x16x16 products of float16 A and B into float32 (the host checks its
// cooperative-matrix properties). x is float32: each value goes in as two float16, hi = x cut to 11
// significant bits and lo = f16((x - hi) * 2^12) (scaled: float16 subnormals may be flushed),
// accumulated apart and joined at the end, x . w = hi . w + (lo . w) / 2^12, so x keeps about 22 of
// its 24 significant bits; the weights go in as float16 (f16: exact; bf16: see gemm_cm_bf16.comp).
// A workgroup of NSG = 4 subgroups computes a tile of TM = 64 x rows by TN = 32 weight rows (64 in the wide
// variant, gemm_cm_wide_*.comp, for large products: each x tile serves twice the outputs; its hi and lo
// products go through one shared output tile in turn, so that it fits in 48 KiB); subgroup s owns the 16 x rows
// 16 s .. and the TN / 16 16x16 blocks of weight rows. K goes 64 columns a step through
// shared memory, products in column order, so an output's bits depend only on the row length (any n,
// any tile). The tiles are filled with 16-byte loads (x 4 floats, W 8 halves at a time) when the host
// sets flags bit 2 (x_base and x_stride multiples of 4, cols of 8): the same values in shared memory,
// a quarter to an eighth of the load instructions (the scalar loads kept the tensor cores waiting). The workgroup's size is NSG times the subgroup size the host passes (specialization
// constant 0); a device that runs it with other subgroups gets NaN outputs, never silent garbage.
#extension GL_GOOGLE_include_directive : require
#include "cm_tile.glsl"
layout(local_size_x_id = 0) in;
#define YB 2
#include "linear_out.glsl"
layout(std430, binding = 1) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer X4 { vec4 x4[]; };   // the same buffer, 16 bytes at a time

float w_load(uint r, uint k);   // the weight at row r of this part, column k
void w_load8(uint r, uint k, out vec4 a, out vec4 b);   // its columns k .. k + 7 (k and cols multiples of 8)


void main() {
    uint lid = gl_LocalInvocationID.x, nt = gl_WorkGroupSize.x;
    uint r0 = gl_WorkGroupID.x * TN, i0 = gl_WorkGroupID.y * TM;
    if (gl_NumSubgroups != NSG) {   // uniform over the workgroup: no barrier is skipped by some only
        for (uint e = lid; e < TM * TN; e += nt) {
            uint i = i0 + e / TN, r = r0 + e % TN;
            if (i < p.n && r < p.rows) linear_store(uintBitsToFloat(0x7fc00000u), i, r);
        }
        return;
    }
    uint sg = gl_SubgroupID;
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> acc[TN / 16];
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> acl[TN / 16];
    for (uint c = 0; c < TN / 16; c++) {
        acc[c] = coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(0.0);
        acl[c] = coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(0.0);
    }
    const bool wide_loads = (p.flags & 4u) != 0u;   // uniform: the same branch in every invocation
    for (uint k0 = 0; k0 < p.cols; k0 += BK) {
        if (wide_loads) {
            for (uint e = lid; e < TM * BK / 4; e += nt) {
                uint i = e / (BK / 4), k = (e % (BK / 4)) * 4, xi = i0 + i, kk = k0 + k;
                vec4 v = xi < p.n && kk < p.cols ? x4[(p.x_base + xi * p.x_stride + kk) >> 2] : vec4(0.0);
                CM_SPLIT_X(i * LD + k, v.x)
                CM_SPLIT_X(i * LD + k + 1, v.y)
                CM_SPLIT_X(i * LD + k + 2, v.z)
                CM_SPLIT_X(i * LD + k + 3, v.w)
            }
            for (uint e = lid; e < TN * BK / 8; e += nt) {
                uint j = e / (BK / 8), k = (e % (BK / 8)) * 8, r = r0 + j, kk = k0 + k;
                vec4 a = vec4(0.0), b = vec4(0.0);
                if (r < p.rows && kk < p.cols) w_load8(r, kk, a, b);
                uint o = j * LD + k;
                wt[o] = float16_t(a.x), wt[o + 1] = float16_t(a.y), wt[o + 2] = float16_t(a.z), wt[o + 3] = float16_t(a.w);
                wt[o + 4] = float16_t(b.x), wt[o + 5] = float16_t(b.y), wt[o + 6] = float16_t(b.z), wt[o + 7] = float16_t(b.w);
            }
        } else {
            for (uint e = lid; e < TM * BK; e += nt) {
                uint i = e / BK, k = e % BK, xi = i0 + i, kk = k0 + k;
                float v = xi < p.n && kk < p.cols ? x[p.x_base + xi * p.x_stride + kk] : 0.0;
                CM_SPLIT_X(i * LD + k, v)
            }
            for (uint e = lid; e < TN * BK; e += nt) {
                uint j = e / BK, k = e % BK, r = r0 + j, kk = k0 + k;
                wt[j * LD + k] = float16_t(r < p.rows && kk < p.cols ? w_load(r, kk) : 0.0);
            }
        }
        barrier();
        CM_MMA_STEP()
        barrier();
    }
#ifdef CM_JOIN_ACC   // lo . w through the one shared tile into registers, then hi . w, joined as below
    for (uint c = 0; c < TN / 16; c++)
        coopMatStore(acl[c], outs, sg * 16 * TN + c * 16, TN, gl_CooperativeMatrixLayoutRowMajor);
    barrier();
    float lo[TM * TN / 64];   // at least 64 invocations (4 subgroups of 16 or more)
    for (uint q = 0; q < TM * TN / 64; q++) {
        uint e = lid + q * nt;
        lo[q] = e < TM * TN ? outs[e] : 0.0;
    }
    barrier();
    for (uint c = 0; c < TN / 16; c++)
        coopMatStore(acc[c], outs, sg * 16 * TN + c * 16, TN, gl_CooperativeMatrixLayoutRowMajor);
    barrier();
    for (uint q = 0; q < TM * TN / 64; q++) {
        uint e = lid + q * nt, i = i0 + e / TN, r = r0 + e % TN;
        if (e < TM * TN && i < p.n && r < p.rows) linear_store(outs[e] + lo[q] * (1.0 / 4096.0), i, r);
    }
}
#else
    CM_STORE_ACC()
    barrier();
    for (uint e = lid; e < TM * TN; e += nt) {
        uint i = i0 + e / TN, r = r0 + e % TN;
        if (i < p.n && r < p.rows) linear_store(outs[e] + outl[e] * (1.0 / 4096.0), i, r);
    }
}
#endif
