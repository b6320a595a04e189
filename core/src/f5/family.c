/* The F5-TTS family: loading, options, voices (a reference recording's mel, text and loudness), sessions
 * (text -> pieces -> audio chunks, as infer_process) and the verification entries. */
#include <math.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../error.h"
#include "../family.h"
#include "../strbuf.h"
#include "../tmod.h"
#include "../unicode/unicode.h"
#include "f5.h"
#include "gpu.h"

/* ------------------------------------------------------------------------------ options */
typedef struct f5_options {
    int32_t nfe_step;
    float cfg_strength, sway_sampling_coef, speed, cross_fade_duration, target_rms;
    int32_t use_epss;
    int32_t max_chars;
    float fix_duration;
} f5_options;

static const vx_option f5_option_table[] = {
    {"nfe_step", VX_OPT_INT, offsetof(f5_options, nfe_step), 1, 256, 0, 0, NULL,
     "flow-matching (Euler) steps; with use_epss, 5/6/7/10/12/16 steps take the EPSS time grid"},
    {"cfg_strength", VX_OPT_FLOAT, offsetof(f5_options, cfg_strength), 0, 20, 0, 0, NULL,
     "classifier-free guidance: v_cond + (v_cond - v_uncond) * cfg_strength (0: the conditional branch alone)"},
    {"sway_sampling_coef", VX_OPT_FLOAT, offsetof(f5_options, sway_sampling_coef), -1, 1, 0, 0, NULL,
     "sway sampling of the time grid, t + s (cos(pi t / 2) - 1 + t); negative: denser near t = 0; 0: none"},
    {"speed", VX_OPT_FLOAT, offsetof(f5_options, speed), 0.1, 10, 0, 0, NULL,
     "speaking rate: the piece durations are divided by it (pieces under 10 bytes use 0.3, as the official code)"},
    {"cross_fade_duration", VX_OPT_FLOAT, offsetof(f5_options, cross_fade_duration), 0, 2, 0, 0, NULL,
     "seconds of linear cross-fade between consecutive pieces (0: concatenated)"},
    {"target_rms", VX_OPT_FLOAT, offsetof(f5_options, target_rms), 0, 1, 1, 0, NULL,
     "a quieter reference is scaled up to this rms, and the output scaled back by the same factor"},
    {"use_epss", VX_OPT_BOOL, offsetof(f5_options, use_epss), 0, 0, 0, 0, NULL,
     "empirically pruned step sampling: the EPSS time grid for 5, 6, 7, 10, 12 and 16 steps"},
    {"max_chars", VX_OPT_INT, offsetof(f5_options, max_chars), 0, 1000000, 0, 0, NULL,
     "UTF-8 bytes per text piece; 0: from the reference, as infer_process (its bytes per second times 22 s "
     "less its duration, times speed)"},
    {"fix_duration", VX_OPT_FLOAT, offsetof(f5_options, fix_duration), 0, 600, 0, 0, NULL,
     "total seconds (reference included) the utterance lasts, shared out over its pieces by their bytes; 0: "
     "from the text"},
};
static const vx_option_set f5_options_set = {f5_option_table, sizeof f5_option_table / sizeof f5_option_table[0],
                                             sizeof(f5_options)};

typedef struct f5_engine {
    f5_model *m;
} f5_engine;

static void f5_option_defaults(const vox_engine *e, void *o) {
    const f5_engine *k = e ? e->impl : NULL;
    f5_options d = {.nfe_step = 32, .cfg_strength = 2.0f, .sway_sampling_coef = -1.0f, .speed = 1.0f,
                    .cross_fade_duration = 0.15f, .target_rms = 0.1f, .use_epss = 1};
    if (k) {   /* the model's InferDefaults */
        const f5_config *c = &k->m->c;
        d.nfe_step = c->nfe_step, d.cfg_strength = c->cfg_strength, d.sway_sampling_coef = c->sway;
        d.speed = c->speed, d.cross_fade_duration = c->cross_fade, d.target_rms = c->target_rms, d.use_epss = c->use_epss;
        if (d.nfe_step > 256) d.nfe_step = 256;
    }
    *(f5_options *)o = d;
}

/* The double a user meant by a float option: the shortest decimal that gives the same float, read as a
 * double (the official code computes durations and cross-fades from Python floats, in double). */
static double user_double(float f) {
    char buf[32];
    for (int p = 6; p <= 9; p++) {
        snprintf(buf, sizeof buf, "%.*g", p, (double)f);
        if ((float)strtod(buf, NULL) == f) break;
    }
    return strtod(buf, NULL);
}

/* ------------------------------------------------------------------------------ engine */
static char *build_info(const vox_engine *e, const f5_model *m) {
    vx_buf b = {0};
    const f5_config *c = &m->c;
    const vx_cpu_info *cpu = vx_cpu();
    const vox_json *prec = vox_json_get(m->manifest, "precision");
    vx_buf_printf(&b, "{\"family\":\"f5_tts\",\"variant\":");
    vx_buf_json_string(&b, c->variant, (size_t)-1);
    vx_buf_printf(&b, ",\"size\":\"%lldx%lld\",\"model_id\":\"%s\",\"sample_rate\":%lld", (long long)c->depth,
                  (long long)c->dim, m->model_id, (long long)c->sample_rate);
    vx_buf_printf(&b, ",\"capabilities\":{\"clone\":true,\"speakers\":false,\"instruct\":false,\"design\":false,"
                      "\"speed\":true,\"needs_voice\":true,\"portable_voices\":true,"
                      "\"stream\":{\"text_in\":\"chunk\",\"unit\":\"sentence\",\"audio_out\":\"piece\",\"exact\":true}}");
    vx_buf_printf(&b, ",\"speakers\":[],\"languages\":[\"auto\"],\"precision\":{");
    int i = 0;
    for (const vox_json *p = prec ? prec->child : NULL; p; p = p->next) {
        if (p->type != VOX_JSON_STRING) continue;
        vx_buf_printf(&b, i++ ? "," : "");
        vx_buf_json_string(&b, p->key, p->key_len);
        vx_buf_printf(&b, ":");
        vx_buf_json_string(&b, p->str, p->str_len);
    }
    vx_buf_printf(&b, "},\"f5\":{\"dim\":%lld,\"depth\":%lld,\"heads\":%lld,\"dim_head\":%lld,\"text_mask_padding\":%s,"
                      "\"pe_attn_head\":%lld,\"vocos_padding\":\"%s\"}",
                  (long long)c->dim, (long long)c->depth, (long long)c->heads, (long long)c->dim_head,
                  c->text_mask_padding ? "true" : "false", (long long)c->pe_attn_head,
                  c->voc_same_padding ? "same" : "center");
    vx_buf_printf(&b, ",\"dit_math\":");
    vx_buf_json_string(&b, m->dit_math, (size_t)-1);
    vx_buf_printf(&b, ",\"conv_math\":\"%s\"", m->conv_bf16 ? "bf16 dot products (the input embedding's grouped convolutions)"
                                                              : "the stored weights' products");
    vx_buf_printf(&b, ",\"threads\":%d,\"cpu\":", vx_pool_size(e->pool));
    vx_buf_json_string(&b, cpu->name, (size_t)-1);
    vx_buf_printf(&b, "}");
    return vx_buf_take(&b);
}

