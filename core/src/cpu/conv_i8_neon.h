/* Internal: the register tiles of the int8 dot-product convolution on aarch64 (the convolution around
 * them, conv_i8.h, is shared with x86). Included by conv_i8_neon.c (CI_DOT 0: smlal on int16-widened
 * codes, any aarch64), conv_i8_neon_dotprod.c (CI_DOT 1: sdot) and conv_i8_neon_i8mm.c (CI_DOT 2:
 * usdot). All three compute the exact int32 sums of uint8 input codes times int8 weight codes, so they
 * give the same bits as each other, as the x86 kernels and as vx_conv1d_i8w_model.
 *
 *  - smlal: the input codes are stored as int16 (CI_WIDE 1), the weight codes widened as they are
 *    loaded; one int32 lane per (channel, code of the quad), summed over the quads, the four lanes of a
 *    channel added at the end (|255 * 127| products, exact in int32).
 *  - sdot (signed x signed bytes): the codes u are stored as u - 128 (CI_WIDE 2), which fits int8, and
 *    sum (u - 128) w + 128 sum w = sum u w with sum w the tap's code sum (wsum, an integer held exactly
 *    in float): exact.
 *  - usdot (unsigned x signed bytes, I8MM): the codes as they are (CI_WIDE 0), as vpdpbusd.
 * Tile: 6 x rows by 16 channels (sdot/usdot: four 4-lane accumulators per row, one instruction per quad,
 * row and 4 channels) or by 4 channels (smlal: one accumulator per row and channel). */
#ifndef CI_DOT
#  error "define CI_DOT (0, 1 or 2) before including conv_i8_neon.h"
#endif
#define VX_SIMD_WIDTH 4
#include <string.h>

#include "cpu/simd.h"
#include "cpu/simd_math.h"

#if CI_DOT == 0
#  define CI_WIDE 1
#elif CI_DOT == 1
#  define CI_WIDE 2
#else
#  define CI_WIDE 0
#endif
#define CI_MR 6
#include "cpu/conv_i8.h"

#if CI_DOT == 0
/* 6 rows by the 4 channels of block sb (16 weight bytes per quad) */
static __attribute__((noinline)) void ci_block4(const ci_tile_args *t, int sb) {
    const int16_t *x = t->x;
    const int64_t ldx = t->ldx, quads = t->quads, mr = t->mr;
    const int8_t *P = t->P + sb * 16;
    int32x4_t acc[CI_MR][4];
    for (int i = 0; i < CI_MR; i++)
        for (int c = 0; c < 4; c++) acc[i][c] = vdupq_n_s32(0);
    for (int64_t u = 0; u < quads; u++) {
        const int8x16_t wb = vld1q_s8(P + u * CI_NR * 4);
        const int16x8_t w01 = vmovl_s8(vget_low_s8(wb)), w23 = vmovl_high_s8(wb);
        const int16x4_t w0 = vget_low_s16(w01), w1 = vget_high_s16(w01), w2 = vget_low_s16(w23), w3 = vget_high_s16(w23);
#pragma GCC unroll 6
        for (int i = 0; i < CI_MR; i++) {
            const int16x4_t xv = vld1_s16(x + i * ldx + u * 4);
            acc[i][0] = vmlal_s16(acc[i][0], w0, xv);
            acc[i][1] = vmlal_s16(acc[i][1], w1, xv);
            acc[i][2] = vmlal_s16(acc[i][2], w2, xv);
            acc[i][3] = vmlal_s16(acc[i][3], w3, xv);
        }
    }
    const int64_t c0 = sb * 4;
    const vf zs = v_load(t->wsum + c0), sw = v_load(t->ws + c0), bv = t->bias ? v_load(t->bias + c0) : v_zero();
    for (int i = 0; i < mr; i++) {
        const int32x4_t s = vpaddq_s32(vpaddq_s32(acc[i][0], acc[i][1]), vpaddq_s32(acc[i][2], acc[i][3]));
        ci_epi(s, v_set1(t->xs[i]), v_set1(t->xz[i]), zs, sw, bv, t->bias != NULL, t->f + i * CI_NR + c0,
               t->res ? t->res + i * t->ldy + c0 : NULL, t->y + i * t->ldy + c0, t->first, t->last);
    }
}

