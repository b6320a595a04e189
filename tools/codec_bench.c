/* Full-size codec decoder benchmark in C (no Python): writes a random-weight decoder of the real
 * 12 Hz size (codebook_dim 512, hidden 512, latent 1024, 8 layers, 16 heads x 64, decoder_dim 1536,
 * rates 8/5/4/3 x 2/2) as a .tmod with the writer of core/tests/test_codec.c (unit-gain random
 * convolutions, like fixtures/qwen3_tiny.py), or opens a given .tmod, then times the stream decoder
 * (ms per 80 ms frame) for each thread count and checks that the audio is bit-identical across them.
 *
 *   cmake --build build/dev && gcc -O2 -std=c11 -D_GNU_SOURCE -DTEST_CODEC_NO_MAIN -Icore/include \
 *       -Icore/src -Icore/tests tools/codec_bench.c build/dev/libvox_static.a -lm -lpthread -o build/dev/codec_bench
 *   taskset -c 0,1 build/dev/codec_bench [--dtype f32|bf16|f16] [--tmod PATH] [--frames 40] [--chunk 4]
 *                                        [--threads 1,2] [--repeat 3]
 */
#include "../core/tests/test_codec.c"

#include <time.h>

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static double cpu_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static const cfg CFG_REAL = {"real", 512, 2048, 16, 512, 1024, 64, 16, 16, 1024, 8, 72, 1536, 4, {8, 5, 4, 3}, 2, {2, 2}};

int main(int argc, char **argv) {
    const char *tmod = NULL, *dts = "f32", *ths = "1,2";
    int64_t frames = 40, chunk = 4, repeat = 3;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--tmod")) tmod = argv[i + 1];
        else if (!strcmp(argv[i], "--dtype")) dts = argv[i + 1];
        else if (!strcmp(argv[i], "--frames")) frames = atoll(argv[i + 1]);
        else if (!strcmp(argv[i], "--chunk")) chunk = atoll(argv[i + 1]);
        else if (!strcmp(argv[i], "--threads")) ths = argv[i + 1];
        else if (!strcmp(argv[i], "--repeat")) repeat = atoll(argv[i + 1]);
    }
    const cfg *c = &CFG_REAL;
    loaded l;
    memset(&l, 0, sizeof l);
    if (tmod) {
        snprintf(path, sizeof path, "%s", tmod);
        if (vox_model_open(path, &l.file) != VOX_OK) {
            fprintf(stderr, "%s\n", vox_last_error());
            return 1;
        }
        l.m.file = l.file;
        l.m.manifest = vox_model_json(l.file);
        l.m.st_config = vox_json_get(l.m.manifest, "speech_tokenizer_config");
        if (q3_codec_load(&l.m, &l.codec) != VOX_OK) {
            fprintf(stderr, "%s\n", vox_last_error());
            return 1;
        }
    } else {
        wdtype = !strcmp(dts, "bf16") ? VOX_DTYPE_BF16 : !strcmp(dts, "f16") ? VOX_DTYPE_F16 : VOX_DTYPE_F32;
        snprintf(path, sizeof path, "/tmp/vox_codec_bench_%s.tmod", dts);
        double t0 = now_ms();
        if (load(c, &l) != VOX_OK) {
            fprintf(stderr, "%s\n", vox_last_error());
            return 1;
        }
        for (int i = 0; i < nt; i++) free(T[i].bytes), T[i].bytes = NULL;
        fprintf(stderr, "built %s in %.0f ms\n", path, now_ms() - t0);
    }
    const int64_t spf = q3_codec_samples_per_frame(l.codec), nq = q3_codec_groups(l.codec);
    int32_t *codes = malloc((size_t)(frames * nq) * sizeof *codes);
    for (int64_t i = 0; i < frames * nq; i++) codes[i] = (int32_t)irand(0, 2047);
    float *first = NULL, *pcm = malloc((size_t)(frames * spf) * sizeof *pcm);
    printf("cpu %s; codec %s; %lld frames in chunks of %lld\n", vx_cpu()->name, tmod ? tmod : dts, (long long)frames,
           (long long)chunk);
    for (const char *p = ths; *p;) {
        const int th = atoi(p);
        vx_pool *pool;
        vx_pool_opts o = {.n_threads = th, .spin_us = 200};
        if (vx_pool_create(&o, &pool) != VOX_OK) return 1;
        double best = 1e30, best_cpu = 1e30;
        for (int64_t r = 0; r < repeat; r++) {
            q3_stream *s;
            q3_stream_create(l.codec, &s);
            q3_stream_push(s, pool, codes, 1, pcm); /* page weights in, grow scratch */
            q3_stream_reset(s);
            const double t0 = now_ms(), c0 = cpu_ms();
            for (int64_t f = 0; f < frames; f += chunk)
                q3_stream_push(s, pool, codes + f * nq, chunk < frames - f ? chunk : frames - f, pcm + f * spf);
            const double ms = (now_ms() - t0) / (double)frames, cms = (cpu_ms() - c0) / (double)frames;
            best = ms < best ? ms : best;
            best_cpu = cms < best_cpu ? cms : best_cpu;
            q3_stream_free(s);
        }
        printf("threads %d: %.2f ms/frame, cpu time %.2f ms/frame (best of %lld)", th, best, best_cpu, (long long)repeat);
        if (!first) {
            first = malloc((size_t)(frames * spf) * sizeof *first);
            memcpy(first, pcm, (size_t)(frames * spf) * sizeof *first);
            printf(", peak %.3f\n", max_abs(pcm, frames * spf));
        } else {
            printf(", bit-identical to the first: %s\n", same(first, pcm, frames * spf) ? "yes" : "NO");
        }
        vx_pool_free(pool);
        while (*p && *p != ',') p++;
        if (*p == ',') p++;
    }
    /* warm-up cost: prime 50 frames (vocoder on the last ones only) */
    vx_pool *pool;
    vx_pool_opts o = {.n_threads = 1, .spin_us = 200};
    vx_pool_create(&o, &pool);
    q3_stream *s;
    q3_stream_create(l.codec, &s);
    const int64_t w = frames < 50 ? frames : 50;
    double t0 = now_ms();
    q3_stream_prime(s, pool, codes, w);
    printf("warm-up of %lld frames, 1 thread: %.1f ms\n", (long long)w, now_ms() - t0);
    q3_stream_free(s);
    vx_pool_free(pool);
    if (!tmod) unlink(path);
    free(first), free(pcm), free(codes);
    unload(&l);
    return 0;
}
