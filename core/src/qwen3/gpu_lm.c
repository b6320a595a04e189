/* The Qwen3-TTS talker and code predictor on the GPU (see gpu_lm.h). */

#include <stdlib.h>
#include <string.h>

#include "../error.h"
#include "../vulkan/ops.h"
#include "gpu_lm.h"

typedef struct glayer {
    vx_gmat q, k, v, o, gate, up, down;
    vx_gmat qkv, gu;       /* q|k|v and gate|up stacked (one GEMV each) when their dtypes match; then
                              q, k, v / gate, up are not uploaded */
    int stacked_qkv, stacked_gu;
    vx_gbuf qb, kb, vb, ob, in_norm, post_norm, q_norm, k_norm;
    vx_gbuf qk_norm;       /* q_norm then k_norm in one buffer (attention_nr.comp reads both) */
    int has_qb, has_kb, has_vb, has_ob;
} glayer;

typedef struct gdec {
    const q3_decoder *d;
    glayer *layers;
    vx_gbuf norm;
} gdec;

struct vx_q3_gpu {
    vx_gpu *g;
    const q3_lm *lm;
    gdec talker, pred;
    vx_gmat codec_head, proj, *phead, *pemb;
    vx_gbuf proj_b;
    int has_proj_b;
};

/* KV cache of one decoder: per layer [cap][kv_heads * head_dim] keys and values. */
typedef struct gkv {
    int64_t cap;
    vx_gbuf *k, *v;
} gkv;

struct vx_q3_gsess {
    vx_q3_gpu *q;
    gkv tkv, pkv;
    int64_t rows;                          /* work rows (talker prefill chunk) */
    /* device work buffers, sized for the larger decoder */
    vx_gbuf x, h, qs, a, t, gt, u, xq, xd, last, ws, emb;
    vx_gbuf kr;                            /* the new rows' keys before their norm + RoPE (attention_nr) */
    vx_gbuf plog;                          /* a frame's predictor logits, [groups][pvocab] (device) */
    /* host-visible: inputs and results */
    vx_gbuf in, cs, sn, hid, logits, codes, us;
};

static int quantized(vox_dtype d) { return d == VOX_DTYPE_Q8 || d == VOX_DTYPE_Q4; }
static vx_gbind B(const vx_gbuf *b) { return (vx_gbind){b, 0, 0}; }
static vx_gbind BO(const vx_gbuf *b, int64_t float_offset) { return (vx_gbind){b, (uint64_t)float_offset * 4, 0}; }

/* ------------------------------------------------------------------------------ weights */
static const vx_mat *layer_mats(const q3_layer *L, int i) {
    const vx_mat *m[7] = {&L->q, &L->k, &L->v, &L->o, &L->gate, &L->up, &L->down};
    return m[i];
}

uint64_t vx_q3_gpu_bytes(const q3_lm *lm, int64_t *n_matrices) {
    uint64_t bytes = 0;
    int64_t n = 0;
    const q3_decoder *ds[2] = {&lm->talker, &lm->pred};
    for (int di = 0; di < 2; di++) {
        const q3_decoder *d = ds[di];
        for (int64_t l = 0; l < d->n_layers; l++)
            for (int i = 0; i < 7; i++, n++) bytes += vx_gmat_bytes(layer_mats(&d->layers[l], i));
        bytes += (uint64_t)d->n_layers * (uint64_t)(4 * d->hidden + 4 * d->head_dim + 2 * d->heads * d->head_dim) * 4;
    }
    bytes += vx_gmat_bytes(&lm->codec_head);
    n++;
    for (int64_t g = 0; g + 1 < lm->n_groups; g++, n += 2) bytes += vx_gmat_bytes(&lm->phead[g]) + vx_gmat_bytes(&lm->pemb[g]);
    if (lm->has_proj) {
        bytes += vx_gmat_bytes(&lm->proj);
        n++;
    }
    if (n_matrices) *n_matrices = n;
    return bytes;
}

static vox_status put_f32(vx_gpu *g, const float *src, int64_t n, vx_gbuf *out, int *has) {
    if (has) *has = src != NULL;
    if (!src) return vx_gpu_alloc(g, 16, 0, out);
    vox_status st = vx_gpu_alloc(g, (uint64_t)n * 4, 0, out);
    return st == VOX_OK ? vx_gpu_upload(g, out, 0, src, (uint64_t)n * 4) : st;
}

