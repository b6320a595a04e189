/* Internal: mel filterbanks. */
#ifndef VOX_DSP_MELBANK_H
#define VOX_DSP_MELBANK_H

#include <stdint.h>

/* torchaudio.functional.melscale_fbanks(n_fft / 2 + 1, 0, sample_rate / 2, n_mels, sample_rate,
 * norm=None, mel_scale="htk"), transposed to fb[n_mels][n_fft / 2 + 1], built in float32 step by step as
 * torchaudio does (torch.linspace's fused multiply-adds; the power 10^x rounded once from double; see
 * vox.reference.f5.mel). */
void vx_melbank_htk(int64_t sample_rate, int64_t n_fft, int64_t n_mels, float *fb);

/* torch.linspace(start, end, steps) in float32 as its CPU kernel computes it: step = (end - start) /
 * (steps - 1) in float; element i = fma(step, i, start) for i < steps / 2, fma(-step, steps - 1 - i, end)
 * after. */
void vx_linspace_f32(float start, float end, int64_t steps, float *out);

#endif
