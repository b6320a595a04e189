/* Voice creation (core/src/qwen3/voice_encoder*.c, resample.c, mel.c, ecapa.c, mimi.c, rvq.c).
 *
 * Without arguments (ctest): self-contained checks that need no model: the resampler's lengths,
 * zeros and pass band, its two tap paths and thread-count independence; the mel front end's frame
 * count, its too-short error and silence; the filterbank's shape.
 *
 * With arguments it is the conformance suite's window into the parts that the C ABI does not expose
 * (conformance/test_native_voice.py compares what it writes with the numpy reference and the
 * official code). Raw little-endian files: float32 audio in, float32 / int32 arrays out.
 *   test_voice resample IN.f32 SR_IN SR_OUT OUT.f32 [THREADS]
 *   test_voice filterbank OUT.f32                           [128][513]
 *   test_voice mel IN.f32 OUT.f32                           [frames][128] of 24 kHz audio
 *   test_voice embed MODEL.tmod IN.f32 OUT.f32 [THREADS]    speaker embedding of 24 kHz audio
 *   test_voice encode MODEL.tmod IN.f32 CODES.i32 LATENT.f32 [THREADS]
 *                                                           codes [frames][16], latent [T][hidden];
 *                                                           prints {"frames", "latent_frames", "margin"}
 *   test_voice bench MODEL.tmod IN.f32 SR THREADS RUNS      timings (ms, best of RUNS) of vox_voice_clone
 *                                                           (x-vector) and of the parts an ICL clone runs */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "engine.h"
#include "pool.h"
#include "qwen3/model.h"
#include "qwen3/voice_encoder.h"
#include "vox.h"

/* ------------------------------------------------------------------------------------------ files */
static float *read_f32(const char *path, int64_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    float *x = malloc(len > 0 ? (size_t)len : 1);
    if (x && fread(x, 1, (size_t)len, f) != (size_t)len) free(x), x = NULL;
    fclose(f);
    *n = len / 4;
    return x;
}

static int write_raw(const char *path, const void *p, size_t bytes) {
    FILE *f = fopen(path, "wb");
    if (!f) return 1;
    int bad = bytes && fwrite(p, 1, bytes, f) != bytes;
    return fclose(f) != 0 || bad;
}

static int die(const char *what) {
    fprintf(stderr, "test_voice: %s: %s\n", what, vox_last_error());
    return 2;
}

static vx_pool *make_pool(int threads) {
    vx_pool_opts o = {.n_threads = threads};
    vx_pool *p = NULL;
    return vx_pool_create(&o, &p) == VOX_OK ? p : NULL;
}

static vox_engine *open_engine(const char *path, int threads) {
    vox_engine_params p = vox_engine_default_params();
    p.n_threads = threads;
    vox_engine *e = NULL;
    return vox_engine_create(path, &p, &e) == VOX_OK ? e : NULL;
}

static const q3_venc *venc_of(const vox_engine *e) { return ((const q3_model *)e->impl)->venc; }

