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
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

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
    vx_rfft *fft;
    vx_mat fb_mat;
};

/* librosa's slaney mel scale (htk=False), as vox.reference.qwen3.mel writes it. */
static const double F_SP = 200.0 / 3;
static const double MIN_LOG_HZ = 1000.0;

static double logstep(void) { return log(6.4) / 27.0; }
static double min_log_mel(void) { return MIN_LOG_HZ / F_SP; }

static double hz_to_mel(double f) {
    if (f >= MIN_LOG_HZ) return min_log_mel() + log((f > 1e-300 ? f : 1e-300) / MIN_LOG_HZ) / logstep();
    return f / F_SP;
}

static double mel_to_hz(double m) {
    if (m >= min_log_mel()) return MIN_LOG_HZ * exp(logstep() * (m - min_log_mel()));
    return F_SP * m;
}

static void build_filterbank(float *fb) {
    double fftfreqs[NBINS], mel_f[NMELS + 2], fdiff[NMELS + 1];
    /* np.fft.rfftfreq(n, d=1/sr): i * (1 / (n * d)) */
    double d = 1.0 / SR, val = 1.0 / (NFFT * d);
    for (int i = 0; i < NBINS; i++) fftfreqs[i] = (double)i * val;
    /* np.linspace(hz_to_mel(fmin), hz_to_mel(fmax), n + 2): i * step + start, the last = stop */
    double start = hz_to_mel(FMIN), stop = hz_to_mel(FMAX);
    double step = (stop - start) / (double)(NMELS + 1);
    for (int i = 0; i < NMELS + 2; i++) mel_f[i] = mel_to_hz((double)i * step + start);
    mel_f[NMELS + 1] = mel_to_hz(stop);
    for (int i = 0; i < NMELS + 1; i++) fdiff[i] = mel_f[i + 1] - mel_f[i];
    for (int i = 0; i < NMELS; i++) {
        double enorm = 2.0 / (mel_f[i + 2] - mel_f[i]);
        for (int j = 0; j < NBINS; j++) {
            double lower = -(mel_f[i] - fftfreqs[j]) / fdiff[i];
            double upper = (mel_f[i + 2] - fftfreqs[j]) / fdiff[i + 1];
            double w = lower < upper ? lower : upper;
            float w32 = (float)(w > 0 ? w : 0.0);
            fb[i * NBINS + j] = (float)((double)w32 * enorm);
        }
    }
}

vox_status q3_mel_create(q3_mel **out) {
    *out = NULL;
    q3_mel *m = calloc(1, sizeof *m);
    if (!m) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    build_filterbank(m->fb);
    float w = (float)(2.0 * M_PI / NFFT);
    for (int k = 0; k < NFFT; k++) m->window[k] = (float)cos((double)((float)k * w)) * -0.5f + 0.5f;
    vox_status st = vx_rfft_create(NFFT, &m->fft);
    if (st != VOX_OK) {
        free(m);
        return st;
    }
    m->fb_mat = (vx_mat){.dtype = VOX_DTYPE_F32, .rows = NMELS, .cols = NBINS, .data = m->fb, .scales = NULL};
    *out = m;
    return VOX_OK;
}

void q3_mel_free(q3_mel *m) {
    if (!m) return;
    vx_rfft_free(m->fft);
    free(m);
}

const float *q3_mel_filterbank(const q3_mel *m) { return m->fb; }

int64_t q3_mel_frames(int64_t n) {
    int64_t padded = n + 2 * ((NFFT - HOP) / 2);
    return padded < NFFT ? 0 : 1 + (padded - NFFT) / HOP;
}

typedef struct mel_job {
    const q3_mel *m;
    const float *wav;
    int64_t n;
    float *mag; /* [frames][NBINS] */
    atomic_int failed;
} mel_job;

/* torch reflect padding by 384: padded[i] = wav[reflect(i - 384)]. */
static float padded_at(const float *wav, int64_t n, int64_t i) {
    int64_t k = i - (NFFT - HOP) / 2;
    if (k < 0) k = -k;
    else if (k >= n) k = 2 * (n - 1) - k;
    return wav[k];
}

static void mel_frames(void *ctx, int64_t b, int64_t e) {
    mel_job *jb = ctx;
    float *frame = malloc(NFFT * sizeof *frame), *spec = malloc((NBINS * 2) * sizeof *spec);
    if (!frame || !spec) {
        atomic_store(&jb->failed, 1);
        free(frame), free(spec);
        return;
    }
    for (int64_t f = b; f < e; f++) {
        int64_t s0 = f * HOP;
        for (int k = 0; k < NFFT; k++) frame[k] = padded_at(jb->wav, jb->n, s0 + k) * jb->m->window[k];
        vx_rfft_run(jb->m->fft, frame, spec);
        float *mag = jb->mag + f * NBINS;
        for (int j = 0; j < NBINS; j++) {
            float re = spec[2 * j], im = spec[2 * j + 1];
            mag[j] = sqrtf(re * re + im * im + 1e-9f);
        }
    }
    free(frame), free(spec);
}

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
    mel_job jb = {m, wav, n, mag, 0};
    vx_pool_for(pool, frames, 1, mel_frames, &jb);
    if (atomic_load(&jb.failed)) {
        free(mag);
        return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory (mel frames)");
    }
    vx_linear(pool, &m->fb_mat, NULL, mag, frames, out);
    free(mag);
    for (int64_t i = 0; i < frames * NMELS; i++) out[i] = logf(out[i] > 1e-5f ? out[i] : 1e-5f);
    return VOX_OK;
}
