/* The Qwen3-TTS-12Hz speech tokenizer decoder: weights and configuration (q3_codec_load), the
 * reference mode (the official chunked_decode) and the family's decode (q3_decode).
 * The stream decoder itself is codec_stream.c. Mirrors vox.reference.qwen3.codec_decoder. */
#include "codec.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../error.h"
#include "../tmod.h"

#define PREFIX "speech_tokenizer.decoder."

/* ------------------------------------------------------------------------------ configuration */
static vox_status cfg_int(const vox_json *d, const char *key, int64_t def, int64_t *out) {
    const vox_json *v = vox_json_get(d, key);
    if (!v) {
        if (def < 0) return vox_set_error(VOX_ERR_FORMAT, "speech tokenizer decoder_config: %s is missing", key);
        *out = def;
        return VOX_OK;
    }
    if (v->type != VOX_JSON_NUMBER || !v->is_integer || v->integer <= 0 || v->integer > (1 << 20))
        return vox_set_error(VOX_ERR_FORMAT, "speech tokenizer decoder_config: %s must be a positive integer", key);
    *out = v->integer;
    return VOX_OK;
}

static vox_status cfg_num(const vox_json *d, const char *key, double def, double *out) {
    const vox_json *v = vox_json_get(d, key);
    if (!v) {
        *out = def;
        return VOX_OK;
    }
    if (v->type != VOX_JSON_NUMBER || !(v->number > 0))
        return vox_set_error(VOX_ERR_FORMAT, "speech tokenizer decoder_config: %s must be a positive number", key);
    *out = v->number;
    return VOX_OK;
}

static vox_status cfg_list(const vox_json *d, const char *key, const int64_t *def, int64_t n_def, int64_t max,
                           int64_t *out, int64_t *n) {
    const vox_json *v = vox_json_get(d, key);
    if (!v) {
        memcpy(out, def, (size_t)n_def * sizeof *out);
        *n = n_def;
        return VOX_OK;
    }
    if (v->type != VOX_JSON_ARRAY || v->count < 1 || (int64_t)v->count > max)
        return vox_set_error(VOX_ERR_FORMAT, "speech tokenizer decoder_config: %s must be a list of 1 to %lld integers",
                             key, (long long)max);
    int64_t i = 0;
    for (const vox_json *c = v->child; c; c = c->next, i++) {
        if (c->type != VOX_JSON_NUMBER || !c->is_integer || c->integer < 1 || c->integer > 64)
            return vox_set_error(VOX_ERR_FORMAT, "speech tokenizer decoder_config: %s[%lld] must be in 1..64", key,
                                 (long long)i);
        out[i] = c->integer;
    }
    *n = i;
    return VOX_OK;
}

static vox_status read_config(const q3_model *m, q3_codec *c) {
    const vox_json *st = m->st_config;
    if (!st || st->type != VOX_JSON_OBJECT)
        return vox_set_error(VOX_ERR_FORMAT, "%s: the manifest has no speech_tokenizer_config", vox_model_path(m->file));
    const vox_json *d = vox_json_get(st, "decoder_config");
    if (!d) d = st;
    if (d->type != VOX_JSON_OBJECT)
        return vox_set_error(VOX_ERR_FORMAT, "speech tokenizer decoder_config must be an object");
    const vox_json *v;
    if ((v = vox_json_get(d, "attention_bias")) && v->type == VOX_JSON_TRUE)
        return vox_set_error(VOX_ERR_UNSUPPORTED, "speech tokenizer decoder: attention_bias = true is not supported");
    if ((v = vox_json_get(d, "hidden_act")) && v->type != VOX_JSON_NULL && !vox_json_is_string(v, "silu"))
        return vox_set_error(VOX_ERR_UNSUPPORTED, "speech tokenizer decoder: only hidden_act \"silu\" is supported");
    if ((v = vox_json_get(d, "rope_scaling")) && v->type == VOX_JSON_OBJECT) {
        const vox_json *t = vox_json_get(v, "rope_type");
        if (!t) t = vox_json_get(v, "type");
        if (t && !vox_json_is_string(t, "default"))
            return vox_set_error(VOX_ERR_UNSUPPORTED, "speech tokenizer decoder: only default rope_scaling is supported");
    }
    /* defaults: the official Qwen3TTSTokenizerV2DecoderConfig (codebook_dim has none) */
    vox_status s;
    double theta, eps;
    if ((s = cfg_int(d, "codebook_dim", -1, &c->codebook_dim)) || (s = cfg_int(d, "codebook_size", 2048, &c->codebook_size)) ||
        (s = cfg_int(d, "hidden_size", 1024, &c->hidden)) || (s = cfg_int(d, "latent_dim", 1024, &c->latent)) ||
        (s = cfg_int(d, "num_attention_heads", 16, &c->n_heads)) ||
        (s = cfg_int(d, "num_key_value_heads", 16, &c->n_kv_heads)) ||
        (s = cfg_int(d, "intermediate_size", 3072, &c->intermediate)) ||
        (s = cfg_int(d, "num_hidden_layers", 8, &c->n_layers)) || (s = cfg_int(d, "num_quantizers", 16, &c->n_q)) ||
        (s = cfg_int(d, "sliding_window", 72, &c->window)) || (s = cfg_int(d, "decoder_dim", 1536, &c->decoder_dim)) ||
        (s = cfg_num(d, "rope_theta", 10000.0, &theta)) || (s = cfg_num(d, "rms_norm_eps", 1e-5, &eps)))
        return s;
    if ((s = cfg_int(d, "head_dim", c->hidden / c->n_heads, &c->head_dim))) return s;
    static const int64_t def_rates[] = {8, 5, 4, 3}, def_ratios[] = {2, 2};
    if ((s = cfg_list(d, "upsample_rates", def_rates, 4, Q3_CODEC_MAX_BLOCKS, c->rate, &c->n_blocks)) ||
        (s = cfg_list(d, "upsampling_ratios", def_ratios, 2, Q3_CODEC_MAX_UP, c->up_ratio, &c->n_up)))
        return s;
    if (c->n_q < 2 || c->n_q > 64 || c->codebook_dim % 2 || c->n_heads % c->n_kv_heads || c->head_dim % 2 ||
        c->head_dim > 1024 || c->decoder_dim % (1 << c->n_blocks))
        return vox_set_error(VOX_ERR_FORMAT, "speech tokenizer decoder_config: inconsistent shapes");
    c->spf = 1;
    for (int64_t i = 0; i < c->n_blocks; i++) c->spf *= c->rate[i];
    for (int64_t i = 0; i < c->n_up; i++) c->spf *= c->up_ratio[i];
    c->rms_eps = (float)eps;
    c->attn_scale = (float)pow((double)c->head_dim, -0.5);
    c->inv_freq = malloc((size_t)(c->head_dim / 2) * sizeof(float));
    if (!c->inv_freq) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    /* transformers' default rope init in its float32 steps (reference: nn.rope_inv_freq) */
    for (int64_t i = 0; i < c->head_dim / 2; i++)
        c->inv_freq[i] = 1.0f / (float)pow(theta, (double)((float)(2 * i) / (float)c->head_dim));
    return VOX_OK;
}

