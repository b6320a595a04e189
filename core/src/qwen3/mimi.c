/* The speech tokenizer's encoder (a Mimi encoder) up to the quantizer: vox.reference.qwen3.mimi_encoder
 * in C. 24 kHz audio -> latent [frames at 12.5 Hz][hidden].
 *
 *   SEANet       MimiConv1d(1 -> F, k7); per ratio r of reversed(upsampling_ratios): residual block(s)
 *                (ELU, conv k3 dim -> dim/2 dilated, ELU, conv k1 -> dim, + x), ELU, MimiConv1d(dim -> 2 dim,
 *                k 2r, stride r); ELU, MimiConv1d(-> hidden, k3). Every MimiConv1d is causal: P = K - stride
 *                zeros on the left, and E zeros on the right that complete the last stride (E = 0 for
 *                stride 1), so a layer fed L frames gives ceil(L / stride). (The official computes E in
 *                float32, which is exact below 2^24 input samples, 11.6 minutes at 24 kHz; here it is
 *                integer arithmetic, so beyond that the last frames could differ.)
 *                Because every convolution is causal, the SEANet runs block by block over the recording
 *                (each convolution keeps the input frames its next outputs need, the strided ones their
 *                incomplete stride; at the end each strided layer in turn appends its E zeros): the
 *                memory is that of one block whatever the length, and since every output row of a
 *                kernel call is computed on its own (kernels.h, rule 1) the result is bit-identical to
 *                running each layer over the whole signal.
 *   transformer  per layer: x += scale1 * attn(LN1(x)), x += scale2 * MLP(LN2(x)); plain causal attention
 *                with RoPE (positions 0..T-1): transformers' encoder does not apply sliding_window.
 *   downsample   MimiConv1d(hidden -> hidden, k4, stride 2, no bias, replicate padding): 25 -> 12.5 Hz. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../error.h"
#include "../tmod.h"
#include "mimi_internal.h"

#define PFX "speech_tokenizer.encoder."
#define BLOCK_SAMPLES 15360 /* SEANet input per block: 8 frames of 1920 samples */

/* ------------------------------------------------------------------------------------------ config */
static vox_status get_int(const vox_json *o, const char *key, int64_t dflt, int64_t lo, int64_t hi, int64_t *out) {
    const vox_json *v = vox_json_get(o, key);
    if (!v) {
        if (dflt < 0) return vox_set_error(VOX_ERR_FORMAT, "model config: speech_tokenizer encoder_config.%s is missing", key);
        *out = dflt;
        return VOX_OK;
    }
    if (v->type != VOX_JSON_NUMBER || !v->is_integer || v->integer < lo || v->integer > hi)
        return vox_set_error(VOX_ERR_FORMAT, "model config: speech_tokenizer %s must be an integer in [%lld, %lld]",
                             key, (long long)lo, (long long)hi);
    *out = v->integer;
    return VOX_OK;
}

