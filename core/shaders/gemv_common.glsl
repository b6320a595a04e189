// Shared by the GEMV shaders (n <= 4 x rows; the GEMM serves larger batches): the push constants,
// outputs and epilogue are linear_out.glsl's.
// One workgroup of 64 invocations per (output row, group of up to NX x rows): the weights are read once
// for the group; for each x row, invocation t sums the elements (or blocks) t, t + 64, ... in order,
// then a fixed tree in shared memory adds the 64 partial sums. The order of operations for an output
// depends only on the row length: never on the device's subgroup size, on n, or on the grouping, so
// a row computed alone or with up to 3 others gives the same bits.
// Rows beyond 65535 workgroups continue in gl_WorkGroupID.y; the x-row group is gl_WorkGroupID.z.
#define WG 64
#define NX 4
layout(local_size_x = WG) in;
#include "linear_out.glsl"
shared float red[NX][WG];

// the x rows of this workgroup: i0 .. i0 + nx - 1
uint gemv_i0() { return gl_WorkGroupID.z * NX; }
uint gemv_nx() { return min(uint(NX), p.n - gl_WorkGroupID.z * NX); }

uint gemv_row() { return gl_WorkGroupID.x + gl_NumWorkGroups.x * gl_WorkGroupID.y; }

// the fixed trees of the NX partial sums, then the outputs
void gemv_finish(float acc[NX], uint r) {
    uint t = gl_LocalInvocationID.x, i0 = gemv_i0(), nx = gemv_nx();
    for (uint j = 0; j < NX; j++) red[j][t] = acc[j];
    barrier();
    for (uint s = WG / 2; s > 0; s >>= 1) {
        if (t < s)
            for (uint j = 0; j < NX; j++) red[j][t] = red[j][t] + red[j][t + s];
        barrier();
    }
    if (t == 0)
        for (uint j = 0; j < nx; j++) linear_store(red[j][0], i0 + j, r);
}
