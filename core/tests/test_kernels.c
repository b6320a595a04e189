/* Kernels (kernels.h), thread pool (pool.h) and CPU detection.
 *
 * Every kernel is checked against a straightforward double-precision computation on odd shapes, on
 * every CPU path this machine supports (switched in-process with vx_kernels_force_path), with
 * tolerances derived from float32 rounding bounds. Determinism (kernels.h rule 1) is checked bit for
 * bit: 1, 2 and 3 threads give the same output, and a row computed alone gives the same bits as inside
 * a batch. The pool's busy rule, range coverage and FTZ/DAZ on workers are checked directly, and the
 * VOX_CPU switch by re-running this program with it set: every path this CPU has is chosen when asked
 * for, every path it lacks (and an unknown name, and the retired VOX_CPU_PATH) is refused with a clear
 * error, never replaced. Paths this CPU lacks are listed as such in the output. */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__)
#  include <immintrin.h>
#endif

#include "check.h"
#include "cpu/dispatch.h"
#include "cpu/scratch.h"
#include "error.h"
#include "kernels.h"
#include "nn/nn.h"
#include "pool.h"
#include "tmod.h"

#define U32 (1.0 / 16777216.0) /* unit roundoff of float32, 2^-24 */

/* ------------------------------------------------------------------------------ helpers */
static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint32_t rnd32(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 16);
}
static float urand(float lo, float hi) { return lo + (hi - lo) * (float)(rnd32() & 0xffffff) / 16777216.0f; }
/* float -> the nearest bf16 (ties to even), as a float: the kernels' conversions (the values tested
 * here are normal numbers) */
static float bf16_round(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    u = (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u;
    memcpy(&f, &u, 4);
    return f;
}

static float *fvec(int64_t n, float lo, float hi) {
    float *v = malloc(sizeof(float) * (size_t)(n > 0 ? n : 1));
    for (int64_t i = 0; i < n; i++) v[i] = urand(lo, hi);
    return v;
}
static int same_bits(const float *a, const float *b, int64_t n) { return memcmp(a, b, sizeof(float) * (size_t)n) == 0; }

static const char *path_name(int p) { return vx_path((vx_cpu_path)p)->name; }
static int cur_path;
static int verbose; /* VOX_TEST_VERBOSE=1: print measured errors */
static int quick;   /* VOX_TEST_QUICK=1: fewer sizes where a check has no per-path code (CPU emulation) */

static uint16_t f32_to_bf16(float f) {
    union { float f; uint32_t u; } v = {f};
    uint32_t r = v.u + 0x7fff + ((v.u >> 16) & 1);
    return (uint16_t)(r >> 16);
}
static uint16_t f32_to_f16(float f) {
    /* round to nearest even through the hardware-independent route: scale into the f16 grid */
    union { float f; uint32_t u; } v = {f};
    uint32_t sign = (v.u >> 16) & 0x8000u;
    float a = fabsf(f);
    if (a >= 65520.0f) return (uint16_t)(sign | 0x7c00u);
    if (a < 0x1p-14f) { /* subnormal */
        int m = (int)lrintf(a * 0x1p24f);
        return (uint16_t)(sign | (uint32_t)m);
    }
    int e;
    float m = frexpf(a, &e); /* a = m 2^e, m in [0.5, 1) */
    int mi = (int)lrintf(m * 2048.0f); /* 11 significant bits */
    if (mi == 2048) { mi = 1024; e++; }
    uint32_t exp = (uint32_t)(e - 1 + 15);
    if (exp >= 31) return (uint16_t)(sign | 0x7c00u);
    return (uint16_t)(sign | (exp << 10) | ((uint32_t)mi & 0x3ffu));
}

/* Weights of a random matrix in a dtype, plus the exact float values the kernels must see. */
typedef struct wmat {
    vx_mat m;
    void *data;
    float *scales;
    float *deq; /* [rows][cols]: the dequantized (or converted) values */
} wmat;

static void quant_q8(const float *x, int8_t *q, float *s) {
    /* docs/formats.md q8, the same function as the activation quantizer */
    *s = vx_quantize_block_q8(x, q);
}
static void quant_q4(const float *x, uint8_t *packed, float *s) {
    /* A valid q4 block (not the converter's scale search: any scale is a valid encoding). */
    float amax = 0;
    for (int j = 0; j < 32; j++) amax = fmaxf(amax, fabsf(x[j]));
    float sc = amax / 7.5f, r = sc > 0 ? 1.0f / sc : 0;
    uint8_t u[32];
    for (int j = 0; j < 32; j++) {
        int q = (int)roundf(x[j] * r) + 8;
        u[j] = (uint8_t)(q < 0 ? 0 : q > 15 ? 15 : q);
    }
    for (int j = 0; j < 16; j++) packed[j] = (uint8_t)(u[j] | (u[j + 16] << 4));
    *s = sc;
}

static wmat make_w(vox_dtype dt, int64_t rows, int64_t cols) {
    wmat w = {0};
    int64_t n = rows * cols;
    const size_t nz = n > 0 ? (size_t)n : 1; /* allocation sizes (at least one element) */
    float *src = fvec(n, -1.0f, 1.0f);
    w.deq = malloc(sizeof(float) * nz);
    w.m.dtype = dt;
    w.m.rows = rows;
    w.m.cols = cols;
    switch (dt) {
    case VOX_DTYPE_F32:
        w.data = src;
        memcpy(w.deq, src, sizeof(float) * (size_t)n);
        src = NULL;
        break;
    case VOX_DTYPE_F16:
    case VOX_DTYPE_BF16: {
        uint16_t *h = malloc(2 * nz);
        for (int64_t i = 0; i < n; i++) {
            h[i] = dt == VOX_DTYPE_F16 ? f32_to_f16(src[i]) : f32_to_bf16(src[i]);
            w.deq[i] = dt == VOX_DTYPE_F16 ? vx_f16_to_f32(h[i]) : vx_bf16_to_f32(h[i]);
        }
        w.data = h;
        break;
    }
    case VOX_DTYPE_Q8: {
        int8_t *q = malloc(nz);
        w.scales = malloc(sizeof(float) * (size_t)(n / 32 + 1));
        for (int64_t b = 0; b < n / 32; b++) {
            quant_q8(src + 32 * b, q + 32 * b, &w.scales[b]);
            for (int j = 0; j < 32; j++) w.deq[32 * b + j] = (float)q[32 * b + j] * w.scales[b];
        }
        w.data = q;
        break;
    }
    case VOX_DTYPE_Q4: {
        uint8_t *p = malloc((size_t)(n / 2 + 1));
        w.scales = malloc(sizeof(float) * (size_t)(n / 32 + 1));
        for (int64_t b = 0; b < n / 32; b++) {
            quant_q4(src + 32 * b, p + 16 * b, &w.scales[b]);
            for (int j = 0; j < 16; j++) {
                w.deq[32 * b + j] = (float)((p[16 * b + j] & 0xf) - 8) * w.scales[b];
                w.deq[32 * b + j + 16] = (float)((p[16 * b + j] >> 4) - 8) * w.scales[b];
            }
        }
        w.data = p;
        break;
    }
    default: break;
    }
    free(src);
    w.m.data = w.data;
    w.m.scales = w.scales;
    return w;
}
static void free_w(wmat *w) {
    free(w->data);
    free(w->scales);
    free(w->deq);
}

static const char *dt_name(vox_dtype d) {
    switch (d) {
    case VOX_DTYPE_F32: return "f32";
    case VOX_DTYPE_F16: return "f16";
    case VOX_DTYPE_BF16: return "bf16";
    case VOX_DTYPE_Q8: return "q8";
    case VOX_DTYPE_Q4: return "q4";
    default: return "?";
    }
}

static vx_pool *pools[4]; /* 1, 2, 3 threads at index 1..3 */

/* ------------------------------------------------------------------------------ linear */
/* y vs double: float weights: sum x*w (exact products of float values, in double) with the
 * recursive-summation bound gamma_(K+2) * sum |x w|. Quantized: the integer-dot definition, with
 * the bound over the block terms. */
static void check_linear_one(vox_dtype dt, int64_t rows, int64_t cols, int64_t n, int with_bias) {
    wmat w = make_w(dt, rows, cols);
    float *x = fvec(n * cols, -2.0f, 2.0f);
    float *bias = with_bias ? fvec(rows, -1.0f, 1.0f) : NULL;
    float *y[4];
    for (int t = 1; t <= 3; t++) y[t] = malloc(sizeof(float) * (size_t)(n * rows));
    for (int t = 1; t <= 3; t++) vx_linear(pools[t], &w.m, bias, x, n, y[t]);
    CHECK(same_bits(y[1], y[2], n * rows) && same_bits(y[1], y[3], n * rows),
          "%s linear %s %lldx%lld n=%lld: thread count changes bits", path_name(cur_path), dt_name(dt),
          (long long)rows, (long long)cols, (long long)n);

    int quant = dt == VOX_DTYPE_Q8 || dt == VOX_DTYPE_Q4;
    int64_t nb = cols / 32;
    int8_t *qx = quant ? malloc((size_t)cols) : NULL;
    float *dx = quant ? malloc(sizeof(float) * (size_t)(nb + 1)) : NULL;
    /* the weights' integer codes, once (w.deq / scale recovers each exactly); recovering them for every
     * x row made the reference most of this test's time under CPU emulation */
    int64_t *wq = quant ? malloc(sizeof(int64_t) * (size_t)(rows * cols)) : NULL;
    for (int64_t r = 0; quant && r < rows; r++)
        for (int64_t k = 0; k < cols; k++) {
            const float sc = w.scales[r * nb + k / 32];
            wq[r * cols + k] = sc != 0 ? (int64_t)llround(w.deq[r * cols + k] / sc) : 0;
        }
    double worst = 0;
    for (int64_t i = 0; i < n; i++) {
        const float *xi = x + i * cols;
        if (quant)
            for (int64_t b = 0; b < nb; b++) dx[b] = vx_quantize_block_q8(xi + 32 * b, qx + 32 * b);
        for (int64_t r = 0; r < rows; r++) {
            double ref = 0, mag = 0;
            if (!quant) {
                for (int64_t k = 0; k < cols; k++) {
                    double p = (double)xi[k] * w.deq[r * cols + k];
                    ref += p;
                    mag += fabs(p);
                }
            } else {
                for (int64_t b = 0; b < nb; b++) {
                    int64_t isum = 0, iabs = 0;
                    const int64_t *wb = wq + r * cols + 32 * b;
                    for (int j = 0; j < 32; j++) {
                        isum += wb[j] * qx[32 * b + j];
                        iabs += llabs(wb[j] * qx[32 * b + j]);
                    }
                    double d = (double)((float)(w.scales[r * nb + b] * dx[b]));
                    ref += (double)isum * d;
                    mag += (double)iabs * fabs(d);
                }
            }
            if (bias) {
                ref += bias[r];
                mag += fabs(bias[r]);
            }
            double terms = quant ? (double)cols / 4 + 2 : (double)cols + 2;
            double tol = terms * U32 * mag * 1.01 + 1e-30;
            double err = fabs((double)y[1][i * rows + r] - ref);
            if (err / tol > worst) worst = err / tol;
            if (!(err <= tol)) {
                CHECK(err <= tol, "%s linear %s %lldx%lld n=%lld y[%lld][%lld]=%.9g ref=%.9g err=%.3g tol=%.3g",
                      path_name(cur_path), dt_name(dt), (long long)rows, (long long)cols, (long long)n,
                      (long long)i, (long long)r, y[1][i * rows + r], ref, err, tol);
                i = n;
                break;
            }
        }
    }
    if (verbose && n == 1) printf("  %-10s linear %-4s %4lldx%-4lld err/bound %.3f\n", path_name(cur_path), dt_name(dt), (long long)rows, (long long)cols, worst);
    /* Each row alone gives the same bits as inside the batch. */
    if (n > 1) {
        float *y1 = malloc(sizeof(float) * (size_t)rows);
        int64_t probe[3] = {0, n / 2, n - 1};
        for (int p = 0; p < 3; p++) {
            vx_linear(pools[2], &w.m, bias, x + probe[p] * cols, 1, y1);
            CHECK(same_bits(y1, y[1] + probe[p] * rows, rows), "%s linear %s %lldx%lld: row %lld alone != in batch of %lld",
                  path_name(cur_path), dt_name(dt), (long long)rows, (long long)cols, (long long)probe[p], (long long)n);
        }
        /* and inside a sub-batch starting elsewhere */
        int64_t m = n - 1 < 5 ? n - 1 : 5;
        float *ys = malloc(sizeof(float) * (size_t)(m * rows));
        vx_linear(pools[3], &w.m, bias, x + cols, m, ys);
        CHECK(same_bits(ys, y[1] + rows, m * rows), "%s linear %s: sub-batch differs", path_name(cur_path), dt_name(dt));
        free(ys);
        free(y1);
    }
    free(qx);
    free(dx);
    free(wq);
    for (int t = 1; t <= 3; t++) free(y[t]);
    free(bias);
    free(x);
    free_w(&w);
}

/* vx_f32_to_f16 against the definition: the result decodes (vx_f16_to_f32) to a nearest float16, an
 * even one on a tie, for every bf16 value (all exponents, subnormals and the overflow edge), every
 * halfway point between two float16 and random float32; inf beyond, NaN kept. */
static void test_f32_to_f16(void) {
    int bad = 0;
    for (uint32_t i = 0; i < 65536 + 0x7bff + 200000 && bad < 5; i++) {
        uint32_t u;
        float f;
        if (i < 65536) u = i << 16;
        else if (i < 65536 + 0x7bff) {   /* halfway between two float16: the ties, exact in float32 */
            uint16_t m = (uint16_t)(i - 65536);
            f = (float)(((double)vx_f16_to_f32(m) + (double)vx_f16_to_f32((uint16_t)(m + 1))) / 2);
            memcpy(&u, &f, 4);
        } else
            u = rnd32() ^ (rnd32() << 16);
        memcpy(&f, &u, 4);
        uint16_t h = vx_f32_to_f16(f);
        if (f != f) {
            bad += (h & 0x7c00) != 0x7c00 || !(h & 0x3ff);
            continue;
        }
        double a = fabs((double)f);
        if (a >= 65520.0) {
            bad += (h & 0x7fff) != 0x7c00 || (h >> 15) != (u >> 31);
            continue;
        }
        uint16_t m = h & 0x7fff;
        double got = vx_f16_to_f32(m), err = fabs(a - got);
        double below = m ? fabs(a - vx_f16_to_f32((uint16_t)(m - 1))) : 1e300;
        double above = m < 0x7bff ? fabs(a - vx_f16_to_f32((uint16_t)(m + 1))) : 1e300;
        int sign_ok = (h >> 15) == (u >> 31);
        if (!sign_ok || err > below || err > above || ((err == below || err == above) && (m & 1))) {
            if (bad < 3) fprintf(stderr, "vx_f32_to_f16(%.9g) = 0x%04x\n", (double)f, h);
            bad++;
        }
    }
    CHECK(bad == 0, "vx_f32_to_f16: %d values not rounded to the nearest (even) float16", bad);
}

static void test_linear(void) {
    static const vox_dtype dts[] = {VOX_DTYPE_F32, VOX_DTYPE_F16, VOX_DTYPE_BF16, VOX_DTYPE_Q8, VOX_DTYPE_Q4};
    static const int64_t ns[] = {1, 2, 3, 7, 33, 64, 257};
    for (size_t d = 0; d < 5; d++) {
        int quant = dts[d] == VOX_DTYPE_Q8 || dts[d] == VOX_DTYPE_Q4;
        /* shapes: rows and cols not multiples of 8/16 (quantized: cols % 32 == 0 but not % 64/128) */
        int64_t shapes[][2] = {{37, quant ? 96 : 75}, {131, quant ? 160 : 133}, {5, quant ? 32 : 7}, {70, quant ? 608 : 611}};
        for (size_t s = 0; s < 4; s++)
            for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++) {
                /* 257 rows on two shapes (quick: none; rows 64 and 65 still split between threads) */
                if (ns[k] == 257 && (quick || (s != 3 && s != 1))) continue;
                check_linear_one(dts[d], shapes[s][0], shapes[s][1], ns[k], (int)((s + k) & 1));
            }
        /* a GEMV large enough for the pool to split rows between threads */
        check_linear_one(dts[d], 300, quant ? 1024 : 1000, 1, 1);
        check_linear_one(dts[d], 97, quant ? 1344 : 1339, 65, 0);
    }
}

