// GEMV with f16 weights [rows][cols] (row-major, as stored in the .tmod); x and y float32.
// (The body of gemv_f16.comp and of its prologue variants gemv_f16_norm / _silu.comp.)
#define YB 2
#include "gemv_common.glsl"
layout(std430, binding = 0) readonly buffer W { uint w[]; };  // two f16 per word, element e in half e & 1
layout(std430, binding = 1) readonly buffer X { float x[]; };
float xload(uint i) { return x[i]; }
#include "gemv_prologue.glsl"

void main() {
    uint r = gemv_row();
    gemv_prologue();
    uint nx = gemv_nx(), wo = r * p.cols, xo = p.x_base + gemv_i0() * p.x_stride;
    float acc[NX] = float[NX](0.0, 0.0, 0.0, 0.0);
    for (uint k = gemv_lane(); k < gemv_len(r, p.cols); k += WG) {
        uint e = wo + k;
        float wv = unpackHalf2x16(w[e >> 1] >> (16u * (e & 1u))).x;
        for (uint j = 0; j < NX; j++)
            if (j < nx) acc[j] += wv * xin(j, k, x[xo + j * p.x_stride + k]);
    }
    gemv_finish(acc, r);
}
