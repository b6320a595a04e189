/* The speaker encoder of Base models (Qwen3TTSSpeakerEncoder, ECAPA-TDNN): vox.reference.qwen3.
 * speaker_encoder in C. Input: log-mel [T][128] (time-major); output: one x-vector [enc_dim].
 *
 *   blocks.0        TDNN(mel -> C0, k0, d0): conv 'same' with reflect padding, ReLU
 *   blocks.1..n-2   SE-Res2Net: tdnn1 (1x1), Res2Net (chunk 0 passes, chunk i = TDNN(chunk i + out i-1)),
 *                   tdnn2 (1x1), squeeze-excitation (time mean, 1x1 + ReLU, 1x1 + sigmoid), + input
 *   mfa             TDNN(cat(blocks 1..n-2) -> C[-1])
 *   asp             attentive statistics pooling (global mean/std appended per frame, TDNN, tanh, 1x1,
 *                   softmax over time per channel, weighted mean and std)
 *   fc              1x1 (2 C[-1] -> enc_dim)
 * Reductions follow the reference (float32, numpy's pairwise sums; the global mean weight is
 * float(1) / float(T); std = sqrt(max(var, 1e-12))). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../error.h"
#include "../tmod.h"
#include "voice_encoder.h"

#define PREFIX "speaker_encoder."
#define MAX_BLOCKS 16
#define MAX_SCALE 64

typedef struct conv_w {
    vx_mat w;
    const float *b;
    int64_t k, dilation, c_in, c_out;
} conv_w;

typedef struct se_block {
    conv_w tdnn1, tdnn2, se1, se2;
    conv_w res[MAX_SCALE - 1];
} se_block;

struct q3_ecapa {
    int32_t n_layers;               /* len(enc_channels) */
    int64_t channels[MAX_BLOCKS], kernels[MAX_BLOCKS], dilations[MAX_BLOCKS];
    int64_t scale, mel_dim, dim, att_channels, se_channels;
    conv_w block0, mfa, asp_tdnn, asp_conv, fc;
    se_block blocks[MAX_BLOCKS];    /* [1 .. n_layers - 2] */
};

static vox_status bind(const q3_model *m, conv_w *c, const char *name, int64_t c_out, int64_t c_in, int64_t k,
                       int64_t dilation) {
    char wn[256], bn[256];
    snprintf(wn, sizeof wn, PREFIX "%s.weight", name);
    snprintf(bn, sizeof bn, PREFIX "%s.bias", name);
    vox_status st = q3_bind_conv(m, wn, c_out, c_in, k, &c->w);
    if (st == VOX_OK) st = q3_bind_f32(m, bn, c_out, &c->b);
    c->k = k, c->dilation = dilation, c->c_in = c_in, c->c_out = c_out;
    return st;
}

static vox_status int_list(const vox_json *cfg, const char *key, int64_t *out, int32_t *n, int32_t want) {
    const vox_json *a = vox_json_get(cfg, key);
    if (!a || a->type != VOX_JSON_ARRAY || a->count < 1 || a->count > MAX_BLOCKS)
        return vox_set_error(VOX_ERR_FORMAT, "model config: speaker_encoder_config.%s must be a list of 1 to %d "
                             "integers", key, MAX_BLOCKS);
    int32_t i = 0;
    for (const vox_json *c = a->child; c; c = c->next, i++) {
        if (c->type != VOX_JSON_NUMBER || !c->is_integer || c->integer < 1 || c->integer > 65536)
            return vox_set_error(VOX_ERR_FORMAT, "model config: speaker_encoder_config.%s[%d] is not a positive "
                                 "integer", key, i);
        out[i] = c->integer;
    }
    if (want >= 0 && i != want)
        return vox_set_error(VOX_ERR_FORMAT, "model config: speaker_encoder_config: enc_channels, enc_kernel_sizes "
                             "and enc_dilations must have the same length");
    *n = i;
    return VOX_OK;
}

static int64_t cfg_int_or(const vox_json *cfg, const char *key, int64_t dflt) {
    const vox_json *v = vox_json_get(cfg, key);
    return v && v->type == VOX_JSON_NUMBER && v->is_integer ? v->integer : dflt;
}

