/* Internal: vectorized exp, expm1, sin, tanh, sigmoid and GELU on the simd.h abstraction.
 *
 * Accuracy goal: within a few ulps of libm on the whole float range (the tests measure ulps against
 * double-precision references), so kernels using them stay far inside the ~1e-5 relative conformance
 * tolerances. Every function is a pure per-lane computation (no lane-position effects).
 *
 * exp/expm1: x = n ln2 + r, |r| <= ln2/2, with a two-constant (Cody-Waite) ln2 and FMAs; expm1(r) by
 * its degree-7 Taylor polynomial (truncation < 2e-8 relative on that interval); exp = 2^n (1 + p) with
 * 2^n applied in two factors so results down to the subnormal range round once.
 * sin: quadrant q = round(x 2/pi), r = x - q pi/2 with pi/2 in three float parts (exact enough for
 * |x| < 2^16); sin/cos polynomials of r (Taylor to degree 9/10 on |r| <= pi/4). Larger |x| (rare:
 * snake arguments are x * alpha of activations) go to libm sinf lane by lane.
 * GELU: 0.5 x erfc(-x / sqrt 2) with erfc(a) = t exp(-a^2 + P(t)), t = 1 / (1 + a/2) (the Chebyshev
 * fit of Numerical Recipes' erfcc, fractional error < 1.2e-7, the same formula as reference/nn.py's
 * erf); a = |x| / sqrt 2 and a^2 are carried in two floats and the exponent's rounding error is fed
 * back as a first-order correction, so the negative tail keeps float precision relative to its (tiny)
 * value instead of losing ~a^2 ulps. */
#ifndef VOX_CPU_SIMD_MATH_H
#define VOX_CPU_SIMD_MATH_H

#include <math.h>

#include "cpu/simd.h"

/* x = n ln2 + r; returns p = expm1(r) and n (as float, integral). */
V_INLINE vf v_expm1_reduced(vf x, vf *n_out) {
    const vf log2e = v_set1(1.44269504088896341f), ln2_hi = v_set1(0.693359375f), ln2_lo = v_set1(-2.12194440e-4f);
    vf n = v_round(v_mul(x, log2e));
    vf r = v_fnma(n, ln2_hi, x);
    r = v_fnma(n, ln2_lo, r);
    vf p = v_set1(1.0f / 5040.0f);
    p = v_fma(p, r, v_set1(1.0f / 720.0f));
    p = v_fma(p, r, v_set1(1.0f / 120.0f));
    p = v_fma(p, r, v_set1(1.0f / 24.0f));
    p = v_fma(p, r, v_set1(1.0f / 6.0f));
    p = v_fma(p, r, v_set1(0.5f));
    p = v_mul(p, v_mul(r, r));
    p = v_add(p, r); /* r + r^2 (1/2 + r/6 + ...) */
    *n_out = n;
    return p;
}

/* 2^n for integral n in [-126, 127] */
V_INLINE vf v_pow2i(vi n) { return v_frombits(vi_sll23(vi_add(n, vi_set1(127)))); }

V_INLINE vf v_exp(vf x) {
    vf xc = v_min(v_max(x, v_set1(-104.0f)), v_set1(88.8f));
    vf n;
    vf p = v_expm1_reduced(xc, &n);
    vi ni = v_cvt_i(n);
    vi n1 = vi_srai1(ni), n2 = vi_sub(ni, n1); /* both in [-75, 64] */
    vf y = v_mul(v_mul(v_add(p, v_set1(1.0f)), v_pow2i(n1)), v_pow2i(n2));
    return v_sel(v_isnan(x), y, x);
}

/* expm1 for x <= 88.7 (NaN passes): 2^n p + (2^n - 1), which is p itself for |x| < ln2/2. */
V_INLINE vf v_expm1(vf x) {
    vf xc = v_min(v_max(x, v_set1(-30.0f)), v_set1(88.7f));
    vf n;
    vf p = v_expm1_reduced(xc, &n);
    vf s = v_pow2i(v_cvt_i(n));
    vf y = v_fma(s, p, v_sub(s, v_set1(1.0f)));
    y = v_sel(v_gt(x, v_set1(88.7f)), y, v_set1(INFINITY));
    return v_sel(v_isnan(x), y, x);
}

V_INLINE vf v_sigmoid(vf x) {
    /* as the scalar definition: 1 / (1 + e^-x) for x >= 0, e^x / (1 + e^x) below */
    vf e = v_exp(v_neg(v_abs(x)));
    vf num = v_sel(v_ge(x, v_zero()), e, v_set1(1.0f));
    return v_div(num, v_add(v_set1(1.0f), e));
}

V_INLINE vf v_tanh(vf x) {
    /* tanh|x| = e / (e + 2), e = expm1(2|x|): no cancellation for small |x|; 1 beyond 9.1 */
    vf a = v_min(v_abs(x), v_set1(9.1f));
    vf e = v_expm1(v_add(a, a));
    vf t = v_div(e, v_add(e, v_set1(2.0f)));
    t = v_xor(t, v_signbit(x));
    return v_sel(v_isnan(x), t, x);
}

