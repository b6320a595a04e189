/* The GEMMs of F5's DiT on the Vulkan device, kernel against kernel, timed by the GPU's timestamps
 * (VOX_PROFILE=gpu's per-dispatch queries): M = 2446 x rows (a 10 s utterance, both guidance branches)
 * by the four layer shapes, float16 weights (bf16 converted, as F5 uploads them). Kernels:
 *   cm2   gemm_cm2.comp, x float32 as hi + lo (two products): F5's default where the driver has
 *         VK_NV_cooperative_matrix2
 *   cm2h  gemm_cm2.comp with x given as float16 (vx_gop_linear_h: one product)
 *   wide  gemm_cm_wide_*: subgroup-scope cooperative matrices, x as hi + lo (the default without cm2)
 *   cmh   gemm_cmh_*: subgroup scope, x rounded to float16 (one product)
 * Run by hand on a GPU (never by CTest): bench_vulkan_gemm [reps]; VOX_VK_CM2_TILE=TMxTNxBK for other
 * cm2 tiles. Prints us a call, TFLOP/s (2 M N K / time) and max |y - y_first| / max |y_first| against the
 * first kernel that ran (a sanity check: float16 x moves outputs by ~1e-3). */
#include <stdio.h>
#include <time.h>

#include "kernels.h"
#include "vk_testlib.h"
#include "vulkan/ops.h"

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static vx_gbind whole(vx_gbuf *b) { return (vx_gbind){b, 0, b->size}; }

/* One chain of reps calls of the layer (x float32, or float16 with xh: vx_gop_linear_h). */
static vox_status run_chain(vx_gpu *g, const vx_gmat *gm, int xh, const vx_gbind *bias, vx_gbind x, int64_t n, vx_gbind y,
                            int reps, const char *label) {
    vox_status st = vx_gpu_begin(g);
    if (st != VOX_OK) return st;
    for (int r = 0; r < reps && st == VOX_OK; r++)
        st = xh ? vx_gop_linear_h(g, gm, bias, x, n, y, 0, 0, NULL, label)
                : vx_gop_linear(g, gm, bias, x, x, x, n, y, 0, 0, label);
    vox_status sub = vx_gpu_submit(g);
    return st != VOX_OK ? st : sub;
}

/* The summed GPU time of label's dispatches, whichever GEMM shader ran them. */
static double label_ms(const vx_gpu *g, const char *label, int *count) {
    static const char *const shaders[] = {"gemm_cm2", "gemm_cm_wide_f16", "gemm_cm_wide_bf16", "gemm_cmh_f16",
                                          "gemm_cmh_bf16", "gemm_cm_f16", "gemm_cm_bf16", "gemm_f16"};
    for (size_t i = 0; i < sizeof shaders / sizeof shaders[0]; i++) {
        char line[160];
        snprintf(line, sizeof line, "%s/%s", label, shaders[i]);
        double ms = vx_gpu_profile_ms(g, line, count);
        if (*count) return ms;
    }
    return 0.0;
}

