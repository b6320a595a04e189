/* The Qwen3-TTS-12Hz family: loading its parts, voices, and the dispatch of the C ABI to them. */
#include <ctype.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../error.h"
#include "../family.h"
#include "../strbuf.h"
#include "../tmod.h"
#include "codec.h"
#include "lm.h"
#include "model.h"
#include "tokenizer.h"
#include "voice_encoder.h"
#include "gpu_codec.h"
#include "gpu_lm.h"

/* Primed decoder states kept per engine (~5 MB each for the 12 Hz codec). */
#define Q3_PRIME_CACHE_VOICES 4

static void copy_str(char *dst, size_t cap, const vox_json *v) {
    dst[0] = '\0';
    if (v && v->type == VOX_JSON_STRING && v->str_len < cap) memcpy(dst, v->str, v->str_len + 1);
}

/* The talker and code predictor go to VRAM when they fit in the device's free memory (or in
 * VOX_VRAM_LIMIT_MB, which tests use to simulate a small card), and then the codec decoder too unless
 * codec=cpu or it does not fit beside them (it stays on the CPU, with the reason on the start-up
 * line); the embeddings and the voice encoders stay on the CPU. The engine reports the placement
 * (engine.c); strict makes a shortfall of video memory an error (for the decoder too, unless codec=cpu). */
static vox_status place_on_gpu(vox_engine *e, q3_model *m) {
    int64_t n_gpu = 0, n_all = 0;
    uint64_t need = vx_q3_gpu_bytes(m->lm, &n_gpu);
    for (size_t i = 0; i < vox_model_tensor_count(e->model); i++) {
        vox_tensor_info t;
        if (vox_model_tensor(e->model, i, &t) == VOX_OK && t.ndim >= 2) n_all++; /* matrices and conv kernels */
    }
    uint64_t avail = vx_gpu_info(e->gpu)->memory_free;
    const char *lim = getenv("VOX_VRAM_LIMIT_MB");
    if (lim && *lim && strtoull(lim, NULL, 10) * 1048576ull < avail) avail = strtoull(lim, NULL, 10) * 1048576ull;
    if (need > avail) {
        vx_placement_reason(e, "not enough video memory: the talker and predictor need %.1f MiB, %.1f MiB free",
                            (double)need / 1048576.0, (double)avail / 1048576.0);
        e->matrices_cpu = n_all;
        if (e->gpu_strict)
            return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "device vulkan:%d,strict: %s", e->gpu_index, e->cpu_reason);
        return VOX_OK;
    }
    vox_status st = vx_q3_gpu_load(e->gpu, m->lm, &m->gpu);
    if (st == VOX_OK) st = vx_gpu_prepare(e->gpu);   /* pipelines built at load, not in the first frame */
    if (st != VOX_OK) return st;
    vx_placement_reason(e, "embeddings, text projection, codec decoder (codec=cpu) and voice encoders run on the CPU");
    const char *codec_opt = vx_device_opt(e, "codec");
    if (codec_opt && strcmp(codec_opt, "cpu") != 0 && strcmp(codec_opt, "gpu") != 0)
        return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "device \"%s\": codec=%s: the codec decoder runs on cpu or gpu",
                             e->device, codec_opt);
    if (!(codec_opt && !strcmp(codec_opt, "cpu")) && m->codec) {
        int64_t n_codec = 0;
        uint64_t cneed = vx_codec_gpu_bytes(m->codec, &n_codec);
        vx_codec_gpu *cg = NULL;
        if (need + cneed > avail) {
            vx_placement_reason(e, "embeddings, text projection, codec decoder and voice encoders run on the CPU; "
                                "the codec decoder for lack of video memory: it needs %.1f MiB more, %.1f MiB free",
                                (double)cneed / 1048576.0, (double)(avail - need) / 1048576.0);
            if (e->gpu_strict)
                return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "device vulkan:%d,strict: not enough video memory for the "
                                     "codec decoder: it needs %.1f MiB beside the talker's %.1f MiB, %.1f MiB free "
                                     "(codec=cpu keeps it on the CPU)", e->gpu_index, (double)cneed / 1048576.0,
                                     (double)need / 1048576.0, (double)avail / 1048576.0);
        } else if ((st = vx_codec_gpu_load(e->gpu, m->codec, &cg)) != VOX_OK) {
            if (st != VOX_ERR_UNSUPPORTED && st != VOX_ERR_OUT_OF_MEMORY) return st;
            vx_placement_reason(e, "embeddings, text projection, codec decoder and voice encoders run on the CPU; "
                                "the codec decoder because %s", vox_last_error());
        } else {
            m->codec->gpu = cg;
            n_gpu += n_codec;
            need += cneed;
            vx_placement_reason(e, "embeddings, text projection and voice encoders run on the CPU; the codec decoder "
                                "on the GPU");
        }
    }
    e->matrices_gpu = n_gpu;
    e->matrices_cpu = n_all - n_gpu;
    e->bytes_gpu = need;
    return VOX_OK;
}

