/* Internal: the Qwen3-TTS-12Hz speech tokenizer decoder: codes [frames][16] -> 24 kHz PCM, 1920
 * samples per frame. Two ways to run it (docs: decoder modes):
 *   stream     q3_stream: frames are pushed in chunks of any size; every causal convolution keeps its
 *              left context, every transposed convolution its overlap-add tail, the transformer a
 *              72-frame ring of keys and values; the output is the same signal as decoding the
 *              whole sequence at once (bit-identical for any chunking). Warmed up with reference
 *              frames whose audio is discarded.
 *   reference  the official chunked_decode: 300-frame pieces, 25 frames of left context.
 * Mirrors vox.reference.qwen3.codec_decoder. */
#ifndef VOX_QWEN3_CODEC_H
#define VOX_QWEN3_CODEC_H

#include <stdint.h>

#include "model.h"

vox_status q3_codec_load(const q3_model *m, q3_codec **out);
void q3_codec_free(q3_codec *codec);
int32_t q3_codec_groups(const q3_codec *codec);            /* 16 */
int32_t q3_codec_codebook_size(const q3_codec *codec);     /* 2048 */
int32_t q3_codec_samples_per_frame(const q3_codec *codec); /* 1920 */
int32_t q3_codec_sample_rate(const q3_codec *codec);       /* 24000 */

typedef struct q3_stream q3_stream;
vox_status q3_stream_create(const q3_codec *codec, q3_stream **out);
void q3_stream_free(q3_stream *s);
/* Feed n frames whose audio is discarded (warm-up with the end of the reference). */
vox_status q3_stream_prime(q3_stream *s, vx_pool *pool, const int32_t *codes, int64_t n);
/* Decode n more frames into pcm[n * samples_per_frame]. */
vox_status q3_stream_push(q3_stream *s, vx_pool *pool, const int32_t *codes, int64_t n, float *pcm);

/* The official decode of codes[n][16] (clamped at 0) in 300-frame pieces with 25 frames of context:
 * pcm[n * samples_per_frame]. */
vox_status q3_codec_decode_reference(const q3_codec *codec, vx_pool *pool, const int32_t *codes, int64_t n,
                                     float *pcm);
/* Samples the official voice-clone wrapper cuts from the start of the decoded reference + speech:
 * int(ref_frames / max(total_frames, 1) * n_samples), computed in double as Python does. */
int64_t q3_reference_cut(int64_t ref_frames, int64_t total_frames, int64_t n_samples);

/* The family's vox_engine_decode (family.c forwards to it). */
vox_status q3_decode(vox_engine *e, const int32_t *codes, size_t n_frames, const int32_t *ref_codes, size_t n_ref,
                     vox_decoder_mode mode, int32_t context, int32_t chunk_frames, float *pcm, size_t capacity,
                     size_t *n_samples);

#endif
