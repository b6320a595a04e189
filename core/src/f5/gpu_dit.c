/* The DiT step and the ODE loop on the GPU (gpu.h; the CPU twins are dit.c and cfm.c, the spec
 * vox.reference.f5.dit / cfm). One step is one chain of dispatches over both guidance branches' rows:
 *
 *   time   sinusoids of 1000 t (host, once a piece for every step) -> Linear, SiLU, Linear -> temb;
 *          SiLU(temb) -> every block's 6 modulations and the output's 2 (GEMVs)
 *   embed  [x | cond | text] (packed per branch: the host writes cond and text once a piece, each Euler
 *          step writes x) -> Linear -> h;  h += Mish(conv31(Mish(conv31(h))))  (grouped, per branch)
 *   block  a = adaLN(h; shift1, scale1); q|k|v = a W (one stacked GEMM); rotary on q, k; full attention;
 *          h += gate1 * o W_o;  a = adaLN(h; shift2, scale2); h += gate2 * GELU_tanh(a W_1) W_2
 *   out    flow = adaLN(h; shift, scale) W_proj
 *   euler  x += dt (v_c + (v_c - v_u) cfg), written back into the packed input
 *
 * Steps are recorded back to back into chains of up to ~3500 dispatches (one submit per chain), so the
 * state stays in video memory from x0 to the last step. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../error.h"
#include "gpu_internal.h"

#define CHAIN_DISPATCHES 3500   /* below the context's 4096 dispatches a chain */
#define F5_POSITIONS 8192       /* as cfm.c: the text encoder's sinusoid table */

static int cancelled(const f5_sample_opts *o) { return o->cancel && atomic_load(o->cancel); }

/* SinusPositionEmbedding(256) of 1000 t, exactly as f5_time_embedding computes it (dit.c). */
static void time_sinusoids(float t, float *emb) {
    const float k = (float)(-(log(10000.0) / (F5_TIME_FREQS - 1)));
    const float scaled = 1000.0f * t;
    for (int i = 0; i < F5_TIME_FREQS; i++) {
        float f = (float)exp((double)((float)i * k));
        double a = (double)(scaled * f);
        emb[i] = (float)sin(a);
        emb[F5_TIME_FREQS + i] = (float)cos(a);
    }
}

/* The rotary tables [n][dh] (cos, then sin), as f5_dit builds them. */
static void rope_tables(const f5_model *m, int64_t n, float *cs) {
    const int64_t dh = m->c.dim_head;
    float *cosv = cs, *sinv = cs + n * dh;
    for (int64_t p = 0; p < n; p++)
        for (int64_t i = 0; i < dh / 2; i++) {
            double ang = (double)((float)p * m->inv_freq[i]);
            cosv[p * dh + 2 * i] = cosv[p * dh + 2 * i + 1] = (float)cos(ang);
            sinv[p * dh + 2 * i] = sinv[p * dh + 2 * i + 1] = (float)sin(ang);
        }
}

/* The workspace for batch x n rows and `steps` time rows. */
static vox_status workspace(f5_gpu *G, const f5_model *m, int64_t batch, int64_t n, int64_t nc, int64_t steps) {
    const f5_config *c = &m->c;
    const uint64_t rows = (uint64_t)(batch * n), d = (uint64_t)c->dim, inner = (uint64_t)(c->heads * c->dim_head);
    const uint64_t in_w = (uint64_t)(2 * c->mel_dim + c->text_dim), ff = (uint64_t)m->blocks[0].ff1.rows, md = (uint64_t)c->mel_dim;
    vx_gpu *g = G->g;
    vox_status st;
    if ((st = f5_gws_need(g, &G->A, rows * in_w * 4)) || (st = f5_gws_need(g, &G->H, rows * d * 4)) ||
        (st = f5_gws_need(g, &G->AN, rows * d * 4)) || (st = f5_gws_need(g, &G->Y, rows * d * 4)) ||
        (st = f5_gws_need(g, &G->Q, rows * inner * 4)) || (st = f5_gws_need(g, &G->K, rows * inner * 4)) ||
        (st = f5_gws_need(g, &G->V, rows * inner * 4)) || (st = f5_gws_need(g, &G->O, rows * inner * 4)) ||
        (st = f5_gws_need(g, &G->U, rows * ff * 4)) || (st = f5_gws_need(g, &G->FLOW, rows * md * 4)) ||
        (st = f5_gws_need(g, &G->X, (uint64_t)n * md * 4)) || (st = f5_gws_need(g, &G->COND, (uint64_t)nc * md * 4)) ||
        (st = f5_gws_need(g, &G->TS, (uint64_t)steps * 2 * F5_TIME_FREQS * 4)) ||
        (st = f5_gws_need(g, &G->CS, (uint64_t)(2 * n * c->dim_head) * 4)) || (st = f5_gws_need(g, &G->T1, d * 4)) ||
        (st = f5_gws_need(g, &G->TEMB, d * 4)) || (st = f5_gws_need(g, &G->SIL, d * 4)) ||
        (st = f5_gws_need(g, &G->MODS, (uint64_t)(6 * c->depth + 2) * d * 4)))
        return st;
    return VOX_OK;
}

