#version 450
// quantize_q8.comp of silu(x) * up (silu_mul.comp's product, computed as it does, never written): the
// codes and scales of the two dispatches in one (the q8/q4 down projection's input).
#extension GL_GOOGLE_include_directive : require
#define QUANT_SILU
#include "quantize_q8.glsl"
