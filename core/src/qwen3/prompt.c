/* Prompt building (reference prompt.PromptBuilder) and the session's text: tokenizing the stable
 * part of the text as it arrives, the text stream that feeds the trailing text, the stop limit. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../error.h"
#include "../strbuf.h"
#include "lm_internal.h"
#include "tokenizer.h"

static const char ROLE[] = "<|im_start|>assistant\n";
static const char END[] = "<|im_end|>\n<|im_start|>assistant\n";

static const vox_json *find_ci(const vox_json *obj, const char *name) {
    for (const vox_json *c = obj && obj->type == VOX_JSON_OBJECT ? obj->child : NULL; c; c = c->next)
        if (strlen(name) == c->key_len && !strncasecmp(c->key, name, c->key_len)) return c;
    return NULL;
}

static vox_status tokenize_str(const q3_sess *q, const char *a, const char *b, const char *c, int32_t **ids,
                               size_t *n) {
    vx_buf buf = {0};
    vx_buf_printf(&buf, "%s%s%s", a, b, c);
    char *t = vx_buf_take(&buf);
    if (!t) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    vox_status st = q3_tokenize(q->m->tok, t, strlen(t), ids, n);
    free(t);
    return st;
}

vox_status q3_sess_resolve(q3_sess *q) {
    const vox_voice *v = q->s->voice;
    const q3_lm *lm = q->lm;
    const vox_json *tc = vox_json_get(q->m->config, "talker_config");
    const vox_json *langs = vox_json_get(tc, "codec_language_id");
    const char *mode = v->mode ? v->mode : "";
    q->mode = !strcmp(mode, "icl") ? Q3_ICL : !strcmp(mode, "xvector") ? Q3_XVECTOR
            : !strcmp(mode, "speaker") ? Q3_SPEAKER : !strcmp(mode, "design") ? Q3_DESIGN : -1;
    if (q->mode < 0) return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "unknown voice mode \"%s\"", mode);
    q->nonstream = q->o->non_streaming_text != 0;

    /* language: auto (no language id) or a non-dialect language of the model, any case */
    const char *lang = q->s->language ? q->s->language : "auto";
    q->lang_id = -1;
    if (strcasecmp(lang, "auto") != 0) {
        const vox_json *l = find_ci(langs, lang);
        if (!l || strstr(l->key, "dialect") || l->type != VOX_JSON_NUMBER || !l->is_integer || l->integer < 0 ||
            l->integer >= lm->vocab) {
            vx_buf b = {0};
            vx_buf_printf(&b, "auto");
            for (const vox_json *c = langs ? langs->child : NULL; c; c = c->next)
                if (!strstr(c->key, "dialect")) vx_buf_printf(&b, ", %.*s", (int)c->key_len, c->key);
            char *list = vx_buf_take(&b);
            vox_status st = vox_set_error(VOX_ERR_INVALID_ARGUMENT, "unsupported language \"%s\"; this model has: %s",
                                          lang, list ? list : "?");
            free(list);
            return st;
        }
        q->lang_id = (int32_t)l->integer;
    }

    q->spk_id = -1;
    q->spk_embed = NULL;
    const char *instruct = NULL;
    const int64_t H = lm->talker.hidden;
    const vx_voice_array *emb = vx_voice_get_array(v, "speaker_embedding"), *rc = vx_voice_get_array(v, "ref_codes"),
                         *rt = vx_voice_get_array(v, "ref_text_tokens");
    if (q->mode == Q3_ICL || q->mode == Q3_XVECTOR) {
        if (!emb || (int64_t)emb->count != H)
            return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "the voice's speaker embedding has %zu values, the talker "
                                 "wants %lld", emb ? emb->count : 0, (long long)H);
        q->spk_embed = emb->data;
    }
    if (q->mode == Q3_ICL) {
        if (!rc || rc->shape[0] == 0 || rc->shape[1] != lm->n_groups)
            return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "an ICL voice needs reference codes with %lld groups",
                                 (long long)lm->n_groups);
        if (!rt || rt->count < 5)
            return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "an ICL voice needs its reference text tokens");
        const int32_t *codes = rc->data, *toks = rt->data;
        const size_t G = (size_t)rc->shape[1];
        for (size_t i = 0; i < rc->count; i++)
            if (codes[i] < 0 || codes[i] >= (i % G ? lm->pvocab : lm->vocab))
                return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "the voice's reference codes are out of range");
        for (size_t i = 0; i < rt->count; i++)
            if (toks[i] < 0 || toks[i] >= lm->text_vocab)
                return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "the voice's reference text tokens are out of range");
        q->ref_codes = codes;
        q->n_ref = rc->shape[0];
        q->ref_ids = toks + 3; /* ref_text(...) ids [3:-2] */
        q->n_ref_ids = (int64_t)rt->count - 5;
    }
    if (q->mode == Q3_SPEAKER) {
        const char *name = vx_voice_text(v, "speaker") ? vx_voice_text(v, "speaker") : "";
        const vox_json *spk = find_ci(vox_json_get(tc, "spk_id"), name);
        if (!spk || spk->type != VOX_JSON_NUMBER || !spk->is_integer || spk->integer < 0 || spk->integer >= lm->vocab)
            return vox_set_error(VOX_ERR_NOT_FOUND, "speaker \"%s\" is not in this model", name);
        q->spk_id = (int32_t)spk->integer;
        /* dialect speakers speak their dialect when asked for chinese or auto */
        const vox_json *dia = find_ci(vox_json_get(tc, "spk_is_dialect"), name);
        if ((q->lang_id < 0 || !strcasecmp(lang, "chinese")) && dia && dia->type == VOX_JSON_STRING) {
            const vox_json *l = find_ci(langs, dia->str);
            if (!l || l->type != VOX_JSON_NUMBER || !l->is_integer || l->integer < 0 || l->integer >= lm->vocab)
                return vox_set_error(VOX_ERR_FORMAT, "the dialect %s of speaker %s has no language id", dia->str, name);
            q->lang_id = (int32_t)l->integer;
        }
        /* the official wrapper: `if self.model.tts_model_size in "0b6": instruct = None` (a substring test) */
        if (!strstr("0b6", q->m->size)) instruct = vx_voice_text(v, "instruct");
    }
    if (q->mode == Q3_DESIGN) instruct = vx_voice_text(v, "instruct");
    if (instruct && instruct[0]) {
        size_t n = 0;
        vox_status st = tokenize_str(q, "<|im_start|>user\n", instruct, "<|im_end|>\n", &q->instr_ids, &n);
        if (st) return st;
        q->n_instr = (int64_t)n;
    }
    return VOX_OK;
}

