#version 450
// The codec decoder's small-M product with float32 weights (see codec_gemv_common.glsl).
#extension GL_GOOGLE_include_directive : require
#define WDT 0
#include "codec_wload.glsl"
#include "codec_gemv_common.glsl"
