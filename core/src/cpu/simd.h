/* Internal: a thin vector abstraction over AVX2 (8 float lanes), AVX-512 (16 float lanes) and aarch64
 * NEON (4 float lanes), so the float kernels (simd_math.h, simd_elementwise.h, simd_linear.h) are
 * written once and compiled per ISA. Include only from *_avx2.c / *_avx512.c / *_neon*.c after
 * defining VX_SIMD_WIDTH (8, 16 or 4).
 *
 * Every operation is a plain IEEE operation of the ISA (FMA where v_fma is written); nothing depends
 * on a lane's position, so a value computed in a partial (masked) vector at the end of an array is the
 * same as in a full one: that is how elementwise kernels keep "an element's value does not depend on
 * its position". v_hsum adds lanes in one fixed tree (i + i+8, i + i+4, i + i+2, i + i+1) used by every
 * reduction of a path. */
#ifndef VOX_CPU_SIMD_H
#define VOX_CPU_SIMD_H

#include <stdint.h>

#define V_INLINE static inline __attribute__((always_inline))

#if VX_SIMD_WIDTH == 4
#  include <arm_neon.h>
/* a read-ahead hint for streamed weights (simd_linear.h, the q8/q4 kernels) */
#  define v_prefetch(p) __builtin_prefetch((const void *)(p))
#else
#  include <immintrin.h>
#  define v_prefetch(p) _mm_prefetch((const char *)(p), VX_GEMV_HINT)
/* one float to int32, rounded to nearest even (as v_cvt_i) */
V_INLINE int32_t v_rne_i32(float x) { return _mm_cvtss_si32(_mm_set_ss(x)); }
#endif

#if VX_SIMD_WIDTH == 16
#  define VL 16
typedef __m512 vf;
typedef __m512i vi;
typedef __mmask16 vm;
#  define VX_SUFFIX(name) name##_avx512
#  define v_hsum_batch v_hsum16

