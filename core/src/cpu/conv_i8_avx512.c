/* The int8 dot-product convolution (AVX512-VNNI vpdpbusd): y = conv(x, W) + bias with W packed once
 * as int8 codes per output channel (i8w.c) and each input row quantized to uint8 with its own range
 * as the call gathers it. 64 products per instruction against vdpbf16ps's 32, and this CPU family
 * issues more of them per cycle: ~3x the bf16 multiply rate on Zen 5.
 *
 * Packed layout: groups of 64 output channels; per group and tap, for each quad u of input channels
 * (4u .. 4u + 3), 64 x 4 bytes (channel r of the group: its 4 codes), so one 64-byte load is the
 * codes of 16 channels and one vpdpbusd adds 4 products to each of their 16 lanes.
 *
 * Order of operations per output (fixed, never dependent on n, the tiling or the thread count): per
 * tap in order, the exact int32 sum over the quads, then f = fma(scale_x, isum, f) and
 * f = fma(zero_x, wsum, f) (f kept in y between taps, which is exact); at the last tap
 * y = fma(f, scale_w, bias). vx_conv1d_i8w_model in i8w.c is the scalar statement of it. */
#include <immintrin.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../error.h"
#include "../kernels.h"
#define VX_SIMD_WIDTH 16
#include "cpu/simd.h"
#include "cpu/simd_math.h"

#define IW_NR 64  /* output channels per group: four 16-lane accumulators per x row */
#define IW_MR 6   /* x rows per register tile (24 accumulators) */
#define IW_TASK 96 /* x rows per pool task (a multiple of IW_MR); also the blocks of the output moments */

typedef int32_t vx_i32a __attribute__((may_alias, aligned(1)));

/* f = fma(scale_x, isum, f), f = fma(zero_x, wsum, f) for one x row (64 channels), f kept in the task's
 * scratch tile between taps; at the last tap v = fma(f, scale_w, bias) (or f * scale_w without bias),
 * then y = res + v when the call adds into a residual, else y = v. */
