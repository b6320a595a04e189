/* Loading the Qwen3-TTS language model: configs from the manifest, weights bound in place in their
 * stored dtype, rope tables; and the family's default synthesis parameters. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../error.h"
#include "../tmod.h"
#include "lm_internal.h"

static vox_status cfg_int_or(const vox_json *obj, const char *key, int64_t def, int64_t *out) {
    const vox_json *v = vox_json_get(obj, key);
    if (!v || v->type == VOX_JSON_NULL) {
        *out = def;
        return VOX_OK;
    }
    return q3_cfg_int(obj, key, out);
}

static bool has_tensor(const q3_model *m, const char *name) {
    vox_tensor_info t;
    return vox_model_find_tensor(m->file, name, &t) == VOX_OK;
}

static vox_status opt_bias(const q3_model *m, const char *name, int64_t n, const float **out) {
    *out = NULL;
    if (!has_tensor(m, name)) return VOX_OK;
    return q3_bind_f32(m, name, n, out);
}

/* reference nn.rope_inv_freq: the float32 steps of transformers' default rope init */
static float *rope_inv_freq(int64_t d, double theta) {
    float *f = malloc((size_t)(d / 2) * sizeof *f);
    if (!f) return NULL;
    for (int64_t i = 0; i < d / 2; i++)
        f[i] = 1.0f / (float)pow(theta, (double)((float)(2 * i) / (float)d));
    return f;
}