V_INLINE vm v_tailmask(int64_t n) { return (vm)((1u << n) - 1u); } /* n in [0, VL) */
V_INLINE vf v_load(const float *p) { return _mm512_loadu_ps(p); }
V_INLINE void v_store(float *p, vf v) { _mm512_storeu_ps(p, v); }
V_INLINE vf v_load_part(const float *p, int64_t n) { return _mm512_maskz_loadu_ps(v_tailmask(n), p); }
V_INLINE void v_store_part(float *p, vf v, int64_t n) { _mm512_mask_storeu_ps(p, v_tailmask(n), v); }
V_INLINE vf v_set1(float a) { return _mm512_set1_ps(a); }
V_INLINE vf v_zero(void) { return _mm512_setzero_ps(); }
V_INLINE vf v_add(vf a, vf b) { return _mm512_add_ps(a, b); }
V_INLINE vf v_sub(vf a, vf b) { return _mm512_sub_ps(a, b); }
V_INLINE vf v_mul(vf a, vf b) { return _mm512_mul_ps(a, b); }
V_INLINE vf v_div(vf a, vf b) { return _mm512_div_ps(a, b); }
V_INLINE vf v_fma(vf a, vf b, vf c) { return _mm512_fmadd_ps(a, b, c); }   /* a * b + c */
V_INLINE vf v_fnma(vf a, vf b, vf c) { return _mm512_fnmadd_ps(a, b, c); } /* c - a * b */
V_INLINE vf v_fms(vf a, vf b, vf c) { return _mm512_fmsub_ps(a, b, c); }   /* a * b - c */
/* max/min return the SECOND operand when either is NaN (x86 semantics), as in the AVX2 version */
V_INLINE vf v_max(vf a, vf b) { return _mm512_max_ps(a, b); }
V_INLINE vf v_min(vf a, vf b) { return _mm512_min_ps(a, b); }
V_INLINE vf v_abs(vf a) { return _mm512_abs_ps(a); }
V_INLINE vf v_neg(vf a) { return _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(a), _mm512_set1_epi32((int)0x80000000u))); }
V_INLINE vf v_signbit(vf a) { return _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(a), _mm512_set1_epi32((int)0x80000000u))); }
V_INLINE vf v_xor(vf a, vf b) { return _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(a), _mm512_castps_si512(b))); }
V_INLINE vf v_round(vf a) { return _mm512_roundscale_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
V_INLINE vf v_floor(vf a) { return _mm512_roundscale_ps(a, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC); }
V_INLINE vm v_lt(vf a, vf b) { return _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ); }
V_INLINE vm v_le(vf a, vf b) { return _mm512_cmp_ps_mask(a, b, _CMP_LE_OQ); }
V_INLINE vm v_ge(vf a, vf b) { return _mm512_cmp_ps_mask(a, b, _CMP_GE_OQ); }
V_INLINE vm v_gt(vf a, vf b) { return _mm512_cmp_ps_mask(a, b, _CMP_GT_OQ); }
V_INLINE vm v_isnan(vf a) { return _mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q); }
V_INLINE vm v_mor(vm a, vm b) { return (vm)(a | b); }
V_INLINE int v_any(vm m) { return m != 0; }
V_INLINE vf v_sel(vm m, vf a, vf b) { return _mm512_mask_blend_ps(m, a, b); } /* m ? b : a */
V_INLINE vi v_cvt_i(vf a) { return _mm512_cvtps_epi32(a); }                  /* round to nearest even */
V_INLINE vf v_cvt_f(vi a) { return _mm512_cvtepi32_ps(a); }
V_INLINE vi vi_set1(int32_t a) { return _mm512_set1_epi32(a); }
V_INLINE vf v_gather(const float *base, const int32_t *idx) { return _mm512_i32gather_ps(_mm512_loadu_si512(idx), base, 4); }
V_INLINE vf v_gather_i(const float *base, vi idx) { return _mm512_i32gather_ps(idx, base, 4); }
V_INLINE vi vi_iota(void) { return _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15); }
V_INLINE vi vi_mul(vi a, vi b) { return _mm512_mullo_epi32(a, b); }
V_INLINE vi v_cvtt_i(vf a) { return _mm512_cvttps_epi32(a); } /* truncation toward zero */
V_INLINE vm vi_lt(vi a, vi b) { return _mm512_cmplt_epi32_mask(a, b); }
V_INLINE vi vi_sel(vm m, vi a, vi b) { return _mm512_mask_blend_epi32(m, a, b); } /* m ? b : a */
V_INLINE vi vi_add(vi a, vi b) { return _mm512_add_epi32(a, b); }
V_INLINE vi vi_sub(vi a, vi b) { return _mm512_sub_epi32(a, b); }
V_INLINE vi vi_and(vi a, vi b) { return _mm512_and_si512(a, b); }
V_INLINE vi vi_srai1(vi a) { return _mm512_srai_epi32(a, 1); }
V_INLINE vi vi_srai16(vi a) { return _mm512_srai_epi32(a, 16); }
V_INLINE vi vi_or(vi a, vi b) { return _mm512_or_si512(a, b); }
V_INLINE vi vi_sll16(vi a) { return _mm512_slli_epi32(a, 16); }
V_INLINE vi vi_sll23(vi a) { return _mm512_slli_epi32(a, 23); }
V_INLINE vi vi_sll30(vi a) { return _mm512_slli_epi32(a, 30); }
V_INLINE vi v_bits(vf a) { return _mm512_castps_si512(a); }
V_INLINE vf v_frombits(vi a) { return _mm512_castsi512_ps(a); }
V_INLINE vm vi_eq(vi a, vi b) { return _mm512_cmpeq_epi32_mask(a, b); }
/* weights: 16 f16 / bf16 values widened to float (exact) */
V_INLINE vf v_load_f16(const uint16_t *p) { return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)p)); }
V_INLINE vf v_load_f16_part(const uint16_t *p, int64_t n) {
    return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(v_tailmask(n), p));
}
V_INLINE vf v_load_bf16(const uint16_t *p) {
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)p)), 16));
}
V_INLINE vf v_load_bf16_part(const uint16_t *p, int64_t n) {
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(v_tailmask(n), p)), 16));
}
V_INLINE float v_hsum(vf a) {
    __m256 h = _mm256_add_ps(_mm512_castps512_ps256(a), _mm512_extractf32x8_ps(a, 1));
    __m128 q = _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
    q = _mm_add_ps(q, _mm_movehl_ps(q, q));
    q = _mm_add_ss(q, _mm_movehdup_ps(q));
    return _mm_cvtss_f32(q);
}
V_INLINE float v_hmax(vf a) { return _mm512_reduce_max_ps(a); } /* exact in any order */
V_INLINE float v_hmin(vf a) { return _mm512_reduce_min_ps(a); }
V_INLINE vi vi_max(vi a, vi b) { return _mm512_max_epi32(a, b); }
V_INLINE vi vi_min(vi a, vi b) { return _mm512_min_epi32(a, b); }
V_INLINE void vi_store_u8(uint8_t *p, vi a) { _mm_storeu_si128((__m128i *)p, _mm512_cvtepi32_epi8(a)); } /* low bytes */
V_INLINE void vi_store_i16(int16_t *p, vi a) { _mm256_storeu_si256((__m256i *)p, _mm512_cvtepi32_epi16(a)); }
/* In-place transpose of a 16 x 16 block held in 16 vectors (r[i] = row i -> r[j] = column j). */
V_INLINE void v_transpose(vf *r) {
    vf t[16];
    for (int i = 0; i < 8; i++) {
        t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
    for (int i = 0; i < 4; i++) {
        r[4 * i + 0] = _mm512_shuffle_ps(t[4 * i + 0], t[4 * i + 2], _MM_SHUFFLE(1, 0, 1, 0));
        r[4 * i + 1] = _mm512_shuffle_ps(t[4 * i + 0], t[4 * i + 2], _MM_SHUFFLE(3, 2, 3, 2));
        r[4 * i + 2] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], _MM_SHUFFLE(1, 0, 1, 0));
        r[4 * i + 3] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], _MM_SHUFFLE(3, 2, 3, 2));
    }
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 4; j++) {
            t[8 * i + j] = _mm512_shuffle_f32x4(r[8 * i + j], r[8 * i + 4 + j], 0x88);
            t[8 * i + 4 + j] = _mm512_shuffle_f32x4(r[8 * i + j], r[8 * i + 4 + j], 0xdd);
        }
    for (int j = 0; j < 8; j++) {
        r[j] = _mm512_shuffle_f32x4(t[j], t[8 + j], 0x88);
        r[8 + j] = _mm512_shuffle_f32x4(t[j], t[8 + j], 0xdd);
    }
}
/* Lane j of the result = v_hsum(a[j]) bit for bit: the same pairwise additions (i + i+8, i + i+4,
 * i + i+2, i + i+1), done for 16 vectors at once with shuffles (about 3 instructions per vector
 * instead of 8). Addition is commutative in IEEE arithmetic, so operand order inside a pair is free. */
