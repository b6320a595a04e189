// The GEMV prologues: an elementwise op of the layer before applied to x as the GEMV loads it, so the
// op's output never goes through memory and needs no dispatch of its own. Each computes exactly what
// its own shader computes, so the products (and the GEMV's bits) are those of the two dispatches:
//   GEMV_NORM: x = RMSNorm(x) * w (rms_norm.comp): every workgroup first sums the squares of its x
//              rows with rms_norm.comp's fixed 64-way tree and takes inv = 1 / sqrt(ss / cols + eps);
//              then x[i] -> w[i] * (x[i] * inv), w = aux[a_base ..] (cols floats).
//   GEMV_SILU: x = silu(x) * up (silu_mul.comp), up = aux[a_base + i * x_stride ..] for x row i.
// Without either, xin / xin4 return x. Expects xload(i) (float i of the X binding), gemv_common.glsl
// included, and to be called in uniform control flow (it has barriers). The norm of x row j is summed
// by segment j of the workgroup (NX <= RPW) and shared with the others.
#if defined(GEMV_NORM) || defined(GEMV_SILU)
layout(std430, binding = 6) readonly buffer A { float aux[]; };
#endif

#ifdef GEMV_NORM
shared float pro_inv[NX];
#if NX > RPW
#error "the prologue's x rows are summed one per segment"
#endif
#endif

void gemv_prologue() {
#ifdef GEMV_NORM
    // segment j sums the squares of x row j (lane t: elements t, t + 64, ...; then the 64-way tree)
    uint t = gemv_lane(), j = gemv_seg(), o = j * WG;
    float ss = 0.0;
    if (j < gemv_nx()) {
        uint xo = p.x_base + (gemv_i0() + j) * p.x_stride;
        for (uint i = t; i < p.cols; i += WG) ss += xload(xo + i) * xload(xo + i);
    }
    red[0][o + t] = ss;
    barrier();
    for (uint s = WG / 2; s > 0; s >>= 1) {
        if (t < s) red[0][o + t] = red[0][o + t] + red[0][o + t + s];
        barrier();
    }
    if (t == 0 && j < NX) pro_inv[j] = 1.0 / sqrt(red[0][o] / float(p.cols) + p.eps);
    barrier();   // pro_inv published; gemv_finish reuses red
#endif
}

// x value c (column) of this workgroup's x row j
float xin(uint j, uint c, float v) {
#if defined(GEMV_NORM)
    return aux[p.a_base + c] * (v * pro_inv[j]);
#elif defined(GEMV_SILU)
    return v / (1.0 + exp(-v)) * aux[p.a_base + (gemv_i0() + j) * p.x_stride + c];
#else
    return v;
#endif
}

vec4 xin4(uint j, uint c, vec4 v) {
#if defined(GEMV_NORM) || defined(GEMV_SILU)
    return vec4(xin(j, c, v.x), xin(j, c + 1, v.y), xin(j, c + 2, v.z), xin(j, c + 3, v.w));
#else
    return v;
#endif
}
