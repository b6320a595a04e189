/* Internal: the Qwen3-TTS-12Hz codec decoder (codes -> 24 kHz PCM) on a Vulkan device, step for step
 * the stream decoder of core/src/qwen3/codec_stream.c with the ops of ops.h and ops_codec.h: the
 * weights in VRAM in the .tmod's dtype (f32, bf16 or f16, widened exactly by the shaders), per stream
 * the decoder state (convolution contexts, transposed-convolution tails, the transformer's KV ring) in
 * VRAM. A push of up to
 * VX_CODEC_CHAIN_FRAMES frames is one command buffer: the codes and the RoPE tables go up (host-visible
 * memory), only the PCM comes back.
 *
 * The state buffer has the CPU stream's layout (lat_state then voc_state of codec_stream.c), so a state
 * saved from either decoder restores into the other. q3_stream (codec_stream.c) forwards to this when
 * its codec has a GPU copy (q3_codec_set_gpu); nothing else calls it. */
#ifndef VOX_QWEN3_GPU_CODEC_H
#define VOX_QWEN3_GPU_CODEC_H

#include "codec.h"
#include "../vulkan/vk.h"

#define VX_CODEC_CHAIN_FRAMES 64

typedef struct vx_codec_gpu vx_codec_gpu;         /* per engine: the weights */
typedef struct vx_codec_gstream vx_codec_gstream; /* per stream: state and work buffers */

/* VRAM the weights take (bytes) and how many matrices they are. */
uint64_t vx_codec_gpu_bytes(const q3_codec *c, int64_t *n_matrices);
/* VOX_ERR_OUT_OF_MEMORY when they do not fit; VOX_ERR_UNSUPPORTED when a tensor exceeds the device's
 * storage-buffer range (the decoder then stays on the CPU, with the message as the reason). */
vox_status vx_codec_gpu_load(vx_gpu *g, const q3_codec *c, vx_codec_gpu **out);
void vx_codec_gpu_free(vx_codec_gpu *q);

/* lat_n / voc_n: the floats of the CPU stream's two state blocks (the same layout here). */
vox_status vx_codec_gstream_create(vx_codec_gpu *q, size_t lat_n, size_t voc_n, vx_codec_gstream **out);
void vx_codec_gstream_free(vx_codec_gstream *s);
/* Position pos and the state (lat [lat_n] then voc [voc_n] floats) in and out. */
vox_status vx_codec_gstream_set(vx_codec_gstream *s, int64_t pos, const float *lat, const float *voc);
vox_status vx_codec_gstream_get(vx_codec_gstream *s, float *lat, float *voc);
int64_t vx_codec_gstream_pos(const vx_codec_gstream *s);
/* codes [n][n_q] (checked by the caller): pcm [n * spf]. */
vox_status vx_codec_gstream_push(vx_codec_gstream *s, const int32_t *codes, int64_t n, float *pcm);
/* Warm-up on n frames (audio discarded): the frame-rate half on all of them, the vocoder on the last
 * `vocoder_frames` from a zero vocoder state (q3_stream_prime's scheme). */
vox_status vx_codec_gstream_prime(vx_codec_gstream *s, const int32_t *codes, int64_t n, int64_t vocoder_frames);

#endif
