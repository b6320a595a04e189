/* The voice part of the C ABI: cloning, built-in speakers, designed voices, accessors.
 * Reading and writing .tvoice files is tvoice.c. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "error.h"
#include "json.h"
#include "strbuf.h"

vox_voice *vx_voice_new(void) {
    vox_voice *v = calloc(1, sizeof *v);
    if (v && !(v->defaults = strdup("{}"))) {
        free(v);
        return NULL;
    }
    return v;
}

void vox_voice_free(vox_voice *v) {
    if (!v) return;
    free(v->family), free(v->mode), free(v->model_id), free(v->variant), free(v->name), free(v->ref_text);
    free(v->speaker), free(v->instruct), free(v->language), free(v->embedding), free(v->ref_codes);
    free(v->ref_text_tokens), free(v->source), free(v->defaults), free(v->info);
    free(v);
}

/* Build the info JSON once the voice is complete (voices are immutable afterwards). */
vox_status vx_voice_finish(vox_voice *v) {
    vx_buf b = {0};
    const char *keys[] = {"family", "mode", "name", "speaker", "instruct", "language", "ref_text", "variant", "model_id"};
    const char *vals[] = {v->family, v->mode, v->name, v->speaker, v->instruct, v->language, v->ref_text, v->variant,
                          v->model_id};
    vx_buf_printf(&b, "{");
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        vx_buf_printf(&b, "%s\"%s\":", i ? "," : "", keys[i]);
        vx_buf_json_string(&b, vals[i] ? vals[i] : "", (size_t)-1);
    }
    vx_buf_printf(&b, ",\"embedding_dim\":%zu,\"ref_frames\":%zu,\"ref_text_tokens\":%zu,\"source_samples\":%zu,"
                      "\"source_rate\":%d,\"defaults\":%s}",
                  v->n_embedding, v->n_ref_frames, v->n_ref_text_tokens, v->n_source, v->source_rate,
                  v->defaults ? v->defaults : "{}");
    free(v->info);
    v->info = vx_buf_take(&b);
    return v->info ? VOX_OK : vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
}

vox_clone_params vox_clone_default_params(void) {
    vox_clone_params p;
    memset(&p, 0, sizeof p);
    p.struct_size = sizeof p;
    return p;
}

static vox_status finish_or_free(vox_engine *e, vox_status st, vox_voice *v, vox_voice **out, double t0) {
    if (st == VOX_OK) st = vx_voice_finish(v);
    if (st != VOX_OK) {
        vox_voice_free(v);
        return st;
    }
    vox_engine_stats d = {.voice_ms = vx_now_ms() - t0};
    vx_stats_add(e, &d);
    *out = v;
    return VOX_OK;
}