static void f5_unload(vox_engine *e) {
    f5_engine *k = e->impl;
    if (!k) return;
    if (k->m) f5_gpu_free(k->m->gpu);   /* GPU hook (gpu.h) */
    f5_model_free(k->m);
    free(k);
    e->impl = NULL;
}

static vox_status f5_load(vox_engine *e) {
    f5_engine *k = calloc(1, sizeof *k);
    if (!k) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    vox_status st = f5_model_load(e->model, e->manifest, &k->m);
    if (st != VOX_OK) {
        free(k);
        return st;
    }
    e->impl = k;
    if (e->gpu && (st = f5_gpu_place(e, k->m)) != VOX_OK) {   /* GPU hook (gpu.h): what runs where */
        f5_unload(e);
        return st;
    }
    e->info = build_info(e, k->m);
    if (!e->info) {
        f5_unload(e);
        return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    }
    return VOX_OK;
}

static vox_status f5_tokenize_abi(vox_engine *e, const char *text, int32_t *ids, size_t capacity, size_t *n_ids) {
    f5_engine *k = e->impl;
    int32_t *all = NULL;
    int64_t n = 0;
    double t0 = vx_now_ms();
    vox_status st = f5_tokenize(k->m->front, text, strlen(text), &all, &n);
    vx_stats_stage(e, F5_ST_TEXT, vx_now_ms() - t0, 1);
    if (st != VOX_OK) return st;
    if (ids) memcpy(ids, all, ((size_t)n < capacity ? (size_t)n : capacity) * sizeof *ids);
    *n_ids = (size_t)n;
    free(all);
    return VOX_OK;
}

/* ------------------------------------------------------------------------------ voices */
/* How a voice's mel was made: a session whose model or target_rms gives another description rebuilds it
 * from the recording the voice holds. */
static void mel_spec(const f5_model *m, float target_rms, char *buf, size_t cap) {
    const f5_config *c = &m->c;
    snprintf(buf, cap, "vocos sr=%lld n_fft=%lld hop=%lld win=%lld n_mels=%lld target_rms=%.9g", (long long)c->sample_rate,
             (long long)c->n_fft, (long long)c->hop, (long long)c->win, (long long)c->n_mels, (double)target_rms);
}

static vox_status put_reference(vox_voice *v, const f5_reference *r, int64_t n_mels) {
    int64_t sm[2] = {r->frames, n_mels}, s1[1] = {1}, s2[1] = {2};
    float *mel = malloc((size_t)(r->frames * n_mels) * sizeof *mel), *rms = malloc(sizeof *rms);
    int32_t *len = malloc(2 * sizeof *len);
    if (!mel || !rms || !len) {
        free(mel), free(rms), free(len);
        return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    }
    memcpy(mel, r->mel, (size_t)(r->frames * n_mels) * sizeof *mel);
    *rms = r->rms;
    len[0] = (int32_t)r->ref_samples, len[1] = r->ref_rate;
    vox_status st = vx_voice_put_array(v, "ref_mel", VOX_DTYPE_F32, 2, sm, mel);
    if (st == VOX_OK) st = vx_voice_put_array(v, "ref_rms", VOX_DTYPE_F32, 1, s1, rms);
    else free(rms);
    if (st == VOX_OK) st = vx_voice_put_array(v, "ref_length", VOX_DTYPE_I32, 1, s2, len);
    else free(len);
    return st;
}

static vox_status f5_voice_clone(vox_engine *e, const float *mono, size_t n, int32_t sample_rate,
                                 const vox_clone_params *p, const void *clone_opts, vox_voice *v) {
    (void)clone_opts;
    f5_engine *k = e->impl;
    const f5_model *m = k->m;
    if (!p->ref_text || !*p->ref_text)
        return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "an F5-TTS voice needs the transcript of its recording (ref_text): "
                             "the model conditions on the recording and its text together");
    size_t tl = strlen(p->ref_text), ws = 0;
    for (size_t i = 0; i < tl; i++) ws += p->ref_text[i] == ' ' || (p->ref_text[i] >= '\t' && p->ref_text[i] <= '\r');
    if (ws == tl) return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "the reference text is blank: give the transcript");
    if (vx_utf8_valid_prefix(p->ref_text, tl) != tl)
        return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "the reference text is not valid UTF-8");
    double t0 = vx_now_ms();
    f5_reference r;
    vox_status st = f5_reference_from_recording(m, e->pool, mono, (int64_t)n, sample_rate, m->c.target_rms, &r);
    vx_stats_stage(e, F5_ST_REFERENCE, vx_now_ms() - t0, 1);
    if (st != VOX_OK) return st;
    char *text = f5_fix_ref_text(p->ref_text), spec[160];
    mel_spec(m, m->c.target_rms, spec, sizeof spec);
    v->family = vx_strdup("f5_tts");
    v->mode = vx_strdup("reference");
    v->model_id = vx_strdup(m->model_id);
    v->variant = vx_strdup(m->c.variant);
    if (!text || !v->family || !v->mode || !v->model_id || !v->variant) st = vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    if (st == VOX_OK) st = vx_voice_put_text(v, "ref_text", text);
    if (st == VOX_OK) st = vx_voice_put_text(v, "mel_spec", spec);
    if (st == VOX_OK) st = put_reference(v, &r, m->c.n_mels);
    free(text);
    f5_reference_free(&r);
    return st;
}