#define IW_EPI(i)                                                                                                      \
    do {                                                                                                               \
        if ((i) < mr) {                                                                                                \
            const __m512 sx = _mm512_set1_ps(xs[i]), zx = _mm512_set1_ps(xz[i]);                                       \
            float *fo = f + (i) * IW_NR;                                                                               \
            const __m512i a[4] = {a##i##0, a##i##1, a##i##2, a##i##3};                                                 \
            for (int v = 0; v < 4; v++) {                                                                              \
                __m512 fv = first ? _mm512_setzero_ps() : _mm512_load_ps(fo + v * 16);                                 \
                fv = _mm512_fmadd_ps(sx, _mm512_cvtepi32_ps(a[v]), fv);                                                \
                fv = _mm512_fmadd_ps(zx, zs[v], fv);                                                                   \
                if (last) {                                                                                            \
                    fv = bias ? _mm512_fmadd_ps(fv, sw[v], bv[v]) : _mm512_mul_ps(fv, sw[v]);                          \
                    if (res) fv = _mm512_add_ps(_mm512_loadu_ps(res + (i) * ldy + v * 16), fv);                        \
                    _mm512_storeu_ps(y + (i) * ldy + v * 16, fv);                                                      \
                } else {                                                                                               \
                    _mm512_store_ps(fo + v * 16, fv);                                                                  \
                }                                                                                                      \
            }                                                                                                          \
        }                                                                                                              \
    } while (0)

/* mr (1..6) x rows by 64 channels, one tap: the int32 sums over the tap's quads (rows past mr are
 * computed on the padding rows and dropped), then the f32 update of f (or, at the last tap, of y). A
 * function of its own, not inlined: GCC keeps the 24 accumulators in registers only then (inlined into
 * the loop nest, it stored every one of them to the stack on each step, which halved the rate). */
static __attribute__((noinline)) void iw_tile(int64_t mr, const uint8_t *x, int64_t ldx, const float *xs,
                                              const float *xz, const int8_t *P, int64_t quads, const float *wsum,
                                              const float *ws, const float *bias, float *f, const float *res,
                                              float *y, int64_t ldy, int first, int last) {
    const __m512i z = _mm512_setzero_si512();
#define IW_DECL(i) __m512i a##i##0 = z, a##i##1 = z, a##i##2 = z, a##i##3 = z
    IW_DECL(0);
    IW_DECL(1);
    IW_DECL(2);
    IW_DECL(3);
    IW_DECL(4);
    IW_DECL(5);
    for (int64_t u = 0; u < quads; u++) {
        const int8_t *pw = P + u * IW_NR * 4;
        const __m512i w0 = _mm512_load_si512((const void *)pw), w1 = _mm512_load_si512((const void *)(pw + 64)),
                      w2 = _mm512_load_si512((const void *)(pw + 128)), w3 = _mm512_load_si512((const void *)(pw + 192));
#define IW_ROW(i)                                                                                                      \
    do {                                                                                                               \
        const __m512i xb = _mm512_set1_epi32(*(const vx_i32a *)(x + (i) * ldx + u * 4));                               \
        a##i##0 = _mm512_dpbusd_epi32(a##i##0, xb, w0);                                                                \
        a##i##1 = _mm512_dpbusd_epi32(a##i##1, xb, w1);                                                                \
        a##i##2 = _mm512_dpbusd_epi32(a##i##2, xb, w2);                                                                \
        a##i##3 = _mm512_dpbusd_epi32(a##i##3, xb, w3);                                                                \
    } while (0)
        IW_ROW(0);
        IW_ROW(1);
        IW_ROW(2);
        IW_ROW(3);
        IW_ROW(4);
        IW_ROW(5);
    }
    __m512 zs[4], sw[4], bv[4];
    for (int v = 0; v < 4; v++) {
        zs[v] = _mm512_loadu_ps(wsum + v * 16);
        sw[v] = _mm512_loadu_ps(ws + v * 16);
        bv[v] = bias ? _mm512_loadu_ps(bias + v * 16) : _mm512_setzero_ps();
    }
    IW_EPI(0);
    IW_EPI(1);
    IW_EPI(2);
    IW_EPI(3);
    IW_EPI(4);
    IW_EPI(5);
}

typedef struct iw_job {
    const vx_i8w *w;
    const float *bias;
    const vx_i8_conv *a;
    uint8_t *xq;   /* [n_in][quads * 4]: the (padded) input rows' codes */
    float *xs, *xz; /* [n_in]: their scales and zero points */
    double *bmean, *bm2; /* [row blocks][rows]: each block's moments of y */
    int64_t n_in, n_out;
    int64_t gsplit; /* each block of IW_TASK rows is split over this many ranges of weight groups */
} iw_job;

/* sin(x)^2 for Snake (vx_i8_sin_sq_model in i8w.c is its scalar statement): x = q pi/2 + r with
 * |r| <= pi/4 (pi/2 in three float parts), then sin^2 x = sin^2 r for even q and 1 - sin^2 r for odd q,
 * sin^2 r = u (1 - u/3 + 2u^2/45 - u^3/315 + 2u^4/14175), u = r^2 (truncation < 2.5e-7; pi/2 in two
 * float parts, good to ~1e-7 for |x| <= 4096). One polynomial instead of sin's and cos's: the row is
 * rounded to 8 bits right after (steps of 1/255 of its range), so this is far below what the
 * quantization keeps. |x| > 4096 or NaN: libm sinf, squared. */
/* out of line and cold: the call would otherwise make the hot loop keep its constants on the stack */
static __attribute__((noinline, cold)) vf iw_sin_sq_libm(vf x, vf y) {
    float xs[16], ys[16];
    v_store(xs, x), v_store(ys, y);
    for (int i = 0; i < 16; i++)
        if (xs[i] != xs[i] || fabsf(xs[i]) > 4096.0f) {
            float sv = sinf(xs[i]);
            ys[i] = sv * sv;
        }
    return v_load(ys);
}

static inline vf iw_sin_sq(vf x) {
    vf q;
    vf r = v_reduce_half_pi(x, &q);
    vf u = v_mul(r, r);
    vf p = v_set1(2.0f / 14175.0f);
    p = v_fma(p, u, v_set1(-1.0f / 315.0f));
    p = v_fma(p, u, v_set1(2.0f / 45.0f));
    p = v_fma(p, u, v_set1(-1.0f / 3.0f));
    p = v_fma(p, u, v_set1(1.0f));
    vf s2 = v_mul(p, u);
    const __mmask16 odd = _mm512_test_epi32_mask(v_cvt_i(q), _mm512_set1_epi32(1));
    vf y = v_sel(odd, s2, v_sub(v_set1(1.0f), s2));
    /* |x| > 4096 (or NaN: the unordered compare is true): two-part pi/2 no longer exact enough */
    const __mmask16 big = _mm512_cmp_ps_mask(v_abs(x), v_set1(4096.0f), _CMP_NLE_UQ);
    if (__builtin_expect(big != 0, 0)) y = iw_sin_sq_libm(x, y);
    return y;
}

/* One input row through the map (y = x * mul + add, two roundings as the reference; then
 * y + sin(y alpha)^2 / alpha) into out, with its minimum and maximum. */
static inline void iw_map_row(const float *restrict x, const vx_i8_pre *pre, int64_t c, float *restrict out, float *lo_out,
                              float *hi_out) {
    const float *restrict mul = pre->mul, *restrict add = pre->add, *restrict al = pre->alpha, *restrict ia = pre->inv_alpha;
    __m512 lo = _mm512_set1_ps(INFINITY), hi = _mm512_set1_ps(-INFINITY);
    int64_t i = 0;
    if (al)
        for (; i + 16 <= c; i += 16) {
            vf v = v_add(v_mul(v_load(x + i), v_load(mul + i)), v_load(add + i));
            v = v_add(v, v_mul(v_load(ia + i), iw_sin_sq(v_mul(v, v_load(al + i)))));
            v_store(out + i, v);
            lo = _mm512_min_ps(lo, v), hi = _mm512_max_ps(hi, v);
        }
    for (; i < c; i += 16) { /* no Snake, or the last vector partial when c % 16 != 0 */
        const int64_t m = c - i < 16 ? c - i : 16;
        const __mmask16 k = (__mmask16)((1u << m) - 1u);
        vf v = v_add(v_mul(v_load_part(x + i, m), v_load_part(mul + i, m)), v_load_part(add + i, m));
        if (al) v = v_add(v, v_mul(v_load_part(ia + i, m), iw_sin_sq(v_mul(v, v_load_part(al + i, m)))));
        v_store_part(out + i, v, m);
        lo = _mm512_mask_min_ps(lo, k, lo, v), hi = _mm512_mask_max_ps(hi, k, hi, v);
    }
    *lo_out = _mm512_reduce_min_ps(lo), *hi_out = _mm512_reduce_max_ps(hi);
}

/* Input rows [begin, end) of the padded signal: the map (affine, then Snake) applied as each row is
 * gathered, then the row quantized with its own range. Padding rows stay zero (torch pads the mapped
 * signal): codes 0, scale 0, zero point 0. */
static void iw_quantize(void *ctx, int64_t begin, int64_t end) {
    const iw_job *j = ctx;
    const vx_i8_conv *a = j->a;
    const vx_i8_pre *pre = a->pre;
    const int64_t c = j->w->c_in, q4 = j->w->quads * 4;
    float row[VX_I8_MAX_CIN] __attribute__((aligned(64)));
    for (int64_t t = begin; t < end; t++) {
        uint8_t *q = j->xq + t * q4;
        const int64_t src = t - a->pad_l;
        if (src < 0 || src >= a->t_in) {
            memset(q, 0, (size_t)q4);
            j->xs[t] = 0.0f, j->xz[t] = 0.0f;
            continue;
        }
        const float *x = a->x + src * c;
        float l, h;
        if (pre) {
            iw_map_row(x, pre, c, row, &l, &h);
            x = row;
        } else {
            __m512 lo = _mm512_set1_ps(x[0]), hi = lo;
            int64_t i = 0;
            for (; i + 16 <= c; i += 16) {
                __m512 v = _mm512_loadu_ps(x + i);
                lo = _mm512_min_ps(lo, v), hi = _mm512_max_ps(hi, v);
            }
            l = _mm512_reduce_min_ps(lo), h = _mm512_reduce_max_ps(hi);
            for (; i < c; i++) l = x[i] < l ? x[i] : l, h = x[i] > h ? x[i] : h;
        }
        int64_t i;
        const float range = h - l, inv = range > 0.0f ? 255.0f / range : 0.0f;
        const __m512 vl = _mm512_set1_ps(l), vinv = _mm512_set1_ps(inv);
        for (i = 0; i + 16 <= c; i += 16) {
            __m512i v = _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_sub_ps(_mm512_loadu_ps(x + i), vl), vinv));
            v = _mm512_min_epi32(_mm512_max_epi32(v, _mm512_setzero_si512()), _mm512_set1_epi32(255));
            _mm_storeu_si128((__m128i *)(q + i), _mm512_cvtepi32_epi8(v));
        }
        for (; i < c; i++) {
            int32_t v = _mm_cvtss_si32(_mm_set_ss((x[i] - l) * inv));
            q[i] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
        }
        for (; i < q4; i++) q[i] = 0;
        j->xs[t] = range > 0.0f ? range / 255.0f : 0.0f;
        j->xz[t] = l;
    }
}

