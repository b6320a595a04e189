/* The codec decoder on a Vulkan device (core/src/vulkan/codec_gpu.c) against the CPU decoder
 * (codec_stream.c) on the random-weight decoders of core/tests/test_codec.c (the 12 Hz structure at
 * tiny width; the odd shape whose 5-frame KV ring wraps every 5 frames), f32 and bf16 weights:
 *   - GPU audio vs CPU audio, after a warm-up longer than the vocoder's receptive field (the prime's
 *     vocoder skip) and without: max_abs_rel within vulkan.codec_vs_cpu;
 *   - chunkings (all at once, 1 frame, 3/7/1/16/2 cycled, across the 16-frame sub-chunks and the
 *     64-frame command buffers) give the same audio bit for bit on the GPU;
 *   - a state saved on the GPU continues on the CPU and the other way round (the shared layout), and
 *     reset gives a fresh stream;
 *   - a wider decoder whose convolutions split K over workgroups gives the same bits split or not.
 * Exit 77 (CTest: skipped) without a Vulkan device. VOX_TEST_ROWS=1 prints
 * "row<TAB>check<TAB>subject<TAB>value" lines for conformance/test_vulkan_codec.py.
 *
 * VOX_CODEC_BENCH=1: instead, time the GPU decoder on a random-weight decoder of the real 12 Hz size
 * (ms per 80 ms frame for chunks of 1, 4, 16, 64 frames of VOX_BENCH_FRAMES = 64; VOX_BENCH_DTYPE=f32|bf16)
 * and compare its audio
 * with the CPU's on a few frames; VOX_PROFILE=gpu adds the per-shader profile. */
#define TEST_CODEC_NO_MAIN
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function" /* test_codec.c's own tests are not run here */
#include "test_codec.c"
#pragma GCC diagnostic pop

#include <time.h>

#include "tolerance_table.h"
#include "qwen3/gpu_codec.h"
#include "vulkan/vk.h"
#include "vk_testdev.h"

static int rows_out;

static const char *device_name = "";

static void emit_row(const char *check, const char *subject, double value) {
    if (rows_out) printf("row\t%s\t%s on %s\t%.6g\n", check, subject, device_name, value);
}

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static vx_gpu *gpu;
static double worst_cpu;

/* One push of n frames, then a save; the rest continue on `rest_on` (the codec's GPU copy or NULL). */
static float *save_switch(loaded *l, vx_codec_gpu *first_on, vx_codec_gpu *rest_on, const int32_t *codes, int64_t n,
                          int64_t split) {
    const int64_t spf = q3_codec_samples_per_frame(l->codec), nq = q3_codec_groups(l->codec);
    float *pcm = malloc((size_t)(n * spf) * sizeof *pcm);
    q3_stream *a, *b;
    q3_stream_state *st = NULL;
    l->codec->gpu = first_on;
    CHECK(q3_stream_create(l->codec, &a) == VOX_OK, "create: %s", vox_last_error());
    CHECK(q3_stream_push(a, pools[0], codes, split, pcm) == VOX_OK, "push: %s", vox_last_error());
    CHECK(q3_stream_save(a, &st) == VOX_OK, "save: %s", vox_last_error());
    l->codec->gpu = rest_on;
    CHECK(q3_stream_create(l->codec, &b) == VOX_OK, "create: %s", vox_last_error());
    q3_stream_restore(b, st);
    CHECK(q3_stream_push(b, pools[0], codes + split * nq, n - split, pcm + split * spf) == VOX_OK, "push: %s",
          vox_last_error());
    q3_stream_state_free(st);
    q3_stream_free(a);
    q3_stream_free(b);
    return pcm;
}

