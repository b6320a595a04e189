#version 450
// The codec decoder's convolution GEMM with f16 weights (see codec_gemm_common.glsl).
#extension GL_GOOGLE_include_directive : require
layout(std430, binding = 1) readonly buffer W { uint w[]; };
float wload(uint i) { return unpackHalf2x16(w[i >> 1])[i & 1u]; }
#define WLOAD(i) wload(i)
#include "codec_gemm_common.glsl"
