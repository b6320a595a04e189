/* The voice part of the C ABI: cloning, built-in speakers, designed voices, accessors.
 * Reading and writing .tvoice files is tvoice.c. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "family.h"
#include "error.h"
#include "json.h"
#include "strbuf.h"

#define VX_VOICE_MAX_SECONDS 600

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
    free(v->family), free(v->mode), free(v->model_id), free(v->variant), free(v->name), free(v->language);
    for (int i = 0; i < v->n_texts; i++) free(v->texts[i].name), free(v->texts[i].value);
    for (int i = 0; i < v->n_arrays; i++) free(v->arrays[i].name), free(v->arrays[i].data);
    free(v->defaults), free(v->info);
    free(v);
}

const vx_voice_array *vx_voice_get_array(const vox_voice *v, const char *name) {
    for (int i = 0; v && i < v->n_arrays; i++)
        if (!strcmp(v->arrays[i].name, name)) return &v->arrays[i];
    return NULL;
}

const char *vx_voice_text(const vox_voice *v, const char *name) {
    for (int i = 0; v && i < v->n_texts; i++)
        if (!strcmp(v->texts[i].name, name)) return v->texts[i].value;
    return NULL;
}

vox_status vx_voice_put_array(vox_voice *v, const char *name, vox_dtype dtype, int32_t ndim, const int64_t *shape,
                              void *data) {
    if (vx_voice_get_array(v, name) || v->n_arrays == VX_VOICE_MAX_ARRAYS || ndim < 1 || ndim > VOX_MAX_DIMS ||
        (dtype != VOX_DTYPE_F32 && dtype != VOX_DTYPE_I32)) {
        free(data);
        return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "voice array %s: a duplicate, one too many or a bad shape", name);
    }
    vx_voice_array *a = &v->arrays[v->n_arrays];
    memset(a, 0, sizeof *a);
    a->name = strdup(name);
    if (!a->name) {
        free(data);
        return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    }
    a->dtype = dtype;
    a->ndim = ndim;
    a->count = 1;
    for (int i = 0; i < ndim; i++) a->count *= (size_t)(a->shape[i] = shape[i]);
    a->data = data;
    v->n_arrays++;
    return VOX_OK;
}

vox_status vx_voice_put_text(vox_voice *v, const char *name, const char *value) {
    if (!value) return VOX_OK;
    for (int i = 0; i < v->n_texts; i++)
        if (!strcmp(v->texts[i].name, name)) {
            char *c = strdup(value);
            if (!c) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
            free(v->texts[i].value);
            v->texts[i].value = c;
            return VOX_OK;
        }
    if (v->n_texts == VX_VOICE_MAX_TEXTS) return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "voice: too many texts");
    vx_voice_kv *t = &v->texts[v->n_texts];
    t->name = strdup(name);
    t->value = strdup(value);
    if (!t->name || !t->value) {
        free(t->name), free(t->value);
        return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    }
    v->n_texts++;
    return VOX_OK;
}

/* Build the info JSON once the voice is complete (voices are immutable afterwards). */
vox_status vx_voice_finish(vox_voice *v) {
    vx_buf b = {0};
    const char *keys[] = {"family", "mode", "variant", "model_id", "name", "language"};
    const char *vals[] = {v->family, v->mode, v->variant, v->model_id, v->name, v->language};
    vx_buf_printf(&b, "{");
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        vx_buf_printf(&b, "%s\"%s\":", i ? "," : "", keys[i]);
        vx_buf_json_string(&b, vals[i] ? vals[i] : "", (size_t)-1);
    }
    vx_buf_printf(&b, ",\"defaults\":%s,\"texts\":{", v->defaults ? v->defaults : "{}");
    for (int i = 0; i < v->n_texts; i++) {
        vx_buf_printf(&b, "%s", i ? "," : "");
        vx_buf_json_string(&b, v->texts[i].name, (size_t)-1);
        vx_buf_printf(&b, ":");
        vx_buf_json_string(&b, v->texts[i].value, (size_t)-1);
    }
    vx_buf_printf(&b, "},\"arrays\":{");
    for (int i = 0; i < v->n_arrays; i++) {
        const vx_voice_array *a = &v->arrays[i];
        vx_buf_printf(&b, "%s", i ? "," : "");
        vx_buf_json_string(&b, a->name, (size_t)-1);
        vx_buf_printf(&b, ":[");
        for (int d = 0; d < a->ndim; d++) vx_buf_printf(&b, "%s%lld", d ? "," : "", (long long)a->shape[d]);
        vx_buf_printf(&b, "]");
    }
    vx_buf_printf(&b, "}");
    if (v->source_rate) vx_buf_printf(&b, ",\"source_rate\":%d", v->source_rate);
    vx_buf_printf(&b, "}");
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
    (void)e, (void)t0;   /* the family times its own voice stage */
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
    /* a voice needs seconds of speech; ten minutes bounds what cloning may allocate and compute */
    if ((double)n_frames / sample_rate > VX_VOICE_MAX_SECONDS)
        return vox_set_error(VOX_ERR_LIMIT, "vox_voice_clone: %.0f s of audio is too long for a voice (at most %d s)",
                             (double)n_frames / sample_rate, VX_VOICE_MAX_SECONDS);
    vox_clone_params p = vox_clone_default_params();
    if (params) {
        if (params->struct_size < sizeof(uint32_t) || params->struct_size > 4096)
            return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "vox_clone_params.struct_size: use vox_clone_default_params()");
        memcpy(&p, params, params->struct_size < sizeof p ? params->struct_size : sizeof p);
    }
    if (!e->family->voice_clone)
        return vox_set_error(VOX_ERR_UNSUPPORTED, "the %s family cannot clone voices", e->family->name);
    /* the family's cloning options, validated before any work */
    const vx_option_set *cs = e->family->clone_options;
    void *copts = calloc(1, cs && cs->size ? cs->size : 1);
    vox_json_doc *cdoc = NULL;
    vox_status st = copts ? VOX_OK : vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    if (st == VOX_OK && p.options) {
        st = vx_options_parse(p.options, "clone options", &cdoc);
        if (st == VOX_OK && !cs) st = vox_set_error(VOX_ERR_INVALID_ARGUMENT, "the %s family takes no clone options",
                                                    e->family->name);
        if (st == VOX_OK) st = vx_options_apply(cs, copts, vox_json_root(cdoc), "clone options", NULL);
    }
    if (st != VOX_OK) {
        vox_json_free(cdoc);
        free(copts);
        return st;
    }
    if (p.defaults) {
        vox_json_doc *d = NULL;
        st = vx_options_parse(p.defaults, "vox_clone_params.defaults", &d);
        const vox_json *seed = d ? vox_json_get(vox_json_root(d), "seed") : NULL;
        if (st == VOX_OK && seed && !(seed->type == VOX_JSON_NUMBER && seed->is_integer && seed->integer >= 0))
            st = vox_set_error(VOX_ERR_INVALID_ARGUMENT, "vox_clone_params.defaults: seed must be an integer in [0, 2^53]");
        if (st == VOX_OK && e->family->synth_options) {  /* the rest must be valid options of the family */
            void *tmp = calloc(1, e->family->synth_options->size);
            static const char *const seed_key[] = {"seed", NULL};
            st = tmp ? vx_options_apply(e->family->synth_options, tmp, vox_json_root(d), "vox_clone_params.defaults",
                                        seed_key)
                     : vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
            free(tmp);
        }
        vox_json_free(d);
        if (st != VOX_OK) {
            vox_json_free(cdoc);
            free(copts);
            return st;
        }
    }
    float *mono = malloc(n_frames * sizeof *mono);
    if (!mono) {
        vox_json_free(cdoc);
        free(copts);
        return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory (%zu samples)", n_frames);
    }
    for (size_t i = 0; i < n_frames; i++) {
        double s = 0;  /* the official code averages channels (numpy mean: float32 sums; exact for 1 channel) */
        for (int32_t c = 0; c < channels; c++) s += pcm[i * (size_t)channels + (size_t)c];
        mono[i] = channels == 1 ? pcm[i] : (float)(s / channels);
        if (!isfinite(mono[i]) || fabsf(mono[i]) > 64.0f) {
            const char *what = isfinite(mono[i]) ? "far out of range" : "not finite"; /* before mono is freed */
            free(mono);
            vox_json_free(cdoc);
            free(copts);
            return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "vox_voice_clone: sample %zu is %s (PCM is in [-1, 1])", i,
                                 what);
        }
    }
    double t0 = vx_now_ms();
    vox_voice *v = vx_voice_new();
    if (!v) {
        free(mono);
        vox_json_free(cdoc);
        free(copts);
        return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    }
    st = e->family->voice_clone(e, mono, n_frames, sample_rate, &p, copts, v);
    vox_json_free(cdoc);
    free(copts);
    if (st == VOX_OK) {
        /* the recording as given: a voice can be made again from it for other weights */
        int64_t shape[1] = {(int64_t)n_frames};
        st = vx_voice_put_array(v, "source_wav", VOX_DTYPE_F32, 1, shape, mono);
        mono = NULL;
        v->source_rate = sample_rate;
        if (st == VOX_OK && !v->name) v->name = strdup(p.name ? p.name : "voice");
        if (st == VOX_OK && !v->language) v->language = strdup(p.language ? p.language : "auto");
        if (st == VOX_OK && p.defaults) {
            free(v->defaults);
            v->defaults = strdup(p.defaults);
        }
        if (st == VOX_OK && (!v->name || !v->language || !v->defaults))
            st = vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    }
    free(mono);
    return finish_or_free(e, st, v, out, t0);
}

