/* The STFT of very short frames as products with a windowed DFT basis (dft_stft.h). */
#include "dft_stft.h"

#include <math.h>
#include <stdlib.h>

#include "../error.h"
#include "../kernels.h"
#include "stft.h"

void vx_dft_stft_tables(int64_t n, float *window, float *basis, float *ibasis) {
    const int64_t bins = n / 2 + 1;
    const double pi = 3.14159265358979323846;
    for (int64_t i = 0; i < n; i++) window[i] = (float)(0.5 - 0.5 * cos(2.0 * pi * (double)i / (double)n));
    for (int64_t k = 0; k < bins; k++)
        for (int64_t i = 0; i < n; i++) {
            double ang = 2.0 * pi * (double)((k * i) % n) / (double)n, w = window[i];
            basis[k * n + i] = (float)(w * cos(ang));
            basis[(bins + k) * n + i] = (float)(-w * sin(ang));
            /* x[i] = (1/n) (Re X0 + Re X_{n/2} (-1)^i + 2 sum_{0<k<n/2} Re X_k cos - Im X_k sin) */
            double scale = (k == 0 || 2 * k == n) ? 1.0 / (double)n : 2.0 / (double)n;
            ibasis[i * 2 * bins + k] = (float)(w * scale * cos(ang));
            ibasis[i * 2 * bins + bins + k] = (k == 0 || 2 * k == n) ? 0.0f : (float)(-w * scale * sin(ang));
        }
}

/* Frames [begin, end) per task: the reflect-padded frames gathered, times the windowed DFT basis
 * (vx_linear: the same bits for any number of rows), then magnitude and phase, all in the task's cache. */
#define TASK 64
typedef struct stft_job {
    const float *src;
    const vx_mat *basis;
    float *out;
    int64_t n, nfft, hop, pad, bins;
} stft_job;

static void stft_frames(void *ctx, int64_t begin, int64_t end) {
    const stft_job *q = ctx;
    const int64_t nfft = q->nfft, bins = q->bins, N = q->n;
    float fr[TASK * VX_DFT_STFT_MAX_NFFT], ri[TASK * (VX_DFT_STFT_MAX_NFFT + 2)];
    for (int64_t f0 = begin; f0 < end; f0 += TASK) {
        const int64_t nf = end - f0 < TASK ? end - f0 : TASK;
        for (int64_t f = 0; f < nf; f++)
            for (int64_t i = 0; i < nfft; i++) fr[f * nfft + i] = q->src[vx_reflect_index((f0 + f) * q->hop + i - q->pad, N)];
        vx_linear(NULL, q->basis, NULL, fr, nf, ri);
        for (int64_t f = 0; f < nf; f++)
            for (int64_t k = 0; k < bins; k++) {
                float re = ri[f * 2 * bins + k], im = ri[f * 2 * bins + bins + k];
                q->out[(f0 + f) * 2 * bins + k] = hypotf(re, im);
                q->out[(f0 + f) * 2 * bins + bins + k] = atan2f(im, re);
            }
    }
}

vox_status vx_dft_stft_polar(vx_pool *pool, const float *basis, const float *x, int64_t n, int64_t n_fft, int64_t hop,
                             float *out) {
    if (n_fft > VX_DFT_STFT_MAX_NFFT)
        return vox_set_error(VOX_ERR_UNSUPPORTED, "DFT-basis STFT: n_fft %lld > %d", (long long)n_fft,
                             VX_DFT_STFT_MAX_NFFT);
    if (n <= n_fft / 2)
        return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "the signal is too short for a centred STFT: %lld samples, it "
                             "needs more than %lld", (long long)n, (long long)(n_fft / 2));
    const int64_t bins = n_fft / 2 + 1;
    vx_mat b = {.dtype = VOX_DTYPE_F32, .rows = 2 * bins, .cols = n_fft, .data = basis};
    stft_job j = {.src = x, .basis = &b, .out = out, .n = n, .nfft = n_fft, .hop = hop, .pad = n_fft / 2, .bins = bins};
    vx_pool_for(pool, n / hop + 1, TASK, stft_frames, &j);
    return VOX_OK;
}

vox_status vx_dft_istft(vx_pool *pool, const float *ibasis, const float *window, const float *spec, int64_t frames,
                        int64_t n_fft, int64_t hop, float *audio) {
    const int64_t bins = n_fft / 2 + 1, pad = n_fft / 2, len = (frames - 1) * hop + n_fft;
    float *fr = malloc((size_t)(frames * n_fft) * sizeof *fr);
    float *y = calloc((size_t)(2 * len), sizeof *y);
    if (!fr || !y) {
        free(fr), free(y);
        return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    }
    vx_mat basis = {.dtype = VOX_DTYPE_F32, .rows = n_fft, .cols = 2 * bins, .data = ibasis};
    vx_linear(pool, &basis, NULL, spec, frames, fr);
    float *env = y + len;
    for (int64_t f = 0; f < frames; f++)
        for (int64_t i = 0; i < n_fft; i++) {
            y[f * hop + i] += fr[f * n_fft + i];
            env[f * hop + i] += window[i] * window[i];
        }
    for (int64_t n = 0; n < (frames - 1) * hop; n++) {
        float e = env[n + pad];
        audio[n] = e > 1e-11f ? y[n + pad] / e : y[n + pad];
    }
    free(fr), free(y);
    return VOX_OK;
}
