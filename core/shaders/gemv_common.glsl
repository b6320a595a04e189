// Shared by the GEMV shaders: y[i][y_offset + r] = x[i] . W[r] (+ bias[y_offset + r]), or, with
// flags bit 1 (a residual connection), y += that, in the CPU's order: y + (x . W + bias).
// Tensors are bound whole; x_base, y_base and b_base are their first elements (so any float offset
// works, whatever the device's minStorageBufferOffsetAlignment).
// One workgroup of 64 invocations per (output row, x row): invocation t sums the elements (or blocks)
// t, t + 64, ... in order, then a fixed tree in shared memory adds the 64 partial sums. The order of
// operations depends only on the row length, never on the device's subgroup size or on n.
// Rows beyond 65535 workgroups continue in gl_WorkGroupID.y; the x row is gl_WorkGroupID.z.
#define WG 64
layout(local_size_x = WG) in;
layout(push_constant) uniform Push {
    uint rows;       // rows of this part of W
    uint cols;
    uint x_stride;   // floats (or blocks for quantized x) between x rows
    uint y_stride;   // floats between y rows
    uint y_offset;   // first output row of this part
    uint flags;      // bit 0: bias; bit 1: add to y
    uint x_base;     // first element of x (floats; quantized x: blocks)
    uint y_base;
    uint b_base;
} p;
shared float red[WG];

float reduce(float v) {
    uint t = gl_LocalInvocationID.x;
    red[t] = v;
    barrier();
    for (uint s = WG / 2; s > 0; s >>= 1) {
        if (t < s) red[t] = red[t] + red[t + s];
        barrier();
    }
    return red[0];
}

uint gemv_row() { return gl_WorkGroupID.x + gl_NumWorkGroups.x * gl_WorkGroupID.y; }

// the epilogue, run by invocation 0 (a macro: y and bias are declared by each shader)
#define GEMV_STORE(s, i, r)                                                       \
    {                                                                             \
        uint yi = p.y_base + (i) * p.y_stride + p.y_offset + (r);                 \
        float v = (p.flags & 1u) != 0u ? (s) + bias[p.b_base + p.y_offset + (r)] : (s); \
        y[yi] = (p.flags & 2u) != 0u ? y[yi] + v : v;                             \
    }