/* DecoderConfig.from_dict + Qwen3Decoder weights under `prefix` ("talker.model." ...). */
static vox_status load_decoder(const q3_model *m, const vox_json *c, const char *prefix, bool talker, q3_decoder *d) {
    vox_status st;
    double eps;
    if ((st = q3_cfg_int(c, "hidden_size", &d->hidden)) || (st = q3_cfg_int(c, "num_hidden_layers", &d->n_layers)) ||
        (st = q3_cfg_int(c, "num_attention_heads", &d->heads)) ||
        (st = q3_cfg_int(c, "num_key_value_heads", &d->kv_heads)) || (st = q3_cfg_num(c, "rms_norm_eps", &eps)) ||
        (st = q3_cfg_num(c, "rope_theta", &d->theta)))
        return st;
    if (d->heads <= 0 || d->kv_heads <= 0 || d->heads % d->kv_heads || d->n_layers <= 0 || d->n_layers > 1024)
        return vox_set_error(VOX_ERR_FORMAT, "%s: unsupported attention layout (%lld heads, %lld kv heads)",
                             vox_model_path(m->file), (long long)d->heads, (long long)d->kv_heads);
    if ((st = cfg_int_or(c, "head_dim", d->hidden / d->heads, &d->head_dim))) return st;
    if (d->head_dim <= 0 || d->head_dim % 2 || d->head_dim > 1024)
        return vox_set_error(VOX_ERR_FORMAT, "%s: unsupported head_dim %lld", vox_model_path(m->file),
                             (long long)d->head_dim);
    d->eps = (float)eps;
    d->scale = (float)pow((double)d->head_dim, -0.5);
    const vox_json *act = vox_json_get(c, "hidden_act");
    if (act && !vox_json_is_string(act, "silu"))
        return vox_set_error(VOX_ERR_UNSUPPORTED, "%s: hidden_act %.*s (only silu)", vox_model_path(m->file),
                             (int)act->str_len, act->str ? act->str : "?");
    const vox_json *prf = vox_json_get(c, "partial_rotary_factor");
    if (prf && prf->type == VOX_JSON_NUMBER && prf->number != 1.0)
        return vox_set_error(VOX_ERR_UNSUPPORTED, "%s: partial rotary factor", vox_model_path(m->file));
    /* rope: default type; the talker's mrope sections */
    const vox_json *rs = vox_json_get(c, "rope_scaling");
    d->n_section = 0;
    d->interleaved = 0;
    if (rs && rs->type == VOX_JSON_OBJECT) {
        const vox_json *t = vox_json_get(rs, "rope_type");
        if (!t) t = vox_json_get(rs, "type");
        if (t && !vox_json_is_string(t, "default"))
            return vox_set_error(VOX_ERR_UNSUPPORTED, "%s: rope type %.*s (only the default rope)",
                                 vox_model_path(m->file), (int)t->str_len, t->str ? t->str : "?");
        const vox_json *sec = vox_json_get(rs, "mrope_section");
        if (sec && sec->type == VOX_JSON_ARRAY) {
            if (sec->count < 1 || sec->count > 4)
                return vox_set_error(VOX_ERR_FORMAT, "%s: mrope_section has %zu entries", vox_model_path(m->file),
                                     sec->count);
            int64_t total = 0;
            for (const vox_json *e = sec->child; e; e = e->next) {
                if (e->type != VOX_JSON_NUMBER || !e->is_integer || e->integer < 0)
                    return vox_set_error(VOX_ERR_FORMAT, "%s: mrope_section must hold integers", vox_model_path(m->file));
                d->section[d->n_section++] = e->integer;
                total += e->integer;
            }
            if (total != d->head_dim / 2)
                return vox_set_error(VOX_ERR_FORMAT, "%s: mrope_section sums to %lld, head_dim / 2 is %lld",
                                     vox_model_path(m->file), (long long)total, (long long)(d->head_dim / 2));
        }
        const vox_json *il = vox_json_get(rs, "interleaved");
        d->interleaved = il && il->type == VOX_JSON_TRUE;
    }
    if (talker && d->n_section == 0) { /* the reference's fallback: one section over all frequencies */
        d->n_section = 1;
        d->section[0] = d->head_dim / 2;
    }
    if (!(d->inv_freq = rope_inv_freq(d->head_dim, d->theta))) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    /* per-layer windows: predictor layers by layer_types, talker layers all take sliding_window */
    int64_t window = 0;
    if ((st = cfg_int_or(c, "sliding_window", 0, &window))) return st;
    const vox_json *types = vox_json_get(c, "layer_types");
    if (types && types->type == VOX_JSON_ARRAY && types->count && (int64_t)types->count != d->n_layers)
        return vox_set_error(VOX_ERR_FORMAT, "%s: layer_types has %zu entries for %lld layers", vox_model_path(m->file),
                             types->count, (long long)d->n_layers);
    d->layers = calloc((size_t)d->n_layers, sizeof *d->layers);
    if (!d->layers) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    const vox_json *ty = types && types->type == VOX_JSON_ARRAY && types->count ? types->child : NULL;
    const int64_t H = d->hidden, qd = d->heads * d->head_dim, kd = d->kv_heads * d->head_dim;
    for (int64_t i = 0; i < d->n_layers; i++) {
        q3_layer *L = &d->layers[i];
        if (ty) {
            L->window = vox_json_is_string(ty, "sliding_attention") ? window : 0;
            ty = ty->next;
        } else {
            L->window = window;
        }
        char p[160], n[224];
        snprintf(p, sizeof p, "%slayers.%lld.", prefix, (long long)i);
        if ((st = q3_bind_matf(m, &L->q, qd, H, "%sself_attn.q_proj.weight", p)) ||
            (st = q3_bind_matf(m, &L->k, kd, H, "%sself_attn.k_proj.weight", p)) ||
            (st = q3_bind_matf(m, &L->v, kd, H, "%sself_attn.v_proj.weight", p)) ||
            (st = q3_bind_matf(m, &L->o, H, qd, "%sself_attn.o_proj.weight", p)) ||
            (st = q3_bind_matf(m, &L->gate, -1, H, "%smlp.gate_proj.weight", p)))
            return st;
        if (i == 0) d->inter = L->gate.rows;
        if ((st = q3_bind_matf(m, &L->up, d->inter, H, "%smlp.up_proj.weight", p)) ||
            (st = q3_bind_matf(m, &L->down, H, d->inter, "%smlp.down_proj.weight", p)) ||
            (st = q3_bind_f32f(m, &L->in_norm, H, "%sinput_layernorm.weight", p)) ||
            (st = q3_bind_f32f(m, &L->post_norm, H, "%spost_attention_layernorm.weight", p)) ||
            (st = q3_bind_f32f(m, &L->q_norm, d->head_dim, "%sself_attn.q_norm.weight", p)) ||
            (st = q3_bind_f32f(m, &L->k_norm, d->head_dim, "%sself_attn.k_norm.weight", p)))
            return st;
        if (L->gate.rows != d->inter)
            return vox_set_error(VOX_ERR_FORMAT, "%s: layers differ in intermediate size", vox_model_path(m->file));
        const char *bn[4] = {"q", "k", "v", "o"};
        const float **bp[4] = {&L->qb, &L->kb, &L->vb, &L->ob};
        const int64_t bl[4] = {qd, kd, kd, H};
        for (int j = 0; j < 4; j++) {
            snprintf(n, sizeof n, "%sself_attn.%s_proj.bias", p, bn[j]);
            if ((st = opt_bias(m, n, bl[j], bp[j]))) return st;
        }
    }
    char n[224];
    snprintf(n, sizeof n, "%snorm.weight", prefix);
    return q3_bind_f32(m, n, H, &d->norm);
}