static vox_status f5_voice_check(vox_engine *e, const vox_voice *v) {
    const f5_engine *k = e->impl;
    const vx_voice_array *mel = vx_voice_get_array(v, "ref_mel"), *rms = vx_voice_get_array(v, "ref_rms"),
                         *len = vx_voice_get_array(v, "ref_length");
    const int rebuildable = vx_voice_get_array(v, "source_wav") != NULL;
    if (!mel || !rms || !len) return vox_set_error(VOX_ERR_FORMAT, "an F5-TTS voice needs ref_mel, ref_rms and ref_length");
    if (mel->shape[1] != k->m->c.n_mels && !rebuildable)
        return vox_set_error(VOX_ERR_FORMAT, "the voice's mel has %lld bands, this model %lld, and the voice holds no "
                             "recording to make it again from", (long long)mel->shape[1], (long long)k->m->c.n_mels);
    const float r = *(const float *)rms->data;
    const int32_t *l = len->data;
    /* a recording cloning accepts has an rms above ~2e-4 (its first 10 ms are above -42 dBFS, and it
     * is at most 12 s long): a smaller one would scale the output down to silence */
    if (!(r >= 1e-4f && r <= 1.0f) || l[0] < 1 || l[1] < 1000)
        return vox_set_error(VOX_ERR_FORMAT, "the voice's loudness (%g) or reference length (%d samples at %d Hz) is "
                             "impossible", (double)r, l[0], l[1]);
    if (mel->shape[0] < 2) return vox_set_error(VOX_ERR_FORMAT, "the voice's mel has %lld frames", (long long)mel->shape[0]);
    for (size_t i = 0; i < mel->count; i++)
        if (fabsf(((const float *)mel->data)[i]) > 100.0f)
            return vox_set_error(VOX_ERR_FORMAT, "the voice's mel holds %g: log-mel values are a few tens at most",
                                 (double)((const float *)mel->data)[i]);
    return VOX_OK;
}

static const vx_voice_array_spec f5_voice_arrays[] = {
    {"ref_mel", VOX_DTYPE_F32, 2, {0, 0}},
    {"ref_rms", VOX_DTYPE_F32, 1, {1, 0}},
    {"ref_length", VOX_DTYPE_I32, 1, {2, 0}},
    {"source_wav", VOX_DTYPE_F32, 1, {0, 0}},
};
static const char *const f5_voice_texts[] = {"ref_text", "mel_spec", NULL};
static const vx_voice_mode f5_voice_modes[] = {
    {"reference", NULL, {"ref_mel", "ref_rms", "ref_length"}, {"source_wav"}, "ref_text"},
};
static const vx_voice_schema f5_voices = {f5_voice_arrays, 4, f5_voice_texts, f5_voice_modes, 1, 1};

/* ------------------------------------------------------------------------------ sessions */
typedef struct f5_sess {
    f5_engine *k;
    f5_reference ref;          /* the voice's, or rebuilt from its recording (owned either way) */
    char *ref_text;            /* the voice's text with infer_batch_process's trailing space */
    size_t ref_bytes;          /* of the voice's text (max_chars reads it without the space) */
    int64_t max_chars;
    double speed, fix, xfade;
    size_t pos;                /* bytes of the session text turned into pieces */
    uint32_t piece;            /* pieces synthesized */
    /* fix_duration: the pieces of a complete region, decided at once (their durations share it) */
    char **fpieces;
    double *fdur;
    size_t n_fpieces, next_fpiece, fregion_end;
    /* the cross-fade: the last samples of the audio so far stay here (double, as the official joining
     * computes) until the next piece fades in or the utterance ends */
    double *tail;
    int64_t tail_n, nx;
    int any_audio, done;
    float *out;
    /* what the session made (vox_session_output "pieces", "mel") */
    vx_buf pieces_json;
    float *mel;                /* [mel_frames][n_mels]: every piece's generated mel */
    int64_t mel_frames;
    double stage_ms[F5_STAGES];
    f5_dit_prof dit_prof;      /* VOX_PROFILE: where the DiT's time goes */
    int profile;
    uint64_t steps, frames, samples;
} f5_sess;

static void free_fpieces(f5_sess *q) {
    for (size_t i = 0; i < q->n_fpieces; i++) free(q->fpieces[i]);
    free(q->fpieces), free(q->fdur);
    q->fpieces = NULL, q->fdur = NULL;
    q->n_fpieces = q->next_fpiece = 0;
}

static void f5_session_free(vox_session *s) {
    f5_sess *q = s->impl;
    if (!q) return;
    const char *prof = getenv("VOX_PROFILE");
    if (prof && prof[0] && strcmp(prof, "0") != 0 && q->piece) {
        double total = 0.0, audio_ms = (double)q->samples * 1000.0 / (double)q->k->m->c.sample_rate;
        fprintf(stderr, "vox profile: %u pieces, %llu frames, %llu steps;", q->piece, (unsigned long long)q->frames,
                (unsigned long long)q->steps);
        for (int i = 0; i < F5_STAGES; i++) {
            fprintf(stderr, " %s %.1f ms", f5_stage_names[i], q->stage_ms[i]);
            total += q->stage_ms[i];
        }
        fprintf(stderr, "; %.3f s per step; total %.1f ms for %.1f ms of audio (RTF %.3f)\n",
                q->steps ? q->stage_ms[F5_ST_DIT] / 1000.0 / (double)q->steps : 0.0, total, audio_ms,
                audio_ms > 0 ? total / audio_ms : 0.0);
        fprintf(stderr, "vox profile: DiT per step:");
        for (int i = 0; i < F5_DIT_PARTS; i++)
            fprintf(stderr, " %s %.1f ms", f5_dit_part_names[i], q->steps ? q->dit_prof.ms[i] / (double)q->steps : 0.0);
        fprintf(stderr, "\n");
    }
    f5_reference_free(&q->ref);
    free(q->ref_text);
    free_fpieces(q);
    free(q->tail), free(q->out), free(q->mel);
    vx_buf_free(&q->pieces_json);
    free(q);
    s->impl = NULL;
}

/* The voice's reference, or the same made again from its recording when it was made for another mel or
 * another target_rms. */
static vox_status session_reference(vox_session *s, f5_sess *q, const f5_options *o) {
    const f5_model *m = q->k->m;
    const vox_voice *v = s->voice;
    char want[160];
    mel_spec(m, o->target_rms, want, sizeof want);
    const char *have = vx_voice_text(v, "mel_spec");
    const vx_voice_array *mel = vx_voice_get_array(v, "ref_mel");
    if (have && !strcmp(have, want) && mel->shape[1] == m->c.n_mels) {
        const vx_voice_array *rms = vx_voice_get_array(v, "ref_rms"), *len = vx_voice_get_array(v, "ref_length");
        q->ref.frames = mel->shape[0];
        q->ref.mel = malloc(mel->count * sizeof *q->ref.mel);
        if (!q->ref.mel) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
        memcpy(q->ref.mel, mel->data, mel->count * sizeof *q->ref.mel);
        q->ref.rms = *(const float *)rms->data;
        q->ref.scaled = q->ref.rms < o->target_rms;
        q->ref.ref_samples = ((const int32_t *)len->data)[0];
        q->ref.ref_rate = ((const int32_t *)len->data)[1];
        return VOX_OK;
    }
    const vx_voice_array *wav = vx_voice_get_array(v, "source_wav");
    if (!wav)
        return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "the voice's mel was made as \"%s\", this session needs \"%s\", and "
                             "the voice holds no recording to make it again from", have ? have : "(unknown)", want);
    double t0 = vx_now_ms();
    vox_status st = f5_reference_from_recording(m, s->engine->pool, wav->data, (int64_t)wav->count, v->source_rate,
                                                o->target_rms, &q->ref);
    q->stage_ms[F5_ST_REFERENCE] += vx_now_ms() - t0;
    vx_stats_stage(s->engine, F5_ST_REFERENCE, vx_now_ms() - t0, 1);
    return st;
}

