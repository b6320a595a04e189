// The body of the GEMVs with weights [rows][cols] (row-major, as stored in the .tmod) read one element
// at a time: the including file declares the weight buffer (binding 0) and float wload(uint e), the
// weight element e as float32; x and y are float32.
#define YB 2
#include "gemv_common.glsl"
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
        float wv = wload(e);
        for (uint j = 0; j < NX; j++)
            if (j < nx) acc[j] += wv * xin(j, k, x[xo + j * p.x_stride + k]);
    }
    gemv_finish(acc, r);
}
