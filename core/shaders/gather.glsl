// An embedding table's element as float32, exactly as vx_gather_rows: f16/bf16 widened, q8 q * s, q4
// (nibble - 8) * s. Expects p.cols and p.dtype (a vox_dtype) in the push constants and GATHER_W /
// GATHER_S, the bindings of the table's values and scales.
layout(std430, binding = GATHER_W) readonly buffer W { uint tab[]; };   // values (f32 bits, 2 halves, 4 int8, 8 nibbles)
layout(std430, binding = GATHER_S) readonly buffer S { float sc[]; };   // q8/q4 scales

float gather_value(uint r, uint e) {
    uint idx = r * p.cols + e;
    if (p.dtype == 0u) return uintBitsToFloat(tab[idx]);                                    // f32
    if (p.dtype == 1u) return unpackHalf2x16(tab[idx >> 1] >> (16u * (idx & 1u))).x;        // f16
    if (p.dtype == 2u) return uintBitsToFloat(((tab[idx >> 1] >> (16u * (idx & 1u))) & 0xffffu) << 16);   // bf16
    if (p.dtype == 3u) return float(bitfieldExtract(int(tab[idx >> 2]), int(8u * (idx & 3u)), 8)) * sc[idx / 32u];   // q8
    // q4: byte j of a block holds elements j (low) and j + 16 (high)
    uint b = idx / 32u, j = idx % 32u, byte_i = b * 16u + (j & 15u);
    uint nib = (tab[byte_i >> 2] >> (8u * (byte_i & 3u) + (j >= 16u ? 4u : 0u))) & 15u;
    return float(int(nib) - 8) * sc[b];
}
