/* The Kokoro family: loading, voices (style packs), sessions (text -> spans -> audio chunks) and the
 * verification entry. A voice is a style pack [510][256] kept in vox_voice.embedding; the row used
 * for a span is chosen by its phoneme count, as KPipeline does (pack[len(phonemes) - 1]). */
#include <math.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../error.h"
#include "../family.h"
#include "../strbuf.h"
#include "../tmod.h"
#include "kokoro.h"
#include "session_text.h"
#include "text/frontend.h"
#include "../unicode/unicode.h"

#define KK_PACK_FLOATS ((size_t)KK_PACK_ROWS * 2 * KK_STYLE)

/* ------------------------------------------------------------------------------ options */
typedef struct kk_options {
    float speed;
    int32_t pause_ms;
    int32_t phonemes;                 /* the text is phonemes in the model's symbol set */
    const vox_json *pronunciations;   /* word -> phonemes, applied before G2P */
    int32_t noise;                    /* the sine source's randomness (0: zeroed, as comparisons want) */
} kk_options;

static const vx_option kk_option_table[] = {
    {"speed", VX_OPT_FLOAT, offsetof(kk_options, speed), 0.25, 4.0, 0, 0, NULL,
     "speaking rate: the predicted durations are divided by it"},
    {"pause_ms", VX_OPT_INT, offsetof(kk_options, pause_ms), 0, 10000, 0, 0, NULL,
     "silence between spans (sentences), after each span's own trailing silence is cut"},
    {"phonemes", VX_OPT_BOOL, offsetof(kk_options, phonemes), 0, 0, 0, 0, NULL,
     "the text is already phonemes in the model's symbol set (no text frontend)"},
    {"pronunciations", VX_OPT_JSON, offsetof(kk_options, pronunciations), 0, 0, 0, 0, NULL,
     "a JSON object word -> phonemes, applied before the frontend's own readings"},
    {"noise", VX_OPT_BOOL, offsetof(kk_options, noise), 0, 0, 0, 0, NULL,
     "the harmonic source's randomness (Philox, from the seed); false zeroes it, as the official comparisons do"},
};
static const vx_option_set kk_options_set = {kk_option_table, sizeof kk_option_table / sizeof kk_option_table[0],
                                             sizeof(kk_options)};

static void kk_option_defaults(const vox_engine *e, void *o) {
    (void)e;
    *(kk_options *)o = (kk_options){.speed = 1.0f, .pause_ms = 200, .noise = 1};
}

typedef struct kk_engine {
    kk_model *m;
    kk_vocab vocab;
} kk_engine;

static const char *precision_of(const vox_json *manifest) {
    const vox_json *p = vox_json_get(manifest, "precision"), *d = p ? vox_json_get(p, "dtype") : NULL;
    return d && d->type == VOX_JSON_STRING ? d->str : "f32";
}