vox_status q3_ecapa_load(const q3_model *m, q3_ecapa **out) {
    *out = NULL;
    const vox_json *cfg = vox_json_get(m->config, "speaker_encoder_config");
    if (!cfg || cfg->type != VOX_JSON_OBJECT)
        return vox_set_error(VOX_ERR_FORMAT, "%s: the model config has no speaker_encoder_config",
                             vox_model_path(m->file));
    q3_ecapa *e = calloc(1, sizeof *e);
    if (!e) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    vox_status st;
    int32_t n = 0, n2 = 0, n3 = 0;
    static const int64_t dch[5] = {512, 512, 512, 512, 1536}, dk[5] = {5, 3, 3, 3, 1}, dd[5] = {1, 2, 3, 4, 1};
    /* the official config class's defaults where a key is absent */
    if (vox_json_get(cfg, "enc_channels")) st = int_list(cfg, "enc_channels", e->channels, &n, -1);
    else n = 5, memcpy(e->channels, dch, sizeof dch), st = VOX_OK;
    if (st == VOX_OK) {
        if (vox_json_get(cfg, "enc_kernel_sizes")) st = int_list(cfg, "enc_kernel_sizes", e->kernels, &n2, n);
        else memcpy(e->kernels, dk, sizeof dk), n2 = 5;
    }
    if (st == VOX_OK) {
        if (vox_json_get(cfg, "enc_dilations")) st = int_list(cfg, "enc_dilations", e->dilations, &n3, n);
        else memcpy(e->dilations, dd, sizeof dd), n3 = 5;
    }
    if (st == VOX_OK && (n < 3 || n2 != n || n3 != n))
        st = vox_set_error(VOX_ERR_FORMAT, "model config: speaker_encoder_config needs at least 3 layers of equal-"
                           "length enc_channels, enc_kernel_sizes and enc_dilations");
    if (st != VOX_OK) {
        free(e);
        return st;
    }
    e->n_layers = n;
    e->scale = cfg_int_or(cfg, "enc_res2net_scale", 8);
    e->mel_dim = cfg_int_or(cfg, "mel_dim", 128);
    e->dim = cfg_int_or(cfg, "enc_dim", 1024);
    e->att_channels = cfg_int_or(cfg, "enc_attention_channels", 128);
    e->se_channels = cfg_int_or(cfg, "enc_se_channels", 128);
    int64_t sr = cfg_int_or(cfg, "sample_rate", 24000);
    if (e->scale < 2 || e->scale > MAX_SCALE || e->mel_dim != Q3_MEL_BINS || e->dim < 1 || sr != 24000)
        st = vox_set_error(VOX_ERR_UNSUPPORTED, "speaker encoder: res2net scale %lld, mel_dim %lld, sample rate %lld "
                           "(supported: scale 2..%d, 128 mels, 24 kHz)", (long long)e->scale, (long long)e->mel_dim,
                           (long long)sr, MAX_SCALE);
    for (int i = 1; st == VOX_OK && i < n - 1; i++)
        if (e->channels[i] != e->channels[i - 1])
            st = vox_set_error(VOX_ERR_FORMAT, "speaker encoder: SE-Res2Net block %d maps %lld to %lld channels; its "
                               "residual needs them equal", i, (long long)e->channels[i - 1], (long long)e->channels[i]);
        else if (e->channels[i] % e->scale)
            st = vox_set_error(VOX_ERR_UNSUPPORTED, "speaker encoder: %lld channels are not a multiple of the "
                               "res2net scale %lld", (long long)e->channels[i], (long long)e->scale);
    if (st == VOX_OK) st = bind(m, &e->block0, "blocks.0.conv", e->channels[0], e->mel_dim, e->kernels[0], e->dilations[0]);
    int64_t cat = 0;
    for (int i = 1; st == VOX_OK && i < n - 1; i++) {
        se_block *b = &e->blocks[i];
        int64_t c = e->channels[i], s = c / e->scale;
        char name[128];
        snprintf(name, sizeof name, "blocks.%d.tdnn1.conv", i);
        st = bind(m, &b->tdnn1, name, c, e->channels[i - 1], 1, 1);
        for (int j = 0; st == VOX_OK && j < e->scale - 1; j++) {
            snprintf(name, sizeof name, "blocks.%d.res2net_block.blocks.%d.conv", i, j);
            st = bind(m, &b->res[j], name, s, s, e->kernels[i], e->dilations[i]);
        }
        snprintf(name, sizeof name, "blocks.%d.tdnn2.conv", i);
        if (st == VOX_OK) st = bind(m, &b->tdnn2, name, c, c, 1, 1);
        snprintf(name, sizeof name, "blocks.%d.se_block.conv1", i);
        if (st == VOX_OK) st = bind(m, &b->se1, name, e->se_channels, c, 1, 1);
        snprintf(name, sizeof name, "blocks.%d.se_block.conv2", i);
        if (st == VOX_OK) st = bind(m, &b->se2, name, c, e->se_channels, 1, 1);
        cat += c;
    }
    int64_t cl = e->channels[n - 1];
    if (st == VOX_OK) st = bind(m, &e->mfa, "mfa.conv", cl, cat, e->kernels[n - 1], e->dilations[n - 1]);
    if (st == VOX_OK) st = bind(m, &e->asp_tdnn, "asp.tdnn.conv", e->att_channels, 3 * cl, 1, 1);
    if (st == VOX_OK) st = bind(m, &e->asp_conv, "asp.conv", cl, e->att_channels, 1, 1);
    if (st == VOX_OK) st = bind(m, &e->fc, "fc", e->dim, 2 * cl, 1, 1);
    if (st != VOX_OK) {
        free(e);
        return st;
    }
    *out = e;
    return VOX_OK;
}

