/* The session part of the C ABI: creation (options layered and validated), text feeding (checked as it
 * arrives), pulling audio, cancellation, and freeing that is safe against a call in progress on
 * another thread. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "error.h"
#include "family.h"
#include "unicode/unicode.h"

/* The voice's stored defaults: "seed" is common, the rest are the family's options. */
static const char *const common_defaults[] = {"seed", NULL};

static uint64_t voice_seed(const vox_voice *v) {
    vox_json_doc *d = NULL;
    uint64_t seed = 0;
    if (v && v->defaults && vx_options_parse(v->defaults, "defaults", &d) == VOX_OK) {
        const vox_json *s = vox_json_get(vox_json_root(d), "seed");
        if (s && s->type == VOX_JSON_NUMBER && s->is_integer && s->integer >= 0) seed = (uint64_t)s->integer;
    } else {
        vox_clear_error();
    }
    vox_json_free(d);
    return seed;
}

vox_synth_params vox_synth_default_params(const vox_engine *e, const vox_voice *v) {
    (void)e;
    vox_synth_params p;
    memset(&p, 0, sizeof p);
    p.struct_size = sizeof p;
    p.seed = voice_seed(v);
    return p;
}

/* The family's options for `voice` (NULL: the model's), layered: the family's and the model's defaults,
 * then the voice's stored defaults. The voice document is kept in *doc (the options may point into it). */
static vox_status voice_options(const vox_engine *e, const vox_voice *v, void *opts, vox_json_doc **doc) {
    const vx_family *f = e->family;
    *doc = NULL;
    if (f->option_defaults) f->option_defaults(e, opts);
    if (!v || !v->defaults || !f->synth_options) return VOX_OK;
    vox_status st = vx_options_parse(v->defaults, "the voice's defaults", doc);
    if (st == VOX_OK) st = vx_options_apply(f->synth_options, opts, vox_json_root(*doc), "the voice's defaults",
                                           common_defaults);
    if (st != VOX_OK) {
        vox_json_free(*doc);
        *doc = NULL;
    }
    return st;
}

vox_status vox_engine_options(const vox_engine *e, const vox_voice *v, char *json, size_t capacity, size_t *length) {
    if (!e || !length || (!json && capacity)) return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "vox_engine_options: NULL argument");
    const vx_family *f = e->family;
    size_t size = f->synth_options ? f->synth_options->size : 0;
    void *opts = calloc(1, size ? size : 1);
    if (!opts) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    vox_json_doc *doc = NULL;
    vox_status st = voice_options(e, v, opts, &doc);
    if (st == VOX_OK) {
        vx_buf b = {0};
        vx_buf_printf(&b, "{\"family\":");
        vx_buf_json_string(&b, f->name, (size_t)-1);
        vx_buf_printf(&b, ",\"options\":");
        if (f->synth_options)
            vx_options_describe(f->synth_options, opts, &b);
        else
            vx_buf_printf(&b, "[]");
        vx_buf_printf(&b, "}");
        char *s = vx_buf_take(&b);
        if (!s) {
            st = vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
        } else {
            *length = strlen(s);
            if (capacity) {
                size_t n = *length < capacity - 1 ? *length : capacity - 1;
                memcpy(json, s, n);
                json[n] = '\0';
            }
            free(s);
        }
    }
    vox_json_free(doc);
    free(opts);
    return st;
}

/* A language the caller names must be one the model lists (vox_engine_info "languages"), or "auto". */
static vox_status check_language(const vox_engine *e, const char *lang) {
    if (!lang || !strcasecmp(lang, "auto")) return VOX_OK;
    vox_json_doc *d = NULL;
    vox_json_error err;
    vox_status st = VOX_OK;
    if (e->info && vox_json_parse(e->info, strlen(e->info), &d, &err) == VOX_OK) {
        const vox_json *langs = vox_json_get(vox_json_root(d), "languages");
        bool found = false;
        vx_buf b = {0};
        for (const vox_json *c = langs ? langs->child : NULL; c; c = c->next) {
            if (c->type != VOX_JSON_STRING) continue;
            found |= !strcasecmp(c->str, lang);
            vx_buf_printf(&b, "%s%s", b.len ? ", " : "", c->str);
        }
        if (!found)
            st = vox_set_error(VOX_ERR_INVALID_ARGUMENT, "unknown language \"%s\"; this model speaks: %s", lang,
                               b.s ? b.s : "auto");
        vx_buf_free(&b);
    }
    vox_json_free(d);
    return st;
}

static void session_free_fields(vox_session *s) {
    if (!s) return;
    free(s->language);
    free(s->text);
    free(s->opts);
    vox_json_free(s->opt_docs[0]);
    vox_json_free(s->opt_docs[1]);
    pthread_cond_destroy(&s->idle);
    free(s);
}

