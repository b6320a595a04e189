/* Internal: the STFT of very short frames (n_fft <= 32, e.g. iSTFTNet's n_fft 20, which no power-of-two
 * FFT serves) as matrix products with a windowed DFT basis: every frame's transform is one row of one
 * GEMM, so both directions are a product over all frames, and a frame's result does not depend on how
 * many frames a call holds (vx_linear). Mono, float32, time-major. */
#ifndef VOX_DSP_DFT_STFT_H
#define VOX_DSP_DFT_STFT_H

#include <stdint.h>

#include "../pool.h"
#include "vox.h"

#define VX_DFT_STFT_MAX_NFFT 32

/* The tables of an n_fft-point transform (bins = n_fft / 2 + 1):
 *   window  [n_fft]             the periodic Hann window, 0.5 - 0.5 cos(2 pi i / n) in double, rounded
 *   basis   [2 bins][n_fft]     the window times cos / -sin (rows: the real parts, then the imaginary ones)
 *   ibasis  [n_fft][2 bins]     the one-sided inverse DFT times the window (torch.istft's per-frame
 *                               synthesis: x[i] = (Re X0 + Re X_{n/2} (-1)^i + 2 sum Re X_k cos - Im X_k sin) / n)
 * The angles are taken from (k i) mod n, so every table entry is exact to one rounding. */
void vx_dft_stft_tables(int64_t n_fft, float *window, float *basis, float *ibasis);

/* torch.stft(x, n_fft, hop, window, center=True, pad_mode="reflect") in polar form: out
 * [n / hop + 1][2 bins] = [magnitude (hypotf) | phase (atan2f)], frames in tasks of 64 through the
 * pool. VOX_ERR_UNSUPPORTED (n_fft > VX_DFT_STFT_MAX_NFFT), VOX_ERR_INVALID_ARGUMENT (n <= n_fft / 2). */
vox_status vx_dft_stft_polar(vx_pool *pool, const float *basis, const float *x, int64_t n, int64_t n_fft, int64_t hop,
                             float *out);

/* torch.istft(center=True) of re | im frames spec [frames][2 bins]: each frame's inverse DFT times the
 * window (one product over all frames), overlap-added every hop samples, divided by the overlap-added
 * squared window (where it exceeds 1e-11), n_fft / 2 trimmed at both ends: audio [(frames - 1) hop].
 * The overlap-add runs in frame order, in float. VOX_ERR_OUT_OF_MEMORY. */
vox_status vx_dft_istft(vx_pool *pool, const float *ibasis, const float *window, const float *spec, int64_t frames,
                        int64_t n_fft, int64_t hop, float *audio);

#endif
