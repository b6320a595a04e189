/* The prosody predictor (duration encoder, durations, F0 and N curves) and the text encoder. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../error.h"
#include "kokoro.h"


/* TextEncoder: embedding, three [conv k5 -> LayerNorm(channels) -> LeakyReLU 0.2], a BiLSTM. */
vox_status kk_text_encoder(const kk_model *m, vx_pool *pool, const int32_t *ids, int64_t n, float *out) {
    const int64_t H = m->hidden;
    vox_status st = VOX_OK;
    float *x = malloc((size_t)(n * H) * sizeof *x), *y = malloc((size_t)(n * H) * sizeof *y);
    if (!x || !y) {
        st = vox_oom();
        goto done;
    }
    vx_gather_rows(&m->te_emb, ids, n, x);
    for (int i = 0; i < 3; i++) {
        int64_t t;
        if ((st = kk_conv1d(pool, &m->te_cnn[i], x, n, 1, 1, 2, 2, y, &t)) != VOX_OK) goto done;
        vx_layer_norm(y, m->te_ln_g[i], m->te_ln_b[i], n, H, 1e-5f, x);
        vx_nn_leaky_relu(x, n * H, 0.2f);
    }
    st = vx_nn_bilstm(pool, &m->te_lstm, x, n, out);
done:
    free(x);
    free(y);
    return st;
}

/* DurationEncoder: x = [d_en | s]; three times: BiLSTM, AdaLayerNorm(s), then [x | s] again. */
vox_status kk_duration_encoder(const kk_model *m, vx_pool *pool, const float *d_en, int64_t n, const float *s,
                               float *d) {
    const int64_t H = m->hidden, W = H + KK_STYLE;
    float *h = malloc((size_t)(n * H + 2 * H) * sizeof *h);
    if (!h) return vox_oom();
    float *gb = h + n * H;
    for (int64_t i = 0; i < n; i++) {
        memcpy(d + i * W, d_en + i * H, (size_t)H * sizeof *d);
        memcpy(d + i * W + H, s, KK_STYLE * sizeof *d);
    }
    for (int l = 0; l < 3; l++) {
        vox_status st = vx_nn_bilstm(pool, &m->dur_lstm[l], d, n, h);
        if (st != VOX_OK) {
            free(h);
            return st;
        }
        vx_layer_norm(h, NULL, NULL, n, H, 1e-5f, h);
        vx_linear(pool, &m->dur_ada[l], m->dur_ada_b[l], s, 1, gb);
        for (int64_t i = 0; i < n; i++)
            for (int64_t c = 0; c < H; c++) d[i * W + c] = (1.0f + gb[c]) * h[i * H + c] + gb[H + c];
    }
    free(h);
    return VOX_OK;
}

/* Integer durations exactly as KModel: round(sum(sigmoid(proj(lstm(d)))) / speed), at least 1
 * (round half to even, as torch.round). raw (optional) gets the unrounded values. */
vox_status kk_durations(const kk_model *m, vx_pool *pool, const float *d, int64_t n, float speed, float *raw,
                        int32_t *dur) {
    const int64_t H = m->hidden, M = m->max_dur;
    float *x = malloc((size_t)(n * (H + M)) * sizeof *x);
    if (!x) return vox_oom();
    float *p = x + n * H;
    vox_status st = vx_nn_bilstm(pool, &m->pred_lstm, d, n, x);
    if (st == VOX_OK) {
        vx_linear(pool, &m->dur_proj, m->dur_proj_b, x, n, p);
        vx_sigmoid(p, n * M, p);
        for (int64_t i = 0; i < n && st == VOX_OK; i++) {
            float sum = 0.0f;
            for (int64_t j = 0; j < M; j++) sum += p[i * M + j];
            float v = sum / speed;
            if (raw) raw[i] = v;
            /* a sum of sigmoids is in [0, M]: NaN only from non-finite weights or style values, which
             * must not reach the cast (undefined behaviour) */
            if (!isfinite(v)) {
                st = vox_set_error(VOX_ERR_FORMAT, "the duration predictor computed NaN: the model's weights or "
                                   "the voice's style values are not finite (vox inspect --check MODEL)");
                break;
            }
            float r = nearbyintf(v);
            dur[i] = r < 1.0f ? 1 : (int32_t)r;
        }
    }
    free(x);
    return st;
}

/* F0Ntrain: the shared BiLSTM over the expanded features, then the F0 and N branches
 * (AdainResBlk1d x3, the second upsampling 2x) and their 1x1 projections: f0, nn [2 frames]. */
vox_status kk_f0n(const kk_model *m, vx_pool *pool, const float *en, int64_t frames, const float *s, float *f0,
                  float *nn) {
    const int64_t H = m->hidden;
    float *x = malloc((size_t)(frames * H) * sizeof *x);
    if (!x) return vox_oom();
    vox_status st = vx_nn_bilstm(pool, &m->shared, en, frames, x);
    for (int br = 0; br < 2 && st == VOX_OK; br++) {
        const kk_resblk *b = br ? m->n : m->f0;
        float *cur = x, *next = NULL;
        int64_t t = frames;
        for (int i = 0; i < 3 && st == VOX_OK; i++) {
            int64_t t2;
            st = kk_resblk_run(pool, &b[i], s, cur, t, &next, &t2);
            if (cur != x) free(cur);
            cur = st == VOX_OK ? next : NULL;
            t = t2;
        }
        if (st == VOX_OK) {
            int64_t tt;
            st = kk_conv1d(pool, br ? &m->n_proj : &m->f0_proj, cur, t, 1, 1, 0, 0, br ? nn : f0, &tt);
        }
        if (cur != x) free(cur);
    }
    free(x);
    return st;
}