static vox_status f5_session_init(vox_session *s) {
    const f5_options *o = s->opts;
    f5_sess *q = calloc(1, sizeof *q);
    if (!q) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    q->k = s->engine->impl;
    s->impl = q;
    const char *prof = getenv("VOX_PROFILE");
    q->profile = prof && prof[0] && strcmp(prof, "0") != 0;
    const f5_model *m = q->k->m;
    vox_status st = session_reference(s, q, o);
    if (st != VOX_OK) {
        f5_session_free(s);
        return st;
    }
    const char *rt = vx_voice_text(s->voice, "ref_text");
    size_t n = strlen(rt);
    q->ref_bytes = n;
    /* infer_batch_process: a reference text whose last character is one byte gets a trailing space */
    size_t last = n;
    while (last > 0 && ((unsigned char)rt[last - 1] & 0xC0) == 0x80) last--;
    int space = n && n - last + 1 == 1;
    q->ref_text = malloc(n + 2);
    if (!q->ref_text) {
        f5_session_free(s);
        return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    }
    memcpy(q->ref_text, rt, n);
    strcpy(q->ref_text + n, space ? " " : "");
    q->speed = user_double(o->speed);
    q->fix = o->fix_duration > 0 ? user_double(o->fix_duration) : 0.0;
    q->xfade = user_double(o->cross_fade_duration);
    q->max_chars = o->max_chars > 0 ? o->max_chars : f5_max_chars(n, q->ref.ref_samples, q->ref.ref_rate, q->speed);
    q->nx = q->xfade > 0 ? (int64_t)(q->xfade * (double)m->c.sample_rate) : 0;
    q->tail = malloc((size_t)(q->nx > 0 ? q->nx : 1) * sizeof *q->tail);
    if (!q->tail) {
        f5_session_free(s);
        return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    }
    vx_buf_printf(&q->pieces_json, "[");
    return VOX_OK;
}

static size_t f5_session_used(const vox_session *s) {
    const f5_sess *q = s->impl;
    return q ? q->pos : s->text_len;
}

/* GPU hooks (gpu.h): the sampler and Vocos where the engine placed them. */
static vox_status sample_any(const f5_model *m, vx_pool *pool, const float *cond, int64_t nc, const int32_t *ids, int64_t nt,
                             int64_t dur, const f5_sample_opts *so, float **mel, int64_t *total) {
    return f5_gpu_dit_on(m) ? f5_gpu_sample(m, pool, cond, nc, ids, nt, dur, so, mel, total)
                            : f5_sample(m, pool, cond, nc, ids, nt, dur, so, mel, total);
}

static vox_status vocos_any(const f5_model *m, vx_pool *pool, const float *mel, int64_t frames, float **audio, int64_t *n,
                            f5_tap_fn tap, void *tap_ctx) {
    return f5_gpu_vocos_on(m) ? f5_gpu_vocos_decode(m, mel, frames, audio, n, tap, tap_ctx)
                              : f5_vocos_decode(m, pool, mel, frames, audio, n, tap, tap_ctx);
}

/* One piece through the model: its audio into *wave (malloc'd). */
static vox_status synth_piece(vox_session *s, f5_sess *q, const char *piece, double fix, float **wave, int64_t *n_wave) {
    const f5_options *o = s->opts;
    const f5_model *m = q->k->m;
    const f5_config *c = &m->c;
    vx_pool *pool = s->engine->pool;
    *wave = NULL;
    *n_wave = 0;
    size_t pl = strlen(piece), rl = strlen(q->ref_text);
    char *full = malloc(rl + pl + 1);
    if (!full) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    memcpy(full, q->ref_text, rl);
    memcpy(full + rl, piece, pl + 1);
    int32_t *ids = NULL;
    int64_t nt = 0;
    double t0 = vx_now_ms();
    vox_status st = f5_tokenize(m->front, full, rl + pl, &ids, &nt);
    free(full);
    double t1 = vx_now_ms();
    q->stage_ms[F5_ST_TEXT] += t1 - t0;
    vx_stats_stage(s->engine, F5_ST_TEXT, t1 - t0, 1);
    if (st != VOX_OK) return st;
    const int64_t R = q->ref.frames - 1;   /* the reference's samples // hop */
    int64_t dur = f5_piece_duration(R, strlen(q->ref_text), pl, q->speed, fix, c->hop, c->sample_rate);
    double dit_ms = 0.0;
    f5_sample_opts so = {.steps = o->nfe_step, .use_epss = o->use_epss, .cfg_strength = o->cfg_strength,
                         .sway = o->sway_sampling_coef, .seed = s->seed, .piece = q->piece, .cancel = &s->cancelled,
                         .dit_ms = &dit_ms, .prof = q->profile ? &q->dit_prof : NULL};
    float *mel = NULL;
    int64_t total = 0;
    uint32_t fp = vx_fp_fast();
    float *gwave = NULL;   /* GPU hook: the DiT, the ODE loop and Vocos in one go, only the PCM read back */
    int64_t gn = 0;
    const int whole_gpu = f5_gpu_dit_on(m) && f5_gpu_vocos_on(m);
    if (whole_gpu) st = f5_gpu_piece(m, pool, q->ref.mel, q->ref.frames, ids, nt, dur, &so, R, &mel, &total, &gwave, &gn);
    else st = sample_any(m, pool, q->ref.mel, q->ref.frames, ids, nt, dur, &so, &mel, &total);
    free(ids);
    double t2 = vx_now_ms();
    q->stage_ms[F5_ST_DIT] += t2 - t1;
    vx_stats_stage(s->engine, F5_ST_DIT, t2 - t1, (uint64_t)o->nfe_step);
    if (st == VOX_OK) {
        q->steps += (uint64_t)o->nfe_step;
        const int64_t gen = total - R > 0 ? total - R : 0;
        float *g = mel + R * c->n_mels;
        float *all = realloc(q->mel, (size_t)((q->mel_frames + gen) * c->n_mels + 1) * sizeof *all);
        if (all) {
            memcpy(all + q->mel_frames * c->n_mels, g, (size_t)(gen * c->n_mels) * sizeof *all);
            q->mel = all;
            q->mel_frames += gen;
        }
        vx_buf_printf(&q->pieces_json, "%s{\"text\":", q->piece ? "," : "");
        vx_buf_json_string(&q->pieces_json, piece, pl);
        vx_buf_printf(&q->pieces_json, ",\"duration\":%lld,\"frames\":%lld,\"tokens\":%lld}", (long long)dur,
                      (long long)total, (long long)nt);
        if (gen < 1) st = vox_set_error(VOX_ERR_INVALID_ARGUMENT, "piece %u gets no frames of its own (fix_duration "
                                        "shorter than the reference?)", q->piece);
        if (st == VOX_OK && whole_gpu) *wave = gwave, *n_wave = gn, gwave = NULL;
        else if (st == VOX_OK) st = vocos_any(m, pool, g, gen, wave, n_wave, NULL, NULL);
        q->frames += (uint64_t)gen;
    }
    vx_fp_restore(fp);
    free(mel), free(gwave);
    double t3 = vx_now_ms();
    q->stage_ms[F5_ST_VOCOS] += t3 - t2;
    vx_stats_stage(s->engine, F5_ST_VOCOS, t3 - t2, 1);
    if (st == VOX_OK && q->ref.scaled)
        for (int64_t i = 0; i < *n_wave; i++) (*wave)[i] = ((*wave)[i] * q->ref.rms) / o->target_rms;
    for (int64_t i = 0; st == VOX_OK && i < *n_wave; i++)
        if (!isfinite((*wave)[i]))
            st = vox_set_error(VOX_ERR_FORMAT, "the model produced non-finite audio (sample %lld of piece %u): its weights "
                               "are corrupt (vox inspect --check MODEL)", (long long)i, q->piece);
    if (st != VOX_OK) {
        free(*wave);
        *wave = NULL;
        *n_wave = 0;
    }
    q->piece++;
    return st;
}

