/* Conditional flow matching sampling (vox.reference.f5.cfm; f5_tts CFM.sample with torchdiffeq's Euler):
 *
 *   cond = [log-mel of the reference | zeros]                 [D][n_mels], D = total frames
 *   D    = min(max(max(len(text), len(ref mel)) + 1, duration), max_duration)
 *   t_0..t_S: EPSS grid (5/6/7/10/12/16 steps, eighths of 1/32) when use_epss, else linspace(0, 1, S + 1);
 *             then sway sampling t <- t + s (cos(pi/2 t) - 1 + t)
 *   v    = v_c + (v_c - v_u) cfg_strength       (both branches in one DiT batch; cfg < 1e-5: v_c alone)
 *   x_{k+1} = x_k + (t_{k+1} - t_k) v(t_k, x_k)   (float32)
 *   out  = [ref mel | x_S[len(ref mel):]]
 * Every step is a function of the state, the time and the weights only, so the trajectory is the same
 * for any thread count. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../dsp/melbank.h"
#include "../engine.h"
#include "../error.h"
#include "f5.h"

#define F5_POSITIONS 8192   /* the text encoder's sinusoid table (TextEmbedding.precompute_max_pos) */

static const struct {
    int steps;
    int t[17];
} EPSS[] = {
    {5, {0, 2, 4, 8, 16, 32}},
    {6, {0, 2, 4, 6, 8, 16, 32}},
    {7, {0, 2, 4, 6, 8, 16, 24, 32}},
    {10, {0, 2, 4, 6, 8, 12, 16, 20, 24, 28, 32}},
    {12, {0, 2, 4, 6, 8, 10, 12, 14, 16, 20, 24, 28, 32}},
    {16, {0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 16, 20, 24, 28, 32}},
};

int f5_epss_grid(int32_t steps, float *t) {
    for (size_t i = 0; i < sizeof EPSS / sizeof EPSS[0]; i++)
        if (EPSS[i].steps == steps) {
            for (int k = 0; k <= steps; k++) t[k] = (1.0f / 32.0f) * (float)EPSS[i].t[k];
            return 1;
        }
    return 0;
}

void f5_timesteps(int32_t steps, float sway, int use_epss, float *t) {
    if (!(use_epss && f5_epss_grid(steps, t))) vx_linspace_f32(0.0f, 1.0f, steps + 1, t);
    if (sway != 0.0f) {   /* sway 0 is the identity (the official None) */
        const float half_pi = (float)(M_PI / 2);
        for (int k = 0; k <= steps; k++) {
            float c = (float)cos((double)(half_pi * t[k]));
            t[k] = t[k] + sway * (c - 1.0f + t[k]);
        }
    }
}

int64_t f5_total_frames(int64_t text_len, int64_t cond_frames, int64_t duration, int64_t max_duration) {
    int64_t d = (text_len > cond_frames ? text_len : cond_frames) + 1;
    if (duration > d) d = duration;
    return d < max_duration ? d : max_duration;
}

static int cancelled(const f5_sample_opts *o) { return o->cancel && atomic_load(o->cancel); }

vox_status f5_sample(const f5_model *m, vx_pool *pool, const float *cond_mel, int64_t nc, const int32_t *ids,
                     int64_t nt, int64_t duration, const f5_sample_opts *o, float **mel, int64_t *total) {
    const f5_config *c = &m->c;
    const int64_t md = c->mel_dim, td = c->text_dim;
    *mel = NULL;
    *total = 0;
    const int64_t d = f5_total_frames(nt, nc, duration, c->max_duration);
    if (d > F5_POSITIONS)
        return vox_set_error(VOX_ERR_LIMIT, "a piece of %lld frames (%.1f s) is longer than the %d frames the DiT's "
                             "text encoder has positions for: use shorter pieces (max_chars) or a shorter reference",
                             (long long)d, (double)d * c->hop / c->sample_rate, F5_POSITIONS);
    if (o->steps < 1) return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "nfe_step must be at least 1");
    const int guided = o->cfg_strength >= 1e-5f, batch = guided ? 2 : 1;
    vox_status st = VOX_OK;
    float *x = malloc((size_t)(d * md) * sizeof *x);
    float *xin = malloc((size_t)(batch * d * md) * sizeof *xin), *cond = calloc((size_t)(batch * d * md), sizeof *cond);
    float *te = malloc((size_t)(batch * d * td) * sizeof *te), *flow = malloc((size_t)(batch * d * md) * sizeof *flow);
    float *t = malloc((size_t)(o->steps + 1) * sizeof *t), *temb = malloc((size_t)(o->steps * c->dim) * sizeof *temb);
    float *mods = malloc((size_t)(o->steps * (6 * c->depth + 2) * c->dim) * sizeof *mods);
    if (!x || !xin || !cond || !te || !flow || !t || !temb || !mods) {
        st = vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory (a piece of %lld frames)", (long long)d);
        goto done;
    }
    /* the conditional branch's cond: the reference mel then zeros; the unconditional one's stays 0 */
    memcpy(cond, cond_mel, (size_t)((nc < d ? nc : d) * md) * sizeof *cond);
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
    /* every step's time embedding and modulations up front: the modulation matrices (a sixth of the
     * DiT's weights) are then read once per piece instead of once per step */
    for (int32_t s = 0; s < o->steps && st == VOX_OK; s++) st = f5_time_embedding(m, pool, t[s], temb + s * c->dim);
    if (st == VOX_OK) st = f5_dit_modulations(m, pool, temb, o->steps, mods);
    if (st != VOX_OK) goto done;
    const int64_t per = (6 * c->depth + 2) * c->dim;
    const float cs = o->cfg_strength;
    for (int32_t s = 0; s < o->steps; s++) {
        if (cancelled(o)) {
            st = vox_set_error(VOX_ERR_CANCELLED, "cancelled");
            goto done;
        }
        for (int b = 0; b < batch; b++) memcpy(xin + b * d * md, x, (size_t)(d * md) * sizeof *x);
        if ((st = f5_dit(m, pool, batch, d, xin, cond, te, temb + s * c->dim, mods + s * per, flow, NULL, NULL, o->prof)) !=
            VOX_OK)
            goto done;
        if (s == 0 && o->tap) {
            o->tap(o->tap_ctx, "flow_cond", flow, d, md);
            if (guided) o->tap(o->tap_ctx, "flow_uncond", flow + d * md, d, md);
        }
        const float dt = t[s + 1] - t[s];
        const float *vc = flow, *vu = flow + d * md;
        for (int64_t i = 0; i < d * md; i++) {
            float vel = guided ? vc[i] + (vc[i] - vu[i]) * cs : vc[i];
            x[i] = x[i] + dt * vel;
        }
        if (o->tap) o->tap(o->tap_ctx, "trajectory", x, d, md);
    }
    memcpy(x, cond_mel, (size_t)((nc < d ? nc : d) * md) * sizeof *x);   /* the reference frames restored */
    if (o->dit_ms) *o->dit_ms += vx_now_ms() - t0;
    *mel = x;
    *total = d;
    x = NULL;
done:
    free(x), free(xin), free(cond), free(te), free(flow), free(t), free(temb), free(mods);
    return st;
}
