/* Internal: vx_linear for q8/q4 weights on 256-bit registers, int8 activations; included by
 * linear_q_avx2.c (Q_VNNI 0: vpmaddubsw + vpmaddwd integer dot products) and linear_q_avx2_vnni.c
 * (Q_VNNI 1: AVX-VNNI vpdpbusd, one instruction for the same exact lane sums, so both give the same
 * bits).
 *
 * Same function as dispatch.h's definition (and as the AVX-512 kernels): per 32-bit lane an exact
 * integer partial sum, converted to float, times the lane's block scale sw * d, accumulated in block
 * order with FMA; then the fixed v_hsum tree and + bias.
 *
 * vpmaddubsw multiplies unsigned by signed bytes and saturates pairs to int16, so the q8 trick of the
 * VNNI kernel (w + 128) would overflow; instead the activation row stores |q| and the weight takes q's
 * sign (vpsignb): |q| * (w sign q) = w q, pairs <= 2 * 127 * 127 < 32768. q4 nibbles (<= 15) are small
 * enough to be the unsigned operand directly, with a per-lane -8 * sum(q) correction.
 *
 * Activation row layouts (32-byte aligned pieces; P = cols rounded up to 64):
 *   q8: uint8 |q|[P] | int8 q[P] (for the sign) | float d[nb] (padded to a multiple of 16)
 *   q4: per pair of blocks: low halves of both (elements 0..15) [32], high halves [32] |
 *       int32 corr[8] per pair | float dxe[8] per pair ([d0 x4, d1 x4], the lanes' block scales) */
#ifndef Q_VNNI
#  error "define Q_VNNI (0 or 1) and Q_INIT before including linear_q_avx2.h"
#endif
#define VX_SIMD_WIDTH 8
#include <immintrin.h>
#include <string.h>

#include "cpu/dispatch.h"
#include "cpu/simd.h"

#define Q_MR 2
#define Q_NR 2
#define GEMV_NR 4
/* GEMV look-ahead as in linear_q_avx512.c: the next tile's bytes, sequentially, a tile ahead. */
#ifndef VX_GEMV_HINT
#  define VX_GEMV_HINT _MM_HINT_T0
#endif

static size_t pad64(size_t b) { return (b + 63) & ~(size_t)63; }