void q3_ecapa_free(q3_ecapa *e) { free(e); }
int32_t q3_ecapa_dim(const q3_ecapa *e) { return e ? (int32_t)e->dim : 0; }

static int64_t right_pad(int64_t k, int64_t d) { return (k - 1) * d - (k - 1) * d / 2; }

int64_t q3_ecapa_min_frames(const q3_ecapa *e) {
    int64_t mx = 0;
    for (int i = 0; i < e->n_layers; i++) {
        int64_t p = right_pad(e->kernels[i], e->dilations[i]);
        if (p > mx) mx = p;
    }
    return mx + 1;
}

/* xt[c][t] = x[t][c] (blocked, so that both sides stay in cache). */
static void transpose(const float *x, int64_t t, int64_t c, float *xt) {
    for (int64_t r0 = 0; r0 < t; r0 += 32)
        for (int64_t q0 = 0; q0 < c; q0 += 32)
            for (int64_t r = r0; r < t && r < r0 + 32; r++)
                for (int64_t q = q0; q < c && q < q0 + 32; q++) xt[q * t + r] = x[r * c + q];
}

/* TDNN: conv1d 'same' with reflect padding (left = total / 2), then ReLU. x [t][c_in] -> y [t][c_out]. */
static vox_status tdnn(vx_pool *pool, const conv_w *c, const float *x, int64_t t, float *y) {
    int64_t total = c->dilation * (c->k - 1), left = total / 2;
    vox_status st;
    if (total == 0) {
        st = q3_conv1d(pool, &c->w, c->b, 1, 1, 1, x, t, y, t);
    } else {
        float *xp = malloc((size_t)(t + total) * (size_t)c->c_in * sizeof *xp);
        if (!xp) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory (speaker encoder)");
        for (int64_t i = 0; i < t + total; i++) {
            int64_t k = i - left;
            if (k < 0) k = -k;
            else if (k >= t) k = 2 * (t - 1) - k;
            memcpy(xp + i * c->c_in, x + k * c->c_in, (size_t)c->c_in * sizeof *xp);
        }
        st = q3_conv1d(pool, &c->w, c->b, c->k, c->dilation, 1, xp, t + total, y, t);
        free(xp);
    }
    if (st == VOX_OK) q3_par_map(pool, vx_relu, y, t * c->c_out, y);
    return st;
}

