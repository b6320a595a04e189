#version 450
// Activations for the q8/q4 GEMV: each 32-block of x is quantized to int8 exactly as the CPU kernels
// do (kernels.h, vx_quantize_block_q8): d = max|x| / 127, q = round-half-away(x * (1 / d)) clamped
// to [-127, 127] (d = 0 gives q = 0). One invocation per block; the codes are packed 4 per word
// (element j of the block in byte j & 3 of word j >> 2).
// Vulkan lets a division be off by 2.5 ulp, and one ulp in 1 / d moves a code that sits on a rounding
// boundary; so both divisions are done exactly here (correctly rounded, as IEEE and the CPU), by long
// division of the significands: the codes and scales are the CPU's, bit for bit.
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer Q { uint q[]; };    // [blocks][8]
layout(std430, binding = 2) writeonly buffer D { float d[]; };   // [blocks]
layout(push_constant) uniform Push { uint blocks; uint x_base; } p;

// a / b correctly rounded (to nearest, ties to even) for positive normal a, b whose quotient is
// normal; anything else (not met by the scales of finite activations) falls back to the device's a / b.
float div_rn(float a, float b) {
    uint ua = floatBitsToUint(a), ub = floatBitsToUint(b);
    int ea = int(ua >> 23), eb = int(ub >> 23);
    if (ea == 0 || eb == 0 || ea == 255 || eb == 255 || (ua >> 31) != 0u || (ub >> 31) != 0u) return a / b;
    uint ma = (ua & 0x7fffffu) | 0x800000u, mb = (ub & 0x7fffffu) | 0x800000u;
    int s = ma >= mb ? 23 : 24;   // the quotient's 24 significant bits: floor(ma * 2^s / mb)
    uint q = 0u, rem = ma;
    for (int i = 0; i <= s; i++) {
        q <<= 1;
        if (rem >= mb) {
            rem -= mb;
            q |= 1u;
        }
        rem <<= 1;   // rem = 2 * remainder after the last step
    }
    if (rem > mb || (rem == mb && (q & 1u) != 0u)) q += 1u;   // round to nearest, ties to even
    int e = ea - eb - s + 23 + 127;
    if (q == 0x1000000u) {
        q >>= 1;
        e += 1;
    }
    if (e < 1 || e > 254) return a / b;
    return uintBitsToFloat((uint(e) << 23) | (q & 0x7fffffu));
}

void main() {
    uint b = gl_GlobalInvocationID.x + gl_NumWorkGroups.x * gl_WorkGroupSize.x * gl_GlobalInvocationID.y;
    if (b >= p.blocks) return;
    uint amax = 0u;   // on the bit patterns, as the CPU: exact
    for (uint j = 0; j < 32; j++) amax = max(amax, floatBitsToUint(x[p.x_base + 32 * b + j]) & 0x7fffffffu);
    float dd = amax == 0u ? 0.0 : div_rn(uintBitsToFloat(amax), 127.0);
    float r = dd > 0.0 ? div_rn(1.0, dd) : 0.0;
    for (uint w = 0; w < 8; w++) {
        uint packed = 0u;
        for (uint k = 0; k < 4; k++) {
            float v = x[p.x_base + 32 * b + 4 * w + k] * r;
            float a = abs(v), t = trunc(a);
            if (a - t >= 0.5) t += 1.0;   // half away from zero (a - t is exact)
            int qi = int(min(t, 127.0)) * (v < 0.0 ? -1 : 1);
            packed |= (uint(qi) & 0xffu) << (8 * k);
        }
        q[8 * b + w] = packed;
    }
    d[b] = dd;
}