/* ------------------------------------------------------------------------------ weights */
static vox_status find(const q3_model *m, vox_tensor_info *t, const char *fmt, va_list ap) {
    char name[256];
    vsnprintf(name, sizeof name, fmt, ap);
    if (vox_model_find_tensor(m->file, name, t) != VOX_OK)
        return vox_set_error(VOX_ERR_FORMAT, "%s: the model has no tensor %s", vox_model_path(m->file), name);
    if (t->dtype != VOX_DTYPE_F32 && t->dtype != VOX_DTYPE_F16 && t->dtype != VOX_DTYPE_BF16)
        return vox_set_error(VOX_ERR_FORMAT, "%s: tensor %s is %s; the codec needs f32, f16 or bf16",
                             vox_model_path(m->file), name, vox_dtype_name(t->dtype));
    t->name = NULL; /* the formatted name is gone after return; callers re-format for messages */
    return VOX_OK;
}

/* A 3-D convolution weight [d0][d1][d2] bound as the matrix [d0][d1 * d2]. */
static vox_status bind3(const q3_model *m, vx_mat *out, int64_t d0, int64_t d1, int64_t d2, const char *fmt, ...) {
    vox_tensor_info t;
    va_list ap;
    va_start(ap, fmt);
    vox_status s = find(m, &t, fmt, ap);
    va_end(ap);
    if (s) return s;
    if (t.ndim != 3 || t.shape[0] != d0 || t.shape[1] != d1 || t.shape[2] != d2) {
        char name[256];
        va_start(ap, fmt);
        vsnprintf(name, sizeof name, fmt, ap);
        va_end(ap);
        return vox_set_error(VOX_ERR_FORMAT, "%s: tensor %s has shape [%lld, %lld, %lld] (ndim %d), expected [%lld, %lld, %lld]",
                             vox_model_path(m->file), name, (long long)t.shape[0], (long long)t.shape[1],
                             (long long)t.shape[2], (int)t.ndim, (long long)d0, (long long)d1, (long long)d2);
    }
    *out = (vx_mat){.dtype = t.dtype, .rows = d0, .cols = d1 * d2, .data = t.data, .scales = NULL};
    return VOX_OK;
}

/* Any-dtype float tensor of n elements widened to an owned float32 copy (small derived tensors). */
static vox_status owned_f32(const q3_model *m, float **out, int64_t n, const char *name) {
    vox_tensor_info t;
    if (vox_model_find_tensor(m->file, name, &t) != VOX_OK)
        return vox_set_error(VOX_ERR_FORMAT, "%s: the model has no tensor %s", vox_model_path(m->file), name);
    int64_t count = 1;
    for (int i = 0; i < t.ndim; i++) count *= t.shape[i];
    if (count != n || t.dtype > VOX_DTYPE_BF16)
        return vox_set_error(VOX_ERR_FORMAT, "%s: tensor %s should have %lld float elements", vox_model_path(m->file),
                             name, (long long)n);
    float *f = malloc((size_t)n * sizeof *f);
    if (!f) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    vx_mat w = {.dtype = t.dtype, .rows = 1, .cols = n, .data = t.data};
    int32_t zero = 0;
    vx_gather_rows(&w, &zero, 1, f);
    *out = f;
    return VOX_OK;
}

