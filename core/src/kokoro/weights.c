/* Binding the Kokoro weights of a .tmod (named by the official KModel state-dict keys, weight norm
 * folded by the converter) to the model structure; config from the manifest's "config". */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../dsp/dft_stft.h"
#include "../error.h"
#include "../tmod.h"
#include "kokoro.h"
#include "text/frontend.h"

typedef struct loader {
    kk_model *m;
    vox_status st;    /* first failure */
} loader;

static int failed(loader *L) { return L->st != VOX_OK; }

static int find(loader *L, const char *name, vox_tensor_info *t, int required) {
    if (failed(L)) return 0;
    if (vox_model_find_tensor(L->m->file, name, t) == VOX_OK) return 1;
    vox_clear_error();
    if (required)
        L->st = vox_set_error(VOX_ERR_FORMAT, "%s: tensor \"%s\" is missing (not a complete Kokoro model)",
                              vox_model_path(L->m->file), name);
    return 0;
}

static int64_t numel(const vox_tensor_info *t) {
    int64_t n = 1;
    for (int i = 0; i < t->ndim; i++) n *= t->shape[i];
    return n;
}

static float *own(loader *L, size_t n) {
    float *p = malloc(n * sizeof *p);
    float **list = p ? realloc(L->m->owned, (L->m->n_owned + 1) * sizeof *list) : NULL;
    if (!list) {
        free(p);
        L->st = vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
        return NULL;
    }
    L->m->owned = list;
    list[L->m->n_owned++] = p;
    return p;
}

/* A float tensor of exactly n elements as f32: in place when stored f32, else an owned copy. */
static const float *vec_opt(loader *L, const char *name, int64_t n, int required) {
    vox_tensor_info t;
    if (!find(L, name, &t, required)) return NULL;
    if (numel(&t) != n) {
        L->st = vox_set_error(VOX_ERR_FORMAT, "%s: tensor \"%s\" has %lld elements, Kokoro wants %lld",
                              vox_model_path(L->m->file), name, (long long)numel(&t), (long long)n);
        return NULL;
    }
    if (t.dtype == VOX_DTYPE_F32) return t.data;
    if (t.dtype != VOX_DTYPE_BF16 && t.dtype != VOX_DTYPE_F16) {
        L->st = vox_set_error(VOX_ERR_FORMAT, "%s: tensor \"%s\" is %s; Kokoro wants f32, f16 or bf16 there",
                              vox_model_path(L->m->file), name, vox_dtype_name(t.dtype));
        return NULL;
    }
    float *p = own(L, (size_t)n);
    if (p) vx_to_f32(t.dtype, t.data, n, p);
    return p;
}

static const float *vec(loader *L, const char *name, int64_t n) { return vec_opt(L, name, n, 1); }

/* A matrix [rows][cols] (a conv weight [out][in][k] is [out][in * k]) used in place. */
static vx_mat mat(loader *L, const char *name, int64_t rows, int64_t cols) {
    vx_mat w = {0};
    vox_tensor_info t;
    if (!find(L, name, &t, 1)) return w;
    if (numel(&t) != rows * cols || t.shape[0] != rows) {
        L->st = vox_set_error(VOX_ERR_FORMAT, "%s: tensor \"%s\" does not have the shape [%lld, %lld] Kokoro wants",
                              vox_model_path(L->m->file), name, (long long)rows, (long long)cols);
        return w;
    }
    switch (t.dtype) {
    case VOX_DTYPE_F32: case VOX_DTYPE_F16: case VOX_DTYPE_BF16: case VOX_DTYPE_Q8: case VOX_DTYPE_Q4: break;
    default:
        L->st = vox_set_error(VOX_ERR_FORMAT, "%s: tensor \"%s\" is %s, not a weight dtype", vox_model_path(L->m->file),
                              name, vox_dtype_name(t.dtype));
        return w;
    }
    if ((t.dtype == VOX_DTYPE_Q8 || t.dtype == VOX_DTYPE_Q4) && t.shape[t.ndim - 1] != cols) {
        L->st = vox_set_error(VOX_ERR_FORMAT, "%s: tensor \"%s\" is %s with blocks along an axis Kokoro does not "
                              "flatten that way", vox_model_path(L->m->file), name, vox_dtype_name(t.dtype));
        return w;
    }
    w.dtype = t.dtype;
    w.rows = rows;
    w.cols = cols;
    w.data = t.data;
    if (t.dtype == VOX_DTYPE_Q8 || t.dtype == VOX_DTYPE_Q4)
        w.scales = (const float *)((const char *)t.data + vox_dtype_nbytes(t.dtype, (uint64_t)(rows * cols),
                                                                          (uint64_t)cols) - (uint64_t)(rows * cols / 32) * 4);
    return w;
}

