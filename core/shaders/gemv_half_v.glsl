// The body of the GEMVs with 16-bit weights and 16-byte loads (cols % 8 == 0, x 16-byte aligned):
// invocation t takes the 8-element chunks t, t + 64, ... and adds their products in element order.
// The including file defines vec2 widen(uint v): the two 16-bit weights of a word as float32.
#define YB 2
#include "gemv_common.glsl"
layout(std430, binding = 0) readonly buffer W { uvec4 w[]; };
layout(std430, binding = 1) readonly buffer X { vec4 x[]; };
float xload(uint i) { return x[i >> 2][i & 3u]; }
#include "gemv_prologue.glsl"

void main() {
    uint r = gemv_row();
    gemv_prologue();
    uint nx = gemv_nx(), n8 = p.cols / 8, xs = p.x_stride / 4;
    uint wo = r * n8, xo = (p.x_base + gemv_i0() * p.x_stride) / 4;
    float acc[NX] = float[NX](0.0, 0.0, 0.0, 0.0);
    for (uint k = gemv_lane(); k < gemv_len(r, n8); k += WG) {
        uvec4 q = w[wo + k];
        vec2 a = widen(q.x), b = widen(q.y), c = widen(q.z), d = widen(q.w);
        for (uint j = 0; j < NX; j++)
            if (j < nx) {
                vec4 x0 = xin4(j, 8 * k, x[xo + j * xs + 2 * k]), x1 = xin4(j, 8 * k + 4, x[xo + j * xs + 2 * k + 1]);
                acc[j] += a.x * x0.x;
                acc[j] += a.y * x0.y;
                acc[j] += b.x * x0.z;
                acc[j] += b.y * x0.w;
                acc[j] += c.x * x1.x;
                acc[j] += c.y * x1.y;
                acc[j] += d.x * x1.z;
                acc[j] += d.y * x1.w;
            }
    }
    gemv_finish(acc, r);
}
