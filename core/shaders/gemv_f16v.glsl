// GEMV with f16 weights, 16-byte loads (gemv_half_v.glsl).
// (The body of gemv_f16v.comp and of its prologue variants gemv_f16v_norm / _silu.comp.)
vec2 widen(uint v) {
    return unpackHalf2x16(v);
}
#include "gemv_half_v.glsl"