static vox_status bind_snake(const q3_model *m, q3_snake *sn, int64_t c, const char *name) {
    char a[256], b[256];
    snprintf(a, sizeof a, PREFIX "%s.alpha", name);
    snprintf(b, sizeof b, PREFIX "%s.beta", name);
    const float *alpha, *beta;
    vox_status s;
    if ((s = q3_bind_f32(m, a, c, &alpha)) || (s = q3_bind_f32(m, b, c, &beta))) return s;
    sn->c = c;
    sn->alpha = malloc((size_t)c * sizeof(float));
    sn->inv_beta = malloc((size_t)c * sizeof(float));
    if (!sn->alpha || !sn->inv_beta) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    /* SnakeBeta.forward: alpha = exp(alpha); beta = exp(beta); x + 1.0 / (beta + 1e-9) * sin(x * alpha)^2 */
    for (int64_t i = 0; i < c; i++) {
        sn->alpha[i] = expf(alpha[i]);
        sn->inv_beta[i] = 1.0f / (expf(beta[i]) + 1e-9f);
    }
    return VOX_OK;
}

static vox_status bind_conv(const q3_model *m, q3_conv *cv, int64_t c_in, int64_t c_out, int64_t k, int64_t dil,
                            const char *name) {
    char w[256];
    snprintf(w, sizeof w, PREFIX "%s.conv.weight", name);
    cv->c_in = c_in, cv->c_out = c_out, cv->k = k, cv->dilation = dil;
    vox_status s = bind3(m, &cv->w, c_out, c_in, k, "%s", w);
    if (s) return s;
    return q3_bind_f32f(m, &cv->b, c_out, PREFIX "%s.conv.bias", name);
}

static vox_status bind_tconv(const q3_model *m, q3_tconv *tc, int64_t c_in, int64_t c_out, int64_t k, int64_t stride,
                             const char *name) {
    char w[256];
    snprintf(w, sizeof w, PREFIX "%s.conv.weight", name);
    tc->c_in = c_in, tc->c_out = c_out, tc->k = k, tc->stride = stride;
    vox_status s = bind3(m, &tc->w, c_in, c_out, k, "%s", w);
    if (s) return s;
    return q3_bind_f32f(m, &tc->b, c_out, PREFIX "%s.conv.bias", name);
}

