/* The Vulkan operations (core/src/vulkan/ops.h) against the CPU kernels of the same name, on one
 * Vulkan device (lavapipe in CI; VOX_TEST_VULKAN=N picks another). Limits: the vulkan.* rows of
 * verify/tolerances.toml. Exit 77 (CTest: skipped) when the machine has no Vulkan device.
 * VOX_TEST_VERBOSE=1 prints every measured error; VOX_TEST_ROWS=1 prints them as
 * "row<TAB>check<TAB>subject<TAB>value" lines (conformance/test_vulkan.py records them in the report). */

#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "error.h"
#include "tolerance_table.h"
#include "vk_testlib.h"
#include "qwen3/lm_internal.h"
#include "vulkan/ops.h"
#include "vulkan/ops_dit.h"
#include "nn/nn.h"

static int verbose, rows_out;
static vx_pool *pool;
static const char *device_name = "";

static void emit_row(const char *check, const char *subject, double value) {
    if (rows_out) printf("row\t%s\t%s on %s\t%.6g\n", check, subject, device_name, value);
}

static vx_gbind whole(const vx_gbuf *b) { return (vx_gbind){b, 0, 0}; }
static int last_coopmat;   /* the matrix of the last linear_case ran on cooperative matrices */
static int half_x;         /* linear_case: the matrix takes x as float16 (vx_gmat.cm_half); the CPU gets x so rounded */
static int cm2_mode;       /* linear_case: the matrix is uploaded as float16 and takes gemm_cm2.comp (vx_gmat.cm2) */
static int epi_mode;       /* linear_case with cm2_mode: vx_gop_linear_epi with this epilogue (VX_EPI_*), acc ignored */

static float round_f16(float f) {
    uint16_t h = f32_to_f16(f);
    float r;
    vx_to_f32(VOX_DTYPE_F16, &h, 1, &r);
    return r;
}

static void report(const char *row, const char *what, double err);

static void emit_unsupported(const char *check, const char *subject, const char *why) {
    if (rows_out) printf("unsupported\t%s\t%s on %s\t%s\n", check, subject, device_name, why);
}
static float *last_out;    /* and its output (n x rows floats), kept for a bitwise comparison */

/* One linear layer on the GPU and the CPU; returns max_abs_rel (GPU vs CPU). With acc, y starts with
 * random values and the layer adds to them (the residual epilogue), compared with y0 + vx_linear. */
static double linear_case_acc(vx_gpu *g, vox_dtype dt, int64_t rows, int64_t cols, int64_t n, int with_bias,
                              int *parts, int acc) {
    wmat w = make_w(dt, rows, cols);
    float *x = fvec(n * cols, -1, 1), *bias = with_bias ? fvec(rows, -1, 1) : NULL;
    float *ref = malloc(sizeof(float) * (size_t)(n * rows)), *got = malloc(sizeof(float) * (size_t)(n * rows));
    if (half_x)
        for (int64_t i = 0; i < n * cols; i++) x[i] = round_f16(x[i]);
    vx_linear(pool, &w.m, bias, x, n, ref);
    float *y0 = fvec(n * rows, -1, 1), *gate = epi_mode == VX_EPI_GATED_ADD ? fvec(rows, -1, 1) : NULL;
    if (epi_mode == VX_EPI_GELU_TANH) vx_nn_gelu_tanh(ref, n * rows, ref);
    if (epi_mode == VX_EPI_GATED_ADD)
        for (int64_t i = 0; i < n * rows; i++) ref[i] = y0[i] + gate[i % rows] * ref[i];
    acc = epi_mode ? epi_mode == VX_EPI_GATED_ADD : acc;
    if (acc && !epi_mode) vx_add(y0, ref, n * rows, ref);
    vx_gmat gm;
    vx_gbuf bx, by, bb = {0}, bq, bd;
    vox_status st = cm2_mode ? vx_gmat_upload_f16(g, &w.m, &gm) : vx_gmat_upload(g, &w.m, &gm);
    CHECK(st == VOX_OK, "upload %s %lldx%lld: %s", dt_name(dt), (long long)rows, (long long)cols, vox_last_error());
    double err = INFINITY;
    if (st != VOX_OK) goto done;
    *parts = gm.n_parts;
    last_coopmat = gm.coopmat && (!cm2_mode || gm.dtype == VOX_DTYPE_F16);
    gm.cm_half = half_x;
    gm.cm2 = cm2_mode;
    vx_gpu_alloc(g, (uint64_t)(n * cols) * 4, 0, &bx);
    vx_gpu_alloc(g, (uint64_t)(n * rows) * 4, 0, &by);
    vx_gpu_alloc(g, (uint64_t)(n * cols), 0, &bq);
    vx_gpu_alloc(g, (uint64_t)(n * cols / 32 + 1) * 4, 0, &bd);
    const int xh = cm2_mode && half_x;   /* gemm_cm2 with x given as float16 (vx_gop_linear_h) */
    if (xh) {
        uint16_t *h = malloc(sizeof(uint16_t) * (size_t)(n * cols));
        for (int64_t i = 0; i < n * cols; i++) h[i] = f32_to_f16(x[i]);
        vx_gpu_upload(g, &bx, 0, h, (uint64_t)(n * cols) * 2);
        free(h);
    } else
        vx_gpu_upload(g, &bx, 0, x, (uint64_t)(n * cols) * 4);
    if (acc) vx_gpu_upload(g, &by, 0, y0, (uint64_t)(n * rows) * 4);
    if (bias) {
        vx_gpu_alloc(g, (uint64_t)rows * 4, 0, &bb);
        vx_gpu_upload(g, &bb, 0, bias, (uint64_t)rows * 4);
    }
    vx_gbind bias_bind = whole(&bb);
    vx_gbuf bg = {0};   /* uploaded before the chain: an upload inside one is refused (test_chain_reentry) */
    if (gate && vx_gpu_alloc(g, (uint64_t)rows * 4, 0, &bg) == VOX_OK) vx_gpu_upload(g, &bg, 0, gate, (uint64_t)rows * 4);
    vx_gbind gate_bind = whole(&bg);
    st = vx_gpu_begin(g);
    int quant = dt == VOX_DTYPE_Q8 || dt == VOX_DTYPE_Q4;
    if (st == VOX_OK && quant) st = vx_gop_quantize(g, whole(&bx), n, cols, whole(&bq), whole(&bd), "test");
    if (st == VOX_OK && xh)
        st = vx_gop_linear_h(g, &gm, bias ? &bias_bind : NULL, whole(&bx), n, whole(&by), 0, epi_mode, &gate_bind,
                             "test/linear_h");
    else if (st == VOX_OK && epi_mode)
        st = vx_gop_linear_epi(g, &gm, bias ? &bias_bind : NULL, whole(&bx), n, whole(&by), 0, epi_mode, &gate_bind,
                               "test/linear_epi");
    else if (st == VOX_OK)
        st = vx_gop_linear(g, &gm, bias ? &bias_bind : NULL, whole(&bx), whole(&bq), whole(&bd), n, whole(&by), 0,
                           acc, "test/linear");
    vox_status sub = vx_gpu_submit(g);
    if (st == VOX_OK) st = sub;
    if (st == VOX_OK) st = vx_gpu_download(g, &by, 0, got, (uint64_t)(n * rows) * 4);
    CHECK(st == VOX_OK, "linear %s: %s", dt_name(dt), vox_last_error());
    if (st == VOX_OK) err = max_abs_rel(got, ref, n * rows);
    free(last_out);
    last_out = malloc(sizeof(float) * (size_t)(n * rows));
    if (last_out) memcpy(last_out, got, sizeof(float) * (size_t)(n * rows));
    vx_gpu_release(g, &bx);
    vx_gpu_release(g, &by);
    vx_gpu_release(g, &bb);
    vx_gpu_release(g, &bq);
    vx_gpu_release(g, &bd);
    vx_gpu_release(g, &bg);
    vx_gmat_free(g, &gm);
done:
    free(y0);
    free(gate);
    free_w(&w);
    free(x);
    free(bias);
    free(ref);
    free(got);
    return err;
}

static double linear_case(vx_gpu *g, vox_dtype dt, int64_t rows, int64_t cols, int64_t n, int with_bias, int *parts) {
    return linear_case_acc(g, dt, rows, cols, n, with_bias, parts, 0);
}

static void test_linear(vx_gpu *g, const char *tag) {
    static const vox_dtype dts[] = {VOX_DTYPE_F32, VOX_DTYPE_F16, VOX_DTYPE_BF16, VOX_DTYPE_Q8, VOX_DTYPE_Q4};
    /* cols % 8 == 0 take the 16-byte-load shaders; 100 (f32 only) and 66 the scalar ones */
    static const int64_t shapes[][2] = {{1, 32}, {67, 96}, {300, 1024}, {130, 2048}, {45, 100}, {33, 66}};
    for (int d = 0; d < 5; d++) {
        char row[64];
        snprintf(row, sizeof row, "vulkan.linear_%s", dt_name(dts[d]));
        double tol = tolerance_row(row, "max"), worst = 0;
        for (int s = 0; s < 6; s++)
            for (int64_t n = 1; n <= 3; n += 2) {
                if (shapes[s][1] % 32 && (dts[d] == VOX_DTYPE_Q8 || dts[d] == VOX_DTYPE_Q4)) continue;
                int parts = 0;
                double e = linear_case_acc(g, dts[d], shapes[s][0], shapes[s][1], n, (int)(n + s) % 2, &parts, s == 2);
                if (e > worst) worst = e;
                CHECK(e <= tol, "%s %s linear %lldx%lld n=%lld: max_abs_rel %.3g > %.3g", tag, dt_name(dts[d]),
                      (long long)shapes[s][0], (long long)shapes[s][1], (long long)n, e, tol);
                if (verbose > 1) printf("  %s %s %lldx%lld n=%lld parts=%d err %.3g\n", tag, dt_name(dts[d]),
                                        (long long)shapes[s][0], (long long)shapes[s][1], (long long)n, parts, e);
            }
        if (verbose) printf("%-10s %-22s max_abs_rel %.3g (limit %.3g)\n", tag, row, worst, tol);
        emit_row(row, "GEMV vs vx_linear, shapes up to 300x1024 and 130x2048 (scalar and 16-byte loads), 1 and 3 x "
                 "rows, with and without bias and residual add",
                 worst);
    }
}

/* The tiled GEMM (n > VX_GEMV_MAX_ROWS x rows, prefill) against vx_linear: batches that are not
 * multiples of the tile (33, 37, 64, 70; test_split runs small ones), odd shapes (tile edges, columns not a multiple of the 32-column
 * step), bias and the residual epilogue. */
static void test_gemm(vx_gpu *g, const char *tag) {
    static const vox_dtype dts[] = {VOX_DTYPE_F32, VOX_DTYPE_F16, VOX_DTYPE_BF16, VOX_DTYPE_Q8, VOX_DTYPE_Q4};
    static const int64_t shapes[][2] = {{33, 96}, {300, 1024}, {130, 2048}, {45, 100}, {71, 66}, {1, 32}};
    static const int64_t ns[] = {33, 37, 64, 70};
    for (int d = 0; d < 5; d++) {
        char row[64];
        snprintf(row, sizeof row, "vulkan.linear_%s", dt_name(dts[d]));
        double tol = tolerance_row(row, "max"), worst = 0;
        for (int s = 0; s < 6; s++)
            for (int k = 0; k < 4; k++) {
                if (shapes[s][1] % 32 && (dts[d] == VOX_DTYPE_Q8 || dts[d] == VOX_DTYPE_Q4)) continue;
                if (shapes[s][0] * shapes[s][1] > 100000 && k != 3) continue;   /* big ones at n = 70 only */
                int parts = 0;
                double e = linear_case_acc(g, dts[d], shapes[s][0], shapes[s][1], ns[k], (k + s) % 2, &parts,
                                           (k + s) % 3 == 0);
                if (e > worst) worst = e;
                CHECK(e <= tol, "%s %s GEMM %lldx%lld n=%lld: max_abs_rel %.3g > %.3g", tag, dt_name(dts[d]),
                      (long long)shapes[s][0], (long long)shapes[s][1], (long long)ns[k], e, tol);
                if (verbose > 1) printf("  %s %s GEMM %lldx%lld n=%lld parts=%d err %.3g\n", tag, dt_name(dts[d]),
                                        (long long)shapes[s][0], (long long)shapes[s][1], (long long)ns[k], parts, e);
            }
        if (verbose) printf("%-10s %-22s max_abs_rel %.3g (limit %.3g)\n", tag, row, worst, tol);
        emit_row(row, "tiled GEMM vs vx_linear, 33 to 70 x rows, shapes up to 300x1024 and 130x2048 (tile edges, "
                 "columns not a multiple of 32), with and without bias and residual add",
                 worst);
    }
}

