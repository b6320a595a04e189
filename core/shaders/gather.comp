#version 450
// out[e] = row codes[slot] of an embedding table (any .tmod dtype) as float32, exactly as
// vx_gather_rows (gather.glsl). The row index is read from a buffer written by sample.comp, so the
// chosen code's embedding is taken without the host.
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 64) in;
layout(push_constant) uniform Push { uint cols, dtype, slot, o_base, rows, c_base; } p;   // dtype: vox_dtype
#define GATHER_W 0
#define GATHER_S 1
#include "gather.glsl"
layout(std430, binding = 2) readonly buffer C { int codes[]; };
layout(std430, binding = 3) buffer O { float o[]; };

void main() {
    uint e = gl_GlobalInvocationID.x;
    if (e >= p.cols) return;
    uint r = uint(clamp(codes[p.c_base + p.slot], 0, int(p.rows) - 1));
    o[p.o_base + e] = gather_value(r, e);
}
