/* vx_linear for q8/q4 weights on AVX-512 + VNNI: int8 activations, vpdpbusd integer dot products.
 *
 * The function is dispatch.h's definition: y[i][r] = bias[r] + sum_b float(isum_b) * (sw[r][b] * d[i][b]).
 * Here the integer sums are taken per 32-bit lane (4 or 8 products, exact), converted to float and
 * scaled by the lane's block scale sw * d, and lane j of a float accumulator adds those terms in block
 * order (FMA); then v_hsum's tree and + bias. The order depends only on cols, never on n or tiling.
 *
 * vpdpbusd multiplies UNSIGNED by signed bytes. q8: the weight byte w is flipped to w + 128 (xor 0x80)
 * and the activation row carries per-lane corrections -128 * sum(q) (precomputed once per row), so
 * sum (w + 128) q - 128 sum q = sum w q exactly. q4: the nibble n in [0, 15] is the unsigned operand and
 * the row carries -8 * sum(q), giving sum (n - 8) q.
 *
 * Activation row layouts (64-byte aligned pieces; P = cols rounded up to 64, G = groups of 4 blocks):
 *   q8: int8 q[P] | int32 corr[P / 4] (per lane of 4 bytes) | float dxe[P / 4] (lane's block scale d)
 *   q4: per group of 4 blocks: int8 low halves (elements 0..15 of each block) [64], high halves
 *       (elements 16..31) [64] | int32 corr[16 G] (per lane: its 4 low + 4 high values) | float dxe[16 G]
 * so that a 64-byte weight load lines up lane for lane with the activation vectors (a q4 weight byte
 * j of block b holds element j low and j + 16 high, exactly the two halves' byte 16 b + j). */
#define VX_SIMD_WIDTH 16
#include <immintrin.h>
#include <string.h>

#include "cpu/dispatch.h"
#include "cpu/simd.h"

#define Q8_MR 4
#define Q8_NR 3
#define Q4_MR 3
#define Q4_NR 3
/* Weight rows per streaming tile (GEMV and up to VX_STREAM_MAX_X x rows): 4 streams from DRAM 10-20%
 * faster than 8 (one or two x rows; the GEMV of 8 rows is ~10% faster only when L2-resident). */
#ifndef STREAM_NR
#  define STREAM_NR 4
#endif
_Static_assert(STREAM_NR == 4, "the streaming tile shapes (Q_SHAPES) are compiled for 4 rows");
/* GEMV look-ahead: while a tile of STREAM_NR weight rows is multiplied (the rows read side by side,
 * 64 bytes of each per step), the NEXT tile's bytes (and scales) are prefetched in address order,
 * STREAM_NR lines per step, so the memory sees one sequential stream a whole tile ahead; the first tile
 * of a call is prefetched in a burst, and the tile after a part's last one is the next part's first
 * (gemv_quant). Hardware prefetchers ramp up too late on rows this short read several at a time: the
 * row-interleaved prefetch order streamed ~21 GB/s from DRAM on one core, the sequential one ~45. */
#ifndef VX_GEMV_HINT
#  define VX_GEMV_HINT _MM_HINT_T0
#endif

/* ------------------------------------------------------------------------------ quantization */
/* One 32-block: the dispatch.h definition (bit-identical to vx_quantize_block_q8); q gets 32 bytes. */
float vx_quant_block_q8_avx512(const float *x, int8_t *q) {
    const __m512i absmask = _mm512_set1_epi32(0x7fffffff);
    __m512 v0 = _mm512_loadu_ps(x), v1 = _mm512_loadu_ps(x + 16);
    __m512i a = _mm512_max_epu32(_mm512_and_si512(_mm512_castps_si512(v0), absmask),
                                 _mm512_and_si512(_mm512_castps_si512(v1), absmask));
    union { uint32_t u; float f; } amax = {_mm512_reduce_max_epu32(a)};
    float d = amax.f / 127.0f;
    float r = d > 0.0f ? 1.0f / d : 0.0f;
    __m512 vr = _mm512_set1_ps(r), half = _mm512_set1_ps(0.5f), one = _mm512_set1_ps(1.0f);
    __m512 lim = _mm512_set1_ps(127.0f);
    for (int h = 0; h < 2; h++) {
        __m512 t = _mm512_mul_ps(h ? v1 : v0, vr);
        t = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(t, t, _CMP_ORD_Q), t); /* NaN -> 0 */
        __m512 at = _mm512_abs_ps(t), f = _mm512_roundscale_ps(at, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
        f = _mm512_mask_add_ps(f, _mm512_cmp_ps_mask(_mm512_sub_ps(at, f), half, _CMP_GE_OQ), f, one);
        f = _mm512_min_ps(f, lim); /* round half away from zero, magnitude clamped to 127 */
        __m512i qi = _mm512_cvttps_epi32(f);
        qi = _mm512_mask_sub_epi32(qi, _mm512_movepi32_mask(_mm512_castps_si512(t)), _mm512_setzero_si512(), qi);
        _mm_storeu_si128((__m128i *)(q + 16 * h), _mm512_cvtepi32_epi8(qi));
    }
    return d;
}

