/* The native codec decoder (core/src/qwen3/codec*.c) on random-weight decoders written here as
 * .tmod files (no Python, no files in the tree): two shapes, the 12 Hz structure at tiny width
 * (rates 8/5/4/3 x 2/2, 1920 samples per frame, window 72) and an odd one (latent != hidden !=
 * heads x head_dim, grouped KV heads, window 5 so the ring wraps every 5 frames, 4 codebooks of 64,
 * rates 3/2 x 2: 12 samples per frame); weights in f32, f16 and bf16.
 *
 * Exactness, bit for bit (memcmp):
 *   - any sequence of chunk sizes (random, 1 .. 40: across the internal sub-chunk size), on pools of
 *     1, 2 and 3 threads, gives the audio of one push of every frame on one thread;
 *   - warm-up (q3_stream_prime, which runs the vocoder on its last frames only) then pushes gives
 *     the audio of pushing everything; reset gives a fresh stream;
 *   - reference mode equals its definition (fresh stream per 300-frame piece, 25 frames of context
 *     dropped), and any sample range of it equals the slice of the whole;
 * and invalid input (codes out of range, negative n, NULL buffers, missing or misshapen tensors)
 * gives clear errors without touching the stream's state. Numbers against the numpy reference and
 * the official code are checked by conformance/test_native_codec.py. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "json.h"
#include "kernels.h"
#include "pool.h"
#include "qwen3/codec.h"
#include "qwen3/model.h"
#include "tmod.h"
#include "vox.h"

#include "check.h"

/* ------------------------------------------------------------------------------ random */
static uint64_t rs = 88172645463325252ull;
static uint64_t next_u64(void) {
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return rs;
}
static double urand(void) { return (double)(next_u64() >> 11) * (1.0 / 9007199254740992.0); }
static float nrand(void) {
    double u = urand(), v = urand();
    return (float)(sqrt(-2.0 * log(u + 1e-300)) * cos(6.283185307179586 * v));
}
static int64_t irand(int64_t lo, int64_t hi) { return lo + (int64_t)(next_u64() % (uint64_t)(hi - lo + 1)); }

/* ------------------------------------------------------------------------------ decoder configs */
typedef struct cfg {
    const char *label;
    int64_t cbd, cbsize, nq, hidden, latent, head_dim, heads, kv_heads, inter, layers, window, ddim;
    int64_t n_rates, rates[4], n_ratios, ratios[2];
} cfg;

static const cfg CFG_12HZ = {"12hz-tiny", 16, 2048, 16, 32, 32, 16, 2, 2, 64, 2, 72, 32, 4, {8, 5, 4, 3}, 2, {2, 2}};
static const cfg CFG_ODD = {"odd", 12, 64, 4, 24, 40, 8, 4, 2, 36, 2, 5, 16, 2, {3, 2}, 1, {2}};

static int64_t spf_of(const cfg *c) {
    int64_t s = 1;
    for (int64_t i = 0; i < c->n_rates; i++) s *= c->rates[i];
    for (int64_t i = 0; i < c->n_ratios; i++) s *= c->ratios[i];
    return s;
}

/* ------------------------------------------------------------------------------ .tmod writer */
typedef struct tens {
    char name[160];
    vox_dtype dtype;
    int ndim;
    int64_t shape[3];
    unsigned char *bytes;
    size_t nbytes;
} tens;

static tens T[512];
static int nt;
static vox_dtype wdtype; /* dtype of the >= 2-D tensors */
static const char *skip_tensor; /* leave this one out (missing-tensor test) */
static const char *bad_shape_tensor; /* give this one a wrong first dimension */

enum { NORMAL, UNIFORM, AROUND_ONE };

static uint16_t f2bf(float f) {
    uint32_t b;
    memcpy(&b, &f, 4);
    return (uint16_t)((b + 0x7FFFu + ((b >> 16) & 1u)) >> 16);
}
static uint16_t f2h(float f) {
    uint32_t b;
    memcpy(&b, &f, 4);
    uint32_t sign = (b >> 16) & 0x8000u;
    int32_t e = (int32_t)((b >> 23) & 255u) - 127 + 15;
    uint32_t m = b & 0x7FFFFFu;
    if (e <= 0) return (uint16_t)sign; /* tiny: zero (test data only) */
    if (e >= 31) return (uint16_t)(sign | 0x7BFFu);
    uint32_t h = sign | ((uint32_t)e << 10) | (m >> 13);
    uint32_t rest = m & 0x1FFFu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) h++;
    return (uint16_t)h;
}


static void add(const char *name, int ndim, int64_t s0, int64_t s1, int64_t s2, int kind, float a, float b) {
    if (skip_tensor && strcmp(name, skip_tensor) == 0) return;
    tens *t = &T[nt++];
    snprintf(t->name, sizeof t->name, "%s", name);
    t->ndim = ndim;
    t->shape[0] = s0, t->shape[1] = s1, t->shape[2] = s2;
    if (bad_shape_tensor && strcmp(name, bad_shape_tensor) == 0) t->shape[0] += 1;
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) n *= t->shape[i];
    t->dtype = ndim == 1 ? VOX_DTYPE_F32 : wdtype;
    const size_t es = t->dtype == VOX_DTYPE_F32 ? 4 : 2;
    t->nbytes = (size_t)n * es;
    t->bytes = malloc(t->nbytes ? t->nbytes : 1);
    for (int64_t i = 0; i < n; i++) {
        float v = kind == NORMAL ? a * nrand() : kind == UNIFORM ? a + (b - a) * (float)urand() : 1.0f + a * nrand();
        if (t->dtype == VOX_DTYPE_F32) {
            memcpy(t->bytes + i * 4, &v, 4);
        } else {
            uint16_t h = t->dtype == VOX_DTYPE_BF16 ? f2bf(v) : f2h(v);
            memcpy(t->bytes + i * 2, &h, 2);
        }
    }
}