V_INLINE vf v_hsum16(const vf *a) {
    vf t[8], v[4], z[2];
    for (int p = 0; p < 8; p++) /* [lo256 + hi256 of a[2p] | of a[2p+1]] */
        t[p] = _mm512_add_ps(_mm512_shuffle_f32x4(a[2 * p], a[2 * p + 1], _MM_SHUFFLE(1, 0, 1, 0)),
                             _mm512_shuffle_f32x4(a[2 * p], a[2 * p + 1], _MM_SHUFFLE(3, 2, 3, 2)));
    for (int q = 0; q < 4; q++) /* 128-bit chunk k = (chunk0 + chunk1) of a[4q + k] */
        v[q] = _mm512_add_ps(_mm512_shuffle_f32x4(t[2 * q], t[2 * q + 1], _MM_SHUFFLE(2, 0, 2, 0)),
                             _mm512_shuffle_f32x4(t[2 * q], t[2 * q + 1], _MM_SHUFFLE(3, 1, 3, 1)));
    for (int r = 0; r < 2; r++) /* chunk k: [lanes 0+2, 1+3 of a[8r + k]; of a[8r + 4 + k]] */
        z[r] = _mm512_add_ps(_mm512_shuffle_ps(v[2 * r], v[2 * r + 1], _MM_SHUFFLE(1, 0, 1, 0)),
                             _mm512_shuffle_ps(v[2 * r], v[2 * r + 1], _MM_SHUFFLE(3, 2, 3, 2)));
    /* chunk k, lane m: the sum of a[4m + k]; transpose back to lane j = a[j] */
    vf e = _mm512_add_ps(_mm512_shuffle_ps(z[0], z[1], _MM_SHUFFLE(2, 0, 2, 0)),
                         _mm512_shuffle_ps(z[0], z[1], _MM_SHUFFLE(3, 1, 3, 1)));
    return _mm512_permutexvar_ps(_mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15), e);
}

