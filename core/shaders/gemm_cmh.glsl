// The one-product GEMM on cooperative matrices (tensor cores): x rounded to float16 once (clamped to
// +-65504), the weights as float16 (f16: exact; bf16: see gemm_cmh_bf16.comp), float32 sums: the
// arithmetic of an fp16 model on a GPU (the official F5-TTS runs its DiT so on CUDA). For the large
// products of a DiT (vx_gmat.cm_half, chosen per matrix by its owner); gemm_cm.glsl keeps x's float32
// precision with two products (hi + lo) at twice the tensor-core work.
// A workgroup of NSG = 4 subgroups computes a tile of TM = 128 x rows by TN = 128 weight rows; subgroup s
// owns the 64 x 64 quarter (s / 2, s % 2) as 4 x 4 accumulators of 16 x 16, so each A and B fragment
// loaded from shared memory serves 4 products. K goes BK = 32 columns a step through two shared buffers:
// the next step's x and weights are read from global memory into registers (16-byte loads) before this
// step's products and stored into the other buffer after them, one barrier a step. Products in column
// order, so an output's bits depend only on the row length (any n, any tile). The host uses it where x
// rows and the weight rows line up on 16 bytes (x_base, x_stride multiples of 4; cols of 8). The
// workgroup is NSG times the subgroup size (specialization constant 0); other subgroup counts give NaN.
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
layout(local_size_x_id = 0) in;
#define YB 2
#include "linear_out.glsl"
layout(std430, binding = 1) readonly buffer X4 { vec4 x4[]; };
layout(std430, binding = 0) readonly buffer W4 { uvec4 w4[]; };
f16vec4 w_lo(uvec4 q);   // weights 0 .. 3 of 8 packed in q (the including shader's dtype)
f16vec4 w_hi(uvec4 q);   // weights 4 .. 7

#define TM 128
#define TN 128
#define BK 32
#define NSG 4
#define LD4 10   // shared row stride in f16vec4: 40 halves (32 + 8 against bank conflicts), 80 bytes
#define XV (TM * BK / 4)   // f16vec4 of x a step
#define WV (TN * BK / 8)   // uvec4 of weights a step
#define CM_ACC coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>

shared f16vec4 xs[2 * TM * LD4], ws[2 * TN * LD4];
shared float ep[NSG * 256];   // a subgroup's 16 x 16 outputs on their way to linear_store

f16vec4 xr[8];   // the next step's tiles, in registers (at least 128 invocations: 8 and 4 loads each)
uvec4 wr[4];

void load_step(uint k0, uint i0, uint r0, uint lid, uint nt) {
    for (uint q = 0; q < 8; q++) {
        uint e = lid + q * nt, i = e / (BK / 4), k = (e % (BK / 4)) * 4, xi = i0 + i, kk = k0 + k;
        vec4 v = e < XV && xi < p.n && kk < p.cols ? x4[(p.x_base + xi * p.x_stride + kk) >> 2] : vec4(0.0);
        xr[q] = f16vec4(clamp(v, vec4(-65504.0), vec4(65504.0)));
    }
    for (uint q = 0; q < 4; q++) {
        uint e = lid + q * nt, j = e / (BK / 8), k = (e % (BK / 8)) * 8, r = r0 + j, kk = k0 + k;
        wr[q] = e < WV && r < p.rows && kk < p.cols ? w4[(r * p.cols + kk) >> 3] : uvec4(0u);
    }
}

void store_step(uint buf, uint lid, uint nt) {
    for (uint q = 0; q < 8; q++) {
        uint e = lid + q * nt;
        if (e < XV) xs[buf * TM * LD4 + (e / (BK / 4)) * LD4 + e % (BK / 4)] = xr[q];
    }
    for (uint q = 0; q < 4; q++) {
        uint e = lid + q * nt, o = buf * TN * LD4 + (e / (BK / 8)) * LD4 + (e % (BK / 8)) * 2;
        if (e < WV) {
            ws[o] = w_lo(wr[q]);
            ws[o + 1] = w_hi(wr[q]);
        }
    }
}

void main() {
    uint lid = gl_LocalInvocationID.x, nt = gl_WorkGroupSize.x;
    uint r0 = gl_WorkGroupID.x * TN, i0 = gl_WorkGroupID.y * TM;
    if (gl_NumSubgroups != NSG || nt < 128) {   // uniform over the workgroup: no barrier is skipped by some only
        for (uint e = lid; e < TM * TN; e += nt) {
            uint i = i0 + e / TN, r = r0 + e % TN;
            if (i < p.n && r < p.rows) linear_store(uintBitsToFloat(0x7fc00000u), i, r);
        }
        return;
    }
    uint sg = gl_SubgroupID, wm = (sg >> 1) * 64, wn = (sg & 1u) * 64;
    CM_ACC acc[16];
    for (uint c = 0; c < 16; c++) acc[c] = CM_ACC(0.0);
    uint nk = (p.cols + BK - 1) / BK;
    load_step(0, i0, r0, lid, nt);
    store_step(0, lid, nt);
    barrier();
    for (uint kt = 0; kt < nk; kt++) {
        uint buf = kt & 1u;
        if (kt + 1 < nk) load_step((kt + 1) * BK, i0, r0, lid, nt);   // in flight during the products
        for (uint kk = 0; kk < BK / 16; kk++) {
            coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> a[4];
            for (uint m = 0; m < 4; m++)
                coopMatLoad(a[m], xs, buf * TM * LD4 + (wm + m * 16) * LD4 + kk * 4, LD4, gl_CooperativeMatrixLayoutRowMajor);
            for (uint c = 0; c < 4; c++) {
                coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> b;
                coopMatLoad(b, ws, buf * TN * LD4 + (wn + c * 16) * LD4 + kk * 4, LD4, gl_CooperativeMatrixLayoutColumnMajor);
                for (uint m = 0; m < 4; m++) acc[m * 4 + c] = coopMatMulAdd(a[m], b, acc[m * 4 + c]);
            }
        }
        if (kt + 1 < nk) store_step(buf ^ 1u, lid, nt);   // the buffer the last step read: free since its barrier
        barrier();
    }
    // each 16 x 16 block through the subgroup's staging tile to the epilogue
    uint lane = gl_SubgroupInvocationID, ss = gl_SubgroupSize;
    for (uint m = 0; m < 4; m++)
        for (uint c = 0; c < 4; c++) {
            coopMatStore(acc[m * 4 + c], ep, sg * 256, 16, gl_CooperativeMatrixLayoutRowMajor);
            subgroupMemoryBarrierShared();
            subgroupBarrier();
            for (uint e = lane; e < 256; e += ss) {
                uint i = i0 + wm + m * 16 + e / 16, r = r0 + wn + c * 16 + e % 16;
                if (i < p.n && r < p.rows) linear_store(ep[sg * 256 + e], i, r);
            }
            subgroupBarrier();
        }
}
