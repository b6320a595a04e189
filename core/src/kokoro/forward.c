/* One span through the whole model, as KModel.forward_with_tokens: PL-BERT -> bert_encoder ->
 * duration encoder -> integer durations -> alignment expansion -> F0/N, text encoder -> decoder ->
 * generator -> iSTFT. */
#include <stdlib.h>
#include <string.h>

#include "../engine.h"
#include "../error.h"
#include "kokoro.h"

const char *const kk_stage_names[KK_STAGES + 1] = {"bert", "predictor", "text_encoder", "f0n", "decoder", "generator",
                                               "istft", NULL};

static int cancelled(const kk_forward_opts *o) { return o->cancel && atomic_load(o->cancel); }

#define TAP(name, p, r, c) \
    do { \
        if (opts->tap) opts->tap(opts->tap_ctx, name, p, r, c); \
    } while (0)
#define STAGE_END(k) \
    do { \
        double now_ = vx_now_ms(); \
        if (opts->stage_ms) opts->stage_ms[k] += now_ - t0; \
        t0 = now_; \
        if (cancelled(opts)) { \
            st = vox_set_error(VOX_ERR_CANCELLED, "cancelled"); \
            goto done; \
        } \
    } while (0)

vox_status kk_forward(const kk_model *m, vx_pool *pool, const int32_t *ids, int64_t n, const float *style,
                      const kk_forward_opts *opts, float **audio, int64_t *n_audio) {
    *audio = NULL;
    *n_audio = 0;
    if (n < 2 || n > m->bert_ctx)
        return vox_set_error(VOX_ERR_LIMIT, "a Kokoro span takes 1 to %lld phonemes; this one has %lld",
                             (long long)(m->bert_ctx - 2), (long long)(n - 2));
    for (int64_t i = 0; i < n; i++)
        if (ids[i] < 0 || ids[i] >= m->n_token)
            return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "token id %d is outside the Kokoro vocabulary", ids[i]);
    const int64_t H = m->hidden, W = H + KK_STYLE;
    const float *s_pred = style + KK_STYLE, *s_dec = style;
    vox_status st = VOX_OK;
    float *bert = malloc((size_t)(n * m->bert_hidden) * sizeof *bert);
    float *d_en = malloc((size_t)(n * H) * sizeof *d_en);
    float *d = malloc((size_t)(n * W) * sizeof *d);
    float *raw = malloc((size_t)n * sizeof *raw);
    int32_t *dur = malloc((size_t)n * sizeof *dur);
    float *t_en = malloc((size_t)(n * H) * sizeof *t_en);
    float *en = NULL, *f0 = NULL, *asr = NULL, *x = NULL, *spec = NULL, *out = NULL;
    double t0 = vx_now_ms();
    if (!bert || !d_en || !d || !raw || !dur || !t_en) {
        st = vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
        goto done;
    }
    if ((st = kk_albert(m, pool, ids, n, bert)) != VOX_OK) goto done;
    TAP("bert", bert, n, m->bert_hidden);
    vx_linear(pool, &m->bert_enc, m->bert_enc_b, bert, n, d_en);
    TAP("d_en", d_en, n, H);
    STAGE_END(KK_ST_BERT);
    if ((st = kk_duration_encoder(m, pool, d_en, n, s_pred, d)) != VOX_OK) goto done;
    TAP("d", d, n, W);
    if ((st = kk_durations(m, pool, d, n, opts->speed, raw, dur)) != VOX_OK) goto done;
    TAP("dur_raw", raw, n, 1);
    int64_t F = 0;
    for (int64_t i = 0; i < n; i++) {
        if (opts->durations) dur[i] = opts->durations[i];  /* teacher-forced: the rest runs on the given alignment */
        raw[i] = (float)dur[i];
        F += dur[i];
    }
    TAP("durations", raw, n, 1);
    /* alignment expansion: frame f reads the token it belongs to */
    en = malloc((size_t)(F * W) * sizeof *en);
    f0 = malloc((size_t)(4 * F) * sizeof *f0);
    asr = malloc((size_t)(F * H) * sizeof *asr);
    if (!en || !f0 || !asr) {
        st = vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
        goto done;
    }
    for (int64_t i = 0, f = 0; i < n; i++)
        for (int32_t r = 0; r < dur[i]; r++, f++) memcpy(en + f * W, d + i * W, (size_t)W * sizeof *en);
    TAP("en", en, F, W);
    free(bert), free(d_en), free(d);  /* the rest runs on en, the text encoder and the decoder */
    bert = d_en = d = NULL;
    STAGE_END(KK_ST_PREDICTOR);
    if ((st = kk_text_encoder(m, pool, ids, n, t_en)) != VOX_OK) goto done;
    TAP("t_en", t_en, n, H);
    for (int64_t i = 0, f = 0; i < n; i++)
        for (int32_t r = 0; r < dur[i]; r++, f++) memcpy(asr + f * H, t_en + i * H, (size_t)H * sizeof *asr);
    STAGE_END(KK_ST_TEXT);
    float *nn = f0 + 2 * F;
    if ((st = kk_f0n(m, pool, en, F, s_pred, f0, nn)) != VOX_OK) goto done;
    TAP("F0", f0, 2 * F, 1);
    TAP("N", nn, 2 * F, 1);
    free(en), free(t_en);
    en = t_en = NULL;
    STAGE_END(KK_ST_F0N);
    if ((st = kk_decoder(m, pool, asr, f0, nn, F, s_dec, &x)) != VOX_OK) goto done;
    TAP("dec", x, 2 * F, 512);
    free(asr);
    asr = NULL;
    STAGE_END(KK_ST_DECODER);
    int64_t frames;
    if ((st = kk_generator(m, pool, x, 2 * F, s_dec, f0, opts, &spec, &frames)) != VOX_OK) goto done;
    TAP("spec", spec, frames, m->n_fft + 2);
    STAGE_END(KK_ST_GENERATOR);
    int64_t ns = (frames - 1) * m->hop;
    out = malloc((size_t)ns * sizeof *out);
    if (!out) {
        st = vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
        goto done;
    }
    if ((st = kk_istft(m, pool, spec, frames, out)) != VOX_OK) goto done;
    TAP("audio", out, ns, 1);
    STAGE_END(KK_ST_ISTFT);
    *audio = out;
    *n_audio = ns;
    out = NULL;
done:
    free(bert), free(d_en), free(d), free(raw), free(dur), free(t_en);
    free(en), free(f0), free(asr), free(x), free(spec), free(out);
    return st;
}
