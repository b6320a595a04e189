/* The Qwen3-TTS-12Hz family: loading its parts, voices, and the dispatch of the C ABI to them. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../error.h"
#include "../strbuf.h"
#include "../tmod.h"
#include "codec.h"
#include "lm.h"
#include "model.h"
#include "tokenizer.h"
#include "voice_encoder.h"
#include "../vulkan/codec_gpu.h"
#include "../vulkan/q3_gpu.h"

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
        static char why[160];
        snprintf(why, sizeof why, "not enough video memory: the talker and predictor need %.1f MiB, %.1f MiB free",
                 (double)need / 1048576.0, (double)avail / 1048576.0);
        e->matrices_cpu = n_all;
        e->cpu_reason = why;
        if (e->gpu_strict)
            return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "device vulkan:%d,strict: %s", e->gpu_index, why);
        return VOX_OK;
    }
    vox_status st = vx_q3_gpu_load(e->gpu, m->lm, &m->gpu);
    if (st == VOX_OK) st = vx_gpu_prepare(e->gpu);   /* pipelines built at load, not in the first frame */
    if (st != VOX_OK) return st;
    e->cpu_reason = "embeddings, text projection, codec decoder (codec=cpu) and voice encoders run on the CPU";
    if (!e->codec_cpu && m->codec) {
        static char why[320];
        int64_t n_codec = 0;
        uint64_t cneed = vx_codec_gpu_bytes(m->codec, &n_codec);
        vx_codec_gpu *cg = NULL;
        if (need + cneed > avail) {
            snprintf(why, sizeof why, "embeddings, text projection, codec decoder and voice encoders run on the CPU; "
                     "the codec decoder for lack of video memory: it needs %.1f MiB more, %.1f MiB free",
                     (double)cneed / 1048576.0, (double)(avail - need) / 1048576.0);
            e->cpu_reason = why;
            if (e->gpu_strict)
                return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "device vulkan:%d,strict: not enough video memory for the "
                                     "codec decoder: it needs %.1f MiB beside the talker's %.1f MiB, %.1f MiB free "
                                     "(codec=cpu keeps it on the CPU)", e->gpu_index, (double)cneed / 1048576.0,
                                     (double)need / 1048576.0, (double)avail / 1048576.0);
        } else if ((st = vx_codec_gpu_load(e->gpu, m->codec, &cg)) != VOX_OK) {
            if (st != VOX_ERR_UNSUPPORTED && st != VOX_ERR_OUT_OF_MEMORY) return st;
            snprintf(why, sizeof why, "embeddings, text projection, codec decoder and voice encoders run on the CPU; "
                     "the codec decoder because %s", vox_last_error());
            e->cpu_reason = why;
        } else {
            m->codec->gpu = cg;
            n_gpu += n_codec;
            need += cneed;
            e->cpu_reason = "embeddings, text projection and voice encoders run on the CPU; the codec decoder on the GPU";
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
                      "\"stream\":{\"text_in\":\"token\",\"audio_out\":\"chunk\"}}",
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
    vx_buf_printf(&b, "},\"threads\":%d,\"cpu\":", vx_pool_size(e->pool));   /* the engine adds "device" */
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
        (st = q3_codec_load(m, &m->codec)) != VOX_OK || (st = q3_venc_load(m, &m->venc)) != VOX_OK ||
        (m->codec && (st = q3_prime_cache_create(Q3_PRIME_CACHE_VOICES, &m->primes)) != VOX_OK)) {
        q3_free(m);
        return st;
    }
    if (e->gpu && (st = place_on_gpu(e, m)) != VOX_OK) {
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
    if (st != VOX_OK) return st;
    v->speaker = vx_strdup(spk->key);
    v->instruct = vx_strdup(instruct ? instruct : "");
    v->name = vx_strdup(spk->key);
    v->language = vx_strdup("auto");
    if (!v->speaker || !v->instruct || !v->name || !v->language)
        return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    return VOX_OK;
}