/* Join a piece's audio to what came before (infer_batch_process's cross-fade) and hand out all but the
 * tail the next fade may still change. Returns the samples released into q->out. */
static vox_status join_piece(f5_sess *q, const float *w, int64_t n, int final, int64_t *released) {
    /* the new stream: tail (kept) + w, faded over the overlap */
    const int64_t nx = q->nx;
    int64_t ov = 0;
    if (q->any_audio && nx > 0) {
        ov = nx < q->tail_n ? nx : q->tail_n;   /* len(final) >= tail_n: the tail is its last samples */
        if (ov > n) ov = n;
    }
    const int64_t total = q->tail_n + n - ov;
    double *buf = malloc((size_t)(total ? total : 1) * sizeof *buf);
    if (!buf) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    memcpy(buf, q->tail, (size_t)(q->tail_n - ov) * sizeof *buf);
    for (int64_t i = 0; i < ov; i++) {   /* np.linspace(1, 0, ov) and (0, 1, ov) */
        double a = ov > 1 ? (i == ov - 1 ? 0.0 : (double)i * (-1.0 / (double)(ov - 1)) + 1.0) : 1.0;
        double b = ov > 1 ? (i == ov - 1 ? 1.0 : (double)i * (1.0 / (double)(ov - 1)) + 0.0) : 0.0;
        buf[q->tail_n - ov + i] = q->tail[q->tail_n - ov + i] * a + (double)w[i] * b;
    }
    for (int64_t i = ov; i < n; i++) buf[q->tail_n - ov + (i - ov) + ov] = w[i];
    const int64_t keep = final ? 0 : (nx < total ? nx : total);
    const int64_t out_n = total - keep;
    free(q->out);
    q->out = malloc((size_t)(out_n ? out_n : 1) * sizeof *q->out);
    if (!q->out) {
        free(buf);
        return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    }
    for (int64_t i = 0; i < out_n; i++) q->out[i] = (float)buf[i];
    memcpy(q->tail, buf + out_n, (size_t)keep * sizeof *buf);
    q->tail_n = keep;
    q->any_audio = 1;
    free(buf);
    *released = out_n;
    return VOX_OK;
}

static vox_status emit(f5_sess *q, vox_chunk *out, int64_t n, int last) {
    out->kind = VOX_CHUNK_AUDIO;
    out->samples = q->out;
    out->n_samples = (size_t)n;
    out->first_frame = q->piece ? q->piece - 1 : 0;
    out->n_frames = 1;
    out->is_last = last;
    q->samples += (uint64_t)n;
    if (last) q->done = 1;
    return VOX_OK;
}

static vox_status f5_session_pull(vox_session *s, vox_chunk *out) {
    f5_sess *q = s->impl;
    const f5_config *c = &q->k->m->c;
    out->sample_rate = (int32_t)c->sample_rate;
    if (q->done) {
        out->kind = VOX_CHUNK_END;
        return VOX_OK;
    }
    for (;;) {
        /* the text this pull may read: up to a flush mark (then complete), or all of it */
        int complete = s->ended;
        size_t end = s->text_len;
        if (!s->ended && s->flush_mark > q->pos) end = s->flush_mark, complete = 1;
        char *piece = NULL;
        double fix = 0.0;
        size_t used = 0;
        int r;
        if (q->fix > 0) {   /* the pieces of the whole region at once: fix_duration is shared among them */
            if (!complete) {
                out->kind = VOX_CHUNK_NEED_TEXT;
                return VOX_OK;
            }
            int none = 0;
            if (!q->fpieces && q->pos < end) {
                size_t n = 0;
                vox_status st = f5_chunk_text(s->text + q->pos, end - q->pos, q->max_chars, &q->fpieces, &n);
                if (st != VOX_OK) return st;
                q->n_fpieces = n;
                q->fdur = malloc((n ? n : 1) * sizeof *q->fdur);
                size_t *bytes = malloc((n ? n : 1) * sizeof *bytes);
                if (!q->fdur || !bytes) {
                    free(bytes);
                    return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
                }
                for (size_t i = 0; i < n; i++) bytes[i] = strlen(q->fpieces[i]);
                f5_fix_durations(q->fix, bytes, n, q->ref.frames - 1, c->hop, c->sample_rate, q->xfade, q->fdur);
                free(bytes);
                q->fregion_end = end;
                none = n == 0;
            }
            if (!none && q->fpieces && q->next_fpiece < q->n_fpieces) {
                piece = q->fpieces[q->next_fpiece];
                q->fpieces[q->next_fpiece] = NULL;
                fix = q->fdur[q->next_fpiece++];
                r = 1;
                used = q->next_fpiece == q->n_fpieces ? q->fregion_end - q->pos : 0;
            } else {
                r = 0;
                used = end - q->pos;
                free_fpieces(q);
            }
        } else {
            r = f5_next_piece(s->text + q->pos, end - q->pos, complete, q->max_chars, &piece, &used);
            if (r < 0) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
        }
        if (r == 0) {
            if (!complete) {
                out->kind = VOX_CHUNK_NEED_TEXT;
                return VOX_OK;
            }
            q->pos += used;
            if (!s->ended) continue;   /* a flushed region is done: read on */
            if (!q->any_audio) {
                q->done = 1;
                return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "nothing to speak: the text has no piece");
            }
            int64_t n = 0;   /* the utterance ends: the held tail goes out */
            vox_status st = join_piece(q, NULL, 0, 1, &n);
            if (st != VOX_OK) return st;
            return emit(q, out, n, 1);
        }
        q->pos += used;
        if (atomic_load(&s->cancelled)) {
            free(piece);
            return vox_set_error(VOX_ERR_CANCELLED, "cancelled");
        }
        float *w = NULL;
        int64_t nw = 0;
        vox_status st = synth_piece(s, q, piece, fix, &w, &nw);
        free(piece);
        if (st != VOX_OK) return st;
        /* last: the text is complete and holds no further piece */
        int last = 0;
        if (s->ended && q->pos >= s->text_len && !(q->fpieces && q->next_fpiece < q->n_fpieces)) last = 1;
        if (s->ended && !last && q->fix <= 0) {
            char *nxt = NULL;
            size_t u2 = 0;
            int r2 = f5_next_piece(s->text + q->pos, s->text_len - q->pos, 1, q->max_chars, &nxt, &u2);
            free(nxt);
            last = r2 == 0;
        }
        int64_t n = 0;
        st = join_piece(q, w, nw, last, &n);
        free(w);
        if (st != VOX_OK) return st;
        if (last) {
            q->pos = s->text_len;
            return emit(q, out, n, 1);
        }
        if (n > 0) return emit(q, out, n, 0);
    }
}

