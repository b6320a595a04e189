/* Internal: the int8 dot-product convolution (kernels.h, vx_conv1d_i8w_ex) on the simd.h abstraction,
 * instantiated once per integer kernel: conv_i8_avx2.c (vpmaddwd), conv_i8_avx2_vnni.c (AVX-VNNI
 * vpdpbusd, 256-bit), conv_i8_avx512.c (AVX512-VNNI vpdpbusd, 512-bit) and on aarch64 conv_i8_neon.c
 * (smlal), conv_i8_neon_dotprod.c (sdot), conv_i8_neon_i8mm.c (usdot). The including file defines
 * VX_SIMD_WIDTH, includes cpu/simd.h and cpu/simd_math.h, and provides
 *   CI_WIDE        0: input codes stored as uint8 (vpdpbusd, usdot take them as they are); 1: as int16
 *                  (vpmaddwd, smlal); 2: as int8 code - 128 (sdot: signed x signed; the tile adds
 *                  128 * wsum back, exactly)
 *   CI_MR          x rows per register tile (the tile computes CI_MR rows; those past mr are padding
 *                  rows and dropped)
 *   ci_sums(...)   the tile's exact int32 sums (below) and CI_SUFFIX(name), the instance's names.
 *
 * y = conv(x, W) + bias with W packed once as int8 codes per output channel (i8w.c has the layout) and
 * each input row quantized to 8 bits with its own range as the call gathers it (and, in the fused
 * form, mapped: the AdaIN affine map, then Snake). Order of operations per output (fixed, never
 * dependent on n, the tiling, the thread count or the instance): per tap in order, the exact int32 sum
 * over the quads, then f = fma(scale_x, isum, f) and f = fma(zero_x, wsum, f) (f kept in a scratch
 * tile between taps, which is exact); at the last tap y = fma(f, scale_w, bias) (+ res).
 * vx_conv1d_i8w_model in i8w.c is the scalar statement of it, and every element-wise step here (the
 * map, the quantization, the epilogue, the output moments) is lane-independent, so every instance
 * gives the same bits. */
#ifndef VOX_CPU_CONV_I8_H
#define VOX_CPU_CONV_I8_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../error.h"
#include "cpu/dispatch.h"

#define CI_NR 64   /* output channels per weight group (the packed layout) */
#define CI_TASK 96 /* x rows per pool task; also the blocks of the output moments (every instance) */

#if CI_WIDE == 1
typedef int16_t ci_code;
#elif CI_WIDE == 2
typedef int8_t ci_code; /* code - 128 (signed dot products: the kernel adds 128 * wsum back) */
#else
typedef uint8_t ci_code;
#endif

/* The epilogue of one vector of VL channels of one x row: the tap's int32 sums a into f, and at the
 * last tap into y (see the top). f, y, res: that vector's VL floats. */
V_INLINE void ci_epi(vi a, vf sx, vf zx, vf zs, vf sw, vf bv, int has_bias, float *f, const float *res, float *y,
                     int first, int last) {
    vf fv = first ? v_zero() : v_load(f);
    fv = v_fma(sx, v_cvt_f(a), fv);
    fv = v_fma(zx, zs, fv);
    if (last) {
        fv = has_bias ? v_fma(fv, sw, bv) : v_mul(fv, sw);
        if (res) fv = v_add(v_load(res), fv);
        v_store(y, fv);
    } else {
        v_store(f, fv);
    }
}

/* The arguments of one tile: mr (1..CI_MR) x rows by the group's 64 channels, one tap. */
typedef struct ci_tile_args {
    int64_t mr;
    const ci_code *x;       /* the first row's codes */
    int64_t ldx;            /* codes per row */
    const float *xs, *xz;   /* the rows' scales and zero points */
    const int8_t *P;        /* the group's tap panel: quads x 64 x 4 codes */
    int64_t quads;
    const float *wsum, *ws, *bias; /* the group's 64 channels: tap code sums, scales, bias (or NULL) */
    float *f;               /* [CI_MR][64] partial sums between taps */
    const float *res;       /* NULL or the residual rows (ldy apart) */
    float *y;
    int64_t ldy;
    int first, last;
} ci_tile_args;

