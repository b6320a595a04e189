/* The codec decoder's GPU ops (core/src/vulkan/ops_codec.h) against the CPU kernels the CPU decoder
 * uses (kernels.h, vx_matmul_nn, and the overlap-add of codec_stream.c), random inputs, on one Vulkan
 * device (lavapipe in CI; VOX_TEST_VULKAN=N picks another). Limits: the vulkan.codec_* rows of
 * verify/tolerances.toml; the quantizer lookup and the KV ring move values and must be exact.
 * Tensors sit 3 floats into their buffers (offsets that are not binding-aligned). Exit 77 without a
 * Vulkan device. VOX_TEST_ROWS=1 prints "row<TAB>check<TAB>subject<TAB>value" lines. */

#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "error.h"
#include "tolerance_table.h"
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function" /* its weight-matrix helpers are for the GEMV tests */
#include "vk_testlib.h"
#pragma GCC diagnostic pop
#include "qwen3/codec.h"
#include "vulkan/ops_codec.h"

static int verbose, rows_out;
static vx_pool *pool;
static const char *device_name = "";

static void emit_row(const char *check, const char *subject, double value) {
    if (rows_out) printf("row\t%s\t%s on %s\t%.6g\n", check, subject, device_name, value);
}


static double worst[8];
static void report(const char *row, int slot, const char *what, double err) {
    double tol = tolerance_row(row, "max");
    CHECK(err <= tol, "%s %s: max_abs_rel %.3g > %.3g", row, what, err, tol);
    if (verbose) printf("%-26s %-44s max_abs_rel %.3g (limit %.3g)\n", row, what, err, tol);
    if (err > worst[slot]) worst[slot] = err;
}

static void submit(vx_gpu *g, const char *what) {
    CHECK(vx_gpu_submit(g) == VOX_OK, "%s: %s", what, vox_last_error());
}

/* One product on the GPU: kernel 0 the tiled GEMM unsplit, 1 the tiled GEMM with its K chunks split over
 * workgroups (whatever the tile count), 2 the small-M kernel, 3 and 4 as 0 and 1 on cooperative matrices
 * (16-bit weights, devices that have them); rows [m0, m0 + M) of the case (x bound at row m0, so a
 * row's inputs are the same whatever M). */
static void run_conv(vx_gpu *g, const vx_gconv *base, int kernel, int64_t m0, int64_t M, const gt *gx, vx_gbind wb,
                     const gt *gb, const gt *gs, const gt *gr, const float *res, int epi, float *out) {
    vx_gconv cv = *base;
    cv.M = M;
    cv.gemv = kernel == 2;
    cv.coopmat = kernel >= 3;
    const int64_t N = cv.N;
    vx_gbuf scratch;
    vx_gpu_alloc(g, (uint64_t)(((cv.K + 255) / 256) * M * N) * 4 + 64, 0, &scratch);
    cv.scratch = &scratch;
    setenv("VOX_VK_CODEC_SPLIT_TILES", kernel == 1 || kernel == 4 ? "1000000" : "0", 1);
    CHECK(vx_codec_gemm_coopmat(g, &cv) == (kernel >= 3), "kernel %d: cooperative matrices %s", kernel,
          kernel >= 3 ? "not used" : "used");
    if (epi == 3) {
        cv.act = VX_CODEC_ACT_SNAKE;
        cv.alpha = T(gs);
        cv.inv_beta = T(gr);
    }
    if (epi == 4) cv.act = VX_CODEC_ACT_GELU;
    gt gy = put(g, epi == 1 ? res + m0 * N : NULL, M * N);
    vx_gbind bb = T(gb), sb = T(gs), yb = T(&gy);
    vx_gpu_begin(g);
    vx_gop_codec_gemm(g, &cv, TO(gx, m0 * cv.cin), wb, &bb, epi == 1 ? &sb : NULL, epi == 1 ? &yb : NULL, T(&gy), 0,
                      "codec/test");
    submit(g, "conv");
    get(g, &gy, out);
    drop(g, &gy);
    vx_gpu_release(g, &scratch);
    unsetenv("VOX_VK_CODEC_SPLIT_TILES");
}