/* The GEMM on cooperative matrices (tensor cores), where the device has them: f16 and bf16 weights,
 * x as two float16 (hi + lo), against vx_linear within the same rows as the other linear layers; a bf16
 * matrix with a value beyond float16's range takes the plain tiled GEMM instead. */
static void test_coopmat(vx_gpu *g) {
    const vx_vk_device_info *info = vx_gpu_info(g);
    if (!vx_gpu_coopmat(g)) {
        printf("coopmat: not tested on this device (%s%s%s)\n",
               info->coopmat ? "VOX_VK_COOPMAT=0" : "no VK_KHR_cooperative_matrix with 16x16x16 f16 x f16 -> f32",
               info->coopmat_shapes[0] ? "; f16 shapes " : "", info->coopmat_shapes);
        return;
    }
    static const vox_dtype dts[] = {VOX_DTYPE_F16, VOX_DTYPE_BF16};
    static const int64_t shapes[][2] = {{33, 96}, {300, 1024}, {130, 2048}, {45, 100}, {71, 66}, {64, 64}};
    static const int64_t ns[] = {33, 64, 70};
    for (int d = 0; d < 2; d++) {
        char row[64];
        snprintf(row, sizeof row, "vulkan.linear_%s", dt_name(dts[d]));
        double tol = tolerance_row(row, "max"), worst = 0;
        for (int s = 0; s < 6; s++)
            for (int k = 0; k < 3; k++) {
                int parts = 0;
                double e = linear_case_acc(g, dts[d], shapes[s][0], shapes[s][1], ns[k], (k + s) % 2, &parts, k == 1);
                CHECK(last_coopmat, "coopmat %s %lldx%lld: the matrix did not take the cooperative-matrix GEMM",
                      dt_name(dts[d]), (long long)shapes[s][0], (long long)shapes[s][1]);
                if (e > worst) worst = e;
                CHECK(e <= tol, "coopmat %s GEMM %lldx%lld n=%lld: max_abs_rel %.3g > %.3g", dt_name(dts[d]),
                      (long long)shapes[s][0], (long long)shapes[s][1], (long long)ns[k], e, tol);
            }
        /* the tiles filled by 16-byte loads (cols % 8 == 0) or one value at a time: the same bits */
        for (int s = 0; s < 6; s++) {
            if (shapes[s][1] % 8) continue;
            const uint64_t seed = rng_state;
            int parts = 0;
            linear_case_acc(g, dts[d], shapes[s][0], shapes[s][1], 70, 1, &parts, 1);
            float *wide = last_out;
            last_out = NULL;
            rng_state = seed;
            setenv("VOX_VK_CM_LOADS", "scalar", 1);
            linear_case_acc(g, dts[d], shapes[s][0], shapes[s][1], 70, 1, &parts, 1);
            unsetenv("VOX_VK_CM_LOADS");
            CHECK(wide && last_out && !memcmp(wide, last_out, sizeof(float) * (size_t)(70 * shapes[s][0])),
                  "coopmat %s %lldx%lld: 16-byte tile loads change the bits", dt_name(dts[d]), (long long)shapes[s][0],
                  (long long)shapes[s][1]);
            free(wide);
        }
        if (verbose) printf("coopmat    %-22s max_abs_rel %.3g (limit %.3g)\n", row, worst, tol);
        emit_row(row, "GEMM on cooperative matrices (x as float16 hi + lo) vs vx_linear, 33 to 70 x rows, shapes up "
                 "to 300x1024 and 130x2048, with and without bias and residual add",
                 worst);
    }
    /* a bf16 weight of 65536: not exact in float16, so the plain GEMM */
    wmat w = make_w(VOX_DTYPE_BF16, 40, 64);
    ((uint16_t *)w.m.data)[77] = 0x4780;
    vx_gmat gm;
    CHECK(vx_gmat_upload(g, &w.m, &gm) == VOX_OK, "upload: %s", vox_last_error());
    CHECK(!gm.coopmat, "a bf16 matrix with 65536 in it was given to the cooperative-matrix GEMM");
    vx_gmat_free(g, &gm);
    free_w(&w);
}

/* The one-product cooperative-matrix GEMM (gemm_cmh.glsl: x as float16, 128 x 128 tiles, two shared
 * buffers) against vx_linear of the same x rounded to float16: the same products, so only float32
 * rounding remains (the vulkan.linear_cmh row). Shapes cross the 128-row and 128-column tile edges and
 * the 32-column K steps (712 = 22 x 32 + 8), with and without bias and residual add. */
static void test_coopmat_half(vx_gpu *g) {
    const char *row = "vulkan.linear_cmh";
    const char *subject = "GEMM on cooperative matrices with x rounded to float16 (one product) vs vx_linear of the "
                          "rounded x, f16 and bf16 weights, 33 to 257 x rows, shapes up to 300x1024, 130x2048, 256x712";
    if (!vx_gpu_coopmat(g)) {
        printf("coopmat (x as float16): not tested on this device (no cooperative matrices)\n");
        emit_unsupported(row, subject, "no VK_KHR_cooperative_matrix with 16x16x16 f16 x f16 -> f32");
        return;
    }
    static const vox_dtype dts[] = {VOX_DTYPE_F16, VOX_DTYPE_BF16};
    static const int64_t shapes[][2] = {{300, 1024}, {130, 2048}, {256, 712}, {64, 64}, {200, 96}, {33, 96}};
    static const int64_t ns[] = {33, 130, 257};
    double tol = tolerance_row(row, "max"), worst = 0;
    half_x = 1;
    for (int d = 0; d < 2; d++)
        for (int s = 0; s < 6; s++)
            for (int k = 0; k < 3; k++) {
                int parts = 0;
                double e = linear_case_acc(g, dts[d], shapes[s][0], shapes[s][1], ns[k], (k + s) % 2, &parts, k == 1);
                CHECK(last_coopmat, "coopmat %s %lldx%lld: the matrix did not take the cooperative-matrix GEMM",
                      dt_name(dts[d]), (long long)shapes[s][0], (long long)shapes[s][1]);
                if (e > worst) worst = e;
                CHECK(e <= tol, "coopmat (x as float16) %s GEMM %lldx%lld n=%lld: max_abs_rel %.3g > %.3g",
                      dt_name(dts[d]), (long long)shapes[s][0], (long long)shapes[s][1], (long long)ns[k], e, tol);
            }
    half_x = 0;
    if (verbose) printf("coopmat    %-22s max_abs_rel %.3g (limit %.3g)\n", row, worst, tol);
    emit_row(row, subject, worst);
}

/* Three matrices of dtype dt and cols stacked by rows (q|k|v-like; the second without bias) as one
 * vx_gop_linear_stack of n x rows; with cm2, uploaded as float16 for gemm_cm2 (a tile inside one output
 * is stored whole, one across two element by element). Returns the largest max_abs_rel of the three
 * outputs against vx_linear of their matrices; out (n x the rows, the outputs one after another) gets
 * what the GPU gave, *parts the matrix's parts. */
static double stack_run(vx_gpu *g, vox_dtype dt, const int64_t rows[3], int64_t cols, int64_t n, int cm2, float *out,
                        int *parts) {
    wmat w[3];
    float *bias[3], *ref[3];
    for (int i = 0; i < 3; i++) {
        w[i] = make_w(dt, rows[i], cols);
        bias[i] = i == 1 ? NULL : fvec(rows[i], -1, 1);
        ref[i] = malloc(sizeof(float) * (size_t)(n * rows[i]));
    }
    float *x = fvec(n * cols, -1, 1);
    for (int i = 0; i < 3; i++) vx_linear(pool, &w[i].m, bias[i], x, n, ref[i]);
    const vx_mat *ms[3] = {&w[0].m, &w[1].m, &w[2].m};
    const float *bs[3] = {bias[0], bias[1], bias[2]};
    vx_gmat gm;
    double worst = INFINITY;
    vox_status st = (cm2 ? vx_gmat_upload_stack_f16 : vx_gmat_upload_stack)(g, ms, bs, 3, &gm);
    CHECK(st == VOX_OK, "stack upload: %s", vox_last_error());
    if (st == VOX_OK) {
        gm.cm2 = cm2;
        *parts = gm.n_parts;
        CHECK(!cm2 || vx_gop_linear_epi_ok(g, &gm, n), "stack: not on gemm_cm2");
        gt gx = put(g, x, n * cols), gy[3] = {put(g, NULL, n * rows[0]), put(g, NULL, n * rows[1]), put(g, NULL, n * rows[2])};
        vx_gbuf bq, bd;
        vx_gpu_alloc(g, (uint64_t)(n * cols), 0, &bq);
        vx_gpu_alloc(g, (uint64_t)(n * cols / 32) * 4, 0, &bd);
        vx_gbind ys[3] = {T(&gy[0]), T(&gy[1]), T(&gy[2])};
        vx_gpu_begin(g);
        if (dt == VOX_DTYPE_Q8 || dt == VOX_DTYPE_Q4) vx_gop_quantize(g, T(&gx), n, cols, whole(&bq), whole(&bd), NULL);
        st = vx_gop_linear_stack(g, &gm, T(&gx), whole(&bq), whole(&bd), n, ys, "test/stack");
        vox_status sub = vx_gpu_submit(g);
        CHECK(st == VOX_OK && sub == VOX_OK, "stack: %s", vox_last_error());
        worst = 0;
        for (int i = 0, off = 0; i < 3; off += (int)rows[i], i++) {
            get(g, &gy[i], out + n * off);
            double e = max_abs_rel(out + n * off, ref[i], n * rows[i]);
            if (e > worst) worst = e;
        }
        drop(g, &gx);
        for (int i = 0; i < 3; i++) drop(g, &gy[i]);
        vx_gpu_release(g, &bq);
        vx_gpu_release(g, &bd);
        vx_gmat_free(g, &gm);
    }
    for (int i = 0; i < 3; i++) free_w(&w[i]), free(bias[i]), free(ref[i]);
    free(x);
    return worst;
}

/* The GEMM on VK_NV_cooperative_matrix2 (gemm_cm2.comp: workgroup-scope matrices, x as hi + lo, the
 * weights uploaded as float16 by vx_gmat_upload_f16, bf16 converted) against vx_linear of the original
 * weights, in the rows of the other cooperative-matrix GEMM. Shapes cross the 128-row and 128-column
 * tile edges and the 32-column K steps (712 = 22 x 32 + 8, 100, 66), tiles inside (unclamped loads) and
 * across the edges (clamped), with and without bias and residual add; one stacked q|k|v-like matrix. */