/* The float-path fallback of v_sin for huge arguments: libm, lane by lane. */
V_INLINE vf v_sin_libm(vf x, vf y, vm big) {
    float xs[VL], ys[VL];
    vf sel = v_sel(big, v_zero(), v_set1(1.0f));
    float flag[VL];
    v_store(xs, x);
    v_store(ys, y);
    v_store(flag, sel);
    for (int i = 0; i < VL; i++)
        if (flag[i] != 0.0f) ys[i] = sinf(xs[i]);
    return v_load(ys);
}

/* The quadrant q = round(x 2/pi) and x - q pi/2 with pi/2 in two parts (enough for |x| <= 4096 where
 * the result only needs float accuracy near 1; v_sin takes a third part off). */
V_INLINE vf v_reduce_half_pi(vf x, vf *q) {
    *q = v_round(v_mul(x, v_set1(0.636619772367581343f)));
    vf r = v_fnma(*q, v_set1(1.57079637050628662109375f), x);
    return v_fnma(*q, v_set1(-4.37113900018624283e-8f), r);
}

V_INLINE vf v_sin(vf x) {
    vf q;
    vf r = v_reduce_half_pi(x, &q);
    r = v_fnma(q, v_set1(-1.71512451000597940e-15f), r);
    vf r2 = v_mul(r, r);
    /* sin r = r + r^3 (-1/6 + r^2 (1/120 + r^2 (-1/5040 + r^2/362880))) */
    vf s = v_set1(1.0f / 362880.0f);
    s = v_fma(s, r2, v_set1(-1.0f / 5040.0f));
    s = v_fma(s, r2, v_set1(1.0f / 120.0f));
    s = v_fma(s, r2, v_set1(-1.0f / 6.0f));
    s = v_fma(v_mul(s, r2), r, r);
    /* cos r = 1 + r^2 (-1/2 + r^2 (1/24 + r^2 (-1/720 + r^2 (1/40320 - r^2/3628800)))) */
    vf c = v_set1(-1.0f / 3628800.0f);
    c = v_fma(c, r2, v_set1(1.0f / 40320.0f));
    c = v_fma(c, r2, v_set1(-1.0f / 720.0f));
    c = v_fma(c, r2, v_set1(1.0f / 24.0f));
    c = v_fma(c, r2, v_set1(-0.5f));
    c = v_fma(c, r2, v_set1(1.0f));
    vi qi = v_cvt_i(q);
    vm odd = vi_eq(vi_and(qi, vi_set1(1)), vi_set1(1));
    vf y = v_sel(odd, s, c);
    /* quadrants 2 and 3 negate: bit 1 of q moved to the sign bit */
    y = v_xor(y, v_frombits(vi_sll30(vi_and(qi, vi_set1(2)))));
    vm big = v_mor(v_gt(v_abs(x), v_set1(65536.0f)), v_isnan(x));
    if (v_any(big)) y = v_sin_libm(x, y, big);
    return y;
}

/* The factor w with gelu(x) = x * w: 1 - E/2 for x >= 0, E/2 below, E = erfc(|x| / sqrt 2). */
V_INLINE vf v_gelu_factor(vf x) {
    const vf c_hi = v_set1(0.707106769084930419921875f), c_lo = v_set1(1.21016175e-8f);
    vf ax = v_min(v_abs(x), v_set1(14.0f)); /* erfc(14/sqrt2) < 1e-43: the factor is 0 or 1 beyond */
    vf ah = v_mul(ax, c_hi);
    vf al = v_fma(ax, c_lo, v_fms(ax, c_hi, ah)); /* a = ah + al to ~2^-48 */
    vf t = v_div(v_set1(1.0f), v_fma(v_set1(0.5f), ah, v_set1(1.0f)));
    vf p = v_set1(0.17087277f);
    p = v_fma(p, t, v_set1(-0.82215223f));
    p = v_fma(p, t, v_set1(1.48851587f));
    p = v_fma(p, t, v_set1(-1.13520398f));
    p = v_fma(p, t, v_set1(0.27886807f));
    p = v_fma(p, t, v_set1(-0.18628806f));
    p = v_fma(p, t, v_set1(0.09678418f));
    p = v_fma(p, t, v_set1(0.37409196f));
    p = v_fma(p, t, v_set1(1.00002368f));
    p = v_fma(p, t, v_set1(-1.26551223f));
    /* a^2 = sh + sl exactly enough; arg = p - a^2 as s + err (TwoSum) */
    vf sh = v_mul(ah, ah);
    vf sl = v_fma(v_add(ah, ah), al, v_fms(ah, ah, sh));
    vf s = v_sub(p, sh);
    vf bv = v_sub(s, p), av = v_sub(s, bv);
    vf err = v_add(v_sub(p, av), v_sub(v_neg(sh), bv));
    vf e = v_exp(s);
    e = v_fma(e, v_sub(err, sl), e); /* exp(s + err - sl) to first order */
    vf E = v_mul(t, e);
    vf half_e = v_mul(v_set1(0.5f), E);
    return v_sel(v_ge(x, v_zero()), half_e, v_sub(v_set1(1.0f), half_e));
}

#endif