vox_status vx_session_create(vox_engine *e, const vox_voice *voice, const vox_synth_params *params,
                             vox_session **out) {
    const vx_family *f = e->family;
    if (!f->session_init) return vox_set_error(VOX_ERR_UNSUPPORTED, "the %s family cannot synthesize", f->name);
    vox_synth_params p = vox_synth_default_params(e, voice);
    if (params) {
        if (params->struct_size < sizeof(uint32_t) || params->struct_size > 4096)
            return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "vox_synth_params.struct_size: use vox_synth_default_params()");
        memcpy(&p, params, params->struct_size < sizeof p ? params->struct_size : sizeof p);
        p.struct_size = sizeof p;
    }
    vox_status st;
    if (!voice->family || strcmp(voice->family, f->name) != 0)
        return vox_set_error(VOX_ERR_UNSUPPORTED, "a %s voice cannot be used with a %s model",
                             voice->family ? voice->family : "foreign", f->name);
    const vox_json *mid = vox_json_get(e->manifest, "model_id");
    if (!(f->voices && f->voices->portable) && voice->model_id && strcmp(voice->model_id, mid->str) != 0)
        return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "the voice was made for other weights (model_id %.12s, this "
                             "model %.12s): create it again with this model", voice->model_id, mid->str);
    if (f->voice_check && (st = f->voice_check(e, voice)) != VOX_OK) return st;
    if ((st = check_language(e, p.language)) != VOX_OK) return st;

    vox_session *s = calloc(1, sizeof *s);
    if (!s) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    pthread_cond_init(&s->idle, NULL);
    size_t size = f->synth_options ? f->synth_options->size : 0;
    s->opts = calloc(1, size ? size : 1);
    s->language = vx_strdup(p.language ? p.language : voice->language ? voice->language : "auto");
    s->text = calloc(1, 64);
    s->text_cap = 64;
    if (!s->opts || !s->language || !s->text) {
        session_free_fields(s);
        return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    }
    if ((st = voice_options(e, voice, s->opts, &s->opt_docs[0])) != VOX_OK ||
        (p.options && (st = vx_options_parse(p.options, "options", &s->opt_docs[1])) != VOX_OK)) {
        session_free_fields(s);
        return st;
    }
    if (s->opt_docs[1]) {
        if (!f->synth_options)
            st = vox_set_error(VOX_ERR_INVALID_ARGUMENT, "options: the %s family takes no options", f->name);
        else
            st = vx_options_apply(f->synth_options, s->opts, vox_json_root(s->opt_docs[1]), "options", NULL);
    }
    if (st == VOX_OK && f->options_check) st = f->options_check(e, s->opts);
    if (st != VOX_OK) {
        session_free_fields(s);
        return st;
    }
    s->engine = e;
    s->voice = voice;
    s->seed = p.seed;
    atomic_init(&s->cancelled, 0);

    pthread_mutex_lock(&e->lock);
    if (e->params.max_sessions > 0 && e->sessions_active >= e->params.max_sessions) {
        pthread_mutex_unlock(&e->lock);
        session_free_fields(s);
        return vox_set_error(VOX_ERR_SESSION_LIMIT, "the engine already has %d sessions (max_sessions)", e->params.max_sessions);
    }
    e->sessions_active++;
    e->stats.sessions_created++;
    s->next = e->sessions;
    if (e->sessions) e->sessions->prev = s;
    e->sessions = s;
    pthread_mutex_unlock(&e->lock);

    if ((st = f->session_init(s)) != VOX_OK) {
        pthread_mutex_lock(&e->lock);
        if (s->prev) s->prev->next = s->next;
        else e->sessions = s->next;
        if (s->next) s->next->prev = s->prev;
        e->sessions_active--;
        pthread_mutex_unlock(&e->lock);
        session_free_fields(s);
        return st;
    }
    *out = s;
    return VOX_OK;
}

vox_status vox_session_create(vox_engine *e, const vox_voice *voice, const vox_synth_params *params,
                              vox_session **out) {
    if (!out) return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "vox_session_create: out is NULL");
    *out = NULL;
    if (!e || !voice) return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "vox_session_create: engine and voice are required");
    return vx_session_create(e, voice, params, out);
}

/* A call on the session begins / ends; a session being freed takes no new calls. */
static vox_status enter(vox_session *s, const char *fn) {
    pthread_mutex_lock(&s->engine->lock);
    if (s->freeing) {
        pthread_mutex_unlock(&s->engine->lock);
        return vox_set_error(VOX_ERR_CANCELLED, "%s: the session is being freed", fn);
    }
    s->busy++;
    pthread_mutex_unlock(&s->engine->lock);
    return VOX_OK;
}

static void leave(vox_session *s) {
    pthread_mutex_lock(&s->engine->lock);
    if (--s->busy == 0) pthread_cond_broadcast(&s->idle);
    pthread_mutex_unlock(&s->engine->lock);
}

/* Checks the bytes appended at s->text[from..): valid UTF-8 (a sequence may be cut by the end of the
 * text fed so far: it is checked when the rest comes, or at the end) and no control characters. */
