/* Kernel benchmarks on the real Qwen3-TTS shapes (not a test: built, never run by CTest).
 *
 *   bench_kernels [--path NAME] [--threads 1,2] [--only gemv,gemm,nn,conv,q8,misc,acc,peak] [--quick]
 *
 * --path: a kernel path of kernels.h (scalar, avx2, avx2-vnni, avx512, avx512-vnni, avx512-vnni-bf16, amx);
 * the default is the one VOX_CPU or the CPU gives. conv: the Kokoro generator's and decoder's
 * convolutions through the packed int8 and bf16 kernels and the f32 im2col GEMM.
 *
 * GEMV: weight bytes streamed per second (GB/s) and GFLOP/s, "hot" (the same matrix again and again:
 * cache-resident when it fits) and "cold" (cycling through copies totalling > 3x the L3, so weights
 * come from DRAM as during decoding). GEMM: GFLOP/s (2 rows cols n per call). Also the machine's
 * read bandwidth and FMA peak for reference, and the accuracy numbers behind two design choices
 * (bf16 weights in exact f32 math vs vdpbf16ps; int8-quantized activations for q8/q4 weights). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__)
#  include <immintrin.h>
#endif

#include "cpu/dispatch.h"
#include "kernels.h"
#include "nn/nn.h"
#include "pool.h"

/* VOX_BENCH_CPUTIME=1: the process's CPU time instead of the wall clock (on a shared machine, a
 * one-thread benchmark is then not charged for the time other processes hold its core) */
