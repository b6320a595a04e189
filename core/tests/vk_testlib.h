/* Helpers of the Vulkan tests: random data and weight matrices in every .tmod dtype (with vk_testdev.h:
 * the error metric of verify/metrics.py and the device under test). */
#ifndef VOX_TEST_VK_TESTLIB_H
#define VOX_TEST_VK_TESTLIB_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cpu/dispatch.h"
#include "kernels.h"
#include "vulkan/vk.h"
#include "vk_testdev.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint32_t rnd32(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 16);
}
static float urand(float lo, float hi) { return lo + (hi - lo) * (float)(rnd32() & 0xffffff) / 16777216.0f; }
static float *fvec(int64_t n, float lo, float hi) {
    float *v = malloc(sizeof(float) * (size_t)(n > 0 ? n : 1));
    for (int64_t i = 0; i < n; i++) v[i] = urand(lo, hi);
    return v;
}

static uint16_t f32_to_bf16(float f) {
    union { float f; uint32_t u; } v = {f};
    return (uint16_t)((v.u + 0x7fff + ((v.u >> 16) & 1)) >> 16);
}
static uint16_t f32_to_f16(float f) {   /* round to nearest even; inputs here are normal and small */
    union { float f; uint32_t u; } v = {f};
    uint32_t sign = (v.u >> 16) & 0x8000u;
    float a = fabsf(f);
    if (a < 0x1p-14f) return (uint16_t)(sign | (uint32_t)lrintf(a * 0x1p24f));
    int e;
    float m = frexpf(a, &e);
    int mi = (int)lrintf(m * 2048.0f);
    if (mi == 2048) { mi = 1024; e++; }
    return (uint16_t)(sign | ((uint32_t)(e - 1 + 15) << 10) | ((uint32_t)mi & 0x3ffu));
}

/* A random weight matrix in dtype dt (a valid .tmod encoding: q8 as the converter, q4 any scale). */
typedef struct wmat {
    vx_mat m;
    void *data;
    float *scales;
} wmat;

static wmat make_w(vox_dtype dt, int64_t rows, int64_t cols) {
    wmat w;
    memset(&w, 0, sizeof w);
    int64_t n = rows * cols;
    float *src = fvec(n, -1.0f, 1.0f);
    w.m.dtype = dt;
    w.m.rows = rows;
    w.m.cols = cols;
    if (dt == VOX_DTYPE_F32) {
        w.data = src;
        src = NULL;
    } else if (dt == VOX_DTYPE_F16 || dt == VOX_DTYPE_BF16) {
        uint16_t *h = malloc(2 * (size_t)(n ? n : 1));
        for (int64_t i = 0; i < n; i++) h[i] = dt == VOX_DTYPE_F16 ? f32_to_f16(src[i]) : f32_to_bf16(src[i]);
        w.data = h;
    } else if (dt == VOX_DTYPE_Q8) {
        int8_t *q = malloc((size_t)(n ? n : 1));
        w.scales = malloc(sizeof(float) * (size_t)(n / 32 + 1));
        for (int64_t b = 0; b < n / 32; b++) w.scales[b] = vx_quantize_block_q8(src + 32 * b, q + 32 * b);
        w.data = q;
    } else {
        uint8_t *p = malloc((size_t)(n / 2 + 1));
        w.scales = malloc(sizeof(float) * (size_t)(n / 32 + 1));
        for (int64_t b = 0; b < n / 32; b++) {
            float amax = 0;
            for (int j = 0; j < 32; j++) amax = fmaxf(amax, fabsf(src[32 * b + j]));
            float sc = amax / 7.5f, r = sc > 0 ? 1.0f / sc : 0;
            uint8_t u[32];
            for (int j = 0; j < 32; j++) {
                int q = (int)roundf(src[32 * b + j] * r) + 8;
                u[j] = (uint8_t)(q < 0 ? 0 : q > 15 ? 15 : q);
            }
            for (int j = 0; j < 16; j++) p[16 * b + j] = (uint8_t)(u[j] | (u[j + 16] << 4));
            w.scales[b] = sc;
        }
        w.data = p;
    }
    free(src);
    w.m.data = w.data;
    w.m.scales = w.scales;
    return w;
}
static void free_w(wmat *w) {
    free(w->data);
    free(w->scales);
}


/* A device tensor placed PAD floats into its buffer (the ops must honour offsets that are not aligned
 * to minStorageBufferOffsetAlignment): T binds it, TO a view from float `off` on. */
#define PAD 3
typedef struct gt {
    vx_gbuf buf;
    int64_t n;
} gt;
static inline vx_gbind T(const gt *x) { return (vx_gbind){&x->buf, PAD * 4, (uint64_t)x->n * 4}; }
static inline vx_gbind TO(const gt *x, int64_t off) { return (vx_gbind){&x->buf, (uint64_t)(PAD + off) * 4, 0}; }
static inline gt put(vx_gpu *g, const void *x, int64_t n) {
    gt r;
    vx_gpu_alloc(g, (uint64_t)(n + PAD) * 4, 0, &r.buf);
    r.n = n;
    if (x) vx_gpu_upload(g, &r.buf, PAD * 4, x, (uint64_t)n * 4);
    return r;
}
static inline void get(vx_gpu *g, gt *t, float *out) {
    vox_status st = vx_gpu_download(g, &t->buf, PAD * 4, out, (uint64_t)t->n * 4);
    CHECK(st == VOX_OK, "download: %s", vox_last_error());
}
static inline void drop(vx_gpu *g, gt *t) { vx_gpu_release(g, &t->buf); }


/* The device under test (test_device) and a one-thread pool for the CPU side: 0; 77 when there is no
 * device (ctest's skip code); 1 when either cannot be made. */
static inline int open_test_gpu(int *dev, vx_pool **pool, vx_gpu **g) {
    *dev = test_device();
    if (*dev < 0) return 77;
    vx_pool_opts po = {.n_threads = 1};
    if (vx_pool_create(&po, pool) != VOX_OK) return 1;
    vox_status st = vx_gpu_create(*dev, g);
    CHECK(st == VOX_OK, "vx_gpu_create(%d): %s", *dev, vox_last_error());
    return st == VOX_OK ? 0 : 1;
}
#endif
