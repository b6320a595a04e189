// The weight as stored in the .tmod, widened exactly to float32 as it is loaded: WDT 0 float32, 1 bf16
// (the high half of a float32: a shift), 2 f16. 16-bit weights are read as 32-bit words, element i in
// half i % 2 (little-endian); w_base counts elements (16-bit weights: even).
#if WDT == 0
layout(std430, binding = 1) readonly buffer W { float w[]; };
float wload(uint i) { return w[i]; }
#else
layout(std430, binding = 1) readonly buffer W { uint w[]; };
#if WDT == 1
float wload(uint i) {
    uint word = w[i >> 1];
    return uintBitsToFloat((i & 1u) != 0u ? (word & 0xffff0000u) : (word << 16));
}
#else
float wload(uint i) { return unpackHalf2x16(w[i >> 1] >> (16u * (i & 1u))).x; }   // no dynamic index into a vector
#endif
#endif