static size_t pad64(size_t b) { return (b + 63) & ~(size_t)63; }

static size_t qact_row_bytes(int64_t cols, vox_dtype wtype) {
    size_t p = pad64((size_t)cols);
    if (wtype == VOX_DTYPE_Q8) return p + p + p; /* q, corr, dxe */
    size_t g = ((size_t)cols / 32 + 3) / 4;
    return g * 128 + g * 64 + g * 64;
}

static void qact_quantize(const float *x, int64_t cols, vox_dtype wtype, void *row) {
    int64_t nb = cols / 32;
    unsigned char *base = row;
    const __m512i ones128 = _mm512_set1_epi8((char)0x80), eights = _mm512_set1_epi8(8);
    if (wtype == VOX_DTYPE_Q8) {
        size_t p = pad64((size_t)cols);
        int8_t *q = (int8_t *)base;
        int32_t *corr = (int32_t *)(base + p);
        float *dxe = (float *)(base + 2 * p);
        memset(q + cols, 0, p - (size_t)cols);
        for (int64_t b = 0; b < nb; b++) {
            float d = vx_quant_block_q8_avx512(x + 32 * b, q + 32 * b);
            for (int l = 0; l < 8; l++) dxe[8 * b + l] = d;
        }
        memset(dxe + 8 * nb, 0, (p - (size_t)cols));
        for (size_t o = 0; o < p; o += 64) {
            __m512i c = _mm512_dpbusd_epi32(_mm512_setzero_si512(), ones128, _mm512_load_si512(q + o));
            _mm512_store_si512(corr + o / 4, _mm512_sub_epi32(_mm512_setzero_si512(), c));
        }
        return;
    }
    size_t g = ((size_t)nb + 3) / 4;
    int8_t *xs = (int8_t *)base;
    int32_t *corr = (int32_t *)(base + g * 128);
    float *dxe = (float *)(base + g * 128 + g * 64);
    memset(xs, 0, g * 128);
    memset(dxe, 0, g * 64);
    for (int64_t b = 0; b < nb; b++) {
        int8_t q[32];
        float d = vx_quant_block_q8_avx512(x + 32 * b, q);
        int8_t *grp = xs + (b / 4) * 128;
        memcpy(grp + 16 * (b % 4), q, 16);
        memcpy(grp + 64 + 16 * (b % 4), q + 16, 16);
        for (int l = 0; l < 4; l++) dxe[16 * (b / 4) + 4 * (b % 4) + l] = d;
    }
    for (size_t k = 0; k < g; k++) {
        __m512i c = _mm512_dpbusd_epi32(_mm512_setzero_si512(), eights, _mm512_load_si512(xs + 128 * k));
        c = _mm512_dpbusd_epi32(c, eights, _mm512_load_si512(xs + 128 * k + 64));
        _mm512_store_si512(corr + 16 * k, _mm512_sub_epi32(_mm512_setzero_si512(), c));
    }
}

/* ------------------------------------------------------------------------------ q8 tiles */
typedef struct qargs {
    const unsigned char *w; /* weight values of the tile's first row */
    const float *sw;        /* its scales */
    int64_t cols, nb;
    size_t wrow, srow;      /* bytes / floats from one weight row to the next */
    const unsigned char *xa; /* activation row of the tile's first x row */
    size_t xrow;
    float *y;
    int64_t ldy;
    const float *bias;
    const unsigned char *pw; /* GEMV: the next tile's weight bytes and scales to prefetch (NULL: none) */
    const unsigned char *ps;
} qargs;

