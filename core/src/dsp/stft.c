/* STFT magnitude and inverse STFT (stft.h).
 *
 * The forward transform is vx_rfft's (kernels.h). The inverse is a double-precision complex FFT of
 * size n_fft on the Hermitian-completed spectrum (numpy's irfft convention), iterative radix-2 with
 * twiddles from cos/sin of 2 pi k / n in double: the same plain double arithmetic on every CPU, and
 * more precise than the float32 products it feeds. */
#include "stft.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "../error.h"
#include "../kernels.h"

void vx_hann_window(int64_t n, float *w) {
    const float step = (float)(2.0 * M_PI / (double)n);
    for (int64_t k = 0; k < n; k++) w[k] = (float)cos((double)((float)k * step)) * -0.5f + 0.5f;
}

int64_t vx_stft_frames(int64_t n, int64_t hop) { return 1 + n / hop; }

/* ------------------------------------------------------------------------------ forward */
typedef struct stft_job {
    const float *x, *window;
    int64_t n, n_fft, hop, pad;
    int float_mag;   /* sqrtf(re^2 + im^2 + eps) in float, else sqrt(re^2 + im^2) in double */
    float eps;
    vx_rfft *fft;
    float *out;
    atomic_int failed;
} stft_job;

static void stft_frames(void *ctx, int64_t f0, int64_t f1) {
    stft_job *j = ctx;
    const int64_t nf = j->n_fft, bins = nf / 2 + 1;
    float *frame = malloc((size_t)nf * sizeof *frame), *spec = malloc((size_t)(2 * bins) * sizeof *spec);
    if (!frame || !spec) {
        atomic_store(&j->failed, 1);
        free(frame), free(spec);
        return;
    }
    for (int64_t f = f0; f < f1; f++) {
        const int64_t s0 = f * j->hop - j->pad;
        for (int64_t k = 0; k < nf; k++) frame[k] = j->x[vx_reflect_index(s0 + k, j->n)] * j->window[k];
        vx_rfft_run(j->fft, frame, spec);
        float *o = j->out + f * bins;
        if (j->float_mag) {
            for (int64_t b = 0; b < bins; b++) {
                float re = spec[2 * b], im = spec[2 * b + 1];
                o[b] = sqrtf(re * re + im * im + j->eps);
            }
            continue;
        }
        for (int64_t b = 0; b < bins; b++) {
            double re = spec[2 * b], im = spec[2 * b + 1];
            o[b] = (float)sqrt(re * re + im * im);
        }
    }
    free(frame), free(spec);
}

static vox_status stft_run(vx_pool *pool, stft_job *j, int64_t frames) {
    atomic_init(&j->failed, 0);
    vox_status st = vx_rfft_create(j->n_fft, &j->fft);
    if (st != VOX_OK) return st;
    vx_pool_for(pool, frames, 4, stft_frames, j);
    vx_rfft_free(j->fft);
    return atomic_load(&j->failed) ? vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory (STFT)") : VOX_OK;
}

vox_status vx_stft_magnitude(vx_pool *pool, const float *x, int64_t n, int64_t n_fft, int64_t hop, const float *window,
                             float *out) {
    if (n <= n_fft / 2)
        return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "the signal is too short for a centred STFT: %lld samples, it "
                             "needs more than %lld", (long long)n, (long long)(n_fft / 2));
    stft_job j = {.x = x, .window = window, .n = n, .n_fft = n_fft, .hop = hop, .pad = n_fft / 2, .out = out};
    return stft_run(pool, &j, vx_stft_frames(n, hop));
}

int64_t vx_stft_frames_padded(int64_t n, int64_t n_fft, int64_t hop, int64_t pad) {
    int64_t padded = n + 2 * pad;
    return padded < n_fft ? 0 : 1 + (padded - n_fft) / hop;
}

vox_status vx_stft_magnitude_padded(vx_pool *pool, const float *x, int64_t n, int64_t n_fft, int64_t hop, int64_t pad,
                                    const float *window, float eps, float *out) {
    if (n <= pad)
        return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "the signal is too short for its STFT: %lld samples, reflect "
                             "padding needs more than %lld", (long long)n, (long long)pad);
    stft_job j = {.x = x, .window = window, .n = n, .n_fft = n_fft, .hop = hop, .pad = pad, .float_mag = 1, .eps = eps,
                  .out = out};
    return stft_run(pool, &j, vx_stft_frames_padded(n, n_fft, hop, pad));
}

/* ------------------------------------------------------------------------------ inverse */
typedef struct cfft {
    int64_t n, log2n;
    double *tw;       /* n/2 complex: e^(+2 pi i j / n) */
    uint32_t *rev;    /* bit reversal of [0, n) */
} cfft;

static void cfft_free(cfft *p) {
    free(p->tw);
    free(p->rev);
}

static vox_status cfft_init(cfft *p, int64_t n) {
    memset(p, 0, sizeof *p);
    if (n < 2 || (n & (n - 1)))
        return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "inverse FFT: size %lld is not a power of two", (long long)n);
    p->n = n;
    while (((int64_t)1 << p->log2n) < n) p->log2n++;
    p->tw = malloc((size_t)n * sizeof *p->tw);
    p->rev = malloc((size_t)n * sizeof *p->rev);
    if (!p->tw || !p->rev) {
        cfft_free(p);
        return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    }
    for (int64_t j = 0; j < n / 2; j++) {
        double a = 2.0 * M_PI * (double)j / (double)n;
        p->tw[2 * j] = cos(a);
        p->tw[2 * j + 1] = sin(a);
    }
    for (int64_t i = 0; i < n; i++) {
        uint32_t r = 0;
        for (int64_t b = 0; b < p->log2n; b++) r |= (uint32_t)((i >> b) & 1) << (p->log2n - 1 - b);
        p->rev[i] = r;
    }
    return VOX_OK;
}