/* vx_linear_multi: every matrix's result has the bits of vx_linear on it alone (streamed across matrix
 * boundaries, any thread count, a few x rows); mixed dtypes fall back to one call each. */
static void test_linear_multi(void) {
    static const vox_dtype dts[] = {VOX_DTYPE_F32, VOX_DTYPE_F16, VOX_DTYPE_BF16, VOX_DTYPE_Q8, VOX_DTYPE_Q4};
    for (size_t d = 0; d < 5; d++) {
        const int quant = dts[d] == VOX_DTYPE_Q8 || dts[d] == VOX_DTYPE_Q4;
        const int64_t cols = quant ? 416 : 419;
        const int64_t rows[4] = {300, 37, 129, 8};
        for (int nm = 1; nm <= 4; nm++)
            for (int64_t n = 1; n <= 5; n++) {
                wmat w[4];
                const vx_mat *wp[4];
                float *bias[4], *yref[4], *y[4];
                float *x = fvec(n * cols, -2.0f, 2.0f);
                for (int m = 0; m < nm; m++) {
                    /* the last matrix of a mixed set has another dtype (the fallback) */
                    vox_dtype dt = nm == 4 && m == 3 ? (quant ? VOX_DTYPE_BF16 : VOX_DTYPE_Q8) : dts[d];
                    w[m] = make_w(dt, rows[m], quant || dt != VOX_DTYPE_Q8 ? cols : 416);
                    wp[m] = &w[m].m;
                    bias[m] = m & 1 ? fvec(rows[m], -1.0f, 1.0f) : NULL;
                    yref[m] = malloc(sizeof(float) * (size_t)(n * rows[m]));
                    y[m] = malloc(sizeof(float) * (size_t)(n * rows[m]));
                }
                if (nm == 4 && w[3].m.cols != cols) { /* mixed cols: fallback too, x must be wide enough */
                    free(x);
                    x = fvec(n * 419, -2.0f, 2.0f);
                }
                for (int m = 0; m < nm; m++) vx_linear(pools[1], wp[m], bias[m], x, n, yref[m]);
                for (int t = 1; t <= 3; t++) {
                    vx_linear_multi(pools[t], nm, wp, (const float *const *)bias, x, n, y);
                    for (int m = 0; m < nm; m++)
                        CHECK(same_bits(y[m], yref[m], n * rows[m]), "%s linear_multi %s: %d matrices, n=%lld, %d threads: matrix %d differs",
                              path_name(cur_path), dt_name(dts[d]), nm, (long long)n, t, m);
                }
                for (int m = 0; m < nm; m++) {
                    free_w(&w[m]);
                    free(bias[m]);
                    free(yref[m]);
                    free(y[m]);
                }
                free(x);
            }
    }
}

/* The activation quantizer of every path produces the scalar definition's bytes: checked through
 * the result of a one-hot weight (y = d[b] * q[j] * s exactly representable). */
static void test_qact_exact(void) {
    int64_t cols = 256;
    float *x = fvec(cols, -3.0f, 3.0f);
    x[5] = 0.0f;
    for (int j = 64; j < 96; j++) x[j] = 0.0f; /* an all-zero block */
    x[100] = 1e-30f;                          /* tiny values */
    x[130] = 2.5f * (3.0f / 127.0f);          /* halfway cases */
    x[131] = -2.5f * (3.0f / 127.0f);
    int8_t q[256];
    float d[8];
    for (int b = 0; b < 8; b++) d[b] = vx_quantize_block_q8(x + 32 * b, q + 32 * b);
    /* q8 weight = identity rows picking one element: y[r] = float(q[r]) * (1 * d[b]) */
    int64_t rows = cols;
    int8_t *wq = calloc((size_t)(rows * cols), 1);
    float *ws = malloc(sizeof(float) * (size_t)(rows * cols / 32));
    for (int64_t i = 0; i < rows * cols / 32; i++) ws[i] = 1.0f;
    for (int64_t r = 0; r < rows; r++) wq[r * cols + r] = 1;
    vx_mat m = {VOX_DTYPE_Q8, rows, cols, wq, ws};
    float y[256];
    vx_linear(pools[1], &m, NULL, x, 1, y);
    int bad = 0;
    for (int64_t r = 0; r < rows; r++) bad += y[r] != (float)q[r] * d[r / 32];
    CHECK(bad == 0, "%s: activation quantization differs from the definition at %d elements", path_name(cur_path), bad);
    free(wq);
    free(ws);
    free(x);
}

/* ------------------------------------------------------------------------------ matmul_nn */
/* vx_matmul_nn (W [k][m] in f32, bf16, f16: the transposed convolutions) vs double sums of the exactly
 * widened weights; 1, 2, 3 threads and a row alone give the same bits. */
static void test_matmul_nn(void) {
    static const int64_t shapes[][3] = {{37, 75, 1}, {64, 129, 2}, {13, 33, 7}, {100, 77, 33}, {5, 300, 257}, {70, 17, 64},
                                        {576, 96, 13}};
    static const vox_dtype dts[3] = {VOX_DTYPE_F32, VOX_DTYPE_BF16, VOX_DTYPE_F16};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int di = 0; di < 3; di++) {
            int64_t k = shapes[s][0], m = shapes[s][1], n = shapes[s][2];
            wmat wm = make_w(dts[di], k, m); /* [k][m]: deq holds the exact values the kernel sees */
            const float *w = wm.deq;
            float *x = fvec(n * k, -2, 2);
            float *y[4];
            for (int t = 1; t <= 3; t++) {
                y[t] = malloc(sizeof(float) * (size_t)(n * m));
                if (dts[di] == VOX_DTYPE_F32 && t == 3) vx_matmul_nn_f32(pools[t], w, k, m, x, n, y[t]);
                else vx_matmul_nn(pools[t], &wm.m, x, n, y[t]);
            }
            CHECK(same_bits(y[1], y[2], n * m) && same_bits(y[1], y[3], n * m),
                  "%s matmul_nn %s %lldx%lld n=%lld: threads change bits", path_name(cur_path), vox_dtype_name(dts[di]),
                  (long long)k, (long long)m, (long long)n);
            int bad = 0;
            for (int64_t i = 0; i < n; i++)
                for (int64_t c = 0; c < m; c++) {
                    double ref = 0, mag = 0;
                    for (int64_t kk = 0; kk < k; kk++) {
                        double p = (double)x[i * k + kk] * w[kk * m + c];
                        ref += p;
                        mag += fabs(p);
                    }
                    double err = fabs(y[1][i * m + c] - ref), tol = (k + 1) * U32 * mag * 1.01 + 1e-30;
                    if (!(err <= tol) && bad++ == 0)
                        CHECK(0, "%s matmul_nn %s y[%lld][%lld]=%.9g ref=%.9g", path_name(cur_path), vox_dtype_name(dts[di]),
                              (long long)i, (long long)c, y[1][i * m + c], ref);
                }
            if (n > 1) {
                float *y1 = malloc(sizeof(float) * (size_t)m);
                vx_matmul_nn(pools[2], &wm.m, x + (n - 1) * k, 1, y1);
                CHECK(same_bits(y1, y[1] + (n - 1) * m, m), "%s matmul_nn %s: last row alone != in batch",
                      path_name(cur_path), vox_dtype_name(dts[di]));
                free(y1);
            }
            for (int t = 1; t <= 3; t++) free(y[t]);
            free_w(&wm);
            free(x);
        }
}

/* ------------------------------------------------------------------------------ attention */
static void ref_attention(const float *q, int64_t nq, int64_t hq, const float *k, const float *v, int64_t nk,
                          int64_t hkv, int64_t d, float scale, int64_t window, double *out) {
    double *s = malloc(sizeof(double) * (size_t)nk);
    for (int64_t i = 0; i < nq; i++)
        for (int64_t h = 0; h < hq; h++) {
            int64_t pos = nk - nq + i, kv = h / (hq / hkv);
            double m = -INFINITY, sum = 0;
            for (int64_t j = 0; j < nk; j++) {
                int vis = j <= pos && (window <= 0 || j > pos - window);
                if (!vis) { s[j] = -INFINITY; continue; }
                double a = 0;
                for (int64_t t = 0; t < d; t++) a += (double)q[(i * hq + h) * d + t] * k[(j * hkv + kv) * d + t];
                s[j] = a * scale;
                if (s[j] > m) m = s[j];
            }
            for (int64_t j = 0; j < nk; j++) sum += s[j] == -INFINITY ? 0 : exp(s[j] - m);
            for (int64_t t = 0; t < d; t++) {
                double a = 0;
                for (int64_t j = 0; j < nk; j++)
                    if (s[j] != -INFINITY) a += exp(s[j] - m) * v[(j * hkv + kv) * d + t];
                out[(i * hq + h) * d + t] = a / sum;
            }
        }
    free(s);
}

static void test_attention(void) {
    static const int64_t cfg[][7] = {
        /* nq, hq, nk, hkv, d, window */
        {1, 4, 1, 2, 16, 0}, {1, 16, 37, 8, 128, 0}, {7, 4, 7, 1, 33, 0}, {5, 6, 40, 3, 64, 8}, {33, 2, 70, 2, 17, 0},
        {3, 2, 300, 1, 128, 0}, {2, 2, 5000, 2, 8, 0},
    };
    for (size_t c = 0; c < sizeof cfg / sizeof cfg[0]; c++) {
        int64_t nq = cfg[c][0], hq = cfg[c][1], nk = cfg[c][2], hkv = cfg[c][3], d = cfg[c][4], win = cfg[c][5];
        float scale = 1.0f / sqrtf((float)d);
        float *q = fvec(nq * hq * d, -2, 2), *k = fvec(nk * hkv * d, -2, 2), *v = fvec(nk * hkv * d, -1, 1);
        float *o[4];
        for (int t = 1; t <= 3; t++) {
            o[t] = malloc(sizeof(float) * (size_t)(nq * hq * d));
            vx_attention(pools[t], q, nq, hq, k, v, nk, hkv, d, scale, win, o[t]);
        }
        CHECK(same_bits(o[1], o[2], nq * hq * d) && same_bits(o[1], o[3], nq * hq * d), "%s attention cfg %zu: threads change bits",
              path_name(cur_path), c);
        double *ref = malloc(sizeof(double) * (size_t)(nq * hq * d));
        ref_attention(q, nq, hq, k, v, nk, hkv, d, scale, win, ref);
        double worst = 0;
        for (int64_t i = 0; i < nq * hq * d; i++) worst = fmax(worst, fabs(o[1][i] - ref[i]));
        /* |v| <= 1; scores ~ up to 4 sqrt(d): the error is dominated by exp of a score off by
         * ~d ulps of its magnitude */
        double tol = 2e-7 * (2 + sqrt((double)d) / 2) + 2e-8 * log2((double)nk + 1);
        if (verbose) printf("  %-10s attention cfg %zu max err %.3g (tol %.3g)\n", path_name(cur_path), c, worst, tol);
        CHECK(worst <= tol, "%s attention cfg %zu: max err %.3g > %.3g", path_name(cur_path), c, worst, tol);
        if (nq > 1) { /* the last query alone (nq = 1 over the same keys) gives the same bits */
            float *o1 = malloc(sizeof(float) * (size_t)(hq * d));
            vx_attention(pools[2], q + (nq - 1) * hq * d, 1, hq, k, v, nk, hkv, d, scale, win, o1);
            CHECK(same_bits(o1, o[1] + (nq - 1) * hq * d, hq * d), "%s attention cfg %zu: query alone != in batch",
                  path_name(cur_path), c);
            free(o1);
        }
        free(ref);
        for (int t = 1; t <= 3; t++) free(o[t]);
        free(q);
        free(k);
        free(v);
    }
}

/* Double-precision full attention of a strided q|k|v matrix (rows ld floats apart, q at 0, k at inner, v at
 * 2 inner) into ref [B n][inner]. bf16: the keys and values rounded to bf16 and each score to float, as
 * vx_nn_attention_bf16 computes them; rx: the queries and the probabilities rounded too (a kernel that
 * rounds its inputs); q8 (with bf16 and rx): each score from the int8 codes of the query's and the key's
 * 32-blocks (vx_quantize_block_q8), sum over blocks of isum_b (dq_b dk_b rounded to float), as
 * vx_linear_q8w defines it. *pmax gets the largest probability. */
static double q8_score(const float *a, const float *b, int64_t d) {
    double s = 0;
    for (int64_t k0 = 0; k0 < d; k0 += 32) {
        int8_t qa[32], qb[32];
        const float da = vx_quantize_block_q8(a + k0, qa), db = vx_quantize_block_q8(b + k0, qb);
        int32_t isum = 0;
        for (int t = 0; t < 32; t++) isum += qa[t] * qb[t];
        s += (double)isum * (float)(db * da);
    }
    return s;
}

static void ref_full_attention(const float *qkv, int64_t ld, int64_t B, int64_t n, int64_t H, int64_t d, float scale,
                               int bf16, int rx, int q8, double *ref, double *pmax) {
    const int64_t inner = H * d;
    double *s = malloc(sizeof(double) * (size_t)n);
    *pmax = 0;
    for (int64_t b = 0; b < B; b++)
        for (int64_t h = 0; h < H; h++)
            for (int64_t i = 0; i < n; i++) {
                const float *qi = qkv + (b * n + i) * ld + h * d;
                double m = -INFINITY, sum = 0;
                for (int64_t j = 0; j < n; j++) {
                    const float *kj = qkv + (b * n + j) * ld + inner + h * d;
                    double a = 0;
                    if (q8) a = q8_score(qi, kj, d);
                    else
                        for (int64_t t = 0; t < d; t++)
                            a += (double)(rx ? bf16_round(qi[t]) : qi[t]) * (bf16 ? bf16_round(kj[t]) : kj[t]);
                    s[j] = bf16 ? (double)(float)((float)a * scale) : a * scale;
                    m = fmax(m, s[j]);
                }
                for (int64_t j = 0; j < n; j++) sum += (s[j] = exp(s[j] - m));
                for (int64_t j = 0; j < n; j++) *pmax = fmax(*pmax, s[j] / sum);
                /* f32: the probabilities into the product; bf16: the unnormalized exponentials (rounded to
                 * bf16 where the kernel rounds its inputs), the sum divided out after the product */
                if (!bf16)
                    for (int64_t j = 0; j < n; j++) s[j] /= sum;
                for (int64_t t = 0; t < d; t++) {
                    double a = 0;
                    for (int64_t j = 0; j < n; j++) {
                        const float v = qkv[(b * n + j) * ld + 2 * inner + h * d + t];
                        a += (rx ? bf16_round((float)s[j]) : s[j]) * (bf16 ? bf16_round(v) : v);
                    }
                    ref[(b * n + i) * inner + h * d + t] = bf16 ? a / sum : a;
                }
            }
    free(s);
}

/* vx_exp_rows against exp in double (relative error per value: the exponential's ~2e-7 plus the float
 * argument's rounding, |x| ulps; the sum: the values' bound plus n ulps of the sum's order); vx_exp_rows_bf16
 * gives the bf16 bits of exactly those values and the same sums; vx_linear_bf16w_rounded of those bits
 * gives the bits vx_linear_bf16w gives for the floats (where the path has the kernel). */