static char *build_info(const vox_engine *e, const kk_model *m) {
    vx_buf b = {0};
    const vx_cpu_info *cpu = vx_cpu();
    vx_buf_printf(&b, "{\"family\":\"kokoro\",\"variant\":");
    vx_buf_json_string(&b, m->variant, (size_t)-1);
    vx_buf_printf(&b, ",\"size\":\"82m\",\"model_id\":\"%s\",\"sample_rate\":%d", m->model_id, KK_SAMPLE_RATE);
    vx_buf_printf(&b, ",\"capabilities\":{\"clone\":false,\"speakers\":true,\"instruct\":false,\"design\":false,"
                      "\"speed\":true,\"phoneme_input\":true,\"text_frontend\":%s,\"pronunciations\":%s,"
                      "\"style_voices\":true,\"portable_voices\":true,\"timestamps\":true,"
                      "\"stream\":{\"text_in\":\"chunk\",\"unit\":\"sentence\",\"audio_out\":\"span\",\"exact\":true}}",
                  kk_has_frontend(m) ? "true" : "false", kk_has_frontend(m) ? "true" : "false");
    vx_buf_printf(&b, ",\"speakers\":[");
    const vox_json *spk = vox_json_get(m->manifest, "speakers");
    int i = 0;
    for (const vox_json *c = spk && spk->type == VOX_JSON_ARRAY ? spk->child : NULL; c; c = c->next)
        if (c->type == VOX_JSON_STRING) {
            vx_buf_printf(&b, i++ ? "," : "");
            vx_buf_json_string(&b, c->str, c->str_len);
        }
    const vox_json *ds = vox_json_get(m->manifest, "default_speaker");
    vx_buf_printf(&b, "],\"default_speaker\":");
    if (ds && ds->type == VOX_JSON_STRING)
        vx_buf_json_string(&b, ds->str, ds->str_len);
    else
        vx_buf_printf(&b, "null");
    vx_buf_printf(&b, ",\"languages\":[\"auto\",\"english\"],\"precision\":{\"weights\":");
    vx_buf_json_string(&b, precision_of(m->manifest), (size_t)-1);
    vx_buf_printf(&b, ",\"generator_math\":\"%s\",\"generator_math_why\":", m->gen_math ? m->gen_math : "f32");
    vx_buf_json_string(&b, m->gen_math_why ? m->gen_math_why : "", (size_t)-1);
    vx_buf_printf(&b, "},\"threads\":%d,\"cpu\":", vx_pool_size(e->pool));
    vx_buf_json_string(&b, cpu->name, (size_t)-1);
    vx_buf_printf(&b, "}");
    return vx_buf_take(&b);
}

static void kk_unload(vox_engine *e) {
    kk_engine *k = e->impl;
    if (!k) return;
    kk_model_free(k->m);
    free(k);
    e->impl = NULL;
}

static vox_status kk_load(vox_engine *e) {
    kk_engine *k = calloc(1, sizeof *k);
    if (!k) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    vox_status st = kk_model_load(e->model, e->manifest, &k->m);
    if (st == VOX_OK) st = kk_vocab_build(k->m->vocab, &k->vocab);
    if (st != VOX_OK) {
        if (k->m) kk_model_free(k->m);
        free(k);
        return st;
    }
    e->impl = k;
    e->info = build_info(e, k->m);
    if (!e->info) {
        kk_unload(e);
        return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    }
    return VOX_OK;
}

/* vox_engine_tokenize: phonemes -> the model input [0] + ids + [0] (unknown symbols skipped). */
static vox_status kk_tokenize(vox_engine *e, const char *text, int32_t *ids, size_t capacity, size_t *n_ids) {
    kk_engine *k = e->impl;
    size_t len = strlen(text), n = 0;
    int32_t *all = malloc((len + 2) * sizeof *all);
    if (!all) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    kk_vocab_ids(&k->vocab, text, len, all, &n, NULL);
    if (ids) memcpy(ids, all, (n < capacity ? n : capacity) * sizeof *ids);
    *n_ids = n;
    free(all);
    return VOX_OK;
}

static vox_status fill_voice(kk_engine *k, vox_voice *v, const char *name, const float *pack) {
    v->family = vx_strdup("kokoro");
    v->mode = vx_strdup("style");
    v->model_id = vx_strdup(k->m->model_id);
    v->variant = vx_strdup(k->m->variant);
    v->name = vx_strdup(name);
    /* the language the pack's name gives (a: American, b: British English, j: Japanese): a note for the
     * user; a session speaks what the frontend reads */
    v->language = vx_strdup(name[0] == 'a' ? "en-us" : name[0] == 'b' ? "en-gb" : name[0] == 'j' ? "ja" : "auto");
    float *copy = malloc(KK_PACK_FLOATS * sizeof *copy);
    if (!v->family || !v->mode || !v->model_id || !v->variant || !v->name || !v->language || !copy) {
        free(copy);
        return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    }
    memcpy(copy, pack, KK_PACK_FLOATS * sizeof *copy);
    vox_status st = vx_voice_put_text(v, "speaker", name);
    int64_t shape[2] = {KK_PACK_ROWS, 2 * KK_STYLE};
    return st == VOX_OK ? vx_voice_put_array(v, "style_pack", VOX_DTYPE_F32, 2, shape, copy) : (free(copy), st);
}