static void ci_sums(const ci_tile_args *t) {
    for (int sb = 0; sb < CI_NR / 4; sb++) ci_block4(t, sb);
}
#else
/* 6 rows by the 16 channels of block sb (64 weight bytes per quad) */
static __attribute__((noinline)) void ci_block16(const ci_tile_args *t, int sb) {
    const ci_code *x = t->x;
    const int64_t ldx = t->ldx, quads = t->quads, mr = t->mr;
    const int8_t *P = t->P + sb * 64;
    int32x4_t acc[CI_MR][4];
    for (int i = 0; i < CI_MR; i++)
        for (int c = 0; c < 4; c++) acc[i][c] = vdupq_n_s32(0);
    for (int64_t u = 0; u < quads; u++) {
        const int8_t *pw = P + u * CI_NR * 4;
        const int8x16_t w0 = vld1q_s8(pw), w1 = vld1q_s8(pw + 16), w2 = vld1q_s8(pw + 32), w3 = vld1q_s8(pw + 48);
#pragma GCC unroll 6
        for (int i = 0; i < CI_MR; i++) {
            int32_t q;
            memcpy(&q, x + i * ldx + u * 4, 4);
#  if CI_DOT == 1
            const int8x16_t xb = vreinterpretq_s8_s32(vdupq_n_s32(q));
            acc[i][0] = vdotq_s32(acc[i][0], xb, w0);
            acc[i][1] = vdotq_s32(acc[i][1], xb, w1);
            acc[i][2] = vdotq_s32(acc[i][2], xb, w2);
            acc[i][3] = vdotq_s32(acc[i][3], xb, w3);
#  else
            const uint8x16_t xb = vreinterpretq_u8_s32(vdupq_n_s32(q));
            acc[i][0] = vusdotq_s32(acc[i][0], xb, w0);
            acc[i][1] = vusdotq_s32(acc[i][1], xb, w1);
            acc[i][2] = vusdotq_s32(acc[i][2], xb, w2);
            acc[i][3] = vusdotq_s32(acc[i][3], xb, w3);
#  endif
        }
    }
    const int64_t c0 = sb * 16;
    vf zs[4], sw[4], bv[4];
#  if CI_DOT == 1
    int32x4_t corr[4]; /* 128 * sum w: the codes' offset back (wsum is an integer, exact in float) */
#  endif
    for (int v = 0; v < 4; v++) {
        zs[v] = v_load(t->wsum + c0 + v * 4);
        sw[v] = v_load(t->ws + c0 + v * 4);
        bv[v] = t->bias ? v_load(t->bias + c0 + v * 4) : v_zero();
#  if CI_DOT == 1
        corr[v] = vshlq_n_s32(vcvtq_s32_f32(zs[v]), 7);
#  endif
    }
    for (int i = 0; i < mr; i++)
        for (int v = 0; v < 4; v++) {
#  if CI_DOT == 1
            const int32x4_t s = vaddq_s32(acc[i][v], corr[v]);
#  else
            const int32x4_t s = acc[i][v];
#  endif
            ci_epi(s, v_set1(t->xs[i]), v_set1(t->xz[i]), zs[v], sw[v], bv[v], t->bias != NULL,
                   t->f + i * CI_NR + c0 + v * 4, t->res ? t->res + i * t->ldy + c0 + v * 4 : NULL,
                   t->y + i * t->ldy + c0 + v * 4, t->first, t->last);
        }
}

static void ci_sums(const ci_tile_args *t) {
    for (int sb = 0; sb < CI_NR / 16; sb++) ci_block16(t, sb);
}
#endif
