/* The int8 dot-product convolution on plain AVX2 (no VNNI: Haswell .. Zen 3), with exact integer sums.
 *
 * vpmaddubsw (unsigned x signed bytes, pairs summed to int16) would saturate: two products of codes up
 * to 255 and 127 reach 64770. So the input codes are stored widened to int16 (conv_i8.h, CI_WIDE) and
 * the weight codes widened as they are loaded (vpmovsxbw), and vpmaddwd sums pairs of int16 products
 * into int32 lanes: |2 * 255 * 127| is far below 2^31, so every sum is exact and the result is the
 * same function (and bits) as the VNNI kernels'. On the CPUs this path is for, vpmaddwd issues on the
 * same two multiply pipes as vpmaddubsw, and the vpmaddubsw route needs a second vpmaddwd to widen its
 * pairs: the same multiplies per product, without the saturation.
 *
 * Tile: 4 x rows by 8 channels; per quad two loads of 16 packed codes (4 channels x 4 codes each),
 * widened to 16 int16 (lane 2c: the channel's codes 0, 1; lane 2c + 1: codes 2, 3), and per row one
 * 64-bit broadcast of its 4 int16 codes, so one vpmaddwd gives each channel's two pair sums; the pairs
 * are added at the end (vphaddd). */
#define VX_SIMD_WIDTH 8
#include "cpu/simd.h"
#include "cpu/simd_math.h"

#define CI_WIDE 1
#define CI_MR 6
#define CI_SUFFIX(name) name##_avx2
#include "cpu/conv_i8.h"

typedef int64_t ci_i64a __attribute__((may_alias, aligned(1)));

/* 4 rows by the 8 channels of block sb: out of line so the accumulators stay in registers */
static __attribute__((noinline)) void ci_block8(const ci_tile_args *t, int sb) {
    const int16_t *x = t->x;
    const int64_t ldx = t->ldx, quads = t->quads, mr = t->mr;
    const int8_t *P = t->P + sb * 32;
    const __m256i z = _mm256_setzero_si256();
    __m256i a00 = z, a01 = z, a10 = z, a11 = z, a20 = z, a21 = z, a30 = z, a31 = z, a40 = z, a41 = z, a50 = z, a51 = z;
    for (int64_t u = 0; u < quads; u++) {
        const int8_t *pw = P + u * CI_NR * 4;
        const __m256i w0 = _mm256_cvtepi8_epi16(_mm_load_si128((const __m128i *)pw));
        const __m256i w1 = _mm256_cvtepi8_epi16(_mm_load_si128((const __m128i *)(pw + 16)));
#define IM_ROW(i)                                                                                                      \
    do {                                                                                                               \
        const __m256i xb = _mm256_set1_epi64x(*(const ci_i64a *)(x + (i) * ldx + u * 4));                              \
        a##i##0 = _mm256_add_epi32(a##i##0, _mm256_madd_epi16(xb, w0));                                               \
        a##i##1 = _mm256_add_epi32(a##i##1, _mm256_madd_epi16(xb, w1));                                               \
    } while (0)
        IM_ROW(0);
        IM_ROW(1);
        IM_ROW(2);
        IM_ROW(3);
        IM_ROW(4);
        IM_ROW(5);
#undef IM_ROW
    }
    const int64_t c0 = sb * 8;
    const vf zs = v_load(t->wsum + c0), sw = v_load(t->ws + c0), bv = t->bias ? v_load(t->bias + c0) : v_zero();
    const __m256i acc[6][2] = {{a00, a01}, {a10, a11}, {a20, a21}, {a30, a31}, {a40, a41}, {a50, a51}};
    for (int i = 0; i < mr; i++) {
        /* [c0 c0' c1 c1' c2 c2' c3 c3'] and the same for c4..c7 -> [c0 .. c7] */
        const __m256i s = _mm256_permute4x64_epi64(_mm256_hadd_epi32(acc[i][0], acc[i][1]), 0xd8);
        ci_epi(s, v_set1(t->xs[i]), v_set1(t->xz[i]), zs, sw, bv, t->bias != NULL, t->f + i * CI_NR + c0,
               t->res ? t->res + i * t->ldy + c0 : NULL, t->y + i * t->ldy + c0, t->first, t->last);
    }
}

static void ci_sums(const ci_tile_args *t) {
    for (int sb = 0; sb < CI_NR / 8; sb++) ci_block8(t, sb);
}

void vx_conv_i8_init_avx2(vx_kernels *t) {
    t->conv_i8 = ci_conv_avx2;
    t->conv_i8_work = ci_work_size_avx2;
    t->dots.int8 = "AVX2 vpmaddwd";
    t->dots.int8_widened = 1;
}