static void test_exp_rows(void) {
    static const int64_t shapes[][3] = {/* rows, n, lds */ {3, 1, 1}, {5, 37, 40}, {9, 1335, 1344}, {2, 64, 64},
                                        {37, 300, 304}, {64, 133, 144}};
    for (size_t c = 0; c < sizeof shapes / sizeof shapes[0]; c++) {
        const int64_t rows = shapes[c][0], n = shapes[c][1], lds = shapes[c][2], ldp = 2 * ((n + 1) / 2);
        const float scale = 0.125f;
        float *s = fvec(rows * lds, -60, 60), *p = malloc(sizeof(float) * (size_t)(rows * n)), sum[64], sumb[64];
        uint16_t *pb = calloc((size_t)(rows * ldp), sizeof *pb);
        vx_exp_rows(s, lds, rows, n, scale, p, sum);
        vx_exp_rows_bf16(s, lds, rows, n, scale, pb, ldp, sumb);
        double worst = 0;
        int bits_ok = 1;
        for (int64_t r = 0; r < rows; r++) {
            double m = -INFINITY, ref_sum = 0;
            for (int64_t i = 0; i < n; i++) m = fmax(m, s[r * lds + i]);
            for (int64_t i = 0; i < n; i++) {
                const double x = ((double)s[r * lds + i] - m) * scale, ref = exp(x);
                ref_sum += ref;
                const double tol = ref * (4e-7 + 6e-8 * fabs(x)) + 1e-37;
                worst = fmax(worst, fabs(p[r * n + i] - ref) / tol);
                uint32_t u;
                memcpy(&u, &p[r * n + i], 4);
                bits_ok &= pb[r * ldp + i] == (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
            }
            worst = fmax(worst, fabs(sum[r] - ref_sum) / (ref_sum * (4e-7 + 6e-8 * (double)n)));
            bits_ok &= memcmp(&sum[r], &sumb[r], sizeof(float)) == 0;
        }
        if (verbose) printf("  %-10s exp_rows %lldx%lld: worst err/bound %.3f\n", path_name(cur_path), (long long)rows, (long long)n, worst);
        CHECK(worst <= 1, "%s exp_rows %lldx%lld: err/bound %.3g", path_name(cur_path), (long long)rows, (long long)n, worst);
        CHECK(bits_ok, "%s exp_rows_bf16 %lldx%lld: not the bf16 bits and sums of exp_rows", path_name(cur_path),
              (long long)rows, (long long)n);
        if (vx_bf16w_takes_rounded()) { /* the product of the rounded rows: 64 values of v per key */
            float *v = fvec(64 * n, -2, 2), *y1 = malloc(sizeof(float) * (size_t)(rows * 64)), *y2 = malloc(sizeof(float) * (size_t)(rows * 64));
            vx_mat vm = {.dtype = VOX_DTYPE_F32, .rows = 64, .cols = n, .data = v};
            vx_bf16w w;
            CHECK(vx_bf16w_pack(&vm, &w) == VOX_OK, "bf16w pack");
            CHECK(vx_linear_bf16w(pools[2], &w, NULL, p, rows, y1) == VOX_OK &&
                      vx_linear_bf16w_rounded(pools[2], &w, pb, rows, y2) == VOX_OK && same_bits(y1, y2, rows * 64),
                  "%s linear_bf16w_rounded %lldx%lld: not vx_linear_bf16w's bits", path_name(cur_path), (long long)rows,
                  (long long)n);
            vx_bf16w_free(&w);
            free(v), free(y1), free(y2);
        } else {
            CHECK(vx_linear_bf16w_rounded(pools[1], &(vx_bf16w){0}, pb, rows, sum) == VOX_ERR_UNSUPPORTED,
                  "%s linear_bf16w_rounded: not refused", path_name(cur_path));
        }
        free(s), free(p), free(pb);
    }
}

/* A reduced-precision full attention (vx_nn_attention_bf16 / _q8) for 1, 2 and 3 threads into ob[1..3]
 * (the same bits), then its largest error against ref (within tol) and, for the record, against f32. */
typedef vox_status (*nn_att_fn)(vx_pool *, int64_t, int64_t, int64_t, int64_t, const float *, int64_t, const float *,
                                int64_t, const float *, int64_t, float, float *, int64_t);
static void check_nn_att(nn_att_fn fn, const char *name, size_t c, const float *qkv, int64_t ld, int64_t B, int64_t n,
                         int64_t H, int64_t d, float scale, float *ob[4], const double *ref, const float *f32, double tol) {
    const int64_t inner = H * d, cnt = B * n * inner;
    for (int t = 1; t <= 3; t++)
        CHECK(fn(pools[t], B, n, H, d, qkv, ld, qkv + inner, ld, qkv + 2 * inner, ld, scale, ob[t], inner) == VOX_OK,
              "nn attention %s cfg %zu: failed", name, c);
    CHECK(same_bits(ob[1], ob[2], cnt) && same_bits(ob[1], ob[3], cnt), "%s nn attention %s cfg %zu: threads change bits",
          path_name(cur_path), name, c);
    double err = 0, vs_f32 = 0;
    for (int64_t e = 0; e < cnt; e++) {
        err = fmax(err, fabs(ob[1][e] - ref[e]));
        vs_f32 = fmax(vs_f32, fabs(ob[1][e] - f32[e]));
    }
    if (verbose)
        printf("  %-10s nn attention %s cfg %zu max err %.3g (tol %.3g; vs f32 %.3g; %s)\n", path_name(cur_path), name, c, err,
               tol, vs_f32, vx_cpu_dots().bf16);
    CHECK(err <= tol, "%s nn attention %s cfg %zu: max err %.3g > %.3g", path_name(cur_path), name, c, err, tol);
}

/* vx_nn_attention (nn/attention.c): full attention over whole sequences, rows with a stride (q, k, v
 * slices of one q|k|v matrix, as F5's DiT passes them), against a double-precision softmax; the same
 * bits for 1, 2 and 3 threads. Lengths straddle the 64-query blocks; d 64 is the DiT's head. */
static void test_nn_attention(void) {
    static const int64_t cfg[][4] = {/* batch, n, heads, d */ {1, 1, 1, 8},  {2, 70, 3, 33}, {2, 131, 2, 64},
                                     {1, 64, 4, 16}, {1, 97, 2, 32}};
    for (size_t c = 0; c < sizeof cfg / sizeof cfg[0]; c++) {
        const int64_t B = cfg[c][0], n = cfg[c][1], H = cfg[c][2], d = cfg[c][3], inner = H * d, ld = 3 * inner + 5;
        const float scale = 1.0f / sqrtf((float)d);
        float *qkv = fvec(B * n * ld, -2, 2), *o[4];
        for (int t = 1; t <= 3; t++) {
            o[t] = malloc(sizeof(float) * (size_t)(B * n * inner));
            CHECK(vx_nn_attention(pools[t], B, n, H, d, qkv, ld, qkv + inner, ld, qkv + 2 * inner, ld, scale, o[t], inner) ==
                      VOX_OK, "nn attention cfg %zu: failed", c);
        }
        CHECK(same_bits(o[1], o[2], B * n * inner) && same_bits(o[1], o[3], B * n * inner),
              "%s nn attention cfg %zu: threads change bits", path_name(cur_path), c);
        double worst = 0, pmax, *ref = malloc(sizeof(double) * (size_t)(B * n * inner));
        ref_full_attention(qkv, ld, B, n, H, d, scale, 0, 0, 0, ref, &pmax);
        for (int64_t e = 0; e < B * n * inner; e++) worst = fmax(worst, fabs(o[1][e] - ref[e]));
        /* values in [-2, 2]: as test_attention's bound, doubled for |v| <= 2 */
        const double tol = 2 * (2e-7 * (2 + sqrt((double)d) / 2) + 2e-8 * log2((double)n + 1));
        if (verbose) printf("  %-10s nn attention cfg %zu max err %.3g (tol %.3g)\n", path_name(cur_path), c, worst, tol);
        CHECK(worst <= tol, "%s nn attention cfg %zu: max err %.3g > %.3g", path_name(cur_path), c, worst, tol);
        /* bf16 dot products (vx_nn_attention_bf16) where the path has a bf16 kernel: against a
         * double-precision attention of the rounded operands (keys and values rounded to bf16; queries and
         * probabilities too where the kernel rounds its inputs). The probabilities are rounded from double
         * here and from float there, which can differ by one bf16 step where a value sits within a float
         * ulp of a rounding midpoint: allowed as 2^-8 of the largest probability times max |v| = 2. */
        const vx_dot_caps dots = vx_cpu_dots();
        if (dots.bf16) {
            float *ob[4];
            for (int t = 1; t <= 3; t++) ob[t] = malloc(sizeof(float) * (size_t)(B * n * inner));
            const int rx = dots.bf16_rounds_x;
            ref_full_attention(qkv, ld, B, n, H, d, scale, 1, rx, 0, ref, &pmax);
            check_nn_att(vx_nn_attention_bf16, "bf16", c, qkv, ld, B, n, H, d, scale, ob, ref, o[1],
                         tol + (rx ? 0x1p-8 * pmax * 2 : 0));
            /* q8 scores (vx_nn_attention_q8, heads a multiple of 32): against the same attention with each
             * score from the int8 codes as vx_linear_q8w defines it; the same allowance as above */
            if (d % 32 == 0) {
                ref_full_attention(qkv, ld, B, n, H, d, scale, 1, rx, 1, ref, &pmax);
                check_nn_att(vx_nn_attention_q8, "q8", c, qkv, ld, B, n, H, d, scale, ob, ref, o[1],
                             tol + (rx ? 0x1p-8 * pmax * 2 : 0));
            } else {
                CHECK(vx_nn_attention_q8(pools[1], B, n, H, d, qkv, ld, qkv + inner, ld, qkv + 2 * inner, ld, scale, ob[1],
                                         inner) == VOX_ERR_UNSUPPORTED,
                      "%s nn attention q8 cfg %zu: heads of %lld not refused", path_name(cur_path), c, (long long)d);
            }
            for (int t = 1; t <= 3; t++) free(ob[t]);
        } else {
            CHECK(vx_nn_attention_bf16(pools[1], B, n, H, d, qkv, ld, qkv + inner, ld, qkv + 2 * inner, ld, scale, o[2],
                                       inner) == VOX_ERR_UNSUPPORTED,
                  "%s nn attention bf16 cfg %zu: not refused without a bf16 kernel", path_name(cur_path), c);
            CHECK(vx_nn_attention_q8(pools[1], B, n, H, d, qkv, ld, qkv + inner, ld, qkv + 2 * inner, ld, scale, o[2],
                                     inner) == VOX_ERR_UNSUPPORTED,
                  "%s nn attention q8 cfg %zu: not refused without a bf16 kernel", path_name(cur_path), c);
        }
        free(ref);
        for (int t = 1; t <= 3; t++) free(o[t]);
        free(qkv);
    }
}

/* ------------------------------------------------------------------------------ norms, softmax */
static void test_norms(void) {
    static const int64_t ds[] = {1, 7, 16, 33, 128, 1000, 1027};
    for (size_t s = 0; s < sizeof ds / sizeof ds[0]; s++) {
        int64_t d = ds[s], rows = 3;
        float *x = fvec(rows * d, -3, 3), *w = fvec(d, 0.5f, 1.5f), *b = fvec(d, -1, 1), *y = malloc(sizeof(float) * (size_t)(rows * d));
        for (int kind = 0; kind < 4; kind++) {
            if (kind == 0) vx_rms_norm(x, w, rows, d, 1e-6f, y);
            if (kind == 1) vx_rms_norm(x, NULL, rows, d, 1e-6f, y);
            if (kind == 2) vx_layer_norm(x, w, b, rows, d, 1e-5f, y);
            if (kind == 3) vx_layer_norm(x, NULL, NULL, rows, d, 1e-5f, y);
            double worst = 0;
            for (int64_t r = 0; r < rows; r++) {
                const float *xr = x + r * d;
                double mean = 0, var = 0;
                if (kind >= 2) {
                    for (int64_t i = 0; i < d; i++) mean += xr[i];
                    mean /= d;
                }
                for (int64_t i = 0; i < d; i++) var += (xr[i] - mean) * (xr[i] - mean);
                var = var / d + (kind >= 2 ? 1e-5f : 1e-6f);
                for (int64_t i = 0; i < d; i++) {
                    double ref = (xr[i] - mean) / sqrt(var);
                    if (kind == 0 || kind == 2) ref *= w[i];
                    if (kind == 2) ref += b[i];
                    /* relative to the row scale: a sum of d terms and a few roundings */
                    double err = fabs(y[r * d + i] - ref) / (fabs(ref) + (kind >= 2 ? 1.0 : 1e-3));
                    if (kind == 2) err = fabs(y[r * d + i] - ref) / (fabs(ref) + 2.5);
                    worst = fmax(worst, err);
                }
            }
            double tol = (8 + 2.0 * d) * U32;
            if (d == 1 && kind >= 2) tol = 1e-3; /* var = 0: the output is b (or 0) up to eps effects */
            CHECK(worst <= tol, "%s norm kind %d d=%lld: rel err %.3g > %.3g", path_name(cur_path), kind, (long long)d, worst, tol);
        }
        /* in place */
        float *xc = malloc(sizeof(float) * (size_t)(rows * d));
        memcpy(xc, x, sizeof(float) * (size_t)(rows * d));
        vx_rms_norm(x, w, rows, d, 1e-6f, y);
        vx_rms_norm(xc, w, rows, d, 1e-6f, xc);
        CHECK(same_bits(xc, y, rows * d), "%s rms_norm in place differs", path_name(cur_path));
        free(xc);
        free(x);
        free(w);
        free(b);
        free(y);
    }
    /* softmax: rows of odd length, with -inf entries */
    static const int64_t sd[] = {1, 5, 17, 64, 3072, 3001};
    for (size_t s = 0; s < sizeof sd / sizeof sd[0]; s++) {
        int64_t d = sd[s], rows = 2;
        float *x = fvec(rows * d, -20, 20), *x0 = malloc(sizeof(float) * (size_t)(rows * d));
        if (d > 3) x[3] = -INFINITY;
        memcpy(x0, x, sizeof(float) * (size_t)(rows * d));
        vx_softmax_rows(x, rows, d);
        double worst = 0;
        for (int64_t r = 0; r < rows; r++) {
            double m = -INFINITY, sum = 0;
            for (int64_t i = 0; i < d; i++) m = fmax(m, x0[r * d + i]);
            for (int64_t i = 0; i < d; i++) sum += exp((double)x0[r * d + i] - m);
            for (int64_t i = 0; i < d; i++) {
                double ref = exp((double)x0[r * d + i] - m) / sum;
                /* the float x - max is rounded (relative error of exp: |x - max| ulps), then exp,
                 * the sum of d terms and the division */
                double tol = (8 + d) * U32 * 2 + fabs((double)x0[r * d + i] - m) * U32 * 2;
                worst = fmax(worst, fabs(x[r * d + i] - ref) / (ref + 1e-30) / tol);
            }
        }
        CHECK(worst <= 1, "%s softmax d=%lld: rel err / tol %.3g", path_name(cur_path), (long long)d, worst);
        free(x);
        free(x0);
    }
}

/* ------------------------------------------------------------------------------ elementwise */
/* Test inputs: a sweep over the interesting range plus edge values. */
static float *elem_inputs(int64_t *n_out, float lo, float hi) {
    int64_t n = 4099;
    float *x = malloc(sizeof(float) * (size_t)n);
    for (int64_t i = 0; i < n - 16; i++) x[i] = lo + (hi - lo) * (float)i / (float)(n - 17);
    float edges[16] = {0.0f, -0.0f, 1e-30f, -1e-30f, 1e-7f, -1e-7f, 0.5f, -0.5f, 1.0f, -1.0f, 3.0f, -3.0f, 1e-3f, -1e-3f, 9.5f, -9.5f};
    memcpy(x + n - 16, edges, sizeof edges);
    *n_out = n;
    return x;
}

typedef double (*ref_fn)(double);
static double r_silu(double x) { return x / (1 + exp(-x)); }
static double r_gelu(double x) { return 0.5 * x * erfc(-x * M_SQRT1_2); }
static double r_elu(double x) { return x > 0 ? x : expm1(x); }
static double r_relu(double x) { return x < 0 ? 0 : x; }
static double r_tanh(double x) { return tanh(x); }
static double r_sigmoid(double x) { return 1 / (1 + exp(-x)); }

static double ulp_err(float y, double ref) {
    if (y == ref) return 0;
    if (isnan(ref)) return isnan(y) ? 0 : INFINITY;
    double a = fabs(ref);
    double ulp = a < 0x1p-126 ? 0x1p-149 : ldexp(1.0, ilogb(a) - 23);
    return fabs((double)y - ref) / ulp;
}

static void check_elem(const char *name, void (*fn)(const float *, int64_t, float *), ref_fn ref, float lo, float hi,
                       double max_ulp, double abs_floor) {
    int64_t n;
    float *x = elem_inputs(&n, lo, hi);
    float *y = malloc(sizeof(float) * (size_t)n);
    fn(x, n, y);
    double worst = 0;
    int64_t wi = 0;
    for (int64_t i = 0; i < n; i++) {
        double r = ref(x[i]);
        double e = fabs(y[i] - r) <= abs_floor ? 0 : ulp_err(y[i], r);
        if (e > worst) { worst = e; wi = i; }
    }
    if (verbose) printf("  %-10s %-10s max %.2f ulp\n", path_name(cur_path), name, worst);
    CHECK(worst <= max_ulp, "%s %s: %.1f ulp at x=%.9g (y=%.9g ref=%.9g)", path_name(cur_path), name, worst, x[wi], y[wi],
          ref(x[wi]));
    /* An element's value does not depend on where it sits: every suffix gives the same bits. */
    float *y2 = malloc(sizeof(float) * (size_t)n);
    for (int64_t off = 1; off < 20; off += 3) {
        fn(x + off, n - off - (off & 7), y2);
        CHECK(same_bits(y2, y + off, n - off - (off & 7)), "%s %s: value depends on position (offset %lld)", path_name(cur_path),
              name, (long long)off);
    }
    /* in place */
    memcpy(y2, x, sizeof(float) * (size_t)n);
    fn(y2, n, y2);
    CHECK(same_bits(y2, y, n), "%s %s: in place differs", path_name(cur_path), name);
    free(y2);
    free(x);
    free(y);
}

static void silu_mul_wrap(const float *x, int64_t n, float *y) {
    float *one = malloc(sizeof(float) * (size_t)n);
    for (int64_t i = 0; i < n; i++) one[i] = 1.0f;
    vx_silu_mul(x, one, n, y);
    free(one);
}

/* Channel moments: every path gives the definition's bits (double sums in time order, no FMA). */
static void test_channel_moments(void) {
    static const int64_t cases[][4] = {{37, 147, 0, 147}, {200, 256, 64, 128}, {5, 130, 3, 99}, {1, 9, 0, 9}};
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        const int64_t t = cases[ci][0], c = cases[ci][1], c0 = cases[ci][2], c1 = cases[ci][3];
        float *x = fvec(t * c, -3.0f, 5.0f);
        double *m = malloc(sizeof(double) * (size_t)(4 * (c1 - c0))), *q = m + (c1 - c0), *rm = q + (c1 - c0),
               *rq = rm + (c1 - c0);
        for (int64_t ch = c0; ch < c1; ch++) {
            double a = 0.0, b = 0.0;
            for (int64_t i = 0; i < t; i++) a += x[i * c + ch];
            a /= (double)t;
            for (int64_t i = 0; i < t; i++) {
                double d = x[i * c + ch] - a;
                b += d * d;
            }
            rm[ch - c0] = a, rq[ch - c0] = b;
        }
        vx_channel_moments(x, t, c, c0, c1, m, q);
        CHECK(memcmp(m, rm, sizeof(double) * (size_t)(c1 - c0)) == 0 && memcmp(q, rq, sizeof(double) * (size_t)(c1 - c0)) == 0,
              "%s channel_moments t=%lld c=%lld [%lld, %lld): differs from the definition", path_name(cur_path), (long long)t,
              (long long)c, (long long)c0, (long long)c1);
        free(m), free(x);
    }
}