static vox_status bind_weights(const q3_model *m, q3_codec *c) {
    vox_status s;
    const int64_t half = c->codebook_dim / 2, L = c->latent, H = c->hidden, d = c->head_dim;
    char name[256];
    c->cb_sum = calloc((size_t)c->n_q, sizeof *c->cb_sum);
    c->cb_usage = calloc((size_t)c->n_q, sizeof *c->cb_usage);
    c->layers = calloc((size_t)c->n_layers, sizeof *c->layers);
    if (!c->cb_sum || !c->cb_usage || !c->layers) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    for (int64_t i = 0; i < c->n_q; i++) {
        const char *part = i == 0 ? "rvq_first" : "rvq_rest";
        const long long j = i == 0 ? 0 : (long long)(i - 1);
        if ((s = q3_bind_matf(m, &c->cb_sum[i], c->codebook_size, half,
                              PREFIX "quantizer.%s.vq.layers.%lld._codebook.embedding_sum", part, j)) ||
            (s = q3_bind_f32f(m, &c->cb_usage[i], c->codebook_size,
                              PREFIX "quantizer.%s.vq.layers.%lld._codebook.cluster_usage", part, j)))
            return s;
        if (c->cb_sum[i].dtype > VOX_DTYPE_BF16)
            return vox_set_error(VOX_ERR_FORMAT, "codec codebook %lld: quantized codebooks are not supported", (long long)i);
    }
    if ((s = bind3(m, &c->proj_first, c->codebook_dim, half, 1, PREFIX "quantizer.rvq_first.output_proj.weight")) ||
        (s = bind3(m, &c->proj_rest, c->codebook_dim, half, 1, PREFIX "quantizer.rvq_rest.output_proj.weight")) ||
        (s = bind_conv(m, &c->pre_conv, c->codebook_dim, L, 3, 1, "pre_conv")))
        return s;
    if ((s = q3_bind_mat(m, PREFIX "pre_transformer.input_proj.weight", H, L, &c->in_proj)) ||
        (s = q3_bind_f32(m, PREFIX "pre_transformer.input_proj.bias", H, &c->in_proj_b)) ||
        (s = q3_bind_mat(m, PREFIX "pre_transformer.output_proj.weight", L, H, &c->out_proj)) ||
        (s = q3_bind_f32(m, PREFIX "pre_transformer.output_proj.bias", L, &c->out_proj_b)) ||
        (s = q3_bind_f32(m, PREFIX "pre_transformer.norm.weight", H, &c->norm)))
        return s;
    const int64_t qd = c->n_heads * d, kvd = c->n_kv_heads * d;
    for (int64_t l = 0; l < c->n_layers; l++) {
        q3_codec_layer *y = &c->layers[l];
        const long long ll = (long long)l;
#define P PREFIX "pre_transformer.layers.%lld."
        if ((s = q3_bind_f32f(m, &y->in_norm, H, P "input_layernorm.weight", ll)) ||
            (s = q3_bind_f32f(m, &y->post_norm, H, P "post_attention_layernorm.weight", ll)) ||
            (s = q3_bind_f32f(m, &y->attn_scale, H, P "self_attn_layer_scale.scale", ll)) ||
            (s = q3_bind_f32f(m, &y->mlp_scale, H, P "mlp_layer_scale.scale", ll)) ||
            (s = q3_bind_matf(m, &y->q, qd, H, P "self_attn.q_proj.weight", ll)) ||
            (s = q3_bind_matf(m, &y->k, kvd, H, P "self_attn.k_proj.weight", ll)) ||
            (s = q3_bind_matf(m, &y->v, kvd, H, P "self_attn.v_proj.weight", ll)) ||
            (s = q3_bind_matf(m, &y->o, H, qd, P "self_attn.o_proj.weight", ll)) ||
            (s = q3_bind_matf(m, &y->gate, c->intermediate, H, P "mlp.gate_proj.weight", ll)) ||
            (s = q3_bind_matf(m, &y->up, c->intermediate, H, P "mlp.up_proj.weight", ll)) ||
            (s = q3_bind_matf(m, &y->down, H, c->intermediate, P "mlp.down_proj.weight", ll)))
            return s;
#undef P
    }
    for (int64_t i = 0; i < c->n_up; i++) {
        q3_convnext *u = &c->up[i];
        const long long ii = (long long)i;
        snprintf(name, sizeof name, "upsample.%lld.0", ii);
        if ((s = bind_tconv(m, &u->up, L, L, c->up_ratio[i], c->up_ratio[i], name))) return s;
        snprintf(name, sizeof name, PREFIX "upsample.%lld.1.dwconv.conv.weight", ii);
        if ((s = owned_f32(m, &u->dw_w, L * 7, name))) return s;
#define P PREFIX "upsample.%lld.1."
        if ((s = q3_bind_f32f(m, &u->dw_b, L, P "dwconv.conv.bias", ii)) ||
            (s = q3_bind_f32f(m, &u->ln_w, L, P "norm.weight", ii)) ||
            (s = q3_bind_f32f(m, &u->ln_b, L, P "norm.bias", ii)) ||
            (s = q3_bind_matf(m, &u->pw1, 4 * L, L, P "pwconv1.weight", ii)) ||
            (s = q3_bind_f32f(m, &u->pw1_b, 4 * L, P "pwconv1.bias", ii)) ||
            (s = q3_bind_matf(m, &u->pw2, L, 4 * L, P "pwconv2.weight", ii)) ||
            (s = q3_bind_f32f(m, &u->pw2_b, L, P "pwconv2.bias", ii)) ||
            (s = q3_bind_f32f(m, &u->gamma, L, P "gamma", ii)))
            return s;
#undef P
    }
    if ((s = bind_conv(m, &c->dec0, L, c->decoder_dim, 7, 1, "decoder.0"))) return s;
    for (int64_t b = 0; b < c->n_blocks; b++) {
        q3_codec_block *bl = &c->blocks[b];
        const int64_t cin = c->decoder_dim >> b, cout = c->decoder_dim >> (b + 1);
        const long long bb = (long long)(b + 1);
        snprintf(name, sizeof name, "decoder.%lld.block.0", bb);
        if ((s = bind_snake(m, &bl->act, cin, name))) return s;
        snprintf(name, sizeof name, "decoder.%lld.block.1", bb);
        if ((s = bind_tconv(m, &bl->up, cin, cout, 2 * c->rate[b], c->rate[b], name))) return s;
        static const int64_t dil[Q3_CODEC_UNITS] = {1, 3, 9};
        for (int u = 0; u < Q3_CODEC_UNITS; u++) {
            snprintf(name, sizeof name, "decoder.%lld.block.%d.act1", bb, u + 2);
            if ((s = bind_snake(m, &bl->act1[u], cout, name))) return s;
            snprintf(name, sizeof name, "decoder.%lld.block.%d.act2", bb, u + 2);
            if ((s = bind_snake(m, &bl->act2[u], cout, name))) return s;
            snprintf(name, sizeof name, "decoder.%lld.block.%d.conv1", bb, u + 2);
            if ((s = bind_conv(m, &bl->conv1[u], cout, cout, 7, dil[u], name))) return s;
            snprintf(name, sizeof name, "decoder.%lld.block.%d.conv2", bb, u + 2);
            if ((s = bind_conv(m, &bl->conv2[u], cout, cout, 1, 1, name))) return s;
        }
    }
    const int64_t last = c->decoder_dim >> c->n_blocks;
    snprintf(name, sizeof name, "decoder.%lld", (long long)(c->n_blocks + 1));
    if ((s = bind_snake(m, &c->final_act, last, name))) return s;
    snprintf(name, sizeof name, "decoder.%lld", (long long)(c->n_blocks + 2));
    return bind_conv(m, &c->final_conv, last, 1, 7, 1, name);
}