/* ------------------------------------------------------------------------------ text */
static vox_status s_push(q3_sess *q, int32_t id) {
    if (q->nS == q->capS) {
        int64_t cap = q->capS ? 2 * q->capS : 256;
        int32_t *S = realloc(q->S, (size_t)cap * sizeof *S);
        if (S) q->S = S;
        float *e = S ? realloc(q->semb, (size_t)(cap * q->lm->talker.hidden) * sizeof *e) : NULL;
        if (e) q->semb = e;
        if (!S || !e) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
        q->capS = cap;
    }
    q->S[q->nS++] = id;
    return VOX_OK;
}

/* Embed S[from..nS): text tokens in batches, the EOS mark as tts_eos. */
static void s_embed(q3_sess *q, int64_t from) {
    const q3_lm *lm = q->lm;
    const int64_t H = lm->talker.hidden;
    int64_t i = from;
    while (i < q->nS) {
        if (q->S[i] == Q3_EOS_MARK) {
            memcpy(q->semb + i * H, lm->tts_eos_e, (size_t)H * sizeof(float));
            i++;
            continue;
        }
        int64_t n = 0;
        while (i + n < q->nS && n < Q3_CHUNK_ROWS && q->S[i + n] != Q3_EOS_MARK) n++;
        q3_text_embed(lm, q->pool, q->S + i, n, q->twork, q->semb + i * H);
        i += n;
    }
}