static vox_status kk_voice_speaker(vox_engine *e, const char *speaker, const char *instruct, vox_voice *v) {
    kk_engine *k = e->impl;
    if (instruct && *instruct)
        return vox_set_error(VOX_ERR_UNSUPPORTED, "Kokoro voices take no instruction (got \"%s\")", instruct);
    char canon[128];
    const float *pack = kk_speaker_pack(k->m, speaker, canon, sizeof canon);
    if (!pack) return VOX_ERR_NOT_FOUND;
    return fill_voice(k, v, canon, pack);
}

static vox_status kk_voice_check(vox_engine *e, const vox_voice *v) {
    (void)e;
    const vx_voice_array *pack = vx_voice_get_array(v, "style_pack");
    if (!pack || pack->count != KK_PACK_FLOATS)
        return vox_set_error(VOX_ERR_FORMAT, "a Kokoro voice is a style pack of %d x %d floats; this one has %zu",
                             KK_PACK_ROWS, 2 * KK_STYLE, pack ? pack->count : 0);
    /* finite, but so large that the durations it predicts would be garbage: refused, not undefined */
    const float *f = pack->data;
    for (size_t i = 0; i < pack->count; i++)
        if (!(fabsf(f[i]) <= 1e4f))
            return vox_set_error(VOX_ERR_FORMAT, "the voice's style pack holds %g at [%zu][%zu]: style values are "
                                 "a few units at most", (double)f[i], i / (2 * KK_STYLE), i % (2 * KK_STYLE));
    return VOX_OK;
}

static const vx_voice_array_spec kk_voice_arrays[] = {{"style_pack", VOX_DTYPE_F32, 2, {KK_PACK_ROWS, 2 * KK_STYLE}}};
static const char *const kk_voice_texts[] = {"speaker", NULL};
static const vx_voice_mode kk_voice_modes[] = {{"style", "v1.0", {"style_pack"}, {NULL}, NULL}};
static const vx_voice_schema kk_voices = {kk_voice_arrays, 1, kk_voice_texts, kk_voice_modes, 1, 1};

/* ------------------------------------------------------------------------------ sessions */
typedef struct kk_sess {
    kk_engine *k;
    size_t pos;            /* bytes of the session text consumed into spans */
    uint32_t span;         /* spans synthesized so far */
    float *out;            /* the chunk being returned */
    int done, emitted;
    double stage_ms[KK_STAGES];
    uint64_t tot_samples, tot_frames;
    vx_buf pend;           /* phonemes left over from a span longer than the model's limit */
    vx_kfront_words words, pend_words;  /* the span's words (and those of the left-over phonemes) */
    float *dur;            /* the last forward pass's durations (tap), [dur_n] */
    int64_t dur_n;
    uint64_t emitted_samples; /* samples returned so far: where the next chunk starts */
    vx_buf stamps;         /* the last chunk's word timestamps (JSON), vox_session_output "timestamps" */
} kk_sess;

/* The forward pass's durations, for the word timestamps (the tap of every other stage is ignored). */
static void keep_durations(void *ctx, const char *name, const float *data, int64_t rows, int64_t cols) {
    kk_sess *q = ctx;
    if (strcmp(name, "durations") != 0) return;
    float *d = realloc(q->dur, (size_t)(rows * cols) * sizeof *d + 1);
    if (!d) return;
    memcpy(d, data, (size_t)(rows * cols) * sizeof *d);
    q->dur = d;
    q->dur_n = rows * cols;
}

/* The chunk's words as [{"word", "start", "end"}] in seconds from the session's first sample: a word
 * spans its phonemes' tokens, a duration unit is KK_HOP * 2 samples, `pause` samples lead the span,
 * and the trimmed tail clamps the last words. */
