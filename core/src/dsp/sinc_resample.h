/* Internal: torchaudio's resampler (torchaudio.transforms.Resample with its defaults: sinc_interp_hann,
 * lowpass_filter_width 6, rolloff 0.99), as vox.reference.f5.resample specifies it. The F5-TTS pipeline
 * resamples its reference recording with it; dsp/resample.h is the soxr-like one of Qwen3-TTS. */
#ifndef VOX_DSP_SINC_RESAMPLE_H
#define VOX_DSP_SINC_RESAMPLE_H

#include <stdint.h>

#include "../pool.h"
#include "vox.h"

/* x[n] at orig Hz -> *out (malloc'd) at new_rate Hz, *n_out = ceil(new / g * n / (orig / g)) samples
 * (g = gcd). Each output sample is one double dot product of the kernel phase and the input, rounded
 * once; equal rates copy. VOX_ERR_OUT_OF_MEMORY, VOX_ERR_INVALID_ARGUMENT (rates <= 0). */
vox_status vx_resample_sinc(vx_pool *pool, const float *x, int64_t n, int64_t orig, int64_t new_rate, float **out,
                            int64_t *n_out);

#endif
