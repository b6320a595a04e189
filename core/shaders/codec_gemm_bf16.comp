#version 450
// The codec decoder's convolution GEMM with bf16 weights (see codec_gemm_common.glsl): a bf16 value is
// the high half of a float32, so widening it is a shift.
#extension GL_GOOGLE_include_directive : require
layout(std430, binding = 1) readonly buffer W { uint w[]; };
float wload(uint i) {
    uint word = w[i >> 1];
    return uintBitsToFloat((i & 1u) != 0u ? (word & 0xffff0000u) : (word << 16));
}
#define WLOAD(i) wload(i)
#include "codec_gemm_common.glsl"
