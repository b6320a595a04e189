/* The Vulkan operations (core/src/vulkan/ops.h) against the CPU kernels of the same name, on one
 * Vulkan device (lavapipe in CI; VOX_TEST_VULKAN=N picks another). Limits: the vulkan.* rows of
 * verify/tolerances.toml. Exit 77 (CTest: skipped) when the machine has no Vulkan device.
 * VOX_TEST_VERBOSE=1 prints every measured error. */

#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "error.h"
#include "tolerance_table.h"
#include "vk_testlib.h"
#include "vulkan/ops.h"

static int verbose;
static vx_pool *pool;

static vx_gbind whole(const vx_gbuf *b) { return (vx_gbind){b, 0, 0}; }

/* One linear layer on the GPU and the CPU; returns max_abs_rel (GPU vs CPU). */
static double linear_case(vx_gpu *g, vox_dtype dt, int64_t rows, int64_t cols, int64_t n, int with_bias, int *parts) {
    wmat w = make_w(dt, rows, cols);
    float *x = fvec(n * cols, -1, 1), *bias = with_bias ? fvec(rows, -1, 1) : NULL;
    float *ref = malloc(sizeof(float) * (size_t)(n * rows)), *got = malloc(sizeof(float) * (size_t)(n * rows));
    vx_linear(pool, &w.m, bias, x, n, ref);
    vx_gmat gm;
    vx_gbuf bx, by, bb = {0}, bq, bd;
    vox_status st = vx_gmat_upload(g, &w.m, &gm);
    CHECK(st == VOX_OK, "upload %s %lldx%lld: %s", dt_name(dt), (long long)rows, (long long)cols, vox_last_error());
    double err = INFINITY;
    if (st != VOX_OK) goto done;
    *parts = gm.n_parts;
    vx_gpu_alloc(g, (uint64_t)(n * cols) * 4, 0, &bx);
    vx_gpu_alloc(g, (uint64_t)(n * rows) * 4, 0, &by);
    vx_gpu_alloc(g, (uint64_t)(n * cols), 0, &bq);
    vx_gpu_alloc(g, (uint64_t)(n * cols / 32 + 1) * 4, 0, &bd);
    vx_gpu_upload(g, &bx, 0, x, (uint64_t)(n * cols) * 4);
    if (bias) {
        vx_gpu_alloc(g, (uint64_t)rows * 4, 0, &bb);
        vx_gpu_upload(g, &bb, 0, bias, (uint64_t)rows * 4);
    }
    vx_gbind bias_bind = whole(&bb);
    st = vx_gpu_begin(g);
    int quant = dt == VOX_DTYPE_Q8 || dt == VOX_DTYPE_Q4;
    if (st == VOX_OK && quant) st = vx_gop_quantize(g, whole(&bx), n, cols, whole(&bq), whole(&bd));
    if (st == VOX_OK)
        st = vx_gop_linear(g, &gm, bias ? &bias_bind : NULL, whole(&bx), whole(&bq), whole(&bd), n, whole(&by), 0,
                           "test/linear");
    vox_status sub = vx_gpu_submit(g);
    if (st == VOX_OK) st = sub;
    if (st == VOX_OK) st = vx_gpu_download(g, &by, 0, got, (uint64_t)(n * rows) * 4);
    CHECK(st == VOX_OK, "linear %s: %s", dt_name(dt), vox_last_error());
    if (st == VOX_OK) err = max_abs_rel(got, ref, n * rows);
    vx_gpu_release(g, &bx);
    vx_gpu_release(g, &by);
    vx_gpu_release(g, &bb);
    vx_gpu_release(g, &bq);
    vx_gpu_release(g, &bd);
    vx_gmat_free(g, &gm);
done:
    free_w(&w);
    free(x);
    free(bias);
    free(ref);
    free(got);
    return err;
}

static void test_linear(vx_gpu *g, const char *tag) {
    static const vox_dtype dts[] = {VOX_DTYPE_F32, VOX_DTYPE_F16, VOX_DTYPE_BF16, VOX_DTYPE_Q8, VOX_DTYPE_Q4};
    static const int64_t shapes[][2] = {{1, 32}, {67, 96}, {300, 1024}, {130, 2048}};
    for (int d = 0; d < 5; d++) {
        char row[64];
        snprintf(row, sizeof row, "vulkan.linear_%s", dt_name(dts[d]));
        double tol = tolerance_row(row, "max"), worst = 0;
        for (int s = 0; s < 4; s++)
            for (int64_t n = 1; n <= 3; n += 2) {
                int parts = 0;
                double e = linear_case(g, dts[d], shapes[s][0], shapes[s][1], n, (int)(n + s) % 2, &parts);
                if (e > worst) worst = e;
                CHECK(e <= tol, "%s %s linear %lldx%lld n=%lld: max_abs_rel %.3g > %.3g", tag, dt_name(dts[d]),
                      (long long)shapes[s][0], (long long)shapes[s][1], (long long)n, e, tol);
                if (verbose > 1) printf("  %s %s %lldx%lld n=%lld parts=%d err %.3g\n", tag, dt_name(dts[d]),
                                        (long long)shapes[s][0], (long long)shapes[s][1], (long long)n, parts, e);
            }
        if (verbose) printf("%-10s %-22s max_abs_rel %.3g (limit %.3g)\n", tag, row, worst, tol);
    }
}

