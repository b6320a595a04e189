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

/* q3_codec_load = q3_codec_open (configuration and weights bound; VOX_QWEN3_CODEC checked) and then
 * q3_codec_prepare_cpu (the CPU's math chosen and its packed weights made: int8 / bf16 dot products,
 * over the pool's threads).
 * An engine whose codec decodes on the GPU opens it only, so it never packs what it would not read. */
vox_status q3_codec_load(const q3_model *m, q3_codec **out);
vox_status q3_codec_open(const q3_model *m, q3_codec **out);
vox_status q3_codec_prepare_cpu(q3_codec *codec, vx_pool *pool); /* pool: NULL packs on this thread */
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

/* A copy of a stream's state (position, contexts, KV ring, overlap tails; not its scratch): restoring
 * it into a stream of the same codec makes that stream continue bit for bit as the saved one would. */
typedef struct q3_stream_state q3_stream_state;
vox_status q3_stream_save(const q3_stream *s, q3_stream_state **out);
void q3_stream_restore(q3_stream *s, const q3_stream_state *st);
size_t q3_stream_state_bytes(const q3_stream_state *st);
void q3_stream_state_free(q3_stream_state *st);

/* Primed states per engine: the warm-up on a voice's reference frames (q3_stream_prime, ~0.3 s for the
 * 12 Hz codec's default 50 frames) is paid once and then restored. A small LRU keyed by the exact codes
 * primed with; thread-safe (sessions of one engine may prime at the same time). */
typedef struct q3_prime_cache q3_prime_cache;
vox_status q3_prime_cache_create(int capacity, q3_prime_cache **out);
void q3_prime_cache_free(q3_prime_cache *c);
/* q3_stream_prime(s, pool, codes, n) on a fresh stream s, from the cache when these n frames were
 * primed before (the same state, bit for bit), otherwise primed and remembered. c may be NULL. */
vox_status q3_stream_prime_cached(q3_prime_cache *c, q3_stream *s, vx_pool *pool, const int32_t *codes, int64_t n);

/* The official decode of codes[n][16] (clamped at 0) in 300-frame pieces with 25 frames of context:
 * pcm[n * samples_per_frame]. */
vox_status q3_codec_decode_reference(const q3_codec *codec, vx_pool *pool, const int32_t *codes, int64_t n,
                                     float *pcm);
/* Samples the official voice-clone wrapper cuts from the start of the decoded reference + speech:
 * int(ref_frames / max(total_frames, 1) * n_samples), computed in double as Python does. */
int64_t q3_reference_cut(int64_t ref_frames, int64_t total_frames, int64_t n_samples);

/* The family's decode (family.c forwards to it). */
vox_status q3_decode(vox_engine *e, const int32_t *codes, size_t n_frames, const int32_t *ref_codes, size_t n_ref,
                     int mode, int32_t context, int32_t chunk_frames, float *pcm, size_t capacity,
                     size_t *n_samples);

/* ------------------------------------------------------------------------------------------------
 * Internal to core/src/qwen3/codec*.c: the decoder's weights (bound in place from the .tmod; only
 * small derived tensors are owned) and the stream state. Layout: every activation is time-major,
 * [time][channels], row-major float32. */
#define Q3_CODEC_MAX_UP 4       /* upsampling_ratios (2: the 12 Hz codec) */
#define Q3_CODEC_MAX_BLOCKS 8   /* upsample_rates (4) */
#define Q3_CODEC_UNITS 3        /* residual units per decoder block, dilations 1, 3, 9 */

/* Causal convolution (stride 1): torch weight [c_out][c_in][k] used in place as [c_out][c_in * k]. */
typedef struct q3_conv {
    vx_mat w;
    const float *b;            /* [c_out] or NULL */
    int64_t c_in, c_out, k, dilation;
    vx_bf16w pw;               /* bf16 weights packed for vx_conv1d_bf16w (q3_codec.math), else pw.data NULL */
    vx_i8w iw;                 /* int8 codes for vx_conv1d_i8w (VOX_QWEN3_CODEC=int8), else iw.data NULL; its rows
                                * are c_out rounded up to 64 (zero channels past c_out: conv_rows drops them) */
} q3_conv;

/* Causal transposed convolution (k = stride or 2 * stride): torch weight [c_in][c_out][k] used in
 * place as [c_in][c_out * k] (x . W gives every output tap of an input step). */
typedef struct q3_tconv {
    vx_mat w;
    const float *b;            /* [c_out] */
    int64_t c_in, c_out, k, stride;
    vx_i8w iw;                 /* W^T [c_out * k][c_in] as int8 codes (VOX_QWEN3_CODEC=int8), else iw.data NULL */
} q3_tconv;

/* SnakeBeta with the official init-time transforms precomputed (owned): exp(alpha), 1/(exp(beta)+1e-9). */
typedef struct q3_snake {
    float *alpha, *inv_beta;
    int64_t c;
} q3_snake;