/* One SE-Res2Net block: x [t][c_in] -> y [t][c] (y = se(tdnn2(res2net(tdnn1(x))))) + x). */
static vox_status se_res2net(const q3_ecapa *e, vx_pool *pool, int i, const float *x, int64_t t, float *y) {
    const se_block *b = &e->blocks[i];
    int64_t c = e->channels[i], s = c / e->scale;
    vox_status st = VOX_OK;
    float *h = malloc((size_t)(t * c) * sizeof *h), *part = malloc((size_t)(t * s) * sizeof *part),
          *prev = malloc((size_t)(t * s) * sizeof *prev);
    if (!h || !part || !prev) {
        st = vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory (speaker encoder)");
        goto done;
    }
    if ((st = tdnn(pool, &b->tdnn1, x, t, h)) != VOX_OK) goto done;
    /* Res2Net into y: chunk 0 passes, chunk j = TDNN_{j-1}(chunk j (+ out j-1)) */
    for (int64_t r = 0; r < t; r++) memcpy(y + r * c, h + r * c, (size_t)s * sizeof *y);
    for (int64_t j = 1; j < e->scale; j++) {
        for (int64_t r = 0; r < t; r++) {
            const float *src = h + r * c + j * s;
            float *dst = part + r * s;
            if (j == 1) memcpy(dst, src, (size_t)s * sizeof *dst);
            else
                for (int64_t q = 0; q < s; q++) dst[q] = src[q] + prev[r * s + q];
        }
        if ((st = tdnn(pool, &b->res[j - 1], part, t, prev)) != VOX_OK) goto done;
        for (int64_t r = 0; r < t; r++) memcpy(y + r * c + j * s, prev + r * s, (size_t)s * sizeof *y);
    }
    if ((st = tdnn(pool, &b->tdnn2, y, t, h)) != VOX_OK) goto done;
    /* squeeze-excitation */
    {
        float mean[4096], z[4096], g[4096];
        if (c > 4096 || e->se_channels > 4096) {
            st = vox_set_error(VOX_ERR_UNSUPPORTED, "speaker encoder: more than 4096 channels");
            goto done;
        }
        float *ht = malloc((size_t)(t * c) * sizeof *ht);
        if (!ht) {
            st = vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory (speaker encoder)");
            goto done;
        }
        transpose(h, t, c, ht);
        for (int64_t q = 0; q < c; q++) mean[q] = q3_np_sum(ht + q * t, t, 1) / (float)t;
        free(ht);
        vx_linear(NULL, &b->se1.w, b->se1.b, mean, 1, z);
        vx_relu(z, e->se_channels, z);
        vx_linear(NULL, &b->se2.w, b->se2.b, z, 1, g);
        vx_sigmoid(g, c, g);
        for (int64_t r = 0; r < t; r++)
            for (int64_t q = 0; q < c; q++) y[r * c + q] = h[r * c + q] * g[q] + x[r * c + q];
    }
done:
    free(h), free(part), free(prev);
    return st;
}

/* Weighted statistics over time per channel of channel-major xt [c][t]: mean = sum_t w x,
 * std = sqrt(max(sum_t w (x - mean)^2, 1e-12)); w: [c][t], or one weight (w_one) for every frame. */
static void statistics(const float *xt, int64_t t, int64_t c, const float *w, float w_one, float *mean, float *std,
                       float *col) {
    for (int64_t q = 0; q < c; q++) {
        const float *xq = xt + q * t, *wq = w ? w + q * t : NULL;
        for (int64_t r = 0; r < t; r++) col[r] = (wq ? wq[r] : w_one) * xq[r];
        float mu = q3_np_sum(col, t, 1);
        for (int64_t r = 0; r < t; r++) {
            float d = xq[r] - mu;
            col[r] = (wq ? wq[r] : w_one) * (d * d);
        }
        float var = q3_np_sum(col, t, 1);
        mean[q] = mu;
        std[q] = sqrtf(var > 1e-12f ? var : 1e-12f);
    }
}