static void free_decoder(q3_decoder *d) {
    free(d->layers);
    free(d->inv_freq);
}

void q3_lm_free(q3_lm *lm) {
    if (!lm) return;
    free_decoder(&lm->talker);
    free_decoder(&lm->pred);
    free(lm->pemb);
    free(lm->phead);
    free(lm->tts_bos_e);
    free(lm->tts_eos_e);
    free(lm->tts_pad_e);
    free(lm->pred_cos);
    free(lm->pred_sin);
    free(lm);
}

static vox_status get_id(const vox_json *obj, const char *key, int64_t lo, int64_t hi, int32_t *out) {
    int64_t v;
    vox_status st = q3_cfg_int(obj, key, &v);
    if (st) return st;
    if (v < lo || v >= hi) return vox_set_error(VOX_ERR_FORMAT, "model config: %s = %lld is out of range", key, (long long)v);
    *out = (int32_t)v;
    return VOX_OK;
}

static vox_status load(const q3_model *m, q3_lm *lm) {
    vox_status st;
    const vox_json *tc = vox_json_get(m->config, "talker_config");
    const vox_json *pc = vox_json_get(tc, "code_predictor_config");
    if (!tc || tc->type != VOX_JSON_OBJECT || !pc || pc->type != VOX_JSON_OBJECT)
        return vox_set_error(VOX_ERR_FORMAT, "%s: the config has no talker_config.code_predictor_config",
                             vox_model_path(m->file));
    if ((st = load_decoder(m, tc, "talker.model.", true, &lm->talker)) ||
        (st = load_decoder(m, pc, "talker.code_predictor.model.", false, &lm->pred)))
        return st;
    if (lm->pred.n_section) lm->pred.n_section = 0; /* the predictor's rotary embedding is 1-D */
    const int64_t H = lm->talker.hidden, PH = lm->pred.hidden;
    if ((st = q3_cfg_int(tc, "vocab_size", &lm->vocab)) || (st = q3_cfg_int(tc, "num_code_groups", &lm->n_groups)) ||
        (st = q3_cfg_int(tc, "text_vocab_size", &lm->text_vocab)) || (st = q3_cfg_int(pc, "vocab_size", &lm->pvocab)))
        return st;
    if (lm->n_groups < 2 || lm->n_groups > 64 || lm->vocab < 1024 || lm->pvocab < 1)
        return vox_set_error(VOX_ERR_FORMAT, "%s: unsupported talker layout (%lld groups, vocab %lld)",
                             vox_model_path(m->file), (long long)lm->n_groups, (long long)lm->vocab);
    if ((st = q3_bind_mat(m, "talker.model.text_embedding.weight", lm->text_vocab, -1, &lm->text_emb)) ||
        (st = q3_bind_mat(m, "talker.text_projection.linear_fc1.weight", -1, lm->text_emb.cols, &lm->fc1)) ||
        (st = q3_bind_mat(m, "talker.text_projection.linear_fc2.weight", H, lm->fc1.rows, &lm->fc2)) ||
        (st = q3_bind_f32(m, "talker.text_projection.linear_fc1.bias", lm->fc1.rows, &lm->fc1_b)) ||
        (st = q3_bind_f32(m, "talker.text_projection.linear_fc2.bias", H, &lm->fc2_b)) ||
        (st = q3_bind_mat(m, "talker.model.codec_embedding.weight", lm->vocab, H, &lm->codec_emb)) ||
        (st = q3_bind_mat(m, "talker.codec_head.weight", lm->vocab, H, &lm->codec_head)))
        return st;
    lm->text_hidden = lm->text_emb.cols;
    lm->text_inter = lm->fc1.rows;
    const int64_t ng = lm->n_groups - 1;
    lm->pemb = calloc((size_t)ng, sizeof *lm->pemb);
    lm->phead = calloc((size_t)ng, sizeof *lm->phead);
    if (!lm->pemb || !lm->phead) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    for (int64_t i = 0; i < ng; i++)
        if ((st = q3_bind_matf(m, &lm->pemb[i], lm->pvocab, H, "talker.code_predictor.model.codec_embedding.%lld.weight",
                               (long long)i)) ||
            (st = q3_bind_matf(m, &lm->phead[i], lm->pvocab, PH, "talker.code_predictor.lm_head.%lld.weight",
                               (long long)i)))
            return st;
    lm->has_proj = has_tensor(m, "talker.code_predictor.small_to_mtp_projection.weight");
    if (lm->has_proj) {
        if ((st = q3_bind_mat(m, "talker.code_predictor.small_to_mtp_projection.weight", PH, H, &lm->proj)) ||
            (st = q3_bind_f32(m, "talker.code_predictor.small_to_mtp_projection.bias", PH, &lm->proj_b)))
            return st;
    } else if (PH != H) {
        return vox_set_error(VOX_ERR_FORMAT, "%s: talker width %lld and predictor width %lld differ but there is no "
                             "small_to_mtp_projection", vox_model_path(m->file), (long long)H, (long long)PH);
    }
    if ((st = get_id(tc, "codec_pad_id", 0, lm->vocab, &lm->codec_pad)) ||
        (st = get_id(tc, "codec_bos_id", 0, lm->vocab, &lm->codec_bos)) ||
        (st = get_id(tc, "codec_eos_token_id", 0, lm->vocab, &lm->codec_eos)) ||
        (st = get_id(tc, "codec_think_id", 0, lm->vocab, &lm->think)) ||
        (st = get_id(tc, "codec_nothink_id", 0, lm->vocab, &lm->nothink)) ||
        (st = get_id(tc, "codec_think_bos_id", 0, lm->vocab, &lm->think_bos)) ||
        (st = get_id(tc, "codec_think_eos_id", 0, lm->vocab, &lm->think_eos)) ||
        (st = get_id(m->config, "tts_bos_token_id", 0, lm->text_vocab, &lm->tts_bos)) ||
        (st = get_id(m->config, "tts_eos_token_id", 0, lm->text_vocab, &lm->tts_eos)) ||
        (st = get_id(m->config, "tts_pad_token_id", 0, lm->text_vocab, &lm->tts_pad)))
        return st;
    lm->gen_max_new_tokens = 8192;
    const vox_json *mnt = vox_json_get(m->generation, "max_new_tokens");
    if (mnt && mnt->type == VOX_JSON_NUMBER && mnt->is_integer && mnt->integer > 1) lm->gen_max_new_tokens = mnt->integer;

    /* the special text embeddings, computed once (text_embed of the three ids in one batch) */
    lm->tts_bos_e = malloc((size_t)H * sizeof(float));
    lm->tts_eos_e = malloc((size_t)H * sizeof(float));
    lm->tts_pad_e = malloc((size_t)H * sizeof(float));
    float *work = malloc((size_t)3 * (lm->text_hidden + lm->text_inter) * sizeof(float));
    float *three = malloc((size_t)3 * H * sizeof(float));
    const int64_t pr = lm->n_groups + 1, hd = lm->pred.head_dim;
    lm->pred_cos = malloc((size_t)(pr * hd) * sizeof(float));
    lm->pred_sin = malloc((size_t)(pr * hd) * sizeof(float));
    if (!lm->tts_bos_e || !lm->tts_eos_e || !lm->tts_pad_e || !work || !three || !lm->pred_cos || !lm->pred_sin) {
        free(work);
        free(three);
        return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    }
    const int32_t ids[3] = {lm->tts_bos, lm->tts_eos, lm->tts_pad};
    q3_text_embed(lm, NULL, ids, 3, work, three);
    memcpy(lm->tts_bos_e, three, (size_t)H * sizeof(float));
    memcpy(lm->tts_eos_e, three + H, (size_t)H * sizeof(float));
    memcpy(lm->tts_pad_e, three + 2 * H, (size_t)H * sizeof(float));
    free(work);
    free(three);
    q3_rope_table(&lm->pred, 0, pr, lm->pred_cos, lm->pred_sin);
    return VOX_OK;
}