static void test_elementwise(void) {
    check_elem("silu", vx_silu, r_silu, -30, 30, 4, 1e-37);
    check_elem("silu_mul", silu_mul_wrap, r_silu, -30, 30, 4, 1e-37);
    check_elem("silu(far)", vx_silu, r_silu, -100, 100, 4, 1e-37);
    check_elem("gelu", vx_gelu, r_gelu, -12, 12, 8, 1e-37);
    check_elem("elu", vx_elu, r_elu, -20, 20, 4, 0);
    check_elem("relu", vx_relu, r_relu, -5, 5, 0, 0);
    check_elem("tanh", vx_tanh, r_tanh, -12, 12, 4, 0);
    check_elem("sigmoid", vx_sigmoid, r_sigmoid, -110, 110, 4, 1e-37);

    /* silu_mul with a real second operand; clamp; add/mul/channels (exact operations) */
    int64_t n = 1031;
    float *a = fvec(n, -8, 8), *b = fvec(n, -3, 3), *y = malloc(sizeof(float) * (size_t)n);
    vx_silu_mul(a, b, n, y);
    int bad = 0;
    for (int64_t i = 0; i < n; i++) bad += ulp_err(y[i], r_silu(a[i]) * b[i]) > 5 && fabs(y[i] - r_silu(a[i]) * b[i]) > 1e-30;
    CHECK(bad == 0, "%s silu_mul: %d elements off", path_name(cur_path), bad);
    vx_clamp(a, n, -2.5f, 3.0f, y);
    bad = 0;
    for (int64_t i = 0; i < n; i++) bad += y[i] != (a[i] < -2.5f ? -2.5f : a[i] > 3.0f ? 3.0f : a[i]);
    CHECK(bad == 0, "%s clamp: %d elements off", path_name(cur_path), bad);
    float nanv[3] = {NAN, -1.0f, 7.0f}, nano[3];
    vx_clamp(nanv, 3, 0.0f, 1.0f, nano);
    CHECK(isnan(nano[0]) && nano[1] == 0.0f && nano[2] == 1.0f, "%s clamp: NaN or bounds", path_name(cur_path));
    vx_relu(nanv, 3, nano);
    CHECK(isnan(nano[0]) && nano[1] == 0.0f && nano[2] == 7.0f, "%s relu: NaN or values", path_name(cur_path));
    vx_add(a, b, n, y);
    bad = 0;
    for (int64_t i = 0; i < n; i++) bad += y[i] != a[i] + b[i];
    vx_mul(a, b, n, y);
    for (int64_t i = 0; i < n; i++) bad += y[i] != a[i] * b[i];
    CHECK(bad == 0, "%s add/mul: %d elements off", path_name(cur_path), bad);
    int64_t rows = 7, d = 147;
    float *x = fvec(rows * d, -4, 4), *s = fvec(d, -2, 2), *yy = malloc(sizeof(float) * (size_t)(rows * d));
    vx_scale_channels(x, s, rows, d, yy);
    bad = 0;
    for (int64_t i = 0; i < rows * d; i++) bad += yy[i] != x[i] * s[i % d];
    vx_add_channels(x, s, rows, d, yy);
    for (int64_t i = 0; i < rows * d; i++) bad += yy[i] != x[i] + s[i % d];
    CHECK(bad == 0, "%s scale/add_channels: %d elements off", path_name(cur_path), bad);

    /* snake: time-major, c = 147 channels, arguments up to ~1e3 rad and a few very large ones */
    float *al = fvec(d, 0.2f, 30.0f), *ib = fvec(d, 0.1f, 3.0f);
    for (int64_t i = 0; i < rows * d; i++) x[i] *= 8;
    x[5] = 3e5f;
    x[6] = -2e6f;
    vx_snake_beta(x, al, ib, rows, d, yy);
    double worst = 0;
    for (int64_t i = 0; i < rows * d; i++) {
        float arg = x[i] * al[i % d];
        double sn = sin((double)arg), ref = x[i] + (double)ib[i % d] * sn * sn;
        /* error: the float result's rounding plus a few ulps of sin^2 scaled by inv_beta */
        double tol = 2 * U32 * fabs(ref) + 8 * U32 * ib[i % d] + 1e-30;
        worst = fmax(worst, fabs(yy[i] - ref) / tol);
    }
    if (verbose) printf("  %-10s snake err/tol %.3f\n", path_name(cur_path), worst);
    CHECK(worst <= 1, "%s snake_beta: err/tol %.3g", path_name(cur_path), worst);
    free(al);
    free(ib);
    free(x);
    free(s);
    free(yy);
    free(a);
    free(b);
    free(y);
}

/* ------------------------------------------------------------------------------ rope, conv, gather */
static void test_rope_conv_gather(void) {
    /* rope: d = 128 and an odd half (d = 34) */
    static const int64_t dd[] = {128, 34, 64, 2};
    for (size_t s = 0; s < 4; s++) {
        int64_t n = 5, heads = 3, d = dd[s];
        float *x = fvec(n * heads * d, -2, 2), *c = fvec(n * d, -1, 1), *sn = fvec(n * d, -1, 1);
        float *y = malloc(sizeof(float) * (size_t)(n * heads * d));
        memcpy(y, x, sizeof(float) * (size_t)(n * heads * d));
        vx_rope(y, n, heads, d, c, sn);
        int bad = 0;
        for (int64_t r = 0; r < n; r++)
            for (int64_t h = 0; h < heads; h++)
                for (int64_t i = 0; i < d; i++) {
                    const float *v = x + (r * heads + h) * d;
                    int64_t half = d / 2;
                    double ref = i < half ? (double)v[i] * c[r * d + i] - (double)v[i + half] * sn[r * d + i]
                                          : (double)v[i] * c[r * d + i] + (double)v[i - half] * sn[r * d + i];
                    bad += fabs(y[(r * heads + h) * d + i] - ref) > 4 * U32 * 4;
                }
        CHECK(bad == 0, "%s rope d=%lld: %d elements off", path_name(cur_path), (long long)d, bad);
        free(x);
        free(c);
        free(sn);
        free(y);
    }
    /* im2col: odd channel counts (below, at and above the vector width), kernels 1..7, dilation, stride */
    static const int64_t ic[][4] = {{13, 7, 3, 2}, {37, 7, 1, 1}, {16, 3, 2, 1}, {96, 7, 9, 1}, {33, 1, 1, 2}, {70, 4, 1, 4}};
    for (size_t s = 0; s < sizeof ic / sizeof ic[0]; s++) {
        int64_t c = ic[s][0], k = ic[s][1], dil = ic[s][2], st = ic[s][3], t_out = 9, t_in = (t_out - 1) * st + (k - 1) * dil + 1;
        float *x = fvec(t_in * c, -1, 1), *o = malloc(sizeof(float) * (size_t)(t_out * c * k));
        vx_im2col(x, t_in, c, k, dil, st, t_out, o);
        int bad = 0;
        for (int64_t t = 0; t < t_out; t++)
            for (int64_t ci = 0; ci < c; ci++)
                for (int64_t j = 0; j < k; j++) bad += o[t * c * k + ci * k + j] != x[(t * st + j * dil) * c + ci];
        CHECK(bad == 0, "%s im2col c=%lld k=%lld: %d elements off", path_name(cur_path), (long long)c, (long long)k, bad);
        free(x);
        free(o);
    }
    /* depthwise: c = 37 channels, k = 7, dilation 2, with and without bias */
    for (int withb = 0; withb < 2; withb++) {
        int64_t c = 37, k = 7, dil = 2, t_out = 19, t_in = t_out + (k - 1) * dil;
        float *x = fvec(t_in * c, -1, 1), *w = fvec(c * k, -1, 1), *b = withb ? fvec(c, -1, 1) : NULL;
        float *y = malloc(sizeof(float) * (size_t)(t_out * c));
        vx_depthwise_conv(x, t_out, c, w, k, dil, b, y);
        double worst = 0;
        for (int64_t t = 0; t < t_out; t++)
            for (int64_t ch = 0; ch < c; ch++) {
                double ref = b ? b[ch] : 0, mag = fabs(ref);
                for (int64_t j = 0; j < k; j++) {
                    ref += (double)w[ch * k + j] * x[(t + j * dil) * c + ch];
                    mag += fabs((double)w[ch * k + j] * x[(t + j * dil) * c + ch]);
                }
                worst = fmax(worst, fabs(y[t * c + ch] - ref) / ((k + 2) * U32 * mag + 1e-30));
            }
        CHECK(worst <= 1, "%s depthwise: err/bound %.3g", path_name(cur_path), worst);
        free(x);
        free(w);
        free(b);
        free(y);
    }
    /* gather: exact conversion of every dtype */
    static const vox_dtype dts[] = {VOX_DTYPE_F32, VOX_DTYPE_F16, VOX_DTYPE_BF16, VOX_DTYPE_Q8, VOX_DTYPE_Q4};
    for (size_t d = 0; d < 5; d++) {
        int64_t rows = 11, cols = 96;
        wmat w = make_w(dts[d], rows, cols);
        int32_t ids[4] = {3, 0, 10, 3};
        float *o = malloc(sizeof(float) * 4 * (size_t)cols);
        vx_gather_rows(&w.m, ids, 4, o);
        int bad = 0;
        for (int i = 0; i < 4; i++)
            for (int64_t k = 0; k < cols; k++) bad += o[i * cols + k] != w.deq[ids[i] * cols + k];
        CHECK(bad == 0, "%s gather %s: %d elements off", path_name(cur_path), dt_name(dts[d]), bad);
        free(o);
        free_w(&w);
    }
    /* f16 specials: subnormal, inf, NaN, max */
    uint16_t hs[6] = {0x0001, 0x03ff, 0x7c00, 0xfc00, 0x7bff, 0x8000};
    vx_mat hm = {VOX_DTYPE_F16, 1, 6, hs, NULL};
    float ho[6];
    int32_t id0 = 0;
    vx_gather_rows(&hm, &id0, 1, ho);
    CHECK(ho[0] == 0x1p-24f && ho[1] == 1023 * 0x1p-24f && isinf(ho[2]) && ho[2] > 0 && isinf(ho[3]) && ho[3] < 0 &&
              ho[4] == 65504.0f && ho[5] == 0.0f && signbit(ho[5]),
          "%s f16 special values", path_name(cur_path));
}

/* ------------------------------------------------------------------------------ fft */
static void test_fft(void) {
    static const int64_t ns[] = {1, 2, 4, 8, 64, 512, 1024, 8192};
    /* VOX_TEST_QUICK=1 (under CPU emulation, where the long-double DFT of 8192 points took 20 s): up to
     * 1024 points; the FFT has no per-path code, and the native run checks 8192 */
    const size_t n_sizes = quick ? 7 : sizeof ns / sizeof ns[0];
    for (size_t s = 0; s < n_sizes; s++) {
        int64_t n = ns[s];
        vx_rfft *p = NULL;
        CHECK(vx_rfft_create(n, &p) == VOX_OK, "rfft create %lld", (long long)n);
        if (!p) continue;
        float *x = fvec(n, -1, 1), *o = malloc(sizeof(float) * (size_t)(n + 2));
        vx_rfft_run(p, x, o);
        /* naive DFT in long double with a table of the n roots of unity */
        long double *ct = malloc(sizeof(long double) * (size_t)n), *st = malloc(sizeof(long double) * (size_t)n);
        for (int64_t t = 0; t < n; t++) {
            long double a = -2.0L * 3.14159265358979323846264338327950288L * (long double)t / (long double)n;
            ct[t] = cosl(a);
            st[t] = sinl(a);
        }
        double worst = 0;
        for (int64_t k = 0; k <= n / 2; k++) {
            long double re = 0, im = 0;
            for (int64_t t = 0; t < n; t++) {
                int64_t j = (k * t) % n;
                re += x[t] * ct[j];
                im += x[t] * st[j];
            }
            /* float rounding of the result relative to the spectrum's scale sqrt(n) */
            double scale = sqrt((double)n);
            worst = fmax(worst, fmax(fabs(o[2 * k] - (double)re), fabs(o[2 * k + 1] - (double)im)) / scale);
        }
        free(ct);
        free(st);
        CHECK(worst <= 4 * U32 * sqrt((double)n) + 1e-7, "rfft n=%lld: err %.3g", (long long)n, worst);
        vx_rfft_free(p);
        free(x);
        free(o);
    }
    vx_rfft *p = (vx_rfft *)1;
    CHECK(vx_rfft_create(12, &p) == VOX_ERR_INVALID_ARGUMENT && p == NULL, "rfft rejects n = 12");
}

/* ------------------------------------------------------------------------------ pool */
typedef struct cover_ctx {
    _Atomic int *hits;
    int64_t grain, n;
    _Atomic int bad_bounds;
    _Atomic int no_ftz;
} cover_ctx;

static void cover_fn(void *c_, int64_t b, int64_t e) {
    cover_ctx *c = c_;
    if (b % c->grain != 0 || (e % c->grain != 0 && e != c->n) || b >= e) atomic_fetch_add(&c->bad_bounds, 1);
    for (int64_t i = b; i < e; i++) atomic_fetch_add(&c->hits[i], 1);
#if defined(__x86_64__)
    if ((_mm_getcsr() & 0x8040u) != 0x8040u) atomic_fetch_add(&c->no_ftz, 1);
#endif
    /* a little work so that the workers get a share */
    volatile double s = 0;
    for (int i = 0; i < 2000; i++) s += i;
}

typedef struct busy_ctx {
    _Atomic int entered, release, other_done;
    pthread_t owner;
    _Atomic int foreign; /* ranges of the second job run by another thread than its caller */
    vx_pool *pool;
} busy_ctx;

