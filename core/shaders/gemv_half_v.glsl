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
    uint xo = (p.x_base + gemv_i0() * p.x_stride) / 4;
    float acc[NX * RPS];
    for (uint i = 0; i < NX * RPS; i++) acc[i] = 0.0;
    for (uint k = gemv_lane(); k < gemv_len(r, n8); k += WG) {
        vec4 x0[NX], x1[NX];   // this chunk of the x rows, for the segment's RPS output rows
        for (uint j = 0; j < NX; j++)
            if (j < nx) {
                x0[j] = xin4(j, 8 * k, x[xo + j * xs + 2 * k]);
                x1[j] = xin4(j, 8 * k + 4, x[xo + j * xs + 2 * k + 1]);
            }
        for (uint q = 0; q < RPS; q++)
            if (r + q < p.rows) {
                uvec4 wq = w[(r + q) * n8 + k];
                vec2 a = widen(wq.x), b = widen(wq.y), c = widen(wq.z), d = widen(wq.w);
                for (uint j = 0; j < NX; j++)
                    if (j < nx) {
                        uint i = q * NX + j;
                        acc[i] += a.x * x0[j].x;
                        acc[i] += a.y * x0[j].y;
                        acc[i] += b.x * x0[j].z;
                        acc[i] += b.y * x0[j].w;
                        acc[i] += c.x * x1[j].x;
                        acc[i] += c.y * x1[j].y;
                        acc[i] += d.x * x1[j].z;
                        acc[i] += d.y * x1[j].w;
                    }
            }
    }
    gemv_finish(acc, r);
}