static void test_coopmat2(vx_gpu *g) {
    const char *row = "vulkan.linear_cm2";
    const char *subject = "GEMM on VK_NV_cooperative_matrix2 (x as float16 hi + lo, weights as float16: f16, bf16 "
                          "converted) vs vx_linear of the original weights, 33 to 512 x rows, shapes up to 384x256, "
                          "300x1024, 130x2048, 256x712; with the GELU-tanh and gated-residual epilogues";
    const vx_vk_device_info *info = vx_gpu_info(g);
    if (!vx_gpu_coopmat2(g)) {
        printf("coopmat2: not tested on this device (%s%s%s)\n",
               info->coopmat2 ? (vx_gpu_coopmat2_off(g)[0] ? vx_gpu_coopmat2_off(g) : "turned off: VOX_VK_COOPMAT2=0")
                              : "no VK_NV_cooperative_matrix2 with workgroup-scope f16 x f16 -> f32",
               info->coopmat2_shapes[0] ? "; entries " : "", info->coopmat2_shapes);
        emit_unsupported(row, subject, "no VK_NV_cooperative_matrix2 with workgroup-scope f16 x f16 -> f32");
        return;
    }
    static const vox_dtype dts[] = {VOX_DTYPE_F16, VOX_DTYPE_BF16};
    static const int64_t shapes[][2] = {{256, 1024}, {300, 1024}, {130, 2048}, {256, 712}, {45, 100}, {71, 66}, {384, 256}};
    static const int64_t ns[] = {33, 128, 257, 512};
    double tol = tolerance_row(row, "max"), worst = 0;
    /* VOX_TEST_CM2_SHAPE=s: only shape s (0-6) and no epilogues, to find a case that hangs a driver one
     * process at a time (a hung dispatch never returns, so the cases after it would not run) */
    const char *only = getenv("VOX_TEST_CM2_SHAPE");
    const int only_s = only && *only ? atoi(only) : -1;
    cm2_mode = 1;
    for (int d = 0; d < 2; d++)
        for (int s = 0; s < 7; s++)
            for (int k = 0; k < 4; k++) {
                int parts = 0;
                if (only_s >= 0 && s != only_s) continue;
                if (verbose > 1) { /* VOX_TEST_VERBOSE=2: each case before it runs (a hang names its case) */
                    fprintf(stderr, "coopmat2 case %s %lldx%lld n=%lld\n", dt_name(dts[d]), (long long)shapes[s][0],
                            (long long)shapes[s][1], (long long)ns[k]);
                    fflush(stderr);
                }
                double e = linear_case_acc(g, dts[d], shapes[s][0], shapes[s][1], ns[k], (k + s) % 2, &parts, k % 2 == 1);
                CHECK(last_coopmat, "coopmat2 %s %lldx%lld: the matrix was not uploaded as float16 for gemm_cm2",
                      dt_name(dts[d]), (long long)shapes[s][0], (long long)shapes[s][1]);
                if (e > worst) worst = e;
                CHECK(e <= tol, "coopmat2 %s GEMM %lldx%lld n=%lld: max_abs_rel %.3g > %.3g", dt_name(dts[d]),
                      (long long)shapes[s][0], (long long)shapes[s][1], (long long)ns[k], e, tol);
            }
    /* the tile stored whole (a tensor store) or element by element (VOX_VK_CM2_STORE=element): the same
     * bits, with bias and residual add, tiles across the edges */
    for (int s = 0; s < 7 && only_s < 0; s++) {
        const uint64_t seed = rng_state;
        int parts = 0;
        linear_case_acc(g, dts[s % 2], shapes[s][0], shapes[s][1], ns[s % 4], s % 2, &parts, s % 3 == 0);
        float *whole_tile = last_out;
        last_out = NULL;
        rng_state = seed;
        setenv("VOX_VK_CM2_STORE", "element", 1);
        linear_case_acc(g, dts[s % 2], shapes[s][0], shapes[s][1], ns[s % 4], s % 2, &parts, s % 3 == 0);
        unsetenv("VOX_VK_CM2_STORE");
        CHECK(whole_tile && last_out && !memcmp(whole_tile, last_out, sizeof(float) * (size_t)(ns[s % 4] * shapes[s][0])),
              "coopmat2 %lldx%lld: the tensor store changes the bits", (long long)shapes[s][0], (long long)shapes[s][1]);
        free(whole_tile);
    }
    /* a stacked matrix: tiles in one output and across two; the same bits stored whole or by elements */
    for (int k = 0; k < 2 && only_s < 0; k++) {
        static const int64_t srows[3] = {200, 130, 300};   /* 128-row tiles inside one output and across two */
        const int64_t n = k ? 257 : 128;
        const uint64_t seed = rng_state;
        float *a = malloc(sizeof(float) * (size_t)(n * 630)), *b = malloc(sizeof(float) * (size_t)(n * 630));
        int parts;
        double e = stack_run(g, VOX_DTYPE_BF16, srows, 256, n, 1, a, &parts);
        rng_state = seed;
        setenv("VOX_VK_CM2_STORE", "element", 1);
        stack_run(g, VOX_DTYPE_BF16, srows, 256, n, 1, b, &parts);
        unsetenv("VOX_VK_CM2_STORE");
        if (e > worst) worst = e;
        CHECK(e <= tol, "coopmat2 stack 200|130|300 x 256, n=%lld: max_abs_rel %.3g > %.3g", (long long)n, e, tol);
        CHECK(!memcmp(a, b, sizeof(float) * (size_t)(n * 630)), "coopmat2 stack n=%lld: the tensor store changes the bits",
              (long long)n);
        free(a), free(b);
    }
    /* the DiT epilogues: GELU-tanh, and the gated residual y += gate (x . W + b) */
    for (int ep = VX_EPI_GELU_TANH; ep <= VX_EPI_GATED_ADD && only_s < 0; ep++)
        for (int s = 0; s < 4; s++) {
            int parts = 0;
            const uint64_t seed = rng_state;
            epi_mode = ep;
            double e = linear_case_acc(g, dts[s % 2], shapes[s][0], shapes[s][1], ns[s], s % 2, &parts, 0);
            float *whole_tile = last_out;   /* and element by element: the same bits */
            last_out = NULL;
            rng_state = seed;
            setenv("VOX_VK_CM2_STORE", "element", 1);
            linear_case_acc(g, dts[s % 2], shapes[s][0], shapes[s][1], ns[s], s % 2, &parts, 0);
            unsetenv("VOX_VK_CM2_STORE");
            epi_mode = 0;
            CHECK(whole_tile && last_out && !memcmp(whole_tile, last_out, sizeof(float) * (size_t)(ns[s] * shapes[s][0])),
                  "coopmat2 epilogue %d %lldx%lld: the tensor store changes the bits", ep, (long long)shapes[s][0],
                  (long long)shapes[s][1]);
            free(whole_tile);
            if (e > worst) worst = e;
            CHECK(e <= tol, "coopmat2 epilogue %d %lldx%lld n=%lld: max_abs_rel %.3g > %.3g", ep, (long long)shapes[s][0],
                  (long long)shapes[s][1], (long long)ns[s], e, tol);
        }
    cm2_mode = 0;
    if (verbose) printf("coopmat2   %-22s max_abs_rel %.3g (limit %.3g)\n", row, worst, tol);
    emit_row(row, subject, worst);
    if (only_s >= 0) return;
    /* x given as float16 (vx_gop_linear_h: one product) against vx_linear of the same rounded x, as the
     * one-product subgroup GEMM (the vulkan.linear_cmh row): only float32 rounding remains; with each
     * epilogue, edge shapes, 16-byte-misaligned rows (45x100: 200-byte rows) */
    const char *hrow = "vulkan.linear_cmh";
    double htol = tolerance_row(hrow, "max"), hworst = 0;
    cm2_mode = 1, half_x = 1;
    for (int s = 0; s < 7; s++)
        for (int ep = 0; ep <= VX_EPI_GATED_ADD; ep++) {
            int parts = 0;
            const int k = (s + ep) % 4;
            epi_mode = ep;
            double e = linear_case_acc(g, dts[(s + ep) % 2], shapes[s][0], shapes[s][1], ns[k], (s + ep) % 2, &parts, 0);
            epi_mode = 0;
            if (e > hworst) hworst = e;
            CHECK(e <= htol, "coopmat2 float16 x, epilogue %d, %lldx%lld n=%lld: max_abs_rel %.3g > %.3g", ep,
                  (long long)shapes[s][0], (long long)shapes[s][1], (long long)ns[k], e, htol);
        }
    cm2_mode = 0, half_x = 0;
    if (verbose) printf("coopmat2   %-22s max_abs_rel %.3g (limit %.3g; x as float16)\n", hrow, hworst, htol);
}

/* Attention of q, k, v rows as F5's DiT lays them out (vx_gop_attention_full, heads of 64 at rows ld floats
 * apart, both sequences of a batch): the float32 shader against vx_nn_attention (vulkan.attention), and
 * where the device has cooperative matrices the float16 flash attention (attention_cm.comp) against a
 * double-precision attention of the same q, k, v rounded to float16 (vulkan.attention_f16: what remains
 * is the rounding of the softmax weights to float16). */
static void test_attention_full(vx_gpu *g) {
    static const int64_t cfg[][4] = {{1, 1, 1, 0}, {2, 70, 3, 4}, {2, 130, 2, 0}, {1, 300, 4, 8}, {2, 65, 1, 0}};
    const int cm = vx_gop_attention_cm_ok(g, 64, 64), cm2 = cm && vx_gpu_coopmat2(g);
    double worst16 = 0, worst2 = 0;
    for (int c = 0; c < (int)(sizeof cfg / sizeof cfg[0]); c++) {
        const int64_t batch = cfg[c][0], n = cfg[c][1], heads = cfg[c][2], d = 64, ld = heads * d + cfg[c][3];
        const int64_t total = batch * n * ld;
        const float scale = 0.125f;
        float *q = fvec(total, -2, 2), *k = fvec(total, -2, 2), *v = fvec(total, -1, 1);
        float *ref = calloc((size_t)total, sizeof(float)), *got = calloc((size_t)total, sizeof(float));
        vx_nn_attention(pool, batch, n, heads, d, q, ld, k, ld, v, ld, scale, ref, ld);
        char what[96];
        snprintf(what, sizeof what, "full, batch %lld n=%lld heads %lld d=64 ld=%lld", (long long)batch, (long long)n,
                 (long long)heads, (long long)ld);
        for (int f16 = 0; f16 <= cm + cm2; f16++) {   /* 1: attention_cm.comp, 2: attention_cm2.comp */
            if (f16 == 2) setenv("VOX_VK_ATTN_CM2", "1", 1);
            else unsetenv("VOX_VK_ATTN_CM2");
            if (f16 == 1) {   /* the inputs rounded as the shader rounds them; the reference in double */
                for (int64_t i = 0; i < total; i++) q[i] = round_f16(q[i]), k[i] = round_f16(k[i]), v[i] = round_f16(v[i]);
                for (int64_t b = 0; b < batch; b++)
                    for (int64_t i = 0; i < n; i++)
                        for (int64_t h = 0; h < heads; h++) {
                            const float *qi = q + (b * n + i) * ld + h * d;
                            double s[300], mx = -1e300, sum = 0, acc[64] = {0};
                            for (int64_t j = 0; j < n; j++) {
                                const float *kj = k + (b * n + j) * ld + h * d;
                                double dot = 0;
                                for (int64_t e = 0; e < d; e++) dot += (double)qi[e] * kj[e];
                                s[j] = dot * scale;
                                if (s[j] > mx) mx = s[j];
                            }
                            for (int64_t j = 0; j < n; j++) {
                                double pj = exp(s[j] - mx);
                                const float *vj = v + (b * n + j) * ld + h * d;
                                sum += pj;
                                for (int64_t e = 0; e < d; e++) acc[e] += pj * vj[e];
                            }
                            for (int64_t e = 0; e < d; e++) ref[(b * n + i) * ld + h * d + e] = (float)(acc[e] / sum);
                        }
            }
            gt gq = put(g, NULL, total + 1), gk = put(g, NULL, total + 1), gv = put(g, NULL, total + 1),
               go = put(g, NULL, total + 1);   /* bound from float 4 (PAD + 1): 16-byte aligned */
            vx_gpu_upload(g, &gq.buf, (PAD + 1) * 4, q, (uint64_t)total * 4);
            vx_gpu_upload(g, &gk.buf, (PAD + 1) * 4, k, (uint64_t)total * 4);
            vx_gpu_upload(g, &gv.buf, (PAD + 1) * 4, v, (uint64_t)total * 4);
            vx_gpu_upload(g, &go.buf, (PAD + 1) * 4, ref, (uint64_t)total * 4);   /* the gaps between heads: as ref */
            vx_gpu_begin(g);
            vox_status st = vx_gop_attention_full(g, TO(&gq, 1), TO(&gk, 1), TO(&gv, 1), batch, n, heads, d, ld, scale,
                                                  f16 > 0, TO(&go, 1), NULL);
            unsetenv("VOX_VK_ATTN_CM2");
            CHECK(vx_gpu_submit(g) == VOX_OK && st == VOX_OK, "attention_full: %s", vox_last_error());
            CHECK(vx_gpu_download(g, &go.buf, (PAD + 1) * 4, got, (uint64_t)total * 4) == VOX_OK, "download");
            double e = max_abs_rel(got, ref, total);
            if (!f16) report("vulkan.attention", what, e);
            else {
                double *w = f16 == 2 ? &worst2 : &worst16;
                if (e > *w) *w = e;
                CHECK(e <= tolerance_row("vulkan.attention_f16", "max"), "attention_f16 (%s) %s: max_abs_rel %.3g",
                      f16 == 2 ? "cooperative matrix 2" : "subgroup matrices", what, e);
                if (verbose)
                    printf("ops        %-22s %-34s max_abs_rel %.3g%s\n", "vulkan.attention_f16", what, e,
                           f16 == 2 ? " (cooperative matrix 2)" : "");
            }
            drop(g, &gq), drop(g, &gk), drop(g, &gv), drop(g, &go);
        }
        free(q), free(k), free(v), free(ref), free(got);
    }
    const char *subject = "float16 flash attention on cooperative matrices (subgroup scope, and workgroup scope where VK_NV_cooperative_matrix2 is) vs a double attention of the rounded q, k, v; "
                          "batch 1-2, 1 to 300 rows, 1-4 heads of 64, row gaps";
    if (cm) emit_row("vulkan.attention_f16", subject, worst16 > worst2 ? worst16 : worst2);
    else {
        printf("attention (float16, cooperative matrices): not tested on this device\n");
        emit_unsupported("vulkan.attention_f16", subject, "no cooperative matrices or subgroups of 32 / 64");
    }
}

