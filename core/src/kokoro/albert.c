/* PL-BERT: an ALBERT encoder (one shared layer applied bert_layers times), bidirectional attention
 * over the whole span (batch of one, no padding), GELU in its tanh form ("gelu_new", ALBERT's
 * default activation). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../error.h"
#include "kokoro.h"

typedef struct attn_job {
    const float *qkv;   /* [n][3][hidden] */
    int64_t n, hidden, heads, dh;
    float *ctx;         /* [n][hidden] */
    float *work;        /* per head: k, v [n][dh] each, q [n][dh], scores [n][n], out [n][dh] */
} attn_job;

/* One head per task: softmax(q k^T / sqrt(dh)) v with the scores and the weighted sum as f32 GEMMs
 * (run on the task's thread: the result does not depend on the thread count). */
static void attn_heads(void *c, int64_t begin, int64_t end) {
    attn_job *j = c;
    const int64_t n = j->n, H = j->hidden, dh = j->dh, stride = 3 * H;
    const float scale = 1.0f / sqrtf((float)dh);
    for (int64_t h = begin; h < end; h++) {
        float *k = j->work + h * (4 * n * dh + n * n), *v = k + n * dh, *q = v + n * dh, *sc = q + n * dh,
              *o = sc + n * n;
        for (int64_t i = 0; i < n; i++) {
            memcpy(q + i * dh, j->qkv + i * stride + h * dh, (size_t)dh * sizeof *q);
            memcpy(k + i * dh, j->qkv + i * stride + H + h * dh, (size_t)dh * sizeof *k);
            memcpy(v + i * dh, j->qkv + i * stride + 2 * H + h * dh, (size_t)dh * sizeof *v);
        }
        vx_mat km = {.dtype = VOX_DTYPE_F32, .rows = n, .cols = dh, .data = k};
        vx_linear(NULL, &km, NULL, q, n, sc);  /* sc[i][t] = q_i . k_t */
        for (int64_t i = 0; i < n; i++) {
            float *row = sc + i * n, mx = -INFINITY, sum = 0.0f;
            for (int64_t t = 0; t < n; t++) {
                row[t] *= scale;
                if (row[t] > mx) mx = row[t];
            }
            for (int64_t t = 0; t < n; t++) {
                row[t] = expf(row[t] - mx);
                sum += row[t];
            }
            float inv = 1.0f / sum;
            for (int64_t t = 0; t < n; t++) row[t] *= inv;
        }
        vx_matmul_nn_f32(NULL, v, n, dh, sc, n, o);  /* o[i] = sum_t p[i][t] v_t */
        for (int64_t i = 0; i < n; i++) memcpy(j->ctx + i * H + h * dh, o + i * dh, (size_t)dh * sizeof *o);
    }
}

/* tanh through the SIMD kernel (within a few ulps of libm) in blocks: libm's scalar tanhf was ~40% of
 * PL-BERT's time (one call per FFN activation, 2048 per token per layer) */
static void gelu_tanh(float *x, int64_t n) {
    const float c = 0.7978845608028654f; /* sqrt(2 / pi) */
    float u[1024];
    for (int64_t i0 = 0; i0 < n; i0 += 1024) {
        int64_t m = n - i0 < 1024 ? n - i0 : 1024;
        float *xb = x + i0;
        for (int64_t i = 0; i < m; i++) {
            float v = xb[i];
            u[i] = c * (v + 0.044715f * v * v * v);
        }
        vx_tanh(u, m, u);
        for (int64_t i = 0; i < m; i++) xb[i] = 0.5f * xb[i] * (1.0f + u[i]);
    }
}

vox_status kk_albert(const kk_model *m, vx_pool *pool, const int32_t *ids, int64_t n, float *out) {
    const int64_t E = m->bert_emb, H = m->bert_hidden, F = m->bert_ffn;
    const kk_albert_layer *ly = &m->layer;
    float *emb = malloc((size_t)(n * E * 2) * sizeof *emb);
    float *qkv = malloc((size_t)(n * 3 * H) * sizeof *qkv);
    float *ctx = malloc((size_t)(n * H) * sizeof *ctx);
    float *ffn = malloc((size_t)(n * F) * sizeof *ffn);
    const int64_t dh = H / m->bert_heads;
    float *scores = malloc((size_t)(m->bert_heads * (4 * n * dh + n * n)) * sizeof *scores);
    if (!emb || !qkv || !ctx || !ffn || !scores) {
        free(emb), free(qkv), free(ctx), free(ffn), free(scores);
        return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    }
    /* embeddings: word + position + token type 0, LayerNorm (eps 1e-12), mapped to the hidden size */
    float *pos = emb + n * E, tt[512];
    int32_t zero = 0;
    vx_gather_rows(&m->word_emb, ids, n, emb);
    for (int64_t i = 0; i < n; i++) {
        int32_t p = (int32_t)i;
        vx_gather_rows(&m->pos_emb, &p, 1, pos + i * E);
    }
    vx_gather_rows(&m->type_emb, &zero, 1, tt);
    for (int64_t i = 0; i < n; i++)
        for (int64_t c = 0; c < E; c++) emb[i * E + c] = emb[i * E + c] + tt[c] + pos[i * E + c];
    vx_layer_norm(emb, m->emb_ln_w, m->emb_ln_b, n, E, 1e-12f, emb);
    vx_linear(pool, &m->emb_in, m->emb_in_b, emb, n, out);
    const vx_mat *w3[3] = {&ly->q, &ly->k, &ly->v};
    const float *b3[3] = {ly->q_b, ly->k_b, ly->v_b};
    float *q = malloc((size_t)(n * H * 3) * sizeof *q);
    if (!q) {
        free(emb), free(qkv), free(ctx), free(ffn), free(scores);
        return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    }
    for (int64_t l = 0; l < m->bert_layers; l++) {
        float *y3[3] = {q, q + n * H, q + 2 * n * H};
        vx_linear_multi(pool, 3, w3, b3, out, n, y3);
        for (int64_t i = 0; i < n; i++)
            for (int t = 0; t < 3; t++) memcpy(qkv + (i * 3 + t) * H, y3[t] + i * H, (size_t)H * sizeof *qkv);
        attn_job j = {.qkv = qkv, .n = n, .hidden = H, .heads = m->bert_heads, .dh = dh, .ctx = ctx, .work = scores};
        vx_pool_for(pool, m->bert_heads, 1, attn_heads, &j);
        /* attention output: LayerNorm(x + dense(ctx)) */
        vx_linear(pool, &ly->o, ly->o_b, ctx, n, q);
        vx_add(q, out, n * H, q);
        vx_layer_norm(q, ly->ln1_w, ly->ln1_b, n, H, 1e-12f, out);
        /* feed-forward: LayerNorm(x + ffn_output(gelu(ffn(x)))) */
        vx_linear(pool, &ly->ffn, ly->ffn_b, out, n, ffn);
        gelu_tanh(ffn, n * F);
        vx_linear(pool, &ly->ffn_out, ly->ffn_out_b, ffn, n, q);
        vx_add(q, out, n * H, q);
        vx_layer_norm(q, ly->ln2_w, ly->ln2_b, n, H, 1e-12f, out);
    }
    free(q), free(emb), free(qkv), free(ctx), free(ffn), free(scores);
    return VOX_OK;
}