typedef struct q3_codec_layer {
    const float *in_norm, *post_norm, *attn_scale, *mlp_scale;
    vx_mat q, k, v, o, gate, up, down;
} q3_codec_layer;

typedef struct q3_convnext {
    q3_tconv up;               /* upsample.I.0 (k = stride) */
    float *dw_w;               /* upsample.I.1.dwconv [c][7] as float32 (owned) */
    const float *dw_b, *ln_w, *ln_b, *pw1_b, *pw2_b, *gamma;
    vx_mat pw1, pw2;
} q3_convnext;

typedef struct q3_codec_block {
    q3_snake act;              /* decoder.B.block.0 */
    q3_tconv up;               /* decoder.B.block.1 (k = 2 r) */
    q3_snake act1[Q3_CODEC_UNITS], act2[Q3_CODEC_UNITS];
    q3_conv conv1[Q3_CODEC_UNITS], conv2[Q3_CODEC_UNITS];
} q3_codec_block;

struct q3_codec {
    /* config (decoder_config) */
    int64_t n_q, codebook_size, codebook_dim, hidden, latent, head_dim, n_heads, n_kv_heads, intermediate,
        n_layers, window, decoder_dim, n_up, n_blocks, spf;
    int64_t up_ratio[Q3_CODEC_MAX_UP], rate[Q3_CODEC_MAX_BLOCKS];
    float rms_eps, attn_scale;
    /* quantizer: codebook i = embedding_sum / max(cluster_usage, 1e-5) (computed per lookup: the same
     * single float32 division as the official init) */
    vx_mat *cb_sum;            /* [n_q] of [codebook_size][codebook_dim / 2] */
    const float **cb_usage;    /* [n_q] of [codebook_size] */
    vx_mat proj_first, proj_rest; /* 1x1 convs [codebook_dim][codebook_dim / 2] */
    q3_conv pre_conv;
    /* pre_transformer */
    vx_mat in_proj, out_proj;
    const float *in_proj_b, *out_proj_b, *norm;
    q3_codec_layer *layers;
    float *inv_freq;           /* [head_dim / 2] (owned) */
    /* upsample and vocoder */
    q3_convnext up[Q3_CODEC_MAX_UP];
    q3_conv dec0, final_conv;
    q3_codec_block blocks[Q3_CODEC_MAX_BLOCKS];
    q3_snake final_act;
    /* how the convolutions multiply: "f32 products ..." (vx_conv1d_f32 / im2col + vx_linear), or, for bf16
     * weights on a path whose bf16 kernel rounds its inputs (AVX512-BF16, AMX, NEON BF16), "bf16 dot
     * products ...": the convolutions whose shapes pack (c_out a multiple of 64, c_in even) through
     * vx_conv1d_bf16w (inputs rounded to bf16, twice the f32 rate; AMX tiles on the amx path).
     * VOX_QWEN3_CODEC=f32 keeps the f32 products; VOX_QWEN3_CODEC=int8 (any weight dtype, a path with an
     * int8 convolution kernel) runs every convolution but the last (one output channel) and every
     * transposed convolution as int8 dot products instead (vx_conv1d_i8w: 8-bit weights per output
     * channel and tap, each input row 8-bit with its own range, exact int32 sums: the same bits on every
     * path that has the kernel, except that where it widens codes to 16 bits (avx2, neon) convolutions of
     * c_out not a multiple of 64 keep f32 products: padding them costs more than it gains there).
     * Chosen at load, never by the chunk size. */
    const char *math;
    /* the decoder's copy in VRAM (--device vulkan without codec=cpu; set at load by family.c, freed
     * there), or NULL: then every stream of this codec decodes on the CPU */
    struct vx_codec_gpu *gpu;
};

/* The vocoder's receptive field in latent frames (q3_stream_prime decodes only that many frames' audio). */
int64_t q3_codec_vocoder_frames(const q3_codec *codec);

/* The vocoder's work buffers (floats) for sub-chunks of up to k frames, shared by the CPU stream and
 * the GPU decoder: the upsampled signal, an activation with its causal context, two scratch buffers
 * (tmp2 also holds a transposed convolution's taps) and the CPU's im2col tile (col). */
typedef struct q3_voc_sizes {
    int64_t sig, act, tmp, tmp2, col;
} q3_voc_sizes;
q3_voc_sizes q3_vocoder_sizes(const q3_codec *c, int64_t k);

/* Start over: the state of a fresh stream (zeros, position 0); keeps the scratch buffers. */
void q3_stream_reset(q3_stream *s);
/* Frames consumed so far (the RoPE position of the next frame). */
int64_t q3_stream_position(const q3_stream *s);
const q3_codec *q3_stream_codec(const q3_stream *s);
/* Samples [skip, skip + capacity) of the official decode of codes[n][groups] (reference mode, see
 * q3_codec_decode_reference) into pcm; decodes only the pieces that reach that range. */
vox_status q3_codec_decode_reference_range(const q3_codec *codec, vx_pool *pool, const int32_t *codes, int64_t n,
                                           int64_t skip, float *pcm, int64_t capacity);

#endif