/* ------------------------------------------------------------------------------ other ops */

static void report(const char *row, const char *what, double err) {
    double tol = tolerance_row(row, "max");
    CHECK(err <= tol, "%s %s: max_abs_rel %.3g > %.3g", row, what, err, tol);
    if (verbose) printf("ops        %-22s %-34s max_abs_rel %.3g (limit %.3g)\n", row, what, err, tol);
    emit_row(row, what, err);
}

static void test_norm_elementwise(vx_gpu *g) {
    static const int64_t shapes[][2] = {{1, 64}, {5, 96}, {16, 128}, {3, 1024}, {2, 2048}};
    for (int s = 0; s < 5; s++) {
        int64_t rows = shapes[s][0], d = shapes[s][1], n = rows * d;
        float *x = fvec(n, -2, 2), *w = fvec(d, 0.5f, 1.5f), *u = fvec(n, -2, 2);
        float *ref = malloc(sizeof(float) * (size_t)n), *got = malloc(sizeof(float) * (size_t)n);
        char what[64];
        snprintf(what, sizeof what, "%lldx%lld", (long long)rows, (long long)d);
        for (int with_w = 0; with_w < 2; with_w++) {
            gt gx = put(g, x, n), gw = put(g, w, d);
            vx_rms_norm(x, with_w ? w : NULL, rows, d, 1e-6f, ref);
            vx_gpu_begin(g);
            vx_gbind wb = T(&gw);
            vx_gop_rms_norm(g, T(&gx), with_w ? &wb : NULL, rows, d, 1e-6f, T(&gx), NULL);   /* in place */
            CHECK(vx_gpu_submit(g) == VOX_OK, "rms_norm: %s", vox_last_error());
            get(g, &gx, got);
            report("vulkan.rms_norm", what, max_abs_rel(got, ref, n));
            drop(g, &gx);
            drop(g, &gw);
        }
        {
            gt ga = put(g, x, n), gb = put(g, u, n);
            vx_silu_mul(x, u, n, ref);
            vx_gpu_begin(g);
            vx_gop_silu_mul(g, T(&ga), T(&gb), n, T(&ga), NULL);
            CHECK(vx_gpu_submit(g) == VOX_OK, "silu_mul: %s", vox_last_error());
            get(g, &ga, got);
            report("vulkan.silu_mul", what, max_abs_rel(got, ref, n));
            drop(g, &ga);
            drop(g, &gb);
        }
        {
            gt ga = put(g, x, n), gb = put(g, u, n), gy = put(g, NULL, n);
            vx_add(x, u, n, ref);
            vx_gpu_begin(g);
            vx_gop_add(g, T(&ga), T(&gb), n, T(&gy), NULL);
            CHECK(vx_gpu_submit(g) == VOX_OK, "add: %s", vox_last_error());
            get(g, &gy, got);
            CHECK(!memcmp(got, ref, sizeof(float) * (size_t)n), "add %s: not exact", what);
            drop(g, &ga);
            drop(g, &gb);
            drop(g, &gy);
        }
        free(x), free(w), free(u), free(ref), free(got);
    }
}

static void test_rope(vx_gpu *g) {
    static const int64_t cfg[][3] = {{1, 16, 128}, {7, 8, 64}, {3, 2, 16}};
    for (int c = 0; c < 3; c++) {
        int64_t n = cfg[c][0], heads = cfg[c][1], d = cfg[c][2];
        float *x = fvec(n * heads * d, -2, 2), *cs = malloc(sizeof(float) * (size_t)(n * d)),
              *sn = malloc(sizeof(float) * (size_t)(n * d)), *got = malloc(sizeof(float) * (size_t)(n * heads * d));
        for (int64_t i = 0; i < n * d; i++) {
            float a = urand(-40, 40);
            cs[i] = cosf(a);
            sn[i] = sinf(a);
        }
        gt gx = put(g, x, n * heads * d), gc = put(g, cs, n * d), gs = put(g, sn, n * d);
        vx_rope(x, n, heads, d, cs, sn);
        vx_gpu_begin(g);
        vx_gop_rope(g, T(&gx), n, heads, d, T(&gc), T(&gs), NULL);
        CHECK(vx_gpu_submit(g) == VOX_OK, "rope: %s", vox_last_error());
        get(g, &gx, got);
        char what[64];
        snprintf(what, sizeof what, "n=%lld heads=%lld d=%lld", (long long)n, (long long)heads, (long long)d);
        report("vulkan.rope", what, max_abs_rel(got, x, n * heads * d));
        drop(g, &gx);
        /* the fused per-head RMSNorm + rope of q and k */
        float *x2 = fvec(n * heads * d, -2, 2), *w = fvec(d, 0.5f, 1.5f);
        gx = put(g, x2, n * heads * d);
        gt gw = put(g, w, d);
        vx_rms_norm(x2, w, n * heads, d, 1e-6f, x2);
        vx_rope(x2, n, heads, d, cs, sn);
        vx_gpu_begin(g);
        vx_gop_norm_rope(g, T(&gx), T(&gw), n, heads, d, 1e-6f, T(&gc), T(&gs), NULL);
        CHECK(vx_gpu_submit(g) == VOX_OK, "norm_rope: %s", vox_last_error());
        get(g, &gx, got);
        report("vulkan.rms_norm", "per-head norm + rope (fused)", max_abs_rel(got, x2, n * heads * d));
        free(x2), free(w);
        drop(g, &gx), drop(g, &gw), drop(g, &gc), drop(g, &gs);
        free(x), free(cs), free(sn), free(got);
    }
}

static void test_attention(vx_gpu *g) {
    /* nq, nk, hq, hkv, d, window: decode steps, prefill blocks, GQA, a sliding window, long contexts
     * (several 256-key tiles of the online softmax), a head size that does not divide the workgroup */
    static const int64_t cfg[][6] = {{1, 1, 4, 2, 32, 0},    {1, 37, 16, 8, 128, 0}, {9, 9, 4, 1, 64, 0},
                                     {5, 70, 8, 2, 64, 0},   {6, 50, 4, 4, 32, 16},  {1, 300, 2, 1, 128, 72},
                                     {64, 200, 4, 2, 64, 0}, {1, 700, 4, 2, 128, 0}, {3, 600, 4, 2, 24, 0},
                                     {2, 1100, 2, 1, 256, 600}};
    for (int c = 0; c < (int)(sizeof cfg / sizeof cfg[0]); c++) {
        int64_t nq = cfg[c][0], nk = cfg[c][1], hq = cfg[c][2], hkv = cfg[c][3], d = cfg[c][4], win = cfg[c][5];
        float scale = 1.0f / sqrtf((float)d);
        float *q = fvec(nq * hq * d, -2, 2), *k = fvec(nk * hkv * d, -2, 2), *v = fvec(nk * hkv * d, -1, 1);
        float *ref = malloc(sizeof(float) * (size_t)(nq * hq * d)), *got = malloc(sizeof(float) * (size_t)(nq * hq * d));
        vx_attention(pool, q, nq, hq, k, v, nk, hkv, d, scale, win, ref);
        gt gq = put(g, q, nq * hq * d), gk = put(g, k, nk * hkv * d), gv = put(g, v, nk * hkv * d),
           go = put(g, NULL, nq * hq * d);
        vx_gpu_begin(g);
        vx_gop_attention(g, T(&gq), nq, hq, T(&gk), T(&gv), nk, hkv, d, scale, win, T(&go), NULL);
        CHECK(vx_gpu_submit(g) == VOX_OK, "attention: %s", vox_last_error());
        get(g, &go, got);
        char what[96];
        snprintf(what, sizeof what, "nq=%lld nk=%lld hq=%lld hkv=%lld d=%lld win=%lld", (long long)nq, (long long)nk,
                 (long long)hq, (long long)hkv, (long long)d, (long long)win);
        report("vulkan.attention", what, max_abs_rel(got, ref, nq * hq * d));
        drop(g, &gq), drop(g, &gk), drop(g, &gv), drop(g, &go);
        free(q), free(k), free(v), free(ref), free(got);
    }
}

/* Choosing codes: the GPU's float32 sampling against q3_warp + q3_choose (float64 probabilities) on
 * random logits, for greedy and the warpers; and the embedding of the chosen code, bit-exact. */