/* sin(x)^2 for Snake (vx_i8_map_model in i8w.c is its scalar statement): x = q pi/2 + r with
 * |r| <= pi/4 (pi/2 in two float parts, v_reduce_half_pi), then sin^2 x = sin^2 r for even q and
 * 1 - sin^2 r for odd q, sin^2 r = u (1 - u/3 + 2u^2/45 - u^3/315 + 2u^4/14175), u = r^2 (truncation
 * < 2.5e-7, good to ~1e-7 for |x| <= 4096). One polynomial instead of sin's and cos's: the row is
 * rounded to 8 bits right after (steps of 1/255 of its range), so this is far below what the
 * quantization keeps. |x| > 4096 or NaN: libm sinf, squared. */
/* out of line and cold: the call would otherwise make the hot loop keep its constants on the stack */
static __attribute__((noinline, cold)) vf ci_sin_sq_libm(vf x, vf y) {
    float xs[VL], ys[VL];
    v_store(xs, x), v_store(ys, y);
    for (int i = 0; i < VL; i++)
        if (xs[i] != xs[i] || fabsf(xs[i]) > 4096.0f) {
            float sv = sinf(xs[i]);
            ys[i] = sv * sv;
        }
    return v_load(ys);
}

V_INLINE vf ci_sin_sq(vf x) {
    vf q;
    vf r = v_reduce_half_pi(x, &q);
    vf u = v_mul(r, r);
    vf p = v_set1(2.0f / 14175.0f);
    p = v_fma(p, u, v_set1(-1.0f / 315.0f));
    p = v_fma(p, u, v_set1(2.0f / 45.0f));
    p = v_fma(p, u, v_set1(-1.0f / 3.0f));
    p = v_fma(p, u, v_set1(1.0f));
    vf s2 = v_mul(p, u);
    const vm odd = vi_eq(vi_and(v_cvt_i(q), vi_set1(1)), vi_set1(1));
    vf y = v_sel(odd, s2, v_sub(v_set1(1.0f), s2));
    const vm big = v_mor(v_gt(v_abs(x), v_set1(4096.0f)), v_isnan(x));
    if (__builtin_expect(v_any(big), 0)) y = ci_sin_sq_libm(x, y);
    return y;
}

/* One input row through the map (y = x * mul + add, two roundings as the reference; then
 * y + sin(y alpha)^2 / alpha) into out, with its minimum and maximum (exact in any order). */
static inline void ci_map_row(const float *restrict x, const vx_i8_pre *pre, int64_t c, float *restrict out, float *lo_out,
                              float *hi_out) {
    const float *restrict mul = pre->mul, *restrict add = pre->add, *restrict al = pre->alpha, *restrict ia = pre->inv_alpha;
    vf lo = v_set1(INFINITY), hi = v_set1(-INFINITY);
    int64_t i = 0;
    if (al)
        for (; i + VL <= c; i += VL) {
            vf v = v_add(v_mul(v_load(x + i), v_load(mul + i)), v_load(add + i));
            v = v_add(v, v_mul(v_load(ia + i), ci_sin_sq(v_mul(v, v_load(al + i)))));
            v_store(out + i, v);
            lo = v_min(lo, v), hi = v_max(hi, v);
        }
    else
        for (; i + VL <= c; i += VL) {
            vf v = v_add(v_mul(v_load(x + i), v_load(mul + i)), v_load(add + i));
            v_store(out + i, v);
            lo = v_min(lo, v), hi = v_max(hi, v);
        }
    float l = v_hmin(lo), h = v_hmax(hi);
    if (i < c) { /* the last, partial vector: the same lane operations */
        const int64_t m = c - i;
        vf v = v_add(v_mul(v_load_part(x + i, m), v_load_part(mul + i, m)), v_load_part(add + i, m));
        if (al) v = v_add(v, v_mul(v_load_part(ia + i, m), ci_sin_sq(v_mul(v, v_load_part(al + i, m)))));
        v_store_part(out + i, v, m);
        for (; i < c; i++) l = out[i] < l ? out[i] : l, h = out[i] > h ? out[i] : h;
    }
    *lo_out = l, *hi_out = h;
}

