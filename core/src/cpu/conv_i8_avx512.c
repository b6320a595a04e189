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
#include <stdlib.h>
#include <string.h>

#include "../error.h"
#include "../kernels.h"

#define IW_NR 64  /* output channels per group: four 16-lane accumulators per x row */
#define IW_MR 6   /* x rows per register tile (24 accumulators) */
#define IW_TASK 96 /* x rows per pool task (a multiple of IW_MR) */

typedef int32_t vx_i32a __attribute__((may_alias, aligned(1)));

/* f = fma(scale_x, isum, f), f = fma(zero_x, wsum, f) for one x row (64 channels), f in y; at the last tap
 * y = fma(f, scale_w, bias) (or f * scale_w without bias). */
#define IW_EPI(i)                                                                                                      \
    do {                                                                                                               \
        if ((i) < mr) {                                                                                                \
            const __m512 sx = _mm512_set1_ps(xs[i]), zx = _mm512_set1_ps(xz[i]);                                       \
            float *yo = y + (i) * ldy;                                                                                 \
            const __m512i a[4] = {a##i##0, a##i##1, a##i##2, a##i##3};                                                 \
            for (int v = 0; v < 4; v++) {                                                                              \
                __m512 f = first ? _mm512_setzero_ps() : _mm512_loadu_ps(yo + v * 16);                                 \
                f = _mm512_fmadd_ps(sx, _mm512_cvtepi32_ps(a[v]), f);                                                  \
                f = _mm512_fmadd_ps(zx, zs[v], f);                                                                     \
                if (last) f = bias ? _mm512_fmadd_ps(f, sw[v], bv[v]) : _mm512_mul_ps(f, sw[v]);                       \
                _mm512_storeu_ps(yo + v * 16, f);                                                                      \
            }                                                                                                          \
        }                                                                                                              \
    } while (0)

/* mr (1..6) x rows by 64 channels, one tap: the int32 sums over the tap's quads (rows past mr are
 * computed on the padding rows and dropped), then the f32 update of y. A function of its own, not
 * inlined: GCC keeps the 24 accumulators in registers only then (inlined into the loop nest, it stored
 * every one of them to the stack on each step, which halved the rate). */
static __attribute__((noinline)) void iw_tile(int64_t mr, const uint8_t *x, int64_t ldx, const float *xs,
                                              const float *xz, const int8_t *P, int64_t quads, const float *wsum,
                                              const float *ws, const float *bias, float *y, int64_t ldy, int first,
                                              int last) {
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
    const float *bias, *x;
    float *y;
    uint8_t *xq;   /* [n_in][quads * 4]: the input rows' codes */
    float *xs, *xz; /* [n_in]: their scales and zero points */
    int64_t n_in, n_out, dil;
    int64_t gsplit; /* each block of IW_TASK rows is split over this many ranges of weight groups */
} iw_job;

static void iw_quantize(void *ctx, int64_t begin, int64_t end) {
    const iw_job *j = ctx;
    const int64_t c = j->w->c_in, q4 = j->w->quads * 4;
    for (int64_t t = begin; t < end; t++) {
        const float *x = j->x + t * c;
        uint8_t *q = j->xq + t * q4;
        __m512 lo = _mm512_set1_ps(x[0]), hi = lo;
        int64_t i = 0;
        for (; i + 16 <= c; i += 16) {
            __m512 v = _mm512_loadu_ps(x + i);
            lo = _mm512_min_ps(lo, v), hi = _mm512_max_ps(hi, v);
        }
        float l = _mm512_reduce_min_ps(lo), h = _mm512_reduce_max_ps(hi);
        for (; i < c; i++) l = x[i] < l ? x[i] : l, h = x[i] > h ? x[i] : h;
        const float range = h - l, inv = range > 0.0f ? 255.0f / range : 0.0f;
        const __m512 vl = _mm512_set1_ps(l), vi = _mm512_set1_ps(inv);
        for (i = 0; i + 16 <= c; i += 16) {
            __m512i v = _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_sub_ps(_mm512_loadu_ps(x + i), vl), vi));
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

static void iw_tasks(void *ctx, int64_t t0, int64_t t1) {
    const iw_job *j = ctx;
    const vx_i8w *w = j->w;
    const int64_t rows = w->rows, taps = w->taps, quads = w->quads, q4 = quads * 4, groups = rows / IW_NR;
    for (int64_t t = t0; t < t1; t++) {
        int64_t rt = t / j->gsplit, gs = t % j->gsplit;
        int64_t i0 = rt * IW_TASK, i1 = i0 + IW_TASK < j->n_out ? i0 + IW_TASK : j->n_out;
        int64_t g0 = groups * gs / j->gsplit, g1 = groups * (gs + 1) / j->gsplit;
        for (int64_t g = g0; g < g1; g++)
            for (int64_t tap = 0; tap < taps; tap++) {
                const int first = tap == 0, last = tap == taps - 1;
                const int8_t *P = w->data + (g * taps + tap) * quads * IW_NR * 4;
                const float *zs = w->wsum + tap * rows + g * IW_NR, *ws = w->scale + g * IW_NR;
                const float *b = j->bias ? j->bias + g * IW_NR : NULL;
                for (int64_t i = i0; i < i1; i += IW_MR) {
                    const int64_t r = i + tap * j->dil;
                    const uint8_t *xi = j->xq + r * q4;
                    const float *xs = j->xs + r, *xz = j->xz + r;
                    float *yi = j->y + i * rows + g * IW_NR;
                    iw_tile(i1 - i < IW_MR ? i1 - i : IW_MR, xi, q4, xs, xz, P, quads, zs, ws, b, yi, rows, first, last);
                }
            }
    }
}

vox_status vx_conv1d_i8w_avx512(vx_pool *pool, const vx_i8w *w, const float *bias, const float *x, int64_t n_out,
                                int64_t dil, float *y) {
    if (n_out <= 0) return VOX_OK;
    const int64_t n_in = n_out + dil * (w->taps - 1), q4 = w->quads * 4;
    /* IW_MR - 1 zero rows after the input: a tile at the end reads them (and drops their sums) */
    uint8_t *xq = aligned_alloc(64, (size_t)(((n_in + IW_MR) * q4 + 63) / 64 * 64));
    float *xs = malloc((size_t)(2 * (n_in + IW_MR)) * sizeof *xs);
    if (!xq || !xs) {
        free(xq), free(xs);
        return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    }
    /* as the bf16 kernel: a short span's few rows are split over weight groups too (same bits) */
    const int64_t row_tasks = (n_out + IW_TASK - 1) / IW_TASK, groups = w->rows / IW_NR;
    const int64_t want = 4 * (int64_t)(pool ? vx_pool_size(pool) : 1);
    int64_t gsplit = row_tasks >= want ? 1 : (want + row_tasks - 1) / row_tasks;
    if (gsplit > groups) gsplit = groups;
    memset(xq + n_in * q4, 0, (size_t)(IW_MR * q4));
    iw_job j = {.w = w, .bias = bias, .x = x, .y = y, .xq = xq, .xs = xs, .xz = xs + n_in + IW_MR, .n_in = n_in,
                .n_out = n_out, .dil = dil, .gsplit = gsplit};
    uint32_t fp = vx_fp_fast();
    vx_pool_for(pool, n_in, 16, iw_quantize, &j);
    vx_pool_for(pool, row_tasks * gsplit, 1, iw_tasks, &j);
    vx_fp_restore(fp);
    free(xq), free(xs);
    return VOX_OK;
}