static void free_dec(vx_gpu *g, gdec *G) {
    if (G->layers)
        for (int64_t l = 0; l < G->d->n_layers; l++) {
            glayer *L = &G->layers[l];
            vx_gmat *m[9] = {&L->q, &L->k, &L->v, &L->o, &L->gate, &L->up, &L->down, &L->qkv, &L->gu};
            for (int i = 0; i < 9; i++) vx_gmat_free(g, m[i]);
            vx_gbuf *b[9] = {&L->qb, &L->kb, &L->vb, &L->ob, &L->in_norm, &L->post_norm, &L->q_norm, &L->k_norm, &L->qk_norm};
            for (int i = 0; i < 9; i++) vx_gpu_release(g, b[i]);
        }
    free(G->layers);
    vx_gpu_release(g, &G->norm);
    memset(G, 0, sizeof *G);
}

static vox_status load_dec(vx_gpu *g, const q3_decoder *d, gdec *G) {
    G->d = d;
    G->layers = calloc((size_t)d->n_layers, sizeof *G->layers);
    if (!G->layers) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    const int64_t qd = d->heads * d->head_dim, kd = d->kv_heads * d->head_dim;
    vox_status st = VOX_OK;
    for (int64_t l = 0; l < d->n_layers && st == VOX_OK; l++) {
        const q3_layer *S = &d->layers[l];
        glayer *L = &G->layers[l];
        /* q|k|v and gate|up contiguous in VRAM, each one GEMV, when they share dtype and columns */
        L->stacked_qkv = S->q.dtype == S->k.dtype && S->q.dtype == S->v.dtype && S->q.cols == S->k.cols &&
                         S->q.cols == S->v.cols;
        L->stacked_gu = S->gate.dtype == S->up.dtype && S->gate.cols == S->up.cols;
        if (L->stacked_qkv) {
            const vx_mat *m3[3] = {&S->q, &S->k, &S->v};
            const float *b3[3] = {S->qb, S->kb, S->vb};
            st = vx_gmat_upload_stack(g, m3, b3, 3, &L->qkv);
        }
        if (st == VOX_OK && L->stacked_gu) {
            const vx_mat *m2[2] = {&S->gate, &S->up};
            st = vx_gmat_upload_stack(g, m2, NULL, 2, &L->gu);
        }
        vx_gmat *m[7] = {&L->q, &L->k, &L->v, &L->o, &L->gate, &L->up, &L->down};
        for (int i = 0; i < 7 && st == VOX_OK; i++) {
            if ((i < 3 && L->stacked_qkv) || ((i == 4 || i == 5) && L->stacked_gu)) continue;
            st = vx_gmat_upload(g, layer_mats(S, i), m[i]);
        }
        if (st == VOX_OK) st = put_f32(g, S->qb, qd, &L->qb, &L->has_qb);
        if (st == VOX_OK) st = put_f32(g, S->kb, kd, &L->kb, &L->has_kb);
        if (st == VOX_OK) st = put_f32(g, S->vb, kd, &L->vb, &L->has_vb);
        if (st == VOX_OK) st = put_f32(g, S->ob, d->hidden, &L->ob, &L->has_ob);
        if (st == VOX_OK) st = put_f32(g, S->in_norm, d->hidden, &L->in_norm, NULL);
        if (st == VOX_OK) st = put_f32(g, S->post_norm, d->hidden, &L->post_norm, NULL);
        if (st == VOX_OK) st = put_f32(g, S->q_norm, d->head_dim, &L->q_norm, NULL);
        if (st == VOX_OK) st = put_f32(g, S->k_norm, d->head_dim, &L->k_norm, NULL);
        if (st == VOX_OK) {
            float *qk = malloc((size_t)(2 * d->head_dim) * sizeof *qk);
            if (!qk) st = vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
            if (qk) {
                memcpy(qk, S->q_norm, (size_t)d->head_dim * sizeof *qk);
                memcpy(qk + d->head_dim, S->k_norm, (size_t)d->head_dim * sizeof *qk);
                st = put_f32(g, qk, 2 * d->head_dim, &L->qk_norm, NULL);
                free(qk);
            }
        }
    }
    if (st == VOX_OK) st = put_f32(g, d->norm, d->hidden, &G->norm, NULL);
    return st;
}

void vx_q3_gpu_free(vx_q3_gpu *q) {
    if (!q) return;
    free_dec(q->g, &q->talker);
    free_dec(q->g, &q->pred);
    vx_gmat_free(q->g, &q->codec_head);
    vx_gmat_free(q->g, &q->proj);
    vx_gpu_release(q->g, &q->proj_b);
    if (q->phead)
        for (int64_t i = 0; i + 1 < q->lm->n_groups; i++) vx_gmat_free(q->g, &q->phead[i]);
    if (q->pemb)
        for (int64_t i = 0; i + 1 < q->lm->n_groups; i++) vx_gmat_free(q->g, &q->pemb[i]);
    free(q->phead);
    free(q->pemb);
    free(q);
}