/* The stride-1 convolutions that pack (all but the final one-channel one). */
static int packable_convs(q3_codec *c, q3_conv **convs) {
    int n = 0;
    convs[n++] = &c->pre_conv;
    convs[n++] = &c->dec0;
    for (int64_t b = 0; b < c->n_blocks; b++)
        for (int u = 0; u < Q3_CODEC_UNITS; u++) convs[n++] = &c->blocks[b].conv1[u], convs[n++] = &c->blocks[b].conv2[u];
    return n;
}

/* The transposed convolutions (the ConvNeXt stages' and the blocks'). */
static int transposed_convs(q3_codec *c, q3_tconv **tcs) {
    int n = 0;
    for (int64_t i = 0; i < c->n_up; i++) tcs[n++] = &c->up[i].up;
    for (int64_t b = 0; b < c->n_blocks; b++) tcs[n++] = &c->blocks[b].up;
    return n;
}

/* w (any float dtype) widened to f32, transposed if asked (a transposed convolution's [c_in][c_out * k]
 * as [c_out * k][c_in]: one tap over c_in), zero rows up to a multiple of 64, packed as int8 codes. */
static vox_status pack_i8(const vx_mat *w, int transpose, int64_t c_in, int64_t k, vx_i8w *out) {
    const int64_t R = transpose ? w->cols : w->rows, C = transpose ? w->rows : w->cols, Rp = (R + 63) / 64 * 64;
    float *dst = calloc((size_t)(Rp * C), sizeof *dst);
    float *src = transpose ? malloc((size_t)(w->rows * w->cols) * sizeof *src) : dst; /* widened in place if not */
    vox_status st;
    if (!dst || !src) {
        st = vox_oom();
    } else if ((st = vx_to_f32(w->dtype, w->data, w->rows * w->cols, src)) == VOX_OK) {
        if (transpose) { /* in 64 x 64 blocks: both sides stay in cache */
            for (int64_t r0 = 0; r0 < R; r0 += 64)
                for (int64_t i0 = 0; i0 < C; i0 += 64)
                    for (int64_t r = r0; r < R && r < r0 + 64; r++)
                        for (int64_t i = i0; i < C && i < i0 + 64; i++) dst[r * C + i] = src[i * R + r];
        }
        const vx_mat m = {.dtype = VOX_DTYPE_F32, .rows = Rp, .cols = C, .data = dst};
        st = vx_i8w_pack_conv(&m, c_in, k, out);
    }
    if (src != dst) free(src);
    free(dst);
    return st;
}

/* The convolutions' math (q3_codec.math), by VOX_QWEN3_CODEC: unset or "auto", bf16 dot products for
 * bf16 weights where the path's bf16 kernel rounds its inputs, f32 products otherwise; "f32" f32
 * products always; "int8" int8 dot products for any weights where the path has the int8 convolution
 * (else what auto chooses, with a line on stderr). */
static vox_status read_choice(int *ask_f32, int *ask_int8) {
    const char *want = getenv("VOX_QWEN3_CODEC");
    if (!want || !*want) want = "auto";
    *ask_f32 = !strcmp(want, "f32"), *ask_int8 = !strcmp(want, "int8");
    if (!*ask_f32 && !*ask_int8 && strcmp(want, "auto"))
        return vox_set_error(VOX_ERR_INVALID_ARGUMENT,
                             "VOX_QWEN3_CODEC=%s: use auto (the default: bf16 dot products for bf16 codec weights where "
                             "the CPU path has them, f32 products otherwise), f32 or int8", want);
    return VOX_OK;
}

/* One packing job: a convolution's int8 or bf16 codes, or a transposed convolution's int8 codes. */
typedef struct pack_job {
    q3_conv *conv;
    q3_tconv *tconv;
    int bf16;
    vox_status st;
} pack_job;

static vox_status run_pack(pack_job *j) {
    if (j->tconv) return pack_i8(&j->tconv->w, 1, j->tconv->c_in, 1, &j->tconv->iw);
    if (j->bf16) return vx_bf16w_pack_conv(&j->conv->w, j->conv->c_in, j->conv->k, &j->conv->pw);
    return pack_i8(&j->conv->w, 0, j->conv->c_in, j->conv->k, &j->conv->iw);
}

static void pack_range(void *ctx, int64_t begin, int64_t end) {
    pack_job *jobs = ctx;
    for (int64_t i = begin; i < end; i++) jobs[i].st = run_pack(&jobs[i]);
}

/* The jobs over the pool (each weight packed whole by one thread: the same codes for any pool); a job
 * that failed runs again on the calling thread, so its error message is this thread's. */