static void block_fn(void *c_, int64_t b, int64_t e) {
    busy_ctx *c = c_;
    (void)e;
    if (b == 0) {
        atomic_store(&c->entered, 1);
        while (!atomic_load(&c->release)) usleep(100);
    }
}
static void second_fn(void *c_, int64_t b, int64_t e) {
    busy_ctx *c = c_;
    (void)b;
    (void)e;
    if (!pthread_equal(pthread_self(), c->owner)) atomic_fetch_add(&c->foreign, 1);
}
static void *first_job(void *c_) {
    busy_ctx *c = c_;
    vx_pool_for(c->pool, 64, 1, block_fn, c);
    return NULL;
}
static void *second_job(void *c_) {
    busy_ctx *c = c_;
    c->owner = pthread_self();
    vx_pool_for(c->pool, 1000, 1, second_fn, c);
    atomic_store(&c->other_done, 1);
    return NULL;
}

static void test_pool(void) {
    /* coverage, grain alignment and FTZ/DAZ in every range, with 1..3 threads and odd n */
    static const int64_t ns[] = {1, 7, 100, 1001};
    static const int64_t grains[] = {1, 3, 16};
    for (int t = 1; t <= 3; t++)
        for (size_t a = 0; a < 4; a++)
            for (size_t g = 0; g < 3; g++) {
                cover_ctx c = {0};
                c.n = ns[a];
                c.grain = grains[g];
                c.hits = calloc((size_t)c.n, sizeof *c.hits);
                vx_pool_for(pools[t], c.n, c.grain, cover_fn, &c);
                int bad = 0;
                for (int64_t i = 0; i < c.n; i++) bad += atomic_load(&c.hits[i]) != 1;
                CHECK(bad == 0 && c.bad_bounds == 0, "pool %d threads n=%lld grain=%lld: %d indices not run once, %d bad ranges",
                      t, (long long)c.n, (long long)c.grain, bad, c.bad_bounds);
                CHECK(c.no_ftz == 0, "pool %d threads: %d ranges ran without FTZ/DAZ", t, c.no_ftz);
                free(c.hits);
            }
#if defined(__x86_64__)
    unsigned before = _mm_getcsr();
    _mm_setcsr(before & ~0x8040u);
    cover_ctx c = {0};
    c.n = 10;
    c.grain = 1;
    c.hits = calloc(10, sizeof *c.hits);
    vx_pool_for(pools[2], 10, 1, cover_fn, &c);
    CHECK((_mm_getcsr() & 0x8040u) == 0, "vx_pool_for does not restore the caller's MXCSR");
    CHECK(c.no_ftz == 0, "caller ranges without FTZ/DAZ");
    vx_pool_for(NULL, 10, 1, cover_fn, &c);
    CHECK(c.no_ftz == 0, "NULL pool: ranges without FTZ/DAZ");
    free(c.hits);
    _mm_setcsr(before);
#endif
    /* busy rule: while thread A's job blocks in the pool, thread B's job runs entirely on B */
    {
        busy_ctx bc = {0};
        bc.pool = pools[3];
        pthread_t a, b;
        pthread_create(&a, NULL, first_job, &bc);
        while (!atomic_load(&bc.entered)) usleep(100);
        pthread_create(&b, NULL, second_job, &bc);
        for (int i = 0; i < 20000 && !atomic_load(&bc.other_done); i++) usleep(100);
        CHECK(atomic_load(&bc.other_done), "busy pool: a second caller waited for the first job");
        atomic_store(&bc.release, 1);
        pthread_join(a, NULL);
        pthread_join(b, NULL);
        CHECK(bc.foreign == 0, "busy pool: %d ranges of the second job ran on other threads", bc.foreign);
    }
    /* creation options and errors */
    vx_pool *p = NULL;
    vx_pool_opts o = {.n_threads = 2, .cpu_affinity = "0-x"};
    CHECK(vx_pool_create(&o, &p) == VOX_ERR_INVALID_ARGUMENT && !p, "bad affinity list accepted");
    CHECK(strstr(vox_last_error(), "0-x") != NULL, "affinity error message: %s", vox_last_error());
    o.cpu_affinity = "3-1";
    CHECK(vx_pool_create(&o, &p) == VOX_ERR_INVALID_ARGUMENT && !p, "reversed range accepted");
    o.cpu_affinity = "0,";
    CHECK(vx_pool_create(&o, &p) == VOX_ERR_INVALID_ARGUMENT && !p, "trailing comma accepted");
    o.cpu_affinity = "0-1,0";
    o.nice = 3;
    o.spin_us = 50;
    CHECK(vx_pool_create(&o, &p) == VOX_OK && p && vx_pool_size(p) == 2, "pinned, niced pool: %s", vox_last_error());
    if (p) {
        cover_ctx c2 = {0};
        c2.n = 100;
        c2.grain = 1;
        c2.hits = calloc(100, sizeof *c2.hits);
        usleep(2000); /* let the worker fall asleep past spin_us, then wake it */
        vx_pool_for(p, 100, 1, cover_fn, &c2);
        int bad = 0;
        for (int i = 0; i < 100; i++) bad += c2.hits[i] != 1;
        CHECK(bad == 0, "pinned pool coverage");
        free(c2.hits);
        vx_pool_free(p);
    }
    o = (vx_pool_opts){.n_threads = 0};
    p = NULL;
    CHECK(vx_pool_create(&o, &p) == VOX_OK && p && vx_pool_size(p) >= 1, "default thread count");
    vx_pool_free(p);
    o = (vx_pool_opts){.n_threads = 2, .nice = -5};
    p = NULL;
    vox_status st = vx_pool_create(&o, &p);
    if (geteuid() != 0) CHECK(st != VOX_OK && !p, "negative nice without privilege should fail");
    vx_pool_free(p);
    /* create/free many times: no leaks or hangs (run under ASan in the sanitizer build) */
    for (int i = 0; i < 20; i++) {
        o = (vx_pool_opts){.n_threads = 3, .spin_us = i & 1 ? 0 : 100};
        p = NULL;
        if (vx_pool_create(&o, &p) == VOX_OK) {
            cover_ctx c3 = {0};
            c3.n = 50;
            c3.grain = 2;
            c3.hits = calloc(50, sizeof *c3.hits);
            vx_pool_for(p, 50, 2, cover_fn, &c3);
            free(c3.hits);
            vx_pool_free(p);
        }
    }
}

/* ------------------------------------------------------------------------------ f32 convolution */
/* vx_conv1d_f32 (the column read in place) gives the bits of vx_im2col + vx_linear on the same rows,
 * for any thread count and for one row alone (odd shapes: channel and tap counts, dilations, row
 * counts around the tiles). */
static void test_conv1d_f32(void) {
    static const int64_t shapes[][6] = {{64, 6, 3, 1, 50, 1}, {96, 130, 7, 3, 301, 1}, {17, 33, 11, 5, 13, 1},
                                        {768, 96, 7, 9, 40, 1}, {1, 20, 7, 1, 97, 1}, {256, 5, 1, 1, 7, 1},
                                        {256, 22, 12, 1, 71, 6}, {33, 9, 5, 2, 19, 3}};
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
        const int64_t co = shapes[si][0], c = shapes[si][1], k = shapes[si][2], dil = shapes[si][3], n = shapes[si][4];
        const int64_t st = shapes[si][5], n_in = (n - 1) * st + dil * (k - 1) + 1;
        float *w = fvec(co * c * k, -1.0f, 1.0f), *x = fvec(n_in * c, -2.0f, 2.0f), *bias = fvec(co, -1.0f, 1.0f);
        float *col = malloc(sizeof(float) * (size_t)(n * c * k)), *ref = malloc(sizeof(float) * (size_t)(n * co));
        vx_mat m = {.dtype = VOX_DTYPE_F32, .rows = co, .cols = c * k, .data = w};
        float *ref0 = malloc(sizeof(float) * (size_t)(n * co)), *y = malloc(sizeof(float) * (size_t)(n * co));
        vx_im2col(x, n_in, c, k, dil, st, n, col);
        vx_linear(pools[2], &m, bias, col, n, ref);
        vx_linear(pools[2], &m, NULL, col, n, ref0);
        for (int t = 1; t <= 3; t++) {
            vx_conv1d_f32(pools[t], &m, c, k, dil, st, bias, x, n, y);
            CHECK(same_bits(y, ref, n * co), "%s conv1d_f32 %lldx%lldx%lld dil %lld n=%lld, %d threads: != im2col + linear",
                  path_name(cur_path), (long long)co, (long long)c, (long long)k, (long long)dil, (long long)n, t);
        }
        vx_conv1d_f32(pools[2], &m, c, k, dil, st, NULL, x, n, y);
        CHECK(same_bits(y, ref0, n * co), "%s conv1d_f32 %lldx%lldx%lld without bias: != im2col + linear",
              path_name(cur_path), (long long)co, (long long)c, (long long)k);
        free(ref0), free(y);
        float *y1 = malloc(sizeof(float) * (size_t)co);
        vx_conv1d_f32(pools[2], &m, c, k, dil, st, bias, x + (n - 1) * st * c, 1, y1);
        CHECK(same_bits(y1, ref + (n - 1) * co, co), "%s conv1d_f32 %lldx%lldx%lld: last row alone differs",
              path_name(cur_path), (long long)co, (long long)c, (long long)k);
        free(y1), free(w), free(x), free(bias), free(col), free(ref);
    }
}

/* ------------------------------------------------------------------------------ harmonic source */
/* vx_harmonic_source: within a few ulps of a double computation that shares the definition's float
 * index and blend arithmetic (phases up to 1e5 rad, as a long span's); a sample's value independent of
 * the range it is computed in; the noise term read in place. */
static void test_harmonic_source(void) {
    const int64_t t2 = 37, hop = 300, nh = 9, n = t2 * hop;
    float *f0 = fvec(t2, 0.0f, 400.0f), *w = fvec(nh, -1.0f, 1.0f), *phase = malloc(sizeof(float) * (size_t)(t2 * nh));
    for (int64_t i = 0; i < t2; i++)
        for (int64_t h = 0; h < nh; h++) phase[i * nh + h] = (float)(i + 1) * (float)(h + 1) * urand(0.0f, 300.0f);
    for (int64_t i = 0; i < t2; i += 5) f0[i] = 3.0f; /* unvoiced frames */
    float *noise = fvec(n, -0.01f, 0.01f), *y = malloc(sizeof(float) * (size_t)n), *y2 = malloc(sizeof(float) * (size_t)n);
    vx_harmonic a = {.f0 = f0, .phase = phase, .w = w, .noise = noise, .b = 0.05f, .amp = 0.1f, .threshold = 10.0f,
                     .scale = (float)(1.0 / 300.0), .t2 = t2, .hop = hop, .n_h = nh};
    vx_harmonic_source(&a, 0, n, y);
    double worst = 0.0;
    for (int64_t j = 0; j < n; j++) {
        float s = fmaf(a.scale, (float)j + 0.5f, -0.5f);
        if (s < 0.0f) s = 0.0f;
        const int64_t i0 = (int64_t)s, i1 = i0 + (i0 < t2 - 1 ? 1 : 0);
        const float l1 = s - (float)i0, l0 = 1.0f - l1, uv = f0[j / hop] > a.threshold ? 1.0f : 0.0f;
        double acc = a.b, mag = fabs(a.b);
        for (int64_t h = 0; h < nh; h++) {
            const float ph = fmaf(l0, phase[i0 * nh + h], l1 * phase[i1 * nh + h]);
            acc += w[h] * (sin((double)ph) * a.amp * uv);
            mag += fabs(w[h] * a.amp * uv);
        }
        acc += noise[j];
        const double err = fabs(y[j] - tanh(acc)) / (2e-7 * (mag + fabs(noise[j]) + 1.0));
        worst = err > worst ? err : worst;
    }
    if (verbose) printf("  %-10s harmonic source err/tol %.3f\n", path_name(cur_path), worst);
    CHECK(worst <= 1.0, "%s harmonic source: err/tol %.3g", path_name(cur_path), worst);
    /* any range: the same bits; noise in place */
    memcpy(y2, noise, sizeof(float) * (size_t)n);
    a.noise = y2;
    vx_harmonic_source(&a, 0, 1237, y2);
    vx_harmonic_source(&a, 1237, 1240, y2);
    vx_harmonic_source(&a, 1240, n, y2);
    CHECK(same_bits(y, y2, n), "%s harmonic source: split ranges / in-place noise change bits", path_name(cur_path));
    free(f0), free(w), free(phase), free(noise), free(y), free(y2);
}

/* ------------------------------------------------------------------------------ across paths */
/* The paths that promise the same bits give them: q8/q4 linear layers on avx2 and avx2-vnni (the same
 * exact lane sums, vpmaddubsw + vpmaddwd or vpdpbusd) and on avx512 (the avx2 kernels); the int8
 * convolution on every SIMD path (exact sums, one float epilogue); the widened bf16 convolution on
 * avx2 and avx2-vnni. On aarch64 the same for neon and neon-dotprod / neon-i8mm(-bf16) (smull or sdot
 * lane sums; smlal, sdot or usdot int8 sums; the widened bf16 kernel where the path has it). Each pair
 * is compared on one input through the two tables. */
static void run_on(vx_cpu_path p, void (*fn)(void *), void *ctx) {
    vx_kernels_force_path(p);
    fn(ctx);
}
typedef struct xp_lin { const vx_mat *w; const float *x; int64_t n; float *y; } xp_lin;
static void xp_lin_run(void *c) {
    xp_lin *l = c;
    vx_linear(pools[2], l->w, NULL, l->x, l->n, l->y);
}
typedef struct xp_conv { const vx_i8w *iw; const vx_bf16w *bw; const float *x, *bias; int64_t n, dil; float *y; } xp_conv;
static void xp_i8_run(void *c) {
    xp_conv *v = c;
    CHECK(vx_conv1d_i8w(pools[2], v->iw, v->bias, v->x, v->n, v->dil, v->y) == VOX_OK, "i8w across paths: %s", vox_last_error());
}
static void xp_bf_run(void *c) {
    xp_conv *v = c;
    CHECK(vx_conv1d_bf16w(pools[2], v->bw, v->bias, v->x, v->n, v->dil, v->y) == VOX_OK, "bf16w across paths: %s",
          vox_last_error());
}

