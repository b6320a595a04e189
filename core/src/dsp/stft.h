/* Internal: short-time Fourier transforms of mono audio, as torch computes them (torch.stft with a
 * centred, reflect-padded signal; torch.istft / vocos ISTFT), and the window they use. */
#ifndef VOX_DSP_STFT_H
#define VOX_DSP_STFT_H

#include <stdint.h>

#include "../pool.h"
#include "vox.h"

/* Sample i of x[n] reflect-padded on both sides (torch's "reflect": the edge sample not repeated), i
 * counted from x[0] and at most n - 1 samples beyond either end. */
static inline int64_t vx_reflect_index(int64_t i, int64_t n) {
    if (i < 0) i = -i;
    if (i >= n) i = 2 * (n - 1) - i;
    return i;
}

/* torch.hann_window(n) (periodic), the way torch rounds it: cos(k * float(2 pi / n)) * -0.5 + 0.5 in float. */
void vx_hann_window(int64_t n, float *w);

/* |STFT| of x[n] with center=True (reflect padding of n_fft / 2 on both sides; n > n_fft / 2), frames
 * of n_fft every hop samples, each multiplied by window[n_fft] in float, transformed by vx_rfft (double
 * inside, re/im rounded to float) and its magnitude sqrt(re^2 + im^2) taken in double: out
 * [vx_stft_frames(n, hop)][n_fft / 2 + 1], time-major. n_fft a power of two. VOX_ERR_OUT_OF_MEMORY,
 * VOX_ERR_INVALID_ARGUMENT (too short a signal). */
vox_status vx_stft_magnitude(vx_pool *pool, const float *x, int64_t n, int64_t n_fft, int64_t hop, const float *window,
                             float *out);
int64_t vx_stft_frames(int64_t n, int64_t hop);   /* 1 + n / hop */

/* |STFT| as torch.stft(center=False) computes it on a signal reflect-padded by pad samples each side
 * (pad < n), the magnitude sqrt(re^2 + im^2 + eps) taken in float (qwen_tts's mel_spectrogram):
 * out [vx_stft_frames_padded(n, n_fft, hop, pad)][n_fft / 2 + 1]; each frame times window[n_fft] in
 * float, then vx_rfft. n_fft a power of two. VOX_ERR_OUT_OF_MEMORY, VOX_ERR_INVALID_ARGUMENT. */
vox_status vx_stft_magnitude_padded(vx_pool *pool, const float *x, int64_t n, int64_t n_fft, int64_t hop, int64_t pad,
                                    const float *window, float eps, float *out);
int64_t vx_stft_frames_padded(int64_t n, int64_t n_fft, int64_t hop, int64_t pad); /* 0 if shorter than a frame */

/* The inverse of a one-sided spectrum re + i im ([frames][n_fft / 2 + 1] each, time-major) with a
 * window of n_fft (win = n_fft): each frame's inverse real FFT in double (the imaginary parts of the DC
 * and Nyquist bins ignored, as irfft does), times the window, overlap-added every hop samples, divided
 * by the overlap-added squared window, with n_fft / 2 samples trimmed from each end (center: torch.istft
 * center=True, hop (frames - 1) samples) or (n_fft - hop) / 2 (same: vocos ISTFT padding "same", hop
 * frames samples). The sums are double, in frame order, rounded to float once. VOX_ERR_INVALID_ARGUMENT
 * when the window envelope vanishes somewhere (too few frames), VOX_ERR_OUT_OF_MEMORY. */
typedef enum vx_istft_padding { VX_ISTFT_CENTER = 0, VX_ISTFT_SAME = 1 } vx_istft_padding;
vox_status vx_istft(vx_pool *pool, const float *re, const float *im, int64_t frames, int64_t n_fft, int64_t hop,
                    const float *window, vx_istft_padding padding, float *out);
int64_t vx_istft_length(int64_t frames, int64_t hop, vx_istft_padding padding);

#endif
