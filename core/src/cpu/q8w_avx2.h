/* Internal: vx_linear_q8w's register tile on 256-bit registers (the job and the layout: q8w.c), included
 * by q8w_avx2.c (Q8W_VNNI 0: vpmaddubsw + vpmaddwd) and q8w_avx2_vnni.c (Q8W_VNNI 1: AVX-VNNI vpdpbusd).
 * A group's 64-byte step is two vectors, rows 0-7 and 8-15 by their 4 codes, so x's 4 codes broadcast
 * against each give 8 outputs' partial sums, exact in int32:
 *   vpdpbusd (AVX-VNNI): x's unsigned codes q + 128 times the signed weights, from the block's corr (the
 *     AVX512-VNNI tile's arithmetic);
 *   vpmaddubsw, vpmaddwd: |q| times the weights with q's sign (vpsignb; pairs <= 2 * 127 * 127 < 32768, no
 *     saturation, as linear_q_avx2.h), from 0.
 * Both give isum_b exactly; then per block and output one conversion and one FMA with sw * d into the
 * float chain, as q8w.c defines it: the bits of the scalar tile. Sub-tiles of 2 x rows by one group
 * (4 int32 and 4 float accumulators of the 16 registers). */
#ifndef Q8W_VNNI
#  error "define Q8W_VNNI (0 or 1) and Q8W_INIT before including q8w_avx2.h"
#endif
#include <immintrin.h>
#include <string.h>

#include "cpu/dispatch.h"

static inline __attribute__((always_inline)) void q8w_sub(const vx_q8w_tile *t, const int MR, int i0, int g) {
    __m256 acc[2][2];
    const unsigned char *pg = t->p + (size_t)g * t->gstride;
    for (int i = 0; i < MR; i++)
        for (int v = 0; v < 2; v++)
            acc[i][v] = t->first ? _mm256_setzero_ps() : _mm256_loadu_ps(t->y + (i0 + i) * t->ldy + 16 * g + 8 * v);
#if !Q8W_VNNI
    const __m256i ones = _mm256_set1_epi16(1);
#endif
    for (int64_t b = 0; b < t->kb; b++) {
        const unsigned char *blk = pg + (size_t)b * 640;
        __m256i ia[2][2];
        for (int v = 0; v < 2; v++) {
#if Q8W_VNNI
            const __m256i c = _mm256_load_si256((const __m256i *)(const void *)(blk + 512 + 32 * v));
#else
            const __m256i c = _mm256_setzero_si256();
#endif
            for (int i = 0; i < MR; i++) ia[i][v] = c;
        }
        const int64_t kb = 32 * (t->b0 + b);
        for (int s = 0; s < 8; s++) {
            const __m256i w0 = _mm256_load_si256((const __m256i *)(const void *)(blk + 64 * s)),
                          w1 = _mm256_load_si256((const __m256i *)(const void *)(blk + 64 * s + 32));
            for (int i = 0; i < MR; i++) {
                int32_t xv;
                memcpy(&xv, t->xq + (i0 + i) * t->xrow + kb + 4 * s, 4);
#if Q8W_VNNI
                const __m256i xb = _mm256_set1_epi32(xv);
                ia[i][0] = _mm256_dpbusd_avx_epi32(ia[i][0], xb, w0);
                ia[i][1] = _mm256_dpbusd_avx_epi32(ia[i][1], xb, w1);
#else
                const __m256i q = _mm256_set1_epi32(xv ^ (int32_t)0x80808080u), aq = _mm256_abs_epi8(q); /* q = (q + 128) ^ 0x80 */
                ia[i][0] = _mm256_add_epi32(ia[i][0], _mm256_madd_epi16(_mm256_maddubs_epi16(aq, _mm256_sign_epi8(w0, q)), ones));
                ia[i][1] = _mm256_add_epi32(ia[i][1], _mm256_madd_epi16(_mm256_maddubs_epi16(aq, _mm256_sign_epi8(w1, q)), ones));
#endif
            }
        }
        for (int v = 0; v < 2; v++) {
            const __m256 sw = _mm256_load_ps((const float *)(const void *)(blk + 576 + 32 * v));
            for (int i = 0; i < MR; i++) {
                const __m256 sc = _mm256_mul_ps(sw, _mm256_set1_ps(t->dx[(i0 + i) * t->dxrow + t->b0 + b]));
                acc[i][v] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(ia[i][v]), sc, acc[i][v]);
            }
        }
    }
    const int add = t->last && t->bias;
    for (int v = 0; v < 2; v++) {
        const __m256 bv = add ? _mm256_loadu_ps(t->bias + 16 * g + 8 * v) : _mm256_setzero_ps();
        for (int i = 0; i < MR; i++)
            _mm256_storeu_ps(t->y + (i0 + i) * t->ldy + 16 * g + 8 * v, add ? _mm256_add_ps(acc[i][v], bv) : acc[i][v]);
    }
}