static void test_same_bits_across_paths(void) {
    int have[VX_PATHS] = {0}, n_checked = 0;
    for (int p = 0; p < VX_PATHS; p++) have[p] = vx_cpu_supports((vx_cpu_path)p);
    /* per architecture: the base SIMD path, the paths with its q8/q4 bits, every other SIMD path (int8
     * convolution), the paths with its widened-bf16 bits */
    vx_cpu_path base;
    const vx_cpu_path *q_same, *simd, *bf_same;
    int n_q, n_simd, n_bf;
    static const vx_cpu_path x86_q[] = {VX_PATH_AVX2_VNNI, VX_PATH_AVX512},
                             x86_simd[] = {VX_PATH_AVX2_VNNI, VX_PATH_AVX512, VX_PATH_AVX512_VNNI, VX_PATH_AVX512_VNNI_BF16,
                                           VX_PATH_AMX},
                             x86_bf[] = {VX_PATH_AVX2_VNNI};
    static const vx_cpu_path arm_q[] = {VX_PATH_NEON_DOTPROD, VX_PATH_NEON_I8MM, VX_PATH_NEON_I8MM_BF16},
                             arm_bf[] = {VX_PATH_NEON_DOTPROD, VX_PATH_NEON_I8MM};
    if (have[VX_PATH_AVX2]) {
        base = VX_PATH_AVX2, q_same = x86_q, n_q = 2, simd = x86_simd, n_simd = 5, bf_same = x86_bf, n_bf = 1;
    } else if (have[VX_PATH_NEON]) {
        base = VX_PATH_NEON, q_same = arm_q, n_q = 3, simd = arm_q, n_simd = 3, bf_same = arm_bf, n_bf = 2;
    } else {
        printf("same bits across paths: no SIMD path on this CPU\n");
        return;
    }
    /* q8 / q4 linear */
    static const vox_dtype qd[2] = {VOX_DTYPE_Q8, VOX_DTYPE_Q4};
    for (int d = 0; d < 2; d++)
        for (int64_t n = 1; n <= 37; n += 36) {
            wmat w = make_w(qd[d], 300, 1024);
            float *x = fvec(n * 1024, -2, 2), *y0 = malloc(sizeof(float) * (size_t)(n * 300)),
                  *y1 = malloc(sizeof(float) * (size_t)(n * 300));
            xp_lin l0 = {&w.m, x, n, y0}, l1 = {&w.m, x, n, y1};
            run_on(base, xp_lin_run, &l0);
            for (int o = 0; o < n_q; o++) {
                if (!have[q_same[o]]) continue;
                run_on(q_same[o], xp_lin_run, &l1);
                CHECK(same_bits(y0, y1, n * 300), "%s n=%lld: %s != %s", dt_name(qd[d]), (long long)n,
                      path_name(q_same[o]), path_name(base));
                n_checked++;
            }
            free_w(&w), free(x), free(y0), free(y1);
        }
    /* int8 convolution: every SIMD path; widened bf16 */
    vx_kernels_force_path(base);
    const int64_t co = 128, c = 130, k = 7, dil = 3, n = 101, n_in = n + dil * (k - 1);
    float *w = fvec(co * c * k, -1, 1), *x = fvec(n_in * c, -2, 2), *bias = fvec(co, -1, 1);
    float *y0 = malloc(sizeof(float) * (size_t)(n * co)), *y1 = malloc(sizeof(float) * (size_t)(n * co));
    vx_mat m = {.dtype = VOX_DTYPE_F32, .rows = co, .cols = c * k, .data = w};
    vx_i8w iw;
    vx_bf16w bw;
    CHECK(vx_i8w_pack_conv(&m, c, k, &iw) == VOX_OK && vx_bf16w_pack_conv(&m, c, k, &bw) == VOX_OK, "pack: %s",
          vox_last_error());
    xp_conv v0 = {&iw, &bw, x, bias, n, dil, y0}, v1 = {&iw, &bw, x, bias, n, dil, y1};
    run_on(base, xp_i8_run, &v0);
    for (int i = 0; i < n_simd; i++) {
        if (!have[simd[i]]) continue;
        run_on(simd[i], xp_i8_run, &v1);
        CHECK(same_bits(y0, y1, n * co), "i8w conv: %s != %s", path_name(simd[i]), path_name(base));
        n_checked++;
    }
    run_on(base, xp_bf_run, &v0);
    for (int i = 0; i < n_bf; i++) {
        if (!have[bf_same[i]]) continue;
        run_on(bf_same[i], xp_bf_run, &v1);
        CHECK(same_bits(y0, y1, n * co), "bf16w conv: %s != %s", path_name(bf_same[i]), path_name(base));
        n_checked++;
    }
    vx_i8w_free(&iw), vx_bf16w_free(&bw);
    free(w), free(x), free(bias), free(y0), free(y1);
    vx_kernels_force_path(vx_cpu()->path);
    printf("same bits across paths: %d comparisons\n", n_checked);
}

/* ------------------------------------------------------------------------------ main */
/* Runs this program with `var`=`value`: returns the path it chose, with *refused set when engine
 * creation would refuse (vx_cpu_check) and the message in msg. -1 when the child failed. */
static int run_child_path(const char *self, const char *var, const char *value, int *refused, char *msg, size_t cap) {
    int fd[2];
    *refused = 0;
    msg[0] = '\0';
    if (pipe(fd) != 0) return -1;
    /* Under user-mode emulation (a cross build run by qemu-aarch64) the child must be started by the
     * emulator too: VOX_TEST_EMULATOR names it (its words split at spaces), and the program is the
     * file /proc/self/exe links to (the emulator reports the emulated program's path). */
    const char *emu = getenv("VOX_TEST_EMULATOR");
    char exe[4096], words[1024];
    char *argv[40];
    int argc = 0;
    if (emu && *emu) {
        ssize_t len = readlink(self, exe, sizeof exe - 1);
        if (len <= 0) return -1;
        exe[len] = 0;
        snprintf(words, sizeof words, "%s", emu);
        for (char *save = NULL, *t = strtok_r(words, " ", &save); t && argc < 36; t = strtok_r(NULL, " ", &save))
            argv[argc++] = t;
        argv[argc++] = exe;
    } else {
        argv[argc++] = (char *)self;
    }
    argv[argc++] = "--print-path";
    argv[argc] = NULL;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fd[1], 1);
        close(fd[0]);
        unsetenv("VOX_CPU");
        unsetenv("VOX_CPU_PATH");
        setenv(var, value, 1);
        execvp(argv[0], argv);
        _exit(127);
    }
    close(fd[1]);
    char buf[512] = {0};
    size_t got = 0;
    ssize_t r;
    while (got < sizeof buf - 1 && (r = read(fd[0], buf + got, sizeof buf - 1 - got)) > 0) got += (size_t)r;
    close(fd[0]);
    int status;
    waitpid(pid, &status, 0);
    int path = -1, ref = 0, off = 0;
    if (sscanf(buf, "%d %d %n", &path, &ref, &off) < 2) return -1;
    *refused = ref;
    snprintf(msg, cap, "%s", buf + off);
    msg[strcspn(msg, "\n")] = '\0';
    return path;
}

/* VOX_CPU: each path the CPU has is chosen exactly; each it lacks is refused with a message naming it;
 * auto is the best; an unknown name and VOX_CPU_PATH are refused too. */
static void test_cpu_switch(void) {
    const vx_cpu_info *ci = vx_cpu();
    char msg[512];
    int refused;
    for (int p = 0; p < VX_PATHS; p++) {
        const char *name = vx_path((vx_cpu_path)p)->name;
        int got = run_child_path("/proc/self/exe", "VOX_CPU", name, &refused, msg, sizeof msg);
        if (vx_cpu_supports((vx_cpu_path)p)) {
            CHECK(got == p && !refused, "VOX_CPU=%s gives path %d (refused %d: %s), expected %d", name, got, refused, msg, p);
        } else {
            CHECK(got == (int)ci->best && refused && strstr(msg, "not supported on this CPU") && strstr(msg, name),
                  "VOX_CPU=%s on a CPU without it: path %d, refused %d (%s)", name, got, refused, msg);
            printf("path %s: not supported on this CPU (needs %s): VOX_CPU=%s is refused\n", name,
                   vx_path((vx_cpu_path)p)->needs, name);
        }
    }
    int got = run_child_path("/proc/self/exe", "VOX_CPU", "auto", &refused, msg, sizeof msg);
    CHECK(got == (int)ci->best && !refused, "VOX_CPU=auto: path %d (refused %d), expected %d", got, refused, (int)ci->best);
    got = run_child_path("/proc/self/exe", "VOX_CPU", "avx3", &refused, msg, sizeof msg);
    CHECK(got == (int)ci->best && refused && strstr(msg, "unknown kernel path"), "VOX_CPU=avx3: %d %d (%s)", got, refused, msg);
    got = run_child_path("/proc/self/exe", "VOX_CPU_PATH", "avx2", &refused, msg, sizeof msg);
    CHECK(refused && strstr(msg, "VOX_CPU_PATH is no longer read"), "VOX_CPU_PATH=avx2: %d %d (%s)", got, refused, msg);
    /* as on a CPU without AVX-512 and AVX-VNNI (Zen 3): avx2 is the best, the wider paths are refused */
    if (vx_cpu_supports(VX_PATH_AVX2)) {
        setenv("VOX_CPU_MASK", "avx512f,avxvnni", 1);
        got = run_child_path("/proc/self/exe", "VOX_CPU", "auto", &refused, msg, sizeof msg);
        CHECK(got == VX_PATH_AVX2 && !refused, "VOX_CPU_MASK=avx512f,avxvnni: best path %d, expected avx2", got);
        const char *wider[] = {"avx2-vnni", "avx512", "avx512-vnni", "avx512-vnni-bf16", "amx"};
        for (int i = 0; i < 5; i++) {
            got = run_child_path("/proc/self/exe", "VOX_CPU", wider[i], &refused, msg, sizeof msg);
            CHECK(got == VX_PATH_AVX2 && refused && strstr(msg, "not supported on this CPU"),
                  "masked CPU, VOX_CPU=%s: path %d refused %d (%s)", wider[i], got, refused, msg);
        }
        unsetenv("VOX_CPU_MASK");
    }
    /* aarch64, as on a Cortex-A72 (no DotProd) and on a CPU with DotProd and I8MM but no BF16 */
    if (vx_cpu_supports(VX_PATH_NEON_I8MM_BF16)) {
        static const struct { const char *mask; vx_cpu_path best; } arm[] = {{"dotprod", VX_PATH_NEON},
                                                                             {"bf16", VX_PATH_NEON_I8MM}};
        for (int m = 0; m < 2; m++) {
            setenv("VOX_CPU_MASK", arm[m].mask, 1);
            got = run_child_path("/proc/self/exe", "VOX_CPU", "auto", &refused, msg, sizeof msg);
            CHECK(got == (int)arm[m].best && !refused, "VOX_CPU_MASK=%s: best path %d, expected %s", arm[m].mask, got,
                  vx_path(arm[m].best)->name);
            for (int p = arm[m].best + 1; p <= VX_PATH_NEON_I8MM_BF16; p++) {
                const char *name = vx_path((vx_cpu_path)p)->name;
                got = run_child_path("/proc/self/exe", "VOX_CPU", name, &refused, msg, sizeof msg);
                CHECK(got == (int)arm[m].best && refused && strstr(msg, "not supported on this CPU"),
                      "masked CPU (%s), VOX_CPU=%s: path %d refused %d (%s)", arm[m].mask, name, got, refused, msg);
            }
            unsetenv("VOX_CPU_MASK");
        }
    }
}

/* ------------------------------------------------------------------------------ bf16 dot products */
/* vx_linear_bf16w vs double sums of the bf16-rounded operands (products are exact in f32, so only the
 * f32 sums round: bound gamma_(K+2) * sum |x w|); 1, 2, 3 threads and a row alone give the same bits;
 * shapes the packing cannot take are refused. */
static void test_linear_bf16w(void) {
    const vx_dot_caps dots = vx_cpu_dots();
    float one = 1.0f;
    vx_mat odd = {.dtype = VOX_DTYPE_F32, .rows = 48, .cols = 1, .data = &one}, ok = {.dtype = VOX_DTYPE_F32, .rows = 64,
                                                                                         .cols = 1, .data = fvec(64, -1, 1)};
    vx_bf16w pk;
    CHECK(vx_bf16w_pack(&odd, &pk) == VOX_ERR_UNSUPPORTED && pk.data == NULL, "bf16w: 48-row matrix accepted");
    if (!dots.bf16) { /* a path without the kernel refuses to pack */
        CHECK(vx_bf16w_pack(&ok, &pk) == VOX_ERR_UNSUPPORTED && pk.data == NULL, "%s: bf16w packed without a kernel",
              path_name(cur_path));
        printf("  bf16w: no bf16 kernel on %s: the refusal checked\n", path_name(cur_path));
        free((void *)ok.data);
        return;
    }
    free((void *)ok.data);
    const int rx = dots.bf16_rounds_x; /* vdpbf16ps: x rounded to bf16 too */
    static const int64_t shapes[][3] = {{64, 33, 7}, {128, 771, 37}, {256, 300, 200}, {64, 2, 1}, {64, 129, 5}};
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
        const int64_t rows = shapes[si][0], cols = shapes[si][1], n = shapes[si][2];
        float *w = fvec(rows * cols, -1.0f, 1.0f), *x = fvec(n * cols, -2.0f, 2.0f), *bias = fvec(rows, -1.0f, 1.0f);
        vx_mat m = {.dtype = VOX_DTYPE_F32, .rows = rows, .cols = cols, .data = w};
        CHECK(vx_bf16w_pack(&m, &pk) == VOX_OK, "bf16w pack %lldx%lld: %s", (long long)rows, (long long)cols, vox_last_error());
        float *y[4];
        for (int t = 1; t <= 3; t++) {
            y[t] = malloc(sizeof(float) * (size_t)(n * rows));
            CHECK(vx_linear_bf16w(pools[t], &pk, bias, x, n, y[t]) == VOX_OK, "bf16w linear: %s", vox_last_error());
        }
        CHECK(same_bits(y[1], y[2], n * rows) && same_bits(y[1], y[3], n * rows), "bf16w %lldx%lld n=%lld: threads change bits",
              (long long)rows, (long long)cols, (long long)n);
        double worst = 0.0;
        for (int64_t i = 0; i < n; i++)
            for (int64_t r = 0; r < rows; r++) {
                double ref = bias[r], mag = fabs(bias[r]);
                for (int64_t k = 0; k < cols; k++) {
                    double p = (double)(rx ? bf16_round(x[i * cols + k]) : x[i * cols + k]) * (double)bf16_round(w[r * cols + k]);
                    ref += p, mag += fabs(p);
                }
                double err = fabs((double)y[1][i * rows + r] - ref), tol = (double)(cols + 2) * U32 * mag + 1e-30;
                if (err / tol > worst) worst = err / tol;
                if (err > tol) {
                    CHECK(0, "bf16w %lldx%lld y[%lld][%lld]=%.9g ref=%.9g", (long long)rows, (long long)cols, (long long)i,
                          (long long)r, y[1][i * rows + r], ref);
                    i = n;
                    break;
                }
            }
        if (verbose) printf("  bf16w %lldx%lld n=%lld: worst err/bound %.3f\n", (long long)rows, (long long)cols, (long long)n, worst);
        float *y1 = malloc(sizeof(float) * (size_t)rows);
        int64_t probe = n / 2;
        CHECK(vx_linear_bf16w(pools[2], &pk, bias, x + probe * cols, 1, y1) == VOX_OK, "bf16w single row");
        CHECK(same_bits(y1, y[1] + probe * rows, rows), "bf16w %lldx%lld: row alone != in batch", (long long)rows, (long long)cols);
        free(y1);
        for (int t = 1; t <= 3; t++) free(y[t]);
        vx_bf16w_free(&pk);
        free(w), free(x), free(bias);
    }
    /* vx_bf16w_pack_f32 (the attention's keys and values): from a strided matrix, as is and transposed, the
     * words of vx_bf16w_pack of the zero-padded contiguous copy; signed zeros, denormals, infinities and
     * NaN among the values */
    static const int64_t strided[][2] = {{70, 33}, {64, 64}, {1, 8}, {131, 64}};
    for (size_t si = 0; si < sizeof strided / sizeof strided[0]; si++) {
        const int64_t rows = strided[si][0], cols = strided[si][1], ld = (rows > cols ? rows : cols) + 3;
        const int64_t rpad = (rows + 63) / 64 * 64, cpad = (cols + 63) / 64 * 64;
        float *src = fvec(ld * ld, -2.0f, 2.0f);
        static const float special[] = {-0.0f, 1e-40f, -3e-39f, INFINITY, -INFINITY, NAN, 0x1.00ffp0f, 0x1.0180p0f};
        for (int e = 0; e < 8; e++) src[(e * 7 % rows) * ld + e * 5 % cols] = special[e];
        for (int tr = 0; tr <= 1; tr++) {
            const int64_t pr = tr ? cols : rows, pc = tr ? rows : cols, prp = tr ? cpad : rpad; /* the packed matrix */
            float *dense = calloc((size_t)(prp * pc), sizeof *dense);
            for (int64_t r = 0; r < pr; r++)
                for (int64_t c = 0; c < pc; c++) dense[r * pc + c] = tr ? src[c * ld + r] : src[r * ld + c];
            vx_mat m = {.dtype = VOX_DTYPE_F32, .rows = prp, .cols = pc, .data = dense};
            vx_bf16w want, got;
            CHECK(vx_bf16w_pack(&m, &want) == VOX_OK, "bf16w pack %lldx%lld", (long long)prp, (long long)pc);
            uint32_t *buf = aligned_alloc(64, (size_t)(prp * ((pc + 1) / 2) * 4 + 64));
            vx_bf16w_pack_f32(src, ld, pr, pc, prp, tr, buf, &got);
            CHECK(got.rows == want.rows && got.cols == want.cols && got.pairs == want.pairs && got.taps == 1 &&
                      !memcmp(got.data, want.data, (size_t)(prp * want.pairs) * 4),
                  "bf16w_pack_f32 %lldx%lld%s: not vx_bf16w_pack's words", (long long)pr, (long long)pc, tr ? " transposed" : "");
            vx_bf16w_free(&want);
            free(buf), free(dense);
        }
        free(src);
    }
    /* vx_nn_conv1d_bf16w (F5's grouped position convolutions): against a double-precision grouped
     * convolution of the bf16-rounded weights (and inputs, where the kernel rounds them), zero-padded; the
     * same bits for 1-3 threads. Output channels per group not a multiple of 64 (the packing pads them). */
    static const int64_t gc[][5] = {/* c_in, groups, og, k, t */ {24, 4, 5, 7, 40}, {128, 2, 64, 31, 70}, {64, 16, 4, 31, 9}};
    for (size_t ci = 0; ci < sizeof gc / sizeof gc[0]; ci++) {
        const int64_t c_in = gc[ci][0], groups = gc[ci][1], og = gc[ci][2], k = gc[ci][3], t = gc[ci][4];
        const int64_t cg = c_in / groups, c_out = og * groups, pl = k / 2, pr = k - 1 - k / 2;
        float *w = fvec(c_out * cg * k, -1, 1), *x = fvec(t * c_in, -2, 2), *bias = fvec(c_out, -1, 1), *y[4];
        vx_mat m = {.dtype = VOX_DTYPE_F32, .rows = c_out, .cols = cg * k, .data = w};
        vx_nn_gconv_bf16 gw;
        CHECK(vx_nn_conv1d_bf16w_pack(&m, c_in, k, groups, &gw) == VOX_OK, "conv1d bf16 pack: %s", vox_last_error());
        for (int th = 1; th <= 3; th++) {
            y[th] = malloc(sizeof(float) * (size_t)(t * c_out));
            CHECK(vx_nn_conv1d_bf16w(pools[th], &gw, bias, x, t, c_in, pl, pr, y[th]) == VOX_OK, "conv1d bf16: %s", vox_last_error());
        }
        CHECK(same_bits(y[1], y[2], t * c_out) && same_bits(y[1], y[3], t * c_out), "%s conv1d bf16 cfg %zu: threads change bits",
              path_name(cur_path), ci);
        double worst = 0;
        for (int64_t i = 0; i < t; i++)
            for (int64_t o = 0; o < c_out; o++) {
                const int64_t g = o / og;
                double ref = bias[o], mag = fabs(bias[o]);
                for (int64_t c = 0; c < cg; c++)
                    for (int64_t j = 0; j < k; j++) {
                        const int64_t src = i + j - pl;
                        if (src < 0 || src >= t) continue;
                        const float xv = x[src * c_in + g * cg + c];
                        const double p = (double)(rx ? bf16_round(xv) : xv) * bf16_round(w[(o * cg + c) * k + j]);
                        ref += p, mag += fabs(p);
                    }
                worst = fmax(worst, fabs(y[1][i * c_out + o] - ref) / ((double)(cg * k + 2) * U32 * mag + 1e-30));
            }
        if (verbose) printf("  %-10s conv1d bf16 cfg %zu: worst err/bound %.3f\n", path_name(cur_path), ci, worst);
        CHECK(worst <= 1, "%s conv1d bf16 cfg %zu: err/bound %.3g", path_name(cur_path), ci, worst);
        vx_nn_conv1d_bf16w_free(&gw);
        for (int th = 1; th <= 3; th++) free(y[th]);
        free(w), free(x), free(bias);
    }
}