static vox_status f5_session_output(vox_session *s, const char *name, vox_array *out) {
    f5_sess *q = s->impl;
    if (!strcmp(name, "pieces")) {
        vx_buf_printf(&q->pieces_json, "]");
        out->name = "pieces";
        out->dtype = VOX_DTYPE_U8;
        out->ndim = 1;
        out->shape[0] = (int64_t)q->pieces_json.len;
        out->data = q->pieces_json.s ? q->pieces_json.s : "";
        q->pieces_json.len--;   /* the bracket is added again on the next call */
        return q->pieces_json.failed ? vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory") : VOX_OK;
    }
    out->name = "mel";
    out->dtype = VOX_DTYPE_F32;
    out->ndim = 2;
    out->shape[0] = q->mel_frames;
    out->shape[1] = q->k->m->c.n_mels;
    out->data = q->mel;
    return VOX_OK;
}

static const char *const f5_session_outputs[] = {"pieces", "mel", NULL};

/* ------------------------------------------------------------------------------ verification */
typedef struct tap_ctx {
    vox_trace *trace;
    vox_status failed;
} tap_ctx;

static void tap_keep(void *ctx, const char *name, const float *data, int64_t rows, int64_t cols) {
    tap_ctx *c = ctx;
    if (c->failed) return;
    int64_t shape[2] = {rows, cols};
    c->failed = vx_trace_put(c->trace, name, VOX_DTYPE_F32, 2, shape, data);
}

static vox_status put2(vox_trace *t, const char *name, const float *data, int64_t rows, int64_t cols) {
    int64_t shape[2] = {rows, cols};
    return vx_trace_put(t, name, VOX_DTYPE_F32, 2, shape, data);
}

static const vox_array *input(const vox_array *in, size_t n, const char *name, vox_dtype dt, int ndim, int required,
                              vox_status *st) {
    const vox_array *a = vx_run_input(in, n, name);
    if (!a) {
        if (required && *st == VOX_OK) *st = vox_set_error(VOX_ERR_INVALID_ARGUMENT, "the entry needs the input %s", name);
        return NULL;
    }
    if (a->dtype != dt || (ndim >= 0 && a->ndim != ndim && !(ndim == 1 && a->ndim == 0))) {
        if (*st == VOX_OK)
            *st = vox_set_error(VOX_ERR_INVALID_ARGUMENT, "input %s must be %s with %d dimension%s", name,
                                dt == VOX_DTYPE_F32 ? "F32" : dt == VOX_DTYPE_I32 ? "I32" : "U8", ndim, ndim == 1 ? "" : "s");
        return NULL;
    }
    return a;
}

static int64_t scalar_i(const vox_array *a, int64_t dflt) { return a && vx_array_count(a) ? ((const int32_t *)a->data)[0] : dflt; }
static float scalar_f(const vox_array *a, float dflt) { return a && vx_array_count(a) ? ((const float *)a->data)[0] : dflt; }

static vox_status run_text(f5_model *m, const vox_array *text, vox_trace *t) {
    const char *s = text->data;
    size_t len = (size_t)text->shape[0];
    if (vx_utf8_valid_prefix(s ? s : "", len) != len) return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "the text is not UTF-8");
    int32_t *ids = NULL;
    int64_t n = 0;
    char *sym = NULL, *seg = NULL;
    size_t sl = 0, gl = 0;
    vox_status st = f5_tokenize(m->front, s, len, &ids, &n);
    if (st == VOX_OK) st = f5_symbols(m->front, s, len, &sym, &sl);
    if (st == VOX_OK) st = f5_segment(m->front, s, len, &seg, &gl);
    int64_t sh[1] = {n}, ss[1] = {(int64_t)sl}, sg[1] = {(int64_t)gl};
    if (st == VOX_OK) st = vx_trace_put(t, "ids", VOX_DTYPE_I32, 1, sh, ids);
    if (st == VOX_OK) st = vx_trace_put(t, "symbols", VOX_DTYPE_U8, 1, ss, sym);
    if (st == VOX_OK) st = vx_trace_put(t, "segments", VOX_DTYPE_U8, 1, sg, seg);
    free(ids), free(sym), free(seg);
    return st;
}

