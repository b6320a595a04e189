// GEMV with bf16 weights, 16-byte loads (gemv_half_v.glsl).
// (The body of gemv_bf16v.comp and of its prologue variants gemv_bf16v_norm / _silu.comp.)
vec2 widen(uint v) {
    return vec2(uintBitsToFloat(v << 16), uintBitsToFloat(v & 0xffff0000u));
}
#include "gemv_half_v.glsl"