/* ------------------------------------------------------------------------------ q8 GEMM of packed weights */
/* Whether pk holds the bytes q8w.c's layout defines for w (computed here byte by byte): the path's
 * packer (q8w_pack_group, the AVX-512 gathers, the AVX2 / NEON transposes) word for word. */
static int q8w_layout_ok(const vx_mat *w, const vx_q8w *pk) {
    const int64_t nb = w->cols / 32;
    const int8_t *codes = w->data;
    unsigned char blk[640];
    for (int64_t g = 0; g < w->rows / 16; g++)
        for (int64_t b = 0; b < nb; b++) {
            for (int r = 0; r < 16; r++) {
                const int8_t *src = codes + (g * 16 + r) * w->cols + 32 * b;
                int32_t sum = 0;
                for (int k = 0; k < 32; k++) blk[(k / 4) * 64 + r * 4 + k % 4] = (unsigned char)src[k], sum += src[k];
                const int32_t corr = -128 * sum;
                memcpy(blk + 512 + 4 * r, &corr, 4);
                memcpy(blk + 576 + 4 * r, &w->scales[(g * 16 + r) * nb + b], 4);
            }
            if (memcmp(blk, (const unsigned char *)pk->data + (g * nb + b) * 640, 640)) return 0;
        }
    return 1;
}

/* vx_linear_q8w against its definition computed here (x quantized by vx_quantize_block_q8, exact int32
 * block sums, acc = fmaf(isum, sw * d, acc) in block order, + bias): the same bits on every path, for
 * 1, 2 and 3 threads and for a row alone; close to vx_linear of the same q8 matrix (the same products,
 * another float order); shapes the packing cannot take are refused. */
static void test_linear_q8w(void) {
    float one = 1.0f;
    vx_q8w pk;
    vx_mat f32 = {.dtype = VOX_DTYPE_F32, .rows = 16, .cols = 1, .data = &one};
    CHECK(vx_q8w_pack(&f32, &pk) == VOX_ERR_UNSUPPORTED && pk.data == NULL, "q8w: an f32 matrix accepted");
    wmat odd = make_w(VOX_DTYPE_Q8, 24, 64);
    CHECK(vx_q8w_pack(&odd.m, &pk) == VOX_ERR_UNSUPPORTED && pk.data == NULL, "q8w: a 24-row matrix accepted");
    {   /* vx_linear_q8t of a matrix it cannot pack: vx_linear's bits */
        float *ox = fvec(5 * 64, -2.0f, 2.0f), *oy = malloc(sizeof(float) * 5 * 24), *ol = malloc(sizeof(float) * 5 * 24);
        vx_linear(pools[2], &odd.m, NULL, ox, 5, ol);
        CHECK(vx_linear_q8t(pools[2], &odd.m, NULL, ox, 5, oy) == VOX_OK && same_bits(oy, ol, 5 * 24),
              "q8t: a 24-row matrix is not vx_linear's");
        free(ox), free(oy), free(ol);
    }
    free_w(&odd);
    /* vx_q8w_pack_f32 (the attention's keys): strided rows quantized as vx_linear_q8w quantizes x, the
     * bytes of vx_q8w_pack of those codes and scales, zero rows to the padding */
    {
        const int64_t rows = 37, cols = 64, ld = 75, rpad = 48, nb = cols / 32;
        float *src = fvec(rows * ld, -3.0f, 3.0f);
        int8_t *codes = calloc((size_t)(rpad * cols), 1);
        float *scales = calloc((size_t)(rpad * nb), sizeof *scales);
        for (int64_t r = 0; r < rows; r++)
            for (int64_t b = 0; b < nb; b++) scales[r * nb + b] = vx_quantize_block_q8(src + r * ld + 32 * b, codes + r * cols + 32 * b);
        vx_mat m = {.dtype = VOX_DTYPE_Q8, .rows = rpad, .cols = cols, .data = codes, .scales = scales};
        vx_q8w want, got;
        CHECK(vx_q8w_pack(&m, &want) == VOX_OK, "q8w pack: %s", vox_last_error());
        unsigned char *buf = aligned_alloc(64, vx_q8w_bytes(rpad, cols));
        memset(buf, 0xa5, vx_q8w_bytes(rpad, cols));
        vx_q8w_pack_f32(src, ld, rows, cols, rpad, buf, &got);
        CHECK(got.rows == rpad && got.cols == cols && got.nb == nb && !memcmp(buf, want.data, vx_q8w_bytes(rpad, cols)),
              "q8w_pack_f32: not vx_q8w_pack's bytes");
        vx_q8w_free(&want);
        free(buf), free(codes), free(scales), free(src);
    }
    static const int64_t shapes[][3] = {{16, 32, 1}, {64, 1024, 37}, {48, 288, 5}, {128, 64, 200}, {32, 320, 97}, {96, 2048, 9}};
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
        const int64_t rows = shapes[si][0], cols = shapes[si][1], n = shapes[si][2], nb = cols / 32;
        wmat w = make_w(VOX_DTYPE_Q8, rows, cols);
        float *x = fvec(n * cols, -2.0f, 2.0f), *bias = fvec(rows, -1.0f, 1.0f);
        CHECK(vx_q8w_pack(&w.m, &pk) == VOX_OK, "q8w pack %lldx%lld: %s", (long long)rows, (long long)cols, vox_last_error());
        CHECK(q8w_layout_ok(&w.m, &pk), "%s q8w pack %lldx%lld: not the layout's bytes", path_name(cur_path), (long long)rows,
              (long long)cols);
        float *ref = malloc(sizeof(float) * (size_t)(n * rows)), *lin = malloc(sizeof(float) * (size_t)(n * rows));
        int8_t *q = malloc((size_t)(n * cols));
        float *d = malloc(sizeof(float) * (size_t)(n * nb));
        for (int64_t i = 0; i < n; i++)
            for (int64_t b = 0; b < nb; b++) d[i * nb + b] = vx_quantize_block_q8(x + i * cols + 32 * b, q + i * cols + 32 * b);
        const int8_t *wc = w.m.data;
        for (int64_t i = 0; i < n; i++)
            for (int64_t r = 0; r < rows; r++) {
                float acc = 0.0f;
                for (int64_t b = 0; b < nb; b++) {
                    int32_t isum = 0;
                    for (int k = 0; k < 32; k++) isum += (int32_t)q[i * cols + 32 * b + k] * wc[r * cols + 32 * b + k];
                    acc = fmaf((float)isum, w.m.scales[r * nb + b] * d[i * nb + b], acc);
                }
                ref[i * rows + r] = acc + bias[r];
            }
        for (int t = 1; t <= 3; t++) {
            float *y = malloc(sizeof(float) * (size_t)(n * rows));
            CHECK(vx_linear_q8w(pools[t], &pk, bias, x, n, y) == VOX_OK, "q8w linear: %s", vox_last_error());
            CHECK(same_bits(y, ref, n * rows), "q8w %lldx%lld n=%lld, %d threads: not the definition's bits",
                  (long long)rows, (long long)cols, (long long)n, t);
            /* vx_linear_q8t (groups packed on the fly): the same bits, also without scratch memory (the
             * block-at-a-time fallback) */
            for (int refuse = 0; refuse <= 1; refuse++) {
                memset(y, 0, sizeof(float) * (size_t)(n * rows));
                vx_scratch_refuse(refuse);
                CHECK(vx_linear_q8t(pools[t], &w.m, bias, x, n, y) == VOX_OK, "q8t linear: %s", vox_last_error());
                vx_scratch_refuse(0);
                CHECK(same_bits(y, ref, n * rows), "q8t %lldx%lld n=%lld, %d threads%s: not the definition's bits",
                      (long long)rows, (long long)cols, (long long)n, t, refuse ? ", no scratch" : "");
            }
            free(y);
        }
        float *y1 = malloc(sizeof(float) * (size_t)rows);
        const int64_t probe = n / 2;
        CHECK(vx_linear_q8w(pools[2], &pk, bias, x + probe * cols, 1, y1) == VOX_OK, "q8w single row");
        CHECK(same_bits(y1, ref + probe * rows, rows), "q8w %lldx%lld: row alone != in batch", (long long)rows, (long long)cols);
        vx_linear(pools[2], &w.m, bias, x, n, lin);
        double e = 0.0, mx = 0.0;
        for (int64_t k = 0; k < n * rows; k++) {
            if (fabs(lin[k] - ref[k]) > e) e = fabs(lin[k] - ref[k]);
            if (fabs(ref[k]) > mx) mx = fabs(ref[k]);
        }
        e /= mx;
        CHECK(e < 1e-5, "q8w %lldx%lld n=%lld vs vx_linear: %.3g", (long long)rows, (long long)cols, (long long)n, e);
        if (verbose) printf("  q8w %lldx%lld n=%lld: the definition's bits; vs vx_linear %.3g\n", (long long)rows, (long long)cols,
                            (long long)n, e);
        free(y1), free(ref), free(lin), free(q), free(d);
        vx_q8w_free(&pk);
        free_w(&w), free(x), free(bias);
    }
}

/* vx_conv1d_bf16w (tap-major packed Conv1d weight, no im2col) vs double sums of the bf16-rounded
 * operands over (channel, tap) in torch's weight order; threads and a row alone give the same bits. */
static void test_conv1d_bf16w(void) {
    const vx_dot_caps dots = vx_cpu_dots();
    if (!dots.bf16) return; /* the refusal: test_linear_bf16w */
    const int rx = dots.bf16_rounds_x;
    static const int64_t shapes[][5] = {{64, 6, 3, 1, 50}, {128, 130, 7, 3, 101}, {64, 256, 11, 5, 13}, {64, 2, 1, 1, 9}};
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
        const int64_t co = shapes[si][0], c = shapes[si][1], k = shapes[si][2], dil = shapes[si][3], n = shapes[si][4];
        const int64_t n_in = n + dil * (k - 1);
        float *w = fvec(co * c * k, -1.0f, 1.0f), *x = fvec(n_in * c, -2.0f, 2.0f), *bias = fvec(co, -1.0f, 1.0f);
        vx_mat m = {.dtype = VOX_DTYPE_F32, .rows = co, .cols = c * k, .data = w};
        vx_bf16w pk;
        CHECK(vx_bf16w_pack_conv(&m, c, k, &pk) == VOX_OK, "bf16w conv pack: %s", vox_last_error());
        float *y[4];
        for (int t = 1; t <= 3; t++) {
            y[t] = malloc(sizeof(float) * (size_t)(n * co));
            CHECK(vx_conv1d_bf16w(pools[t], &pk, bias, x, n, dil, y[t]) == VOX_OK, "bf16w conv: %s", vox_last_error());
        }
        CHECK(same_bits(y[1], y[2], n * co) && same_bits(y[1], y[3], n * co), "bf16w conv c%lld k%lld: threads change bits",
              (long long)c, (long long)k);
        int bad = 0;
        for (int64_t t = 0; t < n && !bad; t++)
            for (int64_t r = 0; r < co; r++) {
                double ref = bias[r], mag = fabs(bias[r]);
                for (int64_t ch = 0; ch < c; ch++)
                    for (int64_t j = 0; j < k; j++) {
                        const float xv = x[(t + j * dil) * c + ch];
                        double p = (double)(rx ? bf16_round(xv) : xv) * (double)bf16_round(w[(r * c + ch) * k + j]);
                        ref += p, mag += fabs(p);
                    }
                if (fabs((double)y[1][t * co + r] - ref) > (double)(c * k + 2) * U32 * mag + 1e-30) {
                    CHECK(0, "bf16w conv c%lld k%lld dil%lld y[%lld][%lld]=%.9g ref=%.9g", (long long)c, (long long)k,
                          (long long)dil, (long long)t, (long long)r, y[1][t * co + r], ref);
                    bad = 1;
                    break;
                }
            }
        float *y1 = malloc(sizeof(float) * (size_t)co);
        CHECK(vx_conv1d_bf16w(pools[2], &pk, bias, x + (n - 1) * c, 1, dil, y1) == VOX_OK, "bf16w conv one row");
        CHECK(same_bits(y1, y[1] + (n - 1) * co, co), "bf16w conv c%lld k%lld: last row alone != in batch", (long long)c,
              (long long)k);
        free(y1);
        for (int t = 1; t <= 3; t++) free(y[t]);
        vx_bf16w_free(&pk);
        free(w), free(x), free(bias);
    }
    vx_mat odd = {.dtype = VOX_DTYPE_F32, .rows = 64, .cols = 9, .data = NULL};
    vx_bf16w pk;
    CHECK(vx_bf16w_pack_conv(&odd, 3, 3, &pk) == VOX_ERR_UNSUPPORTED, "bf16w conv: odd c_in accepted");
}

/* vx_conv1d_i8w: the same bits as its scalar model (vx_conv1d_i8w_model) for any thread count and for
 * a row alone; within the bound the 8-bit rounding of both operands allows of the exact f32 convolution
 * (computed here in double from the unquantized operands); constant rows and an all-zero channel. */