static const vx_gbind NONE = {0};

/* The time MLP of sinusoid row `ts` and every modulation. */
static vox_status rec_time(f5_gpu *G, const f5_model *m, int64_t ts) {
    vx_gpu *g = G->g;
    const int64_t d = m->c.dim;
    vox_status st;
    if ((st = vx_gop_linear(g, &G->t1, &G->t1_b, f5_bind(&G->TS, (uint64_t)(ts * 2 * F5_TIME_FREQS)), NONE, NONE, 1,
                            f5_bind(&G->T1, 0), 0, 0, "f5/time")) ||
        (st = vx_gop_act(g, VX_ACT_SILU, f5_bind(&G->T1, 0), d, f5_bind(&G->T1, 0), "f5/time")) ||
        (st = vx_gop_linear(g, &G->t2, &G->t2_b, f5_bind(&G->T1, 0), NONE, NONE, 1, f5_bind(&G->TEMB, 0), 0, 0, "f5/time")) ||
        (st = vx_gop_act(g, VX_ACT_SILU, f5_bind(&G->TEMB, 0), d, f5_bind(&G->SIL, 0), "f5/time")))
        return st;
    for (int64_t i = 0; i < m->c.depth; i++)
        if ((st = vx_gop_linear(g, &G->blocks[i].mod, &G->blocks[i].mod_b, f5_bind(&G->SIL, 0), NONE, NONE, 1,
                                f5_bind(&G->MODS, (uint64_t)(i * 6 * d)), 0, 0, "f5/modulation")))
            return st;
    return vx_gop_linear(g, &G->norm_out, &G->norm_out_b, f5_bind(&G->SIL, 0), NONE, NONE, 1,
                         f5_bind(&G->MODS, (uint64_t)(m->c.depth * 6 * d)), 0, 0, "f5/modulation");
}

/* The input embedding of the packed input A into H. */
static vox_status rec_embed(f5_gpu *G, const f5_model *m, int64_t batch, int64_t n) {
    vx_gpu *g = G->g;
    const int64_t d = m->c.dim, rows = batch * n;
    vox_status st;
    vx_gbind h = f5_bind(&G->H, 0);
    if ((st = vx_gop_linear(g, &G->in_proj, &G->in_proj_b, f5_bind(&G->A, 0), NONE, NONE, rows, h, 0, 0, "f5/embed")) ||
        (st = vx_gop_gconv(g, h, (vx_gbind){&G->conv0_wt, 0, 0}, G->conv0_b, batch, n, d, d / 16, 15, 1, NULL,
                           f5_bind(&G->Y, 0), "f5/embed")) ||
        (st = vx_gop_gconv(g, f5_bind(&G->Y, 0), (vx_gbind){&G->conv2_wt, 0, 0}, G->conv2_b, batch, n, d, d / 16, 15, 1, &h,
                           h, "f5/embed")))
        return st;
    return VOX_OK;
}

/* Whether block b's attention output and FFN run with their elementwise passes in the GEMMs' epilogues
 * (vx_gop_linear_epi: on VK_NV_cooperative_matrix2; G->fuse off: separate passes, for measuring). */
static int fused(const f5_gpu *G, const f5_gblock *b, int64_t rows) {
    return G->fuse && vx_gop_linear_epi_ok(G->g, &b->o, rows) && vx_gop_linear_epi_ok(G->g, &b->ff1, rows) &&
           vx_gop_linear_epi_ok(G->g, &b->ff2, rows);
}