static double now_s(void) {
    static int cpu = -1;
    if (cpu < 0) cpu = getenv("VOX_BENCH_CPUTIME") != NULL;
    struct timespec ts;
    clock_gettime(cpu ? CLOCK_PROCESS_CPUTIME_ID : CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static uint64_t rs = 0x243f6a8885a308d3ull;
static uint32_t rnd(void) {
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return (uint32_t)(rs >> 11);
}
static float frand(void) { return (float)(rnd() & 0xffffff) / 8388608.0f - 1.0f; }

static double min_time = 0.3;
static int quick, hot_only;

/* Best of batches (each long enough to time reliably): the machine may be shared, and the minimum is
 * the most reproducible statistic under interference. */
typedef void (*bench_fn)(void *ctx, int iter);
static double time_it(bench_fn fn, void *ctx) {
    fn(ctx, 0); /* warm-up */
    double t0 = now_s();
    int reps = 1;
    fn(ctx, 1);
    double one = now_s() - t0;
    int per_batch = one > 0.02 ? 1 : (int)(0.02 / (one > 1e-7 ? one : 1e-7)) + 1;
    double samples[64];
    int ns = 0;
    double start = now_s();
    while (ns < 64 && (ns < 5 || now_s() - start < min_time)) {
        double b0 = now_s();
        for (int i = 0; i < per_batch; i++) fn(ctx, reps++);
        samples[ns++] = (now_s() - b0) / per_batch;
    }
    for (int i = 1; i < ns; i++)
        for (int j = i; j > 0 && samples[j] < samples[j - 1]; j--) {
            double t = samples[j];
            samples[j] = samples[j - 1];
            samples[j - 1] = t;
        }
    return samples[0];
}

/* ------------------------------------------------------------------------------ weights */
static size_t weight_bytes(vox_dtype dt, int64_t rows, int64_t cols) {
    size_t n = (size_t)(rows * cols);
    switch (dt) {
    case VOX_DTYPE_F32: return 4 * n;
    case VOX_DTYPE_F16:
    case VOX_DTYPE_BF16: return 2 * n;
    case VOX_DTYPE_Q8: return n + n / 8;
    case VOX_DTYPE_Q4: return n / 2 + n / 8;
    default: return 0;
    }
}

static vx_mat make_mat(vox_dtype dt, int64_t rows, int64_t cols) {
    size_t n = (size_t)(rows * cols);
    vx_mat m = {dt, rows, cols, NULL, NULL};
    void *data = NULL;
    float *scales = NULL;
    switch (dt) {
    case VOX_DTYPE_F32: {
        float *f = aligned_alloc(64, 4 * n);
        for (size_t i = 0; i < n; i++) f[i] = frand() * 0.05f;
        data = f;
        break;
    }
    case VOX_DTYPE_F16:
    case VOX_DTYPE_BF16: {
        uint16_t *h = aligned_alloc(64, 2 * n);
        for (size_t i = 0; i < n; i++) h[i] = dt == VOX_DTYPE_BF16 ? (uint16_t)(0x3c00 + (rnd() & 0x3ff) - 0x200 + (rnd() & 0x8000))
                                                                  : (uint16_t)(0x2000 + (rnd() & 0x0fff) + (rnd() & 0x8000));
        data = h;
        break;
    }
    case VOX_DTYPE_Q8:
    case VOX_DTYPE_Q4: {
        size_t vb = dt == VOX_DTYPE_Q8 ? n : n / 2;
        uint8_t *q = aligned_alloc(64, (vb + 63) & ~(size_t)63);
        for (size_t i = 0; i < vb; i++) {
            uint8_t b = (uint8_t)rnd();
            q[i] = dt == VOX_DTYPE_Q8 && b == 0x80 ? 0x81 : b;
        }
        scales = aligned_alloc(64, ((n / 32 * 4) + 63) & ~(size_t)63);
        for (size_t i = 0; i < n / 32; i++) scales[i] = 0.001f + 0.0001f * (float)(rnd() & 255);
        data = q;
        break;
    }
    default: break;
    }
    m.data = data;
    m.scales = scales;
    return m;
}
static void free_mat(vx_mat *m) {
    free((void *)m->data);
    free((void *)m->scales);
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

/* ------------------------------------------------------------------------------ linear */
typedef struct lin_ctx {
    vx_pool *pool;
    vx_mat *mats;
    int n_mats;
    const float *x;
    float *y;
    int64_t n;
} lin_ctx;

static void lin_run(void *c_, int iter) {
    lin_ctx *c = c_;
    vx_linear(c->pool, &c->mats[iter % c->n_mats], NULL, c->x, c->n, c->y);
}

#define BK_MAX_THREADS 256
static vx_pool *pools[BK_MAX_THREADS + 1];
static int thread_list[8] = {1, 2}, n_threads = 2;

/* The L3 this CPU sees (sysfs, as lscpu; sysconf may report a VM host's total), default 32 MB. */
static size_t l3_bytes(void) {
    FILE *f = fopen("/sys/devices/system/cpu/cpu0/cache/index3/size", "r");
    if (f) {
        char unit = 0;
        unsigned long v = 0;
        int ok = fscanf(f, "%lu%c", &v, &unit) >= 1;
        fclose(f);
        if (ok && v > 0) return (size_t)v << (unit == 'K' ? 10 : unit == 'M' ? 20 : 0);
    }
    long v = sysconf(_SC_LEVEL3_CACHE_SIZE);
    return v > 0 ? (size_t)v : (size_t)32 << 20;
}

/* Copies of one random matrix (filled once, then memcpy'd: filling hundreds of MB element by element
 * would dominate the run). */
static vx_mat *make_copies(vox_dtype dt, int64_t rows, int64_t cols, int copies) {
    vx_mat *mats = malloc(sizeof(vx_mat) * (size_t)copies);
    mats[0] = make_mat(dt, rows, cols);
    size_t n = (size_t)(rows * cols);
    size_t vb = dt == VOX_DTYPE_Q8 ? n : dt == VOX_DTYPE_Q4 ? n / 2 : weight_bytes(dt, rows, cols);
    for (int i = 1; i < copies; i++) {
        mats[i] = mats[0];
        void *d = aligned_alloc(64, (vb + 63) & ~(size_t)63);
        memcpy(d, mats[0].data, vb);
        mats[i].data = d;
        if (mats[0].scales) {
            float *sc = aligned_alloc(64, ((n / 32 * 4) + 63) & ~(size_t)63);
            memcpy(sc, mats[0].scales, n / 32 * 4);
            mats[i].scales = sc;
        }
    }
    return mats;
}

/* One GEMV/GEMM shape in three regimes: hot (one matrix: in L2 when it fits), llc (copies filling
 * about half the L3: the code predictor's case on a big-L3 server), dram (copies > 3x the L3). */
static void bench_linear_case(vox_dtype dt, int64_t rows, int64_t cols, int64_t n) {
    size_t wb = weight_bytes(dt, rows, cols), l3 = l3_bytes();
    int llc = (int)(l3 / 2 / wb), dram = (int)(3 * l3 / wb) + 1;
    if (dram < 2) dram = 2;
    if (hot_only) llc = 0, dram = 1;
    if (llc > dram) llc = dram;
    vx_mat *mats = make_copies(dt, rows, cols, dram);
    float *x = malloc(sizeof(float) * (size_t)(cols * n)), *y = malloc(sizeof(float) * (size_t)(rows * n));
    for (int64_t i = 0; i < cols * n; i++) x[i] = frand();
    for (int t = 0; t < n_threads; t++) {
        lin_ctx hot = {pools[thread_list[t]], mats, 1, x, y, n}, lc = {pools[thread_list[t]], mats, llc, x, y, n},
                cold = {pools[thread_list[t]], mats, dram, x, y, n};
        double th = time_it(lin_run, &hot), tl = llc >= 2 ? time_it(lin_run, &lc) : 0, tc = hot_only ? th : time_it(lin_run, &cold);
        char lbuf[32] = "-";
        if (llc >= 2) snprintf(lbuf, sizeof lbuf, "%.1f", (double)wb / tl / 1e9);
        printf("| %s | %lldx%lld | %lld | %.1f | %d | %.1f | %.1f | %s | %.1f | %.1f | %.1f |\n", dt_name(dt), (long long)rows,
               (long long)cols, (long long)n, (double)wb / 1e6, thread_list[t], th * 1e6, (double)wb / th / 1e9, lbuf,
               (double)wb / tc / 1e9, tc * 1e6, 2.0 * (double)(rows * cols) * (double)n / th / 1e9);
        fflush(stdout);
    }
    for (int i = 0; i < dram; i++) free_mat(&mats[i]);
    free(mats);
    free(x);
    free(y);
}

static void linear_header(void) {
    printf("| dtype | rows x cols | n | MB | thr | hot us | hot GB/s | llc GB/s | dram GB/s | dram us | hot GFLOP/s |\n");
    printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
}

static void bench_gemv(void) {
    static const int64_t shapes[][2] = {
        {1024, 1024}, {3072, 1024}, {1024, 3072}, /* 0.6B talker / predictor: attention, MLP up/gate, down */
        {2048, 1024},                             /* predictor heads, q/k/v projections; (3072x1024: codec head) */
        {6144, 2048}, {2048, 6144},               /* 1.7B talker MLP */
    };
    static const vox_dtype dts[] = {VOX_DTYPE_F32, VOX_DTYPE_BF16, VOX_DTYPE_Q8, VOX_DTYPE_Q4};
    printf("\n## GEMV (n = 1): GB/s of weights; hot = one matrix again and again (cache-resident when it fits),\n"
           "## llc = matrices filling ~half the L3 (%zu MB), dram = > 3x the L3\n\n", l3_bytes() >> 20);
    linear_header();
    for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++)
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) bench_linear_case(dts[d], shapes[s][0], shapes[s][1], 1);
}

static void bench_gemm(void) {
    static const struct { int64_t rows, cols, n; vox_dtype dt; const char *what; } cases[] = {
        {768, 768 * 7, 32, VOX_DTYPE_F32, "codec conv k7, 768 ch, 1 frame"},
        {768, 768 * 7, 128, VOX_DTYPE_F32, "codec conv k7, 768 ch, 4 frames"},
        {768, 768 * 7, 480, VOX_DTYPE_F32, "codec conv k7, 768 ch"},
        {768, 768 * 7, 1920, VOX_DTYPE_F32, "codec conv k7, 768 ch"},
        {384, 384 * 7, 160, VOX_DTYPE_F32, "codec conv k7, 384 ch, 1 frame"},
        {192, 192 * 7, 640, VOX_DTYPE_F32, "codec conv k7, 192 ch, 1 frame"},
        {96, 96 * 7, 1920, VOX_DTYPE_F32, "codec conv k7, 96 ch, 1 frame"},
        {768, 768, 480, VOX_DTYPE_F32, "codec conv k1, 768 ch"},
        {1024, 1024, 16, VOX_DTYPE_BF16, "talker prefill 16 tokens"},
        {3072, 1024, 64, VOX_DTYPE_BF16, "talker prefill 64 tokens"},
        {1024, 1024, 16, VOX_DTYPE_Q8, "talker prefill 16 tokens"},
        {3072, 1024, 64, VOX_DTYPE_Q8, "talker prefill 64 tokens"},
        {3072, 1024, 64, VOX_DTYPE_Q4, "talker prefill 64 tokens"},
        {1024, 1024, 4, VOX_DTYPE_Q8, "small batch"},
    };
    printf("\n## GEMM (vx_linear, n rows at once): GFLOP/s = 2 rows cols n / time\n\n");
    printf("| dtype | rows x cols | n | what | thr | ms | GFLOP/s |\n|---|---|---|---|---|---|---|\n");
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        if (quick && cases[c].n > 500) continue;
        vx_mat m = make_mat(cases[c].dt, cases[c].rows, cases[c].cols);
        float *x = malloc(sizeof(float) * (size_t)(cases[c].n * cases[c].cols)),
              *y = malloc(sizeof(float) * (size_t)(cases[c].n * cases[c].rows));
        for (int64_t i = 0; i < cases[c].n * cases[c].cols; i++) x[i] = frand();
        for (int t = 0; t < n_threads; t++) {
            lin_ctx ctx = {pools[thread_list[t]], &m, 1, x, y, cases[c].n};
            double tm = time_it(lin_run, &ctx);
            printf("| %s | %lldx%lld | %lld | %s | %d | %.3f | %.1f |\n", dt_name(cases[c].dt), (long long)cases[c].rows,
                   (long long)cases[c].cols, (long long)cases[c].n, cases[c].what, thread_list[t], tm * 1e3,
                   2.0 * (double)(cases[c].rows * cases[c].cols) * (double)cases[c].n / tm / 1e9);
            fflush(stdout);
        }
        free_mat(&m);
        free(x);
        free(y);
    }
}

