/* Internal: voice creation for Qwen3-TTS-12Hz Base models, natively (mirrors
 * vox.reference.qwen3.{resample, mel, speaker_encoder, mimi_encoder, voice}):
 *   resample        any rate -> 24 kHz (Kaiser-windowed sinc, the reference's filter)
 *   mel             the official mel_spectrogram front end (128 mels, n_fft 1024, hop 256)
 *   speaker encoder ECAPA-TDNN -> x-vector [enc_dim]
 *   Mimi encoder    SEANet + transformer + downsample + split RVQ -> codes [frames][16] */
#ifndef VOX_QWEN3_VOICE_ENCODER_H
#define VOX_QWEN3_VOICE_ENCODER_H

#include <stdint.h>

#include "../dsp/resample.h"
#include "model.h"

/* Loads the Mimi encoder, and the speaker encoder when the model has one (Base). */
vox_status q3_venc_load(const q3_model *m, q3_venc **out);
void q3_venc_free(q3_venc *v);
int32_t q3_venc_embedding_dim(const q3_venc *v);  /* 0 when there is no speaker encoder */

vox_status q3_speaker_embedding(const q3_venc *v, vx_pool *pool, const float *wav24k, int64_t n, float *emb);
/* codes: malloc'd [*n_frames][16] */
vox_status q3_encode_codes(const q3_venc *v, vx_pool *pool, const float *wav24k, int64_t n, int32_t **codes,
                           int64_t *n_frames);

/* The family's voice_clone (family.c forwards to it): resample, embed, encode, tokenize the
 * reference text, fill the voice. */
vox_status q3_voice_clone(vox_engine *e, const float *mono, size_t n, int32_t sample_rate,
                          const vox_clone_params *p, int x_vector_only, vox_voice *v);

/* ------------------------------------------------------------------------------------------------
 * The parts (each file named for what it holds; all mirror vox.reference.qwen3 step by step).
 * Activations are time-major: [frames][channels]. */


/* mel.c: the speaker encoder's log-mel front end (24 kHz, n_fft 1024, hop 256, 128 slaney mels). */
typedef struct q3_mel q3_mel;
#define Q3_MEL_BINS 128
#define Q3_MEL_NFFT 1024
#define Q3_MEL_HOP 256
vox_status q3_mel_create(q3_mel **out);
void q3_mel_free(q3_mel *mel);
/* librosa.filters.mel(sr=24000, n_fft=1024, n_mels=128, fmin=0, fmax=12000): [128][513] float32. */
const float *q3_mel_filterbank(const q3_mel *mel);
/* Frames of n samples: 1 + (n + 768 - 1024) / 256 (n must exceed 384, the reflect padding). */
int64_t q3_mel_frames(int64_t n);
/* log-mel of wav[n] (n > 384): out[q3_mel_frames(n)][128] (time-major: the transpose of the reference's). */
vox_status q3_mel_spectrogram(const q3_mel *mel, vx_pool *pool, const float *wav, int64_t n, float *out);

/* ecapa.c: the ECAPA-TDNN speaker encoder of Base models. */
typedef struct q3_ecapa q3_ecapa;
vox_status q3_ecapa_load(const q3_model *m, q3_ecapa **out);
void q3_ecapa_free(q3_ecapa *enc);
int32_t q3_ecapa_dim(const q3_ecapa *enc);
/* Fewest mel frames it accepts (every 'same' reflect padding shorter than the signal): 5 as released. */
int64_t q3_ecapa_min_frames(const q3_ecapa *enc);
/* mel [t][mel_dim] (time-major) -> emb[dim]. */
vox_status q3_ecapa_forward(const q3_ecapa *enc, vx_pool *pool, const float *mel, int64_t t, float *emb);

/* mimi.c: the Mimi encoder (SEANet, streamed block by block; transformer; downsample). */
typedef struct q3_mimi q3_mimi;
vox_status q3_mimi_load(const q3_model *m, q3_mimi **out);
void q3_mimi_free(q3_mimi *mimi);
int32_t q3_mimi_hidden(const q3_mimi *mimi);
int32_t q3_mimi_groups(const q3_mimi *mimi);           /* codebooks kept: 16 */
int64_t q3_mimi_frames(const q3_mimi *mimi, int64_t n); /* ceil(n / 1920) */
/* wav[n] at 24 kHz -> latent [*t][hidden] (malloc'd): the quantizer's input, untrimmed. */
vox_status q3_mimi_latent(const q3_mimi *mimi, vx_pool *pool, const float *wav, int64_t n, float **latent,
                          int64_t *t);
/* rvq.c: split RVQ encode of latent [t][hidden] -> codes [t][groups]. *margin (may be NULL): the
 * smallest relative gap between the best and the second-best squared distance (float32, as computed)
 * over every frame and codebook. */
vox_status q3_mimi_quantize(const q3_mimi *mimi, vx_pool *pool, const float *latent, int64_t t, int32_t *codes,
                            double *margin);

/* The parts of a loaded voice encoder (for the tests). */
const q3_mel *q3_venc_mel(const q3_venc *v);
const q3_ecapa *q3_venc_ecapa(const q3_venc *v);
const q3_mimi *q3_venc_mimi(const q3_venc *v);

/* voice_encoder_conv.c: convolutions on time-major signals. */
/* A Conv1d weight [c_out][c_in][k] of the .tmod as a matrix [c_out][c_in * k] (vx_im2col's order). */
vox_status q3_bind_conv(const q3_model *m, const char *name, int64_t c_out, int64_t c_in, int64_t k, vx_mat *out);
/* y[t_out][c_out] = conv(x) for x [t_in][c_in] already padded (t_out = (t_in - (k-1)*dil - 1) / stride + 1);
 * im2col in bounded blocks of rows. */
vox_status q3_conv1d(vx_pool *pool, const vx_mat *w, const float *bias, int64_t k, int64_t dilation, int64_t stride,
                     const float *x, int64_t t_in, float *y, int64_t t_out);
/* y = fn(x) for an elementwise kernel (vx_elu, vx_relu, ...), split over the pool in blocks of 8192. */
void q3_par_map(vx_pool *pool, void (*fn)(const float *, int64_t, float *), const float *x, int64_t n, float *y);
/* numpy's pairwise float32 sum of x[0], x[stride], ... (n terms): np.add.reduce along an axis. */
float q3_np_sum(const float *x, int64_t n, int64_t stride);

#endif
