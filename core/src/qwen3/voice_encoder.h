/* Internal: voice creation for Qwen3-TTS-12Hz Base models, natively (mirrors
 * vox.reference.qwen3.{resample, mel, speaker_encoder, mimi_encoder, voice}):
 *   resample        any rate -> 24 kHz (Kaiser-windowed sinc, the reference's filter)
 *   mel             the official mel_spectrogram front end (128 mels, n_fft 1024, hop 256)
 *   speaker encoder ECAPA-TDNN -> x-vector [enc_dim]
 *   Mimi encoder    SEANet + transformer + downsample + split RVQ -> codes [frames][16] */
#ifndef VOX_QWEN3_VOICE_ENCODER_H
#define VOX_QWEN3_VOICE_ENCODER_H

#include <stdint.h>

#include "model.h"

/* Loads the Mimi encoder, and the speaker encoder when the model has one (Base). */
vox_status q3_venc_load(const q3_model *m, q3_venc **out);
void q3_venc_free(q3_venc *v);
int32_t q3_venc_embedding_dim(const q3_venc *v);  /* 0 when there is no speaker encoder */

/* mono[n] at sample_rate -> *out (malloc'd) at 24 kHz, *n_out samples (the reference's lengths). */
vox_status q3_resample(const float *mono, int64_t n, int32_t sample_rate, int32_t target_rate, float **out,
                       int64_t *n_out);
vox_status q3_speaker_embedding(const q3_venc *v, vx_pool *pool, const float *wav24k, int64_t n, float *emb);
/* codes: malloc'd [*n_frames][16] */
vox_status q3_encode_codes(const q3_venc *v, vx_pool *pool, const float *wav24k, int64_t n, int32_t **codes,
                           int64_t *n_frames);

/* The family's voice_clone (family.c forwards to it): resample, embed, encode, tokenize the
 * reference text, fill the voice. */
vox_status q3_voice_clone(vox_engine *e, const float *mono, size_t n, int32_t sample_rate,
                          const vox_clone_params *p, vox_voice *v);

#endif
