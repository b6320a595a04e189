/* Vocos (Siuzdak 2023; vocos 0.1.0 Vocos.decode with a VocosBackbone and an ISTFTHead; vox.reference.f5.vocos):
 *   backbone  Conv1d(n_mels -> dim, k 7, pad 3), LayerNorm, ConvNeXt blocks with layer scale, LayerNorm
 *   head      Linear(dim -> n_fft + 2): log-magnitudes and phases; S = min(exp(logmag), 100) e^(i phase)
 *   audio     ISTFT (Hann n_fft, hop): "center" trims n_fft / 2 each side (hop (T - 1) samples), "same"
 *             (n_fft - hop) / 2 (hop T samples). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../dsp/stft.h"
#include "../error.h"
#include "f5.h"

typedef struct spec_job {
    const float *y;   /* [frames][n_fft + 2] */
    float *re, *im;   /* [frames][bins] */
    int64_t bins;
} spec_job;

static void spec_rows(void *ctx, int64_t f0, int64_t f1) {
    const spec_job *j = ctx;
    const int64_t bins = j->bins;
    for (int64_t f = f0; f < f1; f++) {
        const float *y = j->y + f * 2 * bins;
        for (int64_t b = 0; b < bins; b++) {
            float mag = (float)exp((double)y[b]);
            if (!(mag <= 100.0f)) mag = 100.0f;   /* clip(max=1e2); exp never gives NaN from a finite value */
            double ph = y[bins + b];
            j->re[f * bins + b] = (float)((double)mag * cos(ph));
            j->im[f * bins + b] = (float)((double)mag * sin(ph));
        }
    }
}

vox_status f5_vocos_decode(const f5_model *m, vx_pool *pool, const float *mel, int64_t frames, float **audio,
                           int64_t *n, f5_tap_fn tap, void *tap_ctx) {
    const f5_config *c = &m->c;
    const f5_vocos *v = &m->voc;
    const int64_t vd = c->voc_dim, bins = c->voc_n_fft / 2 + 1;
    const vx_istft_padding pad = c->voc_same_padding ? VX_ISTFT_SAME : VX_ISTFT_CENTER;
    *audio = NULL;
    *n = 0;
    if (frames < 1) return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "Vocos: no mel frames to decode");
    const int64_t ns = vx_istft_length(frames, c->voc_hop, pad);
    vox_status st = VOX_OK;
    float *x = malloc((size_t)(frames * vd) * sizeof *x), *y = malloc((size_t)(frames * 2 * bins) * sizeof *y);
    float *re = malloc((size_t)(frames * bins) * sizeof *re), *im = malloc((size_t)(frames * bins) * sizeof *im);
    float *out = malloc((size_t)(ns ? ns : 1) * sizeof *out);
    if (!x || !y || !re || !im || !out) {
        st = vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory (Vocos over %lld frames)", (long long)frames);
        goto done;
    }
    if ((st = vx_nn_conv1d(pool, &v->embed, v->embed_b, mel, frames, c->voc_in, vd, 7, 1, 3, 3, x)) != VOX_OK) goto done;
    vx_nn_layer_norm(pool, x, v->norm_w, v->norm_b, frames, vd, 1e-6f, x);
    for (int64_t i = 0; i < c->voc_layers && st == VOX_OK; i++) st = vx_nn_convnext(pool, &v->blocks[i], x, frames);
    if (st != VOX_OK) goto done;
    vx_nn_layer_norm(pool, x, v->final_w, v->final_b, frames, vd, 1e-6f, x);
    if (tap) tap(tap_ctx, "vocos_features", x, frames, vd);
    vx_linear(pool, &v->head, v->head_b, x, frames, y);
    if (tap) tap(tap_ctx, "vocos_head", y, frames, 2 * bins);
    spec_job sj = {y, re, im, bins};
    vx_pool_for(pool, frames, 8, spec_rows, &sj);
    if ((st = vx_istft(pool, re, im, frames, c->voc_n_fft, c->voc_hop, v->window, pad, out)) != VOX_OK) goto done;
    *audio = out;
    *n = ns;
    out = NULL;
done:
    free(x), free(y), free(re), free(im), free(out);
    return st;
}