static void test_vs_cpu(const cfg *c, vox_dtype dt, int64_t n, int64_t warm) {
    wdtype = dt;
    loaded l;
    vox_status st = load(c, &l);
    CHECK(st == VOX_OK, "%s: load: %s", c->label, vox_last_error());
    if (st) {
        unload(&l);
        return;
    }
    vx_codec_gpu *cg = NULL;
    st = vx_codec_gpu_load(gpu, l.codec, &cg);
    CHECK(st == VOX_OK, "%s: GPU load: %s", c->label, vox_last_error());
    if (st) {
        unload(&l);
        return;
    }
    const int64_t spf = spf_of(c), N = n * spf;
    int32_t *codes = random_codes(c, n), *ref = random_codes(c, warm > 0 ? warm : 1);
    const int64_t all[1] = {n}, one[1] = {1}, mixed[5] = {3, 7, 1, 16, 2}, big[2] = {70, 5};
    const double tol = tolerance_row("vulkan.codec_vs_cpu", "max");
    char subj[200];
    for (int w = warm > 0 ? 0 : 1; w < 2; w++) {
        const int64_t wf = w ? warm : 0;
        l.codec->gpu = NULL;
        float *cpu = stream(l.codec, pools[0], ref, wf, codes, n, all, 1);
        l.codec->gpu = cg;
        float *g_all = stream(l.codec, pools[0], ref, wf, codes, n, all, 1);
        float *g_one = stream(l.codec, pools[0], ref, wf, codes, n, one, 1);
        float *g_mix = stream(l.codec, pools[0], ref, wf, codes, n, mixed, 5);
        float *g_big = stream(l.codec, pools[0], ref, wf, codes, n, big, 2);
        const double e = max_abs_rel(g_all, cpu, N);
        worst_cpu = fmax(worst_cpu, e);
        snprintf(subj, sizeof subj, "%s %s decoder, %lld frames, warm-up %lld", c->label, dt_name(dt), (long long)n,
                 (long long)wf);
        CHECK(e <= tol, "%s: GPU vs CPU max_abs_rel %.3g > %.3g (peak %.3g)", subj, e, tol, max_abs(cpu, N));
        emit_row("vulkan.codec_vs_cpu", subj, e);
        const int ident = same(g_all, g_one, N) && same(g_all, g_mix, N) && same(g_all, g_big, N);
        CHECK(ident, "%s: GPU audio differs between chunkings", subj);
        snprintf(subj, sizeof subj, "%s %s decoder, %lld frames, warm-up %lld: chunks of all, 1, 3/7/1/16/2, 70/5",
                 c->label, dt_name(dt), (long long)n, (long long)wf);
        emit_row("vulkan.codec_chunk_identity", subj, ident ? 1.0 : 0.0);
        free(cpu), free(g_all), free(g_one), free(g_mix), free(g_big);
    }
    /* save on one decoder, continue on the other: within the tolerance of the CPU all the way */
    l.codec->gpu = NULL;
    float *cpu = stream(l.codec, pools[0], ref, 0, codes, n, all, 1);
    float *gc = save_switch(&l, cg, NULL, codes, n, n / 2), *cg2 = save_switch(&l, NULL, cg, codes, n, n / 2);
    const double e1 = max_abs_rel(gc, cpu, N), e2 = max_abs_rel(cg2, cpu, N);
    CHECK(e1 <= tol && e2 <= tol, "%s %s: state GPU->CPU %.3g, CPU->GPU %.3g > %.3g", c->label, dt_name(dt), e1, e2, tol);
    worst_cpu = fmax(worst_cpu, fmax(e1, e2));
    snprintf(subj, sizeof subj, "%s %s decoder, %lld frames, state saved after %lld and restored on the other device",
             c->label, dt_name(dt), (long long)n, (long long)(n / 2));
    emit_row("vulkan.codec_vs_cpu", subj, fmax(e1, e2));
    /* reset: a used GPU stream decodes like a fresh one */
    l.codec->gpu = cg;
    q3_stream *s;
    float *a = malloc((size_t)N * sizeof *a), *b = malloc((size_t)N * sizeof *b);
    CHECK(q3_stream_create(l.codec, &s) == VOX_OK, "create");
    CHECK(q3_stream_push(s, pools[0], codes, n, a) == VOX_OK, "push: %s", vox_last_error());
    q3_stream_reset(s);
    CHECK(q3_stream_position(s) == 0, "reset position");
    CHECK(q3_stream_push(s, pools[0], codes, n, b) == VOX_OK, "push: %s", vox_last_error());
    CHECK(same(a, b, N), "%s %s: reset GPU stream differs from a fresh one", c->label, dt_name(dt));
    q3_stream_free(s);
    free(a), free(b), free(cpu), free(gc), free(cg2), free(codes), free(ref);
    l.codec->gpu = NULL;
    vx_codec_gpu_free(cg);
    unload(&l);
}

/* A decoder wide enough that its vocoder convolutions have K > 256 (decoder.0 280, block 1's k = 7
 * convolutions 560, block 2's 280): the tiled GEMM splits their K chunks over workgroups (a second pass
 * adds them) when the tiles are few, as on a large GPU. The audio must not depend on that: split as
 * the device would, never split (VOX_VK_CODEC_SPLIT_TILES=0) and always split give the same bits, for
 * every chunking, within vulkan.codec_vs_cpu of the CPU decoder. */
static const cfg CFG_WIDE = {"wide", 12, 64, 4, 24, 40, 8, 4, 2, 36, 1, 5, 160, 2, {3, 2}, 1, {2}};

