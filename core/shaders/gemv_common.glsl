// Shared by the GEMV shaders (n <= 4 x rows; the GEMM serves larger batches): the push constants,
// outputs and epilogue are linear_out.glsl's.
// One workgroup of RPW x 64 invocations per RPW x RPS output rows and group of up to NX x rows: the 64
// lanes of segment s take the RPS consecutive output rows from RPS (RPW * workgroup + s) and read their
// weights once for the group (an x chunk, loaded once, serves the segment's RPS rows); for each output
// row and x row, lane t sums the elements (or blocks) t, t + 64, ... in order, then a fixed tree in
// shared memory adds the 64 partial sums. The order of operations for an output depends only on the row
// length: never on the device's subgroup size, on n, on the grouping, on RPS or on the other rows of its
// workgroup, so a row computed alone or with up to 3 others gives the same bits.
// RPS (default 1) is set by the shaders with 16-byte loads: their wide variants (*_r4.comp) take 4 rows
// a segment, for matrices with enough rows to fill the device (ops_linear.c).
#define WG 64
#define RPW 4
#define NX 4
#ifndef RPS
#define RPS 1
#endif
layout(local_size_x = WG * RPW) in;
#include "linear_out.glsl"
shared float red[NX * RPS][WG * RPW];   // [row of the segment * NX + x row][invocation]

// the x rows of this workgroup: i0 .. i0 + nx - 1
uint gemv_i0() { return gl_WorkGroupID.z * NX; }
uint gemv_nx() { return min(uint(NX), p.n - gl_WorkGroupID.z * NX); }

uint gemv_lane() { return gl_LocalInvocationID.x % WG; }
uint gemv_seg() { return gl_LocalInvocationID.x / WG; }
// the first of the segment's RPS output rows
uint gemv_row() { return ((gl_WorkGroupID.x + gl_NumWorkGroups.x * gl_WorkGroupID.y) * RPW + gemv_seg()) * RPS; }
// the loop bound of a row's elements (or blocks): none past the last row
uint gemv_len(uint r, uint len) { return r < p.rows ? len : 0u; }

// the fixed trees of the partial sums of each segment (acc[q * NX + j]: output row r + q, x row j), then
// the outputs
void gemv_finish(float acc[NX * RPS], uint r) {
    uint t = gemv_lane(), o = gemv_seg() * WG, i0 = gemv_i0(), nx = gemv_nx();
    for (uint q = 0; q < RPS; q++)
        for (uint j = 0; j < nx; j++) red[q * NX + j][o + t] = acc[q * NX + j];
    barrier();
    for (uint s = WG / 2; s > 0; s >>= 1) {
        if (t < s)
            for (uint q = 0; q < RPS; q++)
                for (uint j = 0; j < nx; j++) red[q * NX + j][o + t] = red[q * NX + j][o + t] + red[q * NX + j][o + t + s];
        barrier();
    }
    if (t == 0)
        for (uint q = 0; q < RPS; q++)
            if (r + q < p.rows)
                for (uint j = 0; j < nx; j++) linear_store(red[q * NX + j][o], i0 + j, r + q);
}