static void test_sample_gather(vx_gpu *g) {
    /* the last two on logits with many ties (multiples of 0.5): top-k keeps every tie of the k-th */
    static const vx_gsampler cfg[] = {{0, 1.0f, 0, 1.0f}, {1, 1.0f, 0, 1.0f}, {1, 0.9f, 50, 1.0f},
                                      {1, 0.7f, 0, 0.8f}, {1, 1.3f, 30, 0.9f}, {1, 1.0f, 1, 1.0f},
                                      {1, 1.0f, 7, 1.0f}, {0, 1.0f, 0, 1.0f}};
    const int64_t V = 2048;
    const int draws = 40;
    gt gl = put(g, NULL, V * draws), gws = put(g, NULL, V);
    vx_gbuf codes, us;
    vx_gpu_alloc(g, (uint64_t)draws * 4, 1, &codes);
    vx_gpu_alloc(g, (uint64_t)draws * 4, 1, &us);
    q3_sample_work w;
    q3_sample_work_init(&w, V);
    int total = 0, same = 0;
    for (size_t c = 0; c < sizeof cfg / sizeof cfg[0]; c++) {
        float *lg = fvec(V * draws, -6, 6), *sc = malloc(sizeof(float) * (size_t)V);
        if (c >= 6)
            for (int64_t i = 0; i < V * draws; i++) lg[i] = roundf(lg[i] * 2.0f) * 0.5f;
        int32_t want[64];
        for (int d = 0; d < draws; d++) {
            double u = vox_philox_uniform(1234, (uint32_t)d, (uint32_t)c);
            ((float *)us.map)[d] = (float)u;
            memcpy(sc, lg + d * V, sizeof(float) * (size_t)V);
            q3_sampler sp = {cfg[c].do_sample, cfg[c].temperature, cfg[c].top_k, cfg[c].top_p};
            q3_warp(sc, V, &sp, &w);
            want[d] = cfg[c].do_sample ? q3_sample(sc, V, u, &w) : q3_greedy(sc, V);
        }
        vx_gpu_upload(g, &gl.buf, PAD * 4, lg, sizeof(float) * (size_t)(V * draws));
        vx_gpu_begin(g);
        for (int d = 0; d < draws; d++) {
            vx_gbind lb = {&gl.buf, (uint64_t)(PAD + d * V) * 4, (uint64_t)V * 4};
            vx_gop_sample(g, lb, V, &cfg[c], T(&gws), (vx_gbind){&codes, 0, 0}, (vx_gbind){&us, 0, 0}, d, NULL);
        }
        CHECK(vx_gpu_submit(g) == VOX_OK, "sample: %s", vox_last_error());
        {   /* sample + gather in one dispatch: the same codes, and the CPU's rows of them */
            static const vox_dtype tdt[] = {VOX_DTYPE_BF16, VOX_DTYPE_Q4, VOX_DTYPE_F32, VOX_DTYPE_Q8};
            const int64_t E = 64;
            wmat tm = make_w(tdt[c % 4], V, E);
            vx_gmat tg;
            CHECK(vx_gmat_upload(g, &tm.m, &tg) == VOX_OK, "table upload: %s", vox_last_error());
            vx_gbuf codes2;
            vx_gpu_alloc(g, (uint64_t)draws * 4, 1, &codes2);
            gt go = put(g, NULL, draws * E);
            vx_gpu_begin(g);
            for (int d = 0; d < draws; d++) {
                vx_gbind lb = {&gl.buf, (uint64_t)(PAD + d * V) * 4, (uint64_t)V * 4};
                vx_gbind ob = {&go.buf, (uint64_t)(PAD + d * E) * 4, (uint64_t)E * 4};
                vx_gop_sample_gather(g, lb, V, &cfg[c], T(&gws), (vx_gbind){&codes2, 0, 0}, (vx_gbind){&us, 0, 0}, d, &tg,
                                     ob, NULL);
            }
            CHECK(vx_gpu_submit(g) == VOX_OK, "sample_gather: %s", vox_last_error());
            float *rows = malloc(sizeof(float) * (size_t)(draws * E)), *got = malloc(sizeof(float) * (size_t)(draws * E));
            vx_gather_rows(&tm.m, (const int32_t *)codes2.map, draws, rows);
            get(g, &go, got);
            CHECK(!memcmp(codes.map, codes2.map, (size_t)draws * 4), "sample_gather cfg %zu: codes differ from sample's", c);
            CHECK(!memcmp(rows, got, sizeof(float) * (size_t)(draws * E)), "sample_gather cfg %zu: rows differ from the CPU's", c);
            free(rows), free(got);
            drop(g, &go);
            vx_gpu_release(g, &codes2);
            vx_gmat_free(g, &tg);
            free_w(&tm);
        }
        int ok = 0;
        for (int d = 0; d < draws; d++) ok += ((int32_t *)codes.map)[d] == want[d];
        if (!cfg[c].do_sample) CHECK(ok == draws, "greedy: %d of %d codes differ", draws - ok, draws);
        if (verbose) printf("sample     cfg %zu (sample %d t %.1f k %d p %.1f): %d of %d codes as the CPU\n", c,
                            cfg[c].do_sample, cfg[c].temperature, cfg[c].top_k, cfg[c].top_p, ok, draws);
        total += draws;
        same += ok;
        free(lg), free(sc);
    }
    double frac = (double)same / total;
    CHECK(frac >= tolerance_row("vulkan.sampled_codes_vs_cpu", "min"), "sampling: %.4f of codes as the CPU", frac);
    emit_row("vulkan.sampled_codes_vs_cpu", "random logits (V 2048, 8 settings x 40 draws: greedy, temperature, top-k, "
             "top-p, tied logits) vs q3_warp + q3_choose", frac);
    q3_sample_work_free(&w);
    drop(g, &gl), drop(g, &gws);

    static const vox_dtype dts[] = {VOX_DTYPE_F32, VOX_DTYPE_F16, VOX_DTYPE_BF16, VOX_DTYPE_Q8, VOX_DTYPE_Q4};
    for (int d = 0; d < 5; d++) {
        wmat wm = make_w(dts[d], 70, 96);
        vx_gmat gm;
        CHECK(vx_gmat_upload(g, &wm.m, &gm) == VOX_OK, "gather upload: %s", vox_last_error());
        int32_t ids[3] = {0, 69, 33};
        float ref[3 * 96], got[3 * 96];
        vx_gather_rows(&wm.m, ids, 3, ref);
        gt go = put(g, NULL, 3 * 96);
        memcpy(codes.map, ids, sizeof ids);
        vx_gpu_begin(g);
        for (int i = 0; i < 3; i++) {
            vx_gbind ob = {&go.buf, (uint64_t)(PAD + 96 * i) * 4, 96 * 4};
            vx_gop_gather(g, &gm, (vx_gbind){&codes, 0, 0}, i, ob, NULL);
        }
        CHECK(vx_gpu_submit(g) == VOX_OK, "gather: %s", vox_last_error());
        get(g, &go, got);
        CHECK(!memcmp(got, ref, sizeof ref), "gather %s: not the CPU's values", dt_name(dts[d]));
        drop(g, &go);
        vx_gmat_free(g, &gm);
        free_w(&wm);
    }
    vx_gpu_release(g, &codes);
    vx_gpu_release(g, &us);
}

/* The activation quantizer gives the CPU's codes and scales bit for bit (exact divisions), over blocks of
 * magnitudes from 1e-30 to 1e30, zeros, and values on the rounding boundaries. */
static void test_quantize(vx_gpu *g) {
    const int64_t blocks = 4096, n = blocks * 32;
    float *x = fvec(n, -1, 1);
    for (int64_t b = 0; b < blocks; b++) {
        float scale = powf(10.0f, (float)((int)(b % 61) - 30));
        for (int j = 0; j < 32; j++) x[b * 32 + j] *= scale;
        if (b % 97 == 0)
            for (int j = 0; j < 32; j++) x[b * 32 + j] = 0.0f;
        if (b % 5 == 1)   /* amax 127: codes land on k + 0.5 exactly */
            for (int j = 0; j < 32; j++) x[b * 32 + j] = j == 0 ? 127.0f : (float)(j * 3 % 254 - 127) + 0.5f;
    }
    int8_t *q = malloc((size_t)n);
    float *d = malloc(sizeof(float) * (size_t)blocks);
    for (int64_t b = 0; b < blocks; b++) d[b] = vx_quantize_block_q8(x + 32 * b, q + 32 * b);
    gt gx = put(g, x, n);
    vx_gbuf bq, bd;
    vx_gpu_alloc(g, (uint64_t)n, 1, &bq);
    vx_gpu_alloc(g, (uint64_t)blocks * 4, 1, &bd);
    vx_gpu_begin(g);
    vx_gop_quantize(g, T(&gx), 1, n, whole(&bq), whole(&bd), NULL);
    CHECK(vx_gpu_submit(g) == VOX_OK, "quantize: %s", vox_last_error());
    int64_t bad_q = 0, bad_d = 0;
    for (int64_t i = 0; i < n; i++) bad_q += ((int8_t *)bq.map)[i] != q[i];
    for (int64_t b = 0; b < blocks; b++) bad_d += memcmp(&((float *)bd.map)[b], &d[b], 4) != 0;
    CHECK(bad_q == 0 && bad_d == 0, "quantize: %lld codes and %lld scales differ from the CPU's", (long long)bad_q,
          (long long)bad_d);
    /* the fused norm + quantization gives the bytes of the two steps (rows of 1024 of the same data) */
    {
        const int64_t rows = n / 1024;
        float *w = fvec(1024, 0.5f, 1.5f), *yn = malloc(sizeof(float) * (size_t)n);
        int8_t *q2 = malloc((size_t)n);
        float *d2 = malloc(sizeof(float) * (size_t)blocks);
        vx_rms_norm(x, w, rows, 1024, 1e-6f, yn);
        for (int64_t b = 0; b < blocks; b++) d2[b] = vx_quantize_block_q8(yn + 32 * b, q2 + 32 * b);
        gt gw = put(g, w, 1024), gy = put(g, NULL, n);
        vx_gbind wb = T(&gw);
        vx_gpu_begin(g);
        vx_gop_rms_norm_q8(g, T(&gx), &wb, rows, 1024, 1e-6f, T(&gy), whole(&bq), whole(&bd), NULL);
        CHECK(vx_gpu_submit(g) == VOX_OK, "rms_norm_q8: %s", vox_last_error());
        float *got = malloc(sizeof(float) * (size_t)n);
        get(g, &gy, got);
        report("vulkan.rms_norm", "norm + quantization (fused), 128 rows of 1024", max_abs_rel(got, yn, n));
        int64_t bq2 = 0, bd2 = 0;
        for (int64_t i = 0; i < n; i++) bq2 += ((int8_t *)bq.map)[i] != q2[i];
        for (int64_t b = 0; b < blocks; b++) bd2 += fabsf(((float *)bd.map)[b] - d2[b]) > 1e-6f * fabsf(d2[b]);
        /* the norm itself differs from the CPU's in the last bits (summation order), so compare the
         * codes of the GPU's own normalized rows instead of the CPU's */
        int8_t *q3 = malloc((size_t)n);
        float *d3 = malloc(sizeof(float) * (size_t)blocks);
        for (int64_t b = 0; b < blocks; b++) d3[b] = vx_quantize_block_q8(got + 32 * b, q3 + 32 * b);
        int64_t bq3 = 0, bd3 = 0;
        for (int64_t i = 0; i < n; i++) bq3 += ((int8_t *)bq.map)[i] != q3[i];
        for (int64_t b = 0; b < blocks; b++) bd3 += memcmp(&((float *)bd.map)[b], &d3[b], 4) != 0;
        CHECK(bq3 == 0 && bd3 == 0, "rms_norm_q8: %lld codes and %lld scales differ from quantizing its own output",
              (long long)bq3, (long long)bd3);
        if (verbose)
            printf("quantize   fused norm: %lld/%lld codes/scales differ from its own output's, %lld/%lld from the "
                   "CPU norm's\n", (long long)bq3, (long long)bd3, (long long)bq2, (long long)bd2);
        drop(g, &gw), drop(g, &gy);
        free(w), free(yn), free(q2), free(d2), free(q3), free(d3), free(got);
    }
    /* silu(gate) * up quantized in one pass: the bytes of vx_gop_silu_mul then vx_gop_quantize (the GPU
     * product, whose bits may differ from the CPU's exp), and within one code of the CPU's product */
    {
        float *u = fvec(n, -2, 2), *prod = malloc(sizeof(float) * (size_t)n);
        vx_silu_mul(x, u, n, prod);
        gt gu = put(g, u, n), gp = put(g, NULL, n);
        vx_gbuf bq2, bd2;
        vx_gpu_alloc(g, (uint64_t)n, 1, &bq2);
        vx_gpu_alloc(g, (uint64_t)blocks * 4, 1, &bd2);
        vx_gpu_begin(g);
        vx_gop_silu_mul(g, T(&gx), T(&gu), n, T(&gp), NULL);
        vx_gop_quantize(g, T(&gp), 4, n / 4, whole(&bq), whole(&bd), NULL);
        vx_gop_quantize_silu(g, T(&gx), T(&gu), 4, n / 4, whole(&bq2), whole(&bd2), NULL);
        CHECK(vx_gpu_submit(g) == VOX_OK, "quantize_silu: %s", vox_last_error());
        CHECK(!memcmp(bq.map, bq2.map, (size_t)n) && !memcmp(bd.map, bd2.map, (size_t)blocks * 4),
              "quantize_silu: codes or scales differ from silu_mul + quantize");
        int8_t *qc = malloc((size_t)n);
        float *dc = malloc(sizeof(float) * (size_t)blocks);
        for (int64_t b = 0; b < blocks; b++) dc[b] = vx_quantize_block_q8(prod + 32 * b, qc + 32 * b);
        int64_t far = 0;
        for (int64_t i = 0; i < n; i++) far += abs(((int8_t *)bq2.map)[i] - qc[i]) > 1;
        CHECK(far == 0, "quantize_silu: %lld codes more than one step from the CPU's", (long long)far);
        drop(g, &gu), drop(g, &gp);
        vx_gpu_release(g, &bq2), vx_gpu_release(g, &bd2);
        free(u), free(prod), free(qc), free(dc);
    }
    if (verbose) printf("quantize   %lld blocks: %lld codes, %lld scales differ\n", (long long)blocks, (long long)bad_q,
                        (long long)bad_d);
    drop(g, &gx);
    vx_gpu_release(g, &bq);
    vx_gpu_release(g, &bd);
    free(x), free(q), free(d);
}

/* An output does not depend on how many x rows share the GEMV (4 at once vs one at a time) or the
 * GEMM (70 rows at once, two tiles, vs batches of 33 from every start): the same bits. */
static void batch_invariance(vx_gpu *g, int64_t n, int64_t m1);
static void test_batch_invariance(vx_gpu *g) {
    batch_invariance(g, 4, 1);
    batch_invariance(g, 70, VX_GEMV_MAX_ROWS + 1);
}

