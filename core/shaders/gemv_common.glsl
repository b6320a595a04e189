// Shared by the GEMV shaders (n <= 4 x rows; the GEMM serves larger batches): the push constants,
// outputs and epilogue are linear_out.glsl's.
// One workgroup of RPW x 64 invocations per RPW output rows and group of up to NX x rows: the 64 lanes
// of segment s take output row RPW * workgroup + s and read its weights once for the group; for each x
// row, lane t sums the elements (or blocks) t, t + 64, ... in order, then a fixed tree in shared memory
// adds the 64 partial sums. The order of operations for an output depends only on the row length: never
// on the device's subgroup size, on n, on the grouping or on the other rows of its workgroup, so a row
// computed alone or with up to 3 others gives the same bits.
// Rows beyond 65535 workgroups continue in gl_WorkGroupID.y; the x-row group is gl_WorkGroupID.z.
// Segments past the last row take part in the barriers but load nothing and store nothing.
#define WG 64
#define RPW 4
#define NX 4
layout(local_size_x = WG * RPW) in;
#include "linear_out.glsl"
shared float red[NX][WG * RPW];

// the x rows of this workgroup: i0 .. i0 + nx - 1
uint gemv_i0() { return gl_WorkGroupID.z * NX; }
uint gemv_nx() { return min(uint(NX), p.n - gl_WorkGroupID.z * NX); }

uint gemv_lane() { return gl_LocalInvocationID.x % WG; }
uint gemv_seg() { return gl_LocalInvocationID.x / WG; }
uint gemv_row() { return (gl_WorkGroupID.x + gl_NumWorkGroups.x * gl_WorkGroupID.y) * RPW + gemv_seg(); }
// the loop bound of a row's elements (or blocks): none past the last row
uint gemv_len(uint r, uint len) { return r < p.rows ? len : 0u; }

// the fixed trees of the NX partial sums of each segment, then the outputs
void gemv_finish(float acc[NX], uint r) {
    uint t = gemv_lane(), o = gemv_seg() * WG, i0 = gemv_i0(), nx = gemv_nx();
    for (uint j = 0; j < NX; j++) red[j][o + t] = acc[j];
    barrier();
    for (uint s = WG / 2; s > 0; s >>= 1) {
        if (t < s)
            for (uint j = 0; j < NX; j++) red[j][o + t] = red[j][o + t] + red[j][o + t + s];
        barrier();
    }
    if (t == 0 && r < p.rows)
        for (uint j = 0; j < nx; j++) linear_store(red[j][o], i0 + j, r);
}