#define PFX "speech_tokenizer.decoder."
static void addf(int ndim, int64_t s0, int64_t s1, int64_t s2, int kind, float a, float b, const char *fmt, ...)
    __attribute__((format(printf, 8, 9)));

static void addf(int ndim, int64_t s0, int64_t s1, int64_t s2, int kind, float a, float b, const char *fmt, ...) {
    char name[160] = PFX;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(name + strlen(PFX), sizeof name - strlen(PFX), fmt, ap);
    va_end(ap);
    add(name, ndim, s0, s1, s2, kind, a, b);
}

static void conv(const char *name, int64_t cout, int64_t cin, int64_t k) {
    addf(3, cout, cin, k, NORMAL, 0.5f / sqrtf((float)(cin * k)), 0, "%s.conv.weight", name);
    addf(1, cout, 0, 0, NORMAL, 0.1f, 0, "%s.conv.bias", name);
}
static void tconv(const char *name, int64_t cin, int64_t cout, int64_t k, int64_t stride) {
    addf(3, cin, cout, k, NORMAL, 0.5f / sqrtf((float)(cin * k / stride)), 0, "%s.conv.weight", name);
    addf(1, cout, 0, 0, NORMAL, 0.1f, 0, "%s.conv.bias", name);
}
static void snake(const char *name, int64_t c) {
    addf(1, c, 0, 0, NORMAL, 0.3f, 0, "%s.alpha", name);
    addf(1, c, 0, 0, NORMAL, 0.3f, 0, "%s.beta", name);
}