/* The blocks and the output projection: H -> FLOW. */
static vox_status rec_blocks(f5_gpu *G, const f5_model *m, int64_t batch, int64_t n) {
    vx_gpu *g = G->g;
    const f5_config *c = &m->c;
    const int64_t d = c->dim, rows = batch * n, inner = c->heads * c->dim_head, dh = c->dim_head;
    const float scale = 1.0f / sqrtf((float)dh);
    vx_gbind h = f5_bind(&G->H, 0), a = f5_bind(&G->AN, 0), y = f5_bind(&G->Y, 0), u = f5_bind(&G->U, 0);
    vx_gbind qkv[3] = {f5_bind(&G->Q, 0), f5_bind(&G->K, 0), f5_bind(&G->V, 0)};
    vox_status st;
    for (int64_t i = 0; i < c->depth; i++) {
        const f5_gblock *b = &G->blocks[i];
        const uint64_t mo = (uint64_t)(i * 6 * d);
        vx_gbind shift1 = f5_bind(&G->MODS, mo), scale1 = f5_bind(&G->MODS, mo + d), gate1 = f5_bind(&G->MODS, mo + 2 * d);
        vx_gbind shift2 = f5_bind(&G->MODS, mo + 3 * d), scale2 = f5_bind(&G->MODS, mo + 4 * d),
                 gate2 = f5_bind(&G->MODS, mo + 5 * d);
        if ((st = vx_gop_adaln(g, h, scale1, shift1, rows, d, 1e-6f, a, "f5/block")) ||
            (st = vx_gop_linear_stack(g, &b->qkv, a, NONE, NONE, rows, qkv, "f5/qkv")) ||
            (st = vx_gop_rope_pairs(g, qkv[0], qkv[1], rows, n, inner, c->pe_attn_head, dh, f5_bind(&G->CS, 0),
                                    f5_bind(&G->CS, (uint64_t)(n * dh)), "f5/block")) ||
            (st = vx_gop_attention_full(g, qkv[0], qkv[1], qkv[2], batch, n, c->heads, dh, inner, scale, G->f16,
                                        f5_bind(&G->O, 0), "f5/attention")))
            return st;
        if (fused(G, b, rows)) {   /* the GELU and the gated residuals in the GEMMs' epilogues */
            if ((st = vx_gop_linear_epi(g, &b->o, &b->o_b, f5_bind(&G->O, 0), rows, h, 0, VX_EPI_GATED_ADD, &gate1,
                                        "f5/attn_out")) ||
                (st = vx_gop_adaln(g, h, scale2, shift2, rows, d, 1e-6f, a, "f5/block")) ||
                (st = vx_gop_linear_epi(g, &b->ff1, &b->ff1_b, a, rows, u, 0, VX_EPI_GELU_TANH, NULL, "f5/ff1")) ||
                (st = vx_gop_linear_epi(g, &b->ff2, &b->ff2_b, u, rows, h, 0, VX_EPI_GATED_ADD, &gate2, "f5/ff2")))
                return st;
            continue;
        }
        if ((st = vx_gop_linear(g, &b->o, &b->o_b, f5_bind(&G->O, 0), NONE, NONE, rows, y, 0, 0, "f5/attn_out")) ||
            (st = vx_gop_gated_add(g, h, y, gate1, rows, d, "f5/block")) ||
            (st = vx_gop_adaln(g, h, scale2, shift2, rows, d, 1e-6f, a, "f5/block")) ||
            (st = vx_gop_linear(g, &b->ff1, &b->ff1_b, a, NONE, NONE, rows, u, 0, 0, "f5/ff1")) ||
            (st = vx_gop_act(g, VX_ACT_GELU_TANH, u, rows * b->ff1.rows, u, "f5/block")) ||
            (st = vx_gop_linear(g, &b->ff2, &b->ff2_b, u, NONE, NONE, rows, y, 0, 0, "f5/ff2")) ||
            (st = vx_gop_gated_add(g, h, y, gate2, rows, d, "f5/block")))
            return st;
    }
    const uint64_t mo = (uint64_t)(c->depth * 6 * d);
    if ((st = vx_gop_adaln(g, h, f5_bind(&G->MODS, mo), f5_bind(&G->MODS, mo + d), rows, d, 1e-6f, a, "f5/out")))
        return st;
    return vx_gop_linear(g, &G->proj_out, &G->proj_out_b, a, NONE, NONE, rows, f5_bind(&G->FLOW, 0), 0, 0, "f5/out");
}

static int64_t step_dispatches(const f5_model *m) { return 11 * m->c.depth + m->c.depth + 16; }

/* The packed input [batch n][x | cond | text]: x for every branch (x_branch: floats between branches'
 * x, 0: the same), cond for branch 0 and 1 (NULL: zeros), text [batch][n][td]. */