/* One 32-block, bit-identical to vx_quantize_block_q8; q gets 32 bytes. */
static float quant_block(const float *x, int8_t *q) {
    const __m256i absmask = _mm256_set1_epi32(0x7fffffff);
    __m256 v[4];
    __m256i a = _mm256_setzero_si256();
    for (int h = 0; h < 4; h++) {
        v[h] = _mm256_loadu_ps(x + 8 * h);
        a = _mm256_max_epu32(a, _mm256_and_si256(_mm256_castps_si256(v[h]), absmask));
    }
    __m128i m = _mm_max_epu32(_mm256_castsi256_si128(a), _mm256_extracti128_si256(a, 1));
    m = _mm_max_epu32(m, _mm_shuffle_epi32(m, 0x4e));
    m = _mm_max_epu32(m, _mm_shuffle_epi32(m, 0xb1));
    union { uint32_t u; float f; } amax = {(uint32_t)_mm_cvtsi128_si32(m)};
    float d = amax.f / 127.0f;
    float r = d > 0.0f ? 1.0f / d : 0.0f;
    const __m256 vr = _mm256_set1_ps(r), half = _mm256_set1_ps(0.5f), one = _mm256_set1_ps(1.0f),
                 lim = _mm256_set1_ps(127.0f), sign = _mm256_set1_ps(-0.0f);
    __m256i qi[4];
    for (int h = 0; h < 4; h++) {
        __m256 t = _mm256_mul_ps(v[h], vr);
        t = _mm256_and_ps(t, _mm256_cmp_ps(t, t, _CMP_ORD_Q)); /* NaN -> 0 */
        __m256 at = _mm256_andnot_ps(sign, t);
        __m256 f = _mm256_round_ps(at, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
        f = _mm256_add_ps(f, _mm256_and_ps(one, _mm256_cmp_ps(_mm256_sub_ps(at, f), half, _CMP_GE_OQ)));
        f = _mm256_min_ps(f, lim);
        f = _mm256_or_ps(f, _mm256_and_ps(t, sign)); /* round half away from zero, sign restored */
        qi[h] = _mm256_cvttps_epi32(f);
    }
    /* int32 -> int8 in element order (packs interleave 128-bit lanes; undo with a permute) */
    __m256i p01 = _mm256_packs_epi32(qi[0], qi[1]), p23 = _mm256_packs_epi32(qi[2], qi[3]);
    __m256i b = _mm256_packs_epi16(p01, p23);
    b = _mm256_permutevar8x32_epi32(b, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    _mm256_storeu_si256((__m256i *)q, b);
    return d;
}

static size_t qact_row_bytes(int64_t cols, vox_dtype wtype) {
    size_t p = pad64((size_t)cols), nb = (size_t)cols / 32;
    if (wtype == VOX_DTYPE_Q8) return p + p + pad64(nb * 4);
    size_t pairs = (nb + 1) / 2;
    return pad64(pairs * 64) + pad64(pairs * 32) + pad64(pairs * 32);
}

static void qact_quantize(const float *x, int64_t cols, vox_dtype wtype, void *row) {
    int64_t nb = cols / 32;
    unsigned char *base = row;
    if (wtype == VOX_DTYPE_Q8) {
        size_t p = pad64((size_t)cols);
        uint8_t *aq = base;
        int8_t *q = (int8_t *)(base + p);
        float *d = (float *)(base + 2 * p);
        for (int64_t b = 0; b < nb; b++) {
            d[b] = quant_block(x + 32 * b, q + 32 * b);
            __m256i v = _mm256_loadu_si256((const __m256i *)(q + 32 * b));
            _mm256_storeu_si256((__m256i *)(aq + 32 * b), _mm256_abs_epi8(v));
        }
        return;
    }
    size_t pairs = ((size_t)nb + 1) / 2;
    int8_t *xs = (int8_t *)base;
    int32_t *corr = (int32_t *)(base + pad64(pairs * 64));
    float *dxe = (float *)(base + pad64(pairs * 64) + pad64(pairs * 32));
    memset(xs, 0, pairs * 64);
    memset(dxe, 0, pairs * 32);
    for (int64_t b = 0; b < nb; b++) {
        int8_t q[32];
        float d = quant_block(x + 32 * b, q);
        int8_t *pr = xs + (b / 2) * 64;
        memcpy(pr + 16 * (b % 2), q, 16);
        memcpy(pr + 32 + 16 * (b % 2), q + 16, 16);
        for (int l = 0; l < 4; l++) dxe[8 * (b / 2) + 4 * (b % 2) + l] = d;
    }
    const __m256i eights = _mm256_set1_epi8(8), ones = _mm256_set1_epi16(1);
    for (size_t k = 0; k < pairs; k++) {
        __m256i lo = _mm256_load_si256((const __m256i *)(xs + 64 * k));
        __m256i hi = _mm256_load_si256((const __m256i *)(xs + 64 * k + 32));
        __m256i s = _mm256_madd_epi16(_mm256_add_epi16(_mm256_maddubs_epi16(eights, lo), _mm256_maddubs_epi16(eights, hi)), ones);
        _mm256_store_si256((__m256i *)(corr + 8 * k), _mm256_sub_epi32(_mm256_setzero_si256(), s));
    }
}

typedef struct qargs {
    const unsigned char *w;
    const float *sw;
    int64_t cols, nb;
    size_t wrow, srow;
    const unsigned char *xa;
    size_t xrow;
    float *y;
    int64_t ldy;
    const float *bias;
    const unsigned char *pw, *ps; /* streaming: the next tile's weight bytes and scales */
} qargs;

V_INLINE void q8_tile(const int MR, const int NR, const int PF, const qargs *a) {
    const size_t p = pad64((size_t)a->cols);
    const __m256i ones = _mm256_set1_epi16(1);
    (void)ones;
    __m256 acc[Q_MR * GEMV_NR];
#pragma GCC unroll 8
    for (int t = 0; t < MR * NR; t++) acc[t] = _mm256_setzero_ps();
    for (int64_t b = 0; b < a->nb; b++) {
        __m256i ax[Q_MR], sx[Q_MR];
        __m256 dx[Q_MR];
#pragma GCC unroll 2
        for (int i = 0; i < MR; i++) {
            const unsigned char *xr = a->xa + i * a->xrow;
            ax[i] = _mm256_load_si256((const __m256i *)(xr + 32 * b));
            sx[i] = _mm256_load_si256((const __m256i *)(xr + p + 32 * b));
            dx[i] = _mm256_broadcast_ss((const float *)(xr + 2 * p) + b);
        }
#pragma GCC unroll 4
        for (int r = 0; r < NR; r++) {
            if (PF) { /* NR * 32 weight bytes and NR * 4 scale bytes per step */
                if (r * 64 < NR * 32) _mm_prefetch((const char *)(a->pw + b * NR * 32 + r * 64), VX_GEMV_HINT);
                if (r == 0 && (b * NR * 4) % 64 == 0) _mm_prefetch((const char *)(a->ps + b * NR * 4), VX_GEMV_HINT);
            }
            __m256i wv = _mm256_loadu_si256((const __m256i *)(a->w + r * a->wrow + 32 * b));
            __m256 sw = _mm256_broadcast_ss(a->sw + r * a->srow + b);
#pragma GCC unroll 2
            for (int i = 0; i < MR; i++) {
#if Q_VNNI
                __m256i p32 = _mm256_dpbusd_avx_epi32(_mm256_setzero_si256(), ax[i], _mm256_sign_epi8(wv, sx[i]));
#else
                __m256i p32 = _mm256_madd_epi16(_mm256_maddubs_epi16(ax[i], _mm256_sign_epi8(wv, sx[i])), ones);
#endif
                acc[i * NR + r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p32), _mm256_mul_ps(sw, dx[i]), acc[i * NR + r]);
            }
        }
    }
#pragma GCC unroll 2
    for (int i = 0; i < MR; i++)
#pragma GCC unroll 4
        for (int r = 0; r < NR; r++) {
            float s = v_hsum(acc[i * NR + r]);
            a->y[i * a->ldy + r] = a->bias ? s + a->bias[r] : s;
        }
}

V_INLINE void q4_tile(const int MR, const int NR, const int PF, const qargs *a) {
    const size_t pairs = ((size_t)a->nb + 1) / 2;
    const size_t corr_off = pad64(pairs * 64), dx_off = corr_off + pad64(pairs * 32);
    const __m256i low = _mm256_set1_epi8(0x0f), ones = _mm256_set1_epi16(1);
    (void)ones;
    const __m256i idx = _mm256_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1);
    __m256 acc[Q_MR * GEMV_NR];
#pragma GCC unroll 8
    for (int t = 0; t < MR * NR; t++) acc[t] = _mm256_setzero_ps();
    for (int64_t b = 0; b < a->nb; b += 2) {
        const int two = a->nb - b >= 2;
        const size_t k = (size_t)b / 2;
        __m256i xl[Q_MR], xh[Q_MR], xc[Q_MR];
        __m256 dx[Q_MR];
#pragma GCC unroll 2
        for (int i = 0; i < MR; i++) {
            const unsigned char *xr = a->xa + i * a->xrow;
            xl[i] = _mm256_load_si256((const __m256i *)(xr + 64 * k));
            xh[i] = _mm256_load_si256((const __m256i *)(xr + 64 * k + 32));
            xc[i] = _mm256_load_si256((const __m256i *)(xr + corr_off + 32 * k));
            dx[i] = _mm256_load_ps((const float *)(xr + dx_off) + 8 * k);
        }
#pragma GCC unroll 4
        for (int r = 0; r < NR; r++) {
            const unsigned char *wr = a->w + r * a->wrow + 16 * b;
            if (PF) { /* NR * 32 weight bytes and NR * 8 scale bytes per step (two blocks) */
                if (r * 64 < NR * 32) _mm_prefetch((const char *)(a->pw + (b / 2) * NR * 32 + r * 64), VX_GEMV_HINT);
                if (r == 0 && ((b / 2) * NR * 8) % 64 == 0) _mm_prefetch((const char *)(a->ps + (b / 2) * NR * 8), VX_GEMV_HINT);
            }
            const float *sr = a->sw + r * a->srow + b;
            __m256i wv;
            __m128 s2;
            if (two) {
                wv = _mm256_loadu_si256((const __m256i *)wr);
                s2 = _mm_castsi128_ps(_mm_loadl_epi64((const __m128i *)sr)); /* unaligned-safe 8-byte load */
            } else {
                wv = _mm256_zextsi128_si256(_mm_loadu_si128((const __m128i *)wr));
                s2 = _mm_load_ss(sr);
            }
            __m256i lo = _mm256_and_si256(wv, low), hi = _mm256_and_si256(_mm256_srli_epi16(wv, 4), low);
            __m256 sw = _mm256_permutevar8x32_ps(_mm256_castps128_ps256(s2), idx);
#pragma GCC unroll 2
            for (int i = 0; i < MR; i++) {
#if Q_VNNI
                __m256i p32 = _mm256_dpbusd_avx_epi32(_mm256_dpbusd_avx_epi32(xc[i], lo, xl[i]), hi, xh[i]);
#else
                __m256i p16 = _mm256_add_epi16(_mm256_maddubs_epi16(lo, xl[i]), _mm256_maddubs_epi16(hi, xh[i]));
                __m256i p32 = _mm256_add_epi32(_mm256_madd_epi16(p16, ones), xc[i]);
#endif
                acc[i * NR + r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p32), _mm256_mul_ps(sw, dx[i]), acc[i * NR + r]);
            }
        }
    }