typedef struct nn_ctx {
    vx_pool *pool;
    const float *w, *x;
    float *y;
    int64_t k, m, n;
} nn_ctx;
static void nn_run(void *c_, int iter) {
    nn_ctx *c = c_;
    (void)iter;
    vx_matmul_nn_f32(c->pool, c->w, c->k, c->m, c->x, c->n, c->y);
}

typedef struct fa_ctx {
    vx_pool *pool;
    const float *qkv;
    float *o;
    int64_t b, n, h, d;
    int kind;   /* 0: vx_nn_attention, 1: vx_nn_attention_bf16, 2: vx_nn_attention_q8 */
} fa_ctx;
static void fa_run(void *c_, int iter) {
    fa_ctx *c = c_;
    (void)iter;
    const int64_t inner = c->h * c->d;
    (c->kind == 2 ? vx_nn_attention_q8 : c->kind ? vx_nn_attention_bf16 : vx_nn_attention)(c->pool, c->b, c->n, c->h, c->d, c->qkv, 3 * inner, c->qkv + inner,
                                                       3 * inner, c->qkv + 2 * inner, 3 * inner, 0.125f, c->o, inner);
}

/* vx_nn_attention: F5's DiT attention (2 branches x 1335 frames, 16 heads of 64); FLOPs 4 n^2 d per head */
static void bench_full_attention(void) {
    const int64_t b = 2, n = 1335, h = 16, d = 64;
    float *qkv = malloc(sizeof(float) * (size_t)(b * n * 3 * h * d)), *o = malloc(sizeof(float) * (size_t)(b * n * h * d));
    for (int64_t i = 0; i < b * n * 3 * h * d; i++) qkv[i] = frand();
    const vx_dot_caps dots = vx_cpu_dots();
    printf("\n## Full attention (F5 DiT, 2 x 1335 frames, 16 heads of 64)\n\n| kernel | thr | ms | GFLOP/s |\n|---|---|---|---|\n");
    static const char *const names[] = {"vx_nn_attention (f32)", "vx_nn_attention_bf16", "vx_nn_attention_q8"};
    for (int kind = 0; kind <= (dots.bf16 != NULL ? 2 : 0); kind++)
        for (int t = 0; t < n_threads; t++) {
            fa_ctx ctx = {pools[thread_list[t]], qkv, o, b, n, h, d, kind};
            double tm = time_it(fa_run, &ctx);
            printf("| %s | %d | %.3f | %.1f |\n", names[kind], thread_list[t],
                   tm * 1e3, 4.0 * (double)(n * n) * (double)(d * h * b) / tm / 1e9);
        }
    free(qkv), free(o);
}