/* Causal convolutions (im2col + vx_linear on the CPU): taps, dilation, bias, the epilogue's layer scale
 * and residual, the SnakeBeta / GELU that follow; sizes across the 64 x 64 tiles, the 16-deep K steps
 * and the 256-long K chunks. Each on the tiled GEMM unsplit and split (bit-identical: the same order)
 * and on the small-M kernel; the last row computed alone gives the same bits as inside all M rows (for
 * the last case also 1 against 4 columns a small-M workgroup). */
static void test_conv(vx_gpu *g) {
    static const int64_t cases[][5] = {/* M, cin, cout, taps, dil */
                                       {37, 24, 40, 7, 3}, {1, 16, 16, 7, 9}, {130, 8, 70, 7, 1},
                                       {65, 33, 1, 7, 1},  {20, 96, 64, 1, 1}, {3, 12, 130, 3, 1},
                                       {5, 96, 80, 7, 1},  {70, 300, 24, 1, 1}, {16, 40, 33, 7, 9},
                                       {16, 800, 1030, 1, 1}};   /* the small-M kernel's 4 columns a workgroup */
    const int nc = (int)(sizeof cases / sizeof *cases);
    for (int c = 0; c < nc; c++) {
        const int64_t M = cases[c][0], cin = cases[c][1], cout = cases[c][2], k = cases[c][3], dil = cases[c][4];
        const int64_t rows = M + (k - 1) * dil, K = cin * k;
        for (int epi = 0; epi < 5; epi++) {   /* 2: bf16 weights (c odd) or f16 (c even), plain epilogue;
                                                 3: then SnakeBeta; 4: then GELU */
            const vox_dtype dt = epi != 2 ? VOX_DTYPE_F32 : c % 2 ? VOX_DTYPE_BF16 : VOX_DTYPE_F16;
            float *x = fvec(rows * cin, -1, 1), *w = fvec(cout * K, -0.5f, 0.5f), *b = fvec(cout, -1, 1);
            void *wd = w;
            uint16_t *w16 = NULL;
            if (dt != VOX_DTYPE_F32) {
                w16 = malloc(sizeof(uint16_t) * (size_t)(cout * K + 1));
                for (int64_t i = 0; i < cout * K; i++) w16[i] = dt == VOX_DTYPE_BF16 ? f32_to_bf16(w[i]) : f32_to_f16(w[i]);
                wd = w16;
            }
            /* scale (epi 1) or SnakeBeta's alpha (epi 3); residual or inv_beta */
            float *sc = fvec(cout, epi == 3 ? 0.2f : 0.1f, epi == 3 ? 3.0f : 2.0f), *res = fvec(M * cout, -1, 1);
            float *col = malloc(sizeof(float) * (size_t)(M * K)), *ref = malloc(sizeof(float) * (size_t)(M * cout)),
                  *got = malloc(sizeof(float) * (size_t)(M * cout)), *got1 = malloc(sizeof(float) * (size_t)(M * cout)),
                  *last = malloc(sizeof(float) * (size_t)cout);
            vx_im2col(x, rows, cin, k, dil, 1, M, col);
            vx_mat wm = {.dtype = dt, .rows = cout, .cols = K, .data = wd};
            vx_linear(pool, &wm, b, col, M, ref);
            if (epi == 1) { /* res + (conv + b) * scale, the transformer / ConvNeXt epilogue */
                vx_scale_channels(ref, sc, M, cout, ref);
                vx_add(res, ref, M * cout, ref);
            }
            if (epi == 3) { /* inv_beta: res's first row, 0.1 .. 2 */
                for (int64_t i = 0; i < cout; i++) res[i] = 0.1f + 0.95f * (res[i] + 1.0f);
                vx_snake_beta(ref, sc, res, M, cout, ref);
            }
            if (epi == 4) vx_gelu(ref, M * cout, ref);
            gt gx = put(g, x, rows * cin), gw = {0}, gb = put(g, b, cout), gs = put(g, sc, cout), gr = put(g, res, M * cout);
            if (dt == VOX_DTYPE_F32) {
                gw = put(g, w, cout * K);
            } else {   /* 16-bit weights start on a word: 4 bytes (two values) into their buffer */
                vx_gpu_alloc(g, (uint64_t)(cout * K) * 2 + 4, 0, &gw.buf);
                vx_gpu_upload(g, &gw.buf, 4, w16, (uint64_t)(cout * K) * 2);
            }
            const vx_gbind wb = dt == VOX_DTYPE_F32 ? T(&gw) : (vx_gbind){&gw.buf, 4, 0};
            const vx_gconv cv = {.M = M, .N = cout, .K = K, .cin = cin, .taps = k, .dil = dil, .w_dtype = dt};
            static const char *kname[5] = {"tiled GEMM", "tiled GEMM, K split", "small-M kernel",
                                           "cooperative matrices", "cooperative matrices, K split"};
            const int n_kernels = dt != VOX_DTYPE_F32 && vx_gpu_coopmat(g) ? 5 : 3;
            for (int kernel = 0; kernel < n_kernels; kernel++) {
                run_conv(g, &cv, kernel, 0, M, &gx, wb, &gb, &gs, &gr, res, epi, got);
                char what[160];
                snprintf(what, sizeof what, "M %lld, %lld->%lld, k %lld, dil %lld%s, %s weights, %s", (long long)M,
                         (long long)cin, (long long)cout, (long long)k, (long long)dil,
                         epi == 1 ? ", scale+residual" : epi == 3 ? ", SnakeBeta" : epi == 4 ? ", GELU" : "", dt_name(dt),
                         kname[kernel]);
                report("vulkan.codec_conv", 0, what, max_abs_rel(got, ref, M * cout));
                if (kernel == 0 || kernel == 3) memcpy(got1, got, sizeof(float) * (size_t)(M * cout));
                if (kernel == 1 || kernel == 4)
                    CHECK(!memcmp(got, got1, sizeof(float) * (size_t)(M * cout)), "%s: split K differs from unsplit", what);
                run_conv(g, &cv, kernel, M - 1, 1, &gx, wb, &gb, &gs, &gr, res, epi, last);
                CHECK(!memcmp(last, got + (M - 1) * cout, sizeof(float) * (size_t)cout),
                      "%s: the last row alone differs from the same row among %lld", what, (long long)M);
            }
            drop(g, &gx), drop(g, &gw), drop(g, &gb), drop(g, &gs), drop(g, &gr);
            free(x), free(w), free(w16), free(b), free(sc), free(res), free(col), free(ref), free(got), free(got1), free(last);
        }
    }
}

