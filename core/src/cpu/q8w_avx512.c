/* vx_linear_q8w's register tile with AVX512-VNNI (the job and the layout: q8w.c). Lane r of a vector is
 * output row r of a group of 16: per block, the integer accumulator starts from the block's corr and
 * takes 8 vpdpbusd (x's 4 codes of the step broadcast, times the group's 64-byte step: 512 products,
 * exact), then one conversion and one FMA with sw * d into the float chain, as q8w.c defines it: the
 * bits of the scalar tile. 4 x rows by 3 groups: 12 float and 12 integer accumulators. */
#include <immintrin.h>
#include <string.h>

#include "cpu/dispatch.h"

static inline __attribute__((always_inline)) void tile(const int MR, const int NG, const vx_q8w_tile *t) {
    __m512 acc[4][3];
#pragma GCC unroll 4
    for (int i = 0; i < MR; i++)
#pragma GCC unroll 3
        for (int g = 0; g < NG; g++) acc[i][g] = t->first ? _mm512_setzero_ps() : _mm512_loadu_ps(t->y + i * t->ldy + 16 * g);
    for (int64_t b = 0; b < t->kb; b++) {
        const unsigned char *blk = t->p + (size_t)b * 640;
        __m512i ia[4][3];
#pragma GCC unroll 3
        for (int g = 0; g < NG; g++) {
            __m512i c = _mm512_load_si512((const void *)(blk + g * t->gstride + 512));
#pragma GCC unroll 4
            for (int i = 0; i < MR; i++) ia[i][g] = c;
        }
        const int64_t kb = 32 * (t->b0 + b);
#pragma GCC unroll 8
        for (int s = 0; s < 8; s++) {
            __m512i wv[3];
#pragma GCC unroll 3
            for (int g = 0; g < NG; g++) wv[g] = _mm512_load_si512((const void *)(blk + g * t->gstride + 64 * s));
#pragma GCC unroll 4
            for (int i = 0; i < MR; i++) {
                int32_t xv;
                memcpy(&xv, t->xq + i * t->xrow + kb + 4 * s, 4);
                const __m512i xb = _mm512_set1_epi32(xv);
#pragma GCC unroll 3
                for (int g = 0; g < NG; g++) ia[i][g] = _mm512_dpbusd_epi32(ia[i][g], xb, wv[g]);
            }
        }
#pragma GCC unroll 3
        for (int g = 0; g < NG; g++) {
            const __m512 sw = _mm512_load_ps((const float *)(blk + g * t->gstride + 576));
#pragma GCC unroll 4
            for (int i = 0; i < MR; i++) {
                const __m512 s = _mm512_mul_ps(sw, _mm512_set1_ps(t->dx[i * t->dxrow + t->b0 + b]));
                acc[i][g] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(ia[i][g]), s, acc[i][g]);
            }
        }
    }
#pragma GCC unroll 3
    for (int g = 0; g < NG; g++) {
        const int add = t->last && t->bias;
        const __m512 bv = add ? _mm512_loadu_ps(t->bias + 16 * g) : _mm512_setzero_ps();
#pragma GCC unroll 4
        for (int i = 0; i < MR; i++) _mm512_storeu_ps(t->y + i * t->ldy + 16 * g, add ? _mm512_add_ps(acc[i][g], bv) : acc[i][g]);
    }
}

static void q8w_tile(const vx_q8w_tile *t) {
    switch (t->mr * 4 + t->ng) {
    case 4 * 4 + 3: tile(4, 3, t); break;
    case 4 * 4 + 2: tile(4, 2, t); break;
    case 4 * 4 + 1: tile(4, 1, t); break;
    case 3 * 4 + 3: tile(3, 3, t); break;
    case 3 * 4 + 2: tile(3, 2, t); break;
    case 3 * 4 + 1: tile(3, 1, t); break;
    case 2 * 4 + 3: tile(2, 3, t); break;
    case 2 * 4 + 2: tile(2, 2, t); break;
    case 2 * 4 + 1: tile(2, 1, t); break;
    case 1 * 4 + 3: tile(1, 3, t); break;
    case 1 * 4 + 2: tile(1, 2, t); break;
    default: tile(1, 1, t); break;
    }
}

/* vx_q8w_pack's bytes for one group, a block at a time: per step one gather of the 16 rows' 4 codes (the
 * 64-byte step vector), their code sums by vpdpbusd against ones (exact), the 16 block scales by a
 * gather; 10 instructions a block where the byte loop takes ~2000. */
static void pack_group(const int8_t *codes, int64_t ld, const float *scales, int64_t nb, unsigned char *dst) {
    const __m512i rows = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                            _mm512_set1_epi32((int)ld)),
                  srow = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                            _mm512_set1_epi32((int)nb)),
                  ones = _mm512_set1_epi8(1);
    for (int64_t b = 0; b < nb; b++) {
        unsigned char *blk = dst + b * 640;
        __m512i sum = _mm512_setzero_si512();
        for (int st = 0; st < 8; st++) {
            const __m512i w = _mm512_i32gather_epi32(rows, (const void *)(codes + 32 * b + 4 * st), 1);
            _mm512_store_si512((void *)(blk + 64 * st), w);
            sum = _mm512_dpbusd_epi32(sum, ones, w);
        }
        _mm512_store_si512((void *)(blk + 512), _mm512_mullo_epi32(sum, _mm512_set1_epi32(-128)));
        _mm512_store_ps((void *)(blk + 576), _mm512_i32gather_ps(srow, scales + b, 4));
    }
}

void vx_q8w_init_avx512(vx_kernels *t) {
    t->q8w_pack_group = pack_group;
    t->q8w_tile = q8w_tile;
    t->quant_block_q8 = vx_quant_block_q8_avx512;
    t->dots.q8 = "AVX512-VNNI";
}