static void bench_nn(void) {
    static const int64_t cases[][3] = {
        /* k = c_in, m = c_out * kernel, n = time steps: transposed convolutions of the codec decoder */
        {1536, 768 * 16, 4}, {768, 384 * 10, 32}, {384, 192 * 8, 160}, {192, 96 * 6, 640}, {1024, 1024 * 4, 1},
    };
    printf("\n## matmul_nn (W [k, m], transposed convolutions)\n\n| k | m | n | thr | ms | GFLOP/s |\n|---|---|---|---|---|---|\n");
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        int64_t k = cases[c][0], m = cases[c][1], n = cases[c][2];
        float *w = malloc(sizeof(float) * (size_t)(k * m)), *x = malloc(sizeof(float) * (size_t)(n * k)),
              *y = malloc(sizeof(float) * (size_t)(n * m));
        for (int64_t i = 0; i < k * m; i++) w[i] = frand();
        for (int64_t i = 0; i < n * k; i++) x[i] = frand();
        for (int t = 0; t < n_threads; t++) {
            nn_ctx ctx = {pools[thread_list[t]], w, x, y, k, m, n};
            double tm = time_it(nn_run, &ctx);
            printf("| %lld | %lld | %lld | %d | %.3f | %.1f |\n", (long long)k, (long long)m, (long long)n, thread_list[t],
                   tm * 1e3, 2.0 * (double)(k * m) * (double)n / tm / 1e9);
        }
        free(w);
        free(x);
        free(y);
    }
    bench_full_attention();
}

/* ------------------------------------------------------------------------------ convolutions */
typedef struct conv_ctx {
    vx_pool *pool;
    int kind; /* 0: int8 (fused form, no map), 1: bf16, 2: f32 im2col + GEMM, 3: f32 in place */
    const vx_i8w *iw;
    const vx_bf16w *bw;
    const vx_mat *w;
    const float *x, *bias;
    float *col, *y;
    int64_t c, k, dil, n;
} conv_ctx;
static void conv_run(void *c_, int iter) {
    conv_ctx *c = c_;
    (void)iter;
    if (c->kind == 0) {
        vx_conv1d_i8w(c->pool, c->iw, c->bias, c->x, c->n, c->dil, c->y);
    } else if (c->kind == 1) {
        vx_conv1d_bf16w(c->pool, c->bw, c->bias, c->x, c->n, c->dil, c->y);
    } else if (c->kind == 2) {
        vx_im2col(c->x, c->n + c->dil * (c->k - 1), c->c, c->k, c->dil, 1, c->n, c->col);
        vx_linear(c->pool, c->w, c->bias, c->col, c->n, c->y);
    } else {
        vx_conv1d_f32(c->pool, c->w, c->c, c->k, c->dil, 1, c->bias, c->x, c->n, c->y);
    }
}