/* A stack of three matrices by rows (q|k|v) in one GEMM, each output to its own tensor; and two (gate|up). */
static void test_split(vx_gpu *g) {
    const int64_t M = 19, K = 40, n3[3] = {48, 16, 16};
    for (int nout = 2; nout <= 3; nout++) {
        int64_t N = 0;
        for (int i = 0; i < nout; i++) N += n3[i];
        float *x = fvec(M * K, -1, 1), *w = fvec(N * K, -0.5f, 0.5f);
        float *ref = malloc(sizeof(float) * (size_t)(M * N)), *got = malloc(sizeof(float) * (size_t)(M * N));
        gt gx = put(g, x, M * K), gw = put(g, w, N * K), gy[3];
        vx_gbind ys[3];
        int64_t seg[2] = {n3[0], n3[0] + n3[1]}, off = 0;
        for (int i = 0; i < nout; i++) {
            vx_mat wm = {.dtype = VOX_DTYPE_F32, .rows = n3[i], .cols = K, .data = w + off * K};
            vx_linear(pool, &wm, NULL, x, M, ref + off * M);   /* output i: [M][n3[i]] at ref + off * M */
            gy[i] = put(g, NULL, M * n3[i] + 5);
            ys[i] = TO(&gy[i], 5);   /* outputs at different offsets */
            off += n3[i];
        }
        for (int kernel = 0; kernel < 2; kernel++) {   /* the tiled GEMM, the small-M kernel */
            vx_gconv cv = {.M = M, .N = N, .K = K, .cin = K, .taps = 1, .dil = 1, .w_dtype = VOX_DTYPE_F32, .gemv = kernel};
            vx_gpu_begin(g);
            vx_gop_codec_gemm_split(g, &cv, T(&gx), T(&gw), NULL, ys, nout, seg, "codec/test");
            submit(g, "split gemm");
            off = 0;
            double e = 0;
            for (int i = 0; i < nout; i++) {
                float *o = malloc(sizeof(float) * (size_t)(M * n3[i] + 5));
                get(g, &gy[i], o);
                double ei = max_abs_rel(o + 5, ref + off * M, M * n3[i]);
                e = ei > e ? ei : e;
                off += n3[i];
                free(o);
            }
            char what[96];
            snprintf(what, sizeof what, "%s stacked, %d outputs, %s", nout == 3 ? "q|k|v" : "gate|up", nout,
                     kernel ? "small-M kernel" : "tiled GEMM");
            report("vulkan.codec_conv", 0, what, e);
        }
        for (int i = 0; i < nout; i++) drop(g, &gy[i]);
        drop(g, &gx), drop(g, &gw);
        free(x), free(w), free(ref), free(got);
    }
}