static const char *fmt(char *buf, size_t cap, const char *f, ...) {
    va_list ap;
    va_start(ap, f);
    vsnprintf(buf, cap, f, ap);
    va_end(ap);
    return buf;
}

#define NAME(...) fmt(nb, sizeof nb, __VA_ARGS__)

static void lstm(loader *L, vx_lstm *l, const char *p, int64_t in, int64_t hidden) {
    char nb[256];
    l->in = in;
    l->hidden = hidden;
    for (int d = 0; d < 2; d++) {
        const char *sfx = d ? "_reverse" : "";
        l->w_ih[d] = mat(L, NAME("%s.weight_ih_l0%s", p, sfx), 4 * hidden, in);
        l->w_hh[d] = mat(L, NAME("%s.weight_hh_l0%s", p, sfx), 4 * hidden, hidden);
        l->b_ih[d] = vec(L, NAME("%s.bias_ih_l0%s", p, sfx), 4 * hidden);
        l->b_hh[d] = vec(L, NAME("%s.bias_hh_l0%s", p, sfx), 4 * hidden);
    }
}

static void conv(loader *L, kk_conv *c, const char *p, int64_t ci, int64_t co, int64_t k, int bias) {
    char nb[256];
    c->c_in = ci;
    c->c_out = co;
    c->k = k;
    c->w = mat(L, NAME("%s.weight", p), co, ci * k);
    c->b = bias ? vec(L, NAME("%s.bias", p), co) : NULL;
}

static void convt(loader *L, kk_convt *c, const char *p, int64_t ci, int64_t co, int64_t k, int64_t stride,
                  int64_t pad, int64_t groups) {
    char nb[256];
    c->c_in = ci;
    c->c_out = co;
    c->k = k;
    c->stride = stride;
    c->pad = pad;
    c->groups = groups;
    c->w = vec(L, NAME("%s.weight", p), ci * (co / groups) * k);
    c->b = vec(L, NAME("%s.bias", p), co);
}

static void adain(loader *L, vx_adain *a, const char *p, int64_t c) {
    char nb[256];
    a->c = c;
    a->fc = mat(L, NAME("%s.fc.weight", p), 2 * c, KK_STYLE);
    a->fc_b = vec(L, NAME("%s.fc.bias", p), 2 * c);
    a->norm_w = vec_opt(L, NAME("%s.norm.weight", p), c, 0);
    a->norm_b = vec_opt(L, NAME("%s.norm.bias", p), c, 0);
}

static void resblk(loader *L, kk_resblk *b, const char *p, int64_t ci, int64_t co, int upsample) {
    char nb[256];
    adain(L, &b->norm1, NAME("%s.norm1", p), ci);
    adain(L, &b->norm2, NAME("%s.norm2", p), co);
    conv(L, &b->conv1, NAME("%s.conv1", p), ci, co, 3, 1);
    conv(L, &b->conv2, NAME("%s.conv2", p), co, co, 3, 1);
    if (ci != co) conv(L, &b->sc, NAME("%s.conv1x1", p), ci, co, 1, 0);
    b->upsample = upsample;
    if (upsample) convt(L, &b->pool, NAME("%s.pool", p), ci, ci, 3, 2, 1, ci);
}