static void batch_invariance(vx_gpu *g, int64_t n, int64_t m1) {
    static const vox_dtype dts[] = {VOX_DTYPE_F32, VOX_DTYPE_F16, VOX_DTYPE_BF16, VOX_DTYPE_Q8, VOX_DTYPE_Q4};
    const int64_t rows = 70, cols = 256;
    for (int d = 0; d < 5; d++) {
        wmat w = make_w(dts[d], rows, cols);
        float *x = fvec(n * cols, -1, 1), *all = malloc(sizeof(float) * (size_t)(n * rows)),
              *one = malloc(sizeof(float) * (size_t)(m1 * rows));
        vx_gmat gm;
        vx_gmat_upload(g, &w.m, &gm);
        gt gx = put(g, x, n * cols), gy = put(g, NULL, n * rows);
        vx_gbuf bq, bd;
        vx_gpu_alloc(g, (uint64_t)(n * cols), 0, &bq);
        vx_gpu_alloc(g, (uint64_t)(n * cols / 32) * 4, 0, &bd);
        int q = dts[d] == VOX_DTYPE_Q8 || dts[d] == VOX_DTYPE_Q4, same = 1;
        for (int64_t i = -1; i + m1 <= n; i++) {   /* -1: all rows at once */
            int64_t m = i < 0 ? n : m1, off = i < 0 ? 0 : i;
            vx_gbind xi = {&gx.buf, (uint64_t)(PAD + off * cols) * 4, 0}, yi = {&gy.buf, (uint64_t)(PAD + off * rows) * 4, 0};
            vx_gpu_begin(g);
            if (q) vx_gop_quantize(g, xi, m, cols, whole(&bq), whole(&bd), NULL);
            vx_gop_linear(g, &gm, NULL, xi, whole(&bq), whole(&bd), m, yi, 0, 0, NULL);
            CHECK(vx_gpu_submit(g) == VOX_OK, "batch: %s", vox_last_error());
            if (i < 0) get(g, &gy, all);
            else {
                vx_gpu_download(g, &gy.buf, (uint64_t)(PAD + i * rows) * 4, one, (uint64_t)(m1 * rows) * 4);
                same &= !memcmp(one, all + i * rows, sizeof(float) * (size_t)(m1 * rows));
            }
        }
        CHECK(same, "%s: rows computed in batches of %lld differ from the same rows in a batch of %lld",
              dt_name(dts[d]), (long long)m1, (long long)n);
        drop(g, &gx), drop(g, &gy);
        vx_gpu_release(g, &bq), vx_gpu_release(g, &bd);
        vx_gmat_free(g, &gm);
        free_w(&w);
        free(x), free(all), free(one);
    }
}

/* q|k|v-like stacks: three matrices of one input in one GEMV, each output in its own buffer at an
 * offset, one of them without bias; with a small binding limit the parts cross the segments. */
static void stack_case(vx_gpu *g, int64_t n);
static void test_stack(vx_gpu *g, int64_t n_gemm) {
    stack_case(g, 2);        /* GEMV */
    stack_case(g, n_gemm);   /* GEMM */
}

static void stack_case(vx_gpu *g, int64_t n) {
    static const vox_dtype dts[] = {VOX_DTYPE_F32, VOX_DTYPE_BF16, VOX_DTYPE_Q8, VOX_DTYPE_Q4};
    static const int64_t rows[3] = {64, 24, 40};
    float *got = malloc(sizeof(float) * 128 * (size_t)n);
    for (int d = 0; d < 4; d++) {
        int parts = 0;
        double worst = stack_run(g, dts[d], rows, 256, n, 0, got, &parts);
        char row[64], what[96];
        snprintf(row, sizeof row, "vulkan.linear_%s", dt_name(dts[d]));
        snprintf(what, sizeof what, "stack of 3 (64|24|40 x 256) in %d part(s), %lld x rows", parts, (long long)n);
        report(row, what, worst);
    }
    free(got);
}

/* A matrix larger than one binding may cover is split by rows: the result is the same. */
static void test_split(int dev) {
    setenv("VOX_VK_MAX_RANGE", "8192", 1);
    setenv("VOX_VK_GEMV_MAX_ROWS", "4", 1);   /* small GEMMs, so that x fits the 8 KiB bindings */
    vx_gpu *g = NULL;
    vox_status st = vx_gpu_create(dev, &g);
    unsetenv("VOX_VK_MAX_RANGE");
    unsetenv("VOX_VK_GEMV_MAX_ROWS");
    CHECK(st == VOX_OK, "second context: %s", vox_last_error());
    if (st != VOX_OK) return;
    CHECK(vx_gpu_max_range(g) == 8192, "VOX_VK_MAX_RANGE not applied: %llu", (unsigned long long)vx_gpu_max_range(g));
    CHECK(vx_gpu_gemv_max_rows(g) == 4, "VOX_VK_GEMV_MAX_ROWS not applied: %d", vx_gpu_gemv_max_rows(g));
    /* the GEMM of 5 .. 32 rows, not met in the main context */
    static const vox_dtype all[] = {VOX_DTYPE_F32, VOX_DTYPE_F16, VOX_DTYPE_BF16, VOX_DTYPE_Q8, VOX_DTYPE_Q4};
    for (int d = 0; d < 5; d++) {
        char row[64];
        snprintf(row, sizeof row, "vulkan.linear_%s", dt_name(all[d]));
        double worst = 0;
        for (int64_t n = 5; n <= 7; n++) {
            int parts = 0;
            double e = linear_case_acc(g, all[d], 130, 64, n, (int)n % 2, &parts, n == 6);
            CHECK(e <= tolerance_row(row, "max"), "small GEMM %s n=%lld: max_abs_rel %.3g", dt_name(all[d]), (long long)n, e);
            if (e > worst) worst = e;
        }
        emit_row(row, "tiled GEMM of 5 to 7 x rows (130x64, split in parts) vs vx_linear", worst);
    }
    test_stack(g, 6);   /* the GEMM from 5 rows here: x must fit the 8 KiB binding */
    static const vox_dtype dts[] = {VOX_DTYPE_F32, VOX_DTYPE_BF16, VOX_DTYPE_Q8, VOX_DTYPE_Q4};
    for (int d = 0; d < 4; d++) {
        char row[64];
        snprintf(row, sizeof row, "vulkan.linear_%s", dt_name(dts[d]));
        int parts = 0;
        double e = linear_case(g, dts[d], 100, 512, 2, 1, &parts);
        CHECK(parts > 1, "split %s: %d part(s)", dt_name(dts[d]), parts);
        double eg = linear_case(g, dts[d], 100, 256, 6, 0, &parts);   /* the GEMM over the parts (x fits one binding) */
        CHECK(eg <= tolerance_row(row, "max"), "split %s GEMM (%d parts): max_abs_rel %.3g", dt_name(dts[d]), parts, eg);
        if (eg > e) e = eg;
        CHECK(e <= tolerance_row(row, "max"), "split %s (%d parts): max_abs_rel %.3g", dt_name(dts[d]), parts, e);
        if (verbose) printf("split      %-22s %d parts, max_abs_rel %.3g\n", row, parts, e);
        char what[96];
        snprintf(what, sizeof what, "100x512 split in %d parts (binding limit 8 KiB), GEMV and GEMM, vs vx_linear", parts);
        emit_row(row, what, e);
    }
    /* a row that alone exceeds the range is refused with a clear error */
    wmat w = make_w(VOX_DTYPE_F32, 2, 4096);
    vx_gmat gm;
    CHECK(vx_gmat_upload(g, &w.m, &gm) == VOX_ERR_UNSUPPORTED, "an over-long row was accepted");
    free_w(&w);
    vx_gpu_free(g);
}

/* Barriers only where dispatches depend on each other: a chain with independent steps, a
 * read-after-write, a write-after-read and in-place ops gives the bits of the same chain with a
 * barrier between every two dispatches, with 3 barriers instead of 6. */
static void barrier_chain(vx_gpu *g, gt *x, gt *x2, gt *x3, gt *w, vx_gmat *m, gt *h, gt *h2, gt *y1, gt *y2, gt *y3,
                          int64_t n, int64_t d) {
    vx_gbind wb = T(w);
    vx_gpu_begin(g);
    vx_gop_rms_norm(g, T(x), &wb, n, d, 1e-6f, T(h), NULL);                               /* 1 */
    vx_gop_rms_norm(g, T(x2), &wb, n, d, 1e-6f, T(h2), NULL);                             /* 2: independent */
    vx_gop_linear(g, m, NULL, T(h), T(h), T(h), n, T(y1), 0, 0, NULL);                    /* 3: reads 1 */
    vx_gop_linear(g, m, NULL, T(h2), T(h2), T(h2), n, T(y2), 0, 0, NULL);                 /* 4: independent of 3 */
    vx_gop_rms_norm(g, T(x3), &wb, n, d, 1e-6f, T(h2), NULL);                             /* 5: overwrites 4's input */
    vx_gop_add(g, T(y1), T(y2), n * d, T(y3), NULL);                                      /* 6: after the barrier of 5 */
    vx_gop_silu_mul(g, T(y3), T(y1), n * d, T(y3), NULL);                                 /* 7: in place, reads 6 */
    CHECK(vx_gpu_submit(g) == VOX_OK, "barrier chain: %s", vox_last_error());
}

/* Calls that take the device lock (prepare, and upload / download of memory the host cannot map) from the
 * thread that records a chain: refused with an error, not a deadlock that hangs the process (a test that
 * uploaded inside its chain hung on NVIDIA, where lavapipe's mapped memory never takes the lock); the
 * chain still submits, and the device works after it. */
static void test_chain_reentry(vx_gpu *g) {
    float v[4] = {1, 2, 3, 4}, back[4] = {0};
    vx_gbuf b;
    CHECK(vx_gpu_alloc(g, sizeof v, 0, &b) == VOX_OK, "alloc: %s", vox_last_error());
    CHECK(vx_gpu_begin(g) == VOX_OK, "begin: %s", vox_last_error());
    CHECK(vx_gpu_prepare(g) != VOX_OK && strstr(vox_last_error(), "same thread"),
          "vx_gpu_prepare inside a chain was not refused (%s)", vox_last_error());
    if (!b.map) {   /* device-local memory: through the staging buffer, under the lock */
        CHECK(vx_gpu_upload(g, &b, 0, v, sizeof v) != VOX_OK, "vx_gpu_upload inside a chain was not refused");
        CHECK(vx_gpu_download(g, &b, 0, back, sizeof back) != VOX_OK, "vx_gpu_download inside a chain was not refused");
    }
    CHECK(vx_gpu_submit(g) == VOX_OK, "submit after a refused call: %s", vox_last_error());
    CHECK(vx_gpu_upload(g, &b, 0, v, sizeof v) == VOX_OK && vx_gpu_download(g, &b, 0, back, sizeof back) == VOX_OK &&
              !memcmp(v, back, sizeof v),
          "upload and download after the chain: %s", vox_last_error());
    vx_gpu_release(g, &b);
}

static void test_barriers(vx_gpu *g) {
    const int64_t n = 3, d = 256;
    float *xs[3] = {fvec(n * d, -2, 2), fvec(n * d, -2, 2), fvec(n * d, -2, 2)}, *wv = fvec(d, 0.5f, 1.5f);
    wmat wm = make_w(VOX_DTYPE_F32, d, d);
    vx_gmat m;
    CHECK(vx_gmat_upload(g, &wm.m, &m) == VOX_OK, "upload: %s", vox_last_error());
    gt x = put(g, xs[0], n * d), x2 = put(g, xs[1], n * d), x3 = put(g, xs[2], n * d), w = put(g, wv, d);
    float *out[2][2];
    int64_t bars[2];
    for (int full = 1; full >= 0; full--) {
        gt h = put(g, NULL, n * d), h2 = put(g, NULL, n * d), y1 = put(g, NULL, n * d), y2 = put(g, NULL, n * d),
           y3 = put(g, NULL, n * d);
        vx_gpu_set_full_barriers(g, full);
        vx_gpu_count c0, c1;
        vx_gpu_counts(g, &c0);
        barrier_chain(g, &x, &x2, &x3, &w, &m, &h, &h2, &y1, &y2, &y3, n, d);
        vx_gpu_counts(g, &c1);
        bars[full] = (int64_t)(c1.barriers - c0.barriers);
        CHECK(c1.dispatches - c0.dispatches == 7, "barrier chain: %llu dispatches",
              (unsigned long long)(c1.dispatches - c0.dispatches));
        for (int k = 0; k < 2; k++) out[full][k] = malloc(sizeof(float) * (size_t)(n * d));
        get(g, &y3, out[full][0]);
        get(g, &h2, out[full][1]);
        drop(g, &h), drop(g, &h2), drop(g, &y1), drop(g, &y2), drop(g, &y3);
    }
    vx_gpu_set_full_barriers(g, 0);
    CHECK(bars[1] == 6 && bars[0] == 3, "barriers: %lld with all, %lld tracked (want 6 and 3)", (long long)bars[1],
          (long long)bars[0]);
    CHECK(!memcmp(out[0][0], out[1][0], sizeof(float) * (size_t)(n * d)) &&
              !memcmp(out[0][1], out[1][1], sizeof(float) * (size_t)(n * d)),
          "barriers: the chain's results differ from those with a barrier between every two dispatches");
    /* and they are the CPU's (the ops run in the recorded order) */
    float *h = malloc(sizeof(float) * (size_t)(n * d)), *y1 = malloc(sizeof(float) * (size_t)(n * d)),
          *y2 = malloc(sizeof(float) * (size_t)(n * d));
    vx_rms_norm(xs[0], wv, n, d, 1e-6f, h);
    vx_linear(pool, &wm.m, NULL, h, n, y1);
    vx_rms_norm(xs[1], wv, n, d, 1e-6f, h);
    vx_linear(pool, &wm.m, NULL, h, n, y2);
    vx_add(y1, y2, n * d, y2);
    vx_silu_mul(y2, y1, n * d, y2);
    report("vulkan.linear_f32", "a chain with independent steps (3 of 6 barriers) vs the CPU", max_abs_rel(out[0][0], y2, n * d));
    if (verbose) printf("barriers   chain of 7 dispatches: %lld barriers with all, %lld tracked, same bits\n",
                        (long long)bars[1], (long long)bars[0]);
    free(h), free(y1), free(y2);
    for (int f = 0; f < 2; f++)
        for (int k = 0; k < 2; k++) free(out[f][k]);
    drop(g, &x), drop(g, &x2), drop(g, &x3), drop(g, &w);
    vx_gmat_free(g, &m);
    free_w(&wm);
    for (int i = 0; i < 3; i++) free(xs[i]);
    free(wv);
}