static void test_conv1d_i8w(void) {
    vx_mat odd = {.dtype = VOX_DTYPE_F32, .rows = 48, .cols = 9, .data = NULL};
    vx_i8w pk;
    CHECK(vx_i8w_pack_conv(&odd, 3, 3, &pk) == VOX_ERR_UNSUPPORTED && pk.data == NULL, "i8w conv: 48 rows accepted");
    if (!vx_cpu_dots().int8) { /* a path without the kernel refuses to pack */
        float *w = fvec(64 * 9, -1, 1);
        vx_mat ok = {.dtype = VOX_DTYPE_F32, .rows = 64, .cols = 9, .data = w};
        CHECK(vx_i8w_pack_conv(&ok, 3, 3, &pk) == VOX_ERR_UNSUPPORTED && pk.data == NULL, "%s: i8w packed without a kernel",
              path_name(cur_path));
        printf("  i8w: no int8 kernel on %s: the refusal checked\n", path_name(cur_path));
        free(w);
        return;
    }
    static const int64_t shapes[][5] = {{64, 6, 3, 1, 50}, {128, 130, 7, 3, 101}, {64, 256, 11, 5, 13}, {64, 2, 1, 1, 9},
                                        {128, 128, 11, 5, 200}};
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
        const int64_t co = shapes[si][0], c = shapes[si][1], k = shapes[si][2], dil = shapes[si][3], n = shapes[si][4];
        const int64_t n_in = n + dil * (k - 1);
        float *w = fvec(co * c * k, -1.0f, 1.0f), *x = fvec(n_in * c, -2.0f, 2.0f), *bias = fvec(co, -1.0f, 1.0f);
        for (int64_t i = 0; i < c * k; i++) w[5 * c * k + i] = 0.0f;        /* channel 5: all zero */
        for (int64_t i = 0; i < c; i++) x[2 * c + i] = 0.75f, x[3 * c + i] = 0.0f; /* constant rows */
        vx_mat m = {.dtype = VOX_DTYPE_F32, .rows = co, .cols = c * k, .data = w};
        CHECK(vx_i8w_pack_conv(&m, c, k, &pk) == VOX_OK, "i8w conv pack: %s", vox_last_error());
        float *y[4], *ym = malloc(sizeof(float) * (size_t)(n * co));
        for (int t = 1; t <= 3; t++) {
            y[t] = malloc(sizeof(float) * (size_t)(n * co));
            CHECK(vx_conv1d_i8w(pools[t], &pk, bias, x, n, dil, y[t]) == VOX_OK, "i8w conv: %s", vox_last_error());
        }
        vx_conv1d_i8w_model(&pk, bias, x, n, dil, ym);
        CHECK(same_bits(y[1], y[2], n * co) && same_bits(y[1], y[3], n * co), "i8w conv c%lld k%lld: threads change bits",
              (long long)c, (long long)k);
        CHECK(same_bits(y[1], ym, n * co), "i8w conv c%lld k%lld: kernel != scalar model", (long long)c, (long long)k);
        /* |sum w'x' - sum wx| <= sum |w| ex + |x| ew + ew ex, ex = input row range / 510, ew = scale / 2 */
        double *ex = malloc(sizeof(double) * (size_t)n_in);
        for (int64_t t = 0; t < n_in; t++) {
            double lo = x[t * c], hi = x[t * c];
            for (int64_t i = 0; i < c; i++) lo = fmin(lo, x[t * c + i]), hi = fmax(hi, x[t * c + i]);
            ex[t] = (hi - lo) / 510.0 * (1.0 + 1e-6);
        }
        int bad = 0;
        double worst = 0.0;
        for (int64_t t = 0; t < n && !bad; t++)
            for (int64_t r = 0; r < co; r++) {
                const double ew = pk.scale[r] / 2.0 * (1.0 + 1e-6);
                double ref = bias[r], bound = 0.0, mag = fabs(bias[r]);
                for (int64_t ch = 0; ch < c; ch++)
                    for (int64_t j = 0; j < k; j++) {
                        double xv = x[(t + j * dil) * c + ch], wv = w[(r * c + ch) * k + j];
                        double e = ex[t + j * dil];
                        ref += xv * wv;
                        mag += fabs(xv * wv);
                        bound += fabs(wv) * e + (fabs(xv) + e) * (wv != 0.0 ? ew : 0.0);
                    }
                bound += (double)(2 * k + 2) * U32 * (mag + bound) * 4.0 + 1e-30;
                double err = fabs((double)y[1][t * co + r] - ref);
                if (err / bound > worst) worst = err / bound;
                if (err > bound || (r == 5 && y[1][t * co + r] != bias[r])) {
                    CHECK(0, "i8w conv c%lld k%lld dil%lld y[%lld][%lld]=%.9g ref=%.9g bound %.3g", (long long)c,
                          (long long)k, (long long)dil, (long long)t, (long long)r, y[1][t * co + r], ref, bound);
                    bad = 1;
                    break;
                }
            }
        if (verbose) printf("  i8w conv c%lld k%lld: worst err/bound %.3f\n", (long long)c, (long long)k, worst);
        float *y1 = malloc(sizeof(float) * (size_t)co);
        CHECK(vx_conv1d_i8w(pools[2], &pk, bias, x + (n - 1) * c, 1, dil, y1) == VOX_OK, "i8w conv one row");
        CHECK(same_bits(y1, y[1] + (n - 1) * co, co), "i8w conv c%lld k%lld: last row alone != in batch", (long long)c,
              (long long)k);
        free(y1), free(ex), free(ym);
        for (int t = 1; t <= 3; t++) free(y[t]);
        vx_i8w_free(&pk);
        free(w), free(x), free(bias);
    }
}

/* vx_conv1d_i8w_ex (the generator's fused form): zero padding, the per-channel map (affine, Snake) of
 * each input row, the residual added in the epilogue and the output moments give the same bits as the
 * unfused sequence (the map's scalar model, rows padded by hand, the scalar convolution model, then
 * + res) for any thread count, in place too; the map is within 1e-6 of Snake computed in double; the
 * moments match a double computation of y's and do not depend on the thread count. */
static void test_conv1d_i8w_ex(void) {
    if (!vx_cpu_dots().int8) return; /* the refusal: test_conv1d_i8w */
    static const int64_t shapes[][5] = {{64, 40, 3, 1, 50}, {128, 130, 7, 3, 301}, {64, 256, 11, 5, 97}, {128, 128, 3, 1, 1}};
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
        const int64_t co = shapes[si][0], c = shapes[si][1], k = shapes[si][2], dil = shapes[si][3], t = shapes[si][4];
        const int64_t pad = dil * (k - 1) / 2, n_in = t + 2 * pad;
        float *w = fvec(co * c * k, -1.0f, 1.0f), *x = fvec(t * c, -2.0f, 2.0f), *bias = fvec(co, -1.0f, 1.0f);
        float *mul = fvec(c, 0.2f, 2.0f), *add = fvec(c, -1.0f, 1.0f), *alpha = fvec(c, 0.1f, 3.0f);
        float *inv = malloc(sizeof(float) * (size_t)c), *res = fvec(t * co, -3.0f, 3.0f);
        for (int64_t i = 0; i < c; i++) inv[i] = 1.0f / alpha[i];
        if (t > 5)
            for (int64_t i = 0; i < c; i += 3) x[5 * c + i] = 3000.0f + (float)i; /* Snake arguments past 4096: libm */
        vx_mat m = {.dtype = VOX_DTYPE_F32, .rows = co, .cols = c * k, .data = w};
        vx_i8w pk;
        CHECK(vx_i8w_pack_conv(&m, c, k, &pk) == VOX_OK, "i8w ex pack: %s", vox_last_error());
        float *xp = calloc((size_t)(n_in * c), sizeof(float)), *ym = malloc(sizeof(float) * (size_t)(t * co));
        const vx_i8_pre pre = {mul, add, alpha, inv};
        vx_i8_map_model(x, t, c, &pre, xp + pad * c);
        /* the map's own accuracy: Snake within 1e-6 of a double computation (the rows are 8-bit next) */
        double map_err = 0.0;
        for (int64_t r = 0; r < t; r++)
            for (int64_t i = 0; i < c; i++) {
                double v = (double)(x[r * c + i] * mul[i] + add[i]), sv = sin(v * alpha[i]);
                double e = fabs(xp[(r + pad) * c + i] - (v + sv * sv / alpha[i])) / (fabs(v) + 1.0 / alpha[i]);
                map_err = e > map_err ? e : map_err;
            }
        CHECK(map_err < 1e-6, "i8w ex c%lld: Snake map error %.3g", (long long)c, map_err);
        vx_conv1d_i8w_model(&pk, bias, xp, t, dil, ym);
        for (int64_t i = 0; i < t * co; i++) ym[i] = res[i] + ym[i];
        double *mm = calloc((size_t)(2 * co), sizeof(double));
        for (int64_t r = 0; r < co; r++) {
            for (int64_t i = 0; i < t; i++) mm[r] += ym[i * co + r];
            mm[r] /= (double)t;
            for (int64_t i = 0; i < t; i++) mm[co + r] += (ym[i * co + r] - mm[r]) * (ym[i * co + r] - mm[r]);
        }
        float *y[4];
        double *mo[4];
        for (int th = 1; th <= 3; th++) {
            y[th] = malloc(sizeof(float) * (size_t)(t * co));
            mo[th] = malloc(sizeof(double) * (size_t)(2 * co));
            const vx_i8_conv a = {.x = x, .t_in = t, .pad_l = pad, .pad_r = pad, .dil = dil, .pre = &pre, .res = res,
                                  .y = y[th], .mean = mo[th], .m2 = mo[th] + co};
            CHECK(vx_conv1d_i8w_ex(pools[th], &pk, bias, &a) == VOX_OK, "i8w ex: %s", vox_last_error());
        }
        CHECK(same_bits(y[1], ym, t * co), "i8w ex c%lld k%lld: != map, pad, scalar model, + res", (long long)c, (long long)k);
        CHECK(same_bits(y[1], y[2], t * co) && same_bits(y[1], y[3], t * co), "i8w ex c%lld k%lld: threads change bits",
              (long long)c, (long long)k);
        CHECK(memcmp(mo[1], mo[2], sizeof(double) * (size_t)(2 * co)) == 0 &&
                  memcmp(mo[1], mo[3], sizeof(double) * (size_t)(2 * co)) == 0,
              "i8w ex c%lld k%lld: threads change the moments", (long long)c, (long long)k);
        for (int64_t r = 0; r < co; r++) {
            /* f32 sums within blocks of rows, merged in double: a few f32 roundings per block */
            CHECK(fabs(mo[1][r] - mm[r]) <= 1e-6 * (fabs(mm[r]) + sqrt(mm[co + r] / (double)t)) + 1e-300,
                  "i8w ex mean[%lld] %.17g != %.17g", (long long)r, mo[1][r], mm[r]);
            CHECK(fabs(mo[1][co + r] - mm[co + r]) <= 1e-5 * mm[co + r] + 1e-300, "i8w ex m2[%lld] %.17g != %.17g",
                  (long long)r, mo[1][co + r], mm[co + r]);
        }
        /* in place: res is y */
        memcpy(y[2], res, sizeof(float) * (size_t)(t * co));
        const vx_i8_conv ip = {.x = x, .t_in = t, .pad_l = pad, .pad_r = pad, .dil = dil, .pre = &pre, .res = y[2], .y = y[2]};
        CHECK(vx_conv1d_i8w_ex(pools[2], &pk, bias, &ip) == VOX_OK, "i8w ex in place: %s", vox_last_error());
        CHECK(same_bits(y[1], y[2], t * co), "i8w ex c%lld k%lld: in place != out of place", (long long)c, (long long)k);
        for (int th = 1; th <= 3; th++) free(y[th]), free(mo[th]);
        vx_i8w_free(&pk);
        free(w), free(x), free(bias), free(mul), free(add), free(alpha), free(inv), free(res), free(xp), free(ym), free(mm);
    }
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "--list-paths") == 0) { /* the paths this CPU has (CTest's per-path tests) */
        for (int p = 0; p < VX_PATHS; p++)
            if (vx_cpu_supports((vx_cpu_path)p)) printf("%s\n", vx_path((vx_cpu_path)p)->name);
        return 0;
    }
    if (argc > 1 && strcmp(argv[1], "--print-path") == 0) {
        const vx_cpu_info *c = vx_cpu();
        const int refused = vx_cpu_check() != VOX_OK;
        printf("%d %d %s\n", (int)c->path, refused, refused ? vox_last_error() : c->why);
        return 0;
    }
    verbose = getenv("VOX_TEST_VERBOSE") != NULL;
    quick = getenv("VOX_TEST_QUICK") && strcmp(getenv("VOX_TEST_QUICK"), "1") == 0;
    const vx_cpu_info *ci = vx_cpu();
    printf("cpu: path %s, best %s (avx2 %d fma %d f16c %d avx512f %d bw %d dq %d vl %d vnni %d bf16 %d avxvnni %d amx %d/%d/%d; "
           "neon %d dotprod %d i8mm %d bf16 %d)\n",
           ci->name, path_name(ci->best), ci->avx2, ci->fma, ci->f16c, ci->avx512f, ci->avx512bw, ci->avx512dq,
           ci->avx512vl, ci->avx512vnni, ci->avx512bf16, ci->avxvnni, ci->amx_tile, ci->amx_int8, ci->amx_bf16, ci->neon,
           ci->dotprod, ci->i8mm, ci->bf16);

    double tc = now_s();
    if (getenv("VOX_CPU") == NULL && getenv("VOX_CPU_PATH") == NULL) test_cpu_switch();
    if (verbose) printf("  VOX_CPU children: %.2f s\n", now_s() - tc);
    for (int t = 1; t <= 3; t++) {
        vx_pool_opts o = {.n_threads = t, .spin_us = 200};
        CHECK(vx_pool_create(&o, &pools[t]) == VOX_OK, "pool of %d: %s", t, vox_last_error());
    }
    double t0 = now_s();
    test_pool();
    if (verbose) printf("  pool: %.2f s\n", now_s() - t0);
    t0 = now_s();
    test_fft();
    if (verbose) printf("  fft: %.2f s\n", now_s() - t0);
    /* every path: the ones this CPU has run every test, the others are listed as not supported.
     * VOX_TEST_KERNEL_PATHS=neon,...: only those paths' kernel tests (under CPU emulation, where a
     * smaller emulated CPU re-runs just its own path: scripts/test-aarch64.sh); the rest is unchanged */
    const char *only = getenv("VOX_TEST_KERNEL_PATHS");
    test_f32_to_f16();   /* scalar: once */
    for (int p = 0; p < VX_PATHS; p++) {
        if (only && *only) {
            char list[256];
            snprintf(list, sizeof list, ",%s,", only);
            char want[48];
            snprintf(want, sizeof want, ",%s,", path_name(p));
            if (!strstr(list, want)) {
                printf("path %s: left out by VOX_TEST_KERNEL_PATHS=%s\n", path_name(p), only);
                continue;
            }
        }
        if (!vx_kernels_force_path((vx_cpu_path)p)) {
            CHECK(!vx_cpu_supports((vx_cpu_path)p), "cannot select path %s", path_name(p));
            printf("path %s: not supported on this CPU (needs %s)\n", path_name(p), vx_path((vx_cpu_path)p)->needs);
            continue;
        }
        cur_path = p;
        const vx_dot_caps dots = vx_cpu_dots();
        printf("path %s (%s; int8 convolution: %s; bf16: %s)\n", path_name(p), vx_kernels_active()->name,
               dots.int8 ? dots.int8 : "none", dots.bf16 ? dots.bf16 : "none");
        fflush(stdout);
        static void (*const tests[])(void) = {test_qact_exact, test_linear, test_linear_multi, test_matmul_nn,
                                              test_attention, test_exp_rows, test_nn_attention, test_norms, test_elementwise, test_rope_conv_gather,
                                              test_channel_moments, test_harmonic_source, test_conv1d_f32,
                                              test_linear_bf16w, test_linear_q8w,
                                              test_conv1d_bf16w, test_conv1d_i8w, test_conv1d_i8w_ex};
        static const char *names[] = {"qact", "linear", "linear_multi", "matmul_nn", "attention", "exp_rows", "nn_attention", "norms",
                                      "elementwise", "rope/conv/gather", "moments", "harmonic", "conv f32", "bf16w", "q8w",
                                      "bf16w conv", "i8w conv", "i8w fused"};
        _Static_assert(sizeof tests / sizeof tests[0] == sizeof names / sizeof names[0], "a name per test");
        for (size_t t = 0; t < sizeof tests / sizeof tests[0]; t++) {
            double t1 = now_s();
            tests[t]();
            if (verbose) printf("  %-16s %s: %.2f s\n", path_name(p), names[t], now_s() - t1);
        }
    }
    vx_kernels_force_path(ci->path);
    test_same_bits_across_paths();
    for (int t = 1; t <= 3; t++) vx_pool_free(pools[t]);
    if (fails == 0) printf("kernels: all checks passed\n");
    return fails != 0;
}
