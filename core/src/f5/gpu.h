/* Internal: F5-TTS on a Vulkan GPU (gpu_load.c, gpu_dit.c, gpu_vocos.c), built from the family-neutral
 * ops of vulkan/ops.h, ops_codec.h and ops_dit.h. It answers the contracts of f5_dit, f5_sample and
 * f5_vocos_decode (f5.h) with the same arithmetic in another order of summation:
 *   - the DiT step: input embedding (packed [x | cond | text] projection, two grouped convolutions with
 *     Mish), time embedding MLP and every block's adaLN modulation, modulated LayerNorms, stacked q|k|v,
 *     interleaved rotary embedding, full attention over the frames, gated residuals, the tanh-GELU FFN,
 *     the final norm and projection: both guidance branches in one batch of rows, so each weight is read
 *     once per step; the large products are the tiled GEMM (on cooperative matrices for f16/bf16
 *     weights where the device has them);
 *   - the ODE loop: every Euler step with its guidance on the device, the state never leaving it;
 *   - Vocos: embedding convolution, ConvNeXt blocks, the ISTFT head's spectrum, the inverse DFT as a
 *     matrix product (window and 1 / n_fft folded into it) and the overlap-add.
 * Per piece the host uploads the packed input (x0, the reference mel, the text encoder's output, which
 * stays on the CPU: it runs once per piece), the time sinusoids and the rotary tables, and reads back
 * the PCM and the generated mel (the session's "mel" output) after the last step.
 * One piece at a time per engine (a mutex): the workspace is the engine's. */
#ifndef VOX_F5_GPU_H
#define VOX_F5_GPU_H

#include "../engine.h"
#include "f5.h"

/* Puts the DiT and Vocos on e->gpu when their weights fit (f32/f16/bf16 weights; q8/q4 stay on the CPU,
 * as does everything when video memory is short: the reason goes to the placement), filling m->gpu and
 * the engine's placement counts; strict turns a shortfall into an error. */
vox_status f5_gpu_place(vox_engine *e, f5_model *m);
void f5_gpu_free(void *gpu);

/* f5_dit's contract for both branches (batch 2), except that the time embedding is computed on the
 * device from t (tapped as "time_embedding" [1][dim]); taps "input_embed". */
vox_status f5_gpu_dit(const f5_model *m, int64_t n, const float *x, const float *cond, const float *text, float t,
                      float *flow, f5_tap_fn tap, void *tap_ctx);
/* f5_sample's contract (the same taps). */
vox_status f5_gpu_sample(const f5_model *m, vx_pool *pool, const float *cond_mel, int64_t nc, const int32_t *ids,
                         int64_t nt, int64_t duration, const f5_sample_opts *o, float **mel, int64_t *total);
/* f5_sample then f5_vocos_decode of its frames from row `from` on, without the mel leaving the device
 * in between: *mel (malloc'd) [*total][n_mels] as f5_sample gives it, *audio (malloc'd) [*n]. */
vox_status f5_gpu_piece(const f5_model *m, vx_pool *pool, const float *cond_mel, int64_t nc, const int32_t *ids,
                        int64_t nt, int64_t duration, const f5_sample_opts *o, int64_t from, float **mel, int64_t *total,
                        float **audio, int64_t *n);
/* f5_vocos_decode's contract (taps "vocos_features", "vocos_head"). */
vox_status f5_gpu_vocos_decode(const f5_model *m, const float *mel, int64_t frames, float **audio, int64_t *n,
                               f5_tap_fn tap, void *tap_ctx);
/* Whether the DiT / Vocos run on the GPU. */
int f5_gpu_dit_on(const f5_model *m);
int f5_gpu_vocos_on(const f5_model *m);

#endif
