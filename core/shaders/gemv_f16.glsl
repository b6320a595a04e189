// GEMV with f16 weights [rows][cols] (row-major, as stored in the .tmod); x and y float32.
// (The body of gemv_f16.comp and of its prologue variants gemv_f16_norm / _silu.comp.)
layout(std430, binding = 0) readonly buffer W { uint w[]; };  // two f16 per word, element e in half e & 1
float wload(uint e) { return unpackHalf2x16(w[e >> 1] >> (16u * (e & 1u))).x; }
#include "gemv_rows.glsl"