static void bench_conv(void) {
    static const struct { int64_t co, ci, k, dil, n; const char *what; } cases[] = {
        {256, 256, 3, 1, 1420, "generator resblock, 256 ch, k3 (1.5 s of audio)"},
        {256, 256, 7, 3, 1420, "generator resblock, 256 ch, k7"},
        {256, 256, 11, 5, 1420, "generator resblock, 256 ch, k11"},
        {128, 128, 3, 1, 8520, "generator resblock, 128 ch, k3"},
        {128, 128, 11, 5, 8520, "generator resblock, 128 ch, k11"},
        {1024, 1024, 3, 1, 284, "decoder, 1024 ch, k3"},
        /* one tap: the linear layers of F5's DiT (F5TTS_v1_Base, both guidance branches of 1335 frames) */
        {3072, 1024, 1, 1, 2670, "F5 DiT q|k|v"},
        {1024, 1024, 1, 1, 2670, "F5 DiT attention out"},
        {2048, 1024, 1, 1, 2670, "F5 DiT ff1"},
        {1024, 2048, 1, 1, 2670, "F5 DiT ff2"},
    };
    printf("\n## Convolutions (Kokoro shapes, and F5's DiT layers as one tap; GFLOP/s = 2 c_out c_in k n / time)\n\n");
    printf("| shape | what | kernel | thr | ms | GFLOP/s |\n|---|---|---|---|---|---|\n");
    const vx_dot_caps dots = vx_cpu_dots();
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        const int64_t co = cases[ci].co, c = cases[ci].ci, k = cases[ci].k, dil = cases[ci].dil, n = cases[ci].n;
        const int64_t n_in = n + dil * (k - 1);
        vx_mat w = make_mat(VOX_DTYPE_F32, co, c * k);
        float *x = malloc(sizeof(float) * (size_t)(n_in * c)), *y = malloc(sizeof(float) * (size_t)(n * co));
        float *col = malloc(sizeof(float) * (size_t)(n * c * k)), *bias = calloc((size_t)co, sizeof(float));
        for (int64_t i = 0; i < n_in * c; i++) x[i] = frand();
        vx_i8w iw = {0};
        vx_bf16w bw = {0};
        const int has_i8 = dots.int8 && vx_i8w_pack_conv(&w, c, k, &iw) == VOX_OK;
        const int has_bf = dots.bf16 && vx_bf16w_pack_conv(&w, c, k, &bw) == VOX_OK;
        for (int kind = 0; kind < 4; kind++) {
            if ((kind == 0 && !has_i8) || (kind == 1 && !has_bf) || (quick && kind >= 2 && n > 2000)) continue;
            for (int t = 0; t < n_threads; t++) {
                conv_ctx ctx = {pools[thread_list[t]], kind, &iw, &bw, &w, x, bias, col, y, c, k, dil, n};
                double tm = time_it(conv_run, &ctx);
                printf("| %lldx%lldx%lld n=%lld | %s | %s | %d | %.3f | %.1f |\n", (long long)co, (long long)c, (long long)k,
                       (long long)n, cases[ci].what, kind == 0 ? dots.int8 : kind == 1 ? dots.bf16 : kind == 2 ? "f32 im2col+GEMM" : "f32 in place",
                       thread_list[t], tm * 1e3, 2.0 * (double)(co * c * k) * (double)n / tm / 1e9);
                fflush(stdout);
            }
        }
        vx_i8w_free(&iw), vx_bf16w_free(&bw);
        free_mat(&w);
        free(x), free(y), free(col), free(bias);
    }
}

/* ------------------------------------------------------------------------------ q8 GEMMs of many rows */
typedef struct q8_ctx {
    vx_pool *pool;
    const vx_mat *w;
    const vx_q8w *pw;
    const float *x;
    float *y;
    int64_t n;
    int kind;   /* 0: vx_linear, 1: vx_linear_q8w (packed), 2: vx_linear_q8t (packed as it goes) */
} q8_ctx;
static void q8_run(void *c_, int iter) {
    q8_ctx *c = c_;
    (void)iter;
    if (c->kind == 1) vx_linear_q8w(c->pool, c->pw, NULL, c->x, c->n, c->y);
    else if (c->kind == 2) vx_linear_q8t(c->pool, c->w, NULL, c->x, c->n, c->y);
    else vx_linear(c->pool, c->w, NULL, c->x, c->n, c->y);
}

/* F5's DiT layers and a Qwen3 0.6B talker's prefill of a 60-row prompt with q8 weights: vx_linear's q8
 * kernels (built for GEMVs) against vx_linear_q8w's tiles (where the path has them: vx_cpu_dots().q8), and
 * for the prefill vx_linear_q8t (the same tiles, groups packed on the fly); GOP/s = 2 rows cols n / time. */
static void bench_q8(void) {
    static const struct { int64_t rows, cols, n; const char *what; } cases[] = {
        {3072, 1024, 2670, "F5 DiT q|k|v"}, {1024, 1024, 2670, "F5 DiT attention out"},
        {2048, 1024, 2670, "F5 DiT ff1"}, {1024, 2048, 2670, "F5 DiT ff2"},
        {2048, 1024, 60, "Qwen3 talker q"}, {1024, 2048, 60, "Qwen3 talker o"},
        {3072, 1024, 60, "Qwen3 talker gate"}, {1024, 3072, 60, "Qwen3 talker down"},
    };
    const vx_dot_caps dots = vx_cpu_dots();
    printf("\n## q8 GEMMs of many rows (F5's DiT layers; GOP/s = 2 rows cols n / time)\n\n");
    printf("| shape | what | kernel | thr | ms | GOP/s |\n|---|---|---|---|---|---|\n");
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        const int64_t rows = cases[ci].rows, cols = cases[ci].cols, n = cases[ci].n;
        vx_mat w = make_mat(VOX_DTYPE_Q8, rows, cols);
        float *x = malloc(sizeof(float) * (size_t)(n * cols)), *y = malloc(sizeof(float) * (size_t)(n * rows));
        for (int64_t i = 0; i < n * cols; i++) x[i] = frand();
        vx_q8w pw = {0};
        const int has_tiles = dots.q8 && vx_q8w_pack(&w, &pw) == VOX_OK;
        for (int kind = 0; kind <= (has_tiles ? 2 : 0); kind++)
            for (int t = 0; t < n_threads; t++) {
                if (kind == 1 && n < 1000) continue;   /* the prefill: no packed copy */
                if (kind == 2 && n >= 1000) continue;
                q8_ctx ctx = {pools[thread_list[t]], &w, &pw, x, y, n, kind};
                double tm = time_it(q8_run, &ctx);
                char name[64];
                if (kind) snprintf(name, sizeof name, "%s (%s)", kind == 1 ? "vx_linear_q8w" : "vx_linear_q8t", dots.q8);
                else snprintf(name, sizeof name, "vx_linear q8");
                printf("| %lldx%lld n=%lld | %s | %s | %d | %.3f | %.1f |\n", (long long)rows, (long long)cols, (long long)n,
                       cases[ci].what, name, thread_list[t], tm * 1e3, 2.0 * (double)(rows * cols) * (double)n / tm / 1e9);
                fflush(stdout);
            }
        vx_q8w_free(&pw);
        free_mat(&w);
        free(x), free(y);
    }
}