static vox_status parse_config(const q3_model *m, q3_mimi *mm) {
    const vox_json *st = m->st_config, *e = vox_json_get(st, "encoder_config");
    if (!e || e->type != VOX_JSON_OBJECT)
        return vox_set_error(VOX_ERR_FORMAT, "%s: the speech tokenizer config has no encoder_config", vox_model_path(m->file));
    mimi_cfg *c = &mm->cfg;
    vox_status s = VOX_OK;
#define I(key, dflt, lo, hi, dst) \
    if (s == VOX_OK) s = get_int(e, key, dflt, lo, hi, &c->dst)
    I("sampling_rate", 24000, 24000, 24000, sample_rate);
    I("hidden_size", 512, 1, 8192, hidden);
    I("num_filters", 64, 1, 4096, filters);
    I("num_residual_layers", 1, 1, 8, n_residual);
    I("kernel_size", 7, 1, 64, kernel);
    I("last_kernel_size", 3, 1, 64, last_kernel);
    I("residual_kernel_size", 3, 1, 64, residual_kernel);
    I("dilation_growth_rate", 2, 1, 16, growth);
    I("compress", 2, 1, 64, compress);
    I("num_hidden_layers", 8, 0, 256, layers);
    I("num_attention_heads", 8, 1, 256, heads);
    I("num_key_value_heads", c->heads, 1, 256, kv_heads);
    I("intermediate_size", 2048, 1, 65536, intermediate);
    I("codebook_size", 2048, 2, 1 << 20, codebook_size);
    I("num_quantizers", 32, 1, 256, n_quantizers);
    I("num_semantic_quantizers", 1, 0, 256, n_semantic);
    I("audio_channels", 1, 1, 1, audio_channels);
#undef I
    if (s != VOX_OK) return s;
    if (vox_json_get(e, "head_dim")) s = get_int(e, "head_dim", -1, 1, 1024, &c->head_dim);
    else c->head_dim = c->hidden / c->heads;
    if (s == VOX_OK) s = get_int(st, "encoder_valid_num_quantizers", 16, 1, 256, &c->valid_quantizers);
    if (s == VOX_OK) s = get_int(st, "encode_downsample_rate", 1920, 1, 1 << 20, &c->downsample_rate);
    if (s != VOX_OK) return s;
    const vox_json *ratios = vox_json_get(e, "upsampling_ratios");
    if (ratios) {
        if (ratios->type != VOX_JSON_ARRAY || ratios->count < 1 || ratios->count > MIMI_MAX_RATIOS)
            return vox_set_error(VOX_ERR_FORMAT, "model config: speech_tokenizer upsampling_ratios must list 1 to %d "
                                 "integers", MIMI_MAX_RATIOS);
        c->n_ratios = 0;
        for (const vox_json *r = ratios->child; r; r = r->next) {
            if (r->type != VOX_JSON_NUMBER || !r->is_integer || r->integer < 1 || r->integer > 64)
                return vox_set_error(VOX_ERR_FORMAT, "model config: speech_tokenizer upsampling_ratios: bad value");
            c->ratios[c->n_ratios++] = r->integer;
        }
    } else {
        static const int64_t dr[4] = {8, 6, 5, 4};
        memcpy(c->ratios, dr, sizeof dr);
        c->n_ratios = 4;
    }
    double theta = 10000.0, eps = 1e-5;
    if (vox_json_get(e, "rope_theta") && q3_cfg_num(e, "rope_theta", &theta) != VOX_OK) return VOX_ERR_FORMAT;
    if (vox_json_get(e, "norm_eps") && q3_cfg_num(e, "norm_eps", &eps) != VOX_OK) return VOX_ERR_FORMAT;
    c->rope_theta = theta;
    c->norm_eps = (float)eps;
    const vox_json *pm = vox_json_get(e, "pad_mode"), *sc = vox_json_get(e, "use_conv_shortcut"),
                   *causal = vox_json_get(e, "use_causal_conv");
    if ((pm && !vox_json_is_string(pm, "constant")) || (sc && sc->type == VOX_JSON_TRUE) ||
        (causal && causal->type == VOX_JSON_FALSE))
        return vox_set_error(VOX_ERR_UNSUPPORTED, "speech tokenizer encoder: only causal convolutions with constant "
                             "padding and identity shortcuts are supported (the released configuration)");
    if (c->hidden != c->heads * c->head_dim || c->heads % c->kv_heads || c->head_dim % 2 || c->head_dim > 1024)
        return vox_set_error(VOX_ERR_FORMAT, "model config: speech tokenizer encoder attention shapes do not fit "
                             "(hidden %lld, heads %lld/%lld, head_dim %lld)", (long long)c->hidden, (long long)c->heads,
                             (long long)c->kv_heads, (long long)c->head_dim);
    if (c->valid_quantizers > c->n_quantizers || c->n_semantic > c->n_quantizers || c->n_semantic < 1)
        return vox_set_error(VOX_ERR_FORMAT, "model config: speech tokenizer quantizers: %lld kept of %lld, %lld "
                             "semantic", (long long)c->valid_quantizers, (long long)c->n_quantizers,
                             (long long)c->n_semantic);
    int64_t hop = 1;
    for (int i = 0; i < c->n_ratios; i++) hop *= c->ratios[i];
    c->hop = hop;
    return VOX_OK;
}