static vox_status run_packs(vx_pool *pool, pack_job *jobs, int n) {
    vx_pool_for_chunks(pool, n, 1, 8, pack_range, jobs);
    for (int i = 0; i < n; i++)
        if (jobs[i].st != VOX_OK) {
            if (jobs[i].tconv) vx_i8w_free(&jobs[i].tconv->iw);
            else vx_i8w_free(&jobs[i].conv->iw), vx_bf16w_free(&jobs[i].conv->pw);
            vox_status st = run_pack(&jobs[i]);
            if (st) return st;
        }
    return VOX_OK;
}

static vox_status choose_math(q3_codec *c, vx_pool *pool) {
    c->math = "f32 products of the stored weights";
    const vx_dot_caps dots = vx_cpu_dots();
    int ask_f32, ask_int8;
    vox_status cs = read_choice(&ask_f32, &ask_int8);
    if (cs) return cs;
    q3_conv *convs[2 + Q3_CODEC_MAX_BLOCKS * 2 * Q3_CODEC_UNITS];
    q3_tconv *tcs[Q3_CODEC_MAX_UP + Q3_CODEC_MAX_BLOCKS];
    pack_job jobs[sizeof convs / sizeof *convs + sizeof tcs / sizeof *tcs];
    int nj = 0;
    const int n = packable_convs(c, convs);
    if (ask_int8 && dots.int8) {
        for (int i = 0; i < n; i++) /* padding c_out to 64k costs more than widened codes gain */
            if (convs[i]->c_out % 64 == 0 || !dots.int8_widened) jobs[nj++] = (pack_job){.conv = convs[i]};
        for (int i = 0, nt = transposed_convs(c, tcs); i < nt; i++) /* taps written in place: unpadded only */
            if (tcs[i]->w.cols % 64 == 0) jobs[nj++] = (pack_job){.tconv = tcs[i]};
        vox_status st = run_packs(pool, jobs, nj);
        if (st) return st;
        c->math = dots.int8_widened
                      ? "int8 dot products in the convolutions of 64k channels and the transposed convolutions (8-bit "
                        "weights per output channel and tap, each input row 8-bit with its own range, exact int32 sums; "
                        "VOX_QWEN3_CODEC=int8)"
                      : "int8 dot products in the convolutions and transposed convolutions (8-bit weights per output "
                        "channel and tap, each input row 8-bit with its own range, exact int32 sums; VOX_QWEN3_CODEC=int8)";
        return VOX_OK;
    }
    if (ask_int8)
        fprintf(stderr, "vox: VOX_QWEN3_CODEC=int8: the CPU path %s has no int8 convolution kernel; the codec "
                        "decoder's convolutions run as the default chooses\n", vx_cpu()->name);
    if (c->dec0.w.dtype != VOX_DTYPE_BF16) return VOX_OK;
    if (ask_f32) {
        c->math = "f32 products of the bf16 weights (VOX_QWEN3_CODEC=f32)";
        return VOX_OK;
    }
    if (!dots.bf16 || !dots.bf16_rounds_x) {
        c->math = "f32 products of the bf16 weights (this kernel path has no bf16 dot product)";
        return VOX_OK;
    }
    for (int i = 0; i < n; i++) {
        q3_conv *cv = convs[i];
        if (cv->w.dtype == VOX_DTYPE_BF16 && cv->c_out % 64 == 0 && cv->c_in % 2 == 0) /* else it stays f32 */
            jobs[nj++] = (pack_job){.conv = cv, .bf16 = 1};
    }
    vox_status st = run_packs(pool, jobs, nj);
    if (st) return st;
    c->math = "bf16 dot products in the convolutions of 64k channels (inputs rounded to bf16; "
              "VOX_QWEN3_CODEC=f32 for f32 products)";
    return VOX_OK;
}

vox_status q3_codec_open(const q3_model *m, q3_codec **out) {
    *out = NULL;
    q3_codec *c = calloc(1, sizeof *c);
    if (!c) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    int ask_f32, ask_int8;
    vox_status s = read_config(m, c);
    if (!s) s = bind_weights(m, c);
    if (!s) s = read_choice(&ask_f32, &ask_int8);   /* a bad value fails the load wherever the codec runs */
    if (s) {
        q3_codec_free(c);
        return s;
    }
    c->math = "f32 products of the stored weights";
    *out = c;
    return VOX_OK;
}

vox_status q3_codec_prepare_cpu(q3_codec *c, vx_pool *pool) { return choose_math(c, pool); }

vox_status q3_codec_load(const q3_model *m, q3_codec **out) {
    vox_status s = q3_codec_open(m, out);
    if (!s && (s = q3_codec_prepare_cpu(*out, NULL)) != VOX_OK) {
        q3_codec_free(*out);
        *out = NULL;
    }
    return s;
}

static void free_snake(q3_snake *s) {
    free(s->alpha);
    free(s->inv_beta);
}

static void free_packs(q3_codec *c) {
    q3_conv *convs[2 + Q3_CODEC_MAX_BLOCKS * 2 * Q3_CODEC_UNITS];
    for (int i = 0, n = packable_convs(c, convs); i < n; i++) vx_bf16w_free(&convs[i]->pw), vx_i8w_free(&convs[i]->iw);
    q3_tconv *tcs[Q3_CODEC_MAX_UP + Q3_CODEC_MAX_BLOCKS];
    for (int i = 0, n = transposed_convs(c, tcs); i < n; i++) vx_i8w_free(&tcs[i]->iw);
}