static void q3_free(q3_model *m) {
    if (!m) return;
    vx_q3_gpu_free(m->gpu);
    if (m->codec) vx_codec_gpu_free(m->codec->gpu);
    q3_prime_cache_free(m->primes);
    q3_venc_free(m->venc);
    q3_codec_free(m->codec);
    q3_lm_free(m->lm);
    q3_tokenizer_free(m->tok);
    free(m);
}

static char *build_info(const vox_engine *e, const q3_model *m) {
    vx_buf b = {0};
    bool base = !strcmp(m->variant, "base"), custom = !strcmp(m->variant, "custom_voice"),
         design = !strcmp(m->variant, "voice_design");
    bool instruct = design || (custom && strcmp(m->size, "0b6") != 0); /* the official 0b6 ignores it */
    const vox_json *prec = vox_json_get(m->manifest, "precision");
    const vx_cpu_info *cpu = vx_cpu();
    vx_buf_printf(&b, "{\"family\":\"qwen3_tts\",\"variant\":");
    vx_buf_json_string(&b, m->variant, (size_t)-1);
    vx_buf_printf(&b, ",\"size\":");
    vx_buf_json_string(&b, m->size, (size_t)-1);
    vx_buf_printf(&b, ",\"model_id\":\"%s\",\"sample_rate\":%d,\"frame_rate\":12.5", m->model_id,
                  m->codec ? q3_codec_sample_rate(m->codec) : 24000);
    vx_buf_printf(&b, ",\"capabilities\":{\"clone\":%s,\"speakers\":%s,\"instruct\":%s,\"design\":%s,"
                      "\"decoder_modes\":[\"stream\",\"reference\"],"
                      "\"stream\":{\"text_in\":\"token\",\"unit\":\"word\",\"audio_out\":\"chunk\",\"exact\":true}}",
                  base ? "true" : "false", custom ? "true" : "false", instruct ? "true" : "false",
                  design ? "true" : "false");
    const char *tables[2] = {"speakers", "languages"};
    for (int t = 0; t < 2; t++) {
        vx_buf_printf(&b, ",\"%s\":[", tables[t]);
        const vox_json *obj = vox_json_get(m->manifest, tables[t]);
        int i = 0;
        for (const vox_json *c = obj ? obj->child : NULL; c; c = c->next) {
            if (t == 1 && strstr(c->key, "dialect")) continue; /* dialects are chosen by the speaker */
            vx_buf_printf(&b, i++ ? "," : "");
            vx_buf_json_string(&b, c->key, c->key_len);
        }
        if (t == 1) vx_buf_printf(&b, "%s\"auto\"", i ? "," : "");
        vx_buf_printf(&b, "]");
    }
    vx_buf_printf(&b, ",\"precision\":{");
    int i = 0;
    for (const vox_json *c = prec ? prec->child : NULL; c; c = c->next) {
        if (c->type != VOX_JSON_STRING) continue;
        vx_buf_printf(&b, i++ ? "," : "");
        vx_buf_json_string(&b, c->key, c->key_len);
        vx_buf_printf(&b, ":");
        vx_buf_json_string(&b, c->str, c->str_len);
    }
    vx_buf_printf(&b, "}");
    if (m->codec) {
        vx_buf_printf(&b, ",\"codec_math\":");
        vx_buf_json_string(&b, m->codec->gpu ? "on the GPU (the Vulkan decoder; VOX_QWEN3_CODEC applies to the CPU's)"
                                             : m->codec->math, (size_t)-1);
    }
    vx_buf_printf(&b, ",\"threads\":%d,\"cpu\":", vx_pool_size(e->pool));   /* the engine adds "device" */
    vx_buf_json_string(&b, cpu->name, (size_t)-1);
    vx_buf_printf(&b, "}");
    return vx_buf_take(&b);
}