static int tool(int argc, char **argv) {
    const char *cmd = argv[1];
    int64_t n = 0;
    if (!strcmp(cmd, "resample") && argc >= 6) {
        float *x = read_f32(argv[2], &n), *y = NULL;
        int64_t ny = 0;
        vx_pool *pool = make_pool(argc > 6 ? atoi(argv[6]) : 1);
        if (!x || !pool) return die("input");
        if (vx_resample_pool(pool, x, n, atoi(argv[3]), atoi(argv[4]), &y, &ny) != VOX_OK) return die("resample");
        int rc = write_raw(argv[5], y, (size_t)ny * 4);
        free(x), free(y), vx_pool_free(pool);
        return rc;
    }
    if (!strcmp(cmd, "filterbank") && argc >= 3) {
        q3_mel *mel = NULL;
        if (q3_mel_create(&mel) != VOX_OK) return die("mel");
        int rc = write_raw(argv[2], q3_mel_filterbank(mel), Q3_MEL_BINS * (Q3_MEL_NFFT / 2 + 1) * 4);
        q3_mel_free(mel);
        return rc;
    }
    if (!strcmp(cmd, "mel") && argc >= 4) {
        float *x = read_f32(argv[2], &n);
        q3_mel *mel = NULL;
        if (!x || q3_mel_create(&mel) != VOX_OK) return die("mel");
        int64_t frames = q3_mel_frames(n);
        float *y = malloc((size_t)(frames > 0 ? frames : 1) * Q3_MEL_BINS * 4);
        if (q3_mel_spectrogram(mel, NULL, x, n, y) != VOX_OK) return die("mel");
        int rc = write_raw(argv[3], y, (size_t)frames * Q3_MEL_BINS * 4);
        free(x), free(y), q3_mel_free(mel);
        return rc;
    }
    if (!strcmp(cmd, "embed") && argc >= 5) {
        float *x = read_f32(argv[3], &n);
        vox_engine *e = open_engine(argv[2], argc > 5 ? atoi(argv[5]) : 1);
        if (!x || !e) return die("engine");
        int32_t dim = q3_venc_embedding_dim(venc_of(e));
        float *emb = malloc((size_t)(dim > 0 ? dim : 1) * 4);
        if (q3_speaker_embedding(venc_of(e), e->pool, x, n, emb) != VOX_OK) return die("embed");
        int rc = write_raw(argv[4], emb, (size_t)dim * 4);
        free(x), free(emb), vox_engine_free(e);
        return rc;
    }
    if (!strcmp(cmd, "encode") && argc >= 6) {
        float *x = read_f32(argv[3], &n), *latent = NULL;
        vox_engine *e = open_engine(argv[2], argc > 6 ? atoi(argv[6]) : 1);
        if (!x || !e) return die("engine");
        const q3_mimi *mm = q3_venc_mimi(venc_of(e));
        if (!mm) return die("no Mimi encoder");
        int64_t t = 0;
        if (q3_mimi_latent(mm, e->pool, x, n, &latent, &t) != VOX_OK) return die("latent");
        int64_t keep = q3_mimi_frames(mm, n), g = q3_mimi_groups(mm);
        if (keep > t) keep = t;
        int32_t *codes = malloc((size_t)(keep > 0 ? keep : 1) * (size_t)g * 4);
        double margin = 0;
        if (q3_mimi_quantize(mm, e->pool, latent, keep, codes, &margin) != VOX_OK) return die("quantize");
        /* the public path must agree with the parts */
        int32_t *c2 = NULL;
        int64_t f2 = 0;
        if (q3_encode_codes(venc_of(e), e->pool, x, n, &c2, &f2) != VOX_OK) return die("encode");
        if (f2 != keep || memcmp(c2, codes, (size_t)(keep * g) * 4)) {
            fprintf(stderr, "test_voice: q3_encode_codes differs from latent + quantize\n");
            return 3;
        }
        int rc = write_raw(argv[4], codes, (size_t)(keep * g) * 4) ||
                 write_raw(argv[5], latent, (size_t)(t * q3_mimi_hidden(mm)) * 4);
        printf("{\"frames\": %lld, \"latent_frames\": %lld, \"groups\": %lld, \"margin\": %.9g}\n", (long long)keep,
               (long long)t, (long long)g, margin);
        free(x), free(latent), free(codes), free(c2), vox_engine_free(e);
        return rc;
    }
    if (!strcmp(cmd, "bench") && argc >= 7) {
        float *x = read_f32(argv[3], &n), *w24 = NULL;
        int sr = atoi(argv[4]), runs = atoi(argv[6]);
        vox_engine *e = open_engine(argv[2], atoi(argv[5]));
        if (!x || !e) return die("engine");
        const q3_venc *v = venc_of(e);
        double best[4] = {1e30, 1e30, 1e30, 1e30};
        int64_t n24 = n, frames = 0;
        for (int r = 0; r < runs; r++) {
            double t0 = vx_now_ms();
            vox_clone_params cp = vox_clone_default_params();
            cp.options = "{\"x_vector_only\": true}";
            vox_voice *voice = NULL;
            if (vox_voice_clone(e, x, (size_t)n, 1, sr, &cp, &voice) != VOX_OK) return die("clone");
            double t1 = vx_now_ms();
            vox_voice_free(voice);
            free(w24), w24 = NULL;
            if (sr != 24000 && vx_resample_pool(e->pool, x, n, sr, 24000, &w24, &n24) != VOX_OK) return die("resample");
            double t2 = vx_now_ms();
            float emb[8192];
            if (q3_speaker_embedding(v, e->pool, w24 ? w24 : x, n24, emb) != VOX_OK) return die("embed");
            double t3 = vx_now_ms();
            int32_t *codes = NULL;
            if (q3_encode_codes(v, e->pool, w24 ? w24 : x, n24, &codes, &frames) != VOX_OK) return die("codes");
            double t4 = vx_now_ms();
            free(codes);
            double d[4] = {t1 - t0, t2 - t1, t3 - t2, t4 - t3};
            for (int i = 0; i < 4; i++) best[i] = d[i] < best[i] ? d[i] : best[i];
        }
        printf("{\"clone_xvector_ms\": %.1f, \"resample_ms\": %.1f, \"embedding_ms\": %.1f, \"codes_ms\": %.1f, "
               "\"icl_total_ms\": %.1f, \"frames\": %lld, \"threads\": %d, \"cpu\": \"%s\"}\n",
               best[0], best[1], best[2], best[3], best[1] + best[2] + best[3], (long long)frames,
               vx_pool_size(e->pool), vx_cpu()->name);
        free(x), free(w24), vox_engine_free(e);
        return 0;
    }
    fprintf(stderr, "test_voice: unknown command or missing arguments (see the file's header)\n");
    return 2;
}