typedef struct ci_job {
    const vx_i8w *w;
    const float *bias;
    const vx_i8_conv *a;
    ci_code *xq;    /* [n_in + CI_MR][quads * 4]: the (padded) input rows' codes */
    float *xs, *xz; /* [n_in + CI_MR]: their scales and zero points */
    double *bmean, *bm2; /* [row blocks][rows]: each block's moments of y */
    int64_t n_in, n_out;
    int64_t gsplit; /* each block of CI_TASK rows is split over this many ranges of weight groups */
} ci_job;

/* Input rows [begin, end) of the padded signal: the map (affine, then Snake) applied as each row is
 * gathered, then the row quantized with its own range. Padding rows stay zero (torch pads the mapped
 * signal): codes 0, scale 0, zero point 0. */
static void ci_quantize(void *ctx, int64_t begin, int64_t end) {
    const ci_job *j = ctx;
    const vx_i8_conv *a = j->a;
    const vx_i8_pre *pre = a->pre;
    const int64_t c = j->w->c_in, q4 = j->w->quads * 4;
    float row[VX_I8_MAX_CIN] __attribute__((aligned(64)));
    for (int64_t t = begin; t < end; t++) {
        ci_code *q = j->xq + t * q4;
        const int64_t src = t - a->pad_l;
        if (src < 0 || src >= a->t_in) {
            memset(q, 0, (size_t)q4 * sizeof *q);
            j->xs[t] = 0.0f, j->xz[t] = 0.0f;
            continue;
        }
        const float *x = a->x + src * c;
        float l, h;
        if (pre) {
            ci_map_row(x, pre, c, row, &l, &h);
            x = row;
        } else {
            vf lo = v_set1(x[0]), hi = lo;
            int64_t i = 0;
            for (; i + VL <= c; i += VL) {
                vf v = v_load(x + i);
                lo = v_min(lo, v), hi = v_max(hi, v);
            }
            l = v_hmin(lo), h = v_hmax(hi);
            for (; i < c; i++) l = x[i] < l ? x[i] : l, h = x[i] > h ? x[i] : h;
        }
        int64_t i;
        const float range = h - l, inv = range > 0.0f ? 255.0f / range : 0.0f;
        const vf vl = v_set1(l), vinv = v_set1(inv);
        for (i = 0; i + VL <= c; i += VL) {
            vi v = v_cvt_i(v_mul(v_sub(v_load(x + i), vl), vinv));
            v = vi_min(vi_max(v, vi_set1(0)), vi_set1(255));
#if CI_WIDE == 1
            vi_store_i16(q + i, v);
#elif CI_WIDE == 2
            vi_store_u8((uint8_t *)(q + i), vi_sub(v, vi_set1(128)));
#else
            vi_store_u8(q + i, v);
#endif
        }
        for (; i < c; i++) {
            int32_t v = v_rne_i32((x[i] - l) * inv); /* round to nearest even, as the vectors */
            v = v < 0 ? 0 : v > 255 ? 255 : v;
            q[i] = (ci_code)(CI_WIDE == 2 ? v - 128 : v);
        }
        for (; i < q4; i++) q[i] = 0;
        j->xs[t] = range > 0.0f ? range / 255.0f : 0.0f;
        j->xz[t] = l;
    }
}

/* The moments of one block of y (nr rows, 64 channels), in double: the f32 mean, then the sums of the
 * deviations from it and of their squares (two sweeps over rows still in cache), folded into double:
 * mean = s + e / n, m2 = q - e^2 / n. Per channel, so lane by lane the same on every instance. */