static vox_status q3_load(vox_engine *e) {
    q3_model *m = calloc(1, sizeof *m);
    if (!m) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    m->file = e->model;
    m->manifest = e->manifest;
    m->config = vox_json_get(e->manifest, "config");
    m->st_config = vox_json_get(e->manifest, "speech_tokenizer_config");
    m->generation = vox_json_get(e->manifest, "generation");
    copy_str(m->variant, sizeof m->variant, vox_json_get(e->manifest, "variant"));
    copy_str(m->size, sizeof m->size, vox_json_get(e->manifest, "size"));
    copy_str(m->model_id, sizeof m->model_id, vox_json_get(e->manifest, "model_id"));
    vox_status st;
    if ((st = q3_tokenizer_load(m, &m->tok)) != VOX_OK || (st = q3_lm_load(m, &m->lm)) != VOX_OK ||
        (st = q3_codec_open(m, &m->codec)) != VOX_OK || (st = q3_venc_load(m, &m->venc)) != VOX_OK ||
        (m->codec && (st = q3_prime_cache_create(Q3_PRIME_CACHE_VOICES, &m->primes)) != VOX_OK)) {
        q3_free(m);
        return st;
    }
    if ((e->gpu && (st = place_on_gpu(e, m)) != VOX_OK) ||
        (m->codec && !m->codec->gpu && (st = q3_codec_prepare_cpu(m->codec, e->pool)) != VOX_OK)) {
        q3_free(m);
        return st;
    }
    e->impl = m;
    e->info = build_info(e, m);
    if (!e->info) {
        q3_free(m);
        e->impl = NULL;
        return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    }
    return VOX_OK;
}

static void q3_unload(vox_engine *e) {
    q3_free(e->impl);
    e->impl = NULL;
}

static vox_status q3_tokenize_abi(vox_engine *e, const char *text, int32_t *ids, size_t capacity, size_t *n_ids) {
    q3_model *m = e->impl;
    int32_t *all = NULL;
    size_t n = 0;
    vox_status st = q3_tokenize(m->tok, text, strlen(text), &all, &n);
    if (st != VOX_OK) return st;
    if (ids) memcpy(ids, all, (n < capacity ? n : capacity) * sizeof *ids);
    *n_ids = n;
    free(all);
    return VOX_OK;
}

/* The official code lower-cases speaker names before looking them up. */
static const vox_json *find_ci(const vox_json *obj, const char *name) {
    for (const vox_json *c = obj ? obj->child : NULL; c; c = c->next)
        if (strlen(name) == c->key_len && !strncasecmp(c->key, name, c->key_len)) return c;
    return NULL;
}

static vox_status fill_common(const q3_model *m, vox_voice *v, const char *mode) {
    v->family = vx_strdup("qwen3_tts");
    v->mode = vx_strdup(mode);
    v->model_id = vx_strdup(m->model_id);
    v->variant = vx_strdup(m->variant);
    if (!v->family || !v->mode || !v->model_id || !v->variant)
        return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    return VOX_OK;
}

static vox_status q3_voice_speaker(vox_engine *e, const char *speaker, const char *instruct, vox_voice *v) {
    q3_model *m = e->impl;
    if (strcmp(m->variant, "custom_voice") != 0)
        return vox_set_error(VOX_ERR_UNSUPPORTED, "%s is a %s model: built-in speakers need a CustomVoice model",
                             vox_model_path(m->file), m->variant);
    const vox_json *spk = find_ci(vox_json_get(m->manifest, "speakers"), speaker);
    if (!spk) {
        vx_buf b = {0};
        int i = 0;
        for (const vox_json *c = vox_json_get(m->manifest, "speakers")->child; c; c = c->next)
            vx_buf_printf(&b, "%s%.*s", i++ ? ", " : "", (int)c->key_len, c->key);
        char *list = vx_buf_take(&b);
        vox_status st = vox_set_error(VOX_ERR_NOT_FOUND, "unknown speaker \"%s\"; this model has: %s", speaker,
                                      list ? list : "?");
        free(list);
        return st;
    }
    vox_status st = fill_common(m, v, "speaker");
    if (st == VOX_OK) st = vx_voice_put_text(v, "speaker", spk->key);
    if (st == VOX_OK) st = vx_voice_put_text(v, "instruct", instruct ? instruct : "");
    if (st != VOX_OK) return st;
    v->name = vx_strdup(spk->key);
    v->language = vx_strdup("auto");
    if (!v->name || !v->language) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    return VOX_OK;
}

