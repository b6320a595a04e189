// The push constants and outputs of the linear layers (GEMV and GEMM): y[i][y_offset + r] =
// x[i] . W[r] (+ bias[y_offset + r]), or, with flags bit 1 (a residual connection), y += that, in the
// CPU's order: y + (x . W + bias).
// Up to three outputs: W may be several matrices of one input stacked by rows (q|k|v, gate|up); global
// row R goes to output 0 below seg1, to output 1 below seg2, else to output 2, at its row within that
// segment. The outputs and the (stacked) bias are bound at YB .. YB + 3 (YB: defined by the shader).
// Tensors are bound whole; x_base, y_base and b_base are their first elements (so any float offset
// works, whatever the device's minStorageBufferOffsetAlignment).
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
    float eps;       // the GEMV prologues (gemv_prologue.glsl): the RMSNorm's epsilon
    uint a_base;     //   and the first element of their second input (norm weight or up)
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

// output (x row i, row r of this part)
void linear_store(float s, uint i, uint r) {
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