/* The moments of one block of y (rows [i0, i1), 64 channels), in double: the mean, then the sum of
 * squared deviations from it (two sweeps over rows still in cache). */
static void iw_block_moments(const float *y, int64_t ldy, int64_t nr, double *mean, double *m2) {
    __m512 s[4], q[4], e[4];
    for (int v = 0; v < 4; v++) s[v] = _mm512_setzero_ps(), q[v] = _mm512_setzero_ps(), e[v] = _mm512_setzero_ps();
    for (int64_t r = 0; r < nr; r++)
        for (int v = 0; v < 4; v++) s[v] = _mm512_add_ps(s[v], _mm512_loadu_ps(y + r * ldy + v * 16));
    const __m512 inv_n = _mm512_set1_ps(1.0f / (float)nr);
    for (int v = 0; v < 4; v++) s[v] = _mm512_mul_ps(s[v], inv_n);
    for (int64_t r = 0; r < nr; r++)
        for (int v = 0; v < 4; v++) {
            const __m512 d = _mm512_sub_ps(_mm512_loadu_ps(y + r * ldy + v * 16), s[v]);
            e[v] = _mm512_add_ps(e[v], d);
            q[v] = _mm512_fmadd_ps(d, d, q[v]);
        }
    /* in double: the f32 mean corrected by the deviations' sum e, and sum d^2 - e^2 / n about it */
    const __m512d inv_nd = _mm512_set1_pd(1.0 / (double)nr);
    for (int v = 0; v < 4; v++)
        for (int h = 0; h < 2; h++) {
            const __m512d sm = _mm512_cvtps_pd(h ? _mm512_extractf32x8_ps(s[v], 1) : _mm512_castps512_ps256(s[v]));
            const __m512d ed = _mm512_cvtps_pd(h ? _mm512_extractf32x8_ps(e[v], 1) : _mm512_castps512_ps256(e[v]));
            const __m512d qd = _mm512_cvtps_pd(h ? _mm512_extractf32x8_ps(q[v], 1) : _mm512_castps512_ps256(q[v]));
            _mm512_storeu_pd(mean + v * 16 + h * 8, _mm512_add_pd(sm, _mm512_mul_pd(ed, inv_nd)));
            _mm512_storeu_pd(m2 + v * 16 + h * 8, _mm512_sub_pd(qd, _mm512_mul_pd(_mm512_mul_pd(ed, ed), inv_nd)));
        }
}