static void snakeblk(loader *L, kk_snakeblk *b, const char *p, int64_t c, int64_t k) {
    char nb[256];
    b->k = k;
    for (int i = 0; i < 3; i++) {
        b->dil[i] = 2 * i + 1; /* resblock_dilation_sizes [1, 3, 5] (checked at load) */
        adain(L, &b->adain1[i], NAME("%s.adain1.%d", p, i), c);
        adain(L, &b->adain2[i], NAME("%s.adain2.%d", p, i), c);
        conv(L, &b->convs1[i], NAME("%s.convs1.%d", p, i), c, c, k, 1);
        conv(L, &b->convs2[i], NAME("%s.convs2.%d", p, i), c, c, k, 1);
        b->alpha1[i] = vec(L, NAME("%s.alpha1.%d", p, i), c);
        b->alpha2[i] = vec(L, NAME("%s.alpha2.%d", p, i), c);
        for (int w = 0; w < 2; w++) {
            const float *al = w ? b->alpha2[i] : b->alpha1[i];
            float *inv = al ? own(L, (size_t)c) : NULL;
            if (!inv) return;
            for (int64_t ch = 0; ch < c; ch++) inv[ch] = 1.0f / al[ch];
            if (w) b->inv_alpha2[i] = inv; else b->inv_alpha1[i] = inv;
        }
    }
}

static int64_t cfg_int(loader *L, const vox_json *obj, const char *key, int64_t want) {
    const vox_json *v = obj ? vox_json_get(obj, key) : NULL;
    if (failed(L)) return want;
    if (!v || v->type != VOX_JSON_NUMBER || v->number != (double)want) {
        L->st = vox_set_error(VOX_ERR_UNSUPPORTED, "%s: config \"%s\" is not %lld: only the Kokoro-82M v1.0 "
                              "architecture is supported", vox_model_path(L->m->file), key, (long long)want);
    }
    return want;
}

/* The architecture constants are those of Kokoro-82M v1.0 (the official KModel hard-codes several
 * of them: the 128/128 style split, the 1024-channel decoder); the config must agree. */
static void check_config(loader *L) {
    kk_model *m = L->m;
    const vox_json *c = m->config, *pl = c ? vox_json_get(c, "plbert") : NULL, *is = c ? vox_json_get(c, "istftnet") : NULL;
    if (!c || c->type != VOX_JSON_OBJECT || !pl || !is) {
        L->st = vox_set_error(VOX_ERR_FORMAT, "%s: the manifest has no Kokoro \"config\" object", vox_model_path(m->file));
        return;
    }
    m->n_token = cfg_int(L, c, "n_token", 178);
    m->hidden = cfg_int(L, c, "hidden_dim", 512);
    m->n_layers = cfg_int(L, c, "n_layer", 3);
    m->max_dur = cfg_int(L, c, "max_dur", 50);
    cfg_int(L, c, "style_dim", KK_STYLE);
    cfg_int(L, c, "text_encoder_kernel_size", 5);
    m->bert_hidden = cfg_int(L, pl, "hidden_size", 768);
    m->bert_heads = cfg_int(L, pl, "num_attention_heads", 12);
    m->bert_layers = cfg_int(L, pl, "num_hidden_layers", 12);
    m->bert_ffn = cfg_int(L, pl, "intermediate_size", 2048);
    m->bert_ctx = cfg_int(L, pl, "max_position_embeddings", 512);
    m->bert_emb = 128; /* AlbertConfig's default embedding_size (the config does not set it) */
    m->n_fft = cfg_int(L, is, "gen_istft_n_fft", 20);
    m->hop = cfg_int(L, is, "gen_istft_hop_size", 5);
    cfg_int(L, is, "upsample_initial_channel", 512);
    m->vocab = vox_json_get(c, "vocab");
    if (!failed(L) && (!m->vocab || m->vocab->type != VOX_JSON_OBJECT))
        L->st = vox_set_error(VOX_ERR_FORMAT, "%s: the Kokoro config has no \"vocab\"", vox_model_path(m->file));
}

