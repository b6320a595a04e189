/* The DiT flow estimator (vox.reference.f5.dit; f5_tts DiT.forward with cfg_infer, batch 1 per branch):
 *
 *   h = proj([x, cond, text]);  h = h + Mish(conv31(Mish(conv31(h))))        (grouped 16, per branch)
 *   c = TimestepEmbedding(t)
 *   depth x adaLN-Zero block:
 *     shift1, scale1, gate1, shift2, scale2, gate2 = Linear(SiLU(c))
 *     h = h + gate1 * Attn(LN(h) (1 + scale1) + shift1)       rotary (interleaved pairs) on the first
 *     h = h + gate2 * FF(LN(h) (1 + scale2) + shift2)          pe_attn_head heads; FF: Linear, GELU(tanh), Linear
 *   flow = proj_out(LN(h) (1 + scale) + shift),   scale, shift = Linear(SiLU(c))
 *
 * The guidance branches run as one batch: every linear layer sees both branches' rows at once (its
 * weights are read once per step), the convolutions and the attention stay within a branch. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../engine.h"
#include "../error.h"
#include "f5.h"

const char *const f5_stage_names[F5_STAGES + 1] = {"text", "reference", "text_encoder", "dit", "vocos", NULL};
const char *const f5_dit_part_names[F5_DIT_PARTS] = {"input", "modulation", "norm", "qkv", "rope", "attention",
                                                     "out", "ff1", "gelu", "ff2", "gate", "final"};

/* The clock of the profile: the time since the last mark goes to part p (nothing without a profile). */
static inline void mark(f5_dit_prof *prof, int p, double *t) {
    if (!prof) return;
    double now = vx_now_ms();
    prof->ms[p] += now - *t;
    *t = now;
}

vox_status f5_time_embedding(const f5_model *m, vx_pool *pool, float t, float *out) {
    /* SinusPositionEmbedding(256) of 1000 t: f_i = exp(i * float(-ln(10000) / 127)), [sin | cos] */
    float emb[2 * F5_TIME_FREQS], *h = malloc((size_t)m->c.dim * sizeof *h);
    if (!h) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    const float k = (float)(-(log(10000.0) / (F5_TIME_FREQS - 1)));
    const float scaled = 1000.0f * t;
    for (int i = 0; i < F5_TIME_FREQS; i++) {
        float f = (float)exp((double)((float)i * k));
        double a = (double)(scaled * f);
        emb[i] = (float)sin(a);
        emb[F5_TIME_FREQS + i] = (float)cos(a);
    }
    vx_linear(pool, &m->t1, m->t1_b, emb, 1, h);
    vx_silu(h, m->c.dim, h);
    vx_linear(pool, &m->t2, m->t2_b, h, 1, out);
    free(h);
    return VOX_OK;
}

typedef struct rope_job {
    float *x;            /* [rows][inner] */
    const float *cos, *sin;  /* [n][dim_head] */
    int64_t n, inner, dim_head, heads;   /* heads rotated */
} rope_job;

static void rope_rows(void *ctx, int64_t r0, int64_t r1) {
    const rope_job *j = ctx;
    for (int64_t r = r0; r < r1; r++) {
        const float *c = j->cos + (r % j->n) * j->dim_head, *s = j->sin + (r % j->n) * j->dim_head;
        for (int64_t h = 0; h < j->heads; h++) {
            float *x = j->x + r * j->inner + h * j->dim_head;
            for (int64_t i = 0; i < j->dim_head; i += 2) {
                float a = x[i], b = x[i + 1];
                x[i] = a * c[i] + (-b) * s[i];
                x[i + 1] = b * c[i + 1] + a * s[i + 1];
            }
        }
    }
}

typedef struct gate_job {
    float *h;
    const float *y, *gate;
    int64_t d;
} gate_job;

static void gate_rows(void *ctx, int64_t r0, int64_t r1) {
    const gate_job *j = ctx;
    for (int64_t r = r0; r < r1; r++) {
        float *h = j->h + r * j->d;
        const float *y = j->y + r * j->d;
        for (int64_t i = 0; i < j->d; i++) h[i] = h[i] + j->gate[i] * y[i];
    }
}

static void add_gated(vx_pool *pool, float *h, const float *y, const float *gate, int64_t rows, int64_t d) {
    gate_job j = {h, y, gate, d};
    vx_pool_for(pool, rows, 16, gate_rows, &j);
}