#pragma GCC unroll 2
    for (int i = 0; i < MR; i++)
#pragma GCC unroll 4
        for (int r = 0; r < NR; r++) {
            float s = v_hsum(acc[i * NR + r]);
            a->y[i * a->ldy + r] = a->bias ? s + a->bias[r] : s;
        }
}

/* GEMM tiles (mr, nr <= 2) and streaming ones (mr <= 2, nr 4 / 2 / 1, prefetching a->pw). */
#define Q_SHAPES(FN)                                          \
    static void FN##_gemm(int mr, int nr, const qargs *a) {   \
        switch (mr * 16 + nr) {                               \
        case 1 * 16 + 2: FN(1, 2, 0, a); break;               \
        case 1 * 16 + 1: FN(1, 1, 0, a); break;               \
        case 2 * 16 + 2: FN(2, 2, 0, a); break;               \
        case 2 * 16 + 1: FN(2, 1, 0, a); break;               \
        default: break;                                       \
        }                                                     \
    }                                                         \
    static void FN##_stream(int mr, int nr, const qargs *a) { \
        switch (mr * 16 + nr) {                               \
        case 1 * 16 + 4: FN(1, 4, 1, a); break;               \
        case 1 * 16 + 2: FN(1, 2, 1, a); break;               \
        case 1 * 16 + 1: FN(1, 1, 1, a); break;               \
        case 2 * 16 + 4: FN(2, 4, 1, a); break;               \
        case 2 * 16 + 2: FN(2, 2, 1, a); break;               \
        case 2 * 16 + 1: FN(2, 1, 1, a); break;               \
        default: break;                                       \
        }                                                     \
    }