static void load_all(loader *L) {
    kk_model *m = L->m;
    char nb[256], p[128];
    check_config(L);
    if (failed(L)) return;
    const int64_t H = m->hidden, BH = m->bert_hidden, S = KK_STYLE;
    /* PL-BERT */
    m->word_emb = mat(L, "bert.embeddings.word_embeddings.weight", m->n_token, m->bert_emb);
    m->pos_emb = mat(L, "bert.embeddings.position_embeddings.weight", m->bert_ctx, m->bert_emb);
    m->type_emb = mat(L, "bert.embeddings.token_type_embeddings.weight", 2, m->bert_emb);
    m->emb_ln_w = vec(L, "bert.embeddings.LayerNorm.weight", m->bert_emb);
    m->emb_ln_b = vec(L, "bert.embeddings.LayerNorm.bias", m->bert_emb);
    m->emb_in = mat(L, "bert.encoder.embedding_hidden_mapping_in.weight", BH, m->bert_emb);
    m->emb_in_b = vec(L, "bert.encoder.embedding_hidden_mapping_in.bias", BH);
    const char *lp = "bert.encoder.albert_layer_groups.0.albert_layers.0";
    kk_albert_layer *ly = &m->layer;
    ly->q = mat(L, NAME("%s.attention.query.weight", lp), BH, BH);
    ly->q_b = vec(L, NAME("%s.attention.query.bias", lp), BH);
    ly->k = mat(L, NAME("%s.attention.key.weight", lp), BH, BH);
    ly->k_b = vec(L, NAME("%s.attention.key.bias", lp), BH);
    ly->v = mat(L, NAME("%s.attention.value.weight", lp), BH, BH);
    ly->v_b = vec(L, NAME("%s.attention.value.bias", lp), BH);
    ly->o = mat(L, NAME("%s.attention.dense.weight", lp), BH, BH);
    ly->o_b = vec(L, NAME("%s.attention.dense.bias", lp), BH);
    ly->ln1_w = vec(L, NAME("%s.attention.LayerNorm.weight", lp), BH);
    ly->ln1_b = vec(L, NAME("%s.attention.LayerNorm.bias", lp), BH);
    ly->ffn = mat(L, NAME("%s.ffn.weight", lp), m->bert_ffn, BH);
    ly->ffn_b = vec(L, NAME("%s.ffn.bias", lp), m->bert_ffn);
    ly->ffn_out = mat(L, NAME("%s.ffn_output.weight", lp), BH, m->bert_ffn);
    ly->ffn_out_b = vec(L, NAME("%s.ffn_output.bias", lp), BH);
    ly->ln2_w = vec(L, NAME("%s.full_layer_layer_norm.weight", lp), BH);
    ly->ln2_b = vec(L, NAME("%s.full_layer_layer_norm.bias", lp), BH);
    m->bert_enc = mat(L, "bert_encoder.weight", H, BH);
    m->bert_enc_b = vec(L, "bert_encoder.bias", H);
    /* prosody predictor */
    for (int i = 0; i < 3; i++) {
        lstm(L, &m->dur_lstm[i], NAME("predictor.text_encoder.lstms.%d", 2 * i), H + S, H / 2);
        m->dur_ada[i] = mat(L, NAME("predictor.text_encoder.lstms.%d.fc.weight", 2 * i + 1), 2 * H, S);
        m->dur_ada_b[i] = vec(L, NAME("predictor.text_encoder.lstms.%d.fc.bias", 2 * i + 1), 2 * H);
    }
    lstm(L, &m->pred_lstm, "predictor.lstm", H + S, H / 2);
    m->dur_proj = mat(L, "predictor.duration_proj.linear_layer.weight", m->max_dur, H);
    m->dur_proj_b = vec(L, "predictor.duration_proj.linear_layer.bias", m->max_dur);
    lstm(L, &m->shared, "predictor.shared", H + S, H / 2);
    for (int br = 0; br < 2; br++) {
        kk_resblk *b = br ? m->n : m->f0;
        const char *nm = br ? "N" : "F0";
        resblk(L, &b[0], fmt(p, sizeof p, "predictor.%s.0", nm), H, H, 0);
        resblk(L, &b[1], fmt(p, sizeof p, "predictor.%s.1", nm), H, H / 2, 1);
        resblk(L, &b[2], fmt(p, sizeof p, "predictor.%s.2", nm), H / 2, H / 2, 0);
    }
    conv(L, &m->f0_proj, "predictor.F0_proj", H / 2, 1, 1, 1);
    conv(L, &m->n_proj, "predictor.N_proj", H / 2, 1, 1, 1);
    /* text encoder */
    m->te_emb = mat(L, "text_encoder.embedding.weight", m->n_token, H);
    for (int i = 0; i < 3; i++) {
        conv(L, &m->te_cnn[i], fmt(p, sizeof p, "text_encoder.cnn.%d.0", i), H, H, 5, 1);
        m->te_ln_g[i] = vec(L, NAME("text_encoder.cnn.%d.1.gamma", i), H);
        m->te_ln_b[i] = vec(L, NAME("text_encoder.cnn.%d.1.beta", i), H);
    }
    lstm(L, &m->te_lstm, "text_encoder.lstm", H, H / 2);
    /* decoder */
    resblk(L, &m->enc, "decoder.encode", H + 2, 1024, 0);
    for (int i = 0; i < 4; i++)
        resblk(L, &m->dec[i], fmt(p, sizeof p, "decoder.decode.%d", i), 1024 + 2 + 64, i == 3 ? 512 : 1024, i == 3);
    conv(L, &m->f0_conv, "decoder.F0_conv", 1, 1, 3, 1);
    conv(L, &m->n_conv, "decoder.N_conv", 1, 1, 3, 1);
    conv(L, &m->asr_res, "decoder.asr_res.0", H, 64, 1, 1);
    /* generator: upsample_rates [10, 6], kernels [20, 12], 512 -> 256 -> 128 channels */
    static const int64_t rates[2] = {10, 6}, kernels[2] = {20, 12}, rk[3] = {3, 7, 11};
    const int64_t post = m->n_fft + 2;
    for (int i = 0; i < 2; i++) {
        int64_t ci = 512 >> i, co = 512 >> (i + 1);
        convt(L, &m->ups[i], fmt(p, sizeof p, "decoder.generator.ups.%d", i), ci, co, kernels[i], rates[i],
              (kernels[i] - rates[i]) / 2, 1);
        for (int j = 0; j < 3; j++)
            snakeblk(L, &m->resblocks[i * 3 + j], fmt(p, sizeof p, "decoder.generator.resblocks.%d", i * 3 + j), co, rk[j]);
        int64_t stride_f0 = i == 0 ? rates[1] : 1, k = i == 0 ? 2 * stride_f0 : 1;
        m->noise_stride[i] = stride_f0;
        m->noise_pad[i] = i == 0 ? (stride_f0 + 1) / 2 : 0;
        conv(L, &m->noise_convs[i], fmt(p, sizeof p, "decoder.generator.noise_convs.%d", i), post, co, k, 1);
        snakeblk(L, &m->noise_res[i], fmt(p, sizeof p, "decoder.generator.noise_res.%d", i), co, i == 0 ? 7 : 11);
    }
    conv(L, &m->conv_post, "decoder.generator.conv_post", 128, post, 7, 1);
    m->l_linear_w = vec(L, "decoder.generator.m_source.l_linear.weight", 9);
    m->l_linear_b = vec(L, "decoder.generator.m_source.l_linear.bias", 1);
}

