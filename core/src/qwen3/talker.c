/* The decoder stack shared by the talker and the code predictor (reference talker.Qwen3Decoder),
 * rotary tables (1-D and the talker's 3-axis mrope), KV caches, and the talker's embeddings. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../error.h"
#include "lm_internal.h"

/* ------------------------------------------------------------------------------ KV cache, scratch */
vox_status q3_kv_init(q3_kv *kv, const q3_decoder *d, int64_t cap) {
    memset(kv, 0, sizeof *kv);
    kv->n_layers = d->n_layers;
    kv->row = d->kv_heads * d->head_dim;
    kv->k = calloc((size_t)d->n_layers, sizeof *kv->k);
    kv->v = calloc((size_t)d->n_layers, sizeof *kv->v);
    if (!kv->k || !kv->v) {
        q3_kv_free(kv);
        return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    }
    return q3_kv_reserve(kv, cap);
}

vox_status q3_kv_reserve(q3_kv *kv, int64_t cap) {
    if (cap <= kv->cap) return VOX_OK;
    for (int64_t l = 0; l < kv->n_layers; l++) {
        float *k = realloc(kv->k[l], (size_t)(cap * kv->row) * sizeof(float));
        if (k) kv->k[l] = k;
        float *v = k ? realloc(kv->v[l], (size_t)(cap * kv->row) * sizeof(float)) : NULL;
        if (v) kv->v[l] = v;
        if (!k || !v) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory (KV cache of %lld positions)", (long long)cap);
    }
    kv->cap = cap;
    return VOX_OK;
}

void q3_kv_free(q3_kv *kv) {
    for (int64_t l = 0; kv->k && l < kv->n_layers; l++) free(kv->k[l]);
    for (int64_t l = 0; kv->v && l < kv->n_layers; l++) free(kv->v[l]);
    free(kv->k);
    free(kv->v);
    memset(kv, 0, sizeof *kv);
}

vox_status q3_scratch_init(q3_scratch *s, const q3_decoder *d, int64_t rows) {
    memset(s, 0, sizeof *s);
    s->rows = rows;
    const size_t qd = (size_t)(d->heads * d->head_dim), r = (size_t)rows;
    s->h = malloc(r * (size_t)d->hidden * sizeof(float));
    s->t = malloc(r * (size_t)d->hidden * sizeof(float));
    s->q = malloc(r * qd * sizeof(float));
    s->a = malloc(r * qd * sizeof(float));
    s->g = malloc(r * (size_t)d->inter * sizeof(float));
    s->u = malloc(r * (size_t)d->inter * sizeof(float));
    s->cos = malloc(r * (size_t)d->head_dim * sizeof(float));
    s->sin = malloc(r * (size_t)d->head_dim * sizeof(float));
    if (!s->h || !s->t || !s->q || !s->a || !s->g || !s->u || !s->cos || !s->sin) {
        q3_scratch_free(s);
        return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    }
    return VOX_OK;
}

void q3_scratch_free(q3_scratch *s) {
    free(s->h), free(s->t), free(s->q), free(s->a), free(s->g), free(s->u), free(s->cos), free(s->sin);
    memset(s, 0, sizeof *s);
}

/* ------------------------------------------------------------------------------ rotary */
void q3_mrope_table(const q3_decoder *d, const int64_t *pos, int64_t n, float *cos_out, float *sin_out) {
    const int64_t D = d->head_dim, half = D / 2;
    int axis[1024]; /* axis of each of the D duplicated-table entries */
    for (int64_t x = 0; x < D; x++) axis[x] = 0;
    if (d->n_section > 0 && d->interleaved) {
        /* frequency j from axis a >= 1 if j % L == a and j < L * section[a] (L = number of sections) */
        const int64_t L = d->n_section;
        for (int64_t a = 1; a < L; a++)
            for (int64_t j = a; j < d->section[a] * L && j < half; j += L) axis[j] = (int)a;
        for (int64_t j = 0; j < half; j++) axis[j + half] = axis[j];
    } else if (d->n_section > 0) {
        /* contiguous chunks of the section sizes (twice) over the duplicated table, axes 0,1,2,0,1,2 */
        int64_t x = 0;
        for (int64_t c = 0; c < 2 * d->n_section; c++)
            for (int64_t k = 0; k < d->section[c % d->n_section] && x < D; k++) axis[x++] = (int)(c % 3);
    }
    for (int64_t r = 0; r < n; r++)
        for (int64_t x = 0; x < D; x++) {
            const float ang = (float)pos[axis[x] * n + r] * d->inv_freq[x % half];
            cos_out[r * D + x] = (float)cos((double)ang);
            sin_out[r * D + x] = (float)sin((double)ang);
        }
}

void q3_rope_table(const q3_decoder *d, int64_t start, int64_t n, float *cos_out, float *sin_out) {
    int64_t pos[3 * 64];
    for (int64_t b = 0; b < n; b += 64) {
        const int64_t m = n - b < 64 ? n - b : 64;
        for (int64_t a = 0; a < 3; a++)
            for (int64_t r = 0; r < m; r++) pos[a * m + r] = start + b + r;
        q3_mrope_table(d, pos, m, cos_out + b * d->head_dim, sin_out + b * d->head_dim);
    }
}

