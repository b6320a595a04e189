/* Binding an f5_tts .tmod (docs/formats.md, "F5-TTS models") to f5_model: the config from the
 * manifest's "config" (the reference's F5Config), every tensor by its official name with its shape
 * checked, the text frontend, the mel filterbank and the windows. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../dsp/melbank.h"
#include "../dsp/stft.h"
#include "../error.h"
#include "../tmod.h"
#include "f5.h"

typedef struct loader {
    f5_model *m;
    vox_status st;
} loader;

static int failed(const loader *L) { return L->st != VOX_OK; }
static const char *path_of(const loader *L) { return vox_model_path(L->m->file); }

static int64_t numel(const vox_tensor_info *t) {
    int64_t n = 1;
    for (int i = 0; i < t->ndim; i++) n *= t->shape[i];
    return n;
}

static int find(loader *L, const char *name, vox_tensor_info *t) {
    if (failed(L)) return 0;
    if (vox_model_find_tensor(L->m->file, name, t) == VOX_OK) return 1;
    vox_clear_error();
    L->st = vox_set_error(VOX_ERR_FORMAT, "%s: tensor \"%s\" is missing (not a complete F5-TTS model)", path_of(L), name);
    return 0;
}

/* n floats the model owns (freed with it); NULL when out of memory */
static float *model_own(f5_model *m, size_t n) {
    float *p = malloc((n ? n : 1) * sizeof *p);
    float **list = p ? realloc(m->owned, (m->n_owned + 1) * sizeof *list) : NULL;
    if (!list) {
        free(p);
        return NULL;
    }
    m->owned = list;
    list[m->n_owned++] = p;
    return p;
}

static float *own(loader *L, size_t n) {
    float *p = model_own(L->m, n);
    if (!p) L->st = vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    return p;
}

/* A float tensor of n elements as f32: in place when stored f32, else an owned copy. */
static const float *vec(loader *L, const char *name, int64_t n) {
    vox_tensor_info t;
    if (!find(L, name, &t)) return NULL;
    if (numel(&t) != n) {
        L->st = vox_set_error(VOX_ERR_FORMAT, "%s: tensor \"%s\" has %lld elements, the config needs %lld", path_of(L),
                              name, (long long)numel(&t), (long long)n);
        return NULL;
    }
    if (t.dtype == VOX_DTYPE_F32) return t.data;
    if (t.dtype != VOX_DTYPE_F16 && t.dtype != VOX_DTYPE_BF16) {
        L->st = vox_set_error(VOX_ERR_FORMAT, "%s: tensor \"%s\" is %s; F5-TTS keeps it in f32, f16 or bf16", path_of(L),
                              name, vox_dtype_name(t.dtype));
        return NULL;
    }
    float *p = own(L, (size_t)n);
    if (p) vx_to_f32(t.dtype, t.data, n, p);
    return p;
}