Q_SHAPES(q8_tile)
Q_SHAPES(q4_tile)

static void prefetch_bytes(const unsigned char *p, size_t n) {
    for (size_t o = 0; o < n; o += 64) _mm_prefetch((const char *)(p + o), VX_GEMV_HINT);
}

static void linear_quant(const vx_mat *w, const float *bias, const void *qact, size_t row_bytes, float *y, int64_t i0,
                         int64_t i1, int64_t r0, int64_t r1);

/* Streaming (1 or 2 x rows; more go through the GEMM tiles part by part): tiles of GEMV_NR weight rows
 * (then 2, 1), each prefetching the next tile (the next part's first, or the rows after the range). */
static void gemv_quant(const vx_kernels *k, const vx_gemv_part *parts, int n_parts, const void *qact, size_t row_bytes,
                       int64_t n_x) {
    (void)k;
    if (n_x > Q_MR) {
        for (int p = 0; p < n_parts; p++)
            linear_quant(parts[p].w, parts[p].bias, qact, row_bytes, parts[p].y, 0, n_x, parts[p].r0, parts[p].r1);
        return;
    }
    const int mr = (int)n_x;
    for (int p = 0; p < n_parts; p++) {
        const vx_mat *w = parts[p].w;
        const int q4 = w->dtype == VOX_DTYPE_Q4;
        const int64_t cols = w->cols, nb = cols / 32, r0 = parts[p].r0, r1 = parts[p].r1;
        const size_t wrow = q4 ? (size_t)cols / 2 : (size_t)cols;
        const unsigned char *wd = w->data;
        qargs a = {.cols = cols, .nb = nb, .wrow = wrow, .srow = (size_t)nb, .xa = qact, .xrow = row_bytes,
                   .ldy = w->rows};
        if (r0 >= r1) continue;
        if (p == 0) {
            const int64_t n = r1 - r0 < GEMV_NR ? r1 - r0 : GEMV_NR;
            prefetch_bytes(wd + (size_t)r0 * wrow, (size_t)n * wrow);
            prefetch_bytes((const unsigned char *)(w->scales + r0 * nb), (size_t)(n * nb) * sizeof(float));
        }
        for (int64_t r = r0; r < r1;) {
            const int nr = r1 - r >= GEMV_NR ? GEMV_NR : r1 - r >= 2 ? 2 : 1;
            a.w = wd + (size_t)r * wrow;
            a.sw = w->scales + r * nb;
            a.y = parts[p].y + r;
            a.bias = parts[p].bias ? parts[p].bias + r : NULL;
            if (r + nr < r1) {
                a.pw = a.w + (size_t)nr * wrow;
                a.ps = (const unsigned char *)(a.sw + nr * nb);
            } else if (p + 1 < n_parts) {
                const vx_gemv_part *q = &parts[p + 1];
                a.pw = (const unsigned char *)q->w->data + (size_t)q->r0 * wrow;
                a.ps = (const unsigned char *)(q->w->scales + q->r0 * nb);
            } else if (r1 < w->rows) {
                a.pw = wd + (size_t)r1 * wrow;
                a.ps = (const unsigned char *)(w->scales + r1 * nb);
            } else {
                a.pw = a.w;
                a.ps = (const unsigned char *)a.sw;
            }
            if (q4) q4_tile_stream(mr, nr, &a);
            else q8_tile_stream(mr, nr, &a);
            r += nr;
        }
    }
}