/* A matrix larger than one binding may cover is split by rows: the result is the same. */
static void test_split(int dev) {
    setenv("VOX_VK_MAX_RANGE", "8192", 1);
    vx_gpu *g = NULL;
    vox_status st = vx_gpu_create(dev, &g);
    unsetenv("VOX_VK_MAX_RANGE");
    CHECK(st == VOX_OK, "second context: %s", vox_last_error());
    if (st != VOX_OK) return;
    CHECK(vx_gpu_max_range(g) == 8192, "VOX_VK_MAX_RANGE not applied: %llu", (unsigned long long)vx_gpu_max_range(g));
    static const vox_dtype dts[] = {VOX_DTYPE_F32, VOX_DTYPE_BF16, VOX_DTYPE_Q8, VOX_DTYPE_Q4};
    for (int d = 0; d < 4; d++) {
        char row[64];
        snprintf(row, sizeof row, "vulkan.linear_%s", dt_name(dts[d]));
        int parts = 0;
        double e = linear_case(g, dts[d], 100, 512, 2, 1, &parts);
        CHECK(parts > 1, "split %s: %d part(s)", dt_name(dts[d]), parts);
        CHECK(e <= tolerance_row(row, "max"), "split %s (%d parts): max_abs_rel %.3g", dt_name(dts[d]), parts, e);
        if (verbose) printf("split      %-22s %d parts, max_abs_rel %.3g\n", row, parts, e);
    }
    /* a row that alone exceeds the range is refused with a clear error */
    wmat w = make_w(VOX_DTYPE_F32, 2, 4096);
    vx_gmat gm;
    CHECK(vx_gmat_upload(g, &w.m, &gm) == VOX_ERR_UNSUPPORTED, "an over-long row was accepted");
    free_w(&w);
    vx_gpu_free(g);
}

/* Timestamps: VOX_PROFILE=gpu sums every dispatch under its label. */
static void test_profile(vx_gpu *g) {
    if (vx_gpu_info(g)->timestamp_period_ns <= 0) {
        printf("profile: the device has no compute timestamps\n");
        return;
    }
    vx_gpu_set_profile(g, 1);
    int parts;
    int before;
    vx_gpu_profile_ms(g, "test/linear", &before);
    linear_case(g, VOX_DTYPE_F32, 64, 256, 1, 0, &parts);
    linear_case(g, VOX_DTYPE_Q8, 64, 256, 1, 0, &parts);
    int count;
    double ms = vx_gpu_profile_ms(g, "test/linear", &count);
    int qcount;
    vx_gpu_profile_ms(g, "quantize_q8", &qcount);
    CHECK(count == before + 2 && qcount >= 1 && ms >= 0, "profile: %d linear dispatches (want %d), %d quantize",
          count, before + 2, qcount);
    if (verbose) vx_gpu_profile_print(g, stdout);
    vx_gpu_set_profile(g, 0);
}

int main(void) {
    const char *v = getenv("VOX_TEST_VERBOSE");
    verbose = v ? atoi(v) : 0;
    int dev = test_device();
    if (dev < 0) return 77;
    vx_pool_opts po = {.n_threads = 1};
    if (vx_pool_create(&po, &pool) != VOX_OK) return 1;
    vx_gpu *g = NULL;
    vox_status st = vx_gpu_create(dev, &g);
    CHECK(st == VOX_OK, "vx_gpu_create(%d): %s", dev, vox_last_error());
    if (st != VOX_OK) return 1;
    const vx_vk_device_info *info = vx_gpu_info(g);
    printf("device %d: %s (%s), subgroup %u, storage range %llu\n", dev, info->name, info->type_name,
           info->subgroup_size, (unsigned long long)info->max_storage_buffer_range);
    test_linear(g, "linear");
    test_profile(g);
    test_split(dev);
    vx_gpu_free(g);
    vx_pool_free(pool);
    printf("%s\n", fails ? "FAILED" : "ok");
    return fails != 0;
}