/* ------------------------------------------------------------------------------------------ weights */
static vox_status bind_conv(const q3_model *m, mimi_conv *cv, const char *name, int64_t c_out, int64_t c_in, int64_t k,
                            int64_t stride, int64_t dilation, bool bias) {
    char wn[256], bn[256];
    snprintf(wn, sizeof wn, PFX "%s.weight", name);
    snprintf(bn, sizeof bn, PFX "%s.bias", name);
    vox_status st = q3_bind_conv(m, wn, c_out, c_in, k, &cv->w);
    cv->b = NULL;
    if (st == VOX_OK && bias) st = q3_bind_f32(m, bn, c_out, &cv->b);
    cv->k = k, cv->stride = stride, cv->dilation = dilation, cv->c_in = c_in, cv->c_out = c_out;
    cv->k_eff = (k - 1) * dilation + 1;
    return st;
}

static vox_status bind_layers(const q3_model *m, q3_mimi *mm) {
    const mimi_cfg *c = &mm->cfg;
    vox_status st;
    char name[160];
    int n = 0, li = 0;
    mimi_op *ops = mm->ops;
    /* encoder.layers.0: the input convolution */
    ops[n] = (mimi_op){.kind = MIMI_OP_CONV, .elu = false};
    if ((st = bind_conv(m, &ops[n].conv, "encoder.layers.0.conv", c->filters, 1, c->kernel, 1, 1, true)) != VOX_OK)
        return st;
    n++, li++;
    int64_t dim = c->filters;
    for (int r = c->n_ratios - 1; r >= 0; r--) {
        int64_t ratio = c->ratios[r];
        for (int j = 0; j < c->n_residual; j++) {
            int64_t dil = 1;
            for (int q = 0; q < j; q++) dil *= c->growth;
            ops[n] = (mimi_op){.kind = MIMI_OP_RESIDUAL};
            snprintf(name, sizeof name, "encoder.layers.%d.block.1.conv", li);
            if ((st = bind_conv(m, &ops[n].conv, name, dim / c->compress, dim, c->residual_kernel, 1, dil, true)) != VOX_OK)
                return st;
            snprintf(name, sizeof name, "encoder.layers.%d.block.3.conv", li);
            if ((st = bind_conv(m, &ops[n].conv2, name, dim, dim / c->compress, 1, 1, 1, true)) != VOX_OK) return st;
            n++, li++;
        }
        li++; /* ELU */
        ops[n] = (mimi_op){.kind = MIMI_OP_CONV, .elu = true};
        snprintf(name, sizeof name, "encoder.layers.%d.conv", li);
        if ((st = bind_conv(m, &ops[n].conv, name, 2 * dim, dim, 2 * ratio, ratio, 1, true)) != VOX_OK) return st;
        n++, li++;
        dim *= 2;
    }
    li++; /* ELU */
    ops[n] = (mimi_op){.kind = MIMI_OP_CONV, .elu = true};
    snprintf(name, sizeof name, "encoder.layers.%d.conv", li);
    if ((st = bind_conv(m, &ops[n].conv, name, c->hidden, dim, c->last_kernel, 1, 1, true)) != VOX_OK) return st;
    n++;
    mm->n_ops = n;

    int64_t h = c->hidden, hd = c->head_dim, q = c->heads * hd, kv = c->kv_heads * hd;
    mm->tlayers = calloc((size_t)(c->layers ? c->layers : 1), sizeof *mm->tlayers);
    if (!mm->tlayers) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    for (int64_t l = 0; l < c->layers; l++) {
        mimi_tlayer *t = &mm->tlayers[l];
#define P PFX "encoder_transformer.layers.%lld."
        long long L = (long long)l;
        if ((st = q3_bind_f32f(m, &t->ln1_w, h, P "input_layernorm.weight", L)) != VOX_OK ||
            (st = q3_bind_f32f(m, &t->ln1_b, h, P "input_layernorm.bias", L)) != VOX_OK ||
            (st = q3_bind_f32f(m, &t->ln2_w, h, P "post_attention_layernorm.weight", L)) != VOX_OK ||
            (st = q3_bind_f32f(m, &t->ln2_b, h, P "post_attention_layernorm.bias", L)) != VOX_OK ||
            (st = q3_bind_matf(m, &t->wq, q, h, P "self_attn.q_proj.weight", L)) != VOX_OK ||
            (st = q3_bind_matf(m, &t->wk, kv, h, P "self_attn.k_proj.weight", L)) != VOX_OK ||
            (st = q3_bind_matf(m, &t->wv, kv, h, P "self_attn.v_proj.weight", L)) != VOX_OK ||
            (st = q3_bind_matf(m, &t->wo, h, q, P "self_attn.o_proj.weight", L)) != VOX_OK ||
            (st = q3_bind_f32f(m, &t->scale1, h, P "self_attn_layer_scale.scale", L)) != VOX_OK ||
            (st = q3_bind_matf(m, &t->fc1, c->intermediate, h, P "mlp.fc1.weight", L)) != VOX_OK ||
            (st = q3_bind_matf(m, &t->fc2, h, c->intermediate, P "mlp.fc2.weight", L)) != VOX_OK ||
            (st = q3_bind_f32f(m, &t->scale2, h, P "mlp_layer_scale.scale", L)) != VOX_OK)
            return st;
#undef P
    }
    /* downsample: kernel 2 * encodec_frame_rate / frame_rate (4), stride 2, replicate padding, no bias */
    vox_tensor_info ti;
    if (vox_model_find_tensor(m->file, PFX "downsample.conv.weight", &ti) != VOX_OK || ti.ndim != 3)
        return vox_set_error(VOX_ERR_FORMAT, "%s: the model has no Conv1d tensor " PFX "downsample.conv.weight",
                             vox_model_path(m->file));
    if ((st = bind_conv(m, &mm->down, "downsample.conv", h, h, ti.shape[2], 2, 1, false)) != VOX_OK) return st;
    return VOX_OK;
}

