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
    uint wo = r * n4, xo = (p.x_base + gemv_i0() * p.x_stride) / 4;
    float acc[NX] = float[NX](0.0, 0.0, 0.0, 0.0);
    for (uint k = gemv_lane(); k < gemv_len(r, n4); k += WG) {
        vec4 a = w[wo + k];
        for (uint j = 0; j < NX; j++)
            if (j < nx) {
                vec4 b = xin4(j, 4 * k, x[xo + j * xs + k]);
                acc[j] += a.x * b.x;
                acc[j] += a.y * b.y;
                acc[j] += a.z * b.z;
                acc[j] += a.w * b.w;
            }
    }
    gemv_finish(acc, r);
}