static void ci_block_moments(const float *y, int64_t ldy, int64_t nr, double *mean, double *m2) {
    enum { NV = CI_NR / VL };
    vf s[NV], q[NV], e[NV];
    for (int v = 0; v < NV; v++) s[v] = v_zero(), q[v] = v_zero(), e[v] = v_zero();
    for (int64_t r = 0; r < nr; r++)
        for (int v = 0; v < NV; v++) s[v] = v_add(s[v], v_load(y + r * ldy + v * VL));
    const vf inv_n = v_set1(1.0f / (float)nr);
    for (int v = 0; v < NV; v++) s[v] = v_mul(s[v], inv_n);
    for (int64_t r = 0; r < nr; r++)
        for (int v = 0; v < NV; v++) {
            const vf d = v_sub(v_load(y + r * ldy + v * VL), s[v]);
            e[v] = v_add(e[v], d);
            q[v] = v_fma(d, d, q[v]);
        }
    float fs[CI_NR], fe[CI_NR], fq[CI_NR];
    for (int v = 0; v < NV; v++) v_store(fs + v * VL, s[v]), v_store(fe + v * VL, e[v]), v_store(fq + v * VL, q[v]);
    const double inv_nd = 1.0 / (double)nr;
    for (int r = 0; r < CI_NR; r++) {
        const double ed = (double)fe[r];
        mean[r] = (double)fs[r] + ed * inv_nd;
        m2[r] = (double)fq[r] - ed * ed * inv_nd;
    }
}

static void ci_sums(const ci_tile_args *t);

/* One tap of mr rows by 64 channels: ci_sums computes the int32 sums and runs the epilogue. */
static void ci_tasks(void *ctx, int64_t t0, int64_t t1) {
    const ci_job *j = ctx;
    const vx_i8w *w = j->w;
    const vx_i8_conv *a = j->a;
    const int64_t rows = w->rows, taps = w->taps, quads = w->quads, q4 = quads * 4, groups = rows / CI_NR;
    float f[CI_TASK * CI_NR] __attribute__((aligned(64))); /* the partial sums between taps */
    for (int64_t t = t0; t < t1; t++) {
        int64_t rt = t / j->gsplit, gs = t % j->gsplit;
        int64_t i0 = rt * CI_TASK, i1 = i0 + CI_TASK < j->n_out ? i0 + CI_TASK : j->n_out;
        int64_t g0 = groups * gs / j->gsplit, g1 = groups * (gs + 1) / j->gsplit;
        for (int64_t g = g0; g < g1; g++) {
            for (int64_t tap = 0; tap < taps; tap++) {
                ci_tile_args ta = {.ldx = q4, .P = w->data + (g * taps + tap) * quads * CI_NR * 4, .quads = quads,
                                   .wsum = w->wsum + tap * rows + g * CI_NR, .ws = w->scale + g * CI_NR,
                                   .bias = j->bias ? j->bias + g * CI_NR : NULL, .ldy = rows, .first = tap == 0,
                                   .last = tap == taps - 1};
                for (int64_t i = i0; i < i1; i += CI_MR) {
                    const int64_t r = i + tap * a->dil;
                    ta.mr = i1 - i < CI_MR ? i1 - i : CI_MR;
                    ta.x = j->xq + r * q4;
                    ta.xs = j->xs + r, ta.xz = j->xz + r;
                    ta.f = f + (i - i0) * CI_NR;
                    ta.y = a->y + i * rows + g * CI_NR;
                    ta.res = a->res ? a->res + i * rows + g * CI_NR : NULL;
                    ci_sums(&ta);
                }
            }
            if (j->bmean)
                ci_block_moments(a->y + i0 * rows + g * CI_NR, rows, i1 - i0, j->bmean + rt * rows + g * CI_NR,
                                 j->bm2 + rt * rows + g * CI_NR);
        }
    }
}

static size_t CI_SUFFIX(ci_work_size)(const vx_i8w *w, int64_t t_in, int64_t pad, int64_t dil, int moments) {
    const int64_t n_in = t_in + pad, n_out = n_in - dil * (w->taps - 1), q4 = w->quads * 4;
    if (n_out <= 0) return 64;
    size_t codes = (size_t)(((n_in + CI_MR) * q4 * (int64_t)sizeof(ci_code) + 63) / 64 * 64);
    size_t scales = (size_t)(2 * (n_in + CI_MR)) * sizeof(float);
    size_t blocks = moments ? (size_t)(2 * ((n_out + CI_TASK - 1) / CI_TASK) * w->rows) * sizeof(double) : 0;
    return codes + (scales + 63) / 64 * 64 + blocks + 64;
}