vox_status q3_mimi_load(const q3_model *m, q3_mimi **out) {
    *out = NULL;
    q3_mimi *mm = calloc(1, sizeof *mm);
    if (!mm) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    vox_status st = parse_config(m, mm);
    if (st == VOX_OK) st = bind_layers(m, mm);
    if (st == VOX_OK) st = q3_rvq_bind(m, mm);
    if (st != VOX_OK) {
        q3_mimi_free(mm);
        return st;
    }
    pthread_mutex_init(&mm->lock, NULL);
    mm->lock_init = true;
    *out = mm;
    return VOX_OK;
}

void q3_mimi_free(q3_mimi *mm) {
    if (!mm) return;
    free(mm->tlayers);
    for (int i = 0; i < MIMI_MAX_QUANTIZERS; i++) free(mm->books[i].ext);
    if (mm->lock_init) pthread_mutex_destroy(&mm->lock);
    free(mm);
}

int32_t q3_mimi_hidden(const q3_mimi *mm) { return (int32_t)mm->cfg.hidden; }
int32_t q3_mimi_groups(const q3_mimi *mm) { return (int32_t)mm->cfg.valid_quantizers; }
int64_t q3_mimi_frames(const q3_mimi *mm, int64_t n) {
    return (n + mm->cfg.downsample_rate - 1) / mm->cfg.downsample_rate;
}

/* ------------------------------------------------------------------------------------------ SEANet */
/* A causal convolution fed block by block: buf holds the input frames the next outputs need. */
typedef struct sconv {
    const mimi_conv *cv;
    float *buf;
    int64_t n_buf, cap, n_in;
} sconv;

static vox_status sconv_reserve(sconv *s, int64_t rows) {
    if (rows <= s->cap) return VOX_OK;
    int64_t cap = s->cap ? s->cap : 64;
    while (cap < rows) cap *= 2;
    float *b = realloc(s->buf, (size_t)(cap * s->cv->c_in) * sizeof *b);
    if (!b) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory (speech tokenizer encoder)");
    s->buf = b, s->cap = cap;
    return VOX_OK;
}