static vox_status run_reference(f5_model *m, vx_pool *pool, const vox_array *audio, const vox_array *rate,
                                const vox_array *target, vox_trace *t) {
    const int64_t n = (int64_t)vx_array_count(audio);
    const int32_t sr = (int32_t)scalar_i(rate, 24000);
    const float *x = audio->data;
    int16_t *pcm = malloc((size_t)(n ? n : 1) * sizeof *pcm), *pre = NULL;
    if (!pcm) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    for (int64_t i = 0; i < n; i++) {
        double v = nearbyint((double)x[i] * 32768.0);
        pcm[i] = (int16_t)(v > 32767.0 ? 32767.0 : v < -32768.0 ? -32768.0 : v);
    }
    int64_t np = 0, speech = 0;
    int32_t prate = 0;
    vox_status st = f5_preprocess_pcm(pcm, n, sr, &pre, &np, &prate, &speech);
    free(pcm);
    if (st != VOX_OK) return st;
    float *a = malloc((size_t)(np ? np : 1) * sizeof *a);
    if (!a) {
        free(pre);
        return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    }
    for (int64_t i = 0; i < np; i++) a[i] = (float)pre[i] / 32768.0f;
    free(pre);
    int64_t s1[1] = {np}, s0[1] = {1};
    st = vx_trace_put(t, "preprocessed", VOX_DTYPE_F32, 1, s1, a);
    int32_t pr = prate;
    if (st == VOX_OK) st = vx_trace_put(t, "preprocessed_rate", VOX_DTYPE_I32, 1, s0, &pr);
    free(a);
    f5_reference r;
    /* the loudness, resampling and mel, as a clone computes them (from the recording as given) */
    if (st == VOX_OK) st = f5_reference_from_recording(m, pool, x, n, sr, scalar_f(target, m->c.target_rms), &r);
    if (st == VOX_OK) {
        st = put2(t, "ref_mel", r.mel, r.frames, m->c.n_mels);
        float rms = r.rms;
        if (st == VOX_OK) st = vx_trace_put(t, "ref_rms", VOX_DTYPE_F32, 1, s0, &rms);
        f5_reference_free(&r);
    }
    return st;
}

static vox_status f5_run(vox_engine *e, vox_session *s, const vx_entry *entry, const vox_array *in, size_t n_in,
                         vox_trace *t) {
    f5_engine *k = e->impl;
    f5_model *m = k->m;
    const f5_config *c = &m->c;
    vox_status st = VOX_OK;
    uint32_t fp = vx_fp_fast();
    tap_ctx tc = {t, VOX_OK};
    if (!strcmp(entry->name, "tokenize")) {
        const vox_array *text = input(in, n_in, "text", VOX_DTYPE_U8, 1, 1, &st);
        if (st == VOX_OK) st = run_text(m, text, t);
    } else if (!strcmp(entry->name, "mel")) {
        const vox_array *audio = input(in, n_in, "audio", VOX_DTYPE_F32, 1, 1, &st);
        float *mel = NULL;
        int64_t frames = 0;
        if (st == VOX_OK) st = f5_log_mel(m, e->pool, audio->data, (int64_t)vx_array_count(audio), &mel, &frames);
        if (st == VOX_OK) st = put2(t, "mel", mel, frames, c->n_mels);
        free(mel);
    } else if (!strcmp(entry->name, "reference")) {
        const vox_array *audio = input(in, n_in, "audio", VOX_DTYPE_F32, 1, 1, &st);
        const vox_array *rate = input(in, n_in, "sample_rate", VOX_DTYPE_I32, 1, 1, &st);
        const vox_array *target = input(in, n_in, "target_rms", VOX_DTYPE_F32, 1, 0, &st);
        if (st == VOX_OK && (scalar_i(rate, 0) < 1000 || scalar_i(rate, 0) > 768000))
            st = vox_set_error(VOX_ERR_INVALID_ARGUMENT, "reference: sample_rate %lld Hz", (long long)scalar_i(rate, 0));
        if (st == VOX_OK) st = run_reference(m, e->pool, audio, rate, target, t);
    } else if (!strcmp(entry->name, "text_encoder")) {
        const vox_array *ids = input(in, n_in, "ids", VOX_DTYPE_I32, 1, 1, &st);
        const vox_array *fr = input(in, n_in, "frames", VOX_DTYPE_I32, 1, 1, &st);
        int64_t n = scalar_i(fr, 0), nt = ids ? (int64_t)vx_array_count(ids) : 0;
        if (st == VOX_OK && (n < 1 || n > 65536)) st = vox_set_error(VOX_ERR_INVALID_ARGUMENT, "frames must be in [1, 65536]");
        float *te = st == VOX_OK ? malloc((size_t)(2 * n * c->text_dim) * sizeof *te) : NULL;
        if (st == VOX_OK && !te) st = vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
        if (st == VOX_OK) st = f5_text_encoder(m, e->pool, ids->data, nt, n, 0, te);
        if (st == VOX_OK) st = f5_text_encoder(m, e->pool, ids->data, nt, n, 1, te + n * c->text_dim);
        if (st == VOX_OK) st = put2(t, "text_cond", te, n, c->text_dim);
        if (st == VOX_OK) st = put2(t, "text_uncond", te + n * c->text_dim, n, c->text_dim);
        free(te);
    } else if (!strcmp(entry->name, "dit")) {
        const vox_array *x = input(in, n_in, "x", VOX_DTYPE_F32, 2, 1, &st), *cd = input(in, n_in, "cond", VOX_DTYPE_F32, 2, 1, &st);
        const vox_array *ids = input(in, n_in, "ids", VOX_DTYPE_I32, 1, 1, &st), *tt = input(in, n_in, "t", VOX_DTYPE_F32, 1, 1, &st);
        int64_t n = x ? x->shape[0] : 0;
        if (st == VOX_OK && (x->shape[1] != c->mel_dim || cd->shape[0] != n || cd->shape[1] != c->mel_dim || n < 1))
            st = vox_set_error(VOX_ERR_INVALID_ARGUMENT, "dit: x and cond must both be F32 [frames][%lld]", (long long)c->mel_dim);
        const size_t xs = (size_t)(n * c->mel_dim);
        float *xin = NULL, *cond = NULL, *te = NULL, *flow = NULL, *temb = NULL;
        if (st == VOX_OK) {
            xin = malloc(2 * xs * sizeof *xin), cond = calloc(2 * xs, sizeof *cond);
            te = malloc((size_t)(2 * n * c->text_dim) * sizeof *te), flow = malloc(2 * xs * sizeof *flow);
            temb = malloc((size_t)c->dim * sizeof *temb);
            if (!xin || !cond || !te || !flow || !temb) st = vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
        }
        if (st == VOX_OK) {
            memcpy(xin, x->data, xs * sizeof *xin), memcpy(xin + xs, x->data, xs * sizeof *xin);
            memcpy(cond, cd->data, xs * sizeof *cond);
            st = f5_text_encoder(m, e->pool, ids->data, (int64_t)vx_array_count(ids), n, 0, te);
        }
        if (st == VOX_OK) st = f5_text_encoder(m, e->pool, ids->data, (int64_t)vx_array_count(ids), n, 1, te + n * c->text_dim);
        if (st == VOX_OK && f5_gpu_dit_on(m)) {   /* GPU hook: the time embedding on the device too */
            st = f5_gpu_dit(m, n, xin, cond, te, scalar_f(tt, 0.0f), flow, tap_keep, &tc);
        } else {
            if (st == VOX_OK) st = f5_time_embedding(m, e->pool, scalar_f(tt, 0.0f), temb);
            if (st == VOX_OK) st = put2(t, "time_embedding", temb, 1, c->dim);
            if (st == VOX_OK) st = f5_dit(m, e->pool, 2, n, xin, cond, te, temb, NULL, flow, tap_keep, &tc, NULL);
        }
        if (st == VOX_OK) st = tc.failed;
        if (st == VOX_OK) st = put2(t, "flow_cond", flow, n, c->mel_dim);
        if (st == VOX_OK) st = put2(t, "flow_uncond", flow + xs, n, c->mel_dim);
        free(xin), free(cond), free(te), free(flow), free(temb);
    } else if (!strcmp(entry->name, "vocos")) {
        const vox_array *mel = input(in, n_in, "mel", VOX_DTYPE_F32, 2, 1, &st);
        if (st == VOX_OK && mel->shape[1] != c->n_mels)
            st = vox_set_error(VOX_ERR_INVALID_ARGUMENT, "vocos: mel must be F32 [frames][%lld]", (long long)c->n_mels);
        float *audio = NULL;
        int64_t n = 0;
        if (st == VOX_OK) st = vocos_any(m, e->pool, mel->data, mel->shape[0], &audio, &n, tap_keep, &tc);
        if (st == VOX_OK) st = tc.failed;
        int64_t sh[1] = {n};
        if (st == VOX_OK) st = vx_trace_put(t, "audio", VOX_DTYPE_F32, 1, sh, audio);
        free(audio);
    } else if (!strcmp(entry->name, "sample")) {
        const vox_array *cd = input(in, n_in, "cond", VOX_DTYPE_F32, 2, 1, &st), *ids = input(in, n_in, "ids", VOX_DTYPE_I32, 1, 1, &st);
        const vox_array *dur = input(in, n_in, "duration", VOX_DTYPE_I32, 1, 1, &st);
        const vox_array *steps = input(in, n_in, "nfe_step", VOX_DTYPE_I32, 1, 0, &st),
                        *cfg = input(in, n_in, "cfg_strength", VOX_DTYPE_F32, 1, 0, &st),
                        *sway = input(in, n_in, "sway_sampling_coef", VOX_DTYPE_F32, 1, 0, &st),
                        *epss = input(in, n_in, "use_epss", VOX_DTYPE_I32, 1, 0, &st),
                        *seed = input(in, n_in, "seed", VOX_DTYPE_I32, 1, 0, &st),
                        *piece = input(in, n_in, "piece", VOX_DTYPE_I32, 1, 0, &st);
        if (st == VOX_OK && cd->shape[1] != c->n_mels)
            st = vox_set_error(VOX_ERR_INVALID_ARGUMENT, "sample: cond must be F32 [frames][%lld]", (long long)c->n_mels);
        int64_t ns = scalar_i(steps, c->nfe_step);
        if (st == VOX_OK && (ns < 1 || ns > 256)) st = vox_set_error(VOX_ERR_INVALID_ARGUMENT, "sample: nfe_step in [1, 256]");
        if (st == VOX_OK && (scalar_i(seed, 0) < 0 || scalar_i(piece, 0) < 0))
            st = vox_set_error(VOX_ERR_INVALID_ARGUMENT, "sample: seed and piece must not be negative");
        float *mel = NULL;
        int64_t total = 0;
        if (st == VOX_OK) {
            f5_sample_opts so = {.steps = (int32_t)ns, .use_epss = (int32_t)scalar_i(epss, c->use_epss),
                                 .cfg_strength = scalar_f(cfg, c->cfg_strength), .sway = scalar_f(sway, c->sway),
                                 .seed = (uint64_t)scalar_i(seed, 0), .piece = (uint32_t)scalar_i(piece, 0),
                                 .tap = tap_keep, .tap_ctx = &tc};
            st = sample_any(m, e->pool, cd->data, cd->shape[0], ids->data, (int64_t)vx_array_count(ids), scalar_i(dur, 0),
                            &so, &mel, &total);
        }
        if (st == VOX_OK) st = tc.failed;
        if (st == VOX_OK) st = put2(t, "mel", mel, total, c->n_mels);
        free(mel);
    } else {
        st = vox_set_error(VOX_ERR_INTERNAL, "unknown entry %s", entry->name);
    }
    vx_fp_restore(fp);
    (void)s;
    return st;
}