static float *pack_input(const f5_model *m, int64_t batch, int64_t n, const float *x, int64_t x_branch, const float *cond0,
                         int64_t nc0, const float *cond1, const float *text) {
    const int64_t md = m->c.mel_dim, td = m->c.text_dim, w = 2 * md + td;
    float *a = calloc((size_t)(batch * n * w), sizeof *a);
    if (!a) return NULL;
    for (int64_t b = 0; b < batch; b++)
        for (int64_t r = 0; r < n; r++) {
            float *row = a + (b * n + r) * w;
            memcpy(row, x + b * x_branch + r * md, (size_t)md * sizeof *row);
            const float *cd = b == 0 ? cond0 : cond1;
            if (cd && (b != 0 || r < nc0)) memcpy(row + md, cd + r * md, (size_t)md * sizeof *row);
            memcpy(row + 2 * md, text + (b * n + r) * td, (size_t)td * sizeof *row);
        }
    return a;
}

vox_status f5_gpu_dit(const f5_model *m, int64_t n, const float *x, const float *cond, const float *text, float t,
                      float *flow, f5_tap_fn tap, void *tap_ctx) {
    f5_gpu *G = m->gpu;
    const f5_config *c = &m->c;
    const int64_t md = c->mel_dim, d = c->dim;
    if (n > F5_POSITIONS) return vox_set_error(VOX_ERR_LIMIT, "dit: %lld frames (at most %d)", (long long)n, F5_POSITIONS);
    float *a = pack_input(m, 2, n, x, n * md, cond, n, cond + n * md, text);
    float *cs = malloc((size_t)(2 * n * c->dim_head) * sizeof *cs), emb[2 * F5_TIME_FREQS];
    float *hb = malloc((size_t)(2 * n * d) * sizeof *hb), *temb = malloc((size_t)d * sizeof *temb);
    vox_status st = a && cs && hb && temb ? VOX_OK : vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    pthread_mutex_lock(&G->lock);
    if (st == VOX_OK) st = workspace(G, m, 2, n, 1, 1);
    if (st == VOX_OK) {
        rope_tables(m, n, cs);
        time_sinusoids(t, emb);
        const int64_t in_w = 2 * md + c->text_dim;
        if ((st = vx_gpu_upload(G->g, &G->A.b, 0, a, (uint64_t)(2 * n * in_w) * 4)) == VOX_OK &&
            (st = vx_gpu_upload(G->g, &G->CS.b, 0, cs, (uint64_t)(2 * n * c->dim_head) * 4)) == VOX_OK)
            st = vx_gpu_upload(G->g, &G->TS.b, 0, emb, sizeof emb);
    }
    if (st == VOX_OK && (st = vx_gpu_begin(G->g)) == VOX_OK) {
        if ((st = rec_time(G, m, 0)) == VOX_OK) st = rec_embed(G, m, 2, n);
        vox_status s2 = vx_gpu_submit(G->g);
        if (st == VOX_OK) st = s2;
    }
    if (st == VOX_OK && (st = vx_gpu_download(G->g, &G->TEMB.b, 0, temb, (uint64_t)d * 4)) == VOX_OK)
        st = vx_gpu_download(G->g, &G->H.b, 0, hb, (uint64_t)(2 * n * d) * 4);
    if (st == VOX_OK && (st = vx_gpu_begin(G->g)) == VOX_OK) {
        st = rec_blocks(G, m, 2, n);
        vox_status s2 = vx_gpu_submit(G->g);
        if (st == VOX_OK) st = s2;
    }
    if (st == VOX_OK) st = vx_gpu_download(G->g, &G->FLOW.b, 0, flow, (uint64_t)(2 * n * md) * 4);
    pthread_mutex_unlock(&G->lock);
    if (st == VOX_OK && tap) {
        tap(tap_ctx, "time_embedding", temb, 1, d);
        tap(tap_ctx, "input_embed", hb, 2 * n, d);
    }
    free(a), free(cs), free(hb), free(temb);
    return st;
}

/* After the last step: the reference frames restored into the state; with from >= 0 its rows
 * [from, d) into Vocos' padded input and Vocos recorded. */
