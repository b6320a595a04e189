// Shared by the GEMV shaders: y[i][y_offset + r] = x[i] . W[r] (+ bias[y_offset + r]), or, with
// flags bit 1 (a residual connection), y += that, in the CPU's order: y + (x . W + bias).
// Up to three outputs: W may be several matrices of one input stacked by rows (q|k|v, gate|up); global
// row R goes to output 0 below seg1, to output 1 below seg2, else to output 2, at its row within that
// segment. The outputs and the (stacked) bias are bound at YB .. YB + 3 (YB: defined by the shader).
// Tensors are bound whole; x_base, y_base and b_base are their first elements (so any float offset
// works, whatever the device's minStorageBufferOffsetAlignment).
// One workgroup of 64 invocations per (output row, group of up to NX x rows): the weights are read once
// for the group; for each x row, invocation t sums the elements (or blocks) t, t + 64, ... in order,
// then a fixed tree in shared memory adds the 64 partial sums. The order of operations for an output
// depends only on the row length: never on the device's subgroup size, on n, or on the grouping, so
// a row computed alone or in a prefill batch gives the same bits.
// Rows beyond 65535 workgroups continue in gl_WorkGroupID.y; the x-row group is gl_WorkGroupID.z.
#define WG 64
#define NX 4
layout(local_size_x = WG) in;
layout(push_constant) uniform Push {
    uint rows;       // rows of this part of W
    uint cols;
    uint x_stride;   // floats (or blocks for quantized x) between x rows
    uint y_offset;   // first (global) row of this part
    uint flags;      // bit 0: bias; bit 1: add to y
    uint x_base;     // first element of x (floats; quantized x: blocks)
    uint b_base;
    uint seg1, seg2; // first global rows of outputs 1 and 2
    uint y_base0, y_base1, y_base2;
    uint y_stride0, y_stride1, y_stride2;   // floats between rows of x row i's outputs
    uint n;          // x rows
} p;

#if YB == 2
layout(std430, binding = 2) buffer Y0 { float y0[]; };
layout(std430, binding = 3) buffer Y1 { float y1[]; };
layout(std430, binding = 4) buffer Y2 { float y2[]; };
layout(std430, binding = 5) readonly buffer B { float bias[]; };
#elif YB == 4
layout(std430, binding = 4) buffer Y0 { float y0[]; };
layout(std430, binding = 5) buffer Y1 { float y1[]; };
layout(std430, binding = 6) buffer Y2 { float y2[]; };
layout(std430, binding = 7) readonly buffer B { float bias[]; };
#endif
shared float red[NX][WG];

// the x rows of this workgroup: i0 .. i0 + nx - 1
uint gemv_i0() { return gl_WorkGroupID.z * NX; }
uint gemv_nx() { return min(uint(NX), p.n - gl_WorkGroupID.z * NX); }

uint gemv_row() { return gl_WorkGroupID.x + gl_NumWorkGroups.x * gl_WorkGroupID.y; }

// the epilogue of one output, run by invocation 0
void gemv_store(float s, uint i, uint r) {
    uint R = p.y_offset + r;
    float v = (p.flags & 1u) != 0u ? s + bias[p.b_base + R] : s;
    bool acc = (p.flags & 2u) != 0u;
    if (R < p.seg1) {
        uint yi = p.y_base0 + i * p.y_stride0 + R;
        y0[yi] = acc ? y0[yi] + v : v;
    } else if (R < p.seg2) {
        uint yi = p.y_base1 + i * p.y_stride1 + (R - p.seg1);
        y1[yi] = acc ? y1[yi] + v : v;
    } else {
        uint yi = p.y_base2 + i * p.y_stride2 + (R - p.seg2);
        y2[yi] = acc ? y2[yi] + v : v;
    }
}

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
        for (uint j = 0; j < nx; j++) gemv_store(red[j][0], i0 + j, r);
}