/* The tables of the generator's DFT-basis STFT and iSTFT (dsp/dft_stft.h). */
static void stft_tables(loader *L) {
    kk_model *m = L->m;
    const int64_t n = m->n_fft, bins = n / 2 + 1;
    m->stft_basis = malloc((size_t)(2 * bins * n) * sizeof(float));
    m->istft_basis = malloc((size_t)(2 * bins * n) * sizeof(float));
    m->istft_env_window = malloc((size_t)n * sizeof(float));
    if (!m->stft_basis || !m->istft_basis || !m->istft_env_window) {
        L->st = vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
        return;
    }
    vx_dft_stft_tables(n, m->istft_env_window, m->stft_basis, m->istft_basis);
}

/* The bf16 path: pack every Snake resblock convolution of the generator (resblocks, noise_res) and
 * every convolution of the decoder's AdainResBlk1d stack (encode, decode.0-3).
 * Each packed copy replaces its source weights in memory: their pages are dropped from the resident
 * set as soon as the copy exists (only the packed weights are read from then on; were the f32 path
 * used after a failure further on, the pages would come back from the file). */
static void drop_f32(kk_model *m, const kk_conv *c) {
    vox_model_drop_pages(m->file, c->w.data,
                         (size_t)vox_dtype_nbytes(c->w.dtype, (uint64_t)(c->w.rows * c->w.cols), (uint64_t)c->w.cols));
}

static vox_status pack_one(kk_model *m, kk_conv *c) {
    if (!c->w.data) return VOX_OK; /* an identity shortcut */
    vox_status st = c->k == 1 ? vx_bf16w_pack(&c->w, &c->bw) : vx_bf16w_pack_conv(&c->w, c->c_in, c->k, &c->bw);
    if (st == VOX_OK) drop_f32(m, c);
    return st;
}

