#version 450
// Tiled GEMM (prefill) with f32 weights [rows][cols].
#extension GL_GOOGLE_include_directive : require
#include "gemm_float.glsl"
layout(std430, binding = 0) readonly buffer W { float w[]; };
float w_load(uint r, uint k) { return w[r * p.cols + k]; }