/* Transposed convolutions: x . W (vx_matmul_nn) then the overlap-add with the carried tail, as
 * codec_stream.c's tconv_rows; f32 and bf16 weights (converted at upload, as codec_gpu.c does). */
static void test_tconv(vx_gpu *g) {
    static const int64_t cases[][4] = {/* T, cin, cout, stride; k = 2 stride, and k = stride */
                                       {5, 24, 12, 8}, {1, 16, 8, 3}, {70, 10, 20, 2}};
    for (int c = 0; c < 3; c++)
        for (int twice = 0; twice < 2; twice++) {
            const int64_t Tn = cases[c][0], cin = cases[c][1], co = cases[c][2], r = cases[c][3], k = twice ? 2 * r : r;
            const int64_t N = co * k;
            float *x = fvec(Tn * cin, -1, 1), *w = fvec(cin * N, -0.5f, 0.5f), *b = fvec(co, -1, 1),
                  *tail = fvec(r * co, -1, 1);
            float *Y = malloc(sizeof(float) * (size_t)(Tn * N)), *ref = malloc(sizeof(float) * (size_t)(Tn * r * co)),
                  *got = malloc(sizeof(float) * (size_t)(Tn * r * co)), *ntail = malloc(sizeof(float) * (size_t)(r * co)),
                  *gtail = malloc(sizeof(float) * (size_t)(r * co));
            const vox_dtype dt = c == 0 ? VOX_DTYPE_BF16 : c == 2 && twice ? VOX_DTYPE_F16 : VOX_DTYPE_F32;
            uint16_t *w16 = malloc(sizeof(uint16_t) * (size_t)(cin * N));
            for (int64_t i = 0; i < cin * N; i++) w16[i] = dt == VOX_DTYPE_BF16 ? f32_to_bf16(w[i]) : f32_to_f16(w[i]);
            vx_mat wm = {.dtype = dt, .rows = cin, .cols = N, .data = dt == VOX_DTYPE_F32 ? (void *)w : (void *)w16};
            vx_matmul_nn(pool, &wm, x, Tn, Y);
            for (int64_t t = 0; t < Tn; t++)
                for (int64_t j = 0; j < r; j++)
                    for (int64_t o = 0; o < co; o++) {
                        float v = Y[t * N + o * k + j];
                        if (k != r) v = v + (t == 0 ? tail[j * co + o] : Y[(t - 1) * N + o * k + j + r]);
                        ref[(t * r + j) * co + o] = v + b[o];
                    }
            for (int64_t j = 0; j < r && k != r; j++)
                for (int64_t o = 0; o < co; o++) ntail[j * co + o] = Y[(Tn - 1) * N + o * k + j + r];
            gt gx = put(g, x, Tn * cin), gw = dt == VOX_DTYPE_F32 ? put(g, w, cin * N) : put(g, NULL, cin * N / 2 + 1),
               gb = put(g, b, co), gtl = put(g, tail, r * co),
               gY = put(g, NULL, Tn * N), go = put(g, NULL, Tn * r * co);
            if (dt != VOX_DTYPE_F32) vx_gpu_upload(g, &gw.buf, 0, w16, (uint64_t)(cin * N) * 2);
            vx_gconv cv = {.M = Tn, .N = N, .K = cin, .cin = cin, .taps = 1, .dil = 1, .w_kn = 1, .w_dtype = dt};
            vx_gpu_begin(g);
            vx_gop_codec_gemm(g, &cv, T(&gx), dt == VOX_DTYPE_F32 ? T(&gw) : (vx_gbind){&gw.buf, 0, 0}, NULL, NULL, NULL,
                              T(&gY), 0, "codec/test");
            vx_gop_ola(g, T(&gY), Tn, co, k, r, T(&gtl), T(&gb), T(&go), "codec/test");
            submit(g, "tconv");
            get(g, &go, got);
            char what[96];
            snprintf(what, sizeof what, "T %lld, %lld->%lld, stride %lld, k %lld, %s weights", (long long)Tn,
                     (long long)cin, (long long)co, (long long)r, (long long)k, dt_name(dt));
            report("vulkan.codec_conv", 0, what, max_abs_rel(got, ref, Tn * r * co));
            if (k != r) {
                get(g, &gtl, gtail);
                report("vulkan.codec_conv", 0, "transposed conv tail", max_abs_rel(gtail, ntail, r * co));
            }
            drop(g, &gx), drop(g, &gw), drop(g, &gb), drop(g, &gtl), drop(g, &gY), drop(g, &go);
            free(x), free(w), free(w16), free(b), free(tail), free(Y), free(ref), free(got), free(ntail), free(gtail);
        }
}