static vox_status q3_voice_design(vox_engine *e, const char *description, vox_voice *v) {
    q3_model *m = e->impl;
    if (strcmp(m->variant, "voice_design") != 0)
        return vox_set_error(VOX_ERR_UNSUPPORTED, "%s is a %s model: voices from a description need a VoiceDesign model",
                             vox_model_path(m->file), m->variant);
    vox_status st = fill_common(m, v, "design");
    if (st == VOX_OK) st = vx_voice_put_text(v, "instruct", description ? description : "");
    if (st != VOX_OK) return st;
    v->name = vx_strdup("designed");
    v->language = vx_strdup("auto");
    if (!v->name || !v->language) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    return VOX_OK;
}

static vox_status q3_voice_check(vox_engine *e, const vox_voice *v) {
    q3_model *m = e->impl;
    static const struct { const char *mode, *variant; } need[] = {
        {"icl", "base"}, {"xvector", "base"}, {"speaker", "custom_voice"}, {"design", "voice_design"}};
    for (size_t i = 0; i < sizeof need / sizeof need[0]; i++) {
        if (strcmp(v->mode, need[i].mode) != 0) continue;
        if (strcmp(m->variant, need[i].variant) != 0)
            return vox_set_error(VOX_ERR_UNSUPPORTED, "a %s voice needs a %s model; %s is %s", v->mode,
                                 need[i].variant, vox_model_path(m->file), m->variant);
        const char *speaker = vx_voice_text(v, "speaker");
        if (speaker && speaker[0] && !find_ci(vox_json_get(m->manifest, "speakers"), speaker))
            return vox_set_error(VOX_ERR_NOT_FOUND, "the voice's speaker \"%s\" is not in %s", speaker,
                                 vox_model_path(m->file));
        if (v->language && strcasecmp(v->language, "auto") != 0 &&
            !find_ci(vox_json_get(m->manifest, "languages"), v->language))
            return vox_set_error(VOX_ERR_NOT_FOUND, "the voice's language \"%s\" is not in %s", v->language,
                                 vox_model_path(m->file));
        const vx_voice_array *emb = vx_voice_get_array(v, "speaker_embedding"), *rc = vx_voice_get_array(v, "ref_codes");
        if (emb && m->venc && (int32_t)emb->count != q3_venc_embedding_dim(m->venc))
            return vox_set_error(VOX_ERR_FORMAT, "the voice's speaker embedding has %zu values, the model wants %d",
                                 emb->count, q3_venc_embedding_dim(m->venc));
        if (rc && m->codec && rc->shape[1] != q3_codec_groups(m->codec))
            return vox_set_error(VOX_ERR_FORMAT, "the voice's reference codes have %lld groups, the model %d",
                                 (long long)rc->shape[1], q3_codec_groups(m->codec));
        return VOX_OK;
    }
    return vox_set_error(VOX_ERR_FORMAT, "unknown voice mode \"%s\"", v->mode);
}

/* Warm the stream decoder up on a new ICL voice now (cached in the engine), so that its sessions
 * start decoding at once: the warm-up is what the first audio chunk would otherwise wait for. Uses the
 * voice's default decoder_context; a failure here only means the first session primes itself. */
static void prime_voice(vox_engine *e, const vox_voice *v) {
    q3_model *m = e->impl;
    const vx_voice_array *rc = vx_voice_get_array(v, "ref_codes");
    if (!m->codec || !m->primes || !rc || rc->shape[0] == 0 || rc->shape[1] != q3_codec_groups(m->codec)) return;
    q3_options p;   /* the decoder settings a session of this voice gets by default */
    q3_option_defaults(e, &p);
    vox_json_doc *d = NULL;
    static const char *const seed[] = {"seed", NULL};
    if (vx_options_parse(v->defaults, "defaults", &d) != VOX_OK ||
        vx_options_apply(&q3_options_set, &p, vox_json_root(d), "defaults", seed) != VOX_OK)
        q3_option_defaults(e, &p);
    vox_json_free(d);
    vox_clear_error();
    if (p.decoder != Q3_DECODER_STREAM) return;
    int64_t ctx = p.decoder_context, n_ref = rc->shape[0];
    const int32_t *ref_codes = rc->data;
    const int64_t G = rc->shape[1];
    if (ctx < 0 || ctx > n_ref) ctx = n_ref;
    if (ctx == 0) return;
    q3_stream *s = NULL;
    uint32_t fp = vx_fp_fast();
    if (q3_stream_create(m->codec, &s) != VOX_OK ||
        q3_stream_prime_cached(m->primes, s, e->pool, ref_codes + (n_ref - ctx) * G, ctx) != VOX_OK)
        vox_clear_error();
    vx_fp_restore(fp);
    q3_stream_free(s);
}