static void iw_tasks(void *ctx, int64_t t0, int64_t t1) {
    const iw_job *j = ctx;
    const vx_i8w *w = j->w;
    const vx_i8_conv *a = j->a;
    const int64_t rows = w->rows, taps = w->taps, quads = w->quads, q4 = quads * 4, groups = rows / IW_NR;
    float f[IW_TASK * IW_NR] __attribute__((aligned(64))); /* the partial sums between taps */
    for (int64_t t = t0; t < t1; t++) {
        int64_t rt = t / j->gsplit, gs = t % j->gsplit;
        int64_t i0 = rt * IW_TASK, i1 = i0 + IW_TASK < j->n_out ? i0 + IW_TASK : j->n_out;
        int64_t g0 = groups * gs / j->gsplit, g1 = groups * (gs + 1) / j->gsplit;
        for (int64_t g = g0; g < g1; g++) {
            for (int64_t tap = 0; tap < taps; tap++) {
                const int first = tap == 0, last = tap == taps - 1;
                const int8_t *P = w->data + (g * taps + tap) * quads * IW_NR * 4;
                const float *zs = w->wsum + tap * rows + g * IW_NR, *ws = w->scale + g * IW_NR;
                const float *b = j->bias ? j->bias + g * IW_NR : NULL;
                for (int64_t i = i0; i < i1; i += IW_MR) {
                    const int64_t r = i + tap * a->dil;
                    const uint8_t *xi = j->xq + r * q4;
                    const float *xs = j->xs + r, *xz = j->xz + r;
                    float *yi = a->y + i * rows + g * IW_NR;
                    const float *ri = a->res ? a->res + i * rows + g * IW_NR : NULL;
                    iw_tile(i1 - i < IW_MR ? i1 - i : IW_MR, xi, q4, xs, xz, P, quads, zs, ws, b, f + (i - i0) * IW_NR,
                            ri, yi, rows, first, last);
                }
            }
            if (j->bmean)
                iw_block_moments(a->y + i0 * rows + g * IW_NR, rows, i1 - i0, j->bmean + rt * rows + g * IW_NR,
                                 j->bm2 + rt * rows + g * IW_NR);
        }
    }
}