/* ------------------------------------------------------------------------------ misc kernels */
typedef struct misc_ctx {
    int which;
    float *a, *b, *c, *y;
    int64_t n, rows, d;
    vx_pool *pool;
} misc_ctx;
static void misc_run(void *c_, int iter) {
    misc_ctx *c = c_;
    (void)iter;
    switch (c->which) {
    case 0: vx_silu_mul(c->a, c->b, c->n, c->y); break;
    case 1: vx_gelu(c->a, c->n, c->y); break;
    case 2: vx_snake_beta(c->a, c->b, c->c, c->rows, c->d, c->y); break;
    case 3: vx_rms_norm(c->a, c->b, c->rows, c->d, 1e-6f, c->y); break;
    case 4: vx_attention(c->pool, c->a, 1, 16, c->b, c->c, c->n, 8, 128, 0.088f, 0, c->y); break;
    case 5: vx_im2col(c->a, c->rows + 6, c->d, 7, 1, 1, c->rows, c->y); break;
    case 6: vx_softmax_rows(c->y, 1, c->n); break;
    }
}

static void bench_misc(void) {
    int64_t big = 1 << 22;
    float *a = malloc(sizeof(float) * (size_t)big), *b = malloc(sizeof(float) * (size_t)big),
          *c = malloc(sizeof(float) * (size_t)big), *y = malloc(sizeof(float) * (size_t)big * 8);
    for (int64_t i = 0; i < big; i++) {
        a[i] = frand() * 4;
        b[i] = frand() + 1.5f;
        c[i] = frand() + 1.5f;
    }
    printf("\n## Other kernels (1 thread unless noted)\n\n| kernel | shape | us | Melem/s |\n|---|---|---|---|\n");
    struct { int which; int64_t n, rows, d; const char *name, *shape; double elems; } cs[] = {
        {0, 3072, 0, 0, "silu_mul", "3072", 3072},
        {1, 1 << 16, 0, 0, "gelu", "65536", 1 << 16},
        {2, 0, 1920, 96, "snake_beta", "1920 x 96", 1920 * 96},
        {2, 0, 32, 768, "snake_beta", "32 x 768", 32 * 768},
        {3, 0, 1, 1024, "rms_norm", "1 x 1024", 1024},
        {4, 500, 0, 0, "attention (2 thr)", "1 query, 16/8 heads, d 128, 500 keys", 16 * 500},
        {5, 0, 480, 768, "im2col k7", "480 x 768", 480 * 768 * 7},
        {6, 3072, 0, 0, "softmax", "3072", 3072},
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        misc_ctx ctx = {cs[i].which, a, b, c, y, cs[i].n, cs[i].rows, cs[i].d, pools[2] ? pools[2] : pools[1]};
        double t = time_it(misc_run, &ctx);
        printf("| %s | %s | %.2f | %.0f |\n", cs[i].name, cs[i].shape, t * 1e6, cs[i].elems / t / 1e6);
    }
    free(a);
    free(b);
    free(c);
    free(y);
}

/* ------------------------------------------------------------------------------ machine peaks */
#if defined(__x86_64__)
typedef struct bw_ctx {
    const float *buf;
    int64_t n;
    double sink[64];
} bw_ctx;
__attribute__((target("avx2,fma"))) static void bw_range(void *c_, int64_t b, int64_t e) {
    bw_ctx *c = c_;
    __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
    for (int64_t i = b * 4096; i < e * 4096; i += 32) {
        s0 = _mm256_add_ps(s0, _mm256_load_ps(c->buf + i));
        s1 = _mm256_add_ps(s1, _mm256_load_ps(c->buf + i + 8));
        s2 = _mm256_add_ps(s2, _mm256_load_ps(c->buf + i + 16));
        s3 = _mm256_add_ps(s3, _mm256_load_ps(c->buf + i + 24));
    }
    float t[8];
    _mm256_storeu_ps(t, _mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)));
    c->sink[b % 64] += t[0];
}
typedef struct bwrun {
    vx_pool *pool;
    bw_ctx *c;
} bwrun;
static void bw_run(void *r_, int iter) {
    bwrun *r = r_;
    (void)iter;
    vx_pool_for(r->pool, r->c->n / 4096, 16, bw_range, r->c);
}

