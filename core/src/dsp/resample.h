/* Internal: resampling mono audio between rates (vox.reference.dsp.resample is the spec: the
 * Kaiser-windowed sinc of soxr's HQ setting, which librosa.resample uses, with librosa's lengths). */
#ifndef VOX_DSP_RESAMPLE_H
#define VOX_DSP_RESAMPLE_H

#include <stdint.h>

#include "../pool.h"
#include "vox.h"

/* mono[n] at sample_rate -> *out (malloc'd) at target_rate, *n_out samples (the reference's lengths). */
vox_status vx_resample(const float *mono, int64_t n, int32_t sample_rate, int32_t target_rate, float **out,
                       int64_t *n_out);
/* vx_resample with a pool (NULL: the calling thread only); bit-identical for any thread count. */
vox_status vx_resample_pool(vx_pool *pool, const float *mono, int64_t n, int32_t sample_rate, int32_t target_rate,
                            float **out, int64_t *n_out);
/* The length the reference (librosa) gives n samples at sr_in -> sr_out: ceil(n * (sr_out / sr_in)) in
 * double. */
int64_t vx_resample_length(int64_t n, int32_t sr_in, int32_t sr_out);

#endif
