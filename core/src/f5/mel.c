/* The log-mel spectrogram of F5-TTS's "vocos" features (vox.reference.f5.mel; f5_tts
 * get_vocos_mel_spectrogram = torchaudio MelSpectrogram(power=1, center=True, norm=None, htk)):
 *   mel = log(max(fb . |STFT(x)|, 1e-5))            [1 + n / hop][n_mels] (time-major)
 * with the centred, reflect-padded STFT of dsp/stft.h and the HTK filterbank of dsp/melbank.h. */
#include <math.h>
#include <stdlib.h>

#include "../dsp/stft.h"
#include "../error.h"
#include "f5.h"

vox_status f5_log_mel(const f5_model *m, vx_pool *pool, const float *x, int64_t n, float **out, int64_t *frames) {
    const f5_config *c = &m->c;
    *out = NULL;
    *frames = 0;
    if (n <= c->n_fft / 2)
        return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "the reference audio is too short: %lld samples; the centred "
                             "STFT needs more than %lld", (long long)n, (long long)(c->n_fft / 2));
    const int64_t t = vx_stft_frames(n, c->hop), bins = c->n_fft / 2 + 1;
    float *mag = malloc((size_t)(t * bins) * sizeof *mag), *mel = malloc((size_t)(t * c->n_mels) * sizeof *mel);
    if (!mag || !mel) {
        free(mag), free(mel);
        return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory (mel of %lld samples)", (long long)n);
    }
    vox_status st = vx_stft_magnitude(pool, x, n, c->n_fft, c->hop, m->mel_window, mag);
    if (st == VOX_OK) {
        vx_linear(pool, &m->melbank_mat, NULL, mag, t, mel);
        for (int64_t i = 0; i < t * c->n_mels; i++) mel[i] = logf(mel[i] > 1e-5f ? mel[i] : 1e-5f);
    }
    free(mag);
    if (st != VOX_OK) {
        free(mel);
        return st;
    }
    *out = mel;
    *frames = t;
    return VOX_OK;
}
