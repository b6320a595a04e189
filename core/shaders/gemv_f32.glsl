// GEMV with f32 weights [rows][cols] (row-major, as stored in the .tmod); x and y float32.
// (The body of gemv_f32.comp and of its prologue variants gemv_f32_norm / _silu.comp.)
layout(std430, binding = 0) readonly buffer W { float w[]; };
float wload(uint e) { return w[e]; }
#include "gemv_rows.glsl"