vox_status vx_q3_gpu_load(vx_gpu *g, const q3_lm *lm, vx_q3_gpu **out) {
    *out = NULL;
    vx_q3_gpu *q = calloc(1, sizeof *q);
    if (!q) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    q->g = g;
    q->lm = lm;
    q->phead = calloc((size_t)(lm->n_groups > 1 ? lm->n_groups - 1 : 1), sizeof *q->phead);
    q->pemb = calloc((size_t)(lm->n_groups > 1 ? lm->n_groups - 1 : 1), sizeof *q->pemb);
    vox_status st = q->phead && q->pemb ? VOX_OK : vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    if (st == VOX_OK) st = load_dec(g, &lm->talker, &q->talker);
    if (st == VOX_OK) st = load_dec(g, &lm->pred, &q->pred);
    if (st == VOX_OK) st = vx_gmat_upload(g, &lm->codec_head, &q->codec_head);
    for (int64_t i = 0; i + 1 < lm->n_groups && st == VOX_OK; i++) st = vx_gmat_upload(g, &lm->phead[i], &q->phead[i]);
    for (int64_t i = 0; i + 1 < lm->n_groups && st == VOX_OK; i++) st = vx_gmat_upload(g, &lm->pemb[i], &q->pemb[i]);
    if (st == VOX_OK && lm->has_proj) st = vx_gmat_upload(g, &lm->proj, &q->proj);
    if (st == VOX_OK && lm->has_proj) st = put_f32(g, lm->proj_b, lm->pred.hidden, &q->proj_b, &q->has_proj_b);
    if (st != VOX_OK) {
        vx_q3_gpu_free(q);
        return st;
    }
    *out = q;
    return VOX_OK;
}

/* ------------------------------------------------------------------------------ sessions */
static void free_kv(vx_gpu *g, gkv *kv, int64_t layers) {
    for (int64_t l = 0; kv->k && l < layers; l++) vx_gpu_release(g, &kv->k[l]);
    for (int64_t l = 0; kv->v && l < layers; l++) vx_gpu_release(g, &kv->v[l]);
    free(kv->k);
    free(kv->v);
    memset(kv, 0, sizeof *kv);
}

/* Grow a cache to cap positions, copying the first `keep` positions (a chain of add ops is not needed:
 * the copy goes through the host, which only happens when a long utterance outgrows the reserve). */
static vox_status reserve_kv(vx_gpu *g, gkv *kv, const q3_decoder *d, int64_t cap, int64_t keep) {
    if (cap <= kv->cap) return VOX_OK;
    const uint64_t row = (uint64_t)(d->kv_heads * d->head_dim) * 4;
    if (!kv->k) {
        kv->k = calloc((size_t)d->n_layers, sizeof *kv->k);
        kv->v = calloc((size_t)d->n_layers, sizeof *kv->v);
        if (!kv->k || !kv->v) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    }
    float *tmp = keep ? malloc((size_t)keep * row) : NULL;
    if (keep && !tmp) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    vox_status st = VOX_OK;
    for (int64_t l = 0; l < d->n_layers && st == VOX_OK; l++) {
        vx_gbuf *bufs[2] = {&kv->k[l], &kv->v[l]};
        for (int j = 0; j < 2 && st == VOX_OK; j++) {
            vx_gbuf nb;
            if ((st = vx_gpu_alloc(g, (uint64_t)cap * row, 0, &nb)) != VOX_OK) break;
            if (keep && bufs[j]->buf) {
                st = vx_gpu_download(g, bufs[j], 0, tmp, (uint64_t)keep * row);
                if (st == VOX_OK) st = vx_gpu_upload(g, &nb, 0, tmp, (uint64_t)keep * row);
            }
            vx_gpu_release(g, bufs[j]);
            *bufs[j] = nb;
        }
    }
    free(tmp);
    if (st == VOX_OK) kv->cap = cap;
    return st;
}

void vx_q3_gsess_free(vx_q3_gsess *s) {
    if (!s) return;
    vx_gpu *g = s->q->g;
    free_kv(g, &s->tkv, s->q->lm->talker.n_layers);
    free_kv(g, &s->pkv, s->q->lm->pred.n_layers);
    vx_gpu_release(g, &s->plog);
    vx_gbuf *b[] = {&s->x, &s->h, &s->qs, &s->a, &s->t, &s->gt, &s->u, &s->xq, &s->xd, &s->last, &s->ws, &s->emb, &s->kr,
                    &s->in, &s->cs, &s->sn, &s->hid, &s->logits, &s->codes, &s->us};
    for (size_t i = 0; i < sizeof b / sizeof b[0]; i++) vx_gpu_release(g, b[i]);
    free(s);
}

static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

