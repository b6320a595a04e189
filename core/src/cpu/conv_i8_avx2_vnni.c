/* The int8 dot-product convolution with AVX-VNNI (vpdpbusd on 256-bit registers: Alder Lake and later,
 * Zen 5): the AVX512-VNNI kernel's arithmetic on half the width. The convolution around the integer
 * sums is conv_i8.h's; this file holds the register tile.
 *
 * Tile: 6 x rows by 16 channels (two 8-lane accumulators per row, 12 in all, with two weight vectors
 * and the broadcast in the 16 registers), swept over the group's four blocks of 16 channels; per quad
 * one 64-byte line of the packed codes (16 channels) and two vpdpbusd per row. */
#define VX_SIMD_WIDTH 8
#include "cpu/simd.h"
#include "cpu/simd_math.h"

#define CI_WIDE 0
#define CI_MR 6
#define CI_SUFFIX(name) name##_avx2_vnni
#include "cpu/conv_i8.h"

typedef int32_t ci_i32a __attribute__((may_alias, aligned(1)));

/* 6 rows by the 16 channels of block sb: out of line so the 12 accumulators stay in registers */
static __attribute__((noinline)) void ci_block16(const ci_tile_args *t, int sb) {
    const uint8_t *x = t->x;
    const int64_t ldx = t->ldx, quads = t->quads, mr = t->mr;
    const int8_t *P = t->P + sb * 64;
    const __m256i z = _mm256_setzero_si256();
    __m256i a00 = z, a01 = z, a10 = z, a11 = z, a20 = z, a21 = z, a30 = z, a31 = z, a40 = z, a41 = z, a50 = z, a51 = z;
    for (int64_t u = 0; u < quads; u++) {
        const int8_t *pw = P + u * CI_NR * 4;
        const __m256i w0 = _mm256_load_si256((const __m256i *)pw), w1 = _mm256_load_si256((const __m256i *)(pw + 32));
#define IV_ROW(i)                                                                                                      \
    do {                                                                                                               \
        const __m256i xb = _mm256_set1_epi32(*(const ci_i32a *)(x + (i) * ldx + u * 4));                               \
        a##i##0 = _mm256_dpbusd_avx_epi32(a##i##0, xb, w0);                                                            \
        a##i##1 = _mm256_dpbusd_avx_epi32(a##i##1, xb, w1);                                                            \
    } while (0)
        IV_ROW(0);
        IV_ROW(1);
        IV_ROW(2);
        IV_ROW(3);
        IV_ROW(4);
        IV_ROW(5);
#undef IV_ROW
    }
    const int64_t c0 = sb * 16;
    const vf zs[2] = {v_load(t->wsum + c0), v_load(t->wsum + c0 + 8)}, sw[2] = {v_load(t->ws + c0), v_load(t->ws + c0 + 8)};
    const vf bv[2] = {t->bias ? v_load(t->bias + c0) : v_zero(), t->bias ? v_load(t->bias + c0 + 8) : v_zero()};
    const vi acc[6][2] = {{a00, a01}, {a10, a11}, {a20, a21}, {a30, a31}, {a40, a41}, {a50, a51}};
    for (int i = 0; i < mr; i++) {
        const vf sx = v_set1(t->xs[i]), zx = v_set1(t->xz[i]);
        for (int v = 0; v < 2; v++)
            ci_epi(acc[i][v], sx, zx, zs[v], sw[v], bv[v], t->bias != NULL, t->f + i * CI_NR + c0 + v * 8,
                   t->res ? t->res + i * t->ldy + c0 + v * 8 : NULL, t->y + i * t->ldy + c0 + v * 8, t->first, t->last);
    }
}

static void ci_sums(const ci_tile_args *t) {
    for (int sb = 0; sb < CI_NR / 16; sb++) ci_block16(t, sb);
}

void vx_conv_i8_init_avx2_vnni(vx_kernels *t) {
    t->conv_i8 = ci_conv_avx2_vnni;
    t->conv_i8_work = ci_work_size_avx2_vnni;
    t->dots.int8 = "AVX-VNNI";
    t->dots.int8_widened = 0;
}