static void test_split(void) {
    const cfg *c = &CFG_WIDE;
    wdtype = VOX_DTYPE_F32;
    loaded l;
    vox_status st = load(c, &l);
    CHECK(st == VOX_OK, "%s: load: %s", c->label, vox_last_error());
    vx_codec_gpu *cg = NULL;
    if (st == VOX_OK) st = vx_codec_gpu_load(gpu, l.codec, &cg);
    CHECK(st == VOX_OK, "%s: GPU load: %s", c->label, vox_last_error());
    if (st) {
        unload(&l);
        return;
    }
    const int64_t n = 9, warm = 4, N = n * spf_of(c), all[1] = {n}, mixed[3] = {1, 3, 5};
    int32_t *codes = random_codes(c, n), *ref = random_codes(c, warm);
    l.codec->gpu = NULL;
    float *cpu = stream(l.codec, pools[0], ref, warm, codes, n, all, 1);
    l.codec->gpu = cg;
    static const char *modes[3] = {NULL, "0", "1000000"};
    float *got[3][2];
    for (int m = 0; m < 3; m++) {
        if (modes[m]) setenv("VOX_VK_CODEC_SPLIT_TILES", modes[m], 1);
        got[m][0] = stream(l.codec, pools[0], ref, warm, codes, n, all, 1);
        got[m][1] = stream(l.codec, pools[0], ref, warm, codes, n, mixed, 3);
        unsetenv("VOX_VK_CODEC_SPLIT_TILES");
    }
    int ident = 1;
    for (int m = 0; m < 3; m++)
        for (int j = 0; j < 2; j++) ident &= same(got[m][j], got[0][0], N);
    const double e = max_abs_rel(got[0][0], cpu, N), tol = tolerance_row("vulkan.codec_vs_cpu", "max");
    worst_cpu = fmax(worst_cpu, e);
    char subj[200];
    snprintf(subj, sizeof subj, "%s f32 decoder (K up to 560), %lld frames, warm-up %lld", c->label, (long long)n,
             (long long)warm);
    CHECK(e <= tol, "%s: GPU vs CPU max_abs_rel %.3g > %.3g", subj, e, tol);
    emit_row("vulkan.codec_vs_cpu", subj, e);
    CHECK(ident, "%s: GPU audio differs between split-K modes or chunkings", subj);
    snprintf(subj, sizeof subj, "%s f32 decoder (K up to 560), %lld frames: K split as the device's tile count "
             "says / never / always, chunks of all and 1/3/5", c->label, (long long)n);
    emit_row("vulkan.codec_chunk_identity", subj, ident ? 1.0 : 0.0);
    for (int m = 0; m < 3; m++) free(got[m][0]), free(got[m][1]);
    free(cpu), free(codes), free(ref);
    l.codec->gpu = NULL;
    vx_codec_gpu_free(cg);
    unload(&l);
}

static const cfg CFG_REAL = {"real", 512, 2048, 16, 512, 1024, 64, 16, 16, 1024, 8, 72, 1536, 4, {8, 5, 4, 3}, 2, {2, 2}};