static void make_tensors(const cfg *c) {
    for (int i = 0; i < nt; i++) free(T[i].bytes);
    nt = 0;
    const int64_t half = c->cbd / 2, L = c->latent, H = c->hidden, qd = c->heads * c->head_dim,
                  kvd = c->kv_heads * c->head_dim;
    char name[160];
    for (int64_t i = 0; i < c->nq; i++) {
        const char *part = i ? "rvq_rest" : "rvq_first";
        const long long j = i ? (long long)i - 1 : 0;
        addf(2, c->cbsize, half, 0, NORMAL, 1.0f, 0, "quantizer.%s.vq.layers.%lld._codebook.embedding_sum", part, j);
        addf(1, c->cbsize, 0, 0, UNIFORM, 0.5f, 2.0f, "quantizer.%s.vq.layers.%lld._codebook.cluster_usage", part, j);
    }
    addf(3, c->cbd, half, 1, NORMAL, 1.0f / sqrtf((float)half), 0, "quantizer.rvq_first.output_proj.weight");
    addf(3, c->cbd, half, 1, NORMAL, 1.0f / sqrtf((float)half), 0, "quantizer.rvq_rest.output_proj.weight");
    conv("pre_conv", L, c->cbd, 3);
    addf(2, H, L, 0, NORMAL, 1.0f / sqrtf((float)L), 0, "pre_transformer.input_proj.weight");
    addf(1, H, 0, 0, NORMAL, 0.1f, 0, "pre_transformer.input_proj.bias");
    addf(2, L, H, 0, NORMAL, 1.0f / sqrtf((float)H), 0, "pre_transformer.output_proj.weight");
    addf(1, L, 0, 0, NORMAL, 0.1f, 0, "pre_transformer.output_proj.bias");
    addf(1, H, 0, 0, AROUND_ONE, 0.2f, 0, "pre_transformer.norm.weight");
    for (int64_t l = 0; l < c->layers; l++) {
        const long long ll = (long long)l;
#define LP "pre_transformer.layers.%lld."
        addf(1, H, 0, 0, AROUND_ONE, 0.2f, 0, LP "input_layernorm.weight", ll);
        addf(1, H, 0, 0, AROUND_ONE, 0.2f, 0, LP "post_attention_layernorm.weight", ll);
        addf(1, H, 0, 0, UNIFORM, 0.3f, 1.0f, LP "self_attn_layer_scale.scale", ll);
        addf(1, H, 0, 0, UNIFORM, 0.3f, 1.0f, LP "mlp_layer_scale.scale", ll);
        addf(2, qd, H, 0, NORMAL, 1.0f / sqrtf((float)H), 0, LP "self_attn.q_proj.weight", ll);
        addf(2, kvd, H, 0, NORMAL, 1.0f / sqrtf((float)H), 0, LP "self_attn.k_proj.weight", ll);
        addf(2, kvd, H, 0, NORMAL, 1.0f / sqrtf((float)H), 0, LP "self_attn.v_proj.weight", ll);
        addf(2, H, qd, 0, NORMAL, 1.0f / sqrtf((float)qd), 0, LP "self_attn.o_proj.weight", ll);
        addf(2, c->inter, H, 0, NORMAL, 1.0f / sqrtf((float)H), 0, LP "mlp.gate_proj.weight", ll);
        addf(2, c->inter, H, 0, NORMAL, 1.0f / sqrtf((float)H), 0, LP "mlp.up_proj.weight", ll);
        addf(2, H, c->inter, 0, NORMAL, 1.0f / sqrtf((float)c->inter), 0, LP "mlp.down_proj.weight", ll);
#undef LP
    }
    for (int64_t i = 0; i < c->n_ratios; i++) {
        const long long ii = (long long)i;
        snprintf(name, sizeof name, "upsample.%lld.0", ii);
        tconv(name, L, L, c->ratios[i], c->ratios[i]);
        snprintf(name, sizeof name, "upsample.%lld.1.dwconv", ii);
        conv(name, L, 1, 7);
        addf(1, L, 0, 0, AROUND_ONE, 0.2f, 0, "upsample.%lld.1.norm.weight", ii);
        addf(1, L, 0, 0, NORMAL, 0.1f, 0, "upsample.%lld.1.norm.bias", ii);
        addf(2, 4 * L, L, 0, NORMAL, 1.0f / sqrtf((float)L), 0, "upsample.%lld.1.pwconv1.weight", ii);
        addf(1, 4 * L, 0, 0, NORMAL, 0.1f, 0, "upsample.%lld.1.pwconv1.bias", ii);
        addf(2, L, 4 * L, 0, NORMAL, 1.0f / sqrtf((float)(4 * L)), 0, "upsample.%lld.1.pwconv2.weight", ii);
        addf(1, L, 0, 0, NORMAL, 0.1f, 0, "upsample.%lld.1.pwconv2.bias", ii);
        addf(1, L, 0, 0, UNIFORM, 0.3f, 1.0f, "upsample.%lld.1.gamma", ii);
    }
    conv("decoder.0", c->ddim, L, 7);
    for (int64_t b = 0; b < c->n_rates; b++) {
        const int64_t cin = c->ddim >> b, cout = cin / 2;
        const long long bb = (long long)b + 1;
        snprintf(name, sizeof name, "decoder.%lld.block.0", bb);
        snake(name, cin);
        snprintf(name, sizeof name, "decoder.%lld.block.1", bb);
        tconv(name, cin, cout, 2 * c->rates[b], c->rates[b]);
        for (int u = 2; u <= 4; u++) {
            snprintf(name, sizeof name, "decoder.%lld.block.%d.act1", bb, u);
            snake(name, cout);
            snprintf(name, sizeof name, "decoder.%lld.block.%d.act2", bb, u);
            snake(name, cout);
            snprintf(name, sizeof name, "decoder.%lld.block.%d.conv1", bb, u);
            conv(name, cout, cout, 7);
            snprintf(name, sizeof name, "decoder.%lld.block.%d.conv2", bb, u);
            conv(name, cout, cout, 1);
        }
    }
    const int64_t last = c->ddim >> c->n_rates;
    snprintf(name, sizeof name, "decoder.%lld", (long long)c->n_rates + 1);
    snake(name, last);
    snprintf(name, sizeof name, "decoder.%lld", (long long)c->n_rates + 2);
    conv(name, 1, last, 7);
    /* tokenizer files the manifest must name */
    static const char *const tok[3] = {"tok.v", "tok.m", "tok.c"};
    for (int i = 0; i < 3; i++) {
        tens *t = &T[nt++];
        snprintf(t->name, sizeof t->name, "%s", tok[i]);
        t->dtype = VOX_DTYPE_U8, t->ndim = 1, t->shape[0] = 2, t->nbytes = 2;
        t->bytes = malloc(2);
        memcpy(t->bytes, "{}", 2);
    }
}

