/* The harmonic-plus-noise source (SineGen + SourceModuleHnNSF), the STFT of the source and the
 * iSTFT of the generator's output, with the exact index and interpolation arithmetic of the official
 * code (torch nearest/linear interpolation in float32, cumsum accumulated in double as torch's CPU
 * cumsum does). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../dsp/dft_stft.h"
#include "../error.h"
#include "kokoro.h"

#define KK_HARMONICS 9           /* harmonic_num 8 + the fundamental */
#define KK_SINE_AMP 0.1f
#define KK_NOISE_STD 0.003f
#define KK_VOICED_THRESHOLD 10.0f
/* Philox stream of the source noise (reference/kokoro/source.py): counter (sample, 0,
 * KK_STREAM_SOURCE_NOISE, span), key = the seed: one normal per sample for the merged excitation. */
#define KK_STREAM_SOURCE_NOISE 3u

void vox_philox4x32_10(const uint32_t counter[4], const uint32_t key[2], uint32_t out[4]);

static double u53(uint32_t hi, uint32_t lo) {
    return (double)((uint64_t)(hi >> 5) * 67108864u + (lo >> 6)) * (1.0 / 9007199254740992.0);
}

/* A standard normal: Box-Muller on u1 = 1 - u53(words 0, 1) (in (0, 1]: the log is finite) and
 * u2 = u53(words 2, 3), in double, rounded to float once. */
static float normal_at(uint64_t seed, uint32_t sample, uint32_t span) {
    const uint32_t ctr[4] = {sample, 0, KK_STREAM_SOURCE_NOISE, span};
    const uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
    uint32_t r[4];
    vox_philox4x32_10(ctr, key, r);
    double u1 = 1.0 - u53(r[0], r[1]), u2 = u53(r[2], r[3]);
    return (float)(sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2));
}

typedef struct src_job {
    const kk_forward_opts *opts;
    const float *f0_curve;
    float noise_gain; /* sqrt(sum of the merge weights squared) */
    vx_harmonic h;    /* the harmonic sum (kernels.h), the noise read from src */
    float *src;
} src_job;

static void source_samples(void *ctx, int64_t begin, int64_t end) {
    const src_job *q = ctx;
    const kk_forward_opts *opts = q->opts;
    /* The official code adds N(0, namp^2) to each harmonic before the Linear(9, 1): a sum of
     * independent normals, i.e. one normal of std namp * |lw| after the merge, drawn once per sample
     * (Philox, scalar) into src, which the harmonic sum then adds before its tanh. */
    if (opts->noise) {
        const float noise_unvoiced = KK_SINE_AMP / 3.0f;
        for (int64_t j = begin; j < end; j++) {
            float uv = q->f0_curve[j / KK_HOP] > KK_VOICED_THRESHOLD ? 1.0f : 0.0f;
            float namp = uv * KK_NOISE_STD + (1.0f - uv) * noise_unvoiced;
            q->src[j] = namp * q->noise_gain * normal_at(opts->seed, (uint32_t)j, opts->span);
        }
    }
    vx_harmonic_source(&q->h, begin, end, q->src);
}

/* har_source [t2 * 300] from the F0 curve [t2]; then its STFT (center, reflect padding) as
 * har [frames][2 * bins] = [magnitude | phase], frames = t2 * 60 + 1. */
