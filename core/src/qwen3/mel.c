/* The speaker encoder's front end: vox.reference.qwen3.mel (= qwen_tts mel_spectrogram) in C.
 *
 *   filterbank  librosa.filters.mel(sr=24000, n_fft=1024, n_mels=128, fmin=0, fmax=12000): slaney mel
 *               scale and norm, computed in double at load with librosa's (numpy's) steps, the triangles
 *               rounded to float before the norm is applied, and the product rounded again
 *   window      torch.hann_window(1024): cos(k * float(2 pi / n)) * -0.5 + 0.5 in float
 *   frames      reflect padding of 384 on both sides, frames of 1024 every 256 (center=False)
 *   STFT        vx_rfft (double inside, re/im rounded to float) of the float windowed frame
 *   magnitude   sqrt(re^2 + im^2 + 1e-9) in float
 *   mel         filterbank . magnitude (vx_linear), log(max(mel, 1e-5))
 * Output time-major: [frames][128]. */
#include <math.h>
#include <stdlib.h>

#include "../dsp/melbank.h"
#include "../dsp/stft.h"
#include "../error.h"
#include "voice_encoder.h"

#define SR 24000
#define NFFT Q3_MEL_NFFT
#define HOP Q3_MEL_HOP
#define NMELS Q3_MEL_BINS
#define NBINS (NFFT / 2 + 1)
#define FMIN 0.0
#define FMAX 12000.0

struct q3_mel {
    float fb[NMELS * NBINS];
    float window[NFFT];
    vx_mat fb_mat;
};

vox_status q3_mel_create(q3_mel **out) {
    *out = NULL;
    q3_mel *m = calloc(1, sizeof *m);
    if (!m) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    if (vx_melbank_slaney(SR, NFFT, NMELS, FMIN, FMAX, m->fb) != 0) {
        free(m);
        return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    }
    vx_hann_window(NFFT, m->window);
    m->fb_mat = (vx_mat){.dtype = VOX_DTYPE_F32, .rows = NMELS, .cols = NBINS, .data = m->fb, .scales = NULL};
    *out = m;
    return VOX_OK;
}

void q3_mel_free(q3_mel *m) { free(m); }

const float *q3_mel_filterbank(const q3_mel *m) { return m->fb; }

int64_t q3_mel_frames(int64_t n) { return vx_stft_frames_padded(n, NFFT, HOP, (NFFT - HOP) / 2); }

vox_status q3_mel_spectrogram(const q3_mel *m, vx_pool *pool, const float *wav, int64_t n, float *out) {
    int64_t pad = (NFFT - HOP) / 2;
    if (n <= pad)
        return vox_set_error(VOX_ERR_INVALID_ARGUMENT,
                             "audio too short for the speaker encoder's mel front end: %lld samples at 24 kHz, "
                             "reflect padding needs more than %lld",
                             (long long)n, (long long)pad);
    int64_t frames = q3_mel_frames(n);
    float *mag = malloc((size_t)frames * NBINS * sizeof *mag);
    if (!mag) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory (%lld mel frames)", (long long)frames);
    vox_status st = vx_stft_magnitude_padded(pool, wav, n, NFFT, HOP, pad, m->window, 1e-9f, mag);
    if (st != VOX_OK) {
        free(mag);
        return st;
    }
    vx_linear(pool, &m->fb_mat, NULL, mag, frames, out);
    free(mag);
    for (int64_t i = 0; i < frames * NMELS; i++) out[i] = logf(out[i] > 1e-5f ? out[i] : 1e-5f);
    return VOX_OK;
}