void q3_codec_free(q3_codec *c) {
    if (!c) return;
    free_packs(c);
    free(c->cb_sum);
    free(c->cb_usage);
    free(c->layers);
    free(c->inv_freq);
    for (int64_t i = 0; i < Q3_CODEC_MAX_UP; i++) free(c->up[i].dw_w);
    for (int64_t b = 0; b < Q3_CODEC_MAX_BLOCKS; b++) {
        free_snake(&c->blocks[b].act);
        for (int u = 0; u < Q3_CODEC_UNITS; u++) {
            free_snake(&c->blocks[b].act1[u]);
            free_snake(&c->blocks[b].act2[u]);
        }
    }
    free_snake(&c->final_act);
    free(c);
}

int32_t q3_codec_groups(const q3_codec *c) { return c ? (int32_t)c->n_q : 16; }
int32_t q3_codec_codebook_size(const q3_codec *c) { return c ? (int32_t)c->codebook_size : 2048; }
int32_t q3_codec_samples_per_frame(const q3_codec *c) { return c ? (int32_t)c->spf : 1920; }
int32_t q3_codec_sample_rate(const q3_codec *c) { (void)c; return 24000; }

/* ------------------------------------------------------------------------------ reference mode */
#define REF_PIECE 300
#define REF_CONTEXT 25

vox_status q3_codec_decode_reference_range(const q3_codec *codec, vx_pool *pool, const int32_t *codes, int64_t n,
                                           int64_t skip, float *pcm, int64_t capacity) {
    const int64_t spf = codec->spf;
    if (n < 0 || skip < 0 || capacity < 0 || (!pcm && capacity))
        return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "q3_codec_decode_reference: bad arguments");
    const int64_t end_sample = skip + capacity < n * spf ? skip + capacity : n * spf;
    if (end_sample <= skip) return VOX_OK;
    q3_stream *s;
    vox_status st = q3_stream_create(codec, &s);
    if (st) return st;
    float *tmp = NULL;
    /* Qwen3TTSTokenizerV2Decoder.chunked_decode: each piece [start, end) is decoded from scratch with
     * `context` frames before it whose audio is dropped. The whole-sequence forward of a piece is a
     * fresh stream fed its frames (the stream is exactly the forward, for any chunking). */
    for (int64_t start = 0; start < n && st == VOX_OK; start += REF_PIECE) {
        const int64_t end = start + REF_PIECE < n ? start + REF_PIECE : n;
        if (end * spf <= skip) continue;
        if (start * spf >= end_sample) break;
        const int64_t context = start - REF_CONTEXT > 0 ? REF_CONTEXT : start;
        q3_stream_reset(s);
        st = q3_stream_prime(s, pool, codes + (start - context) * codec->n_q, context);
        /* the piece in runs of up to 16 frames through a scratch buffer; samples outside
         * [skip, end_sample) are dropped */
        const int64_t run = 16;
        if (!tmp && !(tmp = malloc((size_t)(run * spf) * sizeof(float)))) {
            st = vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
            break;
        }
        for (int64_t f = start; f < end && st == VOX_OK; f += run) {
            const int64_t k = end - f < run ? end - f : run;
            if (f * spf >= end_sample) break;
            st = q3_stream_push(s, pool, codes + f * codec->n_q, k, tmp);
            const int64_t a0 = f * spf, a1 = a0 + k * spf;
            const int64_t lo = a0 > skip ? a0 : skip, hi = a1 < end_sample ? a1 : end_sample;
            if (st == VOX_OK && hi > lo) memcpy(pcm + (lo - skip), tmp + (lo - a0), (size_t)(hi - lo) * sizeof(float));
        }
    }
    free(tmp);
    q3_stream_free(s);
    return st;
}

vox_status q3_codec_decode_reference(const q3_codec *codec, vx_pool *pool, const int32_t *codes, int64_t n,
                                     float *pcm) {
    return q3_codec_decode_reference_range(codec, pool, codes, n, 0, pcm, n * codec->spf);
}

int64_t q3_reference_cut(int64_t ref_frames, int64_t total_frames, int64_t n_samples) {
    return (int64_t)((double)ref_frames / (double)(total_frames > 1 ? total_frames : 1) * (double)n_samples);
}

/* ------------------------------------------------------------------------------ decode */
static vox_status check_codes(const q3_codec *c, const int32_t *codes, size_t n, const char *what) {
    const size_t total = n * (size_t)c->n_q;
    for (size_t i = 0; i < total; i++)
        if (codes[i] < 0 || codes[i] >= c->codebook_size)
            return vox_set_error(VOX_ERR_INVALID_ARGUMENT,
                                 "decode: %s[%zu][%zu] = %d is out of range (codes are 0..%lld)", what,
                                 i / (size_t)c->n_q, i % (size_t)c->n_q, (int)codes[i],
                                 (long long)(c->codebook_size - 1));
    return VOX_OK;
}