__attribute__((target("avx512f"))) static void peak_range(void *c_, int64_t b, int64_t e) {
    double *out = c_;
    __m512 a[12];
    for (int i = 0; i < 12; i++) a[i] = _mm512_set1_ps((float)i);
    const __m512 m = _mm512_set1_ps(0.999999f), p = _mm512_set1_ps(1e-7f);
    for (int64_t it = b; it < e; it++)
        for (int k = 0; k < 1000; k++)
            for (int i = 0; i < 12; i++) a[i] = _mm512_fmadd_ps(a[i], m, p);
    float t[16];
    __m512 s = a[0];
    for (int i = 1; i < 12; i++) s = _mm512_add_ps(s, a[i]);
    _mm512_storeu_ps(t, s);
    out[b % 8] += t[0];
}
typedef struct peakrun {
    vx_pool *pool;
    double sink[8];
} peakrun;
static void peak_run(void *r_, int iter) {
    peakrun *r = r_;
    (void)iter;
    vx_pool_for(r->pool, 200, 1, peak_range, r->sink);
}
#endif

static void bench_peak(void) {
#if defined(__x86_64__)
    printf("\n## Machine reference\n\n| what | thr | value |\n|---|---|---|\n");
    int64_t n = (int64_t)1 << 27; /* 512 MB */
    float *buf = aligned_alloc(64, sizeof(float) * (size_t)n);
    for (int64_t i = 0; i < n; i++) buf[i] = 1.0f;
    bw_ctx c = {buf, n, {0}};
    for (int t = 0; t < n_threads; t++) {
        bwrun r = {pools[thread_list[t]], &c};
        double tm = time_it(bw_run, &r);
        printf("| DRAM read bandwidth (512 MB sum, AVX2) | %d | %.1f GB/s |\n", thread_list[t], 4.0 * (double)n / tm / 1e9);
    }
    /* the same over a quarter of the L3 (rounded to 4096-float chunks): last-level-cache bandwidth */
    int64_t nl = (int64_t)(l3_bytes() / 4 / 4) / 4096 * 4096;
    bw_ctx cl = {buf, nl, {0}};
    for (int t = 0; t < n_threads; t++) {
        bwrun r = {pools[thread_list[t]], &cl};
        double tm = time_it(bw_run, &r);
        printf("| L3 read bandwidth (%lld MB sum) | %d | %.1f GB/s |\n", (long long)(nl * 4 >> 20), thread_list[t],
               4.0 * (double)nl / tm / 1e9);
    }
    free(buf);
    if (vx_cpu()->avx512f)
        for (int t = 0; t < n_threads; t++) {
            peakrun r = {pools[thread_list[t]], {0}};
            double tm = time_it(peak_run, &r);
            printf("| AVX-512 FMA peak (12 chains) | %d | %.1f GFLOP/s |\n", thread_list[t], 200.0 * 1000 * 12 * 32 / tm / 1e9);
        }
#endif
}

/* ------------------------------------------------------------------------------ accuracy */
static uint16_t to_bf16(float f) {
    union { float f; uint32_t u; } v = {f};
    return (uint16_t)((v.u + 0x7fff + ((v.u >> 16) & 1)) >> 16);
}
static float from_bf16(uint16_t h) {
    union { uint32_t u; float f; } v = {(uint32_t)h << 16};
    return v.f;
}
#if defined(__x86_64__)
/* What a vdpbf16ps kernel would compute: x rounded to bf16, bf16 x bf16 products in f32. */
__attribute__((target("avx512f,avx512bf16,avx512bw,avx512vl"))) static float dot_bf16(const float *x, const uint16_t *w,
                                                                                  int64_t n) {
    __m512 acc = _mm512_setzero_ps();
    for (int64_t k = 0; k < n; k += 32) {
        __m512bh xb = _mm512_cvtne2ps_pbh(_mm512_loadu_ps(x + k + 16), _mm512_loadu_ps(x + k));
        __m512bh wb = (__m512bh)_mm512_loadu_si512(w + k);
        acc = _mm512_dpbf16_ps(acc, xb, wb);
    }
    return _mm512_reduce_add_ps(acc);
}
#endif

