// Activations for the q8/q4 GEMV: each 32-block of x is quantized to int8 exactly as the CPU kernels
// do (kernels.h, vx_quantize_block_q8): d = max|x| / 127, q = round-half-away(x * (1 / d)) clamped
// to [-127, 127] (d = 0 gives q = 0). One invocation per block; the codes are packed 4 per word
// (element j of the block in byte j & 3 of word j >> 2).
// Vulkan lets a division be off by 2.5 ulp, and one ulp in 1 / d moves a code that sits on a rounding
// boundary; so both divisions are done exactly here (correctly rounded, as IEEE and the CPU), by long
// division of the significands: the codes and scales are the CPU's, bit for bit.
// (The body of quantize_q8.comp and quantize_q8_silu.comp.)
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer Q { uint q[]; };    // [blocks][8]
layout(std430, binding = 2) writeonly buffer D { float d[]; };   // [blocks]
#ifdef QUANT_SILU
layout(std430, binding = 3) readonly buffer U { float u[]; };
layout(push_constant) uniform Push { uint blocks; uint x_base; uint u_base; } p;
// element i of the product silu(x) * u, as silu_mul.comp computes it
float xval(uint i) {
    float v = x[p.x_base + i];
    return v / (1.0 + exp(-v)) * u[p.u_base + i];
}
#else
layout(push_constant) uniform Push { uint blocks; uint x_base; } p;
float xval(uint i) { return x[p.x_base + i]; }
#endif

#include "div_rn.glsl"

void main() {
    uint b = gl_GlobalInvocationID.x + gl_NumWorkGroups.x * gl_WorkGroupSize.x * gl_GlobalInvocationID.y;
    if (b >= p.blocks) return;
    uint amax = 0u;   // on the bit patterns, as the CPU: exact
    for (uint j = 0; j < 32; j++) amax = max(amax, floatBitsToUint(xval(32 * b + j)) & 0x7fffffffu);
    float dd = amax == 0u ? 0.0 : div_rn(uintBitsToFloat(amax), 127.0);
    float r = dd > 0.0 ? div_rn(1.0, dd) : 0.0;
    for (uint w = 0; w < 8; w++) {
        uint packed = 0u;
        for (uint k = 0; k < 4; k++) {
            float v = xval(32 * b + 4 * w + k) * r;
            float a = abs(v), t = trunc(a);
            if (a - t >= 0.5) t += 1.0;   // half away from zero (a - t is exact)
            int qi = int(min(t, 127.0)) * (v < 0.0 ? -1 : 1);
            packed |= (uint(qi) & 0xffu) << (8 * k);
        }
        q[8 * b + w] = packed;
    }
    d[b] = dd;
}