static void stamp_words(kk_sess *q, const kk_vocab *vocab, const char *ph, size_t ph_len, int64_t pause, int64_t keep) {
    vx_buf *b = &q->stamps;
    b->len = 0;
    if (b->s) b->s[0] = '\0';
    vx_buf_printf(b, "[");
    /* the token index of every phoneme character (unknown symbols have none: kk_vocab_ids skips them) */
    size_t n_cp = 0;
    for (size_t i = 0; i < ph_len; i++) n_cp += ((unsigned char)ph[i] & 0xC0) != 0x80;
    int64_t *start = malloc((n_cp + 2) * sizeof *start);   /* start sample of character c, c <= n_cp */
    if (!start || !q->dur) {
        free(start);
        vx_buf_printf(b, "]");
        return;
    }
    int64_t tok = 1, t = 0;   /* token 0 is the leading pad */
    double acc = q->dur_n > 0 ? q->dur[0] : 0;
    size_t c = 0;
    for (size_t i = 0; i < ph_len && c <= n_cp;) {
        uint32_t cp;
        size_t k = vx_utf8_decode(ph, ph_len, i, &cp, NULL);
        if (!k) k = 1;
        start[c++] = (int64_t)(acc * 2 * KK_HOP);
        bool known = false;
        for (int j = 0; j < vocab->n && !known; j++) known = vocab->cp[j] == cp;
        if (known && tok < q->dur_n) acc += q->dur[tok++];
        i += k;
        (void)t;
    }
    start[c] = (int64_t)(acc * 2 * KK_HOP);
    int first = 1;
    for (size_t w = 0; w < q->words.n; w++) {
        const vx_kfront_word *x = &q->words.v[w];
        if (x->c0 >= x->c1 || x->c1 > c) continue;
        int64_t a = start[x->c0], e = start[x->c1];
        if (a >= keep) break;
        if (e > keep) e = keep;
        double t0 = (double)(q->emitted_samples + (uint64_t)(pause + a)) / KK_SAMPLE_RATE;
        double t1 = (double)(q->emitted_samples + (uint64_t)(pause + e)) / KK_SAMPLE_RATE;
        vx_buf_printf(b, "%s{\"word\":", first ? "" : ",");
        vx_buf_json_string(b, q->words.text.s + x->off, x->len);
        vx_buf_printf(b, ",\"start\":%.4f,\"end\":%.4f}", t0, t1);
        first = 0;
    }
    vx_buf_printf(b, "]");
    free(start);
}

static vox_status kk_options_check(const vox_engine *e, const void *opts) {
    const kk_options *o = opts;
    const kk_engine *k = e->impl;
    if (o->pronunciations && o->phonemes)
        return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "pronunciations apply to text, not to phoneme input");
    if (o->pronunciations && k->m->front) return vx_kfront_check_overrides(k->m->front, o->pronunciations);
    return VOX_OK;
}

static vox_status kk_session_init(vox_session *s) {
    const kk_options *o = s->opts;
    kk_sess *q = calloc(1, sizeof *q);
    if (!q) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    q->k = s->engine->impl;
    if (!o->phonemes && !kk_has_frontend(q->k->m)) {
        vox_status st = vox_set_error(VOX_ERR_UNSUPPORTED, "%s has no English text frontend data: give phonemes "
                                      "(the phonemes option) or rebuild the model with `vox build`",
                                      vox_model_path(q->k->m->file));
        free(q);
        return st;
    }
    s->impl = q;
    return VOX_OK;
}

static void kk_session_free(vox_session *s) {
    kk_sess *q = s->impl;
    if (!q) return;
    const char *prof = getenv("VOX_PROFILE");
    if (prof && prof[0] && strcmp(prof, "0") != 0) {
        double total = 0.0, audio_ms = (double)q->tot_samples * 1000.0 / KK_SAMPLE_RATE;
        fprintf(stderr, "vox profile: %u spans, %llu frames;", q->span, (unsigned long long)q->tot_frames);
        for (int i = 0; i < KK_STAGES; i++) {
            fprintf(stderr, " %s %.1f ms", kk_stage_names[i], q->stage_ms[i]);
            total += q->stage_ms[i];
        }
        fprintf(stderr, "; total %.1f ms for %.1f ms of audio (RTF %.3f)\n", total, audio_ms,
                audio_ms > 0 ? total / audio_ms : 0.0);
    }
    free(q->out);
    vx_buf_free(&q->pend);
    vx_kfront_words_free(&q->words);
    vx_kfront_words_free(&q->pend_words);
    free(q->dur);
    vx_buf_free(&q->stamps);
    free(q);
    s->impl = NULL;
}