/* SnakeBeta (arguments far beyond 2 pi: the range reduction), depthwise conv, LayerNorm, GELU, clamp. */
static void test_elementwise(vx_gpu *g) {
    const int64_t t = 37, c = 96, n = t * c;
    float *x = fvec(n, -30, 30), *al = fvec(c, 0.2f, 3), *ib = fvec(c, 0.1f, 5);
    float *ref = malloc(sizeof(float) * (size_t)n), *got = malloc(sizeof(float) * (size_t)n);
    gt gx = put(g, x, n), ga = put(g, al, c), gi = put(g, ib, c), gy = put(g, NULL, n);
    vx_snake_beta(x, al, ib, t, c, ref);
    vx_gpu_begin(g);
    vx_gop_snake(g, T(&gx), T(&ga), T(&gi), t, c, T(&gy), "codec/test");
    submit(g, "snake");
    get(g, &gy, got);
    report("vulkan.codec_snake", 1, "37x96, |x| <= 30, alpha <= 3", max_abs_rel(got, ref, n));
    /* depthwise conv k = 7 (dilation 1 and 2) */
    for (int64_t dil = 1; dil <= 2; dil++) {
        const int64_t rows = t + 6 * dil;
        float *xd = fvec(rows * c, -1, 1), *w = fvec(c * 7, -1, 1), *b = fvec(c, -1, 1);
        gt gxd = put(g, xd, rows * c), gw = put(g, w, c * 7), gb = put(g, b, c);
        vx_depthwise_conv(xd, t, c, w, 7, dil, b, ref);
        vx_gpu_begin(g);
        vx_gop_dwconv(g, T(&gxd), t, c, T(&gw), 7, dil, T(&gb), T(&gy), "codec/test");
        submit(g, "dwconv");
        get(g, &gy, got);
        report("vulkan.codec_norm_act", 2, dil == 1 ? "depthwise conv k 7" : "depthwise conv k 7, dilation 2",
               max_abs_rel(got, ref, n));
        drop(g, &gxd), drop(g, &gw), drop(g, &gb);
        free(xd), free(w), free(b);
    }
    /* LayerNorm over rows of 96 and 1000 (several elements per invocation) */
    static const int64_t ln[][2] = {{37, 96}, {3, 1000}};
    for (int i = 0; i < 2; i++) {
        const int64_t rr = ln[i][0], d = ln[i][1];
        float *xl = fvec(rr * d, -3, 5), *w = fvec(d, 0.5f, 1.5f), *b = fvec(d, -1, 1);
        float *rl = malloc(sizeof(float) * (size_t)(rr * d)), *gl = malloc(sizeof(float) * (size_t)(rr * d));
        gt gxl = put(g, xl, rr * d), gw = put(g, w, d), gb = put(g, b, d), gyl = put(g, NULL, rr * d);
        vx_layer_norm(xl, w, b, rr, d, 1e-6f, rl);
        vx_gpu_begin(g);
        vx_gop_layer_norm(g, T(&gxl), T(&gw), T(&gb), rr, d, 1e-6f, T(&gyl), "codec/test");
        submit(g, "layer_norm");
        get(g, &gyl, gl);
        report("vulkan.codec_norm_act", 2, i ? "LayerNorm 3x1000" : "LayerNorm 37x96", max_abs_rel(gl, rl, rr * d));
        drop(g, &gxl), drop(g, &gw), drop(g, &gb), drop(g, &gyl);
        free(xl), free(w), free(b), free(rl), free(gl);
    }
    /* GELU in place over [-8, 8], clamp to [-1, 1] */
    float *xg = fvec(n, -8, 8);
    gt gg = put(g, xg, n);
    vx_gelu(xg, n, ref);
    vx_gpu_begin(g);
    vx_gop_gelu(g, T(&gg), n, T(&gg), "codec/test");
    submit(g, "gelu");
    get(g, &gg, got);
    report("vulkan.codec_norm_act", 2, "GELU (erf) over [-8, 8]", max_abs_rel(got, ref, n));
    vx_clamp(xg, n, -1.0f, 1.0f, ref);
    vx_gpu_upload(g, &gg.buf, PAD * 4, xg, (uint64_t)n * 4);
    vx_gpu_begin(g);
    vx_gop_clamp(g, T(&gg), n, -1.0f, 1.0f, T(&gy), "codec/test");
    submit(g, "clamp");
    get(g, &gy, got);
    CHECK(!memcmp(got, ref, sizeof(float) * (size_t)n), "clamp: not exact");
    drop(g, &gx), drop(g, &ga), drop(g, &gi), drop(g, &gy), drop(g, &gg);
    free(x), free(al), free(ib), free(ref), free(got), free(xg);
}