static void bench_accuracy(void) {
    printf("\n## Accuracy of the design choices (relative error vs float64 of the same weights)\n\n");
    int64_t rows = 512, cols = 2048;
    float *x = malloc(sizeof(float) * (size_t)cols), *y = malloc(sizeof(float) * (size_t)rows);
    for (int64_t i = 0; i < cols; i++) x[i] = frand() * 3;
    /* bf16 weights */
    uint16_t *wb = malloc(2 * (size_t)(rows * cols));
    for (int64_t i = 0; i < rows * cols; i++) wb[i] = to_bf16(frand() * 0.05f);
    vx_mat m = {VOX_DTYPE_BF16, rows, cols, wb, NULL};
    vx_linear(pools[1], &m, NULL, x, 1, y);
    double e_f32 = 0, e_bf = 0, scale = 0;
    for (int64_t r = 0; r < rows; r++) {
        double ref = 0;
        for (int64_t k = 0; k < cols; k++) ref += (double)x[k] * from_bf16(wb[r * cols + k]);
        scale = fmax(scale, fabs(ref));
        e_f32 = fmax(e_f32, fabs(y[r] - ref));
#if defined(__x86_64__)
        if (vx_cpu()->avx512bf16) e_bf = fmax(e_bf, fabs(dot_bf16(x, wb + r * cols, cols) - ref));
#endif
    }
    printf("- bf16 weights, %lldx%lld GEMV, max |err| / max |y|: exact f32 math (the kernels) %.2e", (long long)rows,
           (long long)cols, e_f32 / scale);
    if (vx_cpu()->avx512bf16) printf("; vdpbf16ps with x rounded to bf16 %.2e", e_bf / scale);
    printf("\n");
    /* q8 weights: int8 activations vs f32 activations times the dequantized weights */
    int8_t *wq = malloc((size_t)(rows * cols));
    float *ws = malloc(sizeof(float) * (size_t)(rows * cols / 32)), *wf = malloc(sizeof(float) * (size_t)cols);
    for (int64_t b = 0; b < rows * cols / 32; b++) {
        for (int j = 0; j < 32; j++) wf[j] = frand() * 0.05f;
        ws[b] = vx_quantize_block_q8(wf, wq + 32 * b);
    }
    vx_mat mq = {VOX_DTYPE_Q8, rows, cols, wq, ws};
    vx_linear(pools[1], &mq, NULL, x, 1, y);
    double e_q = 0;
    scale = 0;
    for (int64_t r = 0; r < rows; r++) {
        double ref = 0;
        for (int64_t k = 0; k < cols; k++) ref += (double)x[k] * ((float)wq[r * cols + k] * ws[(r * cols + k) / 32]);
        scale = fmax(scale, fabs(ref));
        e_q = fmax(e_q, fabs(y[r] - ref));
    }
    printf("- q8 weights, int8-quantized activations vs f32 activations x dequantized weights: max |err| / max |y| %.2e\n",
           e_q / scale);
    free(x);
    free(y);
    free(wb);
    free(wq);
    free(ws);
    free(wf);
}

int main(int argc, char **argv) {
    const char *only = NULL;
    const char *cases[32];
    int n_cases = 0;
    for (int i = 1; n_cases < 32 && i < argc; i++) {
        if (strcmp(argv[i], "--path") == 0 && i + 1 < argc) {
            const char *p = argv[++i];
            const int path = vx_path_parse(p);
            if (path < 0 || !vx_kernels_force_path((vx_cpu_path)path)) {
                fprintf(stderr, "path %s not supported here\n", p);
                return 1;
            }
        } else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
            n_threads = 0;
            for (char *s = strtok(argv[++i], ","); s && n_threads < 8; s = strtok(NULL, ",")) thread_list[n_threads++] = atoi(s);
        } else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) {
            only = argv[++i];
        } else if (strcmp(argv[i], "--case") == 0 && i + 1 < argc) {
            cases[n_cases++] = argv[++i];
        } else if (strcmp(argv[i], "--hot-only") == 0) {
            hot_only = 1;
        } else if (strcmp(argv[i], "--quick") == 0) {
            quick = 1;
            min_time = 0.05;
        } else {
            fprintf(stderr, "usage: %s [--path NAME] [--threads 1,2] [--only gemv,gemm,nn,conv,q8,misc,acc,peak] [--quick]\n"
                    "          [--case DTYPE:ROWSxCOLS:N ...] [--hot-only]   (e.g. q8:1024x1024:1; only those cases)\n",
                    argv[0]);
            return 2;
        }
    }
    for (int t = 0; t < n_threads; t++) {
        int nt = thread_list[t];
        if (nt < 1 || nt > BK_MAX_THREADS) {
            fprintf(stderr, "--threads: %d is not in 1..%d\n", nt, BK_MAX_THREADS);
            return 2;
        }
        if (!pools[nt]) {
            vx_pool_opts o = {.n_threads = nt, .spin_us = 2000};
            if (vx_pool_create(&o, &pools[nt]) != VOX_OK) return 1;
        }
    }
    if (!pools[1]) {
        vx_pool_opts o = {.n_threads = 1};
        vx_pool_create(&o, &pools[1]);
    }
    printf("# vox kernel benchmarks: CPU %s, kernels %s\n", vx_cpu()->name, vx_kernels_active()->name);
    if (n_cases) {
        printf("\n");
        linear_header();
        for (int c = 0; c < n_cases; c++) {
            char dt[8];
            long long r, k, n;
            if (sscanf(cases[c], "%7[a-z0-9]:%lldx%lld:%lld", dt, &r, &k, &n) != 4) {
                fprintf(stderr, "bad case %s\n", cases[c]);
                return 2;
            }
            vox_dtype d = strcmp(dt, "f32") == 0 ? VOX_DTYPE_F32 : strcmp(dt, "f16") == 0 ? VOX_DTYPE_F16
                        : strcmp(dt, "bf16") == 0 ? VOX_DTYPE_BF16 : strcmp(dt, "q8") == 0 ? VOX_DTYPE_Q8 : VOX_DTYPE_Q4;
            bench_linear_case(d, r, k, n);
        }
        for (int i = 0; i <= BK_MAX_THREADS; i++) vx_pool_free(pools[i]);
        return 0;
    }
#define RUN(name, fn) \
    if (!only || strstr(only, name)) fn()
    RUN("peak", bench_peak);
    RUN("gemv", bench_gemv);
    RUN("gemm", bench_gemm);
    RUN("nn", bench_nn);
    RUN("conv", bench_conv);
    RUN("q8", bench_q8);
    RUN("misc", bench_misc);
    RUN("acc", bench_accuracy);
    for (int i = 0; i <= BK_MAX_THREADS; i++) vx_pool_free(pools[i]);
    return 0;
}