static int bench(void) {
    const char *dts = getenv("VOX_BENCH_DTYPE");
    wdtype = dts && !strcmp(dts, "bf16") ? VOX_DTYPE_BF16 : VOX_DTYPE_F32;
    loaded l;
    double t0 = now_ms();
    if (load(&CFG_REAL, &l) != VOX_OK) {
        fprintf(stderr, "%s\n", vox_last_error());
        return 1;
    }
    printf("built the real-size decoder (%s) in %.0f ms\n", dt_name(wdtype), now_ms() - t0);
    vx_codec_gpu *cg;
    t0 = now_ms();
    if (vx_codec_gpu_load(gpu, l.codec, &cg) != VOX_OK) {
        fprintf(stderr, "%s\n", vox_last_error());
        return 1;
    }
    printf("GPU load %.0f ms, %.1f MiB on the device\n", now_ms() - t0, (double)vx_gpu_bytes_allocated(gpu) / 1048576.0);
    const char *fe = getenv("VOX_BENCH_FRAMES");
    const int64_t frames = fe && atoll(fe) > 0 ? atoll(fe) : 64, spf = spf_of(&CFG_REAL), nq = CFG_REAL.nq;
    int32_t *codes = random_codes(&CFG_REAL, frames);
    float *pcm = malloc((size_t)(frames * spf) * sizeof *pcm);
    l.codec->gpu = cg;
    const char *prof = getenv("VOX_PROFILE");
    const int profile = prof && !strcmp(prof, "gpu");
    vx_gpu_set_profile(gpu, 0); /* timings without timestamps; the profile is one run of its own below */
    static const int64_t chunks[] = {1, 4, 16, 64};
    for (int ci = 0; ci < 4 && chunks[ci] <= frames; ci++) {
        const int64_t k = chunks[ci];
        double best = 1e30;
        for (int r = 0; r < 3; r++) {
            q3_stream *s;
            q3_stream_create(l.codec, &s);
            q3_stream_push(s, pools[0], codes, k, pcm); /* first use: pipelines, descriptor sets */
            q3_stream_reset(s);
            const double a = now_ms();
            for (int64_t f = 0; f < frames; f += k) q3_stream_push(s, pools[0], codes + f * nq, k, pcm + f * spf);
            best = fmin(best, (now_ms() - a) / (double)frames);
            q3_stream_free(s);
        }
        vx_gpu_count c0, c1;   /* dispatches and barriers of one more push of k frames */
        q3_stream *s;
        q3_stream_create(l.codec, &s);
        vx_gpu_counts(gpu, &c0);
        q3_stream_push(s, pools[0], codes, k, pcm);
        vx_gpu_counts(gpu, &c1);
        q3_stream_free(s);
        printf("GPU decoder, chunks of %lld frames: %.3f ms per 80 ms frame (best of 3, %lld frames); %llu dispatches, "
               "%llu barriers a chunk\n", (long long)k, best, (long long)frames,
               (unsigned long long)(c1.dispatches - c0.dispatches), (unsigned long long)(c1.barriers - c0.barriers));
    }
    if (profile) {
        const int64_t k = frames < 4 ? frames : 4;
        q3_stream *s;
        q3_stream_create(l.codec, &s);
        vx_gpu_set_profile(gpu, 1);
        for (int64_t f = 0; f < frames; f += k) q3_stream_push(s, pools[0], codes + f * nq, k, pcm + f * spf);
        printf("profile of %lld frames in chunks of %lld:\n", (long long)frames, (long long)k);
        vx_gpu_profile_print(gpu, stdout);
        vx_gpu_set_profile(gpu, 0);
        q3_stream_free(s);
    }
    /* a few frames against the CPU decoder */
    const int64_t n = frames < 8 ? frames : 8;
    const int64_t all[1] = {n};
    float *g = stream(l.codec, pools[0], codes, 0, codes, n, all, 1);
    l.codec->gpu = NULL;
    t0 = now_ms();
    float *cpu = stream(l.codec, pools[0], codes, 0, codes, n, all, 1);
    printf("CPU decoder: %.1f ms per frame; GPU vs CPU max_abs_rel %.3g (peak %.3f)\n", (now_ms() - t0) / (double)n,
           max_abs_rel(g, cpu, n * spf), max_abs(cpu, n * spf));
    free(g), free(cpu), free(pcm), free(codes);
    vx_codec_gpu_free(cg);
    unload(&l);
    return 0;
}

int main(void) {
    const char *v = getenv("VOX_TEST_ROWS");
    rows_out = v && !strcmp(v, "1");
    int dev = test_device();
    if (dev < 0) return 77;
    snprintf(dir, sizeof dir, "/tmp/vox_test_vkcodec_XXXXXX");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 2;
    }
    snprintf(path, sizeof path, "%s/codec.tmod", dir);
    vx_pool_opts o = {.n_threads = 1, .spin_us = 50};
    if (vx_pool_create(&o, &pools[0]) != VOX_OK) return 2;
    if (vx_gpu_create(dev, &gpu) != VOX_OK) {
        fprintf(stderr, "vx_gpu_create(%d): %s\n", dev, vox_last_error());
        return 1;
    }
    device_name = vx_gpu_info(gpu)->name;
    printf("device %d: %s\n", dev, device_name);
    const char *b = getenv("VOX_CODEC_BENCH");
    int rc;
    if (b && !strcmp(b, "1")) {
        rc = bench();
    } else {
        /* VOX_TEST_QUICK=1 (the sanitizer build, where lavapipe and the instrumented CPU decoder made
         * this the slowest C test): one shape per dtype, the 64-frame crossing kept */
        const char *q = getenv("VOX_TEST_QUICK");
        const int quick = q && !strcmp(q, "1");
        test_vs_cpu(&CFG_ODD, VOX_DTYPE_F32, 70, 20); /* crosses a 64-frame command buffer */
        if (!quick) test_vs_cpu(&CFG_12HZ, VOX_DTYPE_F32, 24, 30);
        if (!quick) test_vs_cpu(&CFG_ODD, VOX_DTYPE_BF16, 40, 12);
        test_vs_cpu(&CFG_12HZ, VOX_DTYPE_BF16, 12, 11);
        test_split();
        printf("GPU vs CPU decoder: worst max_abs_rel %.3g (limit %.3g)\n", worst_cpu,
               tolerance_row("vulkan.codec_vs_cpu", "max"));
        rc = fails != 0;
    }
    vx_gpu_free(gpu);
    vx_pool_free(pools[0]);
    for (int i = 0; i < nt; i++) free(T[i].bytes);
    unlink(path);
    rmdir(dir);
    printf("%s\n", rc ? "FAILED" : "ok");
    return rc;
}