/* The ids of segment text[from..to) (the first segment: after the role template), complete (a flush
 * ended it): *n_text text ids appended to the closed ones. */
static vox_status close_segment(q3_sess *q, size_t from, size_t to) {
    const vox_session *s = q->s;
    const size_t nr = from == 0 ? sizeof ROLE - 1 : 0;
    char *t = malloc(nr + (to - from) + 1);
    if (!t) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    memcpy(t, ROLE, nr);
    memcpy(t + nr, s->text + from, to - from);
    int32_t *ids = NULL;
    size_t n = 0;
    vox_status st = q3_tokenize(q->m->tok, t, nr + (to - from), &ids, &n);
    free(t);
    if (st) return st;
    const size_t skip = from == 0 ? 3 : 0;
    int32_t *c = realloc(q->closed, (size_t)(q->n_closed + (int64_t)(n - skip) + 1) * sizeof *c);
    if (!c) {
        free(ids);
        return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    }
    q->closed = c;
    memcpy(q->closed + q->n_closed, ids + skip, (n - skip) * sizeof *ids);
    q->n_closed += (int64_t)(n - skip);
    free(ids);
    q->seg_start = to;
    q->tok_stable = 0;
    return VOX_OK;
}

vox_status q3_sess_update_text(q3_sess *q) {
    vox_session *s = q->s;
    if (q->final) return VOX_OK;
    vox_status st;
    /* A flush makes the text up to its mark complete: the held-back last word is tokenized as it is
     * and the text after the mark starts a new segment, tokenized on its own. */
    if (!s->ended && s->flush_mark > q->seg_start && (st = close_segment(q, q->seg_start, s->flush_mark)))
        return st;
    const size_t seg = q->seg_start, seg_len = s->text_len - seg;
    const size_t need = sizeof ROLE + seg_len + sizeof END;
    if (need > q->tmpl_cap) {
        char *t = realloc(q->tmpl, need);
        if (!t) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
        q->tmpl = t;
        q->tmpl_cap = need;
    }
    const size_t nr = seg == 0 ? sizeof ROLE - 1 : 0;
    memcpy(q->tmpl, ROLE, nr);
    memcpy(q->tmpl + nr, s->text + seg, seg_len);
    size_t len = nr + seg_len;
    int final = s->ended;
    size_t cut = len;
    if (final) {
        memcpy(q->tmpl + len, END, sizeof END);
        len += sizeof END - 1;
        cut = len;
    } else {
        cut = q3_tokenizer_stable_prefix(q->m->tok, q->tmpl, len);
        if (cut <= q->tok_stable && q->n_ids >= 3 + q->n_closed) return VOX_OK; /* nothing new is stable */
        /* the role itself is not stable yet (no text, or only the start of its newline's run): its ids
         * are not known, so nothing is built until more text arrives */
        if (seg == 0 && cut < nr) return VOX_OK;
    }
    int32_t *seg_ids = NULL;
    size_t n_seg = 0;
    st = cut ? q3_tokenize(q->m->tok, q->tmpl, cut, &seg_ids, &n_seg) : VOX_OK;
    if (st) return st;
    /* ids = role (3) + the closed segments' text + this segment's (without its role part) */
    const size_t role = seg == 0 ? 3 : 0;
    const size_t seg_text = n_seg > role ? n_seg - role : 0;
    const size_t n = 3 + (size_t)q->n_closed + seg_text;
    int32_t *ids = malloc((n ? n : 1) * sizeof *ids);
    if (!ids) {
        free(seg_ids);
        return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    }
    if (seg == 0 && n_seg >= 3) memcpy(ids, seg_ids, 3 * sizeof *ids);
    else if (q->n_ids >= 3) memcpy(ids, q->ids, 3 * sizeof *ids);
    else if (seg == 0) memset(ids, 0, 3 * sizeof *ids);
    else {
        /* a segment after the first: the role's ids come from the first, tokenized once */
        int32_t *r = NULL;
        size_t nr_ids = 0;
        if ((st = q3_tokenize(q->m->tok, ROLE, sizeof ROLE - 1, &r, &nr_ids)) || nr_ids != 3) {
            free(r), free(ids), free(seg_ids);
            return st ? st : vox_set_error(VOX_ERR_INTERNAL, "the role template is not 3 tokens");
        }
        memcpy(ids, r, 3 * sizeof *ids);
        free(r);
    }
    if (q->n_closed) memcpy(ids + 3, q->closed, (size_t)q->n_closed * sizeof *ids);
    if (seg_text) memcpy(ids + 3 + q->n_closed, seg_ids + role, seg_text * sizeof *ids);
    free(seg_ids);
    int64_t n_text = final ? (int64_t)n - 8 : (int64_t)n - 3; /* ids[3:-5] or ids[3:] */
    if (final && (int64_t)n < 8) n_text = -1;
    if (final && n_text <= 0) {
        free(ids);
        return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "the text is empty");
    }
    if (n_text < 0) n_text = 0;
    /* what was used before must not change: the stable prefix promises it */
    const int64_t keep = q->n_ids < 3 + q->n_text ? q->n_ids : 3 + q->n_text;
    if ((q->prompt_built || q->nS) && ((int64_t)n < keep || memcmp(ids, q->ids, (size_t)keep * sizeof *ids) != 0)) {
        free(ids);
        return vox_set_error(VOX_ERR_INTERNAL, "the tokens of the text changed as more text arrived");
    }
    free(q->ids);
    q->ids = ids;
    q->n_ids = (int64_t)n;
    q->tok_stable = cut;
    q->final = final;
    const int64_t old_text = q->n_text;
    q->n_text = n_text;
    if (q->nonstream && !final) return VOX_OK; /* the stream is only built once the text is complete */
    /* extend S */
    const int64_t from = q->nS;
    if (from == 0 && q->mode == Q3_ICL)
        for (int64_t i = 0; i < q->n_ref_ids; i++)
            if ((st = s_push(q, q->ref_ids[i]))) return st;
    for (int64_t i = (from == 0 ? 0 : old_text); i < n_text; i++)
        if ((st = s_push(q, q->ids[3 + i]))) return st;
    if (final && (st = s_push(q, Q3_EOS_MARK))) return st;
    s_embed(q, from);
    return VOX_OK;
}

