/* Mel filterbanks (melbank.h): torchaudio's HTK one, number for number as vox.reference.f5.mel builds it,
 * and librosa's slaney one, as vox.reference.qwen3.mel builds it. */
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

/* librosa's slaney mel scale (htk=False): linear below 1 kHz, logarithmic above. */
static const double F_SP = 200.0 / 3;
static const double MIN_LOG_HZ = 1000.0;

static double slaney_logstep(void) { return log(6.4) / 27.0; }
static double slaney_min_log_mel(void) { return MIN_LOG_HZ / F_SP; }

static double hz_to_slaney(double f) {
    if (f >= MIN_LOG_HZ) return slaney_min_log_mel() + log((f > 1e-300 ? f : 1e-300) / MIN_LOG_HZ) / slaney_logstep();
    return f / F_SP;
}

static double slaney_to_hz(double m) {
    if (m >= slaney_min_log_mel()) return MIN_LOG_HZ * exp(slaney_logstep() * (m - slaney_min_log_mel()));
    return F_SP * m;
}

int vx_melbank_slaney(int64_t sample_rate, int64_t n_fft, int64_t n_mels, double fmin, double fmax, float *fb) {
    const int64_t n_bins = n_fft / 2 + 1;
    double *fftfreqs = malloc((size_t)n_bins * sizeof *fftfreqs), *mel_f = malloc((size_t)(n_mels + 2) * sizeof *mel_f);
    double *fdiff = malloc((size_t)(n_mels + 1) * sizeof *fdiff);
    if (!fftfreqs || !mel_f || !fdiff) {
        free(fftfreqs), free(mel_f), free(fdiff);
        return -1;
    }
    /* np.fft.rfftfreq(n, d=1/sr): i * (1 / (n * d)) */
    double d = 1.0 / (double)sample_rate, val = 1.0 / ((double)n_fft * d);
    for (int64_t i = 0; i < n_bins; i++) fftfreqs[i] = (double)i * val;
    /* np.linspace(hz_to_mel(fmin), hz_to_mel(fmax), n + 2): i * step + start, the last = stop */
    double start = hz_to_slaney(fmin), stop = hz_to_slaney(fmax);
    double step = (stop - start) / (double)(n_mels + 1);
    for (int64_t i = 0; i < n_mels + 2; i++) mel_f[i] = slaney_to_hz((double)i * step + start);
    mel_f[n_mels + 1] = slaney_to_hz(stop);
    for (int64_t i = 0; i < n_mels + 1; i++) fdiff[i] = mel_f[i + 1] - mel_f[i];
    for (int64_t i = 0; i < n_mels; i++) {
        double enorm = 2.0 / (mel_f[i + 2] - mel_f[i]);
        for (int64_t j = 0; j < n_bins; j++) {
            double lower = -(mel_f[i] - fftfreqs[j]) / fdiff[i];
            double upper = (mel_f[i + 2] - fftfreqs[j]) / fdiff[i + 1];
            double w = lower < upper ? lower : upper;
            float w32 = (float)(w > 0 ? w : 0.0);
            fb[i * n_bins + j] = (float)((double)w32 * enorm);
        }
    }
    free(fftfreqs), free(mel_f), free(fdiff);
    return 0;
}