/* Zero non-finite samples, cut the model's trailing silence (~300-450 ms per span) and fade the cut. */
static int64_t trim_tail(float *x, int64_t n) {
    float peak = 0.0f;
    for (int64_t i = 0; i < n; i++) {
        if (!isfinite(x[i])) x[i] = 0.0f;
        float a = fabsf(x[i]);
        if (a > peak) peak = a;
    }
    const float thr = peak * KK_TRIM_REL > KK_TRIM_ABS ? peak * KK_TRIM_REL : KK_TRIM_ABS;
    int64_t last = -1;
    for (int64_t i = n - 1; i >= 0; i--)
        if (fabsf(x[i]) > thr) {
            last = i;
            break;
        }
    int64_t keep = last + 1 + KK_TRIM_KEEP;
    if (keep > n) keep = n;
    int64_t fade = keep < KK_TRIM_FADE ? keep : KK_TRIM_FADE;
    for (int64_t i = 0; i < fade; i++) x[keep - fade + i] *= (float)(fade - i) / (float)(fade + 1);
    return keep;
}

/* Whether phonemes hold something to say: a symbol that is not punctuation or a space (a span of
 * punctuation alone would make the model utter noise for it). */
static bool speakable(const char *ph, size_t len) {
    static const char *const quiet = " ;:,.!?\xc2\xa1\xc2\xbf\xe2\x80\x94\xe2\x80\xa6\"\xc2\xab\xc2\xbb\xe2\x80\x9c\xe2\x80\x9d()";
    for (size_t i = 0; i < len;) {
        uint32_t cp;
        size_t n = vx_utf8_decode(ph, len, i, &cp, NULL);
        if (!n) return true;
        char sym[5] = {0};
        memcpy(sym, ph + i, n);
        if (!strstr(quiet, sym)) return true;
        i += n;
    }
    return false;
}

/* Phoneme input must use the model's symbols only (as pronunciations must): an unknown symbol is an
 * error that names it, never silently dropped. */
static vox_status check_symbols(const kk_vocab *vocab, const char *ph, size_t len) {
    for (size_t i = 0; i < len;) {
        uint32_t cp;
        size_t n = vx_utf8_decode(ph, len, i, &cp, NULL);
        if (!n) return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "the phonemes are not valid UTF-8 (at byte %zu)", i);
        bool known = false;
        for (int j = 0; j < vocab->n && !known; j++) known = vocab->cp[j] == cp;
        if (!known) {
            char sym[24];
            return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "phoneme input: symbol %s at byte %zu is not in the Kokoro "
                                 "vocabulary", vx_utf8_shown(sym, sizeof sym, cp), i);
        }
        i += n;
    }
    return VOX_OK;
}

/* The text a session has turned into spans: what a set_pending may no longer change. */
static size_t kk_session_used(const vox_session *s) {
    const kk_sess *q = s->impl;
    return q ? q->pos : s->text_len;
}