static void q8w_tile_avx2(const vx_q8w_tile *t) {
    for (int g = 0; g < t->ng; g++)
        for (int i = 0; i < t->mr; i += 2) {
            if (t->mr - i >= 2) q8w_sub(t, 2, i, g);
            else q8w_sub(t, 1, i, g);
        }
}

/* An 8 x 8 transpose of dwords: r[i]'s dword s to r[s]'s dword i. */
static inline __attribute__((always_inline)) void q8w_tr8x8(__m256i r[8]) {
    __m256i t[8], u[8];
    for (int i = 0; i < 4; i++) {
        t[2 * i] = _mm256_unpacklo_epi32(r[2 * i], r[2 * i + 1]);       /* a0 b0 a1 b1 | a4 b4 a5 b5 */
        t[2 * i + 1] = _mm256_unpackhi_epi32(r[2 * i], r[2 * i + 1]);   /* a2 b2 a3 b3 | a6 b6 a7 b7 */
    }
    for (int i = 0; i < 2; i++) {
        u[4 * i] = _mm256_unpacklo_epi64(t[4 * i], t[4 * i + 2]);       /* a0 b0 c0 d0 | a4 b4 c4 d4 */
        u[4 * i + 1] = _mm256_unpackhi_epi64(t[4 * i], t[4 * i + 2]);   /* a1 .. d1 | a5 .. d5 */
        u[4 * i + 2] = _mm256_unpacklo_epi64(t[4 * i + 1], t[4 * i + 3]);
        u[4 * i + 3] = _mm256_unpackhi_epi64(t[4 * i + 1], t[4 * i + 3]);
    }
    for (int s = 0; s < 4; s++) {
        r[s] = _mm256_permute2x128_si256(u[s], u[4 + s], 0x20);
        r[4 + s] = _mm256_permute2x128_si256(u[s], u[4 + s], 0x31);
    }
}

/* vx_q8w_pack's bytes for one group (q8w.c's layout), a block at a time: the 16 rows' 32 codes are
 * 16 x 8 dwords, and two 8 x 8 dword transposes give the 8 steps' vectors of rows 0-7 and 8-15; the
 * rows' code sums by vpmaddubsw against ones and vpmaddwd (exact); the scales by gathers. ~100
 * instructions a block where the byte loop takes ~2000, so that vx_linear_q8t packs as it goes. */
static void q8w_pack_group_avx2(const int8_t *codes, int64_t ld, const float *scales, int64_t nb, unsigned char *dst) {
    const __m256i ones8 = _mm256_set1_epi8(1), ones16 = _mm256_set1_epi16(1), m128 = _mm256_set1_epi32(-128),
                  srow = _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32((int)nb));
    for (int64_t b = 0; b < nb; b++) {
        unsigned char *blk = dst + b * 640;
        for (int h = 0; h < 2; h++) {
            __m256i r[8];
            for (int i = 0; i < 8; i++) r[i] = _mm256_loadu_si256((const __m256i *)(const void *)(codes + (8 * h + i) * ld + 32 * b));
            q8w_tr8x8(r);
            __m256i sum = _mm256_setzero_si256();
            for (int st = 0; st < 8; st++) {
                _mm256_store_si256((__m256i *)(void *)(blk + 64 * st + 32 * h), r[st]);
                sum = _mm256_add_epi32(sum, _mm256_madd_epi16(_mm256_maddubs_epi16(ones8, r[st]), ones16));
            }
            _mm256_store_si256((__m256i *)(void *)(blk + 512 + 32 * h), _mm256_mullo_epi32(sum, m128));
            _mm256_store_ps((float *)(void *)(blk + 576 + 32 * h), _mm256_i32gather_ps(scales + 8 * h * nb + b, srow, 4));
        }
    }
}