vox_status kk_harmonic_source(const kk_model *m, vx_pool *pool, const float *f0_curve, int64_t t2,
                              const kk_forward_opts *opts, float *har) {
    const int64_t N = t2 * KK_HOP, nfft = m->n_fft, hop = m->hop;
    if (nfft > VX_DFT_STFT_MAX_NFFT)
        return vox_set_error(VOX_ERR_UNSUPPORTED, "kokoro source: n_fft %lld > %d", (long long)nfft, VX_DFT_STFT_MAX_NFFT);
    float *src = malloc((size_t)N * sizeof *src);
    float *phase = malloc((size_t)(t2 * KK_HARMONICS) * sizeof *phase);
    if (!src || !phase) {
        free(src), free(phase);
        return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    }
    /* rad = (f0 * h / sr) % 1 at 24 kHz, linearly downsampled by 300: sample i reads the upsampled
     * positions 300 i + 149 and 300 i + 150 (weights 1/2), which both hold f0[i] (nearest upsampling).
     * The random initial phase is added at position 0 only, which this downsampling never reads. */
    const float pi_f = 3.14159265358979323846f;
    for (int64_t h = 0; h < KK_HARMONICS; h++) {
        double acc = 0.0;
        for (int64_t i = 0; i < t2; i++) {
            float fn = f0_curve[i] * (float)(h + 1);
            float r = fn / 24000.0f;
            r = r - floorf(r);
            float rd = 0.5f * r + 0.5f * r;
            acc += (double)rd;
            phase[i * KK_HARMONICS + h] = (float)acc * 2.0f * pi_f * 300.0f;
        }
    }
    /* linear upsampling of the phase by 300 (align_corners False), sines, voicing, noise, merge: every
     * sample on its own (ranges of samples in parallel, the same bits for any split) */
    double g2 = 0.0;
    for (int64_t h = 0; h < KK_HARMONICS; h++) g2 += (double)m->l_linear_w[h] * (double)m->l_linear_w[h];
    /* sample j reads the phase at s = (j + 0.5) / 300 - 0.5 (linear interpolation, align_corners False),
     * the voicing of its frame j / 300 */
    src_job sj = {.opts = opts, .f0_curve = f0_curve, .noise_gain = (float)sqrt(g2), .src = src,
                  .h = {.f0 = f0_curve, .phase = phase, .w = m->l_linear_w, .noise = opts->noise ? src : NULL,
                        .b = m->l_linear_b[0], .amp = KK_SINE_AMP, .threshold = KK_VOICED_THRESHOLD,
                        .scale = (float)(1.0 / 300.0), .t2 = t2, .hop = KK_HOP, .n_h = KK_HARMONICS}};
    vx_pool_for(pool, N, KK_HOP, source_samples, &sj);
    /* STFT: reflect-padded frames times the windowed DFT basis, then polar form, frame ranges in parallel */
    vox_status st = vx_dft_stft_polar(pool, m->stft_basis, src, N, nfft, hop, har);
    if (st == VOX_OK && opts->tap) opts->tap(opts->tap_ctx, "har_source", src, N, 1);
    free(src), free(phase);
    return st;
}

typedef struct rect_job {
    const float *spec;
    float *x;
    int64_t bins;
} rect_job;

/* frames [begin, end): exp() of the log magnitude and sin() of the phase argument to re | im */
static void rect_rows(void *ctx, int64_t begin, int64_t end) {
    const rect_job *q = ctx;
    const int64_t bins = q->bins;
    for (int64_t f = begin; f < end; f++)
        for (int64_t k = 0; k < bins; k++) {
            float mag = expf(q->spec[f * 2 * bins + k]), ph = sinf(q->spec[f * 2 * bins + bins + k]);
            q->x[f * 2 * bins + k] = mag * cosf(ph);
            q->x[f * 2 * bins + bins + k] = mag * sinf(ph);
        }
}

/* torch.istft(mag * exp(i phase), n_fft, hop, hann, center): per-frame inverse DFT times the window
 * (one GEMM), overlap-add, division by the summed squared window, n_fft / 2 trimmed at both ends
 * (vx_dft_istft). spec [frames][2 * bins] holds the generator's raw output: exp() of the first half is the
 * magnitude, sin() of the second the phase. audio: [(frames - 1) * hop]. */
vox_status kk_istft(const kk_model *m, vx_pool *pool, const float *spec, int64_t frames, float *audio) {
    const int64_t bins = m->n_fft / 2 + 1;
    float *x = calloc((size_t)(frames * 2 * bins), sizeof *x);
    if (!x) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    rect_job rj = {.spec = spec, .x = x, .bins = bins};
    vx_pool_for(pool, frames, 64, rect_rows, &rj);
    vox_status st = vx_dft_istft(pool, m->istft_basis, m->istft_env_window, x, frames, m->n_fft, m->hop, audio);
    free(x);
    return st;
}