vox_status vx_q3_gsess_create(vx_q3_gpu *q, int64_t talker_cap, vx_q3_gsess **out) {
    *out = NULL;
    vx_q3_gsess *s = calloc(1, sizeof *s);
    if (!s) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    s->q = q;
    const q3_lm *lm = q->lm;
    const q3_decoder *T = &lm->talker, *P = &lm->pred;
    const int64_t R = Q3_CHUNK_ROWS;
    s->rows = R;
    const int64_t hid = max64(T->hidden, P->hidden), qd = max64(T->heads * T->head_dim, P->heads * P->head_dim),
                  inter = max64(T->inter, P->inter), hd = max64(T->head_dim, P->head_dim);
    const int64_t cols = max64(max64(hid, qd), inter);
    vx_gpu *g = q->g;
    vox_status st;
    if ((st = vx_gpu_alloc(g, (uint64_t)(R * hid) * 4, 0, &s->x)) || (st = vx_gpu_alloc(g, (uint64_t)(R * hid) * 4, 0, &s->h)) ||
        (st = vx_gpu_alloc(g, (uint64_t)(R * qd) * 4, 0, &s->qs)) ||
        (st = vx_gpu_alloc(g, (uint64_t)(VX_ATT_NR_MAX * max64(T->kv_heads * T->head_dim, P->kv_heads * P->head_dim)) * 4, 0,
                           &s->kr)) || (st = vx_gpu_alloc(g, (uint64_t)(R * qd) * 4, 0, &s->a)) ||
        (st = vx_gpu_alloc(g, (uint64_t)(R * hid) * 4, 0, &s->t)) ||
        (st = vx_gpu_alloc(g, (uint64_t)(R * inter) * 4, 0, &s->gt)) ||
        (st = vx_gpu_alloc(g, (uint64_t)(R * inter) * 4, 0, &s->u)) ||
        (st = vx_gpu_alloc(g, (uint64_t)(R * cols), 0, &s->xq)) ||
        (st = vx_gpu_alloc(g, (uint64_t)(R * cols / 32 + 1) * 4, 0, &s->xd)) ||
        (st = vx_gpu_alloc(g, (uint64_t)hid * 4, 0, &s->last)) ||
        (st = vx_gpu_alloc(g, (uint64_t)(R * max64(T->hidden, 2 * lm->talker.hidden)) * 4, 1, &s->in)) ||
        (st = vx_gpu_alloc(g, (uint64_t)(R * hd) * 4, 1, &s->cs)) || (st = vx_gpu_alloc(g, (uint64_t)(R * hd) * 4, 1, &s->sn)) ||
        (st = vx_gpu_alloc(g, (uint64_t)hid * 4, 1, &s->hid)) ||
        (st = vx_gpu_alloc(g, (uint64_t)max64(lm->vocab, lm->pvocab) * 4, 1, &s->logits)) ||
        (st = vx_gpu_alloc(g, (uint64_t)lm->pvocab * 4, 0, &s->ws)) ||
        (st = vx_gpu_alloc(g, (uint64_t)lm->talker.hidden * 4, 0, &s->emb)) ||
        (st = vx_gpu_alloc(g, (uint64_t)(lm->n_groups + 1) * 4, 1, &s->codes)) ||
        (st = vx_gpu_alloc(g, (uint64_t)(lm->n_groups + 1) * 4, 1, &s->us)) ||
        (st = vx_gpu_alloc(g, (uint64_t)(lm->n_groups * lm->pvocab) * 4, 0, &s->plog)) ||
        (st = reserve_kv(g, &s->pkv, P, lm->n_groups + 1, 0)) || (st = vx_q3_gsess_reserve(s, talker_cap))) {
        vx_q3_gsess_free(s);
        return st;
    }
    *out = s;
    return VOX_OK;
}

int64_t vx_q3_gsess_cap(const vx_q3_gsess *s) { return s->tkv.cap; }

vox_status vx_q3_gsess_reserve(vx_q3_gsess *s, int64_t cap) {
    const q3_lm *lm = s->q->lm;
    int64_t keep = s->tkv.cap;   /* callers grow between steps: every position so far is kept */
    return reserve_kv(s->q->g, &s->tkv, &lm->talker, cap, keep);
}

/* ------------------------------------------------------------------------------ forward */
/* A linear layer, with a GEMV prologue (pro != NULL: the op before it fused into its loads) or not. */
static vox_status linear_acc(vx_q3_gsess *s, const vx_gmat *w, const vx_gbuf *bias, int has_bias, const vx_gpro *pro,
                             vx_gbind x, int64_t n, vx_gbind y, int accumulate, const char *label) {
    vx_gbind b = bias ? B(bias) : B(&s->x);
    if (pro) return vx_gop_linear_pro(s->q->g, w, has_bias ? &b : NULL, pro, x, n, y, 0, accumulate, label);
    return vx_gop_linear(s->q->g, w, has_bias ? &b : NULL, x, B(&s->xq), B(&s->xd), n, y, 0, accumulate, label);
}
static vox_status linear(vx_q3_gsess *s, const vx_gmat *w, const vx_gbuf *bias, int has_bias, vx_gbind x, int64_t n,
                         vx_gbind y, const char *label) {
    return linear_acc(s, w, bias, has_bias, NULL, x, n, y, 0, label);
}