typedef struct q3_clone_options {
    int32_t x_vector_only;
} q3_clone_options;

static const vx_option q3_clone_table[] = {
    {"x_vector_only", VX_OPT_BOOL, offsetof(q3_clone_options, x_vector_only), 0, 0, 0, 0, NULL,
     "the speaker embedding alone: no transcript needed, no reference codes in the prompt"},
};
static const vx_option_set q3_clone_set = {q3_clone_table, 1, sizeof(q3_clone_options)};

static vox_status q3_voice_clone_abi(vox_engine *e, const float *mono, size_t n, int32_t sample_rate,
                                     const vox_clone_params *p, const void *clone_opts, vox_voice *v) {
    q3_model *m = e->impl;
    const q3_clone_options *co = clone_opts;
    if (strcmp(m->variant, "base") != 0)
        return vox_set_error(VOX_ERR_UNSUPPORTED, "%s is a %s model: cloning a voice needs a Base model",
                             vox_model_path(m->file), m->variant);
    vox_status st = fill_common(m, v, co->x_vector_only ? "xvector" : "icl");
    if (st != VOX_OK) return st;
    double t0 = vx_now_ms();
    st = q3_voice_clone(e, mono, n, sample_rate, p, co->x_vector_only, v);
    vx_stats_stage(e, Q3_ST_VOICE, vx_now_ms() - t0, 1);
    /* the encoders' weights (~260 MB for 0.6B/1.7B Base) are not needed to speak: let them go from
     * the resident set until the next voice is made */
    static const char *const encoders[] = {"speaker_encoder.", "speech_tokenizer.encoder."};
    q3_release_tensors(m, encoders, 2);
    if (st != VOX_OK) return st;
    prime_voice(e, v);
    return VOX_OK;
}

/* ------------------------------------------------------------------------------ verification */
/* decode: codes (I32 [frames][groups]) after the optional ref_codes through the codec decoder, in the
 * mode of the scalar inputs reference (0: stream, 1: reference), context (stream warm-up frames, -1:
 * all) and chunk_frames; output "audio". */
static int32_t scalar(const vox_array *in, size_t n, const char *name, int32_t def, vox_status *st) {
    const vox_array *a = vx_run_input(in, n, name);
    if (!a) return def;
    if (a->dtype != VOX_DTYPE_I32 || vx_array_count(a) != 1) {
        *st = vox_set_error(VOX_ERR_INVALID_ARGUMENT, "decode: %s must be one I32", name);
        return def;
    }
    return *(const int32_t *)a->data;
}

static vox_status run_decode(vox_engine *e, const vox_array *in, size_t n_in, vox_trace *t) {
    const q3_model *m = e->impl;
    vox_status st = VOX_OK;
    const vox_array *codes = vx_run_input(in, n_in, "codes"), *ref = vx_run_input(in, n_in, "ref_codes");
    const int64_t G = m->codec ? q3_codec_groups(m->codec) : 16;
    if (!codes || codes->dtype != VOX_DTYPE_I32 || codes->ndim != 2 || codes->shape[1] != G ||
        (ref && (ref->dtype != VOX_DTYPE_I32 || ref->ndim != 2 || ref->shape[1] != G)))
        return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "decode: needs codes (and optionally ref_codes), I32 [frames][%lld]",
                             (long long)G);
    int32_t mode = scalar(in, n_in, "reference", 0, &st), ctx = scalar(in, n_in, "context", 50, &st),
            chunk = scalar(in, n_in, "chunk_frames", 4, &st);
    if (st != VOX_OK) return st;
    size_t n_ref = ref ? (size_t)ref->shape[0] : 0, n = 0;
    const int32_t *rc = ref && n_ref ? ref->data : NULL;
    double t0 = vx_now_ms();
    st = q3_decode(e, codes->data, (size_t)codes->shape[0], rc, n_ref, mode, ctx, chunk, NULL, 0, &n);
    float *pcm = st == VOX_OK ? malloc(n * sizeof *pcm + 1) : NULL;
    if (st == VOX_OK && !pcm) st = vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    if (st == VOX_OK) st = q3_decode(e, codes->data, (size_t)codes->shape[0], rc, n_ref, mode, ctx, chunk, pcm, n, &n);
    vx_stats_stage(e, Q3_ST_DECODER, vx_now_ms() - t0, (uint64_t)codes->shape[0]);
    int64_t shape[1] = {(int64_t)n};
    if (st == VOX_OK) st = vx_trace_put(t, "audio", VOX_DTYPE_F32, 1, shape, pcm);
    free(pcm);
    return st;
}