vox_status q3_ecapa_forward(const q3_ecapa *e, vx_pool *pool, const float *mel, int64_t t, float *emb) {
    if (t < q3_ecapa_min_frames(e))
        return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "audio too short for the speaker encoder: %lld mel frames, it "
                             "needs at least %lld", (long long)t, (long long)q3_ecapa_min_frames(e));
    int n = e->n_layers;
    int64_t cat = 0, cmax = e->channels[0], cl = e->channels[n - 1];
    for (int i = 1; i < n - 1; i++) {
        cat += e->channels[i];
        if (e->channels[i] > cmax) cmax = e->channels[i];
    }
    vox_status st = VOX_OK;
    float *a = malloc((size_t)(t * cmax) * sizeof *a), *b = malloc((size_t)(t * cmax) * sizeof *b);
    float *hs = malloc((size_t)(t * cat) * sizeof *hs), *xm = malloc((size_t)(t * cl) * sizeof *xm);
    float *att = malloc((size_t)(t * cl) * sizeof *att), *col = malloc((size_t)t * sizeof *col);
    float *stats = malloc((size_t)(4 * cl) * sizeof *stats);
    float *blk_in = NULL, *blk_a = NULL, *xt = NULL;
    if (!a || !b || !hs || !xm || !att || !col || !stats) {
        st = vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory (speaker encoder, %lld frames)", (long long)t);
        goto done;
    }
    if ((st = tdnn(pool, &e->block0, mel, t, a)) != VOX_OK) goto done;
    int64_t off = 0;
    for (int i = 1; i < n - 1; i++) {
        int64_t c = e->channels[i];
        if ((st = se_res2net(e, pool, i, a, t, b)) != VOX_OK) goto done;
        for (int64_t r = 0; r < t; r++) memcpy(hs + r * cat + off, b + r * c, (size_t)c * sizeof *hs);
        off += c;
        float *tmp = a;
        a = b, b = tmp;
    }
    if ((st = tdnn(pool, &e->mfa, hs, t, xm)) != VOX_OK) goto done;
    /* attentive statistics pooling, on channel-major copies (the reductions run over time) */
    if (!(xt = malloc((size_t)(t * cl) * sizeof *xt))) {
        st = vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory (speaker encoder)");
        goto done;
    }
    transpose(xm, t, cl, xt);
    float *mean = stats, *std = stats + cl;
    statistics(xt, t, cl, NULL, 1.0f / (float)t, mean, std, col);
    {
        int64_t blk = 256, ac = e->att_channels;
        blk_in = malloc((size_t)(blk * 3 * cl) * sizeof *blk_in);
        blk_a = malloc((size_t)(blk * ac) * sizeof *blk_a);
        if (!blk_in || !blk_a) {
            st = vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory (speaker encoder)");
            goto done;
        }
        for (int64_t r0 = 0; r0 < t; r0 += blk) {
            int64_t nr = t - r0 < blk ? t - r0 : blk;
            for (int64_t r = 0; r < nr; r++) {
                float *row = blk_in + r * 3 * cl;
                memcpy(row, xm + (r0 + r) * cl, (size_t)cl * sizeof *row);
                memcpy(row + cl, mean, (size_t)cl * sizeof *row);
                memcpy(row + 2 * cl, std, (size_t)cl * sizeof *row);
            }
            vx_linear(pool, &e->asp_tdnn.w, e->asp_tdnn.b, blk_in, nr, blk_a);
            vx_relu(blk_a, nr * ac, blk_a);
            vx_tanh(blk_a, nr * ac, blk_a);
            vx_linear(pool, &e->asp_conv.w, e->asp_conv.b, blk_a, nr, att + r0 * cl);
        }
    }
    /* softmax over time, per channel: att [t][cl] -> attt [cl][t] (reusing xm) */
    float *attt = xm;
    transpose(att, t, cl, attt);
    for (int64_t q = 0; q < cl; q++) {
        float *aq = attt + q * t, mx = -INFINITY;
        for (int64_t r = 0; r < t; r++) mx = aq[r] > mx ? aq[r] : mx;
        for (int64_t r = 0; r < t; r++) col[r] = expf(aq[r] - mx);
        float sum = q3_np_sum(col, t, 1);
        for (int64_t r = 0; r < t; r++) aq[r] = col[r] / sum;
    }
    statistics(xt, t, cl, attt, 0, stats + 2 * cl, stats + 3 * cl, col);
    vx_linear(NULL, &e->fc.w, e->fc.b, stats + 2 * cl, 1, emb);
done:
    free(a), free(b), free(hs), free(xm), free(att), free(col), free(stats), free(blk_in), free(blk_a), free(xt);
    return st;
}