vox_status q3_decode(vox_engine *e, const int32_t *codes, size_t n_frames, const int32_t *ref_codes, size_t n_ref,
                     int mode, int32_t context, int32_t chunk_frames, float *pcm, size_t capacity,
                     size_t *n_samples) {
    const q3_model *m = e->impl;
    const q3_codec *c = m ? m->codec : NULL;
    if (!c) return vox_set_error(VOX_ERR_UNSUPPORTED, "this model has no codec decoder");
    if (!n_samples || (!codes && n_frames) || (!ref_codes && n_ref) || (!pcm && capacity))
        return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "decode: NULL argument");
    if (n_frames == 0) return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "decode: no frames to decode (n_frames is 0)");
    const size_t limit = ((size_t)1 << 40) / (size_t)c->spf;
    if (n_frames > limit || n_ref > limit)
        return vox_set_error(VOX_ERR_LIMIT, "decode: too many frames (%zu + %zu)", n_ref, n_frames);
    if (mode != Q3_DECODER_STREAM && mode != Q3_DECODER_REFERENCE)
        return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "decode: unknown decoder mode %d", (int)mode);
    if (mode == Q3_DECODER_STREAM && (context < -1 || chunk_frames <= 0))
        return vox_set_error(VOX_ERR_INVALID_ARGUMENT,
                             "decode: context must be >= -1 and chunk_frames > 0 (got %d, %d)", (int)context,
                             (int)chunk_frames);
    vox_status st;
    if ((st = check_codes(c, codes, n_frames, "codes")) || (st = check_codes(c, ref_codes, n_ref, "ref_codes")))
        return st;
    const int64_t spf = c->spf, nq = c->n_q;

    if (mode == Q3_DECODER_REFERENCE) {
        /* decode_reference: (ref + codes) the official way, then the voice-clone wrapper's cut */
        const int64_t total = (int64_t)(n_ref + n_frames), all = total * spf;
        const int64_t cut = n_ref ? q3_reference_cut((int64_t)n_ref, total, all) : 0;
        *n_samples = (size_t)(all - cut);
        if (!capacity) return VOX_OK;
        int32_t *joined = malloc((size_t)(total * nq) * sizeof *joined);
        if (!joined) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
        if (n_ref) memcpy(joined, ref_codes, n_ref * (size_t)nq * sizeof *joined);
        memcpy(joined + n_ref * (size_t)nq, codes, n_frames * (size_t)nq * sizeof *joined);
        const int64_t cap = (int64_t)(capacity < *n_samples ? capacity : *n_samples);
        st = q3_codec_decode_reference_range(c, e->pool, joined, total, cut, pcm, cap);
        free(joined);
        return st;
    }

    /* stream mode: warm up on the last `context` reference frames (audio discarded), then the codes
     * `chunk_frames` at a time, exactly as a session streams them */
    *n_samples = n_frames * (size_t)spf;
    if (!capacity) return VOX_OK;
    const size_t warm = context < 0 || (size_t)context > n_ref ? n_ref : (size_t)context;
    q3_stream *s;
    if ((st = q3_stream_create(c, &s))) return st;
    st = q3_stream_prime_cached(m->primes, s, e->pool, ref_codes + (n_ref - warm) * (size_t)nq, (int64_t)warm);
    float *tmp = NULL;
    for (size_t f = 0; f < n_frames && st == VOX_OK; f += (size_t)chunk_frames) {
        const size_t k = n_frames - f < (size_t)chunk_frames ? n_frames - f : (size_t)chunk_frames;
        const size_t a0 = f * (size_t)spf, a1 = a0 + k * (size_t)spf;
        if (a0 >= capacity) break; /* nothing more fits: the rest need not be decoded */
        if (a1 <= capacity) {
            st = q3_stream_push(s, e->pool, codes + f * (size_t)nq, (int64_t)k, pcm + a0);
            continue;
        }
        /* the chunk that crosses the end of the buffer: in pieces of at most TAIL frames (the same
         * bits as one push), the piece that crosses it through a scratch buffer */
        enum { TAIL = 16 };
        for (size_t g = f; g < f + k && st == VOX_OK; g += TAIL) {
            const size_t kk = f + k - g < TAIL ? f + k - g : TAIL, b0 = g * (size_t)spf, b1 = b0 + kk * (size_t)spf;
            if (b0 >= capacity) break;
            if (b1 <= capacity) {
                st = q3_stream_push(s, e->pool, codes + g * (size_t)nq, (int64_t)kk, pcm + b0);
                continue;
            }
            if (!tmp && !(tmp = malloc((size_t)TAIL * (size_t)spf * sizeof *tmp))) {
                st = vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
                break;
            }
            st = q3_stream_push(s, e->pool, codes + g * (size_t)nq, (int64_t)kk, tmp);
            if (st == VOX_OK) memcpy(pcm + b0, tmp, (capacity - b0) * sizeof *tmp);
        }
        break;
    }
    free(tmp);
    q3_stream_free(s);
    return st;
}