static uint32_t crc32_bitwise(const unsigned char *p, size_t n) {
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++) c = (c & 1u) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    }
    return ~c;
}
static void put32(unsigned char *p, uint32_t v) {
    for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static void put64(unsigned char *p, uint64_t v) {
    for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static char dir[256], path[320];

static void write_tmod(const cfg *c) {
    static char man[1 << 17];
    size_t k = 0, off = 0;
    const char *dn = wdtype == VOX_DTYPE_F32 ? "f32" : wdtype == VOX_DTYPE_F16 ? "f16" : "bf16";
    k += (size_t)snprintf(man + k, sizeof man - k,
                          "{\"format\":\"vox.tmod\",\"format_version\":1,\"family\":\"qwen3_tts\",\"variant\":\"base\","
                          "\"model_id\":\"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\","
                          "\"precision\":{\"dtype\":\"f32\",\"quant\":\"none\",\"codec_dtype\":\"%s\"},\"config\":{},"
                          "\"speech_tokenizer_config\":{\"decoder_config\":{\"codebook_dim\":%lld,\"codebook_size\":%lld,"
                          "\"num_quantizers\":%lld,\"hidden_size\":%lld,\"latent_dim\":%lld,\"head_dim\":%lld,"
                          "\"num_attention_heads\":%lld,\"num_key_value_heads\":%lld,\"intermediate_size\":%lld,"
                          "\"num_hidden_layers\":%lld,\"sliding_window\":%lld,\"decoder_dim\":%lld,\"rope_theta\":500,"
                          "\"rms_norm_eps\":1e-5,\"hidden_act\":\"silu\",\"attention_bias\":false,\"upsample_rates\":[",
                          dn, (long long)c->cbd, (long long)c->cbsize, (long long)c->nq, (long long)c->hidden,
                          (long long)c->latent, (long long)c->head_dim, (long long)c->heads, (long long)c->kv_heads,
                          (long long)c->inter, (long long)c->layers, (long long)c->window, (long long)c->ddim);
    for (int64_t i = 0; i < c->n_rates; i++) k += (size_t)snprintf(man + k, sizeof man - k, "%s%lld", i ? "," : "", (long long)c->rates[i]);
    k += (size_t)snprintf(man + k, sizeof man - k, "],\"upsampling_ratios\":[");
    for (int64_t i = 0; i < c->n_ratios; i++) k += (size_t)snprintf(man + k, sizeof man - k, "%s%lld", i ? "," : "", (long long)c->ratios[i]);
    k += (size_t)snprintf(man + k, sizeof man - k,
                          "]}},\"generation\":{},\"speakers\":{},\"languages\":{},"
                          "\"tokenizer\":{\"type\":\"qwen2_bpe\",\"vocab\":\"tok.v\",\"merges\":\"tok.m\",\"config\":\"tok.c\"},"
                          "\"tensors\":[");
    size_t *offs = malloc((size_t)nt * sizeof *offs);
    for (int i = 0; i < nt; i++) {
        const tens *t = &T[i];
        const char *d = t->dtype == VOX_DTYPE_F32 ? "f32" : t->dtype == VOX_DTYPE_F16 ? "f16" : t->dtype == VOX_DTYPE_BF16 ? "bf16" : "u8";
        offs[i] = off;
        k += (size_t)snprintf(man + k, sizeof man - k, "%s{\"name\":\"%s\",\"dtype\":\"%s\",\"shape\":[", i ? "," : "",
                              t->name, d);
        for (int j = 0; j < t->ndim; j++) k += (size_t)snprintf(man + k, sizeof man - k, "%s%lld", j ? "," : "", (long long)t->shape[j]);
        k += (size_t)snprintf(man + k, sizeof man - k, "],\"offset\":%zu,\"nbytes\":%zu,\"crc32\":%u}", off, t->nbytes,
                              crc32_bitwise(t->bytes, t->nbytes));
        off += (t->nbytes + 4095) / 4096 * 4096;
    }
    k += (size_t)snprintf(man + k, sizeof man - k, "]}");
    if (k >= sizeof man - 1) {
        fprintf(stderr, "manifest too long\n");
        exit(2);
    }
    const size_t data_off = (64 + k + 4095) / 4096 * 4096, n = data_off + off;
    unsigned char *b = calloc(1, n);
    memcpy(b, "VOXM", 4);
    put32(b + 4, 1);
    put64(b + 8, 64);
    put64(b + 16, k);
    put64(b + 24, data_off);
    put64(b + 32, off);
    put64(b + 40, n);
    put32(b + 48, crc32_bitwise((const unsigned char *)man, k));
    put32(b + 52, crc32_bitwise(b, 52));
    memcpy(b + 64, man, k);
    for (int i = 0; i < nt; i++) memcpy(b + data_off + offs[i], T[i].bytes, T[i].nbytes);
    unlink(path);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(b, 1, n, f) != n) {
        fprintf(stderr, "cannot write %s\n", path);
        exit(2);
    }
    fclose(f);
    free(b);
    free(offs);
}

/* ------------------------------------------------------------------------------ helpers */
typedef struct loaded {
    vox_model *file;
    q3_model m;
    q3_codec *codec;
} loaded;

/* pack_pool: NULL loads as q3_codec_load does; else opens and packs over that pool (as an engine does) */
static vox_status load_packed_by(const cfg *c, loaded *out, vx_pool *pack_pool) {
    memset(out, 0, sizeof *out);
    make_tensors(c);
    write_tmod(c);
    vox_status st = vox_model_open(path, &out->file);
    if (st) return st;
    out->m.file = out->file;
    out->m.manifest = vox_model_json(out->file);
    out->m.st_config = vox_json_get(out->m.manifest, "speech_tokenizer_config");
    if (!pack_pool) return q3_codec_load(&out->m, &out->codec);
    if ((st = q3_codec_open(&out->m, &out->codec)) != VOX_OK) return st;
    return q3_codec_prepare_cpu(out->codec, pack_pool);
}

static vox_status load(const cfg *c, loaded *out) { return load_packed_by(c, out, NULL); }
static void unload(loaded *l) {
    q3_codec_free(l->codec);
    vox_model_close(l->file);
}

static int32_t *random_codes(const cfg *c, int64_t n) {
    int32_t *p = malloc((size_t)(n * c->nq) * sizeof *p);
    for (int64_t i = 0; i < n * c->nq; i++) p[i] = (int32_t)irand(0, c->cbsize - 1);
    return p;
}

/* Stream `n` frames through a fresh stream in the given chunk sizes (cycled), after priming with
 * `warm` frames of `ref`; returns the audio (malloc). */
static float *stream(const q3_codec *codec, vx_pool *pool, const int32_t *ref, int64_t warm, const int32_t *codes,
                     int64_t n, const int64_t *sizes, int n_sizes) {
    const int64_t spf = q3_codec_samples_per_frame(codec), nq = q3_codec_groups(codec);
    float *pcm = malloc((size_t)(n * spf) * sizeof *pcm);
    q3_stream *s;
    CHECK(q3_stream_create(codec, &s) == VOX_OK, "create: %s", vox_last_error());
    if (warm) CHECK(q3_stream_prime(s, pool, ref, warm) == VOX_OK, "prime: %s", vox_last_error());
    for (int64_t f = 0, i = 0; f < n; i++) {
        int64_t k = sizes[i % n_sizes];
        if (k > n - f) k = n - f;
        CHECK(q3_stream_push(s, pool, codes + f * nq, k, pcm + f * spf) == VOX_OK, "push: %s", vox_last_error());
        f += k;
    }
    CHECK(q3_stream_position(s) == warm + n, "position %lld", (long long)q3_stream_position(s));
    q3_stream_free(s);
    return pcm;
}

static int same(const float *a, const float *b, int64_t n) { return memcmp(a, b, (size_t)n * sizeof *a) == 0; }

static double max_abs(const float *a, int64_t n) {
    double m = 0;
    for (int64_t i = 0; i < n; i++) m = fmax(m, fabs((double)a[i]));
    return m;
}

/* ------------------------------------------------------------------------------ tests */
static vx_pool *pools[3];

static void test_chunkings(const cfg *c, vox_dtype dt, int64_t n, int n_random) {
    wdtype = dt;
    loaded l;
    vox_status st = load(c, &l);
    CHECK(st == VOX_OK, "%s: load: %s", c->label, vox_last_error());
    if (st) {
        unload(&l);
        return;
    }
    const int64_t spf = spf_of(c), nq = c->nq;
    CHECK(q3_codec_samples_per_frame(l.codec) == spf && q3_codec_groups(l.codec) == nq, "%s: shape", c->label);
    int32_t *codes = random_codes(c, n);
    const int64_t all[1] = {n};
    float *want = stream(l.codec, pools[0], NULL, 0, codes, n, all, 1);
    const double peak = max_abs(want, n * spf);
    CHECK(peak > 1e-3 && peak <= 1.0, "%s: audio peak %g (silent or unclamped)", c->label, peak);
    for (int64_t i = 0; i < n * spf; i++)
        if (!isfinite(want[i])) {
            CHECK(0, "%s: non-finite sample %lld", c->label, (long long)i);
            break;
        }
    /* fixed chunkings, then random ones, each on every pool */
    static const int64_t fixed[][4] = {{1}, {4}, {7}, {16}, {17}, {40}, {3, 1, 9, 30}};
    static const int nfixed[] = {1, 1, 1, 1, 1, 1, 4};
    for (int r = 0; r < 7 + n_random; r++) {
        int64_t sizes[8];
        int ns;
        if (r < 7) {
            ns = nfixed[r];
            memcpy(sizes, fixed[r], sizeof fixed[r]);
        } else {
            ns = (int)irand(1, 8);
            for (int i = 0; i < ns; i++) sizes[i] = irand(1, irand(0, 3) ? 8 : 40);
        }
        vx_pool *pool = pools[r % 3];
        float *got = stream(l.codec, pool, NULL, 0, codes, n, sizes, ns);
        CHECK(same(got, want, n * spf), "%s %s: chunking #%d (first size %lld, %d threads) differs", c->label,
              vox_dtype_name(dt), r, (long long)sizes[0], vx_pool_size(pool));
        free(got);
    }
    /* warm-up: prime(first w) + pushes == the tail of pushing everything */
    /* around the vocoder's receptive field (10 frames for the 12 Hz shape, 27 for the odd one), below
     * which prime runs the vocoder on every frame, above which it skips the first ones */
    const int64_t warms[] = {1, 2, 5, 9, 10, 11, 12, 13, 15, 20, 26, 27, 28, 29, 31, n / 2, n - 3};
    for (size_t i = 0; i < sizeof warms / sizeof *warms; i++) {
        const int64_t w = warms[i], sizes[2] = {irand(1, 6), irand(1, 20)};
        if (w <= 0 || w >= n) continue;
        float *got = stream(l.codec, pools[i % 3], codes, w, codes + w * nq, n - w, sizes, 2);
        CHECK(same(got, want + w * spf, (n - w) * spf), "%s %s: warm-up %lld differs from pushing", c->label,
              vox_dtype_name(dt), (long long)w);
        free(got);
    }
    /* reset: a used stream starts over */
    q3_stream *s;
    CHECK(q3_stream_create(l.codec, &s) == VOX_OK, "create");
    float *got = malloc((size_t)(n * spf) * sizeof *got);
    CHECK(q3_stream_push(s, pools[1], codes + 3 * nq, 5, got) == VOX_OK, "push");
    q3_stream_reset(s);
    CHECK(q3_stream_position(s) == 0, "position after reset");
    CHECK(q3_stream_push(s, pools[1], codes, n, got) == VOX_OK && same(got, want, n * spf), "%s: after reset", c->label);
    q3_stream_free(s);
    /* primed states from the engine's cache (q3_stream_prime_cached): a hit restores exactly what priming
     * afresh gives (the pushes after it match bit for bit), other codes miss, the LRU evicts */
    q3_prime_cache *pc = NULL;
    CHECK(q3_prime_cache_create(2, &pc) == VOX_OK, "prime cache");
    const int64_t wk[] = {12, 12, 7, 12, 12, 7, 12};
    const int64_t off[] = {0, 0, 0, 0, 1, 0, 1}; /* warm-up codes start at frame off: hits #1, #3, #6 */
    for (size_t i = 0; i < sizeof wk / sizeof *wk; i++) {
        const int64_t w = wk[i], o = off[i], rest = n - w - o;
        if (rest <= 0) continue;
        q3_stream *fresh, *cached;
        float *a = malloc((size_t)(rest * spf) * sizeof *a), *b = malloc((size_t)(rest * spf) * sizeof *b);
        CHECK(q3_stream_create(l.codec, &fresh) == VOX_OK && q3_stream_create(l.codec, &cached) == VOX_OK, "create");
        CHECK(q3_stream_push(cached, pools[0], codes, 2, b) == VOX_OK, "push"); /* a used stream: restore replaces it */
        q3_stream_reset(cached);
        CHECK(q3_stream_prime(fresh, pools[1], codes + o * nq, w) == VOX_OK, "prime");
        CHECK(q3_stream_prime_cached(pc, cached, pools[(int)i % 3], codes + o * nq, w) == VOX_OK, "prime cached");
        CHECK(q3_stream_position(cached) == w, "cached position %lld", (long long)q3_stream_position(cached));
        CHECK(q3_stream_push(fresh, pools[2], codes + (o + w) * nq, rest, a) == VOX_OK &&
                  q3_stream_push(cached, pools[0], codes + (o + w) * nq, rest, b) == VOX_OK,
              "push after prime");
        CHECK(same(a, b, rest * spf), "%s %s: cached warm-up #%zu (%lld frames at %lld) differs from priming afresh",
              c->label, vox_dtype_name(dt), i, (long long)w, (long long)o);
        q3_stream_free(fresh);
        q3_stream_free(cached);
        free(a);
        free(b);
    }
    q3_stream *s2;
    CHECK(q3_stream_create(l.codec, &s2) == VOX_OK && q3_stream_prime_cached(NULL, s2, pools[1], codes, 5) == VOX_OK &&
              q3_stream_position(s2) == 5,
          "prime without a cache");
    q3_stream_free(s2);
    q3_prime_cache_free(pc);
    free(got);
    free(want);
    free(codes);
    unload(&l);
}

/* VOX_QWEN3_CODEC=int8: on a path with an int8 convolution the math says so and the audio stays within a
 * few percent of the f32 products' (8-bit weights and activations: ~40 dB on these random weights); on
 * one without, the default math; an unknown value is refused. The chunking, thread and warm-up identities
 * are test_chunkings' under the same setting (main). */
static void test_int8_math(const cfg *c, int64_t n) {
    wdtype = VOX_DTYPE_F32;
    const int64_t all[1] = {n}, spf = spf_of(c);
    int32_t *codes = random_codes(c, n);
    const uint64_t seed = rs; /* the same random weights for both loads */
    float *a = NULL, *b = NULL;
    loaded l;
    unsetenv("VOX_QWEN3_CODEC");
    vox_status st = load(c, &l);
    CHECK(st == VOX_OK, "%s: load f32: %s", c->label, vox_last_error());
    if (!st) a = stream(l.codec, pools[0], NULL, 0, codes, n, all, 1);
    unload(&l);
    rs = seed;
    setenv("VOX_QWEN3_CODEC", "int8", 1);
    st = load(c, &l);
    CHECK(st == VOX_OK, "%s: load int8: %s", c->label, vox_last_error());
    const int has = vx_cpu_dots().int8 != NULL;
    if (!st) {
        CHECK(!strncmp(l.codec->math, has ? "int8 dot products" : "f32 products", has ? 17 : 12), "%s: math %s",
              c->label, l.codec->math);
        b = stream(l.codec, pools[1], NULL, 0, codes, n, all, 1);
    }
    unload(&l);
    /* the codes packed over a pool of threads (one weight per job, as an engine packs): the same audio */
    rs = seed;
    st = load_packed_by(c, &l, pools[2]);
    CHECK(st == VOX_OK, "%s: load int8 over a pool: %s", c->label, vox_last_error());
    if (!st && b) {
        float *b2 = stream(l.codec, pools[1], NULL, 0, codes, n, all, 1);
        CHECK(b2 && same(b2, b, n * spf), "%s: int8 codes packed over a pool change the audio", c->label);
        free(b2);
    }
    unload(&l);
    if (a && b) {
        double err = 0, peak = max_abs(a, n * spf);
        for (int64_t i = 0; i < n * spf; i++) err = fmax(err, fabs((double)a[i] - b[i]));
        printf("test_codec: %s int8 (%s) vs f32 products: max |diff| %.3g, peak %.3g\n", c->label,
               has ? vx_cpu_dots().int8 : "none", err, peak);
        CHECK(has ? err <= 0.05 * peak : err == 0, "%s: int8 vs f32 max |diff| %g (peak %g)", c->label, err, peak);
    }
    setenv("VOX_QWEN3_CODEC", "int4", 1);
    st = load(c, &l);
    CHECK(st == VOX_ERR_INVALID_ARGUMENT && strstr(vox_last_error(), "VOX_QWEN3_CODEC=int4"), "%s: int4 accepted (%d)",
          c->label, (int)st);
    unload(&l);
    unsetenv("VOX_QWEN3_CODEC");
    free(a), free(b), free(codes);
}

/* Reference mode == its definition; ranges == slices. */
static void test_reference(const cfg *c, int64_t n) {
    wdtype = VOX_DTYPE_F32;
    loaded l;
    if (load(c, &l) != VOX_OK) {
        CHECK(0, "load: %s", vox_last_error());
        unload(&l);
        return;
    }
    const int64_t spf = spf_of(c), nq = c->nq;
    int32_t *codes = random_codes(c, n);
    float *got = malloc((size_t)(n * spf) * sizeof *got), *want = malloc((size_t)(n * spf) * sizeof *want);
    CHECK(q3_codec_decode_reference(l.codec, pools[1], codes, n, got) == VOX_OK, "reference: %s", vox_last_error());
    for (int64_t start = 0; start < n; start += 300) {
        const int64_t end = start + 300 < n ? start + 300 : n, ctx = start - 25 > 0 ? 25 : start;
        const int64_t all[1] = {end - start + ctx};
        float *piece = stream(l.codec, pools[0], NULL, 0, codes + (start - ctx) * nq, end - start + ctx, all, 1);
        memcpy(want + start * spf, piece + ctx * spf, (size_t)((end - start) * spf) * sizeof(float));
        free(piece);
    }
    CHECK(same(got, want, n * spf), "%s: reference mode differs from 300-frame pieces with 25 frames of context", c->label);
    /* the pieces differ from one whole stream (there are seams) */
    const int64_t all[1] = {n};
    float *whole = stream(l.codec, pools[0], NULL, 0, codes, n, all, 1);
    CHECK(same(whole, got, 300 * spf) && !same(whole + 300 * spf, got + 300 * spf, (n - 300) * spf),
          "%s: the first piece should equal the stream, the second not", c->label);
    free(whole);
    const int64_t ranges[][2] = {{0, 1}, {17, 5}, {299 * spf - 3, 7}, {300 * spf, spf}, {301 * spf + 1, 2 * spf},
                                 {601 * spf, 1}, {n * spf - 10, 10}, {n * spf - 5, 100}};
    for (size_t i = 0; i < sizeof ranges / sizeof *ranges; i++) {
        const int64_t skip = ranges[i][0], cap = ranges[i][1];
        if (skip >= n * spf) continue;
        float *part = calloc((size_t)cap, sizeof *part);
        CHECK(q3_codec_decode_reference_range(l.codec, pools[2], codes, n, skip, part, cap) == VOX_OK, "range");
        const int64_t m = skip + cap <= n * spf ? cap : n * spf - skip;
        CHECK(same(part, got + skip, m), "%s: range [%lld, +%lld) differs from the slice", c->label, (long long)skip,
              (long long)cap);
        free(part);
    }
    free(got);
    free(want);
    free(codes);
    unload(&l);
}

static void test_invalid(void) {
    const cfg *c = &CFG_ODD;
    wdtype = VOX_DTYPE_F32;
    loaded l;
    if (load(c, &l) != VOX_OK) {
        CHECK(0, "load: %s", vox_last_error());
        unload(&l);
        return;
    }
    const int64_t spf = spf_of(c), nq = c->nq, n = 9;
    int32_t *codes = random_codes(c, n);
    const int64_t all[1] = {n};
    float *want = stream(l.codec, pools[0], NULL, 0, codes, n, all, 1);
    float *got = malloc((size_t)(n * spf) * sizeof *got);
    q3_stream *s;
    CHECK(q3_stream_create(l.codec, &s) == VOX_OK, "create");
    CHECK(q3_stream_push(s, pools[0], codes, 4, got) == VOX_OK, "push");
    /* rejected pushes leave the state alone */
    int32_t bad[2 * 4];
    memcpy(bad, codes + 4 * nq, sizeof bad);
    bad[5] = (int32_t)c->cbsize;
    CHECK(q3_stream_push(s, pools[0], bad, 2, got + 4 * spf) == VOX_ERR_INVALID_ARGUMENT &&
              strstr(vox_last_error(), "out of range"),
          "code out of range: %s", vox_last_error());
    CHECK(q3_stream_prime(s, pools[0], bad, 2) == VOX_ERR_INVALID_ARGUMENT, "prime out of range");
    CHECK(q3_stream_push(s, pools[0], NULL, 2, got) == VOX_ERR_INVALID_ARGUMENT, "NULL codes");
    CHECK(q3_stream_push(s, pools[0], codes, 2, NULL) == VOX_ERR_INVALID_ARGUMENT, "NULL pcm");
    CHECK(q3_stream_push(s, pools[0], codes, -1, got) == VOX_ERR_INVALID_ARGUMENT, "negative n");
    CHECK(q3_stream_push(s, pools[0], codes, 0, NULL) == VOX_OK && q3_stream_prime(s, pools[0], NULL, 0) == VOX_OK,
          "empty push / prime");
    CHECK(q3_stream_position(s) == 4, "position moved by rejected pushes");
    CHECK(q3_stream_push(s, pools[0], codes + 4 * nq, n - 4, got + 4 * spf) == VOX_OK && same(got, want, n * spf),
          "state changed by rejected pushes");
    q3_stream_free(s);
    /* negative codes decode as 0 (Qwen3TTSTokenizerV2Model.decode clamps the -1 padding) */
    int32_t *neg = malloc((size_t)(n * nq) * sizeof *neg), *zero = malloc((size_t)(n * nq) * sizeof *zero);
    memcpy(neg, codes, (size_t)(n * nq) * sizeof *neg);
    memcpy(zero, codes, (size_t)(n * nq) * sizeof *neg);
    neg[3] = -1, zero[3] = 0, neg[nq * 5 + 1] = -7, zero[nq * 5 + 1] = 0;
    float *a = stream(l.codec, pools[0], NULL, 0, neg, n, all, 1), *b = stream(l.codec, pools[0], NULL, 0, zero, n, all, 1);
    CHECK(same(a, b, n * spf), "negative codes != 0");
    free(a), free(b), free(neg), free(zero);
    CHECK(q3_stream_create(l.codec, NULL) == VOX_ERR_INVALID_ARGUMENT, "NULL out");
    CHECK(q3_stream_create(NULL, &s) == VOX_ERR_UNSUPPORTED && s == NULL, "no codec");
    CHECK(q3_codec_decode_reference_range(l.codec, pools[0], codes, n, 0, NULL, 5) == VOX_ERR_INVALID_ARGUMENT, "ref NULL");
    CHECK(q3_codec_decode_reference_range(l.codec, pools[0], codes, n, n * spf + 3, got, 5) == VOX_OK, "ref past end");
    free(got);
    free(want);
    free(codes);
    unload(&l);

    /* missing and misshapen tensors */
    skip_tensor = PFX "decoder.2.block.3.conv1.conv.weight";
    CHECK(load(c, &l) == VOX_ERR_FORMAT && strstr(vox_last_error(), "decoder.2.block.3.conv1.conv.weight") &&
              l.codec == NULL,
          "missing tensor: %s", vox_last_error());
    unload(&l);
    skip_tensor = NULL;
    bad_shape_tensor = PFX "upsample.0.0.conv.weight";
    CHECK(load(c, &l) == VOX_ERR_FORMAT && strstr(vox_last_error(), "upsample.0.0.conv.weight") &&
              strstr(vox_last_error(), "shape"),
          "misshapen tensor: %s", vox_last_error());
    unload(&l);
    bad_shape_tensor = PFX "pre_transformer.layers.1.mlp.up_proj.weight";
    CHECK(load(c, &l) == VOX_ERR_FORMAT && strstr(vox_last_error(), "up_proj"), "misshapen 2-D: %s", vox_last_error());
    unload(&l);
    bad_shape_tensor = NULL;
}

/* q3_reference_cut: Python's int(ref / max(total, 1) * n) in double. */
static void test_cut(void) {
    CHECK(q3_reference_cut(81, 322, 322 * 1920) == 81 * 1920 - 1, "81/322");
    CHECK(q3_reference_cut(0, 0, 0) == 0 && q3_reference_cut(5, 5, 9600) == 9600, "edges");
    CHECK(q3_reference_cut(426, 466, 466 * 1920) == 426 * 1920, "426/466");
}

#ifndef TEST_CODEC_NO_MAIN /* tools/codec_bench.c reuses the writer above */
int main(void) {
    if (cpu_path_refused()) return 77;
    printf("test_codec: kernel path %s\n", vx_cpu()->name);
    snprintf(dir, sizeof dir, "/tmp/vox_test_codec_XXXXXX");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 2;
    }
    snprintf(path, sizeof path, "%s/codec.tmod", dir);
    for (int i = 0; i < 3; i++) {
        vx_pool_opts o = {.n_threads = i + 1, .spin_us = 50};
        if (vx_pool_create(&o, &pools[i]) != VOX_OK) {
            fprintf(stderr, "pool: %s\n", vox_last_error());
            return 2;
        }
    }
    test_cut();
    /* VOX_TEST_QUICK=1: the same checks on fewer frames and chunkings (under CPU emulation, where the
     * full set takes tens of minutes: scripts/test-aarch64.sh) */
    const int quick = getenv("VOX_TEST_QUICK") && strcmp(getenv("VOX_TEST_QUICK"), "1") == 0;
    if (quick) {
        test_chunkings(&CFG_12HZ, VOX_DTYPE_F32, 12, 2);
        test_chunkings(&CFG_ODD, VOX_DTYPE_F32, 30, 4);
        test_chunkings(&CFG_ODD, VOX_DTYPE_BF16, 20, 2);
        test_reference(&CFG_ODD, 330); /* two official pieces: 300 frames, then 30 with 25 of context */
        test_int8_math(&CFG_12HZ, 8);
        setenv("VOX_QWEN3_CODEC", "int8", 1);
        test_chunkings(&CFG_12HZ, VOX_DTYPE_F32, 12, 1);
        unsetenv("VOX_QWEN3_CODEC");
    } else {
        test_chunkings(&CFG_12HZ, VOX_DTYPE_F32, 100, 10);
        test_chunkings(&CFG_ODD, VOX_DTYPE_F32, 60, 30);
        test_chunkings(&CFG_ODD, VOX_DTYPE_BF16, 40, 6);
        test_chunkings(&CFG_ODD, VOX_DTYPE_F16, 40, 6);
        test_chunkings(&CFG_12HZ, VOX_DTYPE_BF16, 30, 3);
        test_reference(&CFG_ODD, 650);
        test_int8_math(&CFG_12HZ, 30);
        test_int8_math(&CFG_ODD, 30);
        setenv("VOX_QWEN3_CODEC", "int8", 1); /* the same identities with the int8 convolutions */
        test_chunkings(&CFG_12HZ, VOX_DTYPE_F32, 40, 4);
        test_chunkings(&CFG_ODD, VOX_DTYPE_BF16, 30, 4);
        unsetenv("VOX_QWEN3_CODEC");
    }
    test_invalid();
    for (int i = 0; i < 3; i++) vx_pool_free(pools[i]);
    for (int i = 0; i < nt; i++) free(T[i].bytes);
    unlink(path);
    rmdir(dir);
    if (fails) fprintf(stderr, "%d check(s) failed\n", fails);
    return fails != 0;
}
#endif