/* ------------------------------------------------------------------------------ decoder */
/* The products of a prefill (Q3_TILE_ROWS rows and more) of q8 matrices on the int8 GEMM tiles, their groups
 * packed as they go (vx_linear_q8t: ~2x vx_linear's GEMV-built q8 kernels at 60 rows on AVX512-VNNI), where
 * the path packs fast enough; the same arithmetic within 3e-7 (one float order of the same integer block
 * sums), and every row's bits independent of the others and of the thread count as before. A step's one
 * row stays on vx_linear; VOX_QWEN3_PREFILL=gemv keeps the prefill there too (for measuring). */
#define Q3_TILE_ROWS 16
static void linears(vx_pool *pool, int k, const vx_mat *const *w, const float *const *b, const float *x, int64_t n,
                    float *const *y) {
    const char *e = n >= Q3_TILE_ROWS ? getenv("VOX_QWEN3_PREFILL") : NULL;
    int tiled = n >= Q3_TILE_ROWS && vx_linear_q8t_fast() && !(e && !strcmp(e, "gemv"));
    for (int m = 0; m < k && tiled; m++) tiled = w[m]->dtype == VOX_DTYPE_Q8;
    if (!tiled) {   /* each output exactly vx_linear's (kernels.h) */
        vx_linear_multi(pool, k, w, b, x, n, y);
        return;
    }
    for (int m = 0; m < k; m++)
        if (vx_linear_q8t(pool, w[m], b ? b[m] : NULL, x, n, y[m]) != VOX_OK) vx_linear(pool, w[m], b ? b[m] : NULL, x, n, y[m]);
}

static void linear(vx_pool *pool, const vx_mat *w, const float *b, const float *x, int64_t n, float *y) {
    linears(pool, 1, &w, &b, x, n, &y);
}

void q3_decoder_forward(const q3_decoder *d, vx_pool *pool, q3_scratch *sc, q3_kv *kv, float *x, int64_t n,
                        const float *cos, const float *sin, float *out) {
    const int64_t H = d->hidden, hd = d->head_dim, hq = d->heads, hkv = d->kv_heads, past = kv->len;
    for (int64_t i = 0; i < d->n_layers; i++) {
        const q3_layer *L = &d->layers[i];
        float *kc = kv->k[i] + past * kv->row, *vc = kv->v[i] + past * kv->row;
        vx_rms_norm(x, L->in_norm, n, H, d->eps, sc->h);
        {
            const vx_mat *w[3] = {&L->q, &L->k, &L->v};
            const float *b[3] = {L->qb, L->kb, L->vb};
            float *y[3] = {sc->q, kc, vc};
            linears(pool, 3, w, b, sc->h, n, y);
        }
        /* q_norm / k_norm over each head, then the rotary embedding */
        vx_rms_norm(sc->q, L->q_norm, n * hq, hd, d->eps, sc->q);
        vx_rms_norm(kc, L->k_norm, n * hkv, hd, d->eps, kc);
        vx_rope(sc->q, n, hq, hd, cos, sin);
        vx_rope(kc, n, hkv, hd, cos, sin);
        vx_attention(pool, sc->q, n, hq, kv->k[i], kv->v[i], past + n, hkv, hd, d->scale, L->window, sc->a);
        linear(pool, &L->o, L->ob, sc->a, n, sc->t);
        vx_add(x, sc->t, n * H, x);
        vx_rms_norm(x, L->post_norm, n, H, d->eps, sc->h);
        {
            const vx_mat *w[2] = {&L->gate, &L->up};
            float *y[2] = {sc->g, sc->u};
            linears(pool, 2, w, NULL, sc->h, n, y);
        }
        vx_silu_mul(sc->g, sc->u, n * d->inter, sc->g);
        linear(pool, &L->down, NULL, sc->g, n, sc->t);
        vx_add(x, sc->t, n * H, x);
    }
    kv->len = past + n;
    vx_rms_norm(x, d->norm, n, H, d->eps, out);
}

/* ------------------------------------------------------------------------------ embeddings */
void q3_text_embed(const q3_lm *lm, vx_pool *pool, const int32_t *ids, int64_t n, float *work, float *out) {
    float *e = work, *f = work + n * lm->text_hidden;
    vx_gather_rows(&lm->text_emb, ids, n, e);
    vx_linear(pool, &lm->fc1, lm->fc1_b, e, n, f);
    vx_silu(f, n * lm->text_inter, f);
    vx_linear(pool, &lm->fc2, lm->fc2_b, f, n, out);
}

void q3_frame_embed(const q3_lm *lm, const int32_t *codes, float *tmp, float *out) {
    const int64_t H = lm->talker.hidden;
    vx_gather_rows(&lm->codec_emb, &codes[0], 1, out);
    for (int64_t g = 1; g < lm->n_groups; g++) {
        vx_gather_rows(&lm->pemb[g - 1], &codes[g], 1, tmp);
        vx_add(out, tmp, H, out);
    }
}
