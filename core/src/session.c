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

/* The stream options every session has, in the same JSON object as the family's (vox.h). */
static const vx_option stream_table[] = {
    {"commit", VX_OPT_ENUM, offsetof(vx_stream_opts, commit), 0, 0, 0, 0, "auto|sentence|manual",
     "when fed text goes to the model: auto (as soon as the model can take it: a word, a sentence), "
     "sentence (complete sentences), manual (only at flush or end)"},
    {"idle_ms", VX_OPT_INT, offsetof(vx_stream_opts, idle_ms), 0, 3600000, 0, 0, NULL,
     "a pause in feeding this long (ms) flushes what waits (an unfinished sentence or word); 0: never"},
};
static const vx_option_set stream_set = {stream_table, sizeof stream_table / sizeof stream_table[0],
                                         sizeof(vx_stream_opts)};
static const char *const stream_keys[] = {"commit", "idle_ms", NULL};

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
        vx_stream_opts so = {0};
        vx_buf_printf(&b, ",\"stream_options\":");
        vx_options_describe(&stream_set, &so, &b);
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
    free(s->wtext);
    free(s->replace);
    free(s->opts);
    vox_json_free(s->opt_docs[0]);
    vox_json_free(s->opt_docs[1]);
    pthread_cond_destroy(&s->idle);
    pthread_mutex_destroy(&s->wlock);
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
    s->words = -1;
    pthread_cond_init(&s->idle, NULL);
    pthread_mutex_init(&s->wlock, NULL);
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
        const vox_json *root = vox_json_root(s->opt_docs[1]);
        st = vx_options_apply_some(&stream_set, &s->stream, root, "options");
        if (st == VOX_OK && f->synth_options)
            st = vx_options_apply(f->synth_options, s->opts, root, "options", stream_keys);
        else if (st == VOX_OK) {
            for (const vox_json *c = root->child; c && st == VOX_OK; c = c->next)
                if (!(c->key_len == 6 && !memcmp(c->key, "commit", 6)) && !(c->key_len == 7 && !memcmp(c->key, "idle_ms", 7)))
                    st = vox_set_error(VOX_ERR_INVALID_ARGUMENT, "options: the %s family takes no options", f->name);
        }
    }
    if (st == VOX_OK && f->options_check) st = f->options_check(e, s->opts);
    if (st != VOX_OK) {
        session_free_fields(s);
        return st;
    }
    s->engine = e;
    s->voice = voice;
    s->seed = p.seed;
    s->last_feed_ms = vx_now_ms();
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

/* Checks text[from..n): valid UTF-8 (a sequence may be cut by the end: it is checked when the rest
 * comes, or at the end) and no control characters; *valid_end: where the checked part ends. */
static vox_status check_text(const char *t, size_t from, size_t n, size_t base, size_t *valid_end) {
    size_t i = from;
    while (i < n) {
        uint32_t cp;
        bool incomplete = false;
        size_t len = vx_utf8_decode(t, n, i, &cp, &incomplete);
        if (!len) {
            if (incomplete) break;
            return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "the text is not valid UTF-8 (at byte %zu)", base + i);
        }
        if ((cp < 0x20 && cp != '\t' && cp != '\n' && cp != '\r') || cp == 0x7f || (cp >= 0x80 && cp < 0xa0))
            return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "the text holds the control character U+%04X at byte %zu",
                                 (unsigned)cp, base + i);
        i += len;
    }
    *valid_end = i;
    return VOX_OK;
}

static bool grow(char **buf, size_t *cap, size_t need) {
    if (need <= *cap) return true;
    size_t c = *cap ? *cap : 64;
    while (c < need) c *= 2;
    char *t = realloc(*buf, c);
    if (!t) return false;
    *buf = t;
    *cap = c;
    return true;
}

