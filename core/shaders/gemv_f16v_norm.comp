#version 450
// gemv_f16v.comp with the RMSNorm of x (rms_norm.comp) applied as x is loaded: the same bits as the two dispatches.
#extension GL_GOOGLE_include_directive : require
#define GEMV_NORM
#include "gemv_f16v.glsl"