static void linear_quant(const vx_mat *w, const float *bias, const void *qact, size_t row_bytes, float *y, int64_t i0,
                         int64_t i1, int64_t r0, int64_t r1) {
    const int q4 = w->dtype == VOX_DTYPE_Q4;
    const int64_t cols = w->cols, nb = cols / 32, rows = w->rows;
    const size_t wrow = q4 ? (size_t)cols / 2 : (size_t)cols;
    qargs a = {.cols = cols, .nb = nb, .wrow = wrow, .srow = (size_t)nb, .xrow = row_bytes, .ldy = rows};
    if (i1 - i0 == 1) {
        vx_gemv_part part = {w, bias, y + i0 * rows, r0, r1};
        gemv_quant(NULL, &part, 1, (const unsigned char *)qact + (size_t)i0 * row_bytes, row_bytes, 1);
        return;
    }
    for (int64_t r = r0; r < r1; r += Q_NR) {
        int nr = (int)(r1 - r < Q_NR ? r1 - r : Q_NR);
        a.w = (const unsigned char *)w->data + (size_t)r * wrow;
        a.sw = w->scales + r * nb;
        a.bias = bias ? bias + r : NULL;
        for (int64_t i = i0; i < i1; i += Q_MR) {
            int mr = (int)(i1 - i < Q_MR ? i1 - i : Q_MR);
            a.xa = (const unsigned char *)qact + (size_t)i * row_bytes;
            a.y = y + i * rows + r;
            if (q4) q4_tile_gemm(mr, nr, &a);
            else q8_tile_gemm(mr, nr, &a);
        }
    }
}

void Q_INIT(vx_kernels *t) {
    t->qact_row_bytes = qact_row_bytes;
    t->qact_quantize = qact_quantize;
    t->linear_quant = linear_quant;
    t->gemv_quant = gemv_quant;
}
