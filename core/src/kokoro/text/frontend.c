/* The Kokoro English frontend: data from the .tmod, overrides, and the span -> phonemes path. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "kokoro/text/frontend.h"
#include "kokoro/text/text_internal.h"
#include "unicode/unicode.h"

#define MAX_OVERRIDE_WORD 64

struct vx_kfront {
    kt_lexicon lexicon;
    kt_lexicon final;  /* phrase-final readings; count 0 when the model has none */
    /* the model vocab's symbols (one code point each), for validating overrides */
    uint32_t *vocab;
    size_t vocab_n;
};

vox_status vx_kfront_create(const vox_model *model, const vox_json *manifest, vx_kfront **out) {
    if (!model || !manifest || !out) return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "vx_kfront_create: NULL argument");
    *out = NULL;
    const vox_json *fe = vox_json_get(manifest, "frontend");
    if (!fe || fe->type != VOX_JSON_OBJECT)
        return vox_set_error(VOX_ERR_FORMAT, "Kokoro model: the manifest has no \"frontend\" object");
    if (!vox_json_is_string(vox_json_get(fe, "format"), "vox.kokoro.frontend"))
        return vox_set_error(VOX_ERR_FORMAT, "Kokoro model: frontend.format is not \"vox.kokoro.frontend\"");
    uint64_t ver;
    if (!vox_json_get_uint(vox_json_get(fe, "format_version"), 1000, &ver) || ver != 1)
        return vox_set_error(VOX_ERR_FORMAT, "Kokoro model: frontend.format_version is not 1 (newer vox needed?)");
    const vox_json *lexname = vox_json_get(fe, "lexicon");
    if (!lexname || lexname->type != VOX_JSON_STRING)
        return vox_set_error(VOX_ERR_FORMAT, "Kokoro model: frontend.lexicon names no tensor");
    vox_tensor_info ti;
    if (vox_model_find_tensor(model, lexname->str, &ti) != VOX_OK || ti.dtype != VOX_DTYPE_U8 || ti.ndim != 1)
        return vox_set_error(VOX_ERR_FORMAT, "Kokoro model: frontend lexicon tensor \"%s\" is missing or not 1-D u8",
                             lexname->str);
    /* the phrase-final table is optional (absent: every word takes its default reading) */
    const vox_json *finname = vox_json_get(fe, "lexicon_final");
    vox_tensor_info tf = {0};
    if (finname) {
        if (finname->type != VOX_JSON_STRING || vox_model_find_tensor(model, finname->str, &tf) != VOX_OK ||
            tf.dtype != VOX_DTYPE_U8 || tf.ndim != 1)
            return vox_set_error(VOX_ERR_FORMAT, "Kokoro model: frontend.lexicon_final names no 1-D u8 tensor");
    }
    return vx_kfront_create_raw(ti.data, (size_t)ti.nbytes, finname ? tf.data : NULL, (size_t)tf.nbytes,
                                vox_json_get(vox_json_get(manifest, "config"), "vocab"), out);
}

vox_status vx_kfront_create_raw(const void *lexicon, size_t nbytes, const void *final, size_t final_nbytes,
                                const vox_json *vocab, vx_kfront **out) {
    if (!out) return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "vx_kfront_create: NULL argument");
    *out = NULL;
    if (!vocab || vocab->type != VOX_JSON_OBJECT || !vocab->count)
        return vox_set_error(VOX_ERR_FORMAT, "Kokoro model: config.vocab is missing");
    vx_kfront *f = calloc(1, sizeof *f);
    if (!f) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    vox_status st = kt_lexicon_init(&f->lexicon, lexicon, nbytes);
    if (st != VOX_OK) {
        free(f);
        return st;
    }
    f->vocab = malloc(vocab->count * sizeof *f->vocab);
    if (!f->vocab) {
        free(f);
        return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    }
    if (final) {
        st = kt_lexicon_init(&f->final, final, final_nbytes);
        if (st != VOX_OK) {
            vx_kfront_destroy(f);
            return st;
        }
    }
    for (const vox_json *v = vocab->child; v; v = v->next) {
        uint32_t cp;
        size_t k = vx_utf8_decode(v->key, v->key_len, 0, &cp, NULL);
        if (k == 0 || k != v->key_len) {
            vx_kfront_destroy(f);
            return vox_set_error(VOX_ERR_FORMAT, "Kokoro model: config.vocab key is not one character");
        }
        f->vocab[f->vocab_n++] = cp;
    }
    *out = f;
    return VOX_OK;
}

void vx_kfront_destroy(vx_kfront *f) {
    if (!f) return;
    free(f->vocab);
    free(f);
}

static bool in_vocab(const vx_kfront *f, uint32_t cp) {
    for (size_t i = 0; i < f->vocab_n; i++)
        if (f->vocab[i] == cp) return true;
    return false;
}