/* One step of a q8 tile: blocks b, b + 1 (TWO) or b alone (the odd last block). */
V_INLINE void q8_step(const int MR, const int NR, const int PF, const int TWO, const qargs *a, int64_t b, size_t p,
                      __m512 *acc) {
    const __m512i flip = _mm512_set1_epi8((char)0x80);
    const __m512i idx = _mm512_set_epi32(1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0);
    const __mmask64 wm = TWO ? ~(__mmask64)0 : (__mmask64)0xffffffffu;
    const __mmask16 sm = TWO ? 0x3 : 0x1;
    __m512i xq[4], xc[4];
    __m512 dx[4];
#pragma GCC unroll 4
    for (int i = 0; i < MR; i++) {
        const unsigned char *xr = a->xa + i * a->xrow;
        xq[i] = _mm512_load_si512(xr + 32 * b);
        xc[i] = _mm512_load_si512(xr + p + 32 * b);
        dx[i] = _mm512_load_ps((const float *)(xr + 2 * p) + 8 * b);
    }
#pragma GCC unroll 8
    for (int r = 0; r < NR; r++) {
        if (PF) { /* next tile, sequentially: NR lines of weights and NR * 8 bytes of scales per step */
            _mm_prefetch((const char *)(a->pw + (b / 2) * NR * 64 + r * 64), VX_GEMV_HINT);
            if (r == 0) _mm_prefetch((const char *)(a->ps + (b / 2) * NR * 8), VX_GEMV_HINT);
        }
        const unsigned char *wp = a->w + r * a->wrow + 32 * b;
        __m512i wv = _mm512_xor_si512(TWO ? _mm512_loadu_si512(wp) : _mm512_maskz_loadu_epi8(wm, wp), flip);
        __m512 sw = _mm512_permutexvar_ps(idx, _mm512_maskz_loadu_ps(sm, a->sw + r * a->srow + b));
#pragma GCC unroll 4
        for (int i = 0; i < MR; i++) {
            __m512i ii = _mm512_dpbusd_epi32(xc[i], wv, xq[i]);
            acc[i * NR + r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(ii), _mm512_mul_ps(sw, dx[i]), acc[i * NR + r]);
        }
    }
}

V_INLINE void q8_tile(const int MR, const int NR, const int PF, const qargs *a) {
    const size_t p = pad64((size_t)a->cols);
    __m512 acc[16];
#pragma GCC unroll 8
    for (int t = 0; t < MR * NR; t++) acc[t] = _mm512_setzero_ps();
    int64_t b = 0;
    for (; b + 2 <= a->nb; b += 2) q8_step(MR, NR, PF, 1, a, b, p, acc);
    if (b < a->nb) q8_step(MR, NR, PF, 0, a, b, p, acc);
#pragma GCC unroll 4
    for (int i = 0; i < MR; i++)
#pragma GCC unroll 8
        for (int r = 0; r < NR; r++) {
            float s = v_hsum(acc[i * NR + r]);
            a->y[i * a->ldy + r] = a->bias ? s + a->bias[r] : s;
        }
}