size_t vx_conv1d_i8w_work_size_avx512(const vx_i8w *w, int64_t t_in, int64_t pad, int64_t dil, int moments) {
    const int64_t n_in = t_in + pad, n_out = n_in - dil * (w->taps - 1), q4 = w->quads * 4;
    if (n_out <= 0) return 64;
    size_t codes = (size_t)(((n_in + IW_MR) * q4 + 63) / 64 * 64);
    size_t scales = (size_t)(2 * (n_in + IW_MR)) * sizeof(float);
    size_t blocks = moments ? (size_t)(2 * ((n_out + IW_TASK - 1) / IW_TASK) * w->rows) * sizeof(double) : 0;
    return codes + (scales + 63) / 64 * 64 + blocks + 64;
}

vox_status vx_conv1d_i8w_ex_avx512(vx_pool *pool, const vx_i8w *w, const float *bias, const vx_i8_conv *a) {
    const int64_t n_in = a->t_in + a->pad_l + a->pad_r, n_out = n_in - a->dil * (w->taps - 1), q4 = w->quads * 4;
    if (n_out <= 0) return VOX_OK;
    if (w->c_in > VX_I8_MAX_CIN)
        return vox_set_error(VOX_ERR_UNSUPPORTED, "int8 convolution: %lld input channels (at most %d)",
                             (long long)w->c_in, VX_I8_MAX_CIN);
    const int moments = a->mean != NULL;
    const size_t need = vx_conv1d_i8w_work_size_avx512(w, a->t_in, a->pad_l + a->pad_r, a->dil, moments);
    char *owned = NULL, *work = a->work;
    if (!work || a->work_size < need) {
        if (!(owned = aligned_alloc(64, (need + 63) / 64 * 64))) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
        work = owned;
    }
    work = (char *)(((uintptr_t)work + 63) / 64 * 64);
    /* IW_MR - 1 zero rows after the input: a tile at the end reads them (and drops their sums) */
    uint8_t *xq = (uint8_t *)work;
    const size_t codes = (size_t)(((n_in + IW_MR) * q4 + 63) / 64 * 64);
    float *xs = (float *)(work + codes);
    const size_t scales = (size_t)(2 * (n_in + IW_MR)) * sizeof(float);
    double *bm = moments ? (double *)(work + codes + (scales + 63) / 64 * 64) : NULL;
    /* as the bf16 kernel: a short span's few rows are split over weight groups too (same bits) */
    const int64_t row_tasks = (n_out + IW_TASK - 1) / IW_TASK, groups = w->rows / IW_NR;
    const int64_t want = 4 * (int64_t)(pool ? vx_pool_size(pool) : 1);
    int64_t gsplit = row_tasks >= want ? 1 : (want + row_tasks - 1) / row_tasks;
    if (gsplit > groups) gsplit = groups;
    memset(xq + n_in * q4, 0, (size_t)(IW_MR * q4));
    memset(xs + n_in, 0, IW_MR * sizeof *xs);
    iw_job j = {.w = w, .bias = bias, .a = a, .xq = xq, .xs = xs, .xz = xs + n_in + IW_MR, .n_in = n_in,
                .n_out = n_out, .gsplit = gsplit, .bmean = bm, .bm2 = bm ? bm + row_tasks * w->rows : NULL};
    memset(j.xz + n_in, 0, IW_MR * sizeof *xs);
    uint32_t fp = vx_fp_fast();
    vx_pool_for_chunks(pool, n_in, 16, 16, iw_quantize, &j);
    vx_pool_for_chunks(pool, row_tasks * gsplit, 1, 16, iw_tasks, &j);
    vx_fp_restore(fp);
    if (moments) { /* the blocks' moments merged in block order (Chan et al.): the same bits for any split */
        const int64_t rows = w->rows;
        for (int64_t r = 0; r < rows; r += 8)
            _mm512_storeu_pd(a->mean + r, _mm512_setzero_pd()), _mm512_storeu_pd(a->m2 + r, _mm512_setzero_pd());
        double n = 0.0;
        for (int64_t b = 0; b < row_tasks; b++) {
            const double nb = (double)((b + 1) * IW_TASK < n_out ? IW_TASK : n_out - b * IW_TASK), nn = n + nb;
            const __m512d f1 = _mm512_set1_pd(nb / nn), f2 = _mm512_set1_pd(n * nb / nn);
            const double *pm = j.bmean + b * rows, *pq = j.bm2 + b * rows;
            for (int64_t r = 0; r < rows; r += 8) {
                __m512d mean = _mm512_loadu_pd(a->mean + r), m2 = _mm512_loadu_pd(a->m2 + r);
                const __m512d d = _mm512_sub_pd(_mm512_loadu_pd(pm + r), mean);
                mean = _mm512_add_pd(mean, _mm512_mul_pd(d, f1));
                m2 = _mm512_add_pd(m2, _mm512_add_pd(_mm512_loadu_pd(pq + r), _mm512_mul_pd(_mm512_mul_pd(d, d), f2)));
                _mm512_storeu_pd(a->mean + r, mean), _mm512_storeu_pd(a->m2 + r, m2);
            }
            n = nn;
        }
    }
    free(owned);
    return VOX_OK;
}

vox_status vx_conv1d_i8w_avx512(vx_pool *pool, const vx_i8w *w, const float *bias, const float *x, int64_t n_out,
                                int64_t dil, float *y) {
    const vx_i8_conv a = {.x = x, .t_in = n_out + dil * (w->taps - 1), .dil = dil, .y = y};
    return vx_conv1d_i8w_ex_avx512(pool, w, bias, &a);
}