static vox_status quantize_for(vx_q3_gsess *s, const vx_gmat *w, vx_gbind x, int64_t n, const char *label) {
    return quantized(w->dtype) ? vx_gop_quantize(s->q->g, x, n, w->cols, B(&s->xq), B(&s->xd), label) : VOX_OK;
}

/* Whether the RMSNorm before these k matrices can be the GEMV prologue of every one of them (f32/f16/
 * bf16 weights, n rows on the GEMV): then it takes no dispatch of its own and h is not written. */
static int norm_fuses(vx_q3_gsess *s, const vx_gmat *const *m, int k, int64_t n) {
    for (int i = 0; i < k; i++)
        if (!vx_gop_linear_pro_ok(s->q->g, m[i], n)) return 0;
    return 1;
}

/* The RMSNorm (weights w) of x's n rows feeding the k matrices m: nothing when they fuse it (returns the
 * prologue to give them and x as their input), else into h (with the activation codes when the first
 * is quantized; h is their input). */
static vox_status norm_for(vx_q3_gsess *s, const q3_decoder *d, vx_gbind w, const vx_gmat *const *m, int k, int64_t n,
                           vx_gpro *pro, const vx_gpro **use, vx_gbind *in, const char *stage) {
    vx_gpu *g = s->q->g;
    if (norm_fuses(s, m, k, n)) {
        *pro = (vx_gpro){VX_PRO_RMS_NORM, w, d->eps};
        *use = pro;
        *in = B(&s->x);
        return VOX_OK;
    }
    *use = NULL;
    *in = B(&s->h);
    return quantized(m[0]->dtype) && m[0]->cols % 32 == 0
               ? vx_gop_rms_norm_q8(g, B(&s->x), &w, n, d->hidden, d->eps, B(&s->h), B(&s->xq), B(&s->xd), stage)
               : vx_gop_rms_norm(g, B(&s->x), &w, n, d->hidden, d->eps, B(&s->h), stage);
}

/* q3_decoder_forward on the GPU without the final norm: x (device, [n][hidden]) at positions pos..
 * A layer of up to 4 rows with f32/f16/bf16 weights is 5 dispatches: q|k|v (the input norm as its
 * prologue), attention (with the q and k norm + RoPE), o (+ residual), gate|up (the post norm as its
 * prologue), down (the SiLU gate as its prologue, + residual). q8/q4 weights: 9 (their norms make the
 * activation codes, the SiLU gate's codes in one pass, the attention output's codes). Beyond 4 rows
 * (prefill) the q and k norm + RoPE is one dispatch before the attention; beyond the GEMV's rows, the
 * norms and the SiLU gate are dispatches too. Every variant computes the same bits. */
