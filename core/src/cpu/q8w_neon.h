/* Internal: vx_linear_q8w's register tile on aarch64 (the job and the layout: q8w.c), included by
 * q8w_neon_dotprod.c (Q8W_USDOT 0: sdot) and q8w_neon_i8mm.c (Q8W_USDOT 1: usdot). A 16-byte vector
 * is 4 rows of a group's 16 by their 4 codes of a step, so x's 4 codes broadcast against it give 4
 * outputs' partial sums, exact in int32:
 *   usdot (I8MM): x's unsigned codes q + 128 times the signed weights, from the block's corr (the
 *     AVX512-VNNI tile's arithmetic);
 *   sdot (DotProd): x's signed codes (q + 128) ^ 0x80 = q times the weights, from 0.
 * Both give isum_b exactly; then per block and output one conversion and one FMA with sw * d into the
 * float chain, as q8w.c defines it: the bits of the scalar tile. Sub-tiles of 2 x rows by one group
 * (8 int32 and 8 float accumulators: 16 of the 32 vector registers). */
#ifndef Q8W_USDOT
#  error "define Q8W_USDOT (0 or 1) before including q8w_neon.h"
#endif
#include <arm_neon.h>
#include <string.h>

#include "cpu/dispatch.h"

static inline __attribute__((always_inline)) void q8w_sub(const vx_q8w_tile *t, const int MR, int i0, int g) {
    float32x4_t acc[2][4];
    const unsigned char *pg = t->p + (size_t)g * t->gstride;
    for (int i = 0; i < MR; i++)
        for (int v = 0; v < 4; v++)
            acc[i][v] = t->first ? vdupq_n_f32(0.0f) : vld1q_f32(t->y + (i0 + i) * t->ldy + 16 * g + 4 * v);
    for (int64_t b = 0; b < t->kb; b++) {
        const unsigned char *blk = pg + (size_t)b * 640;
        int32x4_t ia[2][4];
        for (int v = 0; v < 4; v++) {
#if Q8W_USDOT
            const int32x4_t c = vld1q_s32((const int32_t *)(const void *)(blk + 512 + 16 * v));
#else
            const int32x4_t c = vdupq_n_s32(0);
#endif
            for (int i = 0; i < MR; i++) ia[i][v] = c;
        }
        const int64_t kb = 32 * (t->b0 + b);
        for (int s = 0; s < 8; s++) {
            int8x16_t wv[4];
            for (int v = 0; v < 4; v++) wv[v] = vld1q_s8((const int8_t *)(blk + 64 * s + 16 * v));
            for (int i = 0; i < MR; i++) {
                uint32_t xv;
                memcpy(&xv, t->xq + (i0 + i) * t->xrow + kb + 4 * s, 4);
#if Q8W_USDOT
                const uint8x16_t xb = vreinterpretq_u8_u32(vdupq_n_u32(xv));
                for (int v = 0; v < 4; v++) ia[i][v] = vusdotq_s32(ia[i][v], xb, wv[v]);
#else
                const int8x16_t xb = vreinterpretq_s8_u32(vdupq_n_u32(xv ^ 0x80808080u)); /* q = (q + 128) ^ 0x80 */
                for (int v = 0; v < 4; v++) ia[i][v] = vdotq_s32(ia[i][v], xb, wv[v]);
#endif
            }
        }
        for (int v = 0; v < 4; v++) {
            const float32x4_t sw = vld1q_f32((const float *)(const void *)(blk + 576 + 16 * v));
            for (int i = 0; i < MR; i++) {
                const float32x4_t sc = vmulq_n_f32(sw, t->dx[(i0 + i) * t->dxrow + t->b0 + b]);
                acc[i][v] = vfmaq_f32(acc[i][v], vcvtq_f32_s32(ia[i][v]), sc);
            }
        }
    }
    const int add = t->last && t->bias;
    for (int v = 0; v < 4; v++) {
        const float32x4_t bv = add ? vld1q_f32(t->bias + 16 * g + 4 * v) : vdupq_n_f32(0.0f);
        for (int i = 0; i < MR; i++)
            vst1q_f32(t->y + (i0 + i) * t->ldy + 16 * g + 4 * v, add ? vaddq_f32(acc[i][v], bv) : acc[i][v]);
    }
}

static void q8w_tile_neon(const vx_q8w_tile *t) {
    for (int g = 0; g < t->ng; g++)
        for (int i = 0; i < t->mr; i += 2) {
            if (t->mr - i >= 2) q8w_sub(t, 2, i, g);
            else q8w_sub(t, 1, i, g);
        }
}

/* vx_q8w_pack's bytes for one group (q8w.c's layout), a block at a time: per 4 rows, two 4 x 4 dword
 * transposes of their 32 codes give the 4 rows' part of the 8 steps' vectors; the rows' code sums by
 * pairwise widening adds (exact). */
static void q8w_pack_group_neon(const int8_t *codes, int64_t ld, const float *scales, int64_t nb, unsigned char *dst) {
    for (int64_t b = 0; b < nb; b++) {
        unsigned char *blk = dst + b * 640;
        for (int v = 0; v < 4; v++) {
            int32x4_t sum = vdupq_n_s32(0);
            for (int h = 0; h < 2; h++) {
                uint32x4_t r[4];
                for (int i = 0; i < 4; i++) r[i] = vld1q_u32((const uint32_t *)(const void *)(codes + (4 * v + i) * ld + 32 * b + 16 * h));
                const uint32x4_t t0 = vtrn1q_u32(r[0], r[1]), t1 = vtrn2q_u32(r[0], r[1]), t2 = vtrn1q_u32(r[2], r[3]),
                                 t3 = vtrn2q_u32(r[2], r[3]);
                uint32x4_t c[4];
                c[0] = vreinterpretq_u32_u64(vtrn1q_u64(vreinterpretq_u64_u32(t0), vreinterpretq_u64_u32(t2)));
                c[1] = vreinterpretq_u32_u64(vtrn1q_u64(vreinterpretq_u64_u32(t1), vreinterpretq_u64_u32(t3)));
                c[2] = vreinterpretq_u32_u64(vtrn2q_u64(vreinterpretq_u64_u32(t0), vreinterpretq_u64_u32(t2)));
                c[3] = vreinterpretq_u32_u64(vtrn2q_u64(vreinterpretq_u64_u32(t1), vreinterpretq_u64_u32(t3)));
                for (int s = 0; s < 4; s++) {
                    vst1q_u32((uint32_t *)(void *)(blk + 64 * (4 * h + s) + 16 * v), c[s]);
                    sum = vaddq_s32(sum, vpaddlq_s16(vpaddlq_s8(vreinterpretq_s8_u32(c[s]))));
                }
            }
            vst1q_s32((int32_t *)(void *)(blk + 512 + 16 * v), vmulq_n_s32(sum, -128));
            float sw[4];
            for (int i = 0; i < 4; i++) sw[i] = scales[(4 * v + i) * nb + b];
            vst1q_f32((float *)(void *)(blk + 576 + 16 * v), vld1q_f32(sw));
        }
    }
}