static const vx_entry q3_entries[] = {
    {"prompt", 1, "text (U8)", "prompt", "the talker's prefill input embeddings [rows][hidden] for the voice, text and "
                                          "options"},
    {"teacher_force", 1, "text (U8), codes (I32 [frames][groups])", "talker_logits, predictor_logits",
     "the talker and code predictor on the given codes instead of sampling: raw logits of every step"},
    {"decode", 0, "codes, ref_codes (I32 [frames][groups]); reference, context, chunk_frames (I32 scalars)", "audio",
     "codes through the codec decoder in stream or reference mode, as a session decodes them"},
};

static vox_status q3_run(vox_engine *e, vox_session *s, const vx_entry *entry, const vox_array *in, size_t n_in,
                         vox_trace *t) {
    if (!strcmp(entry->name, "prompt")) return q3_run_prompt(s, t);
    if (!strcmp(entry->name, "teacher_force")) return q3_run_teacher_force(s, vx_run_input(in, n_in, "codes"), t);
    return run_decode(e, in, n_in, t);
}

static const vx_voice_array_spec q3_voice_arrays[] = {
    {"speaker_embedding", VOX_DTYPE_F32, 1, {0, 0}},
    {"ref_codes", VOX_DTYPE_I32, 2, {0, 0}},
    {"ref_text_tokens", VOX_DTYPE_I32, 1, {0, 0}},
    {"source_wav", VOX_DTYPE_F32, 1, {0, 0}},
};
static const char *const q3_voice_texts[] = {"ref_text", "speaker", "instruct", NULL};
static const vx_voice_mode q3_voice_modes[] = {
    {"icl", "base", {"speaker_embedding", "ref_codes", "ref_text_tokens"}, {"source_wav"}, "ref_text"},
    {"xvector", "base", {"speaker_embedding"}, {"source_wav"}, NULL},
    {"speaker", "custom_voice", {NULL}, {NULL}, "speaker"},
    {"design", "voice_design", {NULL}, {NULL}, "instruct"},
};
static const vx_voice_schema q3_voices = {q3_voice_arrays, 4, q3_voice_texts, q3_voice_modes, 4, 0};
static const char *const q3_device_options[] = {"codec", NULL};
static const char *const q3_session_outputs[] = {"codes", NULL};

const vx_family vx_family_qwen3 = {
    .name = "qwen3_tts",
    .check_manifest = q3_check_manifest,
    .load = q3_load,
    .unload = q3_unload,
    .device_options = q3_device_options,
    .stages = q3_stage_names,
    .tokenize = q3_tokenize_abi,
    .voices = &q3_voices,
    .clone_options = &q3_clone_set,
    .voice_clone = q3_voice_clone_abi,
    .voice_speaker = q3_voice_speaker,
    .voice_design = q3_voice_design,
    .voice_check = q3_voice_check,
    .synth_options = &q3_options_set,
    .option_defaults = q3_option_defaults,
    .options_check = q3_options_check,
    .session_init = q3_session_init,
    .session_pull = q3_session_pull,
    .session_free = q3_session_free,
    .session_used = q3_session_used,
    .session_outputs = q3_session_outputs,
    .session_output = q3_session_output,
    .entries = q3_entries,
    .n_entries = sizeof q3_entries / sizeof q3_entries[0],
    .run = q3_run,
};
