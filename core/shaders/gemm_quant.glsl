// The tiled GEMM for q8/q4 weights: y = bias + sum over blocks b of float(isum_b) * (w_scale_b *
// x_scale_b), isum_b the exact int32 dot product of the block's weight codes with the int8 codes of x
// (quantize_q8.comp), as the CPU kernels and the GEMV. K goes one 32-block at a time (BK = 32); the
// codes are widened to int in shared memory. The shader defines wq_load, the signed code of weight
// (row r of this part, block b, element k).
#extension GL_GOOGLE_include_directive : require
#define YB 4
#define BK 32
#include "gemm_common.glsl"
layout(std430, binding = 1) readonly buffer S { float wsc[]; };   // [rows][cols / 32]
layout(std430, binding = 2) readonly buffer XQ { uint xq[]; };    // [n][cols / 32][8]: 4 int8 codes a word
layout(std430, binding = 3) readonly buffer XD { float xd[]; };   // [n][cols / 32]

int wq_load(uint r, uint b, uint k);

shared int xs[BK][TM + 1];
shared int ws[BK][TN + 1];
shared float xds[TM], wds[TN];

void main() {
    uint lid = gemm_lid(), tx = gemm_tx(), ty = gemm_ty(), r0 = gemm_r0(), i0 = gemm_i0();
    uint nb = p.cols / 32;
    float acc[4][2];
    for (uint i = 0; i < 4; i++) acc[i][0] = acc[i][1] = 0.0;
    for (uint b = 0; b < nb; b++) {
        for (uint e = lid; e < TM * BK; e += 256u) {
            uint i = e / BK, k = e % BK, xi = i0 + i;
            int c = 0;
            if (xi < p.n) {
                uint xb = p.x_base + xi * p.x_stride + b;
                c = bitfieldExtract(int(xq[8u * xb + k / 4u]), int(8u * (k % 4u)), 8);
            }
            xs[k][i] = c;
        }
        for (uint e = lid; e < TN * BK; e += 256u) {
            uint j = e / BK, k = e % BK, r = r0 + j;
            ws[k][j] = r < p.rows ? wq_load(r, b, k) : 0;
        }
        if (lid < TM) {
            uint xi = i0 + lid;
            xds[lid] = xi < p.n ? xd[p.x_base + xi * p.x_stride + b] : 0.0;
        } else if (lid < TM + TN) {
            uint r = r0 + lid - TM;
            wds[lid - TM] = r < p.rows ? wsc[r * nb + b] : 0.0;
        }
        barrier();
        int s[4][2];
        for (uint i = 0; i < 4; i++) s[i][0] = s[i][1] = 0;
        for (uint k = 0; k < BK; k++) {
            int w0 = ws[k][tx], w1 = ws[k][tx + 16u];
            for (uint i = 0; i < 4; i++) {
                int xv = xs[k][ty + 16u * i];
                s[i][0] += xv * w0;
                s[i][1] += xv * w1;
            }
        }
        for (uint i = 0; i < 4; i++)
            for (uint j = 0; j < 2; j++) acc[i][j] += float(s[i][j]) * (wds[tx + 16u * j] * xds[ty + 16u * i]);
        barrier();
    }
    gemm_finish(acc);
}