int main(int argc, char **argv) {
    const int reps = argc > 1 && atoi(argv[1]) > 0 ? atoi(argv[1]) : 30;
    int dev = test_device();
    if (dev < 0) return 0;
    vx_gpu *g;
    if (vx_gpu_create(dev, &g) != VOX_OK || vx_gpu_prepare(g) != VOX_OK) {
        fprintf(stderr, "bench_vulkan_gemm: %s\n", vox_last_error());
        return 1;
    }
    const vx_vk_device_info *info = vx_gpu_info(g);
    printf("device %d: %s; cooperative matrices %s, cooperative matrix 2 %s; %d calls each\n\n", dev, info->name,
           vx_gpu_coopmat(g) ? "used" : "no", vx_gpu_coopmat2(g) ? "used" : "no", reps);
    vx_gpu_set_profile(g, 1);
    static const struct { const char *name; int64_t rows, cols; } shapes[] = {
        {"q|k|v", 3072, 1024}, {"attention out", 1024, 1024}, {"FFN up", 2048, 1024}, {"FFN down", 1024, 2048}};
    static const char *const kernels[] = {"cm2", "cm2h", "wide", "cmh"};
    const int64_t n = 2446;
    int warmed = 0;
    printf("| layer | kernel | us a call | TFLOP/s | vs the first |\n|---|---|---:|---:|---:|\n");
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        const int64_t rows = shapes[s].rows, cols = shapes[s].cols;
        wmat w = make_w(VOX_DTYPE_BF16, rows, cols);
        float *x = fvec(n * cols, -1, 1), *bias = fvec(rows, -1, 1);
        uint16_t *xh = malloc(sizeof(uint16_t) * (size_t)(n * cols));
        for (int64_t i = 0; i < n * cols; i++) xh[i] = f32_to_f16(x[i]);
        vx_gbuf bx, bxh, by, bb;
        if (vx_gpu_alloc(g, (uint64_t)(n * cols) * 4, 0, &bx) != VOX_OK ||
            vx_gpu_alloc(g, (uint64_t)(n * cols) * 2, 0, &bxh) != VOX_OK ||
            vx_gpu_alloc(g, (uint64_t)(n * rows) * 4, 0, &by) != VOX_OK || vx_gpu_alloc(g, (uint64_t)rows * 4, 0, &bb) != VOX_OK) {
            fprintf(stderr, "bench_vulkan_gemm: %s\n", vox_last_error());
            return 1;
        }
        vx_gpu_upload(g, &bx, 0, x, (uint64_t)(n * cols) * 4);
        vx_gpu_upload(g, &bxh, 0, xh, (uint64_t)(n * cols) * 2);
        vx_gpu_upload(g, &bb, 0, bias, (uint64_t)rows * 4);
        float *first = NULL, *y = malloc(sizeof(float) * (size_t)(n * rows));
        for (int k = 0; k < 4; k++) {
            vx_gmat gm;
            if (vx_gmat_upload_f16(g, &w.m, &gm) != VOX_OK) {
                fprintf(stderr, "bench_vulkan_gemm: %s\n", vox_last_error());
                return 1;
            }
            gm.cm2 = k < 2;
            gm.cm_wide = k == 2;
            gm.cm_half = k == 3;
            if (k < 2 && !vx_gop_linear_epi_ok(g, &gm, n)) {
                printf("| %s %lldx%lld | %s | (no cooperative matrix 2) | | |\n", shapes[s].name, (long long)rows,
                       (long long)cols, kernels[k]);
                vx_gmat_free(g, &gm);
                continue;
            }
            char label[96];
            snprintf(label, sizeof label, "bench/%zu/%s", s, kernels[k]);
            vox_status st;
            vx_gbind bbb = whole(&bb);
            /* warm-up chains (for the first kernel until the GPU has run for 2 s, so that its clocks are up),
             * then the timed one */
            const double t0 = now_s();
            do st = run_chain(g, &gm, k == 1, &bbb, whole(k == 1 ? &bxh : &bx), n, whole(&by), 10, "warm");
            while (st == VOX_OK && !warmed && now_s() - t0 < 2.0);
            warmed = 1;
            if (st == VOX_OK) st = run_chain(g, &gm, k == 1, &bbb, whole(k == 1 ? &bxh : &bx), n, whole(&by), reps, label);
            int count = 0;
            const double ms = label_ms(g, label, &count);
            if (st != VOX_OK || !count)
                printf("| %s %lldx%lld | %s | failed: %s | | |\n", shapes[s].name, (long long)rows, (long long)cols,
                       kernels[k], st != VOX_OK ? vox_last_error() : "no timestamps");
            else {
                const double us = 1e3 * ms / count;
                double e = 0.0;
                if (vx_gpu_download(g, &by, 0, y, (uint64_t)(n * rows) * 4) == VOX_OK) {
                    if (first) e = max_abs_rel(y, first, n * rows);
                    else first = y, y = malloc(sizeof(float) * (size_t)(n * rows));
                }
                printf("| %s %lldx%lld (%s) | %s | %.1f | %.1f | %.2g |\n", shapes[s].name, (long long)rows, (long long)cols,
                       dt_name(gm.dtype), kernels[k], us, 2.0 * (double)n * (double)rows * (double)cols / (us * 1e-6) / 1e12, e);
            }
            fflush(stdout);
            vx_gmat_free(g, &gm);
        }
        vx_gpu_release(g, &bx), vx_gpu_release(g, &bxh), vx_gpu_release(g, &by), vx_gpu_release(g, &bb);
        free(x), free(xh), free(bias), free(first), free(y);
        free_w(&w);
    }
    vx_gpu_free(g);
    return 0;
}
