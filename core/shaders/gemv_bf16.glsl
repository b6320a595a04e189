// GEMV with bf16 weights [rows][cols] (row-major, as stored in the .tmod); x and y float32.
// (The body of gemv_bf16.comp and of its prologue variants gemv_bf16_norm / _silu.comp.)
layout(std430, binding = 0) readonly buffer W { uint w[]; };  // two bf16 per word, element e in half e & 1
float wload(uint e) { return uintBitsToFloat(((w[e >> 1] >> (16u * (e & 1u))) & 0xffffu) << 16); }
#include "gemv_rows.glsl"