static vox_status pack_one_i8(kk_model *m, kk_conv *c) {
    if (!c->w.data) return VOX_OK;
    vox_status st = vx_i8w_pack_conv(&c->w, c->c_in, c->k, &c->iw);
    if (st == VOX_OK) drop_f32(m, c);
    return st;
}

/* The generator's Snake resblocks (the six of the main branch and the two of the noise branch) as int8
 * dot products: ~95% of the model's multiplies. The decoder's AdainResBlk1d stack stays in bf16/f32:
 * quantized to 8 bits as well, it moved the audio ~2x more than all the Snake resblocks together. */
static vox_status pack_resblocks_i8(kk_model *m) {
    for (int b = 0; b < 8; b++) {
        kk_snakeblk *k = b < 6 ? &m->resblocks[b] : &m->noise_res[b - 6];
        for (int i = 0; i < 3; i++) {
            vox_status st;
            if ((st = pack_one_i8(m, &k->convs1[i])) != VOX_OK || (st = pack_one_i8(m, &k->convs2[i])) != VOX_OK)
                return st;
        }
    }
    m->gen_int8 = 1;
    return VOX_OK;
}

/* the generator's Snake resblocks (unless already int8) and the decoder */
static vox_status pack_generator_bf16(kk_model *m) {
    kk_snakeblk *blocks[8];
    for (int i = 0; i < 6; i++) blocks[i] = &m->resblocks[i];
    blocks[6] = &m->noise_res[0], blocks[7] = &m->noise_res[1];
    for (int b = m->gen_int8 ? 8 : 0; b < 8; b++)
        for (int i = 0; i < 3; i++) {
            vox_status st;
            if ((st = pack_one(m, &blocks[b]->convs1[i])) != VOX_OK || (st = pack_one(m, &blocks[b]->convs2[i])) != VOX_OK)
                return st;
        }
    /* the generator's two upsampling ConvTranspose1d (~3.7 GFLOP of a short sentence in f32): their
     * weight [c_in][c_out][k] transposed into rows of c_in, tap-major (row j * c_out + o: a tap's
     * products of all channels are contiguous for the overlap-add), packed, the f32 pages dropped */
    for (int i = 0; i < 2; i++) {
        kk_convt *u = &m->ups[i];
        const int64_t rows = u->c_out * u->k, ci = u->c_in, co = u->c_out, k = u->k;
        float *t = malloc((size_t)(rows * ci) * sizeof *t);
        if (!t) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
        for (int64_t c = 0; c < ci; c++)
            for (int64_t o = 0; o < co; o++)
                for (int64_t j = 0; j < k; j++) t[(j * co + o) * ci + c] = u->w[(c * co + o) * k + j];
        vx_mat tm = {.dtype = VOX_DTYPE_F32, .rows = rows, .cols = ci, .data = t};
        vox_status st = vx_bf16w_pack(&tm, &u->bw);
        free(t);
        if (st != VOX_OK) return st;
        vox_model_drop_pages(m->file, u->w, (size_t)(rows * ci) * sizeof *u->w);
    }
    /* the decoder's AdainResBlk1d stack (encode, decode.0-3) before it: its 1024-channel convolutions
     * run at twice the frame rate, ~8% of a span's time in f32, and hold 126 MB of f32 weights */
    kk_resblk *dec[5] = {&m->enc, &m->dec[0], &m->dec[1], &m->dec[2], &m->dec[3]};
    for (int b = 0; b < 5; b++) {
        vox_status st;
        if ((st = pack_one(m, &dec[b]->conv1)) != VOX_OK || (st = pack_one(m, &dec[b]->conv2)) != VOX_OK ||
            (st = pack_one(m, &dec[b]->sc)) != VOX_OK)
            return st;
    }
    m->gen_bf16 = 1;
    return VOX_OK;
}