/* Words one token each, mapped to non-empty phonemes of the model's vocabulary. */
vox_status vx_kfront_check_overrides(const vx_kfront *f, const vox_json *root) {
    char q[80];
    if (!root) return VOX_OK;
    if (root->type != VOX_JSON_OBJECT)
        return vox_set_error(VOX_ERR_INVALID_ARGUMENT,
                             "pronunciation overrides: expected a JSON object mapping words to phonemes");
    for (const vox_json *v = root->child; v; v = v->next) {
        vox_json_quote(q, sizeof q, v->key, v->key_len);
        bool bad_word = v->key_len == 0 || v->key_len > MAX_OVERRIDE_WORD || memchr(v->key, 0, v->key_len);
        for (size_t i = 0; i < v->key_len && !bad_word; i++)
            bad_word = strchr(" \t\n\r", v->key[i]) != NULL;
        if (bad_word)
            return vox_set_error(VOX_ERR_INVALID_ARGUMENT,
                                 "pronunciation overrides: bad word %s (one word, 1 to %d bytes)", q, MAX_OVERRIDE_WORD);
        if (v->type != VOX_JSON_STRING || v->str_len == 0)
            return vox_set_error(VOX_ERR_INVALID_ARGUMENT,
                                 "pronunciation overrides: %s must map to a non-empty string of phonemes", q);
        for (size_t i = 0; i < v->str_len;) {
            uint32_t cp;
            size_t k = vx_utf8_decode(v->str, v->str_len, i, &cp, NULL);
            if (k == 0)
                return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "override %s: the phonemes are not valid UTF-8 (at byte %zu)",
                                     q, i);
            if (!in_vocab(f, cp)) {
                char sym[24];
                return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "override %s: symbol %s is not in the Kokoro vocabulary", q,
                                     vx_utf8_shown(sym, sizeof sym, cp));
            }
            i += k;
        }
    }
    return VOX_OK;
}

static vox_status parse_overrides(const vx_kfront *f, const char *json, vt_overrides *ov) {
    memset(ov, 0, sizeof *ov);
    if (!json || !*json) return VOX_OK;
    vox_json_error err;
    vox_status st = vox_json_parse(json, strlen(json), &ov->doc, &err);
    if (st == VOX_ERR_OUT_OF_MEMORY) return vox_set_error(st, "out of memory");
    if (st != VOX_OK)
        return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "pronunciation overrides: not valid JSON (%s at offset %zu)",
                             err.message, err.offset);
    const vox_json *root = vox_json_root(ov->doc);
    if ((st = vx_kfront_check_overrides(f, root)) != VOX_OK) {
        vox_json_free(ov->doc);
        ov->doc = NULL;
        return st;
    }
    ov->obj = root;
    return VOX_OK;
}

static vox_status phonemize(const vx_kfront *f, const char *span, size_t len, vt_overrides *ov, vx_buf *out,
                            vx_kfront_words *words) {
    vt_items items = {0};
    kt_word_spans ws = {0};
    vt_normalize(ov, span ? span : "", len, &items);
    if (!items.failed) kt_g2p(&f->lexicon, f->final.count ? &f->final : NULL, ov, &items, out, words ? &ws : NULL);
    bool failed = items.failed || out->failed || ws.failed;
    if (!failed && words) {   /* the words' own text, and where their phonemes are */
        for (size_t i = 0; i < ws.n && !words->text.failed; i++) {
            const vt_item *it = &items.v[ws.v[i].item];
            vx_kfront_word w = {words->text.len, it->len, ws.v[i].c0, ws.v[i].c1};
            vx_buf_append(&words->text, vt_item_text(&items, ws.v[i].item), it->len);
            if (words->n == words->cap) {
                size_t cap = words->cap ? 2 * words->cap : 16;
                vx_kfront_word *v = realloc(words->v, cap * sizeof *v);
                if (!v) {
                    failed = true;
                    break;
                }
                words->v = v, words->cap = cap;
            }
            words->v[words->n++] = w;
        }
        failed |= words->text.failed;
    }
    free(ws.v);
    vt_items_free(&items);
    return failed ? vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory in the text frontend") : VOX_OK;
}

void vx_kfront_words_free(vx_kfront_words *w) {
    free(w->v);
    vx_buf_free(&w->text);
    memset(w, 0, sizeof *w);
}

vox_status vx_kfront_phonemize_with(const vx_kfront *f, const char *span, size_t len, const vox_json *overrides,
                                    vx_buf *out, vx_kfront_words *words) {
    if (!f || (!span && len) || !out)
        return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "vx_kfront_phonemize: NULL argument");
    if (vx_utf8_valid_prefix(span, len) != len)
        return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "text is not valid UTF-8 (at byte %zu)",
                             vx_utf8_valid_prefix(span, len));
    vox_status st = vx_kfront_check_overrides(f, overrides);
    if (st != VOX_OK) return st;
    vt_overrides ov = {.obj = overrides};
    return phonemize(f, span, len, &ov, out, words);
}

vox_status vx_kfront_phonemize(const vx_kfront *f, const char *span, size_t len, const char *overrides_json,
                               vx_buf *out) {
    if (!f || (!span && len) || !out)
        return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "vx_kfront_phonemize: NULL argument");
    if (vx_utf8_valid_prefix(span, len) != len)
        return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "text is not valid UTF-8 (at byte %zu)",
                             vx_utf8_valid_prefix(span, len));
    vt_overrides ov;
    vox_status st = parse_overrides(f, overrides_json, &ov);
    if (st != VOX_OK) return st;
    st = phonemize(f, span, len, &ov, out, NULL);
    vox_json_free(ov.doc);
    return st;
}