/* The attention of up to 4 new rows with their q and k norm + RoPE inside (vx_gop_attention_nr) against
 * vx_gop_norm_rope_qk then vx_gop_attention on the same inputs: the same output and the same cache rows,
 * bit for bit; and against the CPU ops (vx_rms_norm, vx_rope, vx_attention). */
static void test_attention_nr(vx_gpu *g) {
    static const int64_t cfg[][6] = {{1, 1, 4, 2, 32, 0},   {1, 17, 16, 8, 128, 0}, {2, 2, 16, 8, 128, 0},
                                     {4, 40, 4, 1, 64, 0},  {3, 50, 4, 4, 32, 16},  {1, 300, 2, 1, 128, 72},
                                     {2, 700, 4, 2, 256, 0}, {1, 9, 4, 2, 24, 0}};   /* nq nk hq hkv d window */
    for (int c = 0; c < (int)(sizeof cfg / sizeof cfg[0]); c++) {
        int64_t nq = cfg[c][0], nk = cfg[c][1], hq = cfg[c][2], hkv = cfg[c][3], d = cfg[c][4], win = cfg[c][5];
        const int64_t row = hkv * d, p0 = nk - nq;
        float scale = 1.0f / sqrtf((float)d);
        float *q = fvec(nq * hq * d, -2, 2), *k = fvec(nk * row, -2, 2), *v = fvec(nk * row, -1, 1);
        float *w = fvec(2 * d, 0.5f, 1.5f), *cs = malloc(sizeof(float) * (size_t)(nq * d)),
              *sn = malloc(sizeof(float) * (size_t)(nq * d));
        for (int64_t i = 0; i < nq * d; i++) {
            float a = urand(-40, 40);
            cs[i] = cosf(a);
            sn[i] = sinf(a);
        }
        /* unfused: the raw new keys in the cache, normalized there; fused: raw in kr, the cache's new rows
         * hold garbage until the shader stores them */
        float *k2 = malloc(sizeof(float) * (size_t)(nk * row));
        memcpy(k2, k, sizeof(float) * (size_t)(nk * row));
        for (int64_t i = p0 * row; i < nk * row; i++) k2[i] = 1e30f;
        gt gq1 = put(g, q, nq * hq * d), gq2 = put(g, q, nq * hq * d), gk1 = put(g, k, nk * row), gk2 = put(g, k2, nk * row),
           gkr = put(g, k + p0 * row, nq * row), gv = put(g, v, nk * row), gw = put(g, w, 2 * d), gwk = put(g, w + d, d),
           gc = put(g, cs, nq * d), gs = put(g, sn, nq * d), go1 = put(g, NULL, nq * hq * d), go2 = put(g, NULL, nq * hq * d);
        vx_gbind k1new = {&gk1.buf, (uint64_t)(PAD + p0 * row) * 4, 0};
        vx_gbind wq = {&gw.buf, PAD * 4, (uint64_t)d * 4};
        vx_gpu_begin(g);
        vx_gop_norm_rope_qk(g, T(&gq1), wq, hq, k1new, T(&gwk), hkv, nq, d, 1e-6f, T(&gc), T(&gs), NULL);
        vx_gop_attention(g, T(&gq1), nq, hq, T(&gk1), T(&gv), nk, hkv, d, scale, win, T(&go1), NULL);
        vox_status st = vx_gop_attention_nr(g, T(&gq2), nq, hq, T(&gk2), T(&gv), nk, hkv, d, scale, win, T(&go2), T(&gkr),
                                            T(&gw), 1e-6f, T(&gc), T(&gs), NULL);
        CHECK(vx_gpu_submit(g) == VOX_OK && st == VOX_OK, "attention_nr: %s", vox_last_error());
        float *o1 = malloc(sizeof(float) * (size_t)(nq * hq * d)), *o2 = malloc(sizeof(float) * (size_t)(nq * hq * d)),
              *c1 = malloc(sizeof(float) * (size_t)(nk * row)), *c2 = malloc(sizeof(float) * (size_t)(nk * row));
        get(g, &go1, o1), get(g, &go2, o2), get(g, &gk1, c1), get(g, &gk2, c2);
        char what[96];
        snprintf(what, sizeof what, "nq=%lld nk=%lld hq=%lld hkv=%lld d=%lld win=%lld", (long long)nq, (long long)nk,
                 (long long)hq, (long long)hkv, (long long)d, (long long)win);
        CHECK(!memcmp(o1, o2, sizeof(float) * (size_t)(nq * hq * d)) && !memcmp(c1, c2, sizeof(float) * (size_t)(nk * row)),
              "attention_nr %s: output or cache differs from norm_rope_qk + attention", what);
        /* the CPU: norm + rope of q and of the new keys, then attention */
        float *ref = malloc(sizeof(float) * (size_t)(nq * hq * d));
        vx_rms_norm(q, w, nq * hq, d, 1e-6f, q);
        vx_rope(q, nq, hq, d, cs, sn);
        vx_rms_norm(k + p0 * row, w + d, nq * hkv, d, 1e-6f, k + p0 * row);
        vx_rope(k + p0 * row, nq, hkv, d, cs, sn);
        vx_attention(pool, q, nq, hq, k, v, nk, hkv, d, scale, win, ref);
        char what2[128];
        snprintf(what2, sizeof what2, "%s, q/k norm + rope inside", what);
        report("vulkan.attention", what2, max_abs_rel(o2, ref, nq * hq * d));
        gt *all[] = {&gq1, &gq2, &gk1, &gk2, &gkr, &gv, &gw, &gwk, &gc, &gs, &go1, &go2};
        for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) drop(g, all[i]);
        free(q), free(k), free(k2), free(v), free(w), free(cs), free(sn), free(o1), free(o2), free(c1), free(c2), free(ref);
    }
}

/* ------------------------------------------------------------------------------ fused ops */
/* The GEMV prologues (vx_gop_linear_pro, vx_gop_linear_stack_pro) against the unfused GPU ops they
 * replace (vx_gop_rms_norm / vx_gop_silu_mul, then the GEMV): the same bits, for f32/f16/bf16 weights,
 * scalar and 16-byte-load shaders (x at an odd offset takes the scalar ones), 1 to 6 x rows (two
 * workgroup row groups beyond 4), bias and the residual add; and against the CPU ops within the
 * vulkan.linear_* rows. Then the q and k norm + RoPE in one dispatch against the two dispatches. */
static int fused_case(vx_gpu *g, vox_dtype dt, int64_t rows, int64_t cols, int64_t n, int silu, int pad, int acc,
                      int with_bias, double *diff, double *peak) {
    wmat w = make_w(dt, rows, cols);
    float *x = fvec(n * cols, -2, 2), *aux = silu ? fvec(n * cols, -2, 2) : fvec(cols, 0.5f, 1.5f);
    float *bias = with_bias ? fvec(rows, -1, 1) : NULL, *y0 = fvec(n * rows, -1, 1);
    float *t = malloc(sizeof(float) * (size_t)(n * cols)), *ref = malloc(sizeof(float) * (size_t)(n * rows));
    float *a = malloc(sizeof(float) * (size_t)(n * rows)), *b = malloc(sizeof(float) * (size_t)(n * rows));
    if (silu) vx_silu_mul(x, aux, n * cols, t);
    else vx_rms_norm(x, aux, n, cols, 1e-6f, t);
    vx_linear(pool, &w.m, bias, t, n, ref);
    if (acc) vx_add(y0, ref, n * rows, ref);
    vx_gmat gm;
    CHECK(vx_gmat_upload(g, &w.m, &gm) == VOX_OK, "upload: %s", vox_last_error());
    vx_gbuf bx, ba, bt, bb, by[2];
    const uint64_t off = (uint64_t)pad * 4;
    vx_gpu_alloc(g, off + (uint64_t)(n * cols) * 4, 0, &bx);
    vx_gpu_alloc(g, (uint64_t)(silu ? n * cols : cols) * 4, 0, &ba);
    vx_gpu_alloc(g, off + (uint64_t)(n * cols) * 4, 0, &bt);
    vx_gpu_alloc(g, (uint64_t)rows * 4, 0, &bb);
    vx_gpu_upload(g, &bx, off, x, (uint64_t)(n * cols) * 4);
    vx_gpu_upload(g, &ba, 0, aux, (uint64_t)(silu ? n * cols : cols) * 4);
    if (bias) vx_gpu_upload(g, &bb, 0, bias, (uint64_t)rows * 4);
    for (int k = 0; k < 2; k++) {
        vx_gpu_alloc(g, (uint64_t)(n * rows) * 4, 0, &by[k]);
        vx_gpu_upload(g, &by[k], 0, y0, (uint64_t)(n * rows) * 4);
    }
    vx_gbind xb = {&bx, off, 0}, tb = {&bt, off, 0}, ab = whole(&ba), bbind = whole(&bb);
    vx_gpro pro = {silu ? VX_PRO_SILU_MUL : VX_PRO_RMS_NORM, ab, 1e-6f};
    CHECK(vx_gop_linear_pro_ok(g, &gm, n), "%s: no prologue for %lld rows", dt_name(dt), (long long)n);
    vx_gpu_begin(g);
    if (silu) vx_gop_silu_mul(g, xb, ab, n * cols, tb, "test");
    else vx_gop_rms_norm(g, xb, &ab, n, cols, 1e-6f, tb, "test");
    vx_gop_linear(g, &gm, bias ? &bbind : NULL, tb, tb, tb, n, whole(&by[0]), 0, acc, "test");
    vox_status st = vx_gop_linear_pro(g, &gm, bias ? &bbind : NULL, &pro, xb, n, whole(&by[1]), 0, acc, "test");
    vox_status sub = vx_gpu_submit(g);
    CHECK(st == VOX_OK && sub == VOX_OK, "fused linear: %s", vox_last_error());
    vx_gpu_download(g, &by[0], 0, a, (uint64_t)(n * rows) * 4);
    vx_gpu_download(g, &by[1], 0, b, (uint64_t)(n * rows) * 4);
    int same = !memcmp(a, b, sizeof(float) * (size_t)(n * rows));
    for (int64_t i = 0; i < n * rows; i++) {   /* max |GPU - CPU| and max |CPU| (the caller pools them) */
        *diff = fmax(*diff, fabs((double)b[i] - (double)ref[i]));
        *peak = fmax(*peak, fabs((double)ref[i]));
    }
    vx_gpu_release(g, &bx), vx_gpu_release(g, &ba), vx_gpu_release(g, &bt), vx_gpu_release(g, &bb);
    vx_gpu_release(g, &by[0]), vx_gpu_release(g, &by[1]);
    vx_gmat_free(g, &gm);
    free_w(&w);
    free(x), free(aux), free(bias), free(y0), free(t), free(ref), free(a), free(b);
    return same;
}

