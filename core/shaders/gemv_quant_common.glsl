// q8/q4 GEMV: y = bias + sum over blocks b of float(isum_b) * (w_scale_b * x_scale_b), isum_b the exact
// int32 dot product of the block's codes with the int8 codes of x (quantize_q8.comp), as the CPU
// kernels (kernels.h). Invocation t takes blocks t, t + 64, ... in order; then the fixed tree.
#extension GL_GOOGLE_include_directive : require
#define YB 4
#include "gemv_common.glsl"
layout(std430, binding = 1) readonly buffer S { float ws[]; };   // [rows][cols / 32]
layout(std430, binding = 2) readonly buffer XQ { uvec4 xq[]; }; // [n][cols / 32][2]: 32 int8 codes per block
layout(std430, binding = 3) readonly buffer XD { float xd[]; };  // [n][cols / 32]

int dot4(uint a, uint b) {   // four signed bytes of each
    return bitfieldExtract(int(a), 0, 8) * bitfieldExtract(int(b), 0, 8) +
           bitfieldExtract(int(a), 8, 8) * bitfieldExtract(int(b), 8, 8) +
           bitfieldExtract(int(a), 16, 8) * bitfieldExtract(int(b), 16, 8) +
           bitfieldExtract(int(a), 24, 8) * bitfieldExtract(int(b), 24, 8);
}

// defined by gemv_q8 / gemv_q4: the weight block (r, b) loaded once, then its dot with x block xb
void load_block(uint r, uint b);
int block_dot(uint xb);

void main() {
    uint r = gemv_row();
    uint nx = gemv_nx(), nb = p.cols / 32, x0 = p.x_base + gemv_i0() * p.x_stride;   // x_stride in blocks
    float acc[NX] = float[NX](0.0, 0.0, 0.0, 0.0);
    for (uint b = gemv_lane(); b < gemv_len(r, nb); b += WG) {
        load_block(r, b);
        float sw = ws[r * nb + b];
        for (uint j = 0; j < NX; j++)
            if (j < nx) {
                uint xb = x0 + j * p.x_stride + b;
                acc[j] += float(block_dot(xb)) * (sw * xd[xb]);
            }
    }
    gemv_finish(acc, r);
}
