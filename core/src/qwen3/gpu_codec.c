/* The codec decoder on the GPU (see gpu_codec.h); the order of the steps is codec_stream.c's. */

#include "gpu_codec.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../error.h"
#include "../tmod.h"
#include "../vulkan/ops_codec.h"

#define SUB 16   /* frames per sub-chunk (bounds the work buffers; any chunking gives the same audio) */
#define PART_FLOATS ((int64_t)4 << 20)   /* split-K scratch bound (16 MiB): 4-frame chunks of the 12 Hz codec fit */

static const int64_t DIL[Q3_CODEC_UNITS] = {1, 3, 9};

static int64_t imax(int64_t a, int64_t b) { return a > b ? a : b; }
static int64_t imin(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t r16(int64_t n) { return (n + 15) & ~(int64_t)15; }

typedef struct gw {      /* a weight in its .tmod dtype (f32, bf16, f16) and its float32 bias, in VRAM */
    vx_gbuf w, b;
    int has_b;
    vox_dtype dt;
    int f16_exact;       /* a 16-bit weight exact in float16: the tiled GEMM may use cooperative matrices */
} gw;
typedef struct gsnake {
    vx_gbuf a, ib;
} gsnake;

typedef struct glayer {
    vx_gbuf in_norm, post_norm, attn_scale, mlp_scale;
    gw q, k, v, o, gate, up, down;
    gw qkv, gu;              /* q|k|v and gate|up stacked by rows (one GEMM each) when their dtypes match;
                                then q, k, v / gate, up are not uploaded */
    int stacked_qkv, stacked_gu;
} glayer;

struct vx_codec_gpu {
    vx_gpu *g;
    const q3_codec *c;
    vx_gbuf cb;                          /* [n_q][size][half], divided by usage */
    gw proj_first, proj_rest, pre_conv, in_proj, out_proj;
    vx_gbuf norm;
    glayer *layers;
    struct {
        gw up, pw1, pw2;
        vx_gbuf dw_w, dw_b, ln_w, ln_b, gamma;
    } up[Q3_CODEC_MAX_UP];
    gw dec0, final_conv;
    struct {
        gsnake act, act1[Q3_CODEC_UNITS], act2[Q3_CODEC_UNITS];
        gw up, conv1[Q3_CODEC_UNITS], conv2[Q3_CODEC_UNITS];
    } blocks[Q3_CODEC_MAX_BLOCKS];
    gsnake final_act;
};

struct vx_codec_gstream {
    vx_codec_gpu *q;
    int64_t pos;
    size_t lat_n, voc_n;
    vx_gbuf state;                       /* lat_state then voc_state, codec_stream.c's layout */
    int64_t pre_ctx, k_ring, v_ring, dw_ctx[Q3_CODEC_MAX_UP], dec0_ctx, tail[Q3_CODEC_MAX_BLOCKS],
        unit_ctx[Q3_CODEC_MAX_BLOCKS][Q3_CODEC_UNITS], final_ctx;   /* float offsets in state */
    /* work (device) */
    vx_gbuf qf, qr, pb, P, lat0, x, h, qs, kc, vc, att, gt, u, sig, act, tmp, tmp2;
    vx_gbuf part;                        /* split-K partial sums of the tiled GEMM (ops_codec.h) */
    /* host-visible: codes, RoPE tables, PCM of one chain */
    vx_gbuf codes, cs, sn, pcm;
};

/* ------------------------------------------------------------------------------ weights */
static uint64_t w_bytes(const vx_mat *m) {
    return (uint64_t)r16(m->rows * m->cols) * (m->dtype == VOX_DTYPE_F32 ? 4 : 2);
}

uint64_t vx_codec_gpu_bytes(const q3_codec *c, int64_t *n_matrices) {
    uint64_t b = 0;
    int64_t n = 0;
#define M(mat) (b += w_bytes(&(mat)), n++)
    b += (uint64_t)(c->n_q * c->codebook_size * (c->codebook_dim / 2)) * 4;
    n += c->n_q;
    M(c->proj_first), M(c->proj_rest), M(c->pre_conv.w), M(c->in_proj), M(c->out_proj);
    for (int64_t l = 0; l < c->n_layers; l++) {
        const q3_codec_layer *y = &c->layers[l];
        M(y->q), M(y->k), M(y->v), M(y->o), M(y->gate), M(y->up), M(y->down);
    }
    for (int64_t i = 0; i < c->n_up; i++) M(c->up[i].up.w), M(c->up[i].pw1), M(c->up[i].pw2);
    M(c->dec0.w), M(c->final_conv.w);
    for (int64_t k = 0; k < c->n_blocks; k++) {
        M(c->blocks[k].up.w);
        for (int u = 0; u < Q3_CODEC_UNITS; u++) M(c->blocks[k].conv1[u].w), M(c->blocks[k].conv2[u].w);
    }
#undef M
    if (n_matrices) *n_matrices = n;
    return b + (uint64_t)(64 * c->decoder_dim) * 4;   /* vectors: biases, norms, snake parameters (a bound) */
}

static vox_status put(vx_gpu *g, const float *src, int64_t n, vx_gbuf *out) {
    if (!src) return vx_gpu_alloc(g, 16, 0, out);
    if ((uint64_t)n * 4 > vx_gpu_max_range(g))
        return vox_set_error(VOX_ERR_UNSUPPORTED, "a codec tensor of %lld floats exceeds the device's storage buffer "
                             "range (%llu bytes)", (long long)n, (unsigned long long)vx_gpu_max_range(g));
    vox_status st = vx_gpu_alloc(g, (uint64_t)n * 4, 0, out);
    return st == VOX_OK ? vx_gpu_upload(g, out, 0, src, (uint64_t)n * 4) : st;
}

/* m (f32/f16/bf16) in VRAM as stored (the shaders widen 16-bit values exactly). */
static vox_status put_mat(vx_gpu *g, const vx_mat *m, const float *bias, int64_t nb, gw *out) {
    if (m->dtype != VOX_DTYPE_F32 && m->dtype != VOX_DTYPE_BF16 && m->dtype != VOX_DTYPE_F16)
        return vox_set_error(VOX_ERR_UNSUPPORTED, "codec weights of dtype %s on the GPU", vox_dtype_name(m->dtype));
    const uint64_t bytes = (uint64_t)(m->rows * m->cols) * (m->dtype == VOX_DTYPE_F32 ? 4 : 2);
    if (bytes > vx_gpu_max_range(g))
        return vox_set_error(VOX_ERR_UNSUPPORTED, "a codec weight of %llu bytes exceeds the device's storage buffer "
                             "range (%llu bytes)", (unsigned long long)bytes, (unsigned long long)vx_gpu_max_range(g));
    out->dt = m->dtype;
    out->f16_exact = vx_codec_f16_exact(m->dtype, m->data, m->rows * m->cols);
    vox_status st = vx_gpu_alloc(g, bytes, 0, &out->w);
    if (st == VOX_OK) st = vx_gpu_upload(g, &out->w, 0, m->data, bytes);
    out->has_b = bias != NULL;
    if (st == VOX_OK) st = put(g, bias, nb, &out->b);
    return st;
}

/* Matrices of one dtype and width stacked by rows into one weight (no bias). */
static vox_status put_stack(vx_gpu *g, const vx_mat *const *m, int n, gw *out) {
    const uint64_t es = m[0]->dtype == VOX_DTYPE_F32 ? 4 : 2;
    uint64_t bytes = 0;
    for (int i = 0; i < n; i++) bytes += (uint64_t)(m[i]->rows * m[i]->cols) * es;
    if (bytes > vx_gpu_max_range(g))
        return vox_set_error(VOX_ERR_UNSUPPORTED, "a codec weight of %llu bytes exceeds the device's storage buffer "
                             "range (%llu bytes)", (unsigned long long)bytes, (unsigned long long)vx_gpu_max_range(g));
    out->dt = m[0]->dtype;
    out->has_b = 0;
    vox_status st = vx_gpu_alloc(g, bytes, 0, &out->w);
    uint64_t off = 0;
    for (int i = 0; i < n && st == VOX_OK; i++) {
        const uint64_t b = (uint64_t)(m[i]->rows * m[i]->cols) * es;
        st = vx_gpu_upload(g, &out->w, off, m[i]->data, b);
        off += b;
    }
    if (st == VOX_OK) st = put(g, NULL, 0, &out->b);
    return st;
}

static int stackable(const vx_mat *const *m, int n) {
    for (int i = 1; i < n; i++)
        if (m[i]->dtype != m[0]->dtype || m[i]->cols != m[0]->cols) return 0;
    return 1;
}

static vox_status put_snake(vx_gpu *g, const q3_snake *s, gsnake *out) {
    vox_status st = put(g, s->alpha, s->c, &out->a);
    return st == VOX_OK ? put(g, s->inv_beta, s->c, &out->ib) : st;
}

static void free_gw(vx_gpu *g, gw *w) {
    vx_gpu_release(g, &w->w);
    vx_gpu_release(g, &w->b);
}

void vx_codec_gpu_free(vx_codec_gpu *q) {
    if (!q) return;
    vx_gpu *g = q->g;
    const q3_codec *c = q->c;
    vx_gpu_release(g, &q->cb);
    free_gw(g, &q->proj_first), free_gw(g, &q->proj_rest), free_gw(g, &q->pre_conv), free_gw(g, &q->in_proj);
    free_gw(g, &q->out_proj);
    vx_gpu_release(g, &q->norm);
    if (q->layers)
        for (int64_t l = 0; l < c->n_layers; l++) {
            glayer *y = &q->layers[l];
            vx_gbuf *v[4] = {&y->in_norm, &y->post_norm, &y->attn_scale, &y->mlp_scale};
            for (int i = 0; i < 4; i++) vx_gpu_release(g, v[i]);
            gw *w[9] = {&y->q, &y->k, &y->v, &y->o, &y->gate, &y->up, &y->down, &y->qkv, &y->gu};
            for (int i = 0; i < 9; i++) free_gw(g, w[i]);
        }
    free(q->layers);
    for (int i = 0; i < Q3_CODEC_MAX_UP; i++) {
        free_gw(g, &q->up[i].up), free_gw(g, &q->up[i].pw1), free_gw(g, &q->up[i].pw2);
        vx_gbuf *v[5] = {&q->up[i].dw_w, &q->up[i].dw_b, &q->up[i].ln_w, &q->up[i].ln_b, &q->up[i].gamma};
        for (int j = 0; j < 5; j++) vx_gpu_release(g, v[j]);
    }
    free_gw(g, &q->dec0), free_gw(g, &q->final_conv);
    for (int b = 0; b < Q3_CODEC_MAX_BLOCKS; b++) {
        vx_gpu_release(g, &q->blocks[b].act.a), vx_gpu_release(g, &q->blocks[b].act.ib);
        free_gw(g, &q->blocks[b].up);
        for (int u = 0; u < Q3_CODEC_UNITS; u++) {
            vx_gpu_release(g, &q->blocks[b].act1[u].a), vx_gpu_release(g, &q->blocks[b].act1[u].ib);
            vx_gpu_release(g, &q->blocks[b].act2[u].a), vx_gpu_release(g, &q->blocks[b].act2[u].ib);
            free_gw(g, &q->blocks[b].conv1[u]), free_gw(g, &q->blocks[b].conv2[u]);
        }
    }
    vx_gpu_release(g, &q->final_act.a), vx_gpu_release(g, &q->final_act.ib);
    free(q);
}

static vox_status load_codebooks(vx_codec_gpu *q) {
    const q3_codec *c = q->c;
    const int64_t size = c->codebook_size, half = c->codebook_dim / 2, n = c->n_q * size * half;
    float *f = malloc((size_t)n * sizeof *f);
    int32_t *ids = malloc((size_t)size * sizeof *ids);
    vox_status st = VOX_OK;
    if (!f || !ids) st = vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    for (int64_t r = 0; st == VOX_OK && r < size; r++) ids[r] = (int32_t)r;
    for (int64_t gq = 0; st == VOX_OK && gq < c->n_q; gq++) {
        float *t = f + gq * size * half;
        vx_gather_rows(&c->cb_sum[gq], ids, size, t);
        for (int64_t i = 0; i < size; i++) {   /* the CPU's division, once: the same bits */
            const float us = c->cb_usage[gq][i], den = us > 1e-5f ? us : 1e-5f;
            for (int64_t j = 0; j < half; j++) t[i * half + j] = t[i * half + j] / den;
        }
    }
    if (st == VOX_OK) st = put(q->g, f, n, &q->cb);
    free(f);
    free(ids);
    return st;
}

vox_status vx_codec_gpu_load(vx_gpu *g, const q3_codec *c, vx_codec_gpu **out) {
    *out = NULL;
    vx_codec_gpu *q = calloc(1, sizeof *q);
    if (!q) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    q->g = g;
    q->c = c;
    q->layers = calloc((size_t)c->n_layers, sizeof *q->layers);
    vox_status st = q->layers ? load_codebooks(q) : vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    const int64_t H = c->hidden, L = c->latent;
#define TRY(e) if (st == VOX_OK) st = (e)
    TRY(put_mat(g, &c->proj_first, NULL, 0, &q->proj_first));
    TRY(put_mat(g, &c->proj_rest, NULL, 0, &q->proj_rest));
    TRY(put_mat(g, &c->pre_conv.w, c->pre_conv.b, c->pre_conv.c_out, &q->pre_conv));
    TRY(put_mat(g, &c->in_proj, c->in_proj_b, H, &q->in_proj));
    TRY(put_mat(g, &c->out_proj, c->out_proj_b, L, &q->out_proj));
    TRY(put(g, c->norm, H, &q->norm));
    for (int64_t l = 0; l < c->n_layers; l++) {
        const q3_codec_layer *y = &c->layers[l];
        glayer *G = &q->layers[l];
        TRY(put(g, y->in_norm, H, &G->in_norm));
        TRY(put(g, y->post_norm, H, &G->post_norm));
        TRY(put(g, y->attn_scale, H, &G->attn_scale));
        TRY(put(g, y->mlp_scale, H, &G->mlp_scale));
        const vx_mat *qkv[3] = {&y->q, &y->k, &y->v}, *gu[2] = {&y->gate, &y->up};
        G->stacked_qkv = stackable(qkv, 3);
        G->stacked_gu = stackable(gu, 2);
        if (G->stacked_qkv) {
            TRY(put_stack(g, qkv, 3, &G->qkv));
        } else {
            TRY(put_mat(g, &y->q, NULL, 0, &G->q));
            TRY(put_mat(g, &y->k, NULL, 0, &G->k));
            TRY(put_mat(g, &y->v, NULL, 0, &G->v));
        }
        if (G->stacked_gu) {
            TRY(put_stack(g, gu, 2, &G->gu));
        } else {
            TRY(put_mat(g, &y->gate, NULL, 0, &G->gate));
            TRY(put_mat(g, &y->up, NULL, 0, &G->up));
        }
        TRY(put_mat(g, &y->o, NULL, 0, &G->o));
        TRY(put_mat(g, &y->down, NULL, 0, &G->down));
    }
    for (int64_t i = 0; i < c->n_up; i++) {
        const q3_convnext *u = &c->up[i];
        TRY(put_mat(g, &u->up.w, u->up.b, L, &q->up[i].up));
        TRY(put_mat(g, &u->pw1, u->pw1_b, 4 * L, &q->up[i].pw1));
        TRY(put_mat(g, &u->pw2, u->pw2_b, L, &q->up[i].pw2));
        TRY(put(g, u->dw_w, 7 * L, &q->up[i].dw_w));
        TRY(put(g, u->dw_b, L, &q->up[i].dw_b));
        TRY(put(g, u->ln_w, L, &q->up[i].ln_w));
        TRY(put(g, u->ln_b, L, &q->up[i].ln_b));
        TRY(put(g, u->gamma, L, &q->up[i].gamma));
    }
    TRY(put_mat(g, &c->dec0.w, c->dec0.b, c->dec0.c_out, &q->dec0));
    TRY(put_mat(g, &c->final_conv.w, c->final_conv.b, 1, &q->final_conv));
    for (int64_t b = 0; b < c->n_blocks; b++) {
        const q3_codec_block *bl = &c->blocks[b];
        TRY(put_snake(g, &bl->act, &q->blocks[b].act));
        TRY(put_mat(g, &bl->up.w, bl->up.b, bl->up.c_out, &q->blocks[b].up));
        for (int u = 0; u < Q3_CODEC_UNITS; u++) {
            TRY(put_snake(g, &bl->act1[u], &q->blocks[b].act1[u]));
            TRY(put_snake(g, &bl->act2[u], &q->blocks[b].act2[u]));
            TRY(put_mat(g, &bl->conv1[u].w, bl->conv1[u].b, bl->conv1[u].c_out, &q->blocks[b].conv1[u]));
            TRY(put_mat(g, &bl->conv2[u].w, bl->conv2[u].b, bl->conv2[u].c_out, &q->blocks[b].conv2[u]));
        }
    }
    TRY(put_snake(g, &c->final_act, &q->final_act));
#undef TRY
    if (st != VOX_OK) {
        vx_codec_gpu_free(q);
        return st;
    }
    *out = q;
    return VOX_OK;
}

/* ------------------------------------------------------------------------------ streams */
void vx_codec_gstream_free(vx_codec_gstream *s) {
    if (!s) return;
    vx_gpu *g = s->q->g;
    vx_gbuf *b[] = {&s->state, &s->qf, &s->qr, &s->pb, &s->P, &s->lat0, &s->x, &s->h, &s->qs, &s->kc, &s->vc,
                    &s->att, &s->gt, &s->u, &s->sig, &s->act, &s->tmp, &s->tmp2, &s->part,
                    &s->codes, &s->cs, &s->sn, &s->pcm};
    for (size_t i = 0; i < sizeof b / sizeof *b; i++) vx_gpu_release(g, b[i]);
    free(s);
}

vox_status vx_codec_gstream_create(vx_codec_gpu *q, size_t lat_n, size_t voc_n, vx_codec_gstream **out) {
    *out = NULL;
    const q3_codec *c = q->c;
    vx_codec_gstream *s = calloc(1, sizeof *s);
    if (!s) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    s->q = q;
    s->lat_n = lat_n;
    s->voc_n = voc_n;
    const int64_t L = c->latent, kvd = c->n_kv_heads * c->head_dim, W = c->window, cbd = c->codebook_dim;
    /* the CPU stream's layout (codec_stream.c, q3_stream_create) */
    int64_t o = 0;
    s->pre_ctx = o, o += r16(2 * cbd);
    s->k_ring = o, o += r16(c->n_layers * W * kvd);
    s->v_ring = o, o += r16(c->n_layers * W * kvd);
    vox_status st = VOX_OK;
    if ((size_t)o != lat_n) st = vox_set_error(VOX_ERR_INTERNAL, "codec GPU stream: state layout differs from the CPU's");
    o = (int64_t)lat_n;
    for (int64_t i = 0; i < c->n_up; i++) s->dw_ctx[i] = o, o += r16(6 * L);
    s->dec0_ctx = o, o += r16(6 * L);
    for (int64_t b = 0; b < c->n_blocks; b++) {
        const int64_t d = c->decoder_dim >> (b + 1);
        s->tail[b] = o, o += r16(c->rate[b] * d);
        for (int u = 0; u < Q3_CODEC_UNITS; u++) s->unit_ctx[b][u] = o, o += r16(6 * DIL[u] * d);
    }
    s->final_ctx = o, o += r16(6 * (c->decoder_dim >> c->n_blocks));
    if (st == VOX_OK && (size_t)o != lat_n + voc_n)
        st = vox_set_error(VOX_ERR_INTERNAL, "codec GPU stream: state layout differs from the CPU's");
    /* work buffers for SUB frames (the vocoder's: q3_vocoder_sizes, as the CPU stream's) */
    const int64_t S = SUB, half = cbd / 2, H = c->hidden, qd = c->n_heads * c->head_dim, I = c->intermediate;
    const q3_voc_sizes z = q3_vocoder_sizes(c, S);
    const int64_t sig = z.sig, act = z.act, tmp = z.tmp, tmp2 = z.tmp2;
    /* split-K partials: a few times the largest activation, at most PART_FLOATS (a GEMM whose partials do
       not fit runs unsplit: the same bits, only slower) */
    const int64_t part = imin(PART_FLOATS, 8 * imax(imax(sig, act), imax(tmp, tmp2)));
    struct { vx_gbuf *b; int64_t n; } bufs[] = {
        {&s->state, (int64_t)(lat_n + voc_n)}, {&s->qf, S * half}, {&s->qr, S * half}, {&s->pb, S * cbd},
        {&s->P, (S + 2) * cbd}, {&s->lat0, S * L}, {&s->x, S * H}, {&s->h, S * H}, {&s->qs, S * qd},
        {&s->kc, c->n_layers * (W - 1 + S) * kvd}, {&s->vc, c->n_layers * (W - 1 + S) * kvd}, {&s->att, S * qd}, {&s->gt, S * I}, {&s->u, S * I},
        {&s->sig, sig}, {&s->act, act}, {&s->tmp, tmp},
        {&s->tmp2, tmp2}, {&s->part, imin(part, (int64_t)(vx_gpu_max_range(q->g) / 4))}};
    for (size_t i = 0; st == VOX_OK && i < sizeof bufs / sizeof *bufs; i++) {
        if ((uint64_t)bufs[i].n * 4 > vx_gpu_max_range(q->g))
            st = vox_set_error(VOX_ERR_UNSUPPORTED, "codec GPU stream: a work buffer exceeds the storage buffer range");
        else
            st = vx_gpu_alloc(q->g, (uint64_t)bufs[i].n * 4, 0, bufs[i].b);
    }
    const int64_t F = VX_CODEC_CHAIN_FRAMES;
    if (st == VOX_OK) st = vx_gpu_alloc(q->g, (uint64_t)(F * c->n_q) * 4, 1, &s->codes);
    if (st == VOX_OK) st = vx_gpu_alloc(q->g, (uint64_t)(F * c->head_dim) * 4, 1, &s->cs);
    if (st == VOX_OK) st = vx_gpu_alloc(q->g, (uint64_t)(F * c->head_dim) * 4, 1, &s->sn);
    if (st == VOX_OK) st = vx_gpu_alloc(q->g, (uint64_t)(F * c->spf) * 4, 1, &s->pcm);
    if (st == VOX_OK) st = vx_codec_gstream_set(s, 0, NULL, NULL);
    if (st != VOX_OK) {
        vx_codec_gstream_free(s);
        return st;
    }
    *out = s;
    return VOX_OK;
}

vox_status vx_codec_gstream_set(vx_codec_gstream *s, int64_t pos, const float *lat, const float *voc) {
    vox_status st = VOX_OK;
    float *zero = NULL;
    if (!lat || !voc) {
        zero = calloc(s->lat_n > s->voc_n ? s->lat_n : s->voc_n, sizeof(float));
        if (!zero) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    }
    st = vx_gpu_upload(s->q->g, &s->state, 0, lat ? lat : zero, s->lat_n * 4);
    if (st == VOX_OK) st = vx_gpu_upload(s->q->g, &s->state, s->lat_n * 4, voc ? voc : zero, s->voc_n * 4);
    free(zero);
    if (st == VOX_OK) s->pos = pos;
    return st;
}

vox_status vx_codec_gstream_get(vx_codec_gstream *s, float *lat, float *voc) {
    vox_status st = vx_gpu_download(s->q->g, &s->state, 0, lat, s->lat_n * 4);
    return st == VOX_OK ? vx_gpu_download(s->q->g, &s->state, s->lat_n * 4, voc, s->voc_n * 4) : st;
}

int64_t vx_codec_gstream_pos(const vx_codec_gstream *s) { return s->pos; }

/* ------------------------------------------------------------------------------ recording */
static vx_gbind B(const vx_gbuf *b) { return (vx_gbind){b, 0, 0}; }
static vx_gbind BO(const vx_gbuf *b, int64_t float_offset) { return (vx_gbind){b, (uint64_t)float_offset * 4, 0}; }

/* Which product kernel a layer uses is fixed per layer (ops_codec.h: the two sum in different orders):
 * GEMV, the small-M one, for the frame-rate layers (M = the sub-chunk's frames, or 2 or 4 times that in
 * the ConvNeXt MLPs) and the final convolution (one output channel: a 64-wide tile would be 63/64
 * padding, while a workgroup per 16 rows of its one column fills the device); TILED for the vocoder's
 * other convolutions (M up to 1920 times the frames). */
enum { TILED = 0, GEMV = 1 };

/* y = act(x . W^T (+ bias) (* scale) (+ res)): a linear layer / 1x1 conv, W [N][K]. */
static vox_status lin(vx_codec_gstream *s, int kernel, const gw *w, vx_gbind x, int64_t M, int64_t K, int64_t N,
                      const vx_gbuf *scale, const vx_gbind *res, int act, vx_gbind y, const char *label) {
    vx_gconv c = {.M = M, .N = N, .K = K, .cin = K, .taps = 1, .dil = 1, .w_dtype = w->dt, .gemv = kernel, .act = act,
                  .scratch = &s->part, .coopmat = w->f16_exact};
    vx_gbind bb = B(&w->b), sb = scale ? B(scale) : bb;
    return vx_gop_codec_gemm(s->q->g, &c, x, B(&w->w), w->has_b ? &bb : NULL, scale ? &sb : NULL, res, y, 0, label);
}

/* causal conv over x = [(k-1) dil context rows; M rows], then SnakeBeta sn when not NULL */
static vox_status conv(vx_codec_gstream *s, int kernel, const gw *w, const q3_conv *cv, vx_gbind x, int64_t M,
                       const vx_gbind *res, const gsnake *sn, vx_gbind y, const char *label) {
    vx_gconv c = {.M = M, .N = cv->c_out, .K = cv->c_in * cv->k, .cin = cv->c_in, .taps = cv->k, .dil = cv->dilation,
                  .w_dtype = w->dt, .gemv = kernel, .act = sn ? VX_CODEC_ACT_SNAKE : VX_CODEC_ACT_NONE,
                  .scratch = &s->part, .coopmat = w->f16_exact};
    if (sn) c.alpha = B(&sn->a), c.inv_beta = B(&sn->ib);
    vx_gbind bb = B(&w->b);
    return vx_gop_codec_gemm(s->q->g, &c, x, B(&w->w), w->has_b ? &bb : NULL, NULL, res, y, 0, label);
}

/* transposed conv x [T][c_in] -> out [T stride][c_out] via Y (tmp2) and the overlap-add */
static vox_status tconv(vx_codec_gstream *s, const gw *w, const q3_tconv *tc, vx_gbind x, int64_t T, int64_t tail,
                        vx_gbind out, const char *label) {
    vx_gpu *g = s->q->g;
    vx_gconv c = {.M = T, .N = tc->c_out * tc->k, .K = tc->c_in, .cin = tc->c_in, .taps = 1, .dil = 1, .w_kn = 1,
                  .w_dtype = w->dt, .gemv = TILED, .scratch = &s->part, .coopmat = w->f16_exact};
    vox_status st = vx_gop_codec_gemm(g, &c, x, B(&w->w), NULL, NULL, NULL, B(&s->tmp2), 0, label);
    if (st == VOX_OK)
        st = vx_gop_ola(g, B(&s->tmp2), T, tc->c_out, tc->k, tc->stride, BO(&s->state, tail < 0 ? 0 : tail), B(&w->b),
                        out, label);
    return st;
}

static vox_status copy(vx_gpu *g, vx_gbind x, int64_t n, vx_gbind y, const char *label) {
    return n > 0 ? vx_gop_copy(g, x, n, y, label) : VOX_OK;
}

/* The frame-rate half of k frames (codes at frame f of the chain's buffers): latent [k][L] in s->sig. */
static vox_status rec_latent(vx_codec_gstream *s, int64_t f, int64_t k) {
    vx_gpu *g = s->q->g;
    const vx_codec_gpu *q = s->q;
    const q3_codec *c = q->c;
    const int64_t half = c->codebook_dim / 2, cbd = c->codebook_dim, H = c->hidden, d = c->head_dim, hq = c->n_heads,
                  hkv = c->n_kv_heads, kvd = hkv * d, W = c->window, I = c->intermediate, L = c->latent,
                  qd = hq * d;
    vox_status st = vx_gop_codec_rvq(g, BO(&s->codes, f * c->n_q), B(&q->cb), k, c->n_q, c->codebook_size, half,
                                     B(&s->qf), B(&s->qr), "codec/rvq");
    vx_gbind pb = B(&s->pb);
#define TRY(e) if (st == VOX_OK) st = (e)
    TRY(lin(s, GEMV, &q->proj_rest, B(&s->qr), k, half, cbd, NULL, NULL, 0, B(&s->pb), "codec/rvq"));
    TRY(copy(g, BO(&s->state, s->pre_ctx), 2 * cbd, B(&s->P), "codec/ctx"));
    TRY(lin(s, GEMV, &q->proj_first, B(&s->qf), k, half, cbd, NULL, &pb, 0, BO(&s->P, 2 * cbd), "codec/rvq"));
    TRY(copy(g, BO(&s->P, k * cbd), 2 * cbd, BO(&s->state, s->pre_ctx), "codec/ctx"));
    TRY(conv(s, GEMV, &q->pre_conv, &c->pre_conv, B(&s->P), k, NULL, NULL, B(&s->lat0), "codec/pre_conv"));
    TRY(lin(s, GEMV, &q->in_proj, B(&s->lat0), k, L, H, NULL, NULL, 0, B(&s->x), "codec/transformer"));
    const int64_t npast = imin(s->pos, W - 1), keep = imax(0, k - W), cs = (W - 1 + SUB) * kvd;
    vx_gbind x = B(&s->x);
    /* every layer's ring in position order before its new keys (layer l's rows at l * cs), one dispatch */
    TRY(vx_gop_ring(g, BO(&s->state, s->k_ring), BO(&s->state, s->v_ring), B(&s->kc), B(&s->vc), npast, kvd, W,
                    s->pos - npast, 0, 0, c->n_layers, cs, "codec/transformer"));
    for (int64_t l = 0; l < c->n_layers && st == VOX_OK; l++) {
        const glayer *y = &q->layers[l];
        const vx_gbind kl = BO(&s->kc, l * cs), vl = BO(&s->vc, l * cs);
        const vx_gbind kn = BO(&s->kc, l * cs + npast * kvd), vn = BO(&s->vc, l * cs + npast * kvd);
        vx_gbind w;
        w = B(&y->in_norm);
        TRY(vx_gop_rms_norm(g, x, &w, k, H, c->rms_eps, B(&s->h), "codec/transformer"));
        if (y->stacked_qkv) {   /* q, k and v in one GEMM, k and v straight after the ring's rows */
            const vx_gbind ys[3] = {B(&s->qs), kn, vn};
            const int64_t seg[2] = {qd, qd + kvd};
            vx_gconv cq = {.M = k, .N = qd + 2 * kvd, .K = H, .cin = H, .taps = 1, .dil = 1, .w_dtype = y->qkv.dt,
                           .gemv = GEMV};
            TRY(vx_gop_codec_gemm_split(g, &cq, B(&s->h), B(&y->qkv.w), NULL, ys, 3, seg, "codec/transformer"));
        } else {
            TRY(lin(s, GEMV, &y->q, B(&s->h), k, H, qd, NULL, NULL, 0, B(&s->qs), "codec/transformer"));
            TRY(lin(s, GEMV, &y->k, B(&s->h), k, H, kvd, NULL, NULL, 0, kn, "codec/transformer"));
            TRY(lin(s, GEMV, &y->v, B(&s->h), k, H, kvd, NULL, NULL, 0, vn, "codec/transformer"));
        }
        TRY(vx_gop_rope(g, B(&s->qs), k, hq, d, BO(&s->cs, f * d), BO(&s->sn, f * d), "codec/transformer"));
        TRY(vx_gop_rope(g, kn, k, hkv, d, BO(&s->cs, f * d), BO(&s->sn, f * d), "codec/transformer"));
        TRY(vx_gop_attention(g, B(&s->qs), k, hq, kl, vl, npast + k, hkv, d, c->attn_scale, W, B(&s->att),
                             "codec/attention"));
        TRY(lin(s, GEMV, &y->o, B(&s->att), k, qd, H, &y->attn_scale, &x, 0, x, "codec/transformer"));
        w = B(&y->post_norm);
        TRY(vx_gop_rms_norm(g, x, &w, k, H, c->rms_eps, B(&s->h), "codec/transformer"));
        if (y->stacked_gu) {
            const vx_gbind ys[2] = {B(&s->gt), B(&s->u)};
            const int64_t seg[2] = {I, 2 * I};
            vx_gconv cg = {.M = k, .N = 2 * I, .K = H, .cin = H, .taps = 1, .dil = 1, .w_dtype = y->gu.dt, .gemv = GEMV};
            TRY(vx_gop_codec_gemm_split(g, &cg, B(&s->h), B(&y->gu.w), NULL, ys, 2, seg, "codec/transformer"));
        } else {
            TRY(lin(s, GEMV, &y->gate, B(&s->h), k, H, I, NULL, NULL, 0, B(&s->gt), "codec/transformer"));
            TRY(lin(s, GEMV, &y->up, B(&s->h), k, H, I, NULL, NULL, 0, B(&s->u), "codec/transformer"));
        }
        TRY(vx_gop_silu_mul(g, B(&s->gt), B(&s->u), k * I, B(&s->gt), "codec/transformer"));
        TRY(lin(s, GEMV, &y->down, B(&s->gt), k, I, H, &y->mlp_scale, &x, 0, x, "codec/transformer"));
    }
    /* keep every layer's newest W positions, one dispatch */
    TRY(vx_gop_ring(g, BO(&s->state, s->k_ring), BO(&s->state, s->v_ring), B(&s->kc), B(&s->vc), k - keep, kvd, W,
                    s->pos + keep, npast + keep, 1, c->n_layers, cs, "codec/transformer"));
    vx_gbind nw = B(&q->norm);
    TRY(vx_gop_rms_norm(g, x, &nw, k, H, c->rms_eps, B(&s->h), "codec/transformer"));
    TRY(lin(s, GEMV, &q->out_proj, B(&s->h), k, H, L, NULL, NULL, 0, B(&s->sig), "codec/transformer")); /* the vocoder's input */
    s->pos += k;
    return st;
}

/* The vocoder on latent [k][L] (s->sig, from rec_latent): pcm [k spf] at float offset pcm_off of s->pcm. */
static vox_status rec_vocoder(vx_codec_gstream *s, int64_t k, int64_t pcm_off) {
    vx_gpu *g = s->q->g;
    const vx_codec_gpu *q = s->q;
    const q3_codec *c = q->c;
    const int64_t L = c->latent;
    vox_status st = VOX_OK;
    int64_t t = k;
    vx_gbind sig = B(&s->sig), act = B(&s->act), tmp = B(&s->tmp), tmp2 = B(&s->tmp2);
    for (int64_t i = 0; i < c->n_up && st == VOX_OK; i++) {
        const q3_convnext *u = &c->up[i];
        vx_gbind res = BO(&s->act, 6 * L);
        TRY(copy(g, BO(&s->state, s->dw_ctx[i]), 6 * L, act, "codec/ctx"));
        TRY(tconv(s, &q->up[i].up, &u->up, sig, t, -1, BO(&s->act, 6 * L), "codec/tconv"));
        t *= c->up_ratio[i];
        TRY(copy(g, BO(&s->act, t * L), 6 * L, BO(&s->state, s->dw_ctx[i]), "codec/ctx"));
        TRY(vx_gop_dwconv(g, act, t, L, B(&q->up[i].dw_w), 7, 1, B(&q->up[i].dw_b), tmp, "codec/convnext"));
        TRY(vx_gop_layer_norm(g, tmp, B(&q->up[i].ln_w), B(&q->up[i].ln_b), t, L, 1e-6f, sig, "codec/convnext"));
        TRY(lin(s, GEMV, &q->up[i].pw1, sig, t, L, 4 * L, NULL, NULL, VX_CODEC_ACT_GELU, tmp2, "codec/convnext"));
        TRY(lin(s, GEMV, &q->up[i].pw2, tmp2, t, 4 * L, L, &q->up[i].gamma, &res, 0, sig, "codec/convnext"));
    }
    /* decoder.0 */
    TRY(copy(g, BO(&s->state, s->dec0_ctx), 6 * L, act, "codec/ctx"));
    TRY(vx_gop_copy_ctx(g, sig, t, L, act, 6, BO(&s->state, s->dec0_ctx), "codec/ctx"));
    TRY(conv(s, TILED, &q->dec0, &c->dec0, act, t, NULL, NULL, sig, "codec/conv1d"));
    for (int64_t b = 0; b < c->n_blocks && st == VOX_OK; b++) {
        const q3_codec_block *bl = &c->blocks[b];
        const int64_t cin = bl->up.c_in, cout = bl->up.c_out;
        TRY(vx_gop_snake(g, sig, B(&q->blocks[b].act.a), B(&q->blocks[b].act.ib), t, cin, tmp, "codec/snake"));
        TRY(tconv(s, &q->blocks[b].up, &bl->up, tmp, t, s->tail[b], sig, "codec/tconv"));
        t *= c->rate[b];
        for (int u = 0; u < Q3_CODEC_UNITS; u++) {
            const int64_t ctx = 6 * DIL[u];
            TRY(copy(g, BO(&s->state, s->unit_ctx[b][u]), ctx * cout, act, "codec/ctx"));
            TRY(vx_gop_snake_ctx(g, sig, B(&q->blocks[b].act1[u].a), B(&q->blocks[b].act1[u].ib), t, cout, act, ctx,
                                 BO(&s->state, s->unit_ctx[b][u]), "codec/snake"));
            /* the second SnakeBeta in conv1's epilogue */
            TRY(conv(s, TILED, &q->blocks[b].conv1[u], &bl->conv1[u], act, t, NULL, &q->blocks[b].act2[u], tmp,
                     "codec/conv1d"));
            TRY(conv(s, TILED, &q->blocks[b].conv2[u], &bl->conv2[u], tmp, t, &sig, NULL, sig, "codec/conv1x1"));
        }
    }
    const int64_t last = c->final_act.c;
    TRY(copy(g, BO(&s->state, s->final_ctx), 6 * last, act, "codec/ctx"));
    TRY(vx_gop_snake_ctx(g, sig, B(&q->final_act.a), B(&q->final_act.ib), t, last, act, 6,
                         BO(&s->state, s->final_ctx), "codec/snake"));
    TRY(conv(s, GEMV, &q->final_conv, &c->final_conv, act, t, NULL, NULL, tmp, "codec/conv_out"));
    if (pcm_off >= 0) TRY(vx_gop_clamp(g, tmp, t, -1.0f, 1.0f, BO(&s->pcm, pcm_off), "codec/clamp"));
#undef TRY
    return st;
}

/* Frames [0, n) of codes in chains of up to VX_CODEC_CHAIN_FRAMES; vocoder from frame first_voc on,
 * pcm (may be NULL: discarded) receiving the audio of frames >= first_voc. */
static vox_status run(vx_codec_gstream *s, const int32_t *codes, int64_t n, int64_t first_voc, float *pcm) {
    const q3_codec *c = s->q->c;
    vx_gpu *g = s->q->g;
    const int64_t d = c->head_dim, spf = c->spf;
    vox_status st = VOX_OK;
    for (int64_t f0 = 0; f0 < n && st == VOX_OK;) {
        const int64_t F = imin(VX_CODEC_CHAIN_FRAMES, n - f0);
        memcpy(s->codes.map, codes + f0 * c->n_q, (size_t)(F * c->n_q) * sizeof(int32_t));
        float *cs = s->cs.map, *sn = s->sn.map;
        for (int64_t i = 0; i < F; i++) {   /* the CPU decoder's tables (codec_stream.c), the same bits */
            const float p = (float)(s->pos + i);
            for (int64_t j = 0; j < d / 2; j++) {
                const float fr = p * c->inv_freq[j];
                cs[i * d + j] = cs[i * d + j + d / 2] = cosf(fr);
                sn[i * d + j] = sn[i * d + j + d / 2] = sinf(fr);
            }
        }
        const int64_t pos0 = s->pos;
        st = vx_gpu_begin(g);
        for (int64_t f = 0; f < F && st == VOX_OK;) {
            const int64_t a = f0 + f;   /* sub-chunks never straddle first_voc */
            const int64_t k = a < first_voc ? imin(SUB, imin(first_voc - a, F - f)) : imin(SUB, F - f);
            st = rec_latent(s, f, k);
            if (st == VOX_OK && a >= first_voc) st = rec_vocoder(s, k, pcm ? f * spf : -1);
            f += k;
        }
        vox_status sub = vx_gpu_submit(g);
        if (st == VOX_OK) st = sub;
        if (st != VOX_OK) {
            s->pos = pos0;
            break;
        }
        if (pcm) {
            const int64_t a0 = imax(f0, first_voc);
            if (f0 + F > a0)
                memcpy(pcm + (a0 - first_voc) * spf, (const float *)s->pcm.map + (a0 - f0) * spf,
                       (size_t)((f0 + F - a0) * spf) * sizeof(float));
        }
        f0 += F;
    }
    return st;
}

vox_status vx_codec_gstream_push(vx_codec_gstream *s, const int32_t *codes, int64_t n, float *pcm) {
    return n > 0 ? run(s, codes, n, 0, pcm) : VOX_OK;
}

vox_status vx_codec_gstream_prime(vx_codec_gstream *s, const int32_t *codes, int64_t n, int64_t vocoder_frames) {
    if (n <= 0) return VOX_OK;
    const int64_t first_voc = n > vocoder_frames ? n - vocoder_frames : 0;
    vox_status st = VOX_OK;
    if (first_voc > 0) {   /* the vocoder starts from zeros: its state depends on its last frames alone */
        float *zero = calloc(s->voc_n, sizeof(float));
        if (!zero) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
        st = vx_gpu_upload(s->q->g, &s->state, s->lat_n * 4, zero, s->voc_n * 4);
        free(zero);
    }
    return st == VOX_OK ? run(s, codes, n, first_voc, NULL) : st;
}