vox_status f5_dit_modulations(const f5_model *m, vx_pool *pool, const float *temb, int64_t steps, float *mods) {
    const int64_t d = m->c.dim, per = (6 * m->c.depth + 2) * d;
    float *sil = malloc((size_t)(steps * d) * sizeof *sil), *tmp = malloc((size_t)(steps * 6 * d) * sizeof *tmp);
    if (!sil || !tmp) {
        free(sil), free(tmp);
        return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    }
    vx_silu(temb, steps * d, sil);
    /* one product per matrix for all steps: its weights are read once (vx_linear's values do not
     * depend on the number of rows, so each step gets the bits of its own GEMV) */
    for (int64_t i = 0; i <= m->c.depth; i++) {
        const int last = i == m->c.depth;
        const int64_t w = last ? 2 * d : 6 * d;
        vx_linear(pool, last ? &m->norm_out : &m->blocks[i].mod, last ? m->norm_out_b : m->blocks[i].mod_b, sil, steps, tmp);
        for (int64_t s = 0; s < steps; s++) memcpy(mods + s * per + i * 6 * d, tmp + s * w, (size_t)w * sizeof *tmp);
    }
    free(sil), free(tmp);
    return VOX_OK;
}

/* A block's linear layer: its packed bf16 or q8 form where the model chose bf16 dot products or the
 * int8 GEMM tiles. */
static vox_status lin(vx_pool *pool, const f5_model *m, const vx_mat *w, const vx_bf16w *p, const vx_q8w *pq,
                      const float *bias, const float *x, int64_t n, float *y) {
    if (m->dit_bf16) return vx_linear_bf16w(pool, p, bias, x, n, y);
    if (m->dit_q8) return vx_linear_q8w(pool, pq, bias, x, n, y);
    vx_linear(pool, w, bias, x, n, y);
    return VOX_OK;
}