static vox_status decoder(vx_q3_gsess *s, const gdec *G, gkv *kv, int64_t n, int64_t pos, vx_gbind cos, vx_gbind sin,
                          const char *stage) {
    vx_gpu *g = s->q->g;
    const q3_decoder *d = G->d;
    const int64_t hd = d->head_dim, hq = d->heads, hkv = d->kv_heads, row = hkv * hd;
    /* buffers are never replaced inside a chain (earlier dispatches hold them): sized between chains */
    vox_status st = VOX_OK;
    for (int64_t i = 0; i < d->n_layers && st == VOX_OK; i++) {
        const glayer *L = &G->layers[i];
        vx_gbind kc = BO(&kv->k[i], pos * row), vc = BO(&kv->v[i], pos * row);
        /* up to VX_ATT_NR_MAX rows: the q and k norm + RoPE inside the attention, the new keys through kr */
        const int att_nr = n <= VX_ATT_NR_MAX;
        vx_gbind kn = att_nr ? B(&s->kr) : kc;
        vx_gbind ln = B(&L->in_norm), lp = B(&L->post_norm), lq = B(&L->q_norm), lk = B(&L->k_norm);
        vx_gpro pro;
        const vx_gpro *use;
        vx_gbind in;
        if (L->stacked_qkv) {
            const vx_gmat *m[1] = {&L->qkv};
            vx_gbind ys[3] = {B(&s->qs), kn, vc};
            st = norm_for(s, d, ln, m, 1, n, &pro, &use, &in, stage);
            if (st == VOX_OK)
                st = use ? vx_gop_linear_stack_pro(g, &L->qkv, use, in, n, ys, stage)
                         : vx_gop_linear_stack(g, &L->qkv, in, B(&s->xq), B(&s->xd), n, ys, stage);
        } else {
            const vx_gmat *m[3] = {&L->q, &L->k, &L->v};
            st = norm_for(s, d, ln, m, 3, n, &pro, &use, &in, stage);
            if (st == VOX_OK && !use) {   /* activation codes per dtype (q, k, v may differ) */
                int codes = quantized(L->q.dtype) && L->q.cols % 32 == 0;   /* norm_for made them */
                if (!codes) st = quantize_for(s, &L->q, in, n, stage);
                if (st == VOX_OK && !quantized(L->q.dtype)) st = quantize_for(s, &L->k, in, n, stage);
                if (st == VOX_OK && !quantized(L->q.dtype) && !quantized(L->k.dtype)) st = quantize_for(s, &L->v, in, n, stage);
            }
            if (st == VOX_OK) st = linear_acc(s, &L->q, &L->qb, L->has_qb, use, in, n, B(&s->qs), 0, stage);
            if (st == VOX_OK) st = linear_acc(s, &L->k, &L->kb, L->has_kb, use, in, n, kn, 0, stage);
            if (st == VOX_OK) st = linear_acc(s, &L->v, &L->vb, L->has_vb, use, in, n, vc, 0, stage);
        }
        if (st == VOX_OK && att_nr)
            st = vx_gop_attention_nr(g, B(&s->qs), n, hq, B(&kv->k[i]), B(&kv->v[i]), pos + n, hkv, hd, d->scale,
                                     d->layers[i].window, B(&s->a), B(&s->kr), B(&L->qk_norm), d->eps, cos, sin, stage);
        if (st == VOX_OK && !att_nr)
            st = vx_gop_norm_rope_qk(g, B(&s->qs), lq, hq, kc, lk, hkv, n, hd, d->eps, cos, sin, stage);
        if (st == VOX_OK && !att_nr)
            st = vx_gop_attention(g, B(&s->qs), n, hq, B(&kv->k[i]), B(&kv->v[i]), pos + n, hkv, hd, d->scale,
                                  d->layers[i].window, B(&s->a), stage);
        if (st == VOX_OK) st = quantize_for(s, &L->o, B(&s->a), n, stage);
        if (st == VOX_OK) st = linear_acc(s, &L->o, &L->ob, L->has_ob, NULL, B(&s->a), n, B(&s->x), 1, stage);
        if (L->stacked_gu) {
            const vx_gmat *m[1] = {&L->gu};
            vx_gbind ys[2] = {B(&s->gt), B(&s->u)};
            if (st == VOX_OK) st = norm_for(s, d, lp, m, 1, n, &pro, &use, &in, stage);
            if (st == VOX_OK)
                st = use ? vx_gop_linear_stack_pro(g, &L->gu, use, in, n, ys, stage)
                         : vx_gop_linear_stack(g, &L->gu, in, B(&s->xq), B(&s->xd), n, ys, stage);
        } else {
            const vx_gmat *m[2] = {&L->gate, &L->up};
            if (st == VOX_OK) st = norm_for(s, d, lp, m, 2, n, &pro, &use, &in, stage);
            if (st == VOX_OK && !use) {
                int codes = quantized(L->gate.dtype) && L->gate.cols % 32 == 0;
                if (!codes) st = quantize_for(s, &L->gate, in, n, stage);
                if (st == VOX_OK && !quantized(L->gate.dtype)) st = quantize_for(s, &L->up, in, n, stage);
            }
            if (st == VOX_OK) st = linear_acc(s, &L->gate, NULL, 0, use, in, n, B(&s->gt), 0, stage);
            if (st == VOX_OK) st = linear_acc(s, &L->up, NULL, 0, use, in, n, B(&s->u), 0, stage);
        }
        if (vx_gop_linear_pro_ok(g, &L->down, n)) {   /* silu(gate) * up as the down projection loads it */
            vx_gpro silu = {VX_PRO_SILU_MUL, B(&s->u), 0};
            if (st == VOX_OK) st = linear_acc(s, &L->down, NULL, 0, &silu, B(&s->gt), n, B(&s->x), 1, stage);
        } else if (quantized(L->down.dtype)) {   /* the codes of silu(gate) * up in one pass */
            if (st == VOX_OK)
                st = vx_gop_quantize_silu(g, B(&s->gt), B(&s->u), n, L->down.cols, B(&s->xq), B(&s->xd), stage);
            if (st == VOX_OK) st = linear_acc(s, &L->down, NULL, 0, NULL, B(&s->gt), n, B(&s->x), 1, stage);
        } else {
            if (st == VOX_OK) st = vx_gop_silu_mul(g, B(&s->gt), B(&s->u), n * d->inter, B(&s->gt), stage);
            if (st == VOX_OK) st = linear_acc(s, &L->down, NULL, 0, NULL, B(&s->gt), n, B(&s->x), 1, stage);
        }
    }
    return st;
}

