/* Kokoro session text: sentence spans, the phoneme -> token mapping, and (until the text frontend is
 * built in) phoneme input only. */
#include <string.h>

#include "../error.h"
#include "../tmod.h"
#include "session_text.h"
#include "text/frontend.h"

static size_t utf8_next(const char *s, size_t len, size_t i, uint32_t *cp) {
    const unsigned char *u = (const unsigned char *)s;
    unsigned c = u[i];
    size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 1;
    if (i + n > len) n = 1;
    uint32_t v = n == 1 ? c : n == 2 ? c & 31 : n == 3 ? c & 15 : c & 7;
    for (size_t j = 1; j < n; j++) v = (v << 6) | (u[i + j] & 63);
    *cp = v;
    return n;
}

vox_status kk_vocab_build(const vox_json *vocab, kk_vocab *out) {
    memset(out, 0, sizeof *out);
    for (const vox_json *c = vocab ? vocab->child : NULL; c; c = c->next) {
        uint32_t cp;
        if (!c->key || !c->key_len || utf8_next(c->key, c->key_len, 0, &cp) != c->key_len ||
            c->type != VOX_JSON_NUMBER || !c->is_integer || c->integer < 0 || c->integer > 4096)
            return vox_set_error(VOX_ERR_FORMAT, "the Kokoro vocab maps one character to one id; entry \"%.*s\" "
                                 "does not", (int)c->key_len, c->key ? c->key : "");
        if (out->n == (int)(sizeof out->cp / sizeof out->cp[0]))
            return vox_set_error(VOX_ERR_FORMAT, "the Kokoro vocab has more than 256 symbols");
        out->cp[out->n] = cp;
        out->id[out->n++] = (int32_t)c->integer;
    }
    return VOX_OK;
}

void kk_vocab_ids(const kk_vocab *v, const char *ph, size_t len, int32_t *ids, size_t *n_ids, size_t *n_cps) {
    size_t n = 0, cps = 0;
    ids[n++] = 0;
    for (size_t i = 0; i < len;) {
        uint32_t cp;
        i += utf8_next(ph, len, i, &cp);
        cps++;
        for (int j = 0; j < v->n; j++)
            if (v->cp[j] == cp) {
                ids[n++] = v->id[j];
                break;
            }
    }
    ids[n++] = 0;
    *n_ids = n;
    if (n_cps) *n_cps = cps;
}

int kk_has_frontend(const kk_model *m) { return m->front != NULL; }

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

int kk_only_space(const char *s, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (!is_space(s[i])) return 0;
    return 1;
}

size_t kk_phoneme_cut(const char *ph, size_t len, size_t limit) {
    size_t cps = 0, last_space = 0;
    for (size_t i = 0; i < len;) {
        uint32_t cp;
        size_t n = utf8_next(ph, len, i, &cp);
        if (cps == limit) return last_space ? last_space : i;
        if (cp == ' ') last_space = i;
        cps++;
        i += n;
    }
    return len;
}

/* Phoneme input: a span ends after '.', '!' or '?' followed by whitespace; spans longer than the
 * model's limit are cut at the last space before it. */
static void phoneme_span(const char *t, size_t len, int final, size_t *span_len, size_t *consumed) {
    size_t cps = 0, last_space = 0;
    *span_len = *consumed = 0;
    for (size_t i = 0; i < len;) {
        uint32_t cp;
        size_t n = utf8_next(t, len, i, &cp);
        cps++;
        if (cp == ' ') last_space = i;
        if ((cp == '.' || cp == '!' || cp == '?') && i + 1 < len && is_space(t[i + 1])) {
            *span_len = *consumed = i + 1;
            return;
        }
        if (cps > KK_MAX_PHONEMES) {
            *span_len = *consumed = last_space ? last_space : i;
            return;
        }
        i += n;
    }
    if (final) *span_len = *consumed = len;
}

vox_status kk_next_span(const kk_model *m, int phoneme_input, const char *text, size_t len, int final,
                        size_t *span_len, size_t *consumed) {
    size_t lead = 0;
    while (lead < len && is_space(text[lead])) lead++;
    if (lead == len) {
        *span_len = 0;
        *consumed = final ? len : 0;
        if (final && len) *consumed = 0; /* only whitespace left: nothing more to speak */
        return VOX_OK;
    }
    if (!phoneme_input) {
        if (!m->front)
            return vox_set_error(VOX_ERR_UNSUPPORTED, "%s has no English text frontend: give phonemes (phoneme_input)",
                                 vox_model_path(m->file));
        *span_len = vx_kfront_next_span(text, len, final, consumed);
        return VOX_OK;
    }
    phoneme_span(text + lead, len - lead, final, span_len, consumed);
    if (*consumed) {
        *consumed += lead;
        *span_len += lead;
    }
    return VOX_OK;
}

vox_status kk_phonemes(const kk_model *m, int phoneme_input, const char *span, size_t len, const vox_json *overrides,
                       vx_buf *out, vx_kfront_words *words) {
    if (!phoneme_input) {
        if (!m->front)
            return vox_set_error(VOX_ERR_UNSUPPORTED, "%s has no English text frontend: give phonemes (phoneme_input)",
                                 vox_model_path(m->file));
        return vx_kfront_phonemize_with(m->front, span, len, overrides, out, words);
    }
    if (overrides)
        return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "pronunciations apply to text, not to phoneme input");
    while (len && is_space(*span)) span++, len--;
    while (len && is_space(span[len - 1])) len--;
    vx_buf_append(out, span, len);
    return out->failed ? vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory") : VOX_OK;
}