static int64_t n_codec_ref(const q3_sess *q) { return q->mode == Q3_ICL ? 1 + q->n_ref : 0; }

size_t q3_sess_used(const q3_sess *q) {
    const size_t nr = q->seg_start == 0 ? sizeof ROLE - 1 : 0;
    return q->seg_start + (q->tok_stable > nr ? q->tok_stable - nr : 0);
}

bool q3_sess_can_prefill(const q3_sess *q) {
    if (q->final) return true;
    if (q->nonstream) return false;
    if (q->mode == Q3_ICL) return q->n_ids >= 3 && q->nS >= n_codec_ref(q);
    return q->n_text >= 1;
}

bool q3_trailing_ready(const q3_sess *q, int64_t frame) {
    if (q->nonstream || q->final) return true;
    return q->trail_off + frame < q->nS;
}

const float *q3_trailing(const q3_sess *q, int64_t frame) {
    if (q->nonstream) return q->lm->tts_pad_e;
    const int64_t i = q->trail_off + frame;
    return i < q->nS ? q->semb + i * q->lm->talker.hidden : q->lm->tts_pad_e;
}

int64_t q3_sess_limit(const q3_sess *q) {
    if (q->o->max_new_tokens > 0) return q->o->max_new_tokens;
    if (!q->final) return INT64_MAX;
    return q3_guard_steps(q->lm, q->n_text);
}

/* ------------------------------------------------------------------------------ the prompt */
static void add_codec(const q3_lm *lm, int32_t id, float *row, float *tmp) {
    vx_gather_rows(&lm->codec_emb, &id, 1, tmp);
    vx_add(row, tmp, lm->talker.hidden, row);
}

