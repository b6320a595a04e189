#version 450
// The codec decoder's convolution GEMM with float32 weights (see codec_gemm_common.glsl).
#extension GL_GOOGLE_include_directive : require
layout(std430, binding = 1) readonly buffer W { float w[]; };
#define WLOAD(i) w[i]
#include "codec_gemm_common.glsl"
