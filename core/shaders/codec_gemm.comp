#version 450
// The codec decoder's convolution GEMM with float32 weights (see codec_gemm_common.glsl).
#extension GL_GOOGLE_include_directive : require
#define WDT 0
#include "codec_wload.glsl"
#include "codec_gemm_common.glsl"