static void free_packed(kk_model *m) {
    for (int b = 0; b < 8; b++) {
        kk_snakeblk *k = b < 6 ? &m->resblocks[b] : &m->noise_res[b - 6];
        for (int i = 0; i < 3; i++) {
            vx_bf16w_free(&k->convs1[i].bw), vx_bf16w_free(&k->convs2[i].bw);
            vx_i8w_free(&k->convs1[i].iw), vx_i8w_free(&k->convs2[i].iw);
        }
    }
    kk_resblk *dec[5] = {&m->enc, &m->dec[0], &m->dec[1], &m->dec[2], &m->dec[3]};
    for (int b = 0; b < 5; b++) vx_bf16w_free(&dec[b]->conv1.bw), vx_bf16w_free(&dec[b]->conv2.bw), vx_bf16w_free(&dec[b]->sc.bw);
    vx_bf16w_free(&m->ups[0].bw), vx_bf16w_free(&m->ups[1].bw);
    m->gen_bf16 = m->gen_int8 = 0;
}

/* Packs what the CPU and VOX_KOKORO_GEN allow; weights the packers do not take (q8 / q4 matrices)
 * run through their own kernels. */
static vox_status pack_generator(kk_model *m, int want_int8, int want_bf16) {
    vox_status st = VOX_OK;
    if (want_int8 && (st = pack_resblocks_i8(m)) != VOX_OK) goto fail;
    if (want_bf16 && (st = pack_generator_bf16(m)) != VOX_OK) goto fail;
    m->gen_math = m->gen_int8 ? (m->gen_bf16 ? "int8+bf16" : "int8+f32") : m->gen_bf16 ? "bf16" : "f32";
    return VOX_OK;
fail:
    free_packed(m);
    m->gen_math = "f32";
    if (st == VOX_ERR_OUT_OF_MEMORY) return st;
    vox_clear_error();
    m->gen_math_why = "weights not f32/bf16";
    return VOX_OK;
}

/* The decoder's and generator's math (kokoro.h, kk_model.gen_math), from what the kernel path offers
 * (vx_cpu_dots): by default int8 for the generator's resblocks where the path has an int8 convolution
 * kernel and bf16 for the other convolutions where it has a bf16 one (each held to the f32 limits of
 * every spectral and perceptual row), f32 elsewhere (the scalar path). VOX_KOKORO_GEN=int8, bf16 or
 * f32 asks for one (int8 still uses bf16 for the rest where it can; on a path without the kernel a
 * line on stderr says what runs instead); the engine info's precision.generator_math always says which
 * ran and generator_math_why why. */
static vox_status choose_generator_math(kk_model *m) {
    const char *env = getenv("VOX_KOKORO_GEN");
    if (!env || !*env) env = "auto";
    const int is_auto = strcmp(env, "auto") == 0, ask_int8 = strcmp(env, "int8") == 0,
              ask_bf16 = strcmp(env, "bf16") == 0, ask_f32 = strcmp(env, "f32") == 0;
    if (!is_auto && !ask_int8 && !ask_bf16 && !ask_f32)
        return vox_set_error(VOX_ERR_INVALID_ARGUMENT,
                             "VOX_KOKORO_GEN=%s: use auto (the default: int8 and bf16 where the CPU path has them), int8, "
                             "bf16 or f32", env);
    m->gen_math = "f32";
    if (ask_f32) {
        m->gen_math_why = "VOX_KOKORO_GEN=f32";
        return VOX_OK;
    }
    const vx_dot_caps dots = vx_cpu_dots();
    const char *path = vx_cpu()->name;
    const int want_int8 = dots.int8 && !ask_bf16, want_bf16 = dots.bf16 != NULL;
    if (ask_int8 && !dots.int8)
        fprintf(stderr, "vox: VOX_KOKORO_GEN=int8: the CPU path %s has no int8 convolution kernel; the Kokoro generator "
                        "runs in %s\n", path, want_bf16 ? "bf16" : "f32");
    if (ask_bf16 && !dots.bf16)
        fprintf(stderr, "vox: VOX_KOKORO_GEN=bf16: the CPU path %s has no bf16 convolution kernel; the Kokoro "
                        "generator runs in f32\n", path);
    /* the reason names the kernels (and the path when nothing is packed) */
    snprintf(m->gen_math_why_buf, sizeof m->gen_math_why_buf, "%s%s%s%s%s%s",
             is_auto ? "" : ask_int8 ? "VOX_KOKORO_GEN=int8; " : "VOX_KOKORO_GEN=bf16; ",
             want_int8 ? "int8: " : "", want_int8 ? dots.int8 : "", want_int8 && want_bf16 ? "; " : "",
             want_bf16 ? "bf16: " : "", want_bf16 ? dots.bf16 : "");
    if (!want_int8 && !want_bf16)
        snprintf(m->gen_math_why_buf, sizeof m->gen_math_why_buf, "%sthe CPU path %s has no int8 or bf16 convolution kernel",
                 is_auto ? "" : ask_int8 ? "VOX_KOKORO_GEN=int8; " : "VOX_KOKORO_GEN=bf16; ", path);
    m->gen_math_why = m->gen_math_why_buf;
    return pack_generator(m, want_int8, want_bf16);
}