static const vx_entry f5_entries[] = {
    {"tokenize", 0, "text (U8)", "ids, symbols, segments", "the text frontend: token ids, the symbols (each followed "
     "by 0x1F) and the jieba segments (each followed by 0x1F)"},
    {"mel", 0, "audio (F32 [samples] at the model's rate)", "mel", "the log-mel features [frames][n_mels]"},
    {"reference", 0, "audio (F32 [samples]), sample_rate (I32), target_rms (F32, optional)",
     "preprocessed, preprocessed_rate, ref_mel, ref_rms", "a recording as a voice clone prepares it: the official "
     "silence clipping and trimming, loudness, resampling and mel"},
    {"text_encoder", 0, "ids (I32 [n]), frames (I32)", "text_cond, text_uncond", "the text encoder, both guidance branches"},
    {"dit", 0, "x (F32 [frames][n_mels]), cond (F32 [frames][n_mels]), ids (I32 [n]), t (F32)",
     "time_embedding, input_embed, flow_cond, flow_uncond", "one DiT evaluation of both guidance branches at time t"},
    {"vocos", 0, "mel (F32 [frames][n_mels])", "vocos_features, vocos_head, audio", "Vocos decode"},
    {"sample", 0, "cond (F32 [frames][n_mels]), ids (I32 [n]), duration (I32), nfe_step, cfg_strength, "
     "sway_sampling_coef, use_epss, seed, piece (optional)", "x0, t, text_cond, text_uncond, flow_cond, flow_uncond, "
     "trajectory, mel", "the whole CFM loop of one piece with its Philox noise"},
};

const vx_family vx_family_f5 = {
    .name = "f5_tts",
    .check_manifest = f5_check_manifest,
    .load = f5_load,
    .unload = f5_unload,
    .stages = f5_stage_names,
    .tokenize = f5_tokenize_abi,
    .voices = &f5_voices,
    .voice_clone = f5_voice_clone,
    .voice_check = f5_voice_check,
    .synth_options = &f5_options_set,
    .option_defaults = f5_option_defaults,
    .session_init = f5_session_init,
    .session_pull = f5_session_pull,
    .session_free = f5_session_free,
    .session_used = f5_session_used,
    .session_outputs = f5_session_outputs,
    .session_output = f5_session_output,
    .entries = f5_entries,
    .n_entries = sizeof f5_entries / sizeof f5_entries[0],
    .run = f5_run,
};