vox_status vox_voice_clone(vox_engine *e, const float *pcm, size_t n_frames, int32_t channels, int32_t sample_rate,
                           const vox_clone_params *params, vox_voice **out) {
    if (!out) return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "vox_voice_clone: out is NULL");
    *out = NULL;
    if (!e || !pcm) return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "vox_voice_clone: NULL argument");
    if (channels < 1 || channels > 64) return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "vox_voice_clone: %d channels", channels);
    if (sample_rate < 1000 || sample_rate > 768000)
        return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "vox_voice_clone: sample rate %d Hz is not supported", sample_rate);
    if (n_frames == 0) return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "vox_voice_clone: the recording is empty");
    vox_clone_params p = vox_clone_default_params();
    if (params) {
        if (params->struct_size < sizeof(uint32_t) || params->struct_size > 4096)
            return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "vox_clone_params.struct_size: use vox_clone_default_params()");
        memcpy(&p, params, params->struct_size < sizeof p ? params->struct_size : sizeof p);
    }
    if (!p.x_vector_only && (!p.ref_text || !*p.ref_text))
        return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "cloning a voice needs the transcript of the recording "
                             "(ref_text), or x_vector_only for a voice from the speaker embedding alone");
    if (!e->family->voice_clone)
        return vox_set_error(VOX_ERR_UNSUPPORTED, "family %s cannot clone voices", e->family->name);
    if (p.defaults) {
        vox_json_doc *d = NULL;
        vox_json_error jerr;
        bool ok = vox_json_parse(p.defaults, strlen(p.defaults), &d, &jerr) == VOX_OK &&
                  vox_json_root(d)->type == VOX_JSON_OBJECT;
        vox_json_free(d);
        if (!ok) return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "vox_clone_params.defaults must be a JSON object");
    }
    float *mono = malloc(n_frames * sizeof *mono);
    if (!mono) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory (%zu samples)", n_frames);
    for (size_t i = 0; i < n_frames; i++) {
        double s = 0;  /* the official code averages channels (numpy mean: float32 sums; exact for 1 channel) */
        for (int32_t c = 0; c < channels; c++) s += pcm[i * (size_t)channels + (size_t)c];
        mono[i] = channels == 1 ? pcm[i] : (float)(s / channels);
        if (!isfinite(mono[i])) {
            free(mono);
            return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "vox_voice_clone: sample %zu is not finite", i);
        }
    }
    double t0 = vx_now_ms();
    vox_voice *v = vx_voice_new();
    if (!v) {
        free(mono);
        return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    }
    vox_status st = e->family->voice_clone(e, mono, n_frames, sample_rate, &p, v);
    if (st == VOX_OK) {
        v->source = mono;
        v->n_source = n_frames;
        v->source_rate = sample_rate;
        mono = NULL;
        if (!v->name) v->name = strdup(p.name ? p.name : "voice");
        if (!v->language) v->language = strdup(p.language ? p.language : "auto");
        if (!v->ref_text && p.ref_text && !p.x_vector_only) v->ref_text = strdup(p.ref_text);
        if (p.defaults) {
            free(v->defaults);
            v->defaults = strdup(p.defaults);
        }
    }
    free(mono);
    return finish_or_free(e, st, v, out, t0);
}

vox_status vox_voice_speaker(vox_engine *e, const char *speaker, const char *instruct, vox_voice **out) {
    if (!out) return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "vox_voice_speaker: out is NULL");
    *out = NULL;
    if (!e || !speaker || !*speaker) return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "vox_voice_speaker: no speaker name");
    if (!e->family->voice_speaker) return vox_set_error(VOX_ERR_UNSUPPORTED, "family %s has no built-in speakers", e->family->name);
    vox_voice *v = vx_voice_new();
    if (!v) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    return finish_or_free(e, e->family->voice_speaker(e, speaker, instruct, v), v, out, vx_now_ms());
}

vox_status vox_voice_design(vox_engine *e, const char *description, vox_voice **out) {
    if (!out) return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "vox_voice_design: out is NULL");
    *out = NULL;
    if (!e) return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "vox_voice_design: engine is NULL");
    if (!e->family->voice_design) return vox_set_error(VOX_ERR_UNSUPPORTED, "family %s cannot design voices", e->family->name);
    vox_voice *v = vx_voice_new();
    if (!v) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    return finish_or_free(e, e->family->voice_design(e, description, v), v, out, vx_now_ms());
}

const char *vox_voice_info(const vox_voice *v) { return v && v->info ? v->info : "{}"; }

vox_status vox_voice_embedding(const vox_voice *v, const float **data, size_t *n) {
    if (!v || !data || !n) return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "vox_voice_embedding: NULL argument");
    *data = v->embedding;
    *n = v->n_embedding;
    return VOX_OK;
}

vox_status vox_voice_ref_codes(const vox_voice *v, const int32_t **codes, size_t *n_frames, size_t *n_groups) {
    if (!v || !codes || !n_frames || !n_groups)
        return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "vox_voice_ref_codes: NULL argument");
    *codes = v->ref_codes;
    *n_frames = v->n_ref_frames;
    *n_groups = v->n_groups;
    return VOX_OK;
}