static vox_status q3_voice_design(vox_engine *e, const char *description, vox_voice *v) {
    q3_model *m = e->impl;
    if (strcmp(m->variant, "voice_design") != 0)
        return vox_set_error(VOX_ERR_UNSUPPORTED, "%s is a %s model: voices from a description need a VoiceDesign model",
                             vox_model_path(m->file), m->variant);
    vox_status st = fill_common(m, v, "design");
    if (st != VOX_OK) return st;
    v->instruct = vx_strdup(description ? description : "");
    v->name = vx_strdup("designed");
    v->language = vx_strdup("auto");
    if (!v->instruct || !v->name || !v->language) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
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
        if (v->speaker && v->speaker[0] && !find_ci(vox_json_get(m->manifest, "speakers"), v->speaker))
            return vox_set_error(VOX_ERR_NOT_FOUND, "the voice's speaker \"%s\" is not in %s", v->speaker,
                                 vox_model_path(m->file));
        if (v->language && strcasecmp(v->language, "auto") != 0 &&
            !find_ci(vox_json_get(m->manifest, "languages"), v->language))
            return vox_set_error(VOX_ERR_NOT_FOUND, "the voice's language \"%s\" is not in %s", v->language,
                                 vox_model_path(m->file));
        if (v->n_embedding && m->venc && (int32_t)v->n_embedding != q3_venc_embedding_dim(m->venc))
            return vox_set_error(VOX_ERR_FORMAT, "the voice's speaker embedding has %zu values, the model wants %d",
                                 v->n_embedding, q3_venc_embedding_dim(m->venc));
        if (v->n_ref_frames && m->codec && (int32_t)v->n_groups != q3_codec_groups(m->codec))
            return vox_set_error(VOX_ERR_FORMAT, "the voice's reference codes have %zu groups, the model %d",
                                 v->n_groups, q3_codec_groups(m->codec));
        return VOX_OK;
    }
    return vox_set_error(VOX_ERR_FORMAT, "unknown voice mode \"%s\"", v->mode);
}

/* Warm the stream decoder up on a new ICL voice now (cached in the engine), so that its sessions
 * start decoding at once: the warm-up is what the first audio chunk would otherwise wait for. Uses the
 * voice's default decoder_context; a failure here only means the first session primes itself. */
static void prime_voice(vox_engine *e, const vox_voice *v) {
    q3_model *m = e->impl;
    if (!m->codec || !m->primes || !v->ref_codes || v->n_ref_frames == 0 ||
        (int32_t)v->n_groups != q3_codec_groups(m->codec))
        return;
    vox_synth_params p = vox_synth_default_params(e, v);
    if (p.decoder != VOX_DECODER_STREAM) return;
    int64_t ctx = p.decoder_context, n_ref = (int64_t)v->n_ref_frames;
    if (ctx < 0 || ctx > n_ref) ctx = n_ref;
    if (ctx == 0) return;
    q3_stream *s = NULL;
    uint32_t fp = vx_fp_fast();
    if (q3_stream_create(m->codec, &s) != VOX_OK ||
        q3_stream_prime_cached(m->primes, s, e->pool, v->ref_codes + (n_ref - ctx) * (int64_t)v->n_groups, ctx) != VOX_OK)
        vox_clear_error();
    vx_fp_restore(fp);
    q3_stream_free(s);
}

static vox_status q3_voice_clone_abi(vox_engine *e, const float *mono, size_t n, int32_t sample_rate,
                                     const vox_clone_params *p, vox_voice *v) {
    q3_model *m = e->impl;
    if (strcmp(m->variant, "base") != 0)
        return vox_set_error(VOX_ERR_UNSUPPORTED, "%s is a %s model: cloning a voice needs a Base model",
                             vox_model_path(m->file), m->variant);
    vox_status st = fill_common(m, v, p->x_vector_only ? "xvector" : "icl");
    if (st != VOX_OK) return st;
    st = q3_voice_clone(e, mono, n, sample_rate, p, v);
    /* the encoders' weights (~260 MB for 0.6B/1.7B Base) are not needed to speak: let them go from
     * the resident set until the next voice is made */
    static const char *const encoders[] = {"speaker_encoder.", "speech_tokenizer.encoder."};
    q3_release_tensors(m, encoders, 2);
    if (st != VOX_OK) return st;
    prime_voice(e, v);
    return VOX_OK;
}

const vx_family vx_family_qwen3 = {
    .name = "qwen3_tts",
    .load = q3_load,
    .unload = q3_unload,
    .tokenize = q3_tokenize_abi,
    .voice_clone = q3_voice_clone_abi,
    .voice_speaker = q3_voice_speaker,
    .voice_design = q3_voice_design,
    .voice_check = q3_voice_check,
    .default_params = q3_default_params,
    .session_init = q3_session_init,
    .session_pull = q3_session_pull,
    .session_free = q3_session_free,
    .session_codes = q3_session_codes,
    .session_prompt = q3_session_prompt,
    .session_teacher_force = q3_session_teacher_force,
    .decode = q3_decode,
};
