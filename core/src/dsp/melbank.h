/* Internal: mel filterbanks (torchaudio's HTK and librosa's slaney ones). */
#ifndef VOX_DSP_MELBANK_H
#define VOX_DSP_MELBANK_H

#include <stdint.h>

/* torchaudio.functional.melscale_fbanks(n_fft / 2 + 1, 0, sample_rate / 2, n_mels, sample_rate,
 * norm=None, mel_scale="htk"), transposed to fb[n_mels][n_fft / 2 + 1], built in float32 step by step as
 * torchaudio does (torch.linspace's fused multiply-adds; the power 10^x rounded once from double; see
 * vox.reference.f5.mel). */
void vx_melbank_htk(int64_t sample_rate, int64_t n_fft, int64_t n_mels, float *fb);

/* librosa.filters.mel(sr=sample_rate, n_fft, n_mels, fmin, fmax) (slaney scale and norm, htk=False),
 * fb[n_mels][n_fft / 2 + 1], computed in double with librosa's (numpy's) steps, each triangle rounded to
 * float before the norm is applied and the product rounded again (see vox.reference.qwen3.mel). 0, or
 * -1 when its scratch cannot be allocated. */
int vx_melbank_slaney(int64_t sample_rate, int64_t n_fft, int64_t n_mels, double fmin, double fmax, float *fb);

/* torch.linspace(start, end, steps) in float32 as its CPU kernel computes it: step = (end - start) /
 * (steps - 1) in float; element i = fma(step, i, start) for i < steps / 2, fma(-step, steps - 1 - i, end)
 * after. */
void vx_linspace_f32(float start, float end, int64_t steps, float *out);

#endif