/* SnakeBeta (or a copy) into a causal convolution's input with the carried context updated in the same
 * dispatch: the same bits as the three ops it replaces (copy the old context in, SnakeBeta / copy the
 * new rows after it, copy the last rows out), with fewer new rows than context rows and more. */
static void test_snake_ctx(vx_gpu *g) {
    const int64_t c = 24, ctx = 18;
    static const int64_t ts[3] = {5, 18, 40};
    for (int i = 0; i < 3; i++)
        for (int mode = 0; mode < 2; mode++) {
            const int64_t t = ts[i];
            float *x = fvec(t * c, -20, 20), *al = fvec(c, 0.2f, 3), *ib = fvec(c, 0.1f, 5), *st = fvec(ctx * c, -1, 1);
            float *ya = malloc(sizeof(float) * (size_t)((ctx + t) * c)), *yb = malloc(sizeof(float) * (size_t)((ctx + t) * c)),
                  *sa = malloc(sizeof(float) * (size_t)(ctx * c)), *sb = malloc(sizeof(float) * (size_t)(ctx * c));
            gt gx = put(g, x, t * c), ga = put(g, al, c), gi = put(g, ib, c);
            gt gs[2] = {put(g, st, ctx * c), put(g, st, ctx * c)}, gy[2] = {put(g, NULL, (ctx + t) * c), put(g, NULL, (ctx + t) * c)};
            vx_gpu_begin(g);   /* the three ops */
            vx_gop_copy(g, T(&gs[0]), ctx * c, T(&gy[0]), "codec/test");
            if (mode == 0) vx_gop_snake(g, T(&gx), T(&ga), T(&gi), t, c, TO(&gy[0], ctx * c), "codec/test");
            else vx_gop_copy(g, T(&gx), t * c, TO(&gy[0], ctx * c), "codec/test");
            vx_gop_copy(g, TO(&gy[0], t * c), ctx * c, T(&gs[0]), "codec/test");
            /* the fused one */
            vx_gop_copy(g, T(&gs[1]), ctx * c, T(&gy[1]), "codec/test");
            if (mode == 0) vx_gop_snake_ctx(g, T(&gx), T(&ga), T(&gi), t, c, T(&gy[1]), ctx, T(&gs[1]), "codec/test");
            else vx_gop_copy_ctx(g, T(&gx), t, c, T(&gy[1]), ctx, T(&gs[1]), "codec/test");
            submit(g, "snake with context");
            get(g, &gy[0], ya), get(g, &gy[1], yb), get(g, &gs[0], sa), get(g, &gs[1], sb);
            CHECK(!memcmp(ya, yb, sizeof(float) * (size_t)((ctx + t) * c)) && !memcmp(sa, sb, sizeof(float) * (size_t)(ctx * c)),
                  "%s with context (t %lld, ctx %lld): differs from the separate ops", mode ? "copy" : "SnakeBeta",
                  (long long)t, (long long)ctx);
            drop(g, &gx), drop(g, &ga), drop(g, &gi), drop(g, &gs[0]), drop(g, &gs[1]), drop(g, &gy[0]), drop(g, &gy[1]);
            free(x), free(al), free(ib), free(st), free(ya), free(yb), free(sa), free(sb);
        }
}

