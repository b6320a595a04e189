#version 450
// gemv_f32v.comp with x = silu(x) * up (silu_mul.comp) applied as x is loaded: the same bits as the two dispatches.
#extension GL_GOOGLE_include_directive : require
#define GEMV_SILU
#include "gemv_f32v.glsl"