/* The final norm of x's row `row` and a head on it, into out: the norm as the head's GEMV prologue, or
 * its own dispatch (with the activation codes for a q8/q4 head) into `normed` (NULL: `last`). With
 * `normed` given (the talker's hidden state for the host) the norm is written there in any case. */
static vox_status norm_head(vx_q3_gsess *s, const gdec *G, int64_t row, const vx_gmat *w, vx_gbind out,
                            const vx_gbuf *normed, const char *label) {
    vx_gpu *g = s->q->g;
    const q3_decoder *d = G->d;
    vx_gbind x = BO(&s->x, row * d->hidden), fn = B(&G->norm), y = B(normed ? normed : &s->last);
    if (vx_gop_linear_pro_ok(g, w, 1)) {
        vx_gpro pro = {VX_PRO_RMS_NORM, fn, d->eps};
        vox_status st = normed ? vx_gop_rms_norm(g, x, &fn, 1, d->hidden, d->eps, y, label) : VOX_OK;
        return st == VOX_OK ? linear_acc(s, w, NULL, 0, &pro, x, 1, out, 0, label) : st;
    }
    int codes = quantized(w->dtype) && w->cols % 32 == 0;
    vox_status st = codes ? vx_gop_rms_norm_q8(g, x, &fn, 1, d->hidden, d->eps, y, B(&s->xq), B(&s->xd), label)
                          : vx_gop_rms_norm(g, x, &fn, 1, d->hidden, d->eps, y, label);
    if (st == VOX_OK && !codes) st = quantize_for(s, w, y, 1, label);
    return st == VOX_OK ? linear(s, w, NULL, 0, y, 1, out, label) : st;
}

/* The predictor's input rows (talker width, in `src`) into the residual stream x: projected when the
 * predictor is narrower. device: src is device-local (the projection reads it directly; from host-visible
 * memory it is copied first, since every workgroup of the GEMV reads it); src == x: already there. */
static vox_status pred_input(vx_q3_gsess *s, vx_gbind src, int64_t n, int device) {
    const q3_lm *lm = s->q->lm;
    const int64_t H = lm->talker.hidden;
    vx_gpu *g = s->q->g;
    if (!lm->has_proj)
        return src.b == &s->x && src.offset == 0 ? VOX_OK : vx_gop_copy(g, src, n * H, B(&s->x), "predictor/input");
    vox_status st = VOX_OK;
    if (!device) {
        st = vx_gop_copy(g, src, n * H, B(&s->h), "predictor/input");
        src = B(&s->h);
    }
    if (st == VOX_OK) st = quantize_for(s, &s->q->proj, src, n, "predictor/projection");
    if (st == VOX_OK)
        st = linear(s, &s->q->proj, &s->q->proj_b, s->q->has_proj_b, src, n, B(&s->x), "predictor/projection");
    return st;
}

vox_status vx_q3_talker(vx_q3_gsess *s, const float *x, int64_t n, int64_t pos, const float *cos, const float *sin,
                        float *hidden, float *logits) {
    const q3_lm *lm = s->q->lm;
    const int64_t H = lm->talker.hidden, hd = lm->talker.head_dim;
    if (n < 1 || n > s->rows || pos + n > s->tkv.cap)
        return vox_set_error(VOX_ERR_INTERNAL, "vx_q3_talker: %lld rows at %lld (cache %lld)", (long long)n,
                             (long long)pos, (long long)s->tkv.cap);
    vx_gpu *g = s->q->g;
    memcpy(s->in.map, x, (size_t)(n * H) * 4);
    memcpy(s->cs.map, cos, (size_t)(n * hd) * 4);
    memcpy(s->sn.map, sin, (size_t)(n * hd) * 4);
    vox_status st = vx_gpu_begin(g);
    if (st != VOX_OK) return st;
    st = vx_gop_copy(g, B(&s->in), n * H, B(&s->x), "talker/input");
    if (st == VOX_OK) st = decoder(s, &s->q->talker, &s->tkv, n, pos, B(&s->cs), B(&s->sn), "talker");
    /* the final norm goes straight to the host (hid); the head reads x (its prologue) beside it */
    if (st == VOX_OK && logits)
        st = norm_head(s, &s->q->talker, n - 1, &s->q->codec_head, B(&s->logits), &s->hid, "talker/codec_head");
    vox_status sub = vx_gpu_submit(g);
    if (st == VOX_OK) st = sub;
    if (st != VOX_OK || !logits) return st;
    memcpy(hidden, s->hid.map, (size_t)H * 4);
    memcpy(logits, s->logits.map, (size_t)lm->vocab * 4);
    return VOX_OK;
}

