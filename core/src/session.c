/* The session part of the C ABI: creation, text feeding, pulling audio, cancellation. */
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "error.h"

vox_synth_params vox_synth_default_params(const vox_engine *e, const vox_voice *v) {
    vox_synth_params p;
    memset(&p, 0, sizeof p);
    p.struct_size = sizeof p;
    /* the official hard defaults (Qwen3TTSModel._merge_generate_kwargs); the model's generation
     * config and the voice override them below */
    p.do_sample = 1;
    p.temperature = 0.9f;
    p.top_k = 50;
    p.top_p = 1.0f;
    p.repetition_penalty = 1.05f;
    p.subtalker_do_sample = 1;
    p.subtalker_temperature = 0.9f;
    p.subtalker_top_k = 50;
    p.subtalker_top_p = 1.0f;
    p.max_new_tokens = 0;
    p.decoder = VOX_DECODER_STREAM;
    p.decoder_context = 50;
    p.chunk_frames = 4;
    p.speed = 1.0f;
    p.pause_ms = 200;
    if (e && e->family->default_params) e->family->default_params(e, v, &p);
    return p;
}

static vox_status check_params(const vox_synth_params *p) {
    if (p->temperature <= 0 && p->do_sample) return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "temperature must be > 0");
    if (p->subtalker_temperature <= 0 && p->subtalker_do_sample)
        return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "subtalker temperature must be > 0");
    if (p->top_k < 0 || p->subtalker_top_k < 0) return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "top_k must be >= 0");
    if (!(p->top_p > 0 && p->top_p <= 1) || !(p->subtalker_top_p > 0 && p->subtalker_top_p <= 1))
        return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "top_p must be in (0, 1]");
    if (!(p->repetition_penalty > 0)) return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "repetition_penalty must be > 0");
    if (p->max_new_tokens < 0) return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "max_new_tokens must be >= 0");
    if (p->decoder != VOX_DECODER_STREAM && p->decoder != VOX_DECODER_REFERENCE)
        return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "unknown decoder mode %d", (int)p->decoder);
    if (p->decoder_context < -1) return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "decoder_context must be >= -1");
    if (!(p->speed >= 0.25f && p->speed <= 4.0f)) return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "speed must be in [0.25, 4]");
    if (p->pause_ms < 0 || p->pause_ms > 10000) return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "pause_ms must be in [0, 10000]");
    if (p->chunk_frames < 1 || p->chunk_frames > 1 << 20)
        return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "chunk_frames must be >= 1");
    return VOX_OK;
}

vox_status vox_session_create(vox_engine *e, const vox_voice *voice, const vox_synth_params *params,
                              vox_session **out) {
    if (!out) return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "vox_session_create: out is NULL");
    *out = NULL;
    if (!e || !voice) return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "vox_session_create: engine and voice are required");
    if (!e->family->session_init) return vox_set_error(VOX_ERR_UNSUPPORTED, "family %s cannot synthesize", e->family->name);
    vox_synth_params p = vox_synth_default_params(e, voice);
    if (params) {
        if (params->struct_size < sizeof(uint32_t) || params->struct_size > 4096)
            return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "vox_synth_params.struct_size: use vox_synth_default_params()");
        memcpy(&p, params, params->struct_size < sizeof p ? params->struct_size : sizeof p);
        p.struct_size = sizeof p;
    }
    vox_status st = check_params(&p);
    if (st != VOX_OK) return st;
    if (!e->family->portable_voices && voice->model_id && strcmp(voice->model_id, vox_json_get(e->manifest, "model_id")->str) != 0)
        return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "the voice was made for other weights (model_id %.12s, this "
                             "model %.12s): create it again with this model", voice->model_id,
                             vox_json_get(e->manifest, "model_id")->str);
    if (e->family->voice_check && (st = e->family->voice_check(e, voice)) != VOX_OK) return st;

    pthread_mutex_lock(&e->lock);
    if (e->params.max_sessions > 0 && e->sessions_active >= e->params.max_sessions) {
        pthread_mutex_unlock(&e->lock);
        return vox_set_error(VOX_ERR_LIMIT, "the engine already has %d sessions (max_sessions)", e->params.max_sessions);
    }
    e->sessions_active++;
    e->stats.sessions_created++;
    pthread_mutex_unlock(&e->lock);

    vox_session *s = calloc(1, sizeof *s);
    if (!s) {
        st = vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
        goto undo;
    }
    s->engine = e;
    s->voice = voice;
    s->params = p;
    s->language = vx_strdup(p.language ? p.language : voice->language ? voice->language : "auto");
    s->text = calloc(1, 64);
    s->text_cap = 64;
    if (!s->language || !s->text) {
        st = vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
        goto undo;
    }
    s->params.language = s->language;
    atomic_init(&s->cancelled, 0);
    if ((st = e->family->session_init(s)) != VOX_OK) goto undo;
    *out = s;
    return VOX_OK;