/* The writer side (feed, flush, set_pending, end): under wlock, from any thread. */
static vox_status writer(vox_session *s, const char *fn, const char *text, int flush, int end, int replace,
                         size_t keep, size_t *used) {
    if (!s) return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "%s: session is NULL", fn);
    vox_status st = enter(s, fn);   /* a free from another thread waits for this call */
    if (st != VOX_OK) return st;
    pthread_mutex_lock(&s->wlock);
    if (s->w_ended) {
        st = vox_set_error(VOX_ERR_INVALID_ARGUMENT, "%s: the text was already ended", fn);
    } else if (replace) {
        /* the new tail: checked whole, applied by the next pull */
        size_t n = strlen(text), valid = 0, have = s->text_len + s->wlen;
        if (used) *used = s->used;
        if (keep > have)
            st = vox_set_error(VOX_ERR_INVALID_ARGUMENT, "%s: keep is %zu bytes, only %zu were fed", fn, keep, have);
        else if (keep < s->used)
            st = vox_set_error(VOX_ERR_INVALID_ARGUMENT, "%s: the first %zu bytes were spoken already: an edit "
                               "may keep %zu bytes or more, not %zu", fn, s->used, s->used, keep);
        if (st == VOX_OK && (st = check_text(text, 0, n, keep, &valid)) == VOX_OK && valid != n)
            st = vox_set_error(VOX_ERR_INVALID_ARGUMENT, "the pending text ends inside a UTF-8 sequence");
        char *copy = st == VOX_OK ? strdup(text) : NULL;
        if (st == VOX_OK && !copy) st = vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
        if (st == VOX_OK) {
            free(s->replace);
            s->replace = copy;
            s->keep = keep;
            s->has_replace = 1;
            s->last_feed_ms = vx_now_ms();
        }
    } else if (text && s->has_replace) {
        /* an edit waits for the next pull: this text follows the edit's tail */
        size_t n = strlen(text), have = strlen(s->replace), valid = 0;
        char *t = realloc(s->replace, have + n + 1);
        if (!t) {
            st = vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
        } else {
            s->replace = t;
            memcpy(t + have, text, n + 1);
            if ((st = check_text(t, have, have + n, s->keep, &valid)) != VOX_OK)
                t[have] = '\0';
            else
                s->last_feed_ms = vx_now_ms();
        }
    } else if (text) {
        size_t n = strlen(text), old = s->wlen;
        if (!grow(&s->wtext, &s->wcap, s->wlen + n + 1)) {
            st = vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
        } else {
            memcpy(s->wtext + s->wlen, text, n + 1);
            s->wlen += n;
            size_t valid = s->wvalid;
            /* from the end of what was checked: a sequence the previous piece cut is completed now */
            if ((st = check_text(s->wtext, s->wvalid, s->wlen, s->text_len, &valid)) != VOX_OK) {
                s->wlen = old;   /* the piece is refused whole */
                s->wtext[old] = '\0';
            } else {
                s->wvalid = valid;
                s->last_feed_ms = vx_now_ms();
            }
        }
    }
    if (st == VOX_OK && end && s->wvalid != s->wlen)
        st = vox_set_error(VOX_ERR_INVALID_ARGUMENT, "the text ends inside a UTF-8 sequence (at byte %zu)",
                           s->text_len + s->wvalid);
    if (st == VOX_OK && flush) s->flush_req = 1;
    if (st == VOX_OK && end) s->end_req = s->w_ended = 1;
    pthread_mutex_unlock(&s->wlock);
    leave(s);
    return st;
}

vox_status vox_session_feed(vox_session *s, const char *text) {
    if (!text) return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "vox_session_feed: text is NULL");
    return writer(s, "vox_session_feed", text, 0, 0, 0, 0, NULL);
}

vox_status vox_session_flush(vox_session *s) { return writer(s, "vox_session_flush", NULL, 1, 0, 0, 0, NULL); }

vox_status vox_session_set_pending(vox_session *s, size_t keep, const char *text, size_t *used) {
    if (!text) return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "vox_session_set_pending: text is NULL");
    return writer(s, "vox_session_set_pending", text, 0, 0, 1, keep, used);
}

vox_status vox_session_end(vox_session *s) { return writer(s, "vox_session_end", NULL, 0, 1, 0, 0, NULL); }

/* Where a sentence ends in t[0..n): after . ! ? ... and the closing quotes or brackets that follow,
 * before white space; 0 when there is none. */
static size_t last_sentence_end(const char *t, size_t n) {
    for (size_t i = n; i > 0; i--) {
        unsigned char c = (unsigned char)t[i - 1];
        if (!(c == ' ' || c == '\n' || c == '\t' || c == '\r')) continue;
        size_t j = i - 1;
        while (j > 0 && (t[j - 1] == '"' || t[j - 1] == '\'' || t[j - 1] == ')' || t[j - 1] == ']')) j--;
        if (j > 0 && (t[j - 1] == '.' || t[j - 1] == '!' || t[j - 1] == '?' || t[j - 1] == ';')) return i;
        /* the multi-byte stops of other scripts and the ellipsis: 。！？… */
        static const char *const stops[] = {"\xe3\x80\x82", "\xef\xbc\x81", "\xef\xbc\x9f", "\xe2\x80\xa6"};
        for (int k = 0; k < 4; k++)
            if (j >= 3 && !memcmp(t + j - 3, stops[k], 3)) return i;
    }
    return 0;
}