/* ------------------------------------------------------------------------------------------ self tests */
static uint64_t rng = 88172645463325252ull;
static float noise(void) {
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (float)((double)(rng >> 11) / 9007199254740992.0 - 0.5) * 0.2f;
}

static void test_resample_lengths(void) {
    CHECK(vx_resample_length(44100, 44100, 24000) == 24001, "librosa's double product: 44100 @ 44.1k -> 24001");
    CHECK(vx_resample_length(16000, 16000, 24000) == 24000, "16k");
    CHECK(vx_resample_length(1, 44100, 24000) == 1, "1 sample");
    static const int32_t rates[3] = {16000, 44100, 22050};
    static const int64_t lens[7] = {1, 2, 3, 146, 147, 148, 1000};
    for (int r = 0; r < 3; r++)
        for (int i = 0; i < 7; i++) {
            float x[1000], *y = NULL;
            int64_t ny = 0;
            for (int64_t k = 0; k < lens[i]; k++) x[k] = noise();
            CHECK(vx_resample(x, lens[i], rates[r], 24000, &y, &ny) == VOX_OK, "%s", vox_last_error());
            CHECK(ny == (int64_t)ceil((double)lens[i] * (24000.0 / rates[r])), "%d Hz, %lld samples: %lld", rates[r],
                  (long long)lens[i], (long long)ny);
            /* samples past soxr's round-half-up(n L / M) are zeros */
            int64_t g = rates[r] == 16000 ? 8000 : (rates[r] == 44100 ? 300 : 150);
            int64_t up = 24000 / g, down = rates[r] / g, produced = (2 * lens[i] * up + down) / (2 * down);
            for (int64_t k = produced; k < ny; k++) CHECK(y[k] == 0.0f, "sample %lld past %lld", (long long)k, (long long)produced);
            free(y);
        }
    float x[5] = {0.1f, -0.2f, 0.3f, 0.4f, 0.5f}, *y = NULL;
    int64_t ny = 0;
    CHECK(vx_resample(x, 5, 24000, 24000, &y, &ny) == VOX_OK && ny == 5 && !memcmp(x, y, sizeof x), "equal rates");
    free(y);
}