static vox_status kk_session_pull(vox_session *s, vox_chunk *out) {
    kk_sess *q = s->impl;
    kk_engine *k = q->k;
    const kk_options *o = s->opts;
    out->sample_rate = KK_SAMPLE_RATE;
    if (q->done) {
        out->kind = VOX_CHUNK_END;
        return VOX_OK;
    }
    for (;;) {
        const char *text = s->text + q->pos;
        size_t avail = s->text_len - q->pos, consumed = 0, span_len;
        int final = s->ended;
        if (!s->ended && s->flush_mark > q->pos) { /* flushed: the text up to the mark is complete */
            avail = s->flush_mark - q->pos;
            final = 1;
            if (kk_only_space(text, avail)) {
                q->pos = s->flush_mark;
                continue;
            }
        }
        vx_buf ph = {0};
        vox_status st;
        vx_kfront_words_free(&q->words);
        if (q->pend.len) { /* the rest of a span that had more phonemes than the model takes */
            ph = q->pend;
            memset(&q->pend, 0, sizeof q->pend);
            q->words = q->pend_words;
            memset(&q->pend_words, 0, sizeof q->pend_words);
        } else {
            st = kk_next_span(k->m, o->phonemes, text, avail, final, &span_len, &consumed);
            if (st != VOX_OK) return st;
            if (consumed == 0) {
                if (!s->ended) {
                    out->kind = VOX_CHUNK_NEED_TEXT;
                    return VOX_OK;
                }
                q->done = 1;
                if (!q->emitted)
                    return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "nothing to speak: the text has no words");
                out->kind = VOX_CHUNK_AUDIO; /* the last span had unspeakable text after it */
                out->is_last = 1;
                return VOX_OK;
            }
            if ((st = kk_phonemes(k->m, o->phonemes, text, span_len, o->pronunciations, &ph,
                                  o->phonemes ? NULL : &q->words)) != VOX_OK ||
                (o->phonemes && (st = check_symbols(&k->vocab, ph.s ? ph.s : "", ph.len)) != VOX_OK)) {
                vx_buf_free(&ph);
                return st;
            }
            q->pos += consumed;
        }
        /* more phonemes than one forward pass takes: speak up to the last word boundary that fits, keep
         * the rest for the next pull */
        size_t cut = kk_phoneme_cut(ph.s ? ph.s : "", ph.len, KK_MAX_PHONEMES);
        if (cut < ph.len) {
            size_t rest = cut;
            while (rest < ph.len && ph.s[rest] == ' ') rest++;
            vx_buf_append(&q->pend, ph.s + rest, ph.len - rest);
            /* the words after the cut go with the rest, their characters counted from it */
            size_t rest_c = 0;
            for (size_t i = 0; i < rest; i++) rest_c += ((unsigned char)ph.s[i] & 0xC0) != 0x80;
            size_t kept = 0;
            for (size_t w = 0; w < q->words.n; w++) {
                vx_kfront_word x = q->words.v[w];
                if (x.c0 < rest_c) {
                    q->words.v[kept++] = x;
                    continue;
                }
                x.c0 -= rest_c, x.c1 -= rest_c;
                size_t off = q->pend_words.text.len;
                vx_buf_append(&q->pend_words.text, q->words.text.s + x.off, x.len);
                x.off = off;
                if (q->pend_words.n == q->pend_words.cap) {
                    size_t cap = q->pend_words.cap ? 2 * q->pend_words.cap : 16;
                    vx_kfront_word *v = realloc(q->pend_words.v, cap * sizeof *v);
                    if (!v) break;
                    q->pend_words.v = v, q->pend_words.cap = cap;
                }
                q->pend_words.v[q->pend_words.n++] = x;
            }
            q->words.n = kept;
            ph.len = cut;
            if (q->pend.failed) {
                vx_buf_free(&ph);
                return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
            }
        }
        size_t n_ph = 0, cps = 0;
        int32_t *ids = malloc((ph.len + 2) * sizeof *ids);
        if (!ids) {
            vx_buf_free(&ph);
            return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
        }
        kk_vocab_ids(&k->vocab, ph.s ? ph.s : "", ph.len, ids, &n_ph, &cps);
        bool say = speakable(ph.s ? ph.s : "", ph.len);
        if (n_ph <= 2 || !say) { /* nothing speakable in this span */
            vx_buf_free(&ph);
            free(ids);
            continue;
        }
        if (n_ph - 2 > KK_MAX_PHONEMES) {
            free(ids);
            vx_buf_free(&ph);
            return vox_set_error(VOX_ERR_LIMIT, "a span has %zu phonemes; Kokoro takes at most %d", n_ph - 2,
                                 KK_MAX_PHONEMES);
        }
        size_t row = cps < 1 ? 0 : cps > KK_PACK_ROWS ? KK_PACK_ROWS - 1 : cps - 1;
        const float *style = (const float *)vx_voice_get_array(s->voice, "style_pack")->data + row * 2 * KK_STYLE;
        kk_forward_opts fo = {.speed = o->speed, .seed = s->seed, .span = q->span, .noise = o->noise,
                              .cancel = &s->cancelled, .stage_ms = q->stage_ms, .tap = keep_durations, .tap_ctx = q};
        float *audio = NULL;
        int64_t n_audio = 0;
        double before[KK_STAGES];
        memcpy(before, q->stage_ms, sizeof before);
        uint32_t fp = vx_fp_fast();
        st = kk_forward(k->m, s->engine->pool, ids, (int64_t)n_ph, style, &fo, &audio, &n_audio);
        vx_fp_restore(fp);
        free(ids);
        if (st != VOX_OK) {
            vx_buf_free(&ph);
            return st;
        }
        for (int64_t i = 0; i < n_audio; i++)
            if (!isfinite(audio[i])) { /* the model produced NaN/inf: corrupt weights, not audio to trim away */
                free(audio);
                vx_buf_free(&ph);
                return vox_set_error(VOX_ERR_FORMAT, "the model produced non-finite audio (sample %lld of span %u): "
                                     "its weights are corrupt (vox inspect --check MODEL)", (long long)i, q->span);
            }
        int64_t keep = trim_tail(audio, n_audio);
        int64_t pause = q->span > 0 ? (int64_t)o->pause_ms * KK_SAMPLE_RATE / 1000 : 0;
        stamp_words(q, &k->vocab, ph.s ? ph.s : "", ph.len, pause, keep);
        vx_buf_free(&ph);
        free(q->out);
        q->out = malloc((size_t)(pause + keep) * sizeof *q->out + 1);
        if (!q->out) {
            free(audio);
            return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
        }
        memset(q->out, 0, (size_t)pause * sizeof *q->out);
        memcpy(q->out + pause, audio, (size_t)keep * sizeof *q->out);
        free(audio);
        for (int i = 0; i < KK_STAGES; i++) vx_stats_stage(s->engine, i, q->stage_ms[i] - before[i], 1);
        q->tot_samples += (uint64_t)(pause + keep);
        q->emitted_samples += (uint64_t)(pause + keep);
        q->tot_frames += (uint64_t)n_audio / (2 * KK_HOP); /* predictor frames */
        out->kind = VOX_CHUNK_AUDIO;
        out->samples = q->out;
        out->n_samples = (size_t)(pause + keep);
        out->first_frame = q->span;
        out->n_frames = 1;
        q->span++;
        q->emitted = 1;
        /* last: the text is complete and nothing but whitespace remains */
        if (s->ended && !q->pend.len && kk_only_space(s->text + q->pos, s->text_len - q->pos)) {
            out->is_last = 1;
            q->done = 1;
        }
        return VOX_OK;
    }
}