/* A matrix [rows][cols] used in place (a conv weight [out][in][k] is [out][in * k]). */
static vx_mat mat(loader *L, const char *name, int64_t rows, int64_t cols) {
    vx_mat w = {0};
    vox_tensor_info t;
    if (!find(L, name, &t)) return w;
    if (numel(&t) != rows * cols || t.shape[0] != rows) {
        L->st = vox_set_error(VOX_ERR_FORMAT, "%s: tensor \"%s\" does not have the shape [%lld, %lld] the config gives",
                              path_of(L), name, (long long)rows, (long long)cols);
        return w;
    }
    switch (t.dtype) {
    case VOX_DTYPE_F32: case VOX_DTYPE_F16: case VOX_DTYPE_BF16: case VOX_DTYPE_Q8: break;
    default:
        L->st = vox_set_error(VOX_ERR_FORMAT, "%s: tensor \"%s\" is %s, not a weight dtype of F5-TTS (f32, f16, bf16, q8)",
                              path_of(L), name, vox_dtype_name(t.dtype));
        return w;
    }
    if (t.dtype == VOX_DTYPE_Q8 && t.shape[t.ndim - 1] != cols) {
        L->st = vox_set_error(VOX_ERR_FORMAT, "%s: tensor \"%s\" is q8 with blocks along an axis F5-TTS does not flatten "
                              "that way", path_of(L), name);
        return w;
    }
    w.dtype = t.dtype;
    w.rows = rows;
    w.cols = cols;
    w.data = t.data;
    if (t.dtype == VOX_DTYPE_Q8) w.scales = (const float *)((const char *)t.data + (size_t)(rows * cols));
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

/* ------------------------------------------------------------------------------ config */
static int64_t cfg_int(loader *L, const vox_json *o, const char *sec, const char *key, int64_t lo, int64_t hi) {
    const vox_json *v = vox_json_get(o, key);
    if (failed(L)) return lo;
    if (!v || v->type != VOX_JSON_NUMBER || !v->is_integer || v->integer < lo || v->integer > hi) {
        L->st = vox_set_error(VOX_ERR_FORMAT, "%s: config %s.%s must be an integer in [%lld, %lld]", path_of(L), sec, key,
                              (long long)lo, (long long)hi);
        return lo;
    }
    return v->integer;
}

static double cfg_num(loader *L, const vox_json *o, const char *sec, const char *key, double lo, double hi, int nullable,
                      double dflt) {
    const vox_json *v = vox_json_get(o, key);
    if (failed(L)) return lo;
    if (nullable && v && v->type == VOX_JSON_NULL) return dflt;
    if (!v || v->type != VOX_JSON_NUMBER || !(v->number >= lo && v->number <= hi)) {
        L->st = vox_set_error(VOX_ERR_FORMAT, "%s: config %s.%s must be a number in [%g, %g]", path_of(L), sec, key, lo, hi);
        return lo;
    }
    return v->number;
}

static int cfg_bool(loader *L, const vox_json *o, const char *sec, const char *key) {
    const vox_json *v = vox_json_get(o, key);
    if (failed(L)) return 0;
    if (!v || (v->type != VOX_JSON_TRUE && v->type != VOX_JSON_FALSE)) {
        L->st = vox_set_error(VOX_ERR_FORMAT, "%s: config %s.%s must be true or false", path_of(L), sec, key);
        return 0;
    }
    return v->type == VOX_JSON_TRUE;
}

static void read_config(loader *L) {
    f5_config *c = &L->m->c;
    const vox_json *cfg = vox_json_get(L->m->manifest, "config");
    const vox_json *dit = vox_json_get(cfg, "dit"), *mel = vox_json_get(cfg, "mel"), *voc = vox_json_get(cfg, "vocos"),
                   *inf = vox_json_get(cfg, "infer"), *var = vox_json_get(L->m->manifest, "variant");
    snprintf(c->variant, sizeof c->variant, "%s", var && var->type == VOX_JSON_STRING ? var->str : "v1");
    c->dim = cfg_int(L, dit, "dit", "dim", 1, 65536);
    c->depth = cfg_int(L, dit, "dit", "depth", 1, 1024);
    c->heads = cfg_int(L, dit, "dit", "heads", 1, 1024);
    c->dim_head = cfg_int(L, dit, "dit", "dim_head", 2, 1024);
    c->ff_mult = cfg_int(L, dit, "dit", "ff_mult", 1, 64);
    c->text_dim = cfg_int(L, dit, "dit", "text_dim", 1, 65536);
    c->text_num_embeds = cfg_int(L, dit, "dit", "text_num_embeds", 1, 1 << 24);
    c->mel_dim = cfg_int(L, dit, "dit", "mel_dim", 1, 1024);
    c->conv_layers = cfg_int(L, dit, "dit", "conv_layers", 0, 1024);
    c->text_mask_padding = cfg_bool(L, dit, "dit", "text_mask_padding");
    const vox_json *pe = vox_json_get(dit, "pe_attn_head");
    c->pe_attn_head = pe && pe->type == VOX_JSON_NULL ? c->heads : cfg_int(L, dit, "dit", "pe_attn_head", 1, c->heads);
    c->sample_rate = cfg_int(L, mel, "mel", "sample_rate", 8000, 192000);
    c->n_fft = cfg_int(L, mel, "mel", "n_fft", 16, 1 << 16);
    c->hop = cfg_int(L, mel, "mel", "hop_length", 1, 1 << 16);
    c->win = cfg_int(L, mel, "mel", "win_length", 1, 1 << 16);
    c->n_mels = cfg_int(L, mel, "mel", "n_mels", 1, 1024);
    const vox_json *mt = vox_json_get(mel, "mel_spec_type");
    if (!failed(L) && !vox_json_is_string(mt, "vocos"))
        L->st = vox_set_error(VOX_ERR_UNSUPPORTED, "%s: config mel.mel_spec_type must be \"vocos\" (the bigvgan mel and "
                              "vocoder are not supported)", path_of(L));
    if (!failed(L) && (c->n_fft & (c->n_fft - 1)))
        L->st = vox_set_error(VOX_ERR_UNSUPPORTED, "%s: mel n_fft %lld is not a power of two", path_of(L), (long long)c->n_fft);
    if (!failed(L) && c->win != c->n_fft)
        L->st = vox_set_error(VOX_ERR_UNSUPPORTED, "%s: mel win_length %lld differs from n_fft %lld", path_of(L),
                              (long long)c->win, (long long)c->n_fft);
    if (!failed(L) && c->mel_dim != c->n_mels)
        L->st = vox_set_error(VOX_ERR_FORMAT, "%s: the DiT's mel_dim %lld differs from the mel's n_mels %lld", path_of(L),
                              (long long)c->mel_dim, (long long)c->n_mels);
    c->voc_in = cfg_int(L, voc, "vocos", "input_channels", c->n_mels, c->n_mels);
    c->voc_dim = cfg_int(L, voc, "vocos", "dim", 1, 65536);
    c->voc_hidden = cfg_int(L, voc, "vocos", "intermediate_dim", 1, 1 << 20);
    c->voc_layers = cfg_int(L, voc, "vocos", "num_layers", 0, 1024);
    c->voc_n_fft = cfg_int(L, voc, "vocos", "n_fft", 16, 1 << 16);
    c->voc_hop = cfg_int(L, voc, "vocos", "hop_length", 1, 1 << 16);
    const vox_json *pad = vox_json_get(voc, "padding");
    if (!failed(L) && !vox_json_is_string(pad, "center") && !vox_json_is_string(pad, "same"))
        L->st = vox_set_error(VOX_ERR_FORMAT, "%s: config vocos.padding must be \"center\" or \"same\"", path_of(L));
    c->voc_same_padding = vox_json_is_string(pad, "same");
    if (!failed(L) && ((c->voc_n_fft & (c->voc_n_fft - 1)) || c->voc_hop != c->hop))
        L->st = vox_set_error(VOX_ERR_UNSUPPORTED, "%s: Vocos n_fft %lld / hop %lld do not fit the mel (hop %lld)",
                              path_of(L), (long long)c->voc_n_fft, (long long)c->voc_hop, (long long)c->hop);
    c->target_rms = (float)cfg_num(L, inf, "infer", "target_rms", 1e-6, 1.0, 0, 0);
    c->cross_fade = (float)cfg_num(L, inf, "infer", "cross_fade_duration", 0.0, 10.0, 0, 0);
    c->nfe_step = (int32_t)cfg_int(L, inf, "infer", "nfe_step", 1, 1024);
    c->cfg_strength = (float)cfg_num(L, inf, "infer", "cfg_strength", 0.0, 100.0, 0, 0);
    c->sway = (float)cfg_num(L, inf, "infer", "sway_sampling_coef", -10.0, 10.0, 1, 0.0);
    c->speed = (float)cfg_num(L, inf, "infer", "speed", 1e-3, 100.0, 0, 0);
    c->use_epss = cfg_bool(L, inf, "infer", "use_epss");
    c->max_duration = cfg_int(L, inf, "infer", "max_duration", 2, 1 << 20);
    if (!failed(L) && c->heads * c->dim_head <= 0) L->st = vox_set_error(VOX_ERR_FORMAT, "%s: bad DiT heads", path_of(L));
}

/* ------------------------------------------------------------------------------ tensors */
static void convnext(loader *L, vx_convnext *b, const char *p, int64_t dim, int64_t hidden, int grn) {
    char nb[256];
    b->dim = dim, b->hidden = hidden, b->k = 7, b->eps = 1e-6f;
    b->dw_w = vec(L, NAME("%sdwconv.weight", p), dim * 7);
    b->dw_b = vec(L, NAME("%sdwconv.bias", p), dim);
    b->ln_w = vec(L, NAME("%snorm.weight", p), dim);
    b->ln_b = vec(L, NAME("%snorm.bias", p), dim);
    b->pw1 = mat(L, NAME("%spwconv1.weight", p), hidden, dim);
    b->pw1_b = vec(L, NAME("%spwconv1.bias", p), hidden);
    b->pw2 = mat(L, NAME("%spwconv2.weight", p), dim, hidden);
    b->pw2_b = vec(L, NAME("%spwconv2.bias", p), dim);
    if (grn) {
        b->grn_gamma = vec(L, NAME("%sgrn.gamma", p), hidden);
        b->grn_beta = vec(L, NAME("%sgrn.beta", p), hidden);
    } else {
        b->gamma = vec(L, NAME("%sgamma", p), dim);
    }
}

static void load_tensors(loader *L) {
    f5_model *m = L->m;
    const f5_config *c = &m->c;
    char nb[256], p[160];
    const int64_t d = c->dim, inner = c->heads * c->dim_head, td = c->text_dim, ff = c->ff_mult * d;
    m->text_embed = mat(L, "transformer.text_embed.text_embed.weight", c->text_num_embeds + 1, td);
    m->text_blocks = calloc((size_t)(c->conv_layers ? c->conv_layers : 1), sizeof *m->text_blocks);
    if (!m->text_blocks) L->st = vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    for (int64_t i = 0; i < c->conv_layers && !failed(L); i++)
        convnext(L, &m->text_blocks[i].b, fmt(p, sizeof p, "transformer.text_embed.text_blocks.%lld.", (long long)i), td,
                 2 * td, 1);
    m->in_proj = mat(L, "transformer.input_embed.proj.weight", d, 2 * c->mel_dim + td);
    m->in_proj_b = vec(L, "transformer.input_embed.proj.bias", d);
    if (!failed(L) && d % 16)
        L->st = vox_set_error(VOX_ERR_FORMAT, "%s: the DiT's dim %lld is not a multiple of the 16 groups of its "
                              "positional convolution", path_of(L), (long long)d);
    m->conv0 = mat(L, "transformer.input_embed.conv_pos_embed.conv1d.0.weight", d, d / 16 * 31);
    m->conv0_b = vec(L, "transformer.input_embed.conv_pos_embed.conv1d.0.bias", d);
    m->conv2 = mat(L, "transformer.input_embed.conv_pos_embed.conv1d.2.weight", d, d / 16 * 31);
    m->conv2_b = vec(L, "transformer.input_embed.conv_pos_embed.conv1d.2.bias", d);
    m->t1 = mat(L, "transformer.time_embed.time_mlp.0.weight", d, 2 * F5_TIME_FREQS);
    m->t1_b = vec(L, "transformer.time_embed.time_mlp.0.bias", d);
    m->t2 = mat(L, "transformer.time_embed.time_mlp.2.weight", d, d);
    m->t2_b = vec(L, "transformer.time_embed.time_mlp.2.bias", d);
    m->inv_freq = vec(L, "transformer.rotary_embed.inv_freq", c->dim_head / 2);
    m->blocks = calloc((size_t)c->depth, sizeof *m->blocks);
    if (!m->blocks && !failed(L)) L->st = vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    for (int64_t i = 0; i < c->depth && !failed(L); i++) {
        f5_block *b = &m->blocks[i];
        fmt(p, sizeof p, "transformer.transformer_blocks.%lld.", (long long)i);
        b->mod = mat(L, NAME("%sattn_norm.linear.weight", p), 6 * d, d);
        b->mod_b = vec(L, NAME("%sattn_norm.linear.bias", p), 6 * d);
        b->q = mat(L, NAME("%sattn.to_q.weight", p), inner, d);
        b->q_b = vec(L, NAME("%sattn.to_q.bias", p), inner);
        b->k = mat(L, NAME("%sattn.to_k.weight", p), inner, d);
        b->k_b = vec(L, NAME("%sattn.to_k.bias", p), inner);
        b->v = mat(L, NAME("%sattn.to_v.weight", p), inner, d);
        b->v_b = vec(L, NAME("%sattn.to_v.bias", p), inner);
        b->o = mat(L, NAME("%sattn.to_out.0.weight", p), d, inner);
        b->o_b = vec(L, NAME("%sattn.to_out.0.bias", p), d);
        b->ff1 = mat(L, NAME("%sff.ff.0.0.weight", p), ff, d);
        b->ff1_b = vec(L, NAME("%sff.ff.0.0.bias", p), ff);
        b->ff2 = mat(L, NAME("%sff.ff.2.weight", p), d, ff);
        b->ff2_b = vec(L, NAME("%sff.ff.2.bias", p), d);
    }
    m->norm_out = mat(L, "transformer.norm_out.linear.weight", 2 * d, d);
    m->norm_out_b = vec(L, "transformer.norm_out.linear.bias", 2 * d);
    m->proj_out = mat(L, "transformer.proj_out.weight", c->mel_dim, d);
    m->proj_out_b = vec(L, "transformer.proj_out.bias", c->mel_dim);
    /* Vocos */
    f5_vocos *v = &m->voc;
    const int64_t vd = c->voc_dim;
    v->embed = mat(L, "vocos.backbone.embed.weight", vd, c->voc_in * 7);
    v->embed_b = vec(L, "vocos.backbone.embed.bias", vd);
    v->norm_w = vec(L, "vocos.backbone.norm.weight", vd);
    v->norm_b = vec(L, "vocos.backbone.norm.bias", vd);
    v->blocks = calloc((size_t)(c->voc_layers ? c->voc_layers : 1), sizeof *v->blocks);
    if (!v->blocks && !failed(L)) L->st = vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    for (int64_t i = 0; i < c->voc_layers && !failed(L); i++)
        convnext(L, &v->blocks[i], fmt(p, sizeof p, "vocos.backbone.convnext.%lld.", (long long)i), vd, c->voc_hidden, 0);
    v->final_w = vec(L, "vocos.backbone.final_layer_norm.weight", vd);
    v->final_b = vec(L, "vocos.backbone.final_layer_norm.bias", vd);
    v->head = mat(L, "vocos.head.out.weight", c->voc_n_fft + 2, vd);
    v->head_b = vec(L, "vocos.head.out.bias", c->voc_n_fft + 2);
}

/* A block's six linear layers (q, k, v, o, ff1, ff2) and their packed forms, in one order. */
typedef struct block_linears {
    vx_mat *w[6];
    vx_bf16w *bf16[6];
    vx_q8w *q8[6];
} block_linears;
static block_linears linears_of(f5_block *b) {
    return (block_linears){{&b->q, &b->k, &b->v, &b->o, &b->ff1, &b->ff2},
                           {&b->pq, &b->pk, &b->pv, &b->po, &b->pff1, &b->pff2},
                           {&b->qq, &b->qk, &b->qv, &b->qo, &b->qff1, &b->qff2}};
}

/* After a linear's weights were packed (the packed copy is all the products read), its pages of the
 * mapped .tmod are given back: clean file pages, so nothing is lost (they fault back in if read), and a
 * packed model no longer holds its weights twice in memory. */
static void drop_unpacked(const f5_model *m, const vx_mat *w) {
    const size_t n = (size_t)(w->rows * w->cols);   /* q8: a byte a weight; bf16: two */
    vox_model_drop_pages(m->file, w->data, w->dtype == VOX_DTYPE_Q8 ? n : 2 * n);
    if (w->scales) vox_model_drop_pages(m->file, w->scales, (size_t)(w->rows * (w->cols / 32)) * sizeof(float));
}

/* q8 weights: the same arithmetic as vx_linear's q8 kernels (x quantized per 32-block, exact int32 block
 * sums), on tiles of many rows where the path has an int8 GEMM kernel (vx_cpu_dots().q8). */
static vox_status choose_q8(f5_model *m, const vx_dot_caps *dots, const char *want) {
    if (want && !strcmp(want, "f32")) {
        m->dit_math = "q8 products of vx_linear (VOX_F5_DIT=f32)";
        return VOX_OK;
    }
    if (!dots->q8) {
        m->dit_math = "q8 products of vx_linear (this kernel path has no int8 GEMM kernel)";
        return VOX_OK;
    }
    for (int64_t i = 0; i < m->c.depth; i++) {
        const block_linears l = linears_of(&m->blocks[i]);
        for (int j = 0; j < 6; j++) {
            vox_status st = vx_q8w_pack(l.w[j], l.q8[j]);
            if (st != VOX_OK) return st;
            drop_unpacked(m, l.w[j]);
        }
    }
    m->dit_q8 = 1;
    m->att_bf16 = dots->bf16 && dots->bf16_rounds_x;   /* reduced weights: the attention on bf16 dots too */
    /* and its scores in the linears' q8 arithmetic (queries and keys as int8 codes per 32-block), twice
     * the rate of bf16 vector dot products (not of bf16 tiles: on AMX, 10% slower than the tiles on a
     * Xeon): VOX_F5_ATT=bf16 keeps them bf16 dot products */
    const char *att = getenv("VOX_F5_ATT");
    m->att_q8 = m->att_bf16 && !dots->bf16_tiles && m->c.dim_head % 32 == 0 && !(att && !strcmp(att, "bf16"));
    const char *tiles = "q8 products on int8 GEMM tiles (%s: the arithmetic of vx_linear's q8 kernels, one float order";
    char *b = m->dit_math_buf;
    const size_t cap = sizeof m->dit_math_buf;
    int k = snprintf(b, cap, tiles, dots->q8);
    if (m->att_q8)
        snprintf(b + k, cap - (size_t)k, "), the attention's scores as q8 products too and its weighted values as bf16 dot "
                 "products (%s); VOX_F5_ATT=bf16 for bf16 scores, VOX_F5_DIT=f32 for vx_linear and the f32 attention",
                 dots->bf16);
    else if (m->att_bf16)
        snprintf(b + k, cap - (size_t)k, ") and the attention as bf16 dot products (%s%s); VOX_F5_DIT=f32 for vx_linear and "
                 "the f32 attention", dots->bf16, dots->bf16_tiles ? ", faster than q8 scores" : "");
    else
        snprintf(b + k, cap - (size_t)k, "; VOX_F5_DIT=f32 for vx_linear)");
    m->dit_math = b;
    return VOX_OK;
}

/* q8 weights with the attention on bf16 dot products: the input embedding's two grouped 31-tap
 * convolutions (f32 in a q8 .tmod) as bf16 dot products too (tap-major, no im2col), the last large f32
 * products of a step. Not for bf16 weights: rounding the convolutions' inputs as well would take their
 * row (f5.native.bf16dot_vs_reference) past its bound; the q8 row has the room (measured in its what). */
static vox_status choose_conv(f5_model *m) {
    if (!m->dit_q8 || !m->att_bf16) return VOX_OK;
    const int64_t d = m->c.dim;
    vox_status st = vx_nn_conv1d_bf16w_pack(&m->conv0, d, 31, 16, &m->conv0_bw);
    if (st == VOX_OK) st = vx_nn_conv1d_bf16w_pack(&m->conv2, d, 31, 16, &m->conv2_bw);
    if (st != VOX_OK) {
        vx_nn_conv1d_bf16w_free(&m->conv0_bw), vx_nn_conv1d_bf16w_free(&m->conv2_bw);
        return st == VOX_ERR_UNSUPPORTED ? VOX_OK : st; /* odd channels per group: they stay f32 */
    }
    m->conv_bf16 = 1;
    return VOX_OK;
}

/* The DiT blocks' linear layers (all but a few percent of a step) as bf16 dot products where the weights
 * are bf16 and the kernel path multiplies bf16 pairs natively (AVX512-BF16: twice the f32 rate; the
 * input rows are rounded to bf16, which the bf16 rows of verify/tolerances.toml measure); q8 weights on
 * the int8 GEMM tiles (choose_q8); everywhere else, and with VOX_F5_DIT=f32, vx_linear (exact f32
 * products of the stored weights). */
static vox_status choose_products(f5_model *m) {
    const vx_dot_caps dots = vx_cpu_dots();
    const char *want = getenv("VOX_F5_DIT");
    int bf16 = m->c.depth > 0, q8 = m->c.depth > 0;
    for (int64_t i = 0; i < m->c.depth; i++) {
        const block_linears l = linears_of(&m->blocks[i]);
        for (int j = 0; j < 6; j++) {
            bf16 &= l.w[j]->dtype == VOX_DTYPE_BF16 && l.w[j]->rows % 64 == 0;
            q8 &= l.w[j]->dtype == VOX_DTYPE_Q8 && l.w[j]->rows % 16 == 0;
        }
    }
    m->dit_math = "f32 products of the stored weights (vx_linear)";
    if (q8) return choose_q8(m, &dots, want);
    if (!bf16) return VOX_OK;
    if (want && !strcmp(want, "f32")) {
        m->dit_math = "f32 products of the bf16 weights (VOX_F5_DIT=f32)";
        return VOX_OK;
    }
    if (!dots.bf16 || !dots.bf16_rounds_x) {
        m->dit_math = "f32 products of the bf16 weights (this kernel path has no bf16 dot product)";
        return VOX_OK;
    }
    for (int64_t i = 0; i < m->c.depth; i++) {
        const block_linears l = linears_of(&m->blocks[i]);
        for (int j = 0; j < 6; j++) {
            vox_status st = vx_bf16w_pack(l.w[j], l.bf16[j]);
            if (st != VOX_OK) return st;
            drop_unpacked(m, l.w[j]);
        }
    }
    m->dit_bf16 = m->att_bf16 = 1;
    snprintf(m->dit_math_buf, sizeof m->dit_math_buf, "bf16 dot products in the linear layers and the attention (%s: "
             "inputs rounded to bf16; VOX_F5_DIT=f32 for f32 products)", dots.bf16);
    m->dit_math = m->dit_math_buf;
    return VOX_OK;
}

/* The input embedding's convolutions with f16 / bf16 weights and no bf16 dot products for them: the
 * weights widened once to f32 (exactly: the same products), so that vx_nn_conv1d reads its im2col
 * columns in place (vx_conv1d_f32) instead of writing them for vx_linear: on the AMX Xeon at 2 threads
 * 193 -> ~110 ms a step for the full-size model; 16 MB of f32 for 8 MB of mapped pages, given back. */
static vox_status widen_conv(f5_model *m, vx_mat *w) {
    if (w->dtype != VOX_DTYPE_F16 && w->dtype != VOX_DTYPE_BF16) return VOX_OK;
    const size_t n = (size_t)(w->rows * w->cols);
    float *p = model_own(m, n);
    if (!p) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    vx_to_f32(w->dtype, w->data, (int64_t)n, p);
    vox_model_drop_pages(m->file, w->data, 2 * n);
    w->dtype = VOX_DTYPE_F32, w->data = p;
    return VOX_OK;
}

static vox_status choose_dit_math(f5_model *m) {
    vox_status st = choose_products(m);
    if (st == VOX_OK) st = choose_conv(m);
    if (st == VOX_OK && !m->conv_bf16 && (st = widen_conv(m, &m->conv0)) == VOX_OK) st = widen_conv(m, &m->conv2);
    return st;
}

vox_status f5_model_load(vox_model *file, const vox_json *manifest, f5_model **out) {
    *out = NULL;
    f5_model *m = calloc(1, sizeof *m);
    if (!m) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    m->file = file;
    m->manifest = manifest;
    const vox_json *mid = vox_json_get(manifest, "model_id");
    snprintf(m->model_id, sizeof m->model_id, "%s", mid && mid->type == VOX_JSON_STRING ? mid->str : "");
    loader L = {m, VOX_OK};
    read_config(&L);
    if (!failed(&L)) load_tensors(&L);
    const f5_config *c = &m->c;
    if (!failed(&L)) {
        const int64_t bins = c->n_fft / 2 + 1;
        m->melbank = own(&L, (size_t)(c->n_mels * bins));
        m->mel_window = own(&L, (size_t)c->n_fft);
        m->voc.window = own(&L, (size_t)c->voc_n_fft);
        if (!failed(&L)) {
            vx_melbank_htk(c->sample_rate, c->n_fft, c->n_mels, m->melbank);
            m->melbank_mat = (vx_mat){.dtype = VOX_DTYPE_F32, .rows = c->n_mels, .cols = bins, .data = m->melbank};
            vx_hann_window(c->n_fft, m->mel_window);
            vx_hann_window(c->voc_n_fft, m->voc.window);
        }
    }
    if (!failed(&L)) L.st = f5_front_create(file, vox_json_get(manifest, "tokenizer"), c->text_num_embeds, &m->front);
    if (!failed(&L)) L.st = choose_dit_math(m);
    if (failed(&L)) {
        vox_status st = L.st;
        f5_model_free(m);
        return st;
    }
    *out = m;
    return VOX_OK;
}

void f5_model_free(f5_model *m) {
    if (!m) return;
    for (size_t i = 0; i < m->n_owned; i++) free(m->owned[i]);
    free(m->owned);
    free(m->text_blocks);
    for (int64_t i = 0; m->blocks && i < m->c.depth; i++) {
        const block_linears l = linears_of(&m->blocks[i]);
        for (int j = 0; j < 6; j++) vx_bf16w_free(l.bf16[j]), vx_q8w_free(l.q8[j]);
    }
    free(m->blocks);
    vx_nn_conv1d_bf16w_free(&m->conv0_bw), vx_nn_conv1d_bf16w_free(&m->conv2_bw);
    free(m->voc.blocks);
    f5_front_free(m->front);
    free(m);
}
