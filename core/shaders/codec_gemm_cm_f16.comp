#version 450
// The codec decoder's tiled GEMM on cooperative matrices with f16 weights (see codec_gemm_cm.glsl).
#extension GL_GOOGLE_include_directive : require
#define WDT 2
#include "codec_wload.glsl"
#include "codec_gemm_cm.glsl"