static void test_fused_linear(vx_gpu *g) {
    static const vox_dtype dts[] = {VOX_DTYPE_F32, VOX_DTYPE_F16, VOX_DTYPE_BF16};
    static const int64_t shapes[][2] = {{67, 96}, {130, 2048}, {45, 100}, {33, 66}, {1, 1024}};
    for (int d = 0; d < 3; d++) {
        char row[64];
        snprintf(row, sizeof row, "vulkan.linear_%s", dt_name(dts[d]));
        double tol = tolerance_row(row, "max"), worst = 0;
        int cases = 0, same = 0;
        for (int s = 0; s < 5; s++) {
            /* max_abs_rel over all the cases of a shape: the 1-row matrix gives 1 to 5 outputs a case, and the
             * relative error of one random dot product measures how much it happens to cancel, not the kernel */
            double diff = 0, peak = 0;
            for (int64_t n = 1; n <= 6; n += (n < 2 ? 1 : 3))   /* 1, 2, 5 */
                for (int silu = 0; silu < 2; silu++)
                    for (int pad = 0; pad < 4; pad += 3) {
                        int ok = fused_case(g, dts[d], shapes[s][0], shapes[s][1], n, silu, pad, silu, (int)(n + s) % 2,
                                            &diff, &peak);
                        CHECK(ok, "%s %lldx%lld n=%lld %s pad %d: the fused GEMV differs from the two dispatches",
                              dt_name(dts[d]), (long long)shapes[s][0], (long long)shapes[s][1], (long long)n,
                              silu ? "silu" : "norm", pad);
                        cases++, same += ok;
                    }
            const double e = diff / (peak > 1e-30 ? peak : 1e-30);
            if (e > worst) worst = e;
            if (verbose > 1)
                printf("fused      %s %lldx%lld: max_abs_rel %.3g over its 12 cases\n", dt_name(dts[d]),
                       (long long)shapes[s][0], (long long)shapes[s][1], e);
        }
        if (verbose) printf("fused      %s: %d of %d cases bit-identical to the unfused ops\n", dt_name(dts[d]), same, cases);
        report(row, "GEMV with the RMSNorm / SiLU gate fused (vs the CPU ops)", worst);
        CHECK(worst <= tol, "fused %s: %.3g > %.3g", dt_name(dts[d]), worst, tol);
    }
}

/* A q|k|v stack with the input norm as its prologue: the same bits as vx_gop_rms_norm and the stack. */
static void test_fused_stack(vx_gpu *g) {
    static const vox_dtype dts[] = {VOX_DTYPE_F32, VOX_DTYPE_BF16};
    const int64_t rows[3] = {64, 24, 40}, cols = 256;
    for (int d = 0; d < 2; d++)
        for (int64_t n = 1; n <= 2; n++) {
            wmat w[3];
            float *bias[3];
            for (int i = 0; i < 3; i++) {
                w[i] = make_w(dts[d], rows[i], cols);
                bias[i] = i == 1 ? NULL : fvec(rows[i], -1, 1);
            }
            float *x = fvec(n * cols, -2, 2), *nw = fvec(cols, 0.5f, 1.5f);
            const vx_mat *ms[3] = {&w[0].m, &w[1].m, &w[2].m};
            const float *bs[3] = {bias[0], bias[1], bias[2]};
            vx_gmat gm;
            CHECK(vx_gmat_upload_stack(g, ms, bs, 3, &gm) == VOX_OK, "stack upload: %s", vox_last_error());
            gt gx = put(g, x, n * cols), gw = put(g, nw, cols), gh = put(g, NULL, n * cols), gy[2][3];
            for (int k = 0; k < 2; k++)
                for (int i = 0; i < 3; i++) gy[k][i] = put(g, NULL, n * rows[i]);
            vx_gbind ys0[3] = {T(&gy[0][0]), T(&gy[0][1]), T(&gy[0][2])}, ys1[3] = {T(&gy[1][0]), T(&gy[1][1]), T(&gy[1][2])};
            vx_gbind wb = T(&gw);
            vx_gpro pro = {VX_PRO_RMS_NORM, wb, 1e-6f};
            vx_gpu_begin(g);
            vx_gop_rms_norm(g, T(&gx), &wb, n, cols, 1e-6f, T(&gh), NULL);
            vx_gop_linear_stack(g, &gm, T(&gh), T(&gh), T(&gh), n, ys0, NULL);
            vox_status st = vx_gop_linear_stack_pro(g, &gm, &pro, T(&gx), n, ys1, NULL);
            CHECK(vx_gpu_submit(g) == VOX_OK && st == VOX_OK, "fused stack: %s", vox_last_error());
            int same = 1;
            for (int i = 0; i < 3; i++) {
                float *a = malloc(sizeof(float) * (size_t)(n * rows[i])), *b = malloc(sizeof(float) * (size_t)(n * rows[i]));
                get(g, &gy[0][i], a);
                get(g, &gy[1][i], b);
                same &= !memcmp(a, b, sizeof(float) * (size_t)(n * rows[i]));
                free(a), free(b);
            }
            CHECK(same, "%s stack n=%lld: the fused norm differs from the two dispatches", dt_name(dts[d]), (long long)n);
            drop(g, &gx), drop(g, &gw), drop(g, &gh);
            for (int k = 0; k < 2; k++)
                for (int i = 0; i < 3; i++) drop(g, &gy[k][i]);
            vx_gmat_free(g, &gm);
            for (int i = 0; i < 3; i++) free_w(&w[i]), free(bias[i]);
            free(x), free(nw);
        }
}

static void test_fused_norm_rope(vx_gpu *g) {
    static const int64_t cfg[][4] = {{1, 16, 8, 128}, {2, 16, 8, 128}, {7, 8, 2, 64}, {3, 2, 2, 16}};   /* n hq hk d */
    for (int c = 0; c < 4; c++) {
        int64_t n = cfg[c][0], hq = cfg[c][1], hk = cfg[c][2], d = cfg[c][3];
        float *q = fvec(n * hq * d, -2, 2), *k = fvec(n * hk * d, -2, 2), *wq = fvec(d, 0.5f, 1.5f),
              *wk = fvec(d, 0.5f, 1.5f), *cs = malloc(sizeof(float) * (size_t)(n * d)), *sn = malloc(sizeof(float) * (size_t)(n * d));
        for (int64_t i = 0; i < n * d; i++) {
            float a = urand(-40, 40);
            cs[i] = cosf(a);
            sn[i] = sinf(a);
        }
        gt g1[2] = {put(g, q, n * hq * d), put(g, k, n * hk * d)}, g2[2] = {put(g, q, n * hq * d), put(g, k, n * hk * d)};
        gt gwq = put(g, wq, d), gwk = put(g, wk, d), gc = put(g, cs, n * d), gs = put(g, sn, n * d);
        vx_gpu_begin(g);
        vx_gop_norm_rope(g, T(&g1[0]), T(&gwq), n, hq, d, 1e-6f, T(&gc), T(&gs), NULL);
        vx_gop_norm_rope(g, T(&g1[1]), T(&gwk), n, hk, d, 1e-6f, T(&gc), T(&gs), NULL);
        vx_gop_norm_rope_qk(g, T(&g2[0]), T(&gwq), hq, T(&g2[1]), T(&gwk), hk, n, d, 1e-6f, T(&gc), T(&gs), NULL);
        CHECK(vx_gpu_submit(g) == VOX_OK, "norm_rope_qk: %s", vox_last_error());
        int same = 1;
        double err = 0;
        for (int j = 0; j < 2; j++) {
            int64_t m = n * (j ? hk : hq) * d;
            float *a = malloc(sizeof(float) * (size_t)m), *b = malloc(sizeof(float) * (size_t)m), *r = j ? k : q;
            get(g, &g1[j], a);
            get(g, &g2[j], b);
            same &= !memcmp(a, b, sizeof(float) * (size_t)m);
            vx_rms_norm(r, j ? wk : wq, n * (j ? hk : hq), d, 1e-6f, r);
            vx_rope(r, n, j ? hk : hq, d, cs, sn);
            double e = max_abs_rel(b, r, m);
            if (e > err) err = e;
            free(a), free(b);
        }
        CHECK(same, "norm_rope_qk n=%lld hq=%lld hk=%lld d=%lld: differs from two vx_gop_norm_rope", (long long)n,
              (long long)hq, (long long)hk, (long long)d);
        report("vulkan.rms_norm", "q and k per-head norm + rope in one dispatch", err);
        for (int j = 0; j < 2; j++) drop(g, &g1[j]), drop(g, &g2[j]);
        drop(g, &gwq), drop(g, &gwk), drop(g, &gc), drop(g, &gs);
        free(q), free(k), free(wq), free(wk), free(cs), free(sn);
    }
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
    vx_gpu_profile_ms(g, "test/linear/gemv_f32v", &before);
    linear_case(g, VOX_DTYPE_F32, 64, 256, 1, 0, &parts);
    linear_case(g, VOX_DTYPE_Q8, 64, 256, 1, 0, &parts);
    int count;
    double ms = vx_gpu_profile_ms(g, "test/linear/gemv_f32v", &count);
    int qcount, q8count;
    vx_gpu_profile_ms(g, "test/quantize_q8", &qcount);
    vx_gpu_profile_ms(g, "test/linear/gemv_q8", &q8count);
    CHECK(count == before + 1 && q8count >= 1 && qcount >= 1 && ms >= 0,
          "profile: %d f32 linear dispatches (want %d), %d q8, %d quantize", count, before + 1, q8count, qcount);
    if (verbose) vx_gpu_profile_print(g, stdout);
    vx_gpu_set_profile(g, 0);
}

/* VOX_TEST_ONLY=name[,name...]: run only those test functions (a device session's diagnosis) */
static int wanted(const char *name) {
    const char *only = getenv("VOX_TEST_ONLY");
    if (!only || !*only) return 1;
    const size_t n = strlen(name);
    for (const char *p = strstr(only, name); p; p = strstr(p + 1, name))
        if ((p == only || p[-1] == ',') && (p[n] == ',' || p[n] == 0)) return 1;
    return 0;
}

int main(void) {
    const char *v = getenv("VOX_TEST_VERBOSE");
    verbose = v ? atoi(v) : 0;
    v = getenv("VOX_TEST_ROWS");
    rows_out = v && !strcmp(v, "1");
    int dev;
    vx_gpu *g = NULL;
    int opened = open_test_gpu(&dev, &pool, &g);
    if (opened) return opened;
    const vx_vk_device_info *info = vx_gpu_info(g);
    device_name = info->name;
    printf("device %d: %s (%s), subgroup %u, storage range %llu, cooperative matrices %s (f16 shapes: %s), "
           "cooperative matrix 2 %s (workgroup entries: %s)\n", dev,
           info->name, info->type_name, info->subgroup_size, (unsigned long long)info->max_storage_buffer_range,
           vx_gpu_coopmat(g) ? "used" : info->coopmat ? "off" : "no", info->coopmat_shapes[0] ? info->coopmat_shapes : "none",
           vx_gpu_coopmat2(g) ? "used" : info->coopmat2 ? "off" : "no", info->coopmat2_shapes[0] ? info->coopmat2_shapes : "none");
#define RUN(fn, ...) if (wanted(#fn)) fn(__VA_ARGS__)
    RUN(test_linear, g, "linear");
    RUN(test_gemm, g, "gemm");
    RUN(test_coopmat, g);
    RUN(test_coopmat_half, g);
    RUN(test_coopmat2, g);
    RUN(test_norm_elementwise, g);
    RUN(test_rope, g);
    RUN(test_fused_linear, g);
    RUN(test_fused_stack, g);
    RUN(test_fused_norm_rope, g);
    RUN(test_attention_nr, g);
    RUN(test_attention, g);
    RUN(test_attention_full, g);
    RUN(test_stack, g, VX_GEMV_MAX_ROWS + 8);
    RUN(test_batch_invariance, g);
    RUN(test_quantize, g);
    RUN(test_sample_gather, g);
    RUN(test_profile, g);
    RUN(test_barriers, g);
    RUN(test_chain_reentry, g);
    RUN(test_split, dev);
#undef RUN
    vx_gpu_free(g);
    vx_pool_free(pool);
    printf("%s\n", fails ? "FAILED" : "ok");
    return fails != 0;
}