/* "timestamps": the words of the last chunk and when they are spoken (UTF-8 JSON, vox.h). */
static vox_status kk_session_output(vox_session *s, const char *name, vox_array *out) {
    kk_sess *q = s->impl;
    (void)name;
    static const char empty[] = "[]";
    const char *j = q->stamps.s && q->stamps.len ? q->stamps.s : empty;
    out->name = "timestamps";
    out->dtype = VOX_DTYPE_U8;
    out->ndim = 1;
    out->shape[0] = (int64_t)strlen(j);
    out->data = j;
    return VOX_OK;
}

static const char *const kk_session_outputs[] = {"timestamps", NULL};

/* ------------------------------------------------------------------------------ verification */
typedef struct tap_ctx {
    atomic_int stop;     /* set once every requested tap is kept: the rest of the forward pass is skipped */
    vox_trace *trace;
    int complete;
    vox_status failed;
} tap_ctx;

static void tap_keep(void *ctx, const char *name, const float *data, int64_t rows, int64_t cols) {
    tap_ctx *c = ctx;
    if (c->failed) return;
    int64_t shape[2] = {rows, cols};
    c->failed = vx_trace_put(c->trace, name, VOX_DTYPE_F32, 2, shape, data);
    if (c->failed || vx_trace_complete(c->trace)) {
        c->complete = !c->failed;
        atomic_store(&c->stop, 1);
    }
}