undo:
    if (s) {
        free(s->language);
        free(s->text);
        free(s);
    }
    pthread_mutex_lock(&e->lock);
    e->sessions_active--;
    pthread_mutex_unlock(&e->lock);
    return st;
}

vox_status vox_session_feed(vox_session *s, const char *text) {
    if (!s || !text) return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "vox_session_feed: NULL argument");
    if (s->ended) return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "vox_session_feed: the text was already ended");
    size_t n = strlen(text);
    if (s->text_len + n + 1 > s->text_cap) {
        size_t cap = s->text_cap;
        while (cap < s->text_len + n + 1) cap *= 2;
        char *t = realloc(s->text, cap);
        if (!t) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
        s->text = t;
        s->text_cap = cap;
    }
    memcpy(s->text + s->text_len, text, n + 1);
    s->text_len += n;
    return VOX_OK;
}

vox_status vox_session_end(vox_session *s) {
    if (!s) return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "vox_session_end: session is NULL");
    s->ended = 1;
    return VOX_OK;
}

vox_status vox_session_pull(vox_session *s, vox_chunk *out) {
    if (!s || !out) return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "vox_session_pull: NULL argument");
    memset(out, 0, sizeof *out);
    if (atomic_load(&s->cancelled)) return vox_set_error(VOX_ERR_CANCELLED, "the session was cancelled");
    return s->engine->family->session_pull(s, out);
}

void vox_session_cancel(vox_session *s) {
    if (s) atomic_store(&s->cancelled, 1);
}

void vox_session_free(vox_session *s) {
    if (!s) return;
    if (s->engine->family->session_free) s->engine->family->session_free(s);
    pthread_mutex_lock(&s->engine->lock);
    s->engine->sessions_active--;
    pthread_mutex_unlock(&s->engine->lock);
    free(s->language);
    free(s->text);
    free(s);
}

vox_status vox_session_codes(const vox_session *s, const int32_t **codes, size_t *n_frames, size_t *n_groups) {
    if (!s || !codes || !n_frames || !n_groups)
        return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "vox_session_codes: NULL argument");
    if (!s->engine->family->session_codes) return vox_set_error(VOX_ERR_UNSUPPORTED, "no codes in this family");
    return s->engine->family->session_codes(s, codes, n_frames, n_groups);
}

vox_status vox_session_prompt(vox_session *s, const float **embeds, size_t *n_rows, size_t *dim) {
    if (!s || !embeds || !n_rows || !dim) return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "vox_session_prompt: NULL argument");
    if (!s->ended) return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "vox_session_prompt: call vox_session_end first");
    if (!s->engine->family->session_prompt) return vox_set_error(VOX_ERR_UNSUPPORTED, "no prompt in this family");
    return s->engine->family->session_prompt(s, embeds, n_rows, dim);
}

vox_status vox_session_teacher_force(vox_session *s, const int32_t *codes, size_t n_frames, float *talker_logits,
                                     float *predictor_logits) {
    if (!s || (!codes && n_frames) || !talker_logits || (!predictor_logits && n_frames))
        return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "vox_session_teacher_force: NULL argument");
    if (!s->ended) return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "vox_session_teacher_force: call vox_session_end first");
    if (!s->engine->family->session_teacher_force)
        return vox_set_error(VOX_ERR_UNSUPPORTED, "no teacher forcing in this family");
    return s->engine->family->session_teacher_force(s, codes, n_frames, talker_logits, predictor_logits);
}