/* A 1 kHz sine in the pass band comes out as the same sine at 24 kHz (away from the ends). */
static void sine_check(int32_t sr, double hz, double tol) {
    int64_t n = sr / 5;
    float *x = malloc((size_t)n * sizeof *x), *y = NULL;
    for (int64_t k = 0; k < n; k++) x[k] = (float)(0.5 * sin(2 * M_PI * hz * (double)k / sr));
    int64_t ny = 0;
    CHECK(vx_resample(x, n, sr, 24000, &y, &ny) == VOX_OK, "%s", vox_last_error());
    double worst = 0;
    for (int64_t k = 1200; k < ny - 1200; k++) {
        double want = 0.5 * sin(2 * M_PI * hz * (double)k / 24000.0);
        worst = fmax(worst, fabs(y[k] - want));
    }
    CHECK(worst < tol, "%d Hz -> 24 kHz, %.0f Hz sine: max error %.3g", sr, hz, worst);
    free(x), free(y);
}

static void test_resample_threads(void) {
    static const int32_t rates[3] = {44100, 16000, 44099}; /* 44099: the taps computed per phase */
    for (int r = 0; r < 3; r++) {
        int64_t n = rates[r] / 4;
        float *x = malloc((size_t)n * sizeof *x), *y1 = NULL, *y2 = NULL;
        for (int64_t k = 0; k < n; k++) x[k] = noise();
        vx_pool *p1 = make_pool(1), *p2 = make_pool(2);
        int64_t n1 = 0, n2 = 0;
        CHECK(vx_resample_pool(p1, x, n, rates[r], 24000, &y1, &n1) == VOX_OK, "%s", vox_last_error());
        CHECK(vx_resample_pool(p2, x, n, rates[r], 24000, &y2, &n2) == VOX_OK, "%s", vox_last_error());
        CHECK(n1 == n2 && y1 && y2 && !memcmp(y1, y2, (size_t)n1 * 4), "%d Hz: 1 vs 2 threads differ", rates[r]);
        free(x), free(y1), free(y2), vx_pool_free(p1), vx_pool_free(p2);
    }
}

static void test_mel(void) {
    q3_mel *mel = NULL;
    CHECK(q3_mel_create(&mel) == VOX_OK, "%s", vox_last_error());
    if (!mel) return;
    const float *fb = q3_mel_filterbank(mel);
    for (int i = 0; i < Q3_MEL_BINS; i++) {
        int nz = 0;
        for (int j = 0; j < 513; j++) {
            CHECK(fb[i * 513 + j] >= 0, "negative weight");
            nz += fb[i * 513 + j] > 0;
        }
        CHECK(nz > 0, "mel band %d is empty", i);
    }
    CHECK(q3_mel_frames(385) == 1 && q3_mel_frames(24000) == 93 && q3_mel_frames(1280) == 5, "frame counts");
    float x[24000], out[93 * 128];
    memset(x, 0, sizeof x);
    CHECK(q3_mel_spectrogram(mel, NULL, x, 384, out) == VOX_ERR_INVALID_ARGUMENT, "384 samples must be refused");
    CHECK(strstr(vox_last_error(), "too short") != NULL, "message: %s", vox_last_error());
    CHECK(q3_mel_spectrogram(mel, NULL, x, 24000, out) == VOX_OK, "%s", vox_last_error());
    int bad = 0;
    for (int i = 0; i < 93 * 128; i++) bad += out[i] != logf(1e-5f);
    CHECK(bad == 0, "silence: %d log-mel values are not log(1e-5)", bad);
    q3_mel_free(mel);
}

int main(int argc, char **argv) {
    if (argc > 1) return tool(argc, argv);
    if (cpu_path_refused()) return 77;
    printf("test_voice: kernel path %s\n", vx_cpu()->name);
    test_resample_lengths();
    sine_check(16000, 1000, 2e-5);
    sine_check(44100, 1000, 2e-5);
    sine_check(48000, 3000, 2e-5);
    sine_check(8000, 440, 2e-5);
    sine_check(44099, 1000, 2e-5);
    test_resample_threads();
    test_mel();
    if (fails) fprintf(stderr, "%d check(s) failed\n", fails);
    else printf("test_voice: all checks passed\n");
    return fails != 0;
}
