// Shared by quantize_q8.comp and rms_norm_q8.comp.
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