/* One step of a q4 tile: the group of 4 blocks from b (FULL), or the last, partial one. */
V_INLINE void q4_step(const int MR, const int NR, const int PF, const int FULL, const qargs *a, int64_t b, size_t g,
                      __m512 *acc) {
    const __m512i low = _mm512_set1_epi8(0x0f);
    const __m512i idx = _mm512_set_epi32(3, 3, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0);
    const int64_t nbg = FULL ? 4 : a->nb - b;
    const __mmask64 wm = nbg == 4 ? ~(__mmask64)0 : (((__mmask64)1 << (16 * nbg)) - 1);
    const __mmask16 sm = (__mmask16)((1u << nbg) - 1);
    const size_t gi = (size_t)b / 4;
    __m512i xl[4], xh[4], xc[4];
    __m512 dx[4];
#pragma GCC unroll 4
    for (int i = 0; i < MR; i++) {
        const unsigned char *xr = a->xa + i * a->xrow;
        xl[i] = _mm512_load_si512(xr + 128 * gi);
        xh[i] = _mm512_load_si512(xr + 128 * gi + 64);
        xc[i] = _mm512_load_si512(xr + 128 * g + 64 * gi);
        dx[i] = _mm512_load_ps((const float *)(xr + 192 * g) + 16 * gi);
    }
#pragma GCC unroll 8
    for (int r = 0; r < NR; r++) {
        if (PF) { /* next tile: NR lines of weights and NR * 16 bytes of scales per step */
            _mm_prefetch((const char *)(a->pw + (b / 4) * NR * 64 + r * 64), VX_GEMV_HINT);
            if (r * 64 < NR * 16) _mm_prefetch((const char *)(a->ps + (b / 4) * NR * 16 + r * 64), VX_GEMV_HINT);
        }
        __m512i wv = _mm512_maskz_loadu_epi8(wm, a->w + r * a->wrow + 16 * b);
        __m512i lo = _mm512_and_si512(wv, low), hi = _mm512_and_si512(_mm512_srli_epi16(wv, 4), low);
        __m512 sw = _mm512_permutexvar_ps(idx, _mm512_maskz_loadu_ps(sm, a->sw + r * a->srow + b));
#pragma GCC unroll 4
        for (int i = 0; i < MR; i++) {
            __m512i ii = _mm512_dpbusd_epi32(xc[i], lo, xl[i]);
            ii = _mm512_dpbusd_epi32(ii, hi, xh[i]);
            acc[i * NR + r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(ii), _mm512_mul_ps(sw, dx[i]), acc[i * NR + r]);
        }
    }
}

V_INLINE void q4_tile(const int MR, const int NR, const int PF, const qargs *a) {
    const size_t g = ((size_t)a->nb + 3) / 4;
    __m512 acc[16];
#pragma GCC unroll 8
    for (int t = 0; t < MR * NR; t++) acc[t] = _mm512_setzero_ps();
    int64_t b = 0;
    for (; b + 4 <= a->nb; b += 4) q4_step(MR, NR, PF, 1, a, b, g, acc);
    if (b < a->nb) q4_step(MR, NR, PF, 0, a, b, g, acc);
#pragma GCC unroll 4
    for (int i = 0; i < MR; i++)
#pragma GCC unroll 8
        for (int r = 0; r < NR; r++) {
            float s = v_hsum(acc[i * NR + r]);
            a->y[i * a->ldy + r] = a->bias ? s + a->bias[r] : s;
        }
}

/* Runtime tile shape -> compiled shape. GEMM tiles: mr <= 4, nr <= 3, no prefetch. Streaming tiles
 * (prefetching the next tile, a->pw): mr <= 4, nr 4 (STREAM_NR), tails nr 1. */
#define Q_SHAPES(FN)                                                         \
    static void FN##_gemm(int mr, int nr, const qargs *a) {                  \
        switch (mr * 16 + nr) {                                              \
        case 1 * 16 + 3: FN(1, 3, 0, a); break;                              \
        case 1 * 16 + 2: FN(1, 2, 0, a); break;                              \
        case 1 * 16 + 1: FN(1, 1, 0, a); break;                              \
        case 2 * 16 + 3: FN(2, 3, 0, a); break;                              \
        case 2 * 16 + 2: FN(2, 2, 0, a); break;                              \
        case 2 * 16 + 1: FN(2, 1, 0, a); break;                              \
        case 3 * 16 + 3: FN(3, 3, 0, a); break;                              \
        case 3 * 16 + 2: FN(3, 2, 0, a); break;                              \
        case 3 * 16 + 1: FN(3, 1, 0, a); break;                              \
        case 4 * 16 + 3: FN(4, 3, 0, a); break;                              \
        case 4 * 16 + 2: FN(4, 2, 0, a); break;                              \
        case 4 * 16 + 1: FN(4, 1, 0, a); break;                              \
        default: break;                                                      \
        }                                                                    \
    }                                                                        \
    static void FN##_stream(int mr, int nr, const qargs *a) {                \
        switch (mr * 16 + nr) {                                              \
        case 1 * 16 + 4: FN(1, 4, 1, a); break;                              \
        case 1 * 16 + 1: FN(1, 1, 1, a); break;                              \
        case 2 * 16 + 4: FN(2, 4, 1, a); break;                              \
        case 2 * 16 + 1: FN(2, 1, 1, a); break;                              \
        case 3 * 16 + 4: FN(3, 4, 1, a); break;                              \
        case 3 * 16 + 1: FN(3, 1, 1, a); break;                              \
        case 4 * 16 + 4: FN(4, 4, 1, a); break;                              \
        case 4 * 16 + 1: FN(4, 1, 1, a); break;                              \
        default: break;                                                      \
        }                                                                    \
    }