vox_status q3_lm_load(const q3_model *m, q3_lm **out) {
    *out = NULL;
    q3_lm *lm = calloc(1, sizeof *lm);
    if (!lm) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    lm->m = m;
    vox_status st = load(m, lm);
    if (st != VOX_OK) {
        q3_lm_free(lm);
        return st;
    }
    *out = lm;
    return VOX_OK;
}

int64_t q3_guard_steps(const q3_lm *lm, int64_t n_text) {
    int64_t g = Q3_GUARD_BASE + Q3_GUARD_PER_TOKEN * (n_text > 0 ? n_text : 0);
    return g < lm->gen_max_new_tokens ? g : lm->gen_max_new_tokens;
}

/* ------------------------------------------------------------------------------ options */
#define F(name, type, lo, hi, lo_open, doc) {#name, type, offsetof(q3_options, name), lo, hi, lo_open, 0, NULL, doc}
static const vx_option q3_option_table[] = {
    F(do_sample, VX_OPT_BOOL, 0, 0, 0, "sample the talker's codes (false: greedy)"),
    F(temperature, VX_OPT_FLOAT, 0, 100, 0, "the talker's sampling temperature (> 0 when sampling)"),
    F(top_k, VX_OPT_INT, 0, 1 << 20, 0, "keep the k most likely talker codes (0: off)"),
    F(top_p, VX_OPT_FLOAT, 0, 1, 1, "nucleus sampling of the talker: the smallest set of codes with this mass (1: off)"),
    F(repetition_penalty, VX_OPT_FLOAT, 0, 100, 1, "penalty on talker codes already generated (1: off)"),
    F(subtalker_do_sample, VX_OPT_BOOL, 0, 0, 0, "sample the code predictor's codes (false: greedy)"),
    F(subtalker_temperature, VX_OPT_FLOAT, 0, 100, 0, "the code predictor's temperature (> 0 when sampling)"),
    F(subtalker_top_k, VX_OPT_INT, 0, 1 << 20, 0, "top-k of the code predictor (0: off)"),
    F(subtalker_top_p, VX_OPT_FLOAT, 0, 1, 1, "top-p of the code predictor (1: off)"),
    F(max_new_tokens, VX_OPT_INT, 0, 1 << 20, 0, "talker steps at most (frames = steps - 1); 0: a guard that grows "
                                                 "with the text"),
    {"decoder", VX_OPT_ENUM, offsetof(q3_options, decoder), 0, 0, 0, 0, "stream|reference",
     "stream: the streaming decoder with carried state; reference: the official 300-frame pieces, one chunk at "
     "the end"},
    F(decoder_context, VX_OPT_INT, -1, 1 << 20, 0, "stream decoder: reference frames to warm up with (-1: all)"),
    F(chunk_frames, VX_OPT_INT, 1, 1 << 20, 0, "codec frames per audio chunk (4 = 320 ms)"),
    F(non_streaming_text, VX_OPT_BOOL, 0, 0, 0, "put the whole text into the prompt (the official non_streaming_mode)"),
};
#undef F
const vx_option_set q3_options_set = {q3_option_table, sizeof q3_option_table / sizeof q3_option_table[0],
                                      sizeof(q3_options)};