vox_status f5_dit(const f5_model *m, vx_pool *pool, int64_t batch, int64_t n, const float *x, const float *cond,
                  const float *text, const float *temb, const float *mods_in, float *flow, f5_tap_fn tap, void *tap_ctx,
                  f5_dit_prof *prof) {
    const f5_config *c = &m->c;
    const int64_t d = c->dim, md = c->mel_dim, td = c->text_dim, inner = c->heads * c->dim_head, rows = batch * n;
    const int64_t ff = c->ff_mult * d, in_w = 2 * md + td, dh = c->dim_head;
    vox_status st = VOX_OK;
    float *h = malloc((size_t)(rows * d) * sizeof *h);
    float *a = malloc((size_t)(rows * (in_w > d ? in_w : d)) * sizeof *a);
    float *y = malloc((size_t)(rows * d) * sizeof *y);
    float *q = malloc((size_t)(rows * inner) * sizeof *q), *k = malloc((size_t)(rows * inner) * sizeof *k);
    float *v = malloc((size_t)(rows * inner) * sizeof *v), *o = malloc((size_t)(rows * inner) * sizeof *o);
    float *u = malloc((size_t)(rows * ff) * sizeof *u);
    float *mods = malloc((size_t)((6 * c->depth + 2) * d) * sizeof *mods), *sc = malloc((size_t)(2 * d) * sizeof *sc);
    float *cs = malloc((size_t)(2 * n * dh) * sizeof *cs), *sil = malloc((size_t)d * sizeof *sil);
    if (!h || !a || !y || !q || !k || !v || !o || !u || !mods || !sc || !cs || !sil) {
        st = vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory (DiT over %lld frames)", (long long)n);
        goto done;
    }
    double tm = prof ? vx_now_ms() : 0.0;
    /* input embedding */
    for (int64_t r = 0; r < rows; r++) {
        memcpy(a + r * in_w, x + r * md, (size_t)md * sizeof *a);
        memcpy(a + r * in_w + md, cond + r * md, (size_t)md * sizeof *a);
        memcpy(a + r * in_w + 2 * md, text + r * td, (size_t)td * sizeof *a);
    }
    vx_linear(pool, &m->in_proj, m->in_proj_b, a, rows, h);
    for (int64_t b = 0; b < batch && st == VOX_OK; b++) {
        float *hb = h + b * n * d, *yb = y + b * n * d, *ab = a + b * n * d;
        st = m->conv_bf16 ? vx_nn_conv1d_bf16w(pool, &m->conv0_bw, m->conv0_b, hb, n, d, 15, 15, yb)
                          : vx_nn_conv1d(pool, &m->conv0, m->conv0_b, hb, n, d, d, 31, 16, 15, 15, yb);
        if (st == VOX_OK) vx_nn_mish_pool(pool, yb, n, d);
        if (st == VOX_OK)
            st = m->conv_bf16 ? vx_nn_conv1d_bf16w(pool, &m->conv2_bw, m->conv2_b, yb, n, d, 15, 15, ab)
                              : vx_nn_conv1d(pool, &m->conv2, m->conv2_b, yb, n, d, d, 31, 16, 15, 15, ab);
        if (st == VOX_OK) {
            vx_nn_mish_pool(pool, ab, n, d);
            vx_add(ab, hb, n * d, hb);
        }
    }
    if (st != VOX_OK) goto done;
    if (tap) tap(tap_ctx, "input_embed", h, rows, d);
    mark(prof, F5_DP_INPUT, &tm);
    /* the modulations of every block and of the output from the one time embedding (or given) */
    if (mods_in) memcpy(mods, mods_in, (size_t)((6 * c->depth + 2) * d) * sizeof *mods);
    else if ((st = f5_dit_modulations(m, pool, temb, 1, mods)) != VOX_OK) goto done;
    /* rotary tables of x_transformers' RotaryEmbedding: angle (pos * inv_freq_i) for the pair (2i, 2i + 1) */
    float *cosv = cs, *sinv = cs + n * dh;
    for (int64_t p = 0; p < n; p++)
        for (int64_t i = 0; i < dh / 2; i++) {
            double ang = (double)((float)p * m->inv_freq[i]);
            cosv[p * dh + 2 * i] = cosv[p * dh + 2 * i + 1] = (float)cos(ang);
            sinv[p * dh + 2 * i] = sinv[p * dh + 2 * i + 1] = (float)sin(ang);
        }
    const float scale = 1.0f / sqrtf((float)dh);
    mark(prof, F5_DP_MOD, &tm);
    for (int64_t i = 0; i < c->depth && st == VOX_OK; i++) {
        const f5_block *blk = &m->blocks[i];
        const float *md6 = mods + i * 6 * d;
        const float *shift1 = md6, *scale1 = md6 + d, *gate1 = md6 + 2 * d, *shift2 = md6 + 3 * d,
                    *scale2 = md6 + 4 * d, *gate2 = md6 + 5 * d;
        for (int64_t j = 0; j < d; j++) sc[j] = 1.0f + scale1[j], sc[d + j] = 1.0f + scale2[j];
        vx_nn_layer_norm(pool, h, sc, shift1, rows, d, 1e-6f, a);
        mark(prof, F5_DP_NORM, &tm);
        st = lin(pool, m, &blk->q, &blk->pq, &blk->qq, blk->q_b, a, rows, q);
        if (st == VOX_OK) st = lin(pool, m, &blk->k, &blk->pk, &blk->qk, blk->k_b, a, rows, k);
        if (st == VOX_OK) st = lin(pool, m, &blk->v, &blk->pv, &blk->qv, blk->v_b, a, rows, v);
        if (st != VOX_OK) break;
        mark(prof, F5_DP_QKV, &tm);
        rope_job rq = {q, cosv, sinv, n, inner, dh, c->pe_attn_head}, rk = rq;
        rk.x = k;
        vx_pool_for(pool, rows, 16, rope_rows, &rq);
        vx_pool_for(pool, rows, 16, rope_rows, &rk);
        mark(prof, F5_DP_ROPE, &tm);
        st = m->att_q8     ? vx_nn_attention_q8(pool, batch, n, c->heads, dh, q, inner, k, inner, v, inner, scale, o, inner)
             : m->att_bf16 ? vx_nn_attention_bf16(pool, batch, n, c->heads, dh, q, inner, k, inner, v, inner, scale, o, inner)
                           : vx_nn_attention(pool, batch, n, c->heads, dh, q, inner, k, inner, v, inner, scale, o, inner);
        if (st != VOX_OK) break;
        mark(prof, F5_DP_ATTN, &tm);
        if ((st = lin(pool, m, &blk->o, &blk->po, &blk->qo, blk->o_b, o, rows, y)) != VOX_OK) break;
        mark(prof, F5_DP_OUT, &tm);
        add_gated(pool, h, y, gate1, rows, d);
        vx_nn_layer_norm(pool, h, sc + d, shift2, rows, d, 1e-6f, a);
        mark(prof, F5_DP_GATE, &tm);
        if ((st = lin(pool, m, &blk->ff1, &blk->pff1, &blk->qff1, blk->ff1_b, a, rows, u)) != VOX_OK) break;
        mark(prof, F5_DP_FF1, &tm);
        vx_nn_gelu_tanh_pool(pool, u, rows, ff);
        mark(prof, F5_DP_GELU, &tm);
        if ((st = lin(pool, m, &blk->ff2, &blk->pff2, &blk->qff2, blk->ff2_b, u, rows, y)) != VOX_OK) break;
        mark(prof, F5_DP_FF2, &tm);
        add_gated(pool, h, y, gate2, rows, d);
        mark(prof, F5_DP_GATE, &tm);
    }
    if (st != VOX_OK) goto done;
    {
        const float *mo = mods + c->depth * 6 * d, *scl = mo, *shf = mo + d;
        for (int64_t j = 0; j < d; j++) sc[j] = 1.0f + scl[j];
        vx_nn_layer_norm(pool, h, sc, shf, rows, d, 1e-6f, a);
        vx_linear(pool, &m->proj_out, m->proj_out_b, a, rows, flow);
        mark(prof, F5_DP_FINAL, &tm);
    }
done:
    free(h), free(a), free(y), free(q), free(k), free(v), free(o), free(u), free(mods), free(sc), free(cs), free(sil);
    return st;
}