Q_SHAPES(q8_tile)
Q_SHAPES(q4_tile)

static void prefetch_bytes(const unsigned char *p, size_t n) {
    for (size_t o = 0; o < n; o += 64) _mm_prefetch((const char *)(p + o), VX_GEMV_HINT);
}

/* Streaming (GEMV and up to VX_STREAM_MAX_X x rows): tiles of all the x rows by STREAM_NR weight rows
 * (then single rows for the rest), each tile prefetching the next (see VX_GEMV_HINT). */
static void gemv_quant(const vx_kernels *k, const vx_gemv_part *parts, int n_parts, const void *qact, size_t row_bytes,
                       int64_t n_x) {
    (void)k;
    const int mr = (int)n_x, NR = STREAM_NR;
    for (int p = 0; p < n_parts; p++) {
        const vx_mat *w = parts[p].w;
        const int q4 = w->dtype == VOX_DTYPE_Q4;
        const int64_t cols = w->cols, nb = cols / 32, r0 = parts[p].r0, r1 = parts[p].r1;
        const size_t wrow = q4 ? (size_t)cols / 2 : (size_t)cols;
        const unsigned char *wd = w->data;
        qargs a = {.cols = cols, .nb = nb, .wrow = wrow, .srow = (size_t)nb, .xa = qact, .xrow = row_bytes,
                   .ldy = w->rows};
        if (r0 >= r1) continue;
        if (p == 0) { /* nothing is on its way yet: the first tile in a burst */
            const int64_t n = r1 - r0 < NR ? r1 - r0 : NR;
            prefetch_bytes(wd + (size_t)r0 * wrow, (size_t)n * wrow);
            prefetch_bytes((const unsigned char *)(w->scales + r0 * nb), (size_t)(n * nb) * sizeof(float));
        }
        for (int64_t r = r0; r < r1;) {
            const int nr = r1 - r >= NR ? NR : 1;
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
            } else if (r1 < w->rows) { /* the rows after the range: the pool's next chunk for this thread */
                a.pw = wd + (size_t)r1 * wrow;
                a.ps = (const unsigned char *)(w->scales + r1 * nb);
            } else {
                a.pw = a.ps = NULL;
            }
            if (!a.pw) { /* nothing to prefetch: point at this tile (already in cache) */
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
    const int MR = q4 ? Q4_MR : Q8_MR, NR = q4 ? Q4_NR : Q8_NR;
    qargs a = {.cols = cols, .nb = nb, .wrow = wrow, .srow = (size_t)nb, .xrow = row_bytes, .ldy = rows};
    if (i1 - i0 == 1) {
        vx_gemv_part part = {w, bias, y + i0 * rows, r0, r1};
        gemv_quant(NULL, &part, 1, (const unsigned char *)qact + (size_t)i0 * row_bytes, row_bytes, 1);
        return;
    }
    for (int64_t r = r0; r < r1; r += NR) {
        int nr = (int)(r1 - r < NR ? r1 - r : NR);
        a.w = (const unsigned char *)w->data + (size_t)r * wrow;
        a.sw = w->scales + r * nb;
        a.bias = bias ? bias + r : NULL;
        for (int64_t i = i0; i < i1; i += MR) {
            int mr = (int)(i1 - i < MR ? i1 - i : MR);
            a.xa = (const unsigned char *)qact + (size_t)i * row_bytes;
            a.y = y + i * rows + r;
            if (q4) q4_tile_gemm(mr, nr, &a);
            else q8_tile_gemm(mr, nr, &a);
        }
    }
}

void vx_linear_q_init_avx512(vx_kernels *t) {
    t->qact_row_bytes = qact_row_bytes;
    t->qact_quantize = qact_quantize;
    t->linear_quant = linear_quant;
    t->gemv_quant = gemv_quant;
}