const char *const q3_stage_names[Q3_STAGES + 1] = {"prefill", "talker", "predictor", "decoder", "voice", NULL};

/* The generation config's sampling keys, as the official code reads them (it spells one
 * subtalker_dosample); its max_new_tokens is the guard's cap, not a default. Other keys are ignored. */
static void apply_generation(const vox_json *o, q3_options *p) {
    if (!o || o->type != VOX_JSON_OBJECT) return;
    for (const vox_json *c = o->child; c; c = c->next) {
        if (c->type != VOX_JSON_NUMBER && c->type != VOX_JSON_TRUE && c->type != VOX_JSON_FALSE) continue;
        double v = c->type == VOX_JSON_NUMBER ? c->number : c->type == VOX_JSON_TRUE;
        const char *k = c->key;
        if (!strcmp(k, "do_sample")) p->do_sample = v != 0;
        else if (!strcmp(k, "temperature")) p->temperature = (float)v;
        else if (!strcmp(k, "top_k")) p->top_k = (int32_t)v;
        else if (!strcmp(k, "top_p")) p->top_p = (float)v;
        else if (!strcmp(k, "repetition_penalty")) p->repetition_penalty = (float)v;
        else if (!strcmp(k, "subtalker_dosample") || !strcmp(k, "subtalker_do_sample")) p->subtalker_do_sample = v != 0;
        else if (!strcmp(k, "subtalker_temperature")) p->subtalker_temperature = (float)v;
        else if (!strcmp(k, "subtalker_top_k")) p->subtalker_top_k = (int32_t)v;
        else if (!strcmp(k, "subtalker_top_p")) p->subtalker_top_p = (float)v;
    }
}

void q3_option_defaults(const vox_engine *e, void *opts) {
    q3_options *p = opts;
    *p = (q3_options){.do_sample = 1, .temperature = 0.9f, .top_k = 50, .top_p = 1.0f, .repetition_penalty = 1.05f,
                      .subtalker_do_sample = 1, .subtalker_temperature = 0.9f, .subtalker_top_k = 50,
                      .subtalker_top_p = 1.0f, .decoder = Q3_DECODER_STREAM, .decoder_context = 50, .chunk_frames = 4};
    const q3_model *m = e ? e->impl : NULL;
    if (m) apply_generation(m->generation, p);
}

vox_status q3_options_check(const vox_engine *e, const void *opts) {
    (void)e;
    const q3_options *p = opts;
    if (p->do_sample && !(p->temperature > 0))
        return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "options: temperature must be > 0 when do_sample is on");
    if (p->subtalker_do_sample && !(p->subtalker_temperature > 0))
        return vox_set_error(VOX_ERR_INVALID_ARGUMENT,
                             "options: subtalker_temperature must be > 0 when subtalker_do_sample is on");
    return VOX_OK;
}