vox_status vx_q3_predictor(vx_q3_gsess *s, const float *pin, int64_t n, int64_t pos, int64_t head_index, float *logits) {
    const q3_lm *lm = s->q->lm;
    const int64_t H = lm->talker.hidden, hd = lm->pred.head_dim;
    if (n < 1 || n > 2 || pos + n > s->pkv.cap || head_index < 0 || head_index + 1 >= lm->n_groups)
        return vox_set_error(VOX_ERR_INTERNAL, "vx_q3_predictor: %lld rows at %lld, head %lld", (long long)n,
                             (long long)pos, (long long)head_index);
    vx_gpu *g = s->q->g;
    memcpy(s->in.map, pin, (size_t)(n * H) * 4);
    memcpy(s->cs.map, lm->pred_cos + pos * hd, (size_t)(n * hd) * 4);
    memcpy(s->sn.map, lm->pred_sin + pos * hd, (size_t)(n * hd) * 4);
    vox_status st = vx_gpu_begin(g);
    if (st != VOX_OK) return st;
    st = pred_input(s, B(&s->in), n, 0);
    if (st == VOX_OK) st = decoder(s, &s->q->pred, &s->pkv, n, pos, B(&s->cs), B(&s->sn), "predictor");
    if (st == VOX_OK) st = norm_head(s, &s->q->pred, n - 1, &s->q->phead[head_index], B(&s->logits), NULL, "predictor/head");
    vox_status sub = vx_gpu_submit(g);
    if (st == VOX_OK) st = sub;
    if (st != VOX_OK) return st;
    memcpy(logits, s->logits.map, (size_t)lm->pvocab * 4);
    return VOX_OK;
}

vox_status vx_q3_predict_frame(vx_q3_gsess *s, const float *pin, const vx_gsampler *sp, const float *u,
                               int32_t *codes) {
    const q3_lm *lm = s->q->lm;
    const int64_t H = lm->talker.hidden, hd = lm->pred.head_dim, G = lm->n_groups, PV = lm->pvocab;
    vx_gpu *g = s->q->g;
    memcpy(s->in.map, pin, (size_t)(2 * H) * 4);
    memcpy(s->cs.map, lm->pred_cos, (size_t)(G * hd) * 4);   /* positions 0 .. G-1 */
    memcpy(s->sn.map, lm->pred_sin, (size_t)(G * hd) * 4);
    memcpy(s->us.map, u, (size_t)(G - 1) * 4);
    vox_status st = vx_gpu_begin(g);
    if (st != VOX_OK) return st;
    for (int64_t k = 1; k < G && st == VOX_OK; k++) {
        const int64_t n = k == 1 ? 2 : 1, pos = k == 1 ? 0 : k;
        /* group k's input: [hidden; emb0] from the host, then the embedding of code k-1, gathered on
         * the GPU at the end of the previous group */
        vx_gbind emb = B(lm->has_proj ? &s->emb : &s->x);   /* the gather's output (below) */
        st = pred_input(s, k == 1 ? B(&s->in) : emb, n, k > 1);
        if (st == VOX_OK)
            st = decoder(s, &s->q->pred, &s->pkv, n, pos, BO(&s->cs, pos * hd), BO(&s->sn, pos * hd), "predictor");
        vx_gbind lg = BO(&s->plog, (k - 1) * PV);
        if (st == VOX_OK) st = norm_head(s, &s->q->pred, n - 1, &s->q->phead[k - 1], lg, NULL, "predictor/head");
        /* the code, and (but for the last group) its embedding: the next group's input */
        if (st == VOX_OK && k + 1 < G && s->q->pemb[k - 1].n_parts == 1)
            st = vx_gop_sample_gather(g, lg, PV, sp, B(&s->ws), B(&s->codes), B(&s->us), (int)(k - 1), &s->q->pemb[k - 1],
                                      emb, "predictor/sample");
        else if (st == VOX_OK) {
            st = vx_gop_sample(g, lg, PV, sp, B(&s->ws), B(&s->codes), B(&s->us), (int)(k - 1), "predictor/sample");
            if (st == VOX_OK && k + 1 < G)
                st = vx_gop_gather(g, &s->q->pemb[k - 1], B(&s->codes), (int)(k - 1), emb, "predictor/embed");
        }
    }
    vox_status sub = vx_gpu_submit(g);
    if (st == VOX_OK) st = sub;
    if (st != VOX_OK) return st;
    memcpy(codes + 1, s->codes.map, (size_t)(G - 1) * 4);
    return VOX_OK;
}