/* The quantizer lookup and the KV ring only move and add values: exact. */
static void test_exact(vx_gpu *g) {
    const int64_t nq = 5, size = 9, half = 6, n = 4;
    float *cb = fvec(nq * size * half, -1, 1);
    int32_t codes[20];
    for (int i = 0; i < 20; i++) codes[i] = (int32_t)(rnd32() % (uint32_t)size) - (i == 7 ? 20 : 0); /* one < 0 */
    float first[24], rest[24], gf[24], gr[24];
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < half; j++) {
            int32_t id[5];
            for (int q = 0; q < nq; q++) id[q] = codes[i * nq + q] < 0 ? 0 : codes[i * nq + q];
            first[i * half + j] = cb[id[0] * half + j];
            float r = cb[(size + id[1]) * half + j];
            for (int q = 2; q < nq; q++) r = r + cb[(q * size + id[q]) * half + j];
            rest[i * half + j] = r;
        }
    gt gc = put(g, codes, n * nq), gb, gfi = put(g, NULL, n * half), gre = put(g, NULL, n * half);
    vx_gpu_alloc(g, (uint64_t)(nq * size * half) * 4, 0, &gb.buf);   /* the codebooks start their buffer */
    vx_gpu_upload(g, &gb.buf, 0, cb, (uint64_t)(nq * size * half) * 4);
    vx_gpu_begin(g);
    vx_gop_codec_rvq(g, T(&gc), (vx_gbind){&gb.buf, 0, 0}, n, nq, size, half, T(&gfi), T(&gre), "codec/test");
    submit(g, "rvq");
    get(g, &gfi, gf);
    get(g, &gre, gr);
    CHECK(!memcmp(gf, first, sizeof first) && !memcmp(gr, rest, sizeof rest), "rvq lookup: not exact");
    vx_gpu_release(g, &gb.buf);
    drop(g, &gc), drop(g, &gfi), drop(g, &gre);
    free(cb);
    /* ring of W = 5 rows of 3: scatter rows 2..8 of kc at positions 13..19 (wrapping), gather 4 back */
    const int64_t W = 5, kvd = 3;
    float *kc = fvec(10 * kvd, -1, 1), *vc = fvec(10 * kvd, -1, 1), kr[15] = {0}, vr[15] = {0};
    gt gkr = put(g, kr, W * kvd), gvr = put(g, vr, W * kvd), gkc = put(g, kc, 10 * kvd), gvc = put(g, vc, 10 * kvd);
    vx_gpu_begin(g);
    vx_gop_ring(g, T(&gkr), T(&gvr), T(&gkc), T(&gvc), 7, kvd, W, 13, 2, 1, 1, 10 * kvd, "codec/test");
    vx_gop_ring(g, T(&gkr), T(&gvr), TO(&gkc, 0), TO(&gvc, 0), 4, kvd, W, 16, 0, 0, 1, 10 * kvd, "codec/test");
    submit(g, "ring");
    float gk[30], gv[30];
    get(g, &gkc, gk);
    get(g, &gvc, gv);
    int ok = 1;
    for (int64_t j = 0; j < 4; j++)   /* position 16 + j was written from kc row 2 + (16 + j - 13) */
        for (int64_t i = 0; i < kvd; i++)
            ok &= gk[j * kvd + i] == kc[(5 + j) * kvd + i] && gv[j * kvd + i] == vc[(5 + j) * kvd + i];
    CHECK(ok, "KV ring: gather after scatter does not return the rows");
    drop(g, &gkr), drop(g, &gvr), drop(g, &gkc), drop(g, &gvc);
    free(kc), free(vc);
}

