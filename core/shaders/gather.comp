#version 450
// out[e] = row codes[slot] of an embedding table (any .tmod dtype) as float32, exactly as
// vx_gather_rows: f16/bf16 widened, q8 q * s, q4 (nibble - 8) * s. The row index is read from a
// buffer written by sample.comp, so the chosen code's embedding is taken without the host.
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer W { uint w[]; };     // values (f32 bits, 2 halves, 4 int8, 8 nibbles)
layout(std430, binding = 1) readonly buffer S { float sc[]; };   // q8/q4 scales
layout(std430, binding = 2) readonly buffer C { int codes[]; };
layout(std430, binding = 3) buffer O { float o[]; };
layout(push_constant) uniform Push { uint cols, dtype, slot, o_base, rows, c_base; } p;   // dtype: vox_dtype

void main() {
    uint e = gl_GlobalInvocationID.x;
    if (e >= p.cols) return;
    uint r = uint(clamp(codes[p.c_base + p.slot], 0, int(p.rows) - 1));
    uint idx = r * p.cols + e;
    float v;
    if (p.dtype == 0u) {                 // f32
        v = uintBitsToFloat(w[idx]);
    } else if (p.dtype == 1u) {          // f16
        v = unpackHalf2x16(w[idx >> 1] >> (16u * (idx & 1u))).x;
    } else if (p.dtype == 2u) {          // bf16
        v = uintBitsToFloat(((w[idx >> 1] >> (16u * (idx & 1u))) & 0xffffu) << 16);
    } else if (p.dtype == 3u) {          // q8
        v = float(bitfieldExtract(int(w[idx >> 2]), int(8u * (idx & 3u)), 8)) * sc[idx / 32u];
    } else {                             // q4: byte j of a block holds elements j (low) and j + 16 (high)
        uint b = idx / 32u, j = idx % 32u, byte_i = b * 16u + (j & 15u);
        uint nib = (w[byte_i >> 2] >> (8u * (byte_i & 3u) + (j >= 16u ? 4u : 0u))) & 15u;
        v = float(int(nib) - 8) * sc[b];
    }
    o[p.o_base + e] = v;
}