static vox_status commit_bytes(vox_session *s, const char *t, size_t n) {
    if (!grow(&s->text, &s->text_cap, s->text_len + n + 1)) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    memcpy(s->text + s->text_len, t, n);
    s->text_len += n;
    s->text[s->text_len] = '\0';
    return VOX_OK;
}

vox_status vx_session_sync(vox_session *s) {
    vox_status st = VOX_OK;
    pthread_mutex_lock(&s->wlock);
    if (s->has_replace) {
        /* the text from `keep` on is replaced, in the committed part too where the model has not used
         * it (a pull since the request may have used more: that much stays) */
        size_t used = s->engine->family->session_used ? s->engine->family->session_used(s) : s->text_len;
        size_t keep = s->keep;
        if (keep < used) keep = used;
        if (keep < s->flush_mark) keep = s->flush_mark;
        size_t n = strlen(s->replace);
        if (keep <= s->text_len) {   /* the cut is in the committed text: the pending text goes */
            s->text_len = keep;
            s->text[keep] = '\0';
            s->wlen = s->wvalid = 0;
        } else {                     /* the cut is in the pending text */
            size_t k = keep - s->text_len;
            s->wlen = s->wvalid = k < s->wlen ? k : s->wlen;
        }
        if (!grow(&s->wtext, &s->wcap, s->wlen + n + 1)) {
            st = vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
        } else {
            memcpy(s->wtext + s->wlen, s->replace, n + 1);
            s->wlen += n;
            s->wvalid = s->wlen;
        }
        free(s->replace);
        s->replace = NULL;
        s->has_replace = 0;
    }
    bool idle = s->stream.idle_ms > 0 && s->wlen + s->text_len > s->flush_mark &&
                vx_now_ms() - s->last_feed_ms >= s->stream.idle_ms;
    bool all = s->end_req || s->flush_req || idle;
    size_t take = s->wvalid;   /* a sequence cut by the last piece waits for its end */
    if (!all && s->stream.commit == VX_COMMIT_MANUAL) take = 0;
    if (!all && s->stream.commit == VX_COMMIT_SENTENCE) take = last_sentence_end(s->wtext, s->wvalid);
    if (st == VOX_OK && take) {
        if ((st = commit_bytes(s, s->wtext, take)) == VOX_OK) {
            memmove(s->wtext, s->wtext + take, s->wlen - take + 1);
            s->wlen -= take;
            s->wvalid -= take;
        }
    }
    if (st == VOX_OK && all) s->flush_mark = s->text_len;
    if (st == VOX_OK && s->end_req) s->ended = 1;
    s->flush_req = 0;
    pthread_mutex_unlock(&s->wlock);
    return st;
}

/* Whether the text holds a letter or a digit (Unicode L or N). */
static int has_words(const char *t, size_t n) {
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        bool incomplete = false;
        size_t len = vx_utf8_decode(t, n, i, &cp, &incomplete);
        if (!len) return 1;   /* cannot happen for checked text; let the family decide */
        int c = vx_uc_class(cp);
        if ((c >= VX_UC_LU && c <= VX_UC_LO) || c == VX_UC_N) return 1;
        i += len;
    }
    return 0;
}

/* After a pull: how much text the model has used, for the writers' set_pending checks. */
static void note_used(vox_session *s) {
    size_t used = s->engine->family->session_used ? s->engine->family->session_used(s) : s->text_len;
    pthread_mutex_lock(&s->wlock);
    s->used = used;
    pthread_mutex_unlock(&s->wlock);
}

vox_status vox_session_pull(vox_session *s, vox_chunk *out) {
    if (!s || !out) return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "vox_session_pull: NULL argument");
    memset(out, 0, sizeof *out);
    vox_status st = enter(s, "vox_session_pull");
    if (st != VOX_OK) return st;
    if ((st = vx_session_sync(s)) != VOX_OK) {
        leave(s);
        return st;
    }
    /* A finished text without a letter or a digit (white space, punctuation, symbols alone) has nothing
     * to speak, for every family: the same error everywhere, not noise from a model made to say
     * something (the text is final once ended: looked at once) */
    if (s->ended && s->words < 0) s->words = has_words(s->text, s->text_len);
    bool blank = s->ended && !s->words;
    if (atomic_load(&s->cancelled))
        st = vox_set_error(VOX_ERR_CANCELLED, "the session was cancelled");
    else if (blank)
        st = vox_set_error(VOX_ERR_INVALID_ARGUMENT, "nothing to speak: the text %s", s->text_len ? "has no words"
                                                                                              : "is empty");
    else
        st = s->engine->family->session_pull(s, out);
    if (st == VOX_OK && out->kind == VOX_CHUNK_AUDIO) vx_stats_samples(s->engine, out->n_samples);
    note_used(s);
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