static vox_status sconv_init(sconv *s, const mimi_conv *cv) {
    memset(s, 0, sizeof *s);
    s->cv = cv;
    int64_t pad = cv->k_eff - cv->stride; /* MimiConv1d's causal left padding */
    vox_status st = sconv_reserve(s, pad + 1);
    if (st != VOX_OK) return st;
    memset(s->buf, 0, (size_t)(pad * cv->c_in) * sizeof *s->buf);
    s->n_buf = pad;
    return VOX_OK;
}

/* Append n input frames (elu: ELU applied first), or at the end (x == NULL) the zeros that complete the
 * last stride; *y (malloc'd) receives the *ny output frames now computable. */
static vox_status sconv_push(sconv *s, vx_pool *pool, const float *x, int64_t n, bool elu, float **y, int64_t *ny) {
    const mimi_conv *cv = s->cv;
    *y = NULL, *ny = 0;
    int64_t add = n;
    if (!x) add = (s->n_in + cv->stride - 1) / cv->stride * cv->stride - s->n_in; /* E: the extra padding */
    vox_status st = sconv_reserve(s, s->n_buf + add);
    if (st != VOX_OK) return st;
    float *dst = s->buf + s->n_buf * cv->c_in;
    if (!x) memset(dst, 0, (size_t)(add * cv->c_in) * sizeof *dst);
    else if (elu) q3_par_map(pool, vx_elu, x, n * cv->c_in, dst);
    else memcpy(dst, x, (size_t)(n * cv->c_in) * sizeof *dst);
    s->n_buf += add;
    if (x) s->n_in += n;
    if (s->n_buf < cv->k_eff) return VOX_OK;
    int64_t n_out = (s->n_buf - cv->k_eff) / cv->stride + 1;
    float *out = malloc((size_t)(n_out * cv->c_out) * sizeof *out);
    if (!out) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory (speech tokenizer encoder)");
    st = q3_conv1d(pool, &cv->w, cv->b, cv->k, cv->dilation, cv->stride, s->buf, s->n_buf, out, n_out);
    if (st != VOX_OK) {
        free(out);
        return st;
    }
    int64_t drop = n_out * cv->stride;
    memmove(s->buf, s->buf + drop * cv->c_in, (size_t)((s->n_buf - drop) * cv->c_in) * sizeof *s->buf);
    s->n_buf -= drop;
    *y = out, *ny = n_out;
    return VOX_OK;
}

typedef struct add_job {
    float *y;
    const float *x;
} add_job;
static void add_range(void *ctx, int64_t b, int64_t e) {
    add_job *j = ctx;
    vx_add(j->y + b, j->x + b, e - b, j->y + b);
}
/* y += x, split over the pool */
static void add_par(vx_pool *pool, float *y, const float *x, int64_t n) {
    add_job j = {y, x};
    if (n < (1 << 15)) add_range(&j, 0, n);
    else vx_pool_for(pool, n, 1 << 13, add_range, &j);
}

typedef struct seanet {
    const q3_mimi *mm;
    vx_pool *pool;
    sconv conv[MIMI_MAX_OPS], conv2[MIMI_MAX_OPS];
    float *out;          /* [cap][hidden] at 25 Hz */
    int64_t n_out, cap;
} seanet;

