/* The HTK mel filterbank of torchaudio (melbank.h), number for number as vox.reference.f5.mel builds it. */
#include "melbank.h"

#include <math.h>
#include <stdlib.h>

void vx_linspace_f32(float start, float end, int64_t steps, float *out) {
    if (steps == 1) {
        out[0] = start;
        return;
    }
    const float step = (end - start) / (float)(steps - 1);
    for (int64_t i = 0; i < steps; i++)
        out[i] = i < steps / 2 ? fmaf(step, (float)i, start) : fmaf(-step, (float)(steps - 1 - i), end);
}

void vx_melbank_htk(int64_t sample_rate, int64_t n_fft, int64_t n_mels, float *fb) {
    const int64_t n_freqs = n_fft / 2 + 1;
    float *freqs = malloc((size_t)n_freqs * sizeof *freqs), *f_pts = malloc((size_t)(n_mels + 2) * sizeof *f_pts);
    if (!freqs || !f_pts) {   /* callers size their buffers; a failed scratch allocation leaves zeros */
        for (int64_t i = 0; i < n_mels * n_freqs; i++) fb[i] = 0.0f;
        free(freqs), free(f_pts);
        return;
    }
    vx_linspace_f32(0.0f, (float)(sample_rate / 2), n_freqs, freqs);
    const double m_max = 2595.0 * log10(1.0 + (double)(sample_rate / 2) / 700.0);
    vx_linspace_f32(0.0f, (float)m_max, n_mels + 2, f_pts);
    for (int64_t i = 0; i < n_mels + 2; i++) {   /* 700 (10^(m / 2595) - 1), each step in float */
        float p = f_pts[i] / 2595.0f;
        float pw = (float)pow(10.0, (double)p);
        f_pts[i] = 700.0f * (pw - 1.0f);
    }
    for (int64_t k = 0; k < n_freqs; k++)
        for (int64_t j = 0; j < n_mels; j++) {
            float down = (-1.0f * (f_pts[j] - freqs[k])) / (f_pts[j + 1] - f_pts[j]);
            float up = (f_pts[j + 2] - freqs[k]) / (f_pts[j + 2] - f_pts[j + 1]);
            float v = down < up ? down : up;
            fb[j * n_freqs + k] = v > 0.0f ? v : 0.0f;
        }
    free(freqs), free(f_pts);
}