static vox_status check_text(const vox_session *s, size_t from, size_t *valid_end) {
    const char *t = s->text;
    size_t i = from, n = s->text_len;
    while (i < n) {
        uint32_t cp;
        bool incomplete = false;
        size_t len = vx_utf8_decode(t, n, i, &cp, &incomplete);
        if (!len) {
            if (incomplete) break;
            return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "the text is not valid UTF-8 (at byte %zu)", i);
        }
        if ((cp < 0x20 && cp != '\t' && cp != '\n' && cp != '\r') || cp == 0x7f || (cp >= 0x80 && cp < 0xa0))
            return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "the text holds the control character U+%04X at byte %zu",
                                 (unsigned)cp, i);
        i += len;
    }
    *valid_end = i;
    return VOX_OK;
}

vox_status vox_session_feed(vox_session *s, const char *text) {
    if (!s || !text) return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "vox_session_feed: NULL argument");
    vox_status st = enter(s, "vox_session_feed");
    if (st != VOX_OK) return st;
    if (s->ended) {
        leave(s);
        return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "vox_session_feed: the text was already ended");
    }
    size_t n = strlen(text), old = s->text_len;
    if (s->text_len + n + 1 > s->text_cap) {
        size_t cap = s->text_cap;
        while (cap < s->text_len + n + 1) cap *= 2;
        char *t = realloc(s->text, cap);
        if (!t) {
            leave(s);
            return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
        }
        s->text = t;
        s->text_cap = cap;
    }
    memcpy(s->text + s->text_len, text, n + 1);
    s->text_len += n;
    /* from the end of what was checked: a sequence the previous piece cut is completed now */
    size_t valid = s->text_valid;
    if ((st = check_text(s, s->text_valid, &valid)) != VOX_OK) {
        s->text_len = old;   /* the piece is refused whole */
        s->text[old] = '\0';
    } else {
        s->text_valid = valid;
    }
    leave(s);
    return st;
}

vox_status vox_session_end(vox_session *s) {
    if (!s) return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "vox_session_end: session is NULL");
    vox_status st = enter(s, "vox_session_end");
    if (st != VOX_OK) return st;
    if (s->text_valid != s->text_len)
        st = vox_set_error(VOX_ERR_INVALID_ARGUMENT, "the text ends inside a UTF-8 sequence (at byte %zu)",
                           s->text_valid);
    if (st == VOX_OK) s->ended = 1;
    leave(s);
    return st;
}

vox_status vox_session_pull(vox_session *s, vox_chunk *out) {
    if (!s || !out) return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "vox_session_pull: NULL argument");
    memset(out, 0, sizeof *out);
    vox_status st = enter(s, "vox_session_pull");
    if (st != VOX_OK) return st;
    bool blank = s->ended;   /* a finished text of white space alone: nothing to speak, for every family */
    for (size_t i = 0; blank && i < s->text_len; i++) blank = s->text[i] == ' ' || (s->text[i] >= '\t' && s->text[i] <= '\r');
    if (atomic_load(&s->cancelled))
        st = vox_set_error(VOX_ERR_CANCELLED, "the session was cancelled");
    else if (blank)
        st = vox_set_error(VOX_ERR_INVALID_ARGUMENT, "nothing to speak: the text is empty");
    else
        st = s->engine->family->session_pull(s, out);
    if (st == VOX_OK && out->kind == VOX_CHUNK_AUDIO) vx_stats_samples(s->engine, out->n_samples);
    leave(s);
    return st;
}

void vox_session_cancel(vox_session *s) {
    if (s) atomic_store(&s->cancelled, 1);
}

/* Cancel, wait for calls in progress, unlink and free. A session that another thread is already
 * freeing is left to it (the engine's free waits for it on e->unlinked). */
void vx_session_destroy(vox_session *s) {
    vox_engine *e = s->engine;
    atomic_store(&s->cancelled, 1);
    pthread_mutex_lock(&e->lock);
    if (s->freeing) {
        pthread_mutex_unlock(&e->lock);
        return;
    }
    s->freeing = 1;
    while (s->busy > 0) pthread_cond_wait(&s->idle, &e->lock);
    pthread_mutex_unlock(&e->lock);
    if (e->family->session_free) e->family->session_free(s);
    pthread_mutex_lock(&e->lock);
    if (s->prev) s->prev->next = s->next;
    else e->sessions = s->next;
    if (s->next) s->next->prev = s->prev;
    e->sessions_active--;
    pthread_cond_broadcast(&e->unlinked);
    pthread_mutex_unlock(&e->lock);
    session_free_fields(s);
}

void vox_session_free(vox_session *s) {
    if (s) vx_session_destroy(s);
}

vox_status vox_session_output(vox_session *s, const char *name, vox_array *out) {
    if (!s || !name || !out) return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "vox_session_output: NULL argument");
    memset(out, 0, sizeof *out);
    const vx_family *f = s->engine->family;
    bool known = false;
    for (const char *const *o = f->session_outputs; o && *o && !known; o++) known = !strcmp(*o, name);
    if (!known || !f->session_output)
        return vox_set_error(VOX_ERR_NOT_FOUND, "a %s session has no output \"%s\"", f->name, name);
    vox_status st = enter(s, "vox_session_output");
    if (st != VOX_OK) return st;
    st = f->session_output(s, name, out);
    leave(s);
    return st;
}