#elif VX_SIMD_WIDTH == 8
#  define VL 8
typedef __m256 vf;
typedef __m256i vi;
typedef __m256 vm; /* all-ones lanes */
#  define VX_SUFFIX(name) name##_avx2
#  define v_hsum_batch v_hsum8

V_INLINE __m256i v_tailmask_i(int64_t n) {
    static const int32_t tbl[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};
    return _mm256_loadu_si256((const __m256i *)(tbl + 8 - n));
}
V_INLINE vf v_load(const float *p) { return _mm256_loadu_ps(p); }
V_INLINE void v_store(float *p, vf v) { _mm256_storeu_ps(p, v); }
V_INLINE vf v_load_part(const float *p, int64_t n) { return _mm256_maskload_ps(p, v_tailmask_i(n)); }
V_INLINE void v_store_part(float *p, vf v, int64_t n) { _mm256_maskstore_ps(p, v_tailmask_i(n), v); }
V_INLINE vf v_set1(float a) { return _mm256_set1_ps(a); }
V_INLINE vf v_zero(void) { return _mm256_setzero_ps(); }
V_INLINE vf v_add(vf a, vf b) { return _mm256_add_ps(a, b); }
V_INLINE vf v_sub(vf a, vf b) { return _mm256_sub_ps(a, b); }
V_INLINE vf v_mul(vf a, vf b) { return _mm256_mul_ps(a, b); }
V_INLINE vf v_div(vf a, vf b) { return _mm256_div_ps(a, b); }
V_INLINE vf v_fma(vf a, vf b, vf c) { return _mm256_fmadd_ps(a, b, c); }
V_INLINE vf v_fnma(vf a, vf b, vf c) { return _mm256_fnmadd_ps(a, b, c); }
V_INLINE vf v_fms(vf a, vf b, vf c) { return _mm256_fmsub_ps(a, b, c); }
V_INLINE vf v_max(vf a, vf b) { return _mm256_max_ps(a, b); }
V_INLINE vf v_min(vf a, vf b) { return _mm256_min_ps(a, b); }
V_INLINE vf v_abs(vf a) { return _mm256_and_ps(a, _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff))); }
V_INLINE vf v_neg(vf a) { return _mm256_xor_ps(a, _mm256_castsi256_ps(_mm256_set1_epi32((int)0x80000000u))); }
V_INLINE vf v_signbit(vf a) { return _mm256_and_ps(a, _mm256_castsi256_ps(_mm256_set1_epi32((int)0x80000000u))); }
V_INLINE vf v_xor(vf a, vf b) { return _mm256_xor_ps(a, b); }
V_INLINE vf v_round(vf a) { return _mm256_round_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
V_INLINE vf v_floor(vf a) { return _mm256_round_ps(a, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC); }
V_INLINE vm v_lt(vf a, vf b) { return _mm256_cmp_ps(a, b, _CMP_LT_OQ); }
V_INLINE vm v_le(vf a, vf b) { return _mm256_cmp_ps(a, b, _CMP_LE_OQ); }
V_INLINE vm v_ge(vf a, vf b) { return _mm256_cmp_ps(a, b, _CMP_GE_OQ); }
V_INLINE vm v_gt(vf a, vf b) { return _mm256_cmp_ps(a, b, _CMP_GT_OQ); }
V_INLINE vm v_isnan(vf a) { return _mm256_cmp_ps(a, a, _CMP_UNORD_Q); }
V_INLINE vm v_mor(vm a, vm b) { return _mm256_or_ps(a, b); }
V_INLINE int v_any(vm m) { return _mm256_movemask_ps(m) != 0; }
V_INLINE vf v_sel(vm m, vf a, vf b) { return _mm256_blendv_ps(a, b, m); }
V_INLINE vi v_cvt_i(vf a) { return _mm256_cvtps_epi32(a); }
V_INLINE vf v_cvt_f(vi a) { return _mm256_cvtepi32_ps(a); }
V_INLINE vi vi_set1(int32_t a) { return _mm256_set1_epi32(a); }
V_INLINE vf v_gather(const float *base, const int32_t *idx) {
    return _mm256_i32gather_ps(base, _mm256_loadu_si256((const __m256i *)idx), 4);
}
V_INLINE vf v_gather_i(const float *base, vi idx) { return _mm256_i32gather_ps(base, idx, 4); }
V_INLINE vi vi_iota(void) { return _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7); }
V_INLINE vi vi_mul(vi a, vi b) { return _mm256_mullo_epi32(a, b); }
V_INLINE vi v_cvtt_i(vf a) { return _mm256_cvttps_epi32(a); }
V_INLINE vm vi_lt(vi a, vi b) { return _mm256_castsi256_ps(_mm256_cmpgt_epi32(b, a)); }
V_INLINE vi vi_sel(vm m, vi a, vi b) { return _mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(a), _mm256_castsi256_ps(b), m)); }
V_INLINE vi vi_add(vi a, vi b) { return _mm256_add_epi32(a, b); }
V_INLINE vi vi_sub(vi a, vi b) { return _mm256_sub_epi32(a, b); }
V_INLINE vi vi_and(vi a, vi b) { return _mm256_and_si256(a, b); }
V_INLINE vi vi_srai1(vi a) { return _mm256_srai_epi32(a, 1); }
V_INLINE vi vi_srai16(vi a) { return _mm256_srai_epi32(a, 16); }
V_INLINE vi vi_or(vi a, vi b) { return _mm256_or_si256(a, b); }
V_INLINE vi vi_sll16(vi a) { return _mm256_slli_epi32(a, 16); }
V_INLINE vi vi_sll23(vi a) { return _mm256_slli_epi32(a, 23); }
V_INLINE vi vi_sll30(vi a) { return _mm256_slli_epi32(a, 30); }
V_INLINE vi v_bits(vf a) { return _mm256_castps_si256(a); }
V_INLINE vf v_frombits(vi a) { return _mm256_castsi256_ps(a); }
V_INLINE vm vi_eq(vi a, vi b) { return _mm256_castsi256_ps(_mm256_cmpeq_epi32(a, b)); }
V_INLINE vf v_load_f16(const uint16_t *p) { return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p)); }
V_INLINE vf v_load_f16_part(const uint16_t *p, int64_t n) {
    uint16_t t[8] = {0};
    for (int64_t i = 0; i < n; i++) t[i] = p[i];
    return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)t));
}
V_INLINE vf v_load_bf16(const uint16_t *p) {
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)p)), 16));
}
V_INLINE vf v_load_bf16_part(const uint16_t *p, int64_t n) {
    uint16_t t[8] = {0};
    for (int64_t i = 0; i < n; i++) t[i] = p[i];
    return v_load_bf16(t);
}
V_INLINE float v_hsum(vf a) {
    __m128 q = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
    q = _mm_add_ps(q, _mm_movehl_ps(q, q));
    q = _mm_add_ss(q, _mm_movehdup_ps(q));
    return _mm_cvtss_f32(q);
}
/* In-place transpose of an 8 x 8 block held in 8 vectors. */
V_INLINE void v_transpose(vf *r) {
    vf t[8], u[8];
    for (int i = 0; i < 4; i++) {
        t[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
    for (int i = 0; i < 2; i++) {
        u[4 * i + 0] = _mm256_shuffle_ps(t[4 * i + 0], t[4 * i + 2], _MM_SHUFFLE(1, 0, 1, 0));
        u[4 * i + 1] = _mm256_shuffle_ps(t[4 * i + 0], t[4 * i + 2], _MM_SHUFFLE(3, 2, 3, 2));
        u[4 * i + 2] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], _MM_SHUFFLE(1, 0, 1, 0));
        u[4 * i + 3] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], _MM_SHUFFLE(3, 2, 3, 2));
    }
    for (int j = 0; j < 4; j++) {
        r[j] = _mm256_permute2f128_ps(u[j], u[4 + j], 0x20);
        r[4 + j] = _mm256_permute2f128_ps(u[j], u[4 + j], 0x31);
    }
}
/* Lane j = v_hsum(a[j]) bit for bit, for 8 vectors at once (see the AVX-512 version). */
V_INLINE vf v_hsum8(const vf *a) {
    vf t[4], z[2];
    for (int p = 0; p < 4; p++) /* [lo128 + hi128 of a[2p] | of a[2p+1]] */
        t[p] = _mm256_add_ps(_mm256_permute2f128_ps(a[2 * p], a[2 * p + 1], 0x20),
                             _mm256_permute2f128_ps(a[2 * p], a[2 * p + 1], 0x31));
    for (int r = 0; r < 2; r++) /* chunk k: [lanes 0+2, 1+3 of a[4r + k]; of a[4r + 2 + k]] */
        z[r] = _mm256_add_ps(_mm256_shuffle_ps(t[2 * r], t[2 * r + 1], _MM_SHUFFLE(1, 0, 1, 0)),
                             _mm256_shuffle_ps(t[2 * r], t[2 * r + 1], _MM_SHUFFLE(3, 2, 3, 2)));
    /* chunk k, lane m: the sum of a[2m + k] */
    vf e = _mm256_add_ps(_mm256_shuffle_ps(z[0], z[1], _MM_SHUFFLE(2, 0, 2, 0)),
                         _mm256_shuffle_ps(z[0], z[1], _MM_SHUFFLE(3, 1, 3, 1)));
    return _mm256_permutevar8x32_ps(e, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}
V_INLINE float v_hmax(vf a) {
    __m128 q = _mm_max_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
    q = _mm_max_ps(q, _mm_movehl_ps(q, q));
    q = _mm_max_ss(q, _mm_movehdup_ps(q));
    return _mm_cvtss_f32(q);
}
V_INLINE float v_hmin(vf a) {
    __m128 q = _mm_min_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
    q = _mm_min_ps(q, _mm_movehl_ps(q, q));
    q = _mm_min_ss(q, _mm_movehdup_ps(q));
    return _mm_cvtss_f32(q);
}
V_INLINE vi vi_max(vi a, vi b) { return _mm256_max_epi32(a, b); }
V_INLINE vi vi_min(vi a, vi b) { return _mm256_min_epi32(a, b); }
/* the low byte / low half of each lane (values already in range), in lane order */
V_INLINE void vi_store_u8(uint8_t *p, vi a) {
    const __m256i pick = _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
                                          0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
    const __m256i b = _mm256_shuffle_epi8(a, pick);
    const int32_t lo = _mm256_cvtsi256_si32(b), hi = _mm256_extract_epi32(b, 4);
    __builtin_memcpy(p, &lo, 4);
    __builtin_memcpy(p + 4, &hi, 4);
}
V_INLINE void vi_store_i16(int16_t *p, vi a) {
    const __m256i b = _mm256_permute4x64_epi64(_mm256_packs_epi32(a, a), 0x08);
    _mm_storeu_si128((__m128i *)p, _mm256_castsi256_si128(b));
}

#elif VX_SIMD_WIDTH == 4
/* aarch64 Advanced SIMD: 4 float lanes. Every operation keeps the x86 versions' semantics where the
 * kernels depend on them: v_max/v_min return the second operand when either is NaN (fmax/fmin would
 * return the NaN), v_cvt_i rounds to nearest even, v_hsum is the same pairwise tree (i + i+2, i + i+1). */
#  define VL 4
typedef float32x4_t vf;
typedef int32x4_t vi;
typedef uint32x4_t vm; /* all-ones lanes */
#  define VX_SUFFIX(name) name##_neon
#  define v_hsum_batch v_hsum4

V_INLINE int32_t v_rne_i32(float x) { return vcvtns_s32_f32(x); }
V_INLINE vf v_load(const float *p) { return vld1q_f32(p); }
V_INLINE void v_store(float *p, vf v) { vst1q_f32(p, v); }
/* partial vectors: only the first n (<= VL) elements are read or written, the others are 0 */
V_INLINE vf v_load_part(const float *p, int64_t n) {
    const float32x2_t z2 = vdup_n_f32(0.0f);
    switch (n) {
    case 0: return vdupq_n_f32(0.0f);
    case 1: return vcombine_f32(vset_lane_f32(p[0], z2, 0), z2);
    case 2: return vcombine_f32(vld1_f32(p), z2);
    case 3: return vcombine_f32(vld1_f32(p), vset_lane_f32(p[2], z2, 0));
    default: return vld1q_f32(p);
    }
}
V_INLINE void v_store_part(float *p, vf v, int64_t n) {
    switch (n) {
    case 0: break;
    case 1: vst1q_lane_f32(p, v, 0); break;
    case 2: vst1_f32(p, vget_low_f32(v)); break;
    case 3: vst1_f32(p, vget_low_f32(v)), vst1q_lane_f32(p + 2, v, 2); break;
    default: vst1q_f32(p, v); break;
    }
}
V_INLINE vf v_set1(float a) { return vdupq_n_f32(a); }
V_INLINE vf v_zero(void) { return vdupq_n_f32(0.0f); }
V_INLINE vf v_add(vf a, vf b) { return vaddq_f32(a, b); }
V_INLINE vf v_sub(vf a, vf b) { return vsubq_f32(a, b); }
V_INLINE vf v_mul(vf a, vf b) { return vmulq_f32(a, b); }
V_INLINE vf v_div(vf a, vf b) { return vdivq_f32(a, b); }
V_INLINE vf v_fma(vf a, vf b, vf c) { return vfmaq_f32(c, a, b); }           /* a * b + c */
V_INLINE vf v_fnma(vf a, vf b, vf c) { return vfmsq_f32(c, a, b); }          /* c - a * b */
V_INLINE vf v_fms(vf a, vf b, vf c) { return vnegq_f32(vfmsq_f32(c, a, b)); } /* a * b - c (one rounding) */
V_INLINE vf v_max(vf a, vf b) { return vbslq_f32(vcgtq_f32(a, b), a, b); }
V_INLINE vf v_min(vf a, vf b) { return vbslq_f32(vcltq_f32(a, b), a, b); }
V_INLINE vf v_abs(vf a) { return vabsq_f32(a); }
V_INLINE vf v_neg(vf a) { return vnegq_f32(a); }
V_INLINE vf v_signbit(vf a) {
    return vreinterpretq_f32_u32(vandq_u32(vreinterpretq_u32_f32(a), vdupq_n_u32(0x80000000u)));
}
V_INLINE vf v_xor(vf a, vf b) {
    return vreinterpretq_f32_u32(veorq_u32(vreinterpretq_u32_f32(a), vreinterpretq_u32_f32(b)));
}
V_INLINE vf v_round(vf a) { return vrndnq_f32(a); }
V_INLINE vf v_floor(vf a) { return vrndmq_f32(a); }
V_INLINE vm v_lt(vf a, vf b) { return vcltq_f32(a, b); }
V_INLINE vm v_le(vf a, vf b) { return vcleq_f32(a, b); }
V_INLINE vm v_ge(vf a, vf b) { return vcgeq_f32(a, b); }
V_INLINE vm v_gt(vf a, vf b) { return vcgtq_f32(a, b); }
V_INLINE vm v_isnan(vf a) { return vmvnq_u32(vceqq_f32(a, a)); }
V_INLINE vm v_mor(vm a, vm b) { return vorrq_u32(a, b); }
V_INLINE int v_any(vm m) { return vmaxvq_u32(m) != 0; }
V_INLINE vf v_sel(vm m, vf a, vf b) { return vbslq_f32(m, b, a); } /* m ? b : a */
V_INLINE vi v_cvt_i(vf a) { return vcvtnq_s32_f32(a); }            /* round to nearest even */
V_INLINE vf v_cvt_f(vi a) { return vcvtq_f32_s32(a); }
V_INLINE vi vi_set1(int32_t a) { return vdupq_n_s32(a); }
V_INLINE vf v_gather(const float *base, const int32_t *idx) {
    const float t[4] = {base[idx[0]], base[idx[1]], base[idx[2]], base[idx[3]]};
    return vld1q_f32(t);
}
V_INLINE vf v_gather_i(const float *base, vi idx) {
    int32_t i[4];
    vst1q_s32(i, idx);
    return v_gather(base, i);
}
V_INLINE vi vi_iota(void) {
    const int32_t t[4] = {0, 1, 2, 3};
    return vld1q_s32(t);
}
V_INLINE vi vi_mul(vi a, vi b) { return vmulq_s32(a, b); }
V_INLINE vi v_cvtt_i(vf a) { return vcvtq_s32_f32(a); } /* truncation toward zero */
V_INLINE vm vi_lt(vi a, vi b) { return vcltq_s32(a, b); }
V_INLINE vi vi_sel(vm m, vi a, vi b) { return vbslq_s32(m, b, a); } /* m ? b : a */
V_INLINE vi vi_add(vi a, vi b) { return vaddq_s32(a, b); }
V_INLINE vi vi_sub(vi a, vi b) { return vsubq_s32(a, b); }
V_INLINE vi vi_and(vi a, vi b) { return vandq_s32(a, b); }
V_INLINE vi vi_srai1(vi a) { return vshrq_n_s32(a, 1); }
V_INLINE vi vi_srai16(vi a) { return vshrq_n_s32(a, 16); }
V_INLINE vi vi_or(vi a, vi b) { return vorrq_s32(a, b); }
V_INLINE vi vi_sll16(vi a) { return vshlq_n_s32(a, 16); }
V_INLINE vi vi_sll23(vi a) { return vshlq_n_s32(a, 23); }
V_INLINE vi vi_sll30(vi a) { return vshlq_n_s32(a, 30); }
V_INLINE vi v_bits(vf a) { return vreinterpretq_s32_f32(a); }
V_INLINE vf v_frombits(vi a) { return vreinterpretq_f32_s32(a); }
V_INLINE vm vi_eq(vi a, vi b) { return vceqq_s32(a, b); }
/* weights: 4 f16 / bf16 values widened to float (exact) */
V_INLINE vf v_load_f16(const uint16_t *p) { return vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(p))); }
V_INLINE vf v_load_f16_part(const uint16_t *p, int64_t n) {
    uint16_t t[4] = {0, 0, 0, 0};
    for (int64_t i = 0; i < n && i < 4; i++) t[i] = p[i];
    return v_load_f16(t);
}
V_INLINE vf v_load_bf16(const uint16_t *p) { return vreinterpretq_f32_u32(vshll_n_u16(vld1_u16(p), 16)); }
V_INLINE vf v_load_bf16_part(const uint16_t *p, int64_t n) {
    uint16_t t[4] = {0, 0, 0, 0};
    for (int64_t i = 0; i < n && i < 4; i++) t[i] = p[i];
    return v_load_bf16(t);
}
V_INLINE float v_hsum(vf a) {
    const float32x2_t h = vadd_f32(vget_low_f32(a), vget_high_f32(a)); /* i + i+2 */
    return vget_lane_f32(h, 0) + vget_lane_f32(h, 1);
}
/* In-place transpose of a 4 x 4 block held in 4 vectors. */
V_INLINE void v_transpose(vf *r) {
    const vf t0 = vtrn1q_f32(r[0], r[1]), t1 = vtrn2q_f32(r[0], r[1]), t2 = vtrn1q_f32(r[2], r[3]),
             t3 = vtrn2q_f32(r[2], r[3]);
    r[0] = vreinterpretq_f32_f64(vzip1q_f64(vreinterpretq_f64_f32(t0), vreinterpretq_f64_f32(t2)));
    r[1] = vreinterpretq_f32_f64(vzip1q_f64(vreinterpretq_f64_f32(t1), vreinterpretq_f64_f32(t3)));
    r[2] = vreinterpretq_f32_f64(vzip2q_f64(vreinterpretq_f64_f32(t0), vreinterpretq_f64_f32(t2)));
    r[3] = vreinterpretq_f32_f64(vzip2q_f64(vreinterpretq_f64_f32(t1), vreinterpretq_f64_f32(t3)));
}
/* Lane j = v_hsum(a[j]) bit for bit, for 4 vectors at once. */
V_INLINE vf v_hsum4(const vf *a) {
    const vf b0 = vaddq_f32(vcombine_f32(vget_low_f32(a[0]), vget_low_f32(a[1])),
                            vcombine_f32(vget_high_f32(a[0]), vget_high_f32(a[1])));
    const vf b1 = vaddq_f32(vcombine_f32(vget_low_f32(a[2]), vget_low_f32(a[3])),
                            vcombine_f32(vget_high_f32(a[2]), vget_high_f32(a[3])));
    return vpaddq_f32(b0, b1);
}
V_INLINE float v_hmax(vf a) { return vmaxvq_f32(a); } /* exact in any order */
V_INLINE float v_hmin(vf a) { return vminvq_f32(a); }
V_INLINE vi vi_max(vi a, vi b) { return vmaxq_s32(a, b); }
V_INLINE vi vi_min(vi a, vi b) { return vminq_s32(a, b); }
/* the low byte / low half of each lane (values already in range), in lane order */
V_INLINE void vi_store_u8(uint8_t *p, vi a) {
    const uint16x4_t h = vmovn_u32(vreinterpretq_u32_s32(a));
    const uint8x8_t b = vmovn_u16(vcombine_u16(h, h));
    vst1_lane_u32((uint32_t *)(void *)p, vreinterpret_u32_u8(b), 0);
}
V_INLINE void vi_store_i16(int16_t *p, vi a) { vst1_s16(p, vqmovn_s32(a)); }
#else
#  error "define VX_SIMD_WIDTH as 8 (AVX2), 16 (AVX-512) or 4 (NEON) before including simd.h"
#endif

#endif
