// GEMV with f32 weights, 16-byte loads (cols % 4 == 0, x 16-byte aligned): invocation t takes the
// 4-element chunks t, t + 64, ... and adds their products in element order.
// (The body of gemv_f32v.comp and of its prologue variants gemv_f32v_norm / _silu.comp.)
#define YB 2
#include "gemv_common.glsl"
layout(std430, binding = 0) readonly buffer W { vec4 w[]; };
layout(std430, binding = 1) readonly buffer X { vec4 x[]; };
float xload(uint i) { return x[i >> 2][i & 3u]; }
#include "gemv_prologue.glsl"

void main() {
    uint r = gemv_row();
    gemv_prologue();
    uint nx = gemv_nx(), n4 = p.cols / 4, xs = p.x_stride / 4;
    uint xo = (p.x_base + gemv_i0() * p.x_stride) / 4;
    float acc[NX * RPS];
    for (uint i = 0; i < NX * RPS; i++) acc[i] = 0.0;
    for (uint k = gemv_lane(); k < gemv_len(r, n4); k += WG) {
        vec4 xb[NX];   // this chunk of the x rows, for the segment's RPS output rows
        for (uint j = 0; j < NX; j++)
            if (j < nx) xb[j] = xin4(j, 4 * k, x[xo + j * xs + k]);
        for (uint q = 0; q < RPS; q++)
            if (r + q < p.rows) {
                vec4 a = w[(r + q) * n4 + k];
                for (uint j = 0; j < NX; j++)
                    if (j < nx) {
                        uint i = q * NX + j;
                        acc[i] += a.x * xb[j].x;
                        acc[i] += a.y * xb[j].y;
                        acc[i] += a.z * xb[j].z;
                        acc[i] += a.w * xb[j].w;
                    }
            }
    }
    gemv_finish(acc, r);
}