/* In place: z[t] = sum_k z[k] e^(+2 pi i k t / n) (unnormalized inverse), z interleaved re, im. */
static void cfft_inverse(const cfft *p, double *z) {
    const int64_t n = p->n;
    for (int64_t i = 0; i < n; i++) {
        int64_t r = p->rev[i];
        if (r > i) {
            double a = z[2 * i], b = z[2 * i + 1];
            z[2 * i] = z[2 * r], z[2 * i + 1] = z[2 * r + 1];
            z[2 * r] = a, z[2 * r + 1] = b;
        }
    }
    for (int64_t len = 2; len <= n; len <<= 1) {
        const int64_t half = len / 2, step = n / len;
        for (int64_t s = 0; s < n; s += len)
            for (int64_t j = 0; j < half; j++) {
                double wr = p->tw[2 * j * step], wi = p->tw[2 * j * step + 1];
                double *a = z + 2 * (s + j), *b = z + 2 * (s + j + half);
                double br = b[0] * wr - b[1] * wi, bi = b[0] * wi + b[1] * wr;
                b[0] = a[0] - br, b[1] = a[1] - bi;
                a[0] += br, a[1] += bi;
            }
    }
}

int64_t vx_istft_length(int64_t frames, int64_t hop, vx_istft_padding padding) {
    if (frames <= 0) return 0;
    return padding == VX_ISTFT_CENTER ? hop * (frames - 1) : hop * frames;
}

typedef struct istft_job {
    const cfft *fft;
    const float *re, *im, *window;
    int64_t frames, n_fft, hop, trim, n_out;
    double *wave;     /* [frames][n_fft]: windowed inverse transforms */
    float *out;
    atomic_int failed, vanished;
} istft_job;

static void istft_frames(void *ctx, int64_t f0, int64_t f1) {
    istft_job *j = ctx;
    const int64_t nf = j->n_fft, bins = nf / 2 + 1;
    double *z = malloc((size_t)(2 * nf) * sizeof *z);
    if (!z) {
        atomic_store(&j->failed, 1);
        return;
    }
    for (int64_t f = f0; f < f1; f++) {
        const float *re = j->re + f * bins, *im = j->im + f * bins;
        for (int64_t k = 0; k < bins; k++) {
            z[2 * k] = re[k];
            z[2 * k + 1] = (k == 0 || k == bins - 1) ? 0.0 : im[k];
        }
        for (int64_t k = bins; k < nf; k++) {   /* Hermitian completion */
            z[2 * k] = re[nf - k];
            z[2 * k + 1] = -(double)im[nf - k];
        }
        cfft_inverse(j->fft, z);
        double *w = j->wave + f * nf;
        for (int64_t t = 0; t < nf; t++) w[t] = z[2 * t] / (double)nf * (double)j->window[t];
    }
    free(z);
}

static void istft_samples(void *ctx, int64_t s0, int64_t s1) {
    istft_job *j = ctx;
    const int64_t nf = j->n_fft, hop = j->hop;
    for (int64_t s = s0; s < s1; s++) {
        const int64_t p = s + j->trim;   /* position in the untrimmed overlap-add */
        int64_t fa = p - nf + 1 > 0 ? (p - nf + 1 + hop - 1) / hop : 0, fb = p / hop;
        if (fb > j->frames - 1) fb = j->frames - 1;
        double acc = 0.0, env = 0.0;
        for (int64_t f = fa; f <= fb; f++) {
            int64_t t = p - f * hop;
            double w = j->window[t];
            acc += j->wave[f * nf + t];
            env += w * w;
        }
        if (!(env > 1e-11)) {
            atomic_store(&j->vanished, 1);
            j->out[s] = 0.0f;
            continue;
        }
        j->out[s] = (float)(acc / env);
    }
}

vox_status vx_istft(vx_pool *pool, const float *re, const float *im, int64_t frames, int64_t n_fft, int64_t hop,
                    const float *window, vx_istft_padding padding, float *out) {
    istft_job j = {.re = re, .im = im, .window = window, .frames = frames, .n_fft = n_fft, .hop = hop};
    j.trim = padding == VX_ISTFT_CENTER ? n_fft / 2 : (n_fft - hop) / 2;
    j.n_out = vx_istft_length(frames, hop, padding);
    j.out = out;
    atomic_init(&j.failed, 0);
    atomic_init(&j.vanished, 0);
    if (j.n_out <= 0) return VOX_OK;
    cfft fft;
    vox_status st = cfft_init(&fft, n_fft);
    if (st != VOX_OK) return st;
    j.fft = &fft;
    j.wave = malloc((size_t)(frames * n_fft) * sizeof *j.wave);
    if (!j.wave) {
        cfft_free(&fft);
        return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory (ISTFT of %lld frames)", (long long)frames);
    }
    vx_pool_for(pool, frames, 4, istft_frames, &j);
    if (!atomic_load(&j.failed)) vx_pool_for(pool, j.n_out, 1024, istft_samples, &j);
    free(j.wave);
    cfft_free(&fft);
    if (atomic_load(&j.failed)) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory (ISTFT)");
    if (atomic_load(&j.vanished))
        return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "ISTFT: the window envelope vanishes (%lld frames are too few)",
                             (long long)frames);
    return VOX_OK;
}