vox_status vox_voice_speaker(vox_engine *e, const char *speaker, const char *instruct, vox_voice **out) {
    if (!out) return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "vox_voice_speaker: out is NULL");
    *out = NULL;
    if (!e || !speaker || !*speaker) return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "vox_voice_speaker: no speaker name");
    if (!e->family->voice_speaker) return vox_set_error(VOX_ERR_UNSUPPORTED, "the %s family has no built-in speakers", e->family->name);
    vox_voice *v = vx_voice_new();
    if (!v) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    return finish_or_free(e, e->family->voice_speaker(e, speaker, instruct, v), v, out, vx_now_ms());
}

vox_status vox_voice_design(vox_engine *e, const char *description, vox_voice **out) {
    if (!out) return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "vox_voice_design: out is NULL");
    *out = NULL;
    if (!e) return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "vox_voice_design: engine is NULL");
    if (!e->family->voice_design) return vox_set_error(VOX_ERR_UNSUPPORTED, "the %s family cannot design voices", e->family->name);
    vox_voice *v = vx_voice_new();
    if (!v) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    return finish_or_free(e, e->family->voice_design(e, description, v), v, out, vx_now_ms());
}

const char *vox_voice_info(const vox_voice *v) { return v && v->info ? v->info : "{}"; }

vox_status vox_voice_array(const vox_voice *v, const char *name, vox_array *out) {
    if (!v || !name || !out) return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "vox_voice_array: NULL argument");
    memset(out, 0, sizeof *out);
    const vx_voice_array *a = vx_voice_get_array(v, name);
    if (!a) return vox_set_error(VOX_ERR_NOT_FOUND, "the voice has no array \"%s\"", name);
    out->name = a->name;
    out->dtype = a->dtype;
    out->ndim = a->ndim;
    memcpy(out->shape, a->shape, sizeof out->shape);
    out->data = a->data;
    return VOX_OK;
}
