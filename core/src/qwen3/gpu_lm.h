/* Internal: the Qwen3-TTS talker and code predictor on a Vulkan device (decoder stacks, KV caches,
 * codec head, predictor heads and projection), mirroring q3_decoder_forward step by step with the
 * GPU ops of ops.h. The embeddings and the text projection stay on the CPU for now; the inputs of a
 * forward are uploaded (host-visible memory: a memcpy) and only the last row's hidden state and the
 * logits come back: one dispatch chain and one host synchronization per talker step / predictor pass. */
#ifndef VOX_QWEN3_GPU_LM_H
#define VOX_QWEN3_GPU_LM_H

#include "lm_internal.h"
#include "../vulkan/ops.h"
#include "../vulkan/vk.h"

typedef struct vx_q3_gpu vx_q3_gpu;     /* per engine: the weights in VRAM */
typedef struct vx_q3_gsess vx_q3_gsess; /* per session: KV caches and work buffers */

/* What the GPU path would hold in VRAM for lm (bytes) and how many matrices it places. */
uint64_t vx_q3_gpu_bytes(const q3_lm *lm, int64_t *n_matrices);
/* Uploads lm's talker and predictor. */
vox_status vx_q3_gpu_load(vx_gpu *g, const q3_lm *lm, vx_q3_gpu **out);
void vx_q3_gpu_free(vx_q3_gpu *q);

vox_status vx_q3_gsess_create(vx_q3_gpu *q, int64_t talker_cap, vx_q3_gsess **out);
void vx_q3_gsess_free(vx_q3_gsess *s);
/* Talker KV capacity at least cap positions (contents kept); the current capacity. */
vox_status vx_q3_gsess_reserve(vx_q3_gsess *s, int64_t cap);
int64_t vx_q3_gsess_cap(const vx_q3_gsess *s);

/* The talker over n rows x [n][hidden] at positions pos.. (the cache holds exactly pos positions;
 * cos/sin [n][head_dim]): appends to the KV cache, writes the last row's final-normed hidden state to
 * hidden [hidden] and the codec head's logits to logits [vocab] (both NULL: only the cache is filled,
 * for prefill chunks before the last). */
vox_status vx_q3_talker(vx_q3_gsess *s, const float *x, int64_t n, int64_t pos, const float *cos, const float *sin,
                        float *hidden, float *logits);
/* A whole frame of the code predictor in one submission: rows [hidden; emb0] (emb0: the talker's
 * code-0 embedding, [2][talker hidden] in pin), then for g = 1..G-1 a pass, the head, the choice of
 * code g on the GPU (sample.comp with u[g - 1] = vox_philox_uniform(seed, frame, g)) and the
 * embedding of that code as the next pass's input. codes[1..G-1] receive the codes. */
vox_status vx_q3_predict_frame(vx_q3_gsess *s, const float *pin, const vx_gsampler *sp, const float *u,
                               int32_t *codes);
/* One predictor pass: n rows pin [n][talker hidden] at predictor positions pos.. (pos 0 starts a
 * new frame) through the projection, the predictor and head `head`: logits [pvocab]. */
vox_status vx_q3_predictor(vx_q3_gsess *s, const float *pin, int64_t n, int64_t pos, int64_t head, float *logits);

#endif