/* Run x [n][channels of op `from`] through ops from.. (takes ownership of x). */
static vox_status seanet_run(seanet *s, int from, float *x, int64_t n) {
    const q3_mimi *mm = s->mm;
    vox_status st = VOX_OK;
    for (int i = from; i < mm->n_ops && n > 0; i++) {
        const mimi_op *op = &mm->ops[i];
        float *y = NULL;
        int64_t ny = 0;
        if (op->kind == MIMI_OP_CONV) {
            st = sconv_push(&s->conv[i], s->pool, x, n, op->elu, &y, &ny);
        } else { /* residual: x + conv2(elu(conv(elu(x)))) */
            float *h = NULL;
            int64_t nh = 0;
            st = sconv_push(&s->conv[i], s->pool, x, n, true, &h, &nh);
            if (st == VOX_OK) st = sconv_push(&s->conv2[i], s->pool, h, nh, true, &y, &ny);
            free(h);
            if (st == VOX_OK && ny != n) st = vox_set_error(VOX_ERR_INTERNAL, "SEANet residual block out of step");
            if (st == VOX_OK) add_par(s->pool, y, x, n * op->conv2.c_out);
        }
        free(x);
        x = y, n = ny;
        if (st != VOX_OK) break;
    }
    if (st == VOX_OK && n > 0) {
        int64_t h = mm->cfg.hidden;
        if (s->n_out + n > s->cap) {
            int64_t cap = s->cap ? s->cap : 64;
            while (cap < s->n_out + n) cap *= 2;
            float *o = realloc(s->out, (size_t)(cap * h) * sizeof *o);
            if (!o) st = vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory (speech tokenizer encoder)");
            else s->out = o, s->cap = cap;
        }
        if (st == VOX_OK) {
            memcpy(s->out + s->n_out * h, x, (size_t)(n * h) * sizeof *x);
            s->n_out += n;
        }
    }
    free(x);
    return st;
}

static vox_status seanet_forward(const q3_mimi *mm, vx_pool *pool, const float *wav, int64_t n, float **out, int64_t *t) {
    seanet s;
    memset(&s, 0, sizeof s);
    s.mm = mm, s.pool = pool;
    vox_status st = VOX_OK;
    for (int i = 0; i < mm->n_ops && st == VOX_OK; i++) {
        st = sconv_init(&s.conv[i], &mm->ops[i].conv);
        if (st == VOX_OK && mm->ops[i].kind == MIMI_OP_RESIDUAL) st = sconv_init(&s.conv2[i], &mm->ops[i].conv2);
    }
    for (int64_t p = 0; p < n && st == VOX_OK; p += BLOCK_SAMPLES) {
        int64_t b = n - p < BLOCK_SAMPLES ? n - p : BLOCK_SAMPLES;
        float *x = malloc((size_t)b * sizeof *x);
        if (!x) {
            st = vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
            break;
        }
        memcpy(x, wav + p, (size_t)b * sizeof *x);
        st = seanet_run(&s, 0, x, b);
    }
    /* the end: each strided layer in turn completes its last stride with zeros */
    for (int i = 0; i < mm->n_ops && st == VOX_OK; i++) {
        if (mm->ops[i].kind != MIMI_OP_CONV || mm->ops[i].conv.stride == 1) continue;
        float *y = NULL;
        int64_t ny = 0;
        st = sconv_push(&s.conv[i], pool, NULL, 0, false, &y, &ny);
        if (st == VOX_OK) st = seanet_run(&s, i + 1, y, ny);
        else free(y);
    }
    for (int i = 0; i < mm->n_ops; i++) free(s.conv[i].buf), free(s.conv2[i].buf);
    if (st != VOX_OK) {
        free(s.out);
        return st;
    }
    *out = s.out, *t = s.n_out;
    return VOX_OK;
}