static vox_status rec_finish(f5_gpu *G, const f5_model *m, int64_t d, int64_t ncc, int64_t from, int64_t n_out) {
    const int64_t md = m->c.mel_dim;
    vox_status st = vx_gop_copy(G->g, f5_bind(&G->COND, 0), ncc * md, f5_bind(&G->X, 0), "f5/restore");
    if (st == VOX_OK && from >= 0)
        st = vx_gop_copy(G->g, f5_bind(&G->X, (uint64_t)(from * md)), (d - from) * md, f5_bind(&G->MP, (uint64_t)(3 * md)),
                         "f5/restore");
    if (st == VOX_OK && from >= 0) st = f5_gpu_vocos_record(G, m, d - from, n_out);
    return st;
}

/* The sampler on the device; with from >= 0 Vocos of rows [from, total) follows in the last chain. */
static vox_status run_piece(const f5_model *m, vx_pool *pool, const float *cond_mel, int64_t nc, const int32_t *ids,
                            int64_t nt, int64_t duration, const f5_sample_opts *o, int64_t from, float **mel,
                            int64_t *total, float **audio, int64_t *n_audio) {
    f5_gpu *G = m->gpu;
    const f5_config *c = &m->c;
    const int64_t md = c->mel_dim, td = c->text_dim, in_w = 2 * md + td;
    *mel = NULL;
    *total = 0;
    if (audio) *audio = NULL, *n_audio = 0;
    const int64_t d = f5_total_frames(nt, nc, duration, c->max_duration);
    if (d > F5_POSITIONS)
        return vox_set_error(VOX_ERR_LIMIT, "a piece of %lld frames (%.1f s) is longer than the %d frames the DiT's "
                             "text encoder has positions for: use shorter pieces (max_chars) or a shorter reference",
                             (long long)d, (double)d * c->hop / c->sample_rate, F5_POSITIONS);
    if (o->steps < 1) return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "nfe_step must be at least 1");
    if (from >= d) from = -1;   /* no frames of its own: the caller says so (no audio) */
    const int guided = o->cfg_strength >= 1e-5f, batch = guided ? 2 : 1;
    const int64_t ncc = nc < d ? nc : d;
    vox_status st = VOX_OK;
    float *x = malloc((size_t)(d * md) * sizeof *x), *te = malloc((size_t)(batch * d * td) * sizeof *te);
    float *t = malloc((size_t)(o->steps + 1) * sizeof *t), *ts = malloc((size_t)o->steps * 2 * F5_TIME_FREQS * sizeof *ts);
    float *cs = malloc((size_t)(2 * d * c->dim_head) * sizeof *cs), *a = NULL;
    if (!x || !te || !t || !ts || !cs) {
        st = vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory (a piece of %lld frames)", (long long)d);
        goto done;
    }
    f5_initial_noise(o->seed, o->piece, d, md, x);
    if (o->tap) o->tap(o->tap_ctx, "x0", x, d, md);
    f5_timesteps(o->steps, o->sway, o->use_epss, t);
    if (o->tap) o->tap(o->tap_ctx, "t", t, o->steps + 1, 1);
    double t0 = vx_now_ms();
    st = f5_text_encoder(m, pool, ids, nt, d, 0, te);
    if (st == VOX_OK && guided) st = f5_text_encoder(m, pool, ids, nt, d, 1, te + d * td);
    if (st != VOX_OK) goto done;
    if (o->tap) {
        o->tap(o->tap_ctx, "text_cond", te, d, td);
        if (guided) o->tap(o->tap_ctx, "text_uncond", te + d * td, d, td);
    }
    if (!(a = pack_input(m, batch, d, x, 0, cond_mel, ncc, NULL, te))) {
        st = vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
        goto done;
    }
    for (int32_t s = 0; s < o->steps; s++) time_sinusoids(t[s], ts + (size_t)s * 2 * F5_TIME_FREQS);
    rope_tables(m, d, cs);
    pthread_mutex_lock(&G->lock);
    vx_gpu *g = G->g;
    st = workspace(G, m, batch, d, ncc, o->steps);
    int64_t n_out = 0;
    if (st == VOX_OK && from >= 0) st = f5_gpu_vocos_prepare(G, m, d - from, &n_out);
    if (st == VOX_OK) st = vx_gpu_upload(g, &G->A.b, 0, a, (uint64_t)(batch * d * in_w) * 4);
    if (st == VOX_OK) st = vx_gpu_upload(g, &G->X.b, 0, x, (uint64_t)(d * md) * 4);
    if (st == VOX_OK) st = vx_gpu_upload(g, &G->COND.b, 0, cond_mel, (uint64_t)(ncc * md) * 4);
    if (st == VOX_OK) st = vx_gpu_upload(g, &G->TS.b, 0, ts, (uint64_t)o->steps * 2 * F5_TIME_FREQS * 4);
    if (st == VOX_OK) st = vx_gpu_upload(g, &G->CS.b, 0, cs, (uint64_t)(2 * d * c->dim_head) * 4);
    const int per_chain = o->tap ? 1 : (int)(CHAIN_DISPATCHES / step_dispatches(m) > 0 ? CHAIN_DISPATCHES / step_dispatches(m) : 1);
    for (int32_t s = 0; st == VOX_OK && s < o->steps;) {
        if (cancelled(o)) {
            st = vox_set_error(VOX_ERR_CANCELLED, "cancelled");
            break;
        }
        if ((st = vx_gpu_begin(g)) != VOX_OK) break;
        int32_t s1 = s + per_chain < o->steps ? s + per_chain : o->steps;
        for (; st == VOX_OK && s < s1; s++) {
            if ((st = rec_time(G, m, s)) || (st = rec_embed(G, m, batch, d)) || (st = rec_blocks(G, m, batch, d))) break;
            st = vx_gop_euler_cfg(g, f5_bind(&G->X, 0), f5_bind(&G->FLOW, 0), d, md, guided, t[s + 1] - t[s],
                                  o->cfg_strength, f5_bind(&G->A, 0), in_w, batch, "f5/euler");
        }
        /* the last chain: the reference frames restored, then Vocos (verification taps: a chain of their own) */
        if (st == VOX_OK && s == o->steps && !o->tap) st = rec_finish(G, m, d, ncc, from, n_out);
        vox_status s2 = vx_gpu_submit(g);
        if (st == VOX_OK) st = s2;
        if (st == VOX_OK && o->tap) {   /* verification: one step a chain, the state after it */
            float *fl = malloc((size_t)(batch * d * md) * sizeof *fl), *xs = malloc((size_t)(d * md) * sizeof *xs);
            if (!fl || !xs) st = vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
            if (st == VOX_OK && s == 1 && (st = vx_gpu_download(g, &G->FLOW.b, 0, fl, (uint64_t)(batch * d * md) * 4)) == VOX_OK) {
                o->tap(o->tap_ctx, "flow_cond", fl, d, md);
                if (guided) o->tap(o->tap_ctx, "flow_uncond", fl + d * md, d, md);
            }
            if (st == VOX_OK && (st = vx_gpu_download(g, &G->X.b, 0, xs, (uint64_t)(d * md) * 4)) == VOX_OK)
                o->tap(o->tap_ctx, "trajectory", xs, d, md);
            free(fl), free(xs);
            if (st == VOX_OK && s == o->steps && (st = vx_gpu_begin(g)) == VOX_OK) {
                st = rec_finish(G, m, d, ncc, from, n_out);
                s2 = vx_gpu_submit(g);
                if (st == VOX_OK) st = s2;
            }
        }
    }
    if (st == VOX_OK) st = vx_gpu_download(g, &G->X.b, 0, x, (uint64_t)(d * md) * 4);
    if (st == VOX_OK && from >= 0) {
        float *pcm = malloc((size_t)(n_out ? n_out : 1) * sizeof *pcm);
        if (!pcm) st = vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
        else if ((st = vx_gpu_download(g, &G->PCM.b, 0, pcm, (uint64_t)n_out * 4)) != VOX_OK) free(pcm);
        else *audio = pcm, *n_audio = n_out;
    }
    pthread_mutex_unlock(&G->lock);
    if (st != VOX_OK) goto done;
    if (o->dit_ms) *o->dit_ms += vx_now_ms() - t0;
    *mel = x;
    *total = d;
    x = NULL;
done:
    free(x), free(te), free(t), free(ts), free(cs), free(a);
    return st;
}

vox_status f5_gpu_sample(const f5_model *m, vx_pool *pool, const float *cond_mel, int64_t nc, const int32_t *ids,
                         int64_t nt, int64_t duration, const f5_sample_opts *o, float **mel, int64_t *total) {
    return run_piece(m, pool, cond_mel, nc, ids, nt, duration, o, -1, mel, total, NULL, NULL);
}

vox_status f5_gpu_piece(const f5_model *m, vx_pool *pool, const float *cond_mel, int64_t nc, const int32_t *ids,
                        int64_t nt, int64_t duration, const f5_sample_opts *o, int64_t from, float **mel, int64_t *total,
                        float **audio, int64_t *n) {
    return run_piece(m, pool, cond_mel, nc, ids, nt, duration, o, from < 0 ? 0 : from, mel, total, audio, n);
}