vox_status kk_model_load(vox_model *file, const vox_json *manifest, kk_model **out) {
    *out = NULL;
    kk_model *m = calloc(1, sizeof *m);
    if (!m) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    m->file = file;
    m->manifest = manifest;
    m->config = vox_json_get(manifest, "config");
    const vox_json *id = vox_json_get(manifest, "model_id"), *var = vox_json_get(manifest, "variant");
    if (id && id->type == VOX_JSON_STRING) snprintf(m->model_id, sizeof m->model_id, "%s", id->str);
    snprintf(m->variant, sizeof m->variant, "%s", var && var->type == VOX_JSON_STRING ? var->str : "v1.0");
    loader L = {.m = m, .st = VOX_OK};
    load_all(&L);
    if (!failed(&L)) stft_tables(&L);
    if (failed(&L)) {
        kk_model_free(m);
        return L.st;
    }
    if ((L.st = choose_generator_math(m)) != VOX_OK) {
        kk_model_free(m);
        return L.st;
    }
    const vox_json *spk = vox_json_get(manifest, "speakers");
    for (const vox_json *c = spk && spk->type == VOX_JSON_ARRAY ? spk->child : NULL; c; c = c->next) m->n_speakers++;
    /* the text frontend, when the model carries its data (phoneme input works without it) */
    if (vox_json_get(manifest, "frontend")) {
        vox_status st = vx_kfront_create(file, manifest, &m->front);
        if (st != VOX_OK) {
            kk_model_free(m);
            return st;
        }
    }
    *out = m;
    return VOX_OK;
}

void kk_model_free(kk_model *m) {
    if (!m) return;
    vx_kfront_destroy(m->front);
    free_packed(m);
    for (size_t i = 0; i < m->n_owned; i++) free(m->owned[i]);
    free(m->owned);
    free(m->stft_basis);
    free(m->istft_basis);
    free(m->istft_env_window);
    free(m);
}

const float *kk_speaker_pack(const kk_model *m, const char *name, char *canon, size_t canon_cap) {
    const vox_json *spk = vox_json_get(m->manifest, "speakers");
    for (const vox_json *c = spk && spk->type == VOX_JSON_ARRAY ? spk->child : NULL; c; c = c->next) {
        if (c->type != VOX_JSON_STRING || strcasecmp(c->str, name) != 0) continue;
        char tn[256];
        snprintf(tn, sizeof tn, "voices.%s", c->str);
        vox_tensor_info t;
        if (vox_model_find_tensor(m->file, tn, &t) != VOX_OK || t.dtype != VOX_DTYPE_F32 ||
            t.nbytes != (uint64_t)KK_PACK_ROWS * 2 * KK_STYLE * 4) {
            vox_set_error(VOX_ERR_FORMAT, "%s: the voice pack \"%s\" is missing or not f32 [%d, %d]",
                          vox_model_path(m->file), tn, KK_PACK_ROWS, 2 * KK_STYLE);
            return NULL;
        }
        if (canon) snprintf(canon, canon_cap, "%s", c->str);
        return t.data;
    }
    char list[1024] = "";
    size_t used = 0;
    for (const vox_json *c = spk && spk->type == VOX_JSON_ARRAY ? spk->child : NULL; c; c = c->next)
        if (c->type == VOX_JSON_STRING && used + c->str_len + 3 < sizeof list)
            used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", used ? ", " : "", c->str);
    vox_set_error(VOX_ERR_NOT_FOUND, "unknown speaker \"%s\"; this model has: %s", name, used ? list : "(none)");
    return NULL;
}