static vox_status CI_SUFFIX(ci_conv)(vx_pool *pool, const vx_i8w *w, const float *bias, const vx_i8_conv *a) {
    const int64_t n_in = a->t_in + a->pad_l + a->pad_r, n_out = n_in - a->dil * (w->taps - 1), q4 = w->quads * 4;
    if (n_out <= 0) return VOX_OK;
    const int moments = a->mean != NULL;
    const size_t need = CI_SUFFIX(ci_work_size)(w, a->t_in, a->pad_l + a->pad_r, a->dil, moments);
    char *owned = NULL, *work = a->work;
    if (!work || a->work_size < need) {
        if (!(owned = aligned_alloc(64, (need + 63) / 64 * 64))) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
        work = owned;
    }
    work = (char *)(((uintptr_t)work + 63) / 64 * 64);
    /* CI_MR - 1 zero rows after the input: a tile at the end reads them (and drops their sums) */
    ci_code *xq = (ci_code *)work;
    const size_t codes = (size_t)(((n_in + CI_MR) * q4 * (int64_t)sizeof(ci_code) + 63) / 64 * 64);
    float *xs = (float *)(work + codes);
    const size_t scales = (size_t)(2 * (n_in + CI_MR)) * sizeof(float);
    double *bm = moments ? (double *)(work + codes + (scales + 63) / 64 * 64) : NULL;
    /* a short span's few rows are split over weight groups too (the same bits: every output keeps its
     * one chain) */
    const int64_t row_tasks = (n_out + CI_TASK - 1) / CI_TASK, groups = w->rows / CI_NR;
    const int64_t want = 4 * (int64_t)(pool ? vx_pool_size(pool) : 1);
    int64_t gsplit = row_tasks >= want ? 1 : (want + row_tasks - 1) / row_tasks;
    if (gsplit > groups) gsplit = groups;
    memset(xq + n_in * q4, 0, (size_t)(CI_MR * q4) * sizeof *xq);
    memset(xs + n_in, 0, CI_MR * sizeof *xs);
    ci_job j = {.w = w, .bias = bias, .a = a, .xq = xq, .xs = xs, .xz = xs + n_in + CI_MR, .n_in = n_in,
                .n_out = n_out, .gsplit = gsplit, .bmean = bm, .bm2 = bm ? bm + row_tasks * w->rows : NULL};
    memset(j.xz + n_in, 0, CI_MR * sizeof *xs);
    uint32_t fp = vx_fp_fast();
    vx_pool_for_chunks(pool, n_in, 16, 16, ci_quantize, &j);
    vx_pool_for_chunks(pool, row_tasks * gsplit, 1, 16, ci_tasks, &j);
    vx_fp_restore(fp);
    if (moments) { /* the blocks' moments merged in block order (Chan et al.): the same bits for any split */
        const int64_t rows = w->rows;
        for (int64_t r = 0; r < rows; r++) a->mean[r] = 0.0, a->m2[r] = 0.0;
        double n = 0.0;
        for (int64_t b = 0; b < row_tasks; b++) {
            const double nb = (double)((b + 1) * CI_TASK < n_out ? CI_TASK : n_out - b * CI_TASK), nn = n + nb;
            const double f1 = nb / nn, f2 = n * nb / nn;
            const double *pm = j.bmean + b * rows, *pq = j.bm2 + b * rows;
            for (int64_t r = 0; r < rows; r++) {
                const double d = pm[r] - a->mean[r];
                a->mean[r] = a->mean[r] + d * f1;
                a->m2[r] = a->m2[r] + (pq[r] + d * d * f2);
            }
            n = nn;
        }
    }
    free(owned);
    return VOX_OK;
}

#endif