/* forward: ids (I32 [n], the model input [0] + phoneme ids + [0]) and style (F32 [256], a voice pack
 * row) through the model with the session's speed, seed and noise; every stage's output is a tap.
 * Optional durations (I32 [n]) replace the predicted ones: the stages after the alignment then run on
 * the official model's alignment even where a rounding moved one of ours (q8 weights). */
static vox_status kk_run(vox_engine *e, vox_session *s, const vx_entry *entry, const vox_array *in, size_t n_in,
                         vox_trace *t) {
    (void)entry;
    kk_engine *k = e->impl;
    const kk_options *o = s->opts;
    const vox_array *ids = vx_run_input(in, n_in, "ids"), *style = vx_run_input(in, n_in, "style");
    if (!ids || ids->dtype != VOX_DTYPE_I32 || ids->ndim != 1 || ids->shape[0] < 1)
        return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "forward: needs ids, I32 [n]");
    if (!style || style->dtype != VOX_DTYPE_F32 || vx_array_count(style) != 2 * KK_STYLE)
        return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "forward: needs style, F32 [%d] (a voice pack row)", 2 * KK_STYLE);
    const vox_array *dur = vx_run_input(in, n_in, "durations");
    if (dur) {
        if (dur->dtype != VOX_DTYPE_I32 || dur->ndim != 1 || dur->shape[0] != ids->shape[0])
            return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "forward: durations must be I32 [%lld], one per id",
                                 (long long)ids->shape[0]);
        const int32_t *d = dur->data;
        int64_t frames = 0;
        for (int64_t i = 0; i < dur->shape[0]; i++) {
            if (d[i] < 0 || d[i] > 1000)
                return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "forward: duration %lld is %d (0 to 1000 frames)",
                                     (long long)i, d[i]);
            frames += d[i];
        }
        if (frames < 1) return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "forward: the durations sum to no frame");
    }
    tap_ctx c = {.trace = t};
    atomic_init(&c.stop, 0);
    kk_forward_opts fo = {.speed = o->speed, .seed = s->seed, .noise = o->noise, .tap = tap_keep, .tap_ctx = &c,
                          .cancel = &c.stop, .durations = dur ? dur->data : NULL};
    float *audio = NULL;
    int64_t n_audio;
    uint32_t fp = vx_fp_fast();
    vox_status st = kk_forward(k->m, e->pool, ids->data, ids->shape[0], style->data, &fo, &audio, &n_audio);
    vx_fp_restore(fp);
    free(audio);
    if (st == VOX_ERR_CANCELLED && c.complete) {   /* stopped once every requested tap was kept */
        vox_clear_error();
        st = VOX_OK;
    }
    if (st == VOX_OK && c.failed) st = c.failed;
    return st;
}

static const vx_entry kk_entries[] = {
    {"forward", 1, "ids (I32 [n]: [0] + phoneme ids + [0]), style (F32 [256]: a voice pack row); optional "
                   "durations (I32 [n]: frames per id in place of the predicted ones)",
     "bert, d_en, d, dur_raw, durations, en, t_en, F0, N, dec, har_source, har, spec, audio",
     "one span through the model with the session's speed, seed and noise option"},
};

const vx_family vx_family_kokoro = {
    .name = "kokoro",
    .check_manifest = kk_check_manifest,
    .load = kk_load,
    .unload = kk_unload,
    .stages = kk_stage_names,
    .tokenize = kk_tokenize,
    .voices = &kk_voices,
    .voice_speaker = kk_voice_speaker,
    .voice_check = kk_voice_check,
    .synth_options = &kk_options_set,
    .option_defaults = kk_option_defaults,
    .options_check = kk_options_check,
    .session_init = kk_session_init,
    .session_pull = kk_session_pull,
    .session_free = kk_session_free,
    .session_used = kk_session_used,
    .session_outputs = kk_session_outputs,
    .session_output = kk_session_output,
    .entries = kk_entries,
    .n_entries = sizeof kk_entries / sizeof kk_entries[0],
    .run = kk_run,
};