/* VOX_PROFILE=gpu: the codec's dispatches are summed under their own stage labels. */
static void test_profile(vx_gpu *g) {
    if (vx_gpu_info(g)->timestamp_period_ns <= 0) {
        printf("profile: the device has no compute timestamps\n");
        return;
    }
    vx_gpu_set_profile(g, 1);
    int before, count;
    vx_gpu_profile_ms(g, "codec/test/codec_snake", &before);
    test_elementwise(g);
    vx_gpu_profile_ms(g, "codec/test/codec_snake", &count);
    CHECK(count == before + 1, "profile: %d codec/test/codec_snake dispatches (want %d)", count, before + 1);
    vx_gpu_set_profile(g, 0);
}

int main(void) {
    /* the decoder's cooperative-matrix products are opt-in for engines; this test always runs them
     * on a device that has cooperative matrices */
    setenv("VOX_VK_CODEC_COOPMAT", "1", 1);
    const char *v = getenv("VOX_TEST_VERBOSE");
    verbose = v ? atoi(v) : 0;
    v = getenv("VOX_TEST_ROWS");
    rows_out = v && !strcmp(v, "1");
    int dev;
    vx_gpu *g = NULL;
    int opened = open_test_gpu(&dev, &pool, &g);
    if (opened) return opened;
    device_name = vx_gpu_info(g)->name;
    printf("device %d: %s\n", dev, device_name);
    uint32_t fp = vx_fp_fast();   /* the CPU decoder's floating-point mode (flush denormals) */
    printf("cooperative matrices: %s\n", vx_gpu_coopmat(g) ? "yes (16-bit weights also on them)"
                                                            : "not on this device (the float32 kernels only)");
    test_conv(g);
    test_tconv(g);
    test_split(g);
    test_elementwise(g);
    test_snake_ctx(g);
    test_exact(g);
    test_profile(g);
    vx_fp_restore(fp);
    emit_row("vulkan.codec_conv", "GEMM convolutions (taps 1/3/7, dilation 1/3/9, bias, scale, residual; f32, bf16 "
             "and f16 weights) and transposed convolutions with overlap-add and tail vs im2col + vx_linear / vx_matmul_nn", worst[0]);
    emit_row("vulkan.codec_snake", "SnakeBeta vs vx_snake_beta, |x| <= 30", worst[1]);
    emit_row("vulkan.codec_norm_act", "depthwise conv, LayerNorm, GELU vs the CPU kernels", worst[2]);
    printf("conv %.3g, snake %.3g, norm/act %.3g\n", worst[0], worst[1], worst[2]);
    vx_gpu_free(g);
    vx_pool_free(pool);
    printf("%s\n", fails ? "FAILED" : "ok");
    return fails != 0;
}