/* ------------------------------------------------------------------------------------------ transformer */
static vox_status transformer(const q3_mimi *mm, vx_pool *pool, float *x, int64_t t) {
    const mimi_cfg *c = &mm->cfg;
    int64_t h = c->hidden, hd = c->head_dim, nq = c->heads * hd, nkv = c->kv_heads * hd, ff = c->intermediate;
    float *a = malloc((size_t)(t * h) * sizeof *a), *q = malloc((size_t)(t * nq) * sizeof *q);
    float *k = malloc((size_t)(t * nkv) * sizeof *k), *v = malloc((size_t)(t * nkv) * sizeof *v);
    float *o = malloc((size_t)(t * nq) * sizeof *o), *f = malloc((size_t)(t * ff) * sizeof *f);
    float *cs = malloc((size_t)(t * hd) * sizeof *cs), *sn = malloc((size_t)(t * hd) * sizeof *sn);
    vox_status st = VOX_OK;
    if (!a || !q || !k || !v || !o || !f || !cs || !sn) {
        st = vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory (speech tokenizer encoder, %lld frames)", (long long)t);
        goto done;
    }
    /* RoPE tables as the reference: inv_freq = 1 / float(theta ** (float(2i) / float(d))), angle = float(pos) * inv */
    for (int64_t i = 0; i < hd / 2; i++) {
        float inv = 1.0f / (float)pow(c->rope_theta, (double)((float)(2 * i) / (float)hd));
        for (int64_t p = 0; p < t; p++) {
            float ang = (float)p * inv;
            float cv = (float)cos((double)ang), sv = (float)sin((double)ang);
            cs[p * hd + i] = cs[p * hd + i + hd / 2] = cv;
            sn[p * hd + i] = sn[p * hd + i + hd / 2] = sv;
        }
    }
    float scale = (float)(1.0 / sqrt((double)hd));
    for (int64_t l = 0; l < c->layers; l++) {
        const mimi_tlayer *ly = &mm->tlayers[l];
        vx_layer_norm(x, ly->ln1_w, ly->ln1_b, t, h, c->norm_eps, a);
        vx_linear(pool, &ly->wq, NULL, a, t, q);
        vx_linear(pool, &ly->wk, NULL, a, t, k);
        vx_linear(pool, &ly->wv, NULL, a, t, v);
        vx_rope(q, t, c->heads, hd, cs, sn);
        vx_rope(k, t, c->kv_heads, hd, cs, sn);
        vx_attention(pool, q, t, c->heads, k, v, t, c->kv_heads, hd, scale, 0, o);
        vx_linear(pool, &ly->wo, NULL, o, t, a);
        for (int64_t r = 0; r < t; r++)
            for (int64_t j = 0; j < h; j++) x[r * h + j] = x[r * h + j] + ly->scale1[j] * a[r * h + j];
        vx_layer_norm(x, ly->ln2_w, ly->ln2_b, t, h, c->norm_eps, a);
        vx_linear(pool, &ly->fc1, NULL, a, t, f);
        q3_par_map(pool, vx_gelu, f, t * ff, f);
        vx_linear(pool, &ly->fc2, NULL, f, t, a);
        for (int64_t r = 0; r < t; r++)
            for (int64_t j = 0; j < h; j++) x[r * h + j] = x[r * h + j] + ly->scale2[j] * a[r * h + j];
    }
done:
    free(a), free(q), free(k), free(v), free(o), free(f), free(cs), free(sn);
    return st;
}

/* ------------------------------------------------------------------------------------------ latent */
vox_status q3_mimi_latent(const q3_mimi *mm, vx_pool *pool, const float *wav, int64_t n, float **latent, int64_t *t_out) {
    *latent = NULL, *t_out = 0;
    if (n < 1) return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "the speech tokenizer encoder needs at least one sample");
    float *x = NULL;
    int64_t t = 0;
    vox_status st = seanet_forward(mm, pool, wav, n, &x, &t);
    if (st != VOX_OK) return st;
    if ((st = transformer(mm, pool, x, t)) != VOX_OK) {
        free(x);
        return st;
    }
    /* downsample: replicate padding P = K - 2 on the left, E on the right (ceil(t / 2) outputs) */
    const mimi_conv *d = &mm->down;
    int64_t h = mm->cfg.hidden, pad = d->k_eff - d->stride, t2 = (t + d->stride - 1) / d->stride;
    int64_t extra = t2 * d->stride - t, tp = pad + t + extra;
    float *xp = malloc((size_t)(tp * h) * sizeof *xp), *y = malloc((size_t)(t2 * h) * sizeof *y);
    if (!xp || !y) {
        free(x), free(xp), free(y);
        return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory (speech tokenizer encoder)");
    }
    for (int64_t i = 0; i < tp; i++) {
        int64_t src = i - pad < 0 ? 0 : (i - pad >= t ? t - 1 : i - pad);
        memcpy(xp + i * h, x + src * h, (size_t)h * sizeof *xp);
    }
    free(x);
    st = q3_conv1d(pool, &d->w, NULL, d->k, d->dilation, d->stride, xp, tp, y, t2);
    free(xp);
    if (st != VOX_OK) {
        free(y);
        return st;
    }
    *latent = y, *t_out = t2;
    return VOX_OK;
}
