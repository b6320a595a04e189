// The tiled GEMM for float weights (f32, f16, bf16: the shader defines w_load, the weight at row r of
// this part and column k, as a float). x is float32 at binding 1.
#extension GL_GOOGLE_include_directive : require
#define YB 2
#define BK 64
#include "gemm_common.glsl"
layout(std430, binding = 1) readonly buffer X { float x[]; };

float w_load(uint r, uint k);

shared float xs[BK][TM + 1];   // [k][x row]
shared float ws[BK][TN + 1];   // [k][weight row]

void main() {
    uint lid = gemm_lid(), tx = gemm_tx(), ty = gemm_ty(), r0 = gemm_r0(), i0 = gemm_i0();
    float acc[4][2];
    for (uint i = 0; i < 4; i++) acc[i][0] = acc[i][1] = 0.0;
    for (uint k0 = 0; k0 < p.cols; k0 += BK) {
        // 64 x 32 x values and 32 x 32 weights, zeros past the edges; consecutive invocations read
        // consecutive columns
        for (uint e = lid; e < TM * BK; e += 256u) {
            uint i = e / BK, k = e % BK, xi = i0 + i, kk = k0 + k;
            xs[k][i] = xi < p.n && kk < p.cols ? x[p.x_base + xi * p.x_stride + kk] : 0.0;
        }
        for (uint e = lid; e < TN * BK; e += 256u) {
            uint j = e / BK, k = e % BK, r = r0 + j, kk = k0 + k;
            ws[k][j] = r < p.rows && kk < p.cols ? w_load(r, kk) : 0.0;
        }
        barrier();
        uint kn = min(uint(BK), p.cols - k0);   // past the last column nothing is added (not even 0)
        for (uint k = 0; k < kn; k++) {
            float w0 = ws[k][tx], w1 = ws[k][tx + 16u];
            for (uint i = 0; i < 4; i++) {
                float xv = xs[k][ty + 16u * i];
                acc[i][0] += xv * w0;
                acc[i][1] += xv * w1;
            }
        }
        barrier();
    }
    gemm_finish(acc);
}