vox_status q3_sess_build_prompt(q3_sess *q) {
    if (q->prompt_built) return VOX_OK;
    const q3_lm *lm = q->lm;
    const int64_t H = lm->talker.hidden, G = lm->n_groups;
    /* the codec column: think/nothink, think_bos, [language], think_eos, [speaker], pad, bos */
    int32_t codec[8];
    int nc = 0, spk_at = -1;
    codec[nc++] = q->lang_id < 0 ? lm->nothink : lm->think;
    codec[nc++] = lm->think_bos;
    if (q->lang_id >= 0) codec[nc++] = q->lang_id;
    codec[nc++] = lm->think_eos;
    if (q->spk_embed || q->spk_id >= 0) {
        spk_at = nc;
        codec[nc++] = q->spk_id;
    }
    codec[nc++] = lm->codec_pad;
    codec[nc++] = lm->codec_bos;
    const int64_t ncr = n_codec_ref(q);
    int64_t tail;
    if (q->mode == Q3_ICL) tail = q->nonstream ? q->nS + ncr : ncr;
    else tail = q->nonstream ? q->nS + 1 : 1;
    const int64_t rows = q->n_instr + 3 + (nc - 1) + tail;
    float *P = malloc((size_t)(rows * H) * sizeof *P);
    if (!P) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    float *tmp = q->ftmp, *row;
    int64_t r = 0;
    /* [instruction], then <|im_start|>assistant\n: text only */
    for (int64_t i = 0; i < q->n_instr; i += Q3_CHUNK_ROWS) {
        const int64_t n = q->n_instr - i < Q3_CHUNK_ROWS ? q->n_instr - i : Q3_CHUNK_ROWS;
        q3_text_embed(lm, q->pool, q->instr_ids + i, n, q->twork, P + (r + i) * H);
    }
    r += q->n_instr;
    q3_text_embed(lm, q->pool, q->ids, 3, q->twork, P + r * H);
    r += 3;
    /* tts_pad ... tts_pad, tts_bos + the codec column without its bos */
    for (int i = 0; i < nc - 1; i++, r++) {
        row = P + r * H;
        memcpy(row, i < nc - 2 ? lm->tts_pad_e : lm->tts_bos_e, (size_t)H * sizeof *row);
        if (i == spk_at && q->spk_embed) vx_add(row, q->spk_embed, H, row);
        else add_codec(lm, codec[i], row, tmp);
    }
    if (q->mode == Q3_ICL) {
        /* text = ref text + text + tts_eos (S); codec = bos, then each reference frame's code sum */
        if (q->nonstream) {
            for (int64_t j = 0; j < q->nS; j++, r++) {
                row = P + r * H;
                memcpy(row, q->semb + j * H, (size_t)H * sizeof *row);
                add_codec(lm, lm->codec_pad, row, tmp);
            }
        }
        for (int64_t k = 0; k < ncr; k++, r++) {
            row = P + r * H;
            float *c = q->x; /* free until the prefill */
            if (k == 0) vx_gather_rows(&lm->codec_emb, &lm->codec_bos, 1, c);
            else q3_frame_embed(lm, q->ref_codes + (k - 1) * G, tmp, c);
            const float *t = q->nonstream || k >= q->nS ? lm->tts_pad_e : q->semb + k * H;
            vx_add(t, c, H, row);
        }
        q->trail_off = ncr;
    } else if (q->nonstream) {
        for (int64_t j = 0; j < q->nS; j++, r++) {
            row = P + r * H;
            memcpy(row, q->semb + j * H, (size_t)H * sizeof *row);
            add_codec(lm, lm->codec_pad, row, tmp);
        }
        row = P + r++ * H;
        memcpy(row, lm->tts_pad_e, (size_t)H * sizeof *row);
        add_codec(lm, lm->codec_bos, row, tmp);
    } else {
        row = P + r++ * H; /* the first text token + codec bos */
        memcpy(row, q->semb, (size_t)H * sizeof *row);
        add_codec(lm, lm->codec_bos, row, tmp);
        q->trail_off = 1;
    }
    free(q->prompt);
    q->prompt = P;
    q->n_prompt = rows;
    q->prompt_built = 1;
    return VOX_OK;
}
