/* Internal: the F5-TTS family (Chen et al. 2024): a DiT flow estimator sampled by conditional flow
 * matching (Euler steps with classifier-free guidance, sway sampling, EPSS time grids) and the Vocos
 * vocoder, as f5-tts 1.1.22 / vocos 0.1.0 compute them (vox.reference.f5 is the readable spec; each
 * file here names the reference module it follows).
 *
 * Activations are float32 and time-major ([frames][channels]); weights are used in place from the
 * .tmod mapping in their stored dtype (f32, f16, bf16, q8), except the small depthwise and grouped
 * convolution kernels that nn.h wants in f32 (owned copies when stored otherwise).
 *
 * The CPU/GPU split: everything here runs on the CPU through kernels.h and nn.h; a GPU implementation
 * of the DiT step, the ODE loop and Vocos plugs in beside it (as qwen3/gpu_lm.c does for Qwen3-TTS) by
 * filling f5_model.gpu and answering f5_dit_step / f5_vocos_decode's contracts. */
#ifndef VOX_F5_H
#define VOX_F5_H

#include <stdatomic.h>
#include <stdint.h>

#include "../json.h"
#include "../kernels.h"
#include "../nn/nn.h"
#include "../pool.h"
#include "vox.h"

#define F5_NOISE_STREAM 4      /* Philox counter word 2 of the initial noise (docs/formats.md) */
#define F5_TIME_FREQS 128      /* half of the 256 sinusoids of the time embedding */

/* ------------------------------------------------------------------------------ configuration */
typedef struct f5_config {
    char variant[8];
    /* DiT */
    int64_t dim, depth, heads, dim_head, ff_mult, text_dim, text_num_embeds, mel_dim, conv_layers;
    int text_mask_padding;     /* v1 1, v0 0 */
    int64_t pe_attn_head;      /* heads with rotary embedding: v1 all (heads), v0 1 */
    /* mel */
    int64_t sample_rate, n_fft, hop, win, n_mels;
    /* vocos */
    int64_t voc_in, voc_dim, voc_hidden, voc_layers, voc_n_fft, voc_hop;
    int voc_same_padding;      /* head padding "same" (else "center") */
    /* inference defaults (InferDefaults) */
    float target_rms, cross_fade, cfg_strength, sway, speed;
    int32_t nfe_step, use_epss;
    int64_t max_duration;
} f5_config;

/* ------------------------------------------------------------------------------ weights */
typedef struct f5_textblock {   /* ConvNeXtV2Block of the text encoder */
    vx_convnext b;
} f5_textblock;

typedef struct f5_block {       /* DiTBlock */
    vx_mat mod, q, k, v, o, ff1, ff2;
    const float *mod_b, *q_b, *k_b, *v_b, *o_b, *ff1_b, *ff2_b;
    /* bf16 weights on a path with bf16 dot products (f5_model.dit_bf16): the six matrices packed for
     * vx_linear_bf16w (inputs rounded to bf16, products exact, f32 sums: twice the f32 rate) */
    vx_bf16w pq, pk, pv, po, pff1, pff2;
    /* q8 weights on a path with an int8 GEMM kernel (f5_model.dit_q8): the six matrices packed for
     * vx_linear_q8w (the q8 arithmetic of vx_linear, on tiles of many rows) */
    vx_q8w qq, qk, qv, qo, qff1, qff2;
} f5_block;

typedef struct f5_vocos {
    vx_mat embed, head;
    const float *embed_b, *norm_w, *norm_b, *final_w, *final_b, *head_b;
    vx_convnext *blocks;       /* [voc_layers] */
    float *window;             /* Hann [n_fft] */
} f5_vocos;

struct f5_front;               /* the text frontend (text.c) */

typedef struct f5_model {
    vox_model *file;
    const vox_json *manifest;
    char model_id[80];
    f5_config c;
    /* text encoder */
    vx_mat text_embed;         /* [text_num_embeds + 1][text_dim] */
    f5_textblock *text_blocks; /* [conv_layers] */
    /* input embedding */
    vx_mat in_proj, conv0, conv2;
    const float *in_proj_b, *conv0_b, *conv2_b;
    /* time embedding */
    vx_mat t1, t2;
    const float *t1_b, *t2_b;
    const float *inv_freq;     /* rotary [dim_head / 2] */
    f5_block *blocks;          /* [depth] */
    vx_mat norm_out, proj_out;
    const float *norm_out_b, *proj_out_b;
    f5_vocos voc;
    float *melbank;            /* [n_mels][n_fft / 2 + 1] */
    vx_mat melbank_mat;
    float *mel_window;         /* [n_fft] */
    struct f5_front *front;
    float **owned;             /* f32 copies of weights stored in another dtype */
    size_t n_owned;
    int dit_bf16;              /* the DiT blocks' linears (f5_block.p*) and attention run as bf16 dot products */
    int dit_q8;                /* the DiT blocks' linears run as vx_linear_q8w (f5_block.q*) */
    int att_bf16;              /* the attention runs as bf16 dot products (vx_nn_attention_bf16) */
    int att_q8;                /* ... with its scores as q8 products (vx_nn_attention_q8) */
    int conv_bf16;             /* the input embedding's convolutions as bf16 dot products (conv0_bw, conv2_bw) */
    vx_nn_gconv_bf16 conv0_bw, conv2_bw;
    const char *dit_math;      /* what they run as, and why (engine info) */
    char dit_math_buf[512];    /* where it is written when it names the kernels */
    void *gpu;                 /* a GPU implementation's state (NULL: CPU) */
} f5_model;

vox_status f5_model_load(vox_model *file, const vox_json *manifest, f5_model **out);
void f5_model_free(f5_model *m);
vox_status f5_check_manifest(const vox_model *m, const vox_json *root);

/* ------------------------------------------------------------------------------ stages */
enum { F5_ST_TEXT, F5_ST_REFERENCE, F5_ST_TEXT_ENCODER, F5_ST_DIT, F5_ST_VOCOS, F5_STAGES };
extern const char *const f5_stage_names[F5_STAGES + 1];

/* A tap of an intermediate (verification entries): time-major [rows][cols]. */
typedef void (*f5_tap_fn)(void *ctx, const char *name, const float *data, int64_t rows, int64_t cols);

/* The log-mel of mono audio at the model's rate (mel.c): [vx_stft_frames(n, hop)][n_mels] into *out
 * (malloc'd), *frames. */
vox_status f5_log_mel(const f5_model *m, vx_pool *pool, const float *x, int64_t n, float **out, int64_t *frames);

/* The text encoder (textenc.c): ids [nt] (vocabulary indices, no +1) -> [n][text_dim]; drop: the
 * unconditional branch (every id replaced by the filler after the filler mask is taken). */
vox_status f5_text_encoder(const f5_model *m, vx_pool *pool, const int32_t *ids, int64_t nt, int64_t n, int drop,
                           float *out);

/* The time embedding of t (dit.c): [dim]. */
vox_status f5_time_embedding(const f5_model *m, vx_pool *pool, float t, float *out);

/* Where a DiT evaluation spends its time (VOX_PROFILE=1): milliseconds per part, summed over calls. */
enum { F5_DP_INPUT, F5_DP_MOD, F5_DP_NORM, F5_DP_QKV, F5_DP_ROPE, F5_DP_ATTN, F5_DP_OUT, F5_DP_FF1, F5_DP_GELU, F5_DP_FF2,
       F5_DP_GATE, F5_DP_FINAL, F5_DIT_PARTS };
extern const char *const f5_dit_part_names[F5_DIT_PARTS];
typedef struct f5_dit_prof {
    double ms[F5_DIT_PARTS];
} f5_dit_prof;

/* One DiT evaluation for `batch` branches of n frames at once (dit.c): x, cond [batch][n][mel_dim] (a
 * branch that drops the audio condition passes zeros), text [batch][n][text_dim] (text_encoder
 * outputs), time embedding temb [dim] shared, or its modulations mods (f5_dit_modulations; NULL: from
 * temb); flow -> [batch][n][mel_dim]. */
vox_status f5_dit(const f5_model *m, vx_pool *pool, int64_t batch, int64_t n, const float *x, const float *cond,
                  const float *text, const float *temb, const float *mods, float *flow, f5_tap_fn tap, void *tap_ctx,
                  f5_dit_prof *prof);
/* The adaLN modulations of `steps` time embeddings temb [steps][dim] (mods NULL in f5_dit computes one):
 * mods [steps][(6 depth + 2) dim], per step every block's shift/scale/gate x 2 then the output's scale,
 * shift; each step's the same bits as f5_dit computes from its temb alone. */
vox_status f5_dit_modulations(const f5_model *m, vx_pool *pool, const float *temb, int64_t steps, float *mods);

/* The sampler (cfm.c). */
int f5_epss_grid(int32_t steps, float *t);   /* 1: an EPSS grid exists for steps; t [steps + 1] */
void f5_timesteps(int32_t steps, float sway, int use_epss, float *t);
int64_t f5_total_frames(int64_t text_len, int64_t cond_frames, int64_t duration, int64_t max_duration);
typedef struct f5_sample_opts {
    int32_t steps, use_epss;
    float cfg_strength, sway;
    uint64_t seed;
    uint32_t piece;
    const atomic_int *cancel;
    double *dit_ms;            /* accumulated DiT time, or NULL */
    f5_dit_prof *prof;         /* per part of the DiT (VOX_PROFILE), or NULL */
    f5_tap_fn tap;             /* "x0", "trajectory" (every state), "flow_cond", "flow_uncond" (first step) */
    void *tap_ctx;
} f5_sample_opts;
/* CFM.sample: cond_mel [nc][n_mels], ids [nt], duration -> *mel (malloc'd) [*total][n_mels] with the
 * reference frames restored. */
vox_status f5_sample(const f5_model *m, vx_pool *pool, const float *cond_mel, int64_t nc, const int32_t *ids,
                     int64_t nt, int64_t duration, const f5_sample_opts *o, float **mel, int64_t *total);
/* The initial noise x0 of piece `piece` (noise.c): [frames][channels]. */
void f5_initial_noise(uint64_t seed, uint32_t piece, int64_t frames, int64_t channels, float *x0);

/* Vocos (vocos.c): mel [frames][n_mels] -> *audio (malloc'd), *n (hop (frames - 1) for center padding). */
vox_status f5_vocos_decode(const f5_model *m, vx_pool *pool, const float *mel, int64_t frames, float **audio,
                           int64_t *n, f5_tap_fn tap, void *tap_ctx);

/* ------------------------------------------------------------------------------ the reference recording */
/* preprocess_ref_audio_text's audio part (refaudio.c) on 16-bit PCM frames at `rate` (mono): pydub's
 * silence clipping to about 12 s, leading/trailing silence trimmed, 50 ms of silence appended. *out
 * (malloc'd) holds *n_out samples at *rate_out (the input's rate, or 11025 Hz for an all-silent input,
 * as pydub does); *speech: samples before the appended silence. */
vox_status f5_preprocess_pcm(const int16_t *pcm, int64_t n, int32_t rate, int16_t **out, int64_t *n_out,
                             int32_t *rate_out, int64_t *speech);
/* The end of preprocess_ref_audio_text: the reference text ends in ". " or "。" (malloc'd copy). */
char *f5_fix_ref_text(const char *text);

/* What a voice conditions on: the loudness-normalized 24 kHz reference's log-mel, its rms before
 * normalization, whether it was scaled up (then the output is scaled back), and the numbers the piece
 * durations read. */
typedef struct f5_reference {
    float *mel;                /* [frames][n_mels] */
    int64_t frames;            /* 1 + samples / hop */
    float rms;
    int scaled;
    int64_t ref_samples;       /* the preprocessed recording at its own rate (max_chars) */
    int32_t ref_rate;
} f5_reference;
void f5_reference_free(f5_reference *r);
/* From a recording as given (float PCM in [-1, 1], mono): 16-bit PCM, preprocess, loudness, resampling,
 * log-mel. VOX_ERR_INVALID_ARGUMENT for a silent or too short recording. */
vox_status f5_reference_from_recording(const f5_model *m, vx_pool *pool, const float *mono, int64_t n, int32_t rate,
                                       float target_rms, f5_reference *out);

/* ------------------------------------------------------------------------------ the text pipeline */
/* utils_infer.chunk_text, incrementally (pipeline.c): the next piece of text[0, len) (UTF-8), starting
 * with an empty piece. complete: the text ends at len (else more may follow). Returns 1 with the
 * piece (malloc'd, stripped) and *consumed (bytes of text it covers, where the next scan starts) when
 * the piece is decided, 0 when more text is needed (never when complete and something remains),
 * -1 out of memory. */
int f5_next_piece(const char *text, size_t len, int complete, int64_t max_chars, char **piece, size_t *consumed);
/* All pieces of a complete text (tests and fix_duration): *pieces (malloc'd array of malloc'd strings). */
vox_status f5_chunk_text(const char *text, size_t len, int64_t max_chars, char ***pieces, size_t *n);
int64_t f5_max_chars(size_t ref_text_bytes, int64_t ref_samples, int32_t ref_rate, double speed);
int64_t f5_piece_duration(int64_t ref_frames, size_t ref_text_bytes, size_t piece_bytes, double speed, double fix,
                          int64_t hop, int64_t sr);
/* fix_duration shared out over pieces of the given byte counts (fix <= 0: none: every entry 0). */
void f5_fix_durations(double fix, const size_t *bytes, size_t n, int64_t ref_frames, int64_t hop, int64_t sr,
                      double cross_fade, double *out);

/* ------------------------------------------------------------------------------ the text frontend */
/* text.c: vocabulary, jieba-rs segmentation, pypinyin TONE3 with sandhi, convert_char_to_pinyin. */
vox_status f5_front_create(const vox_model *file, const vox_json *tokenizer, int64_t vocab_size,
                           struct f5_front **out);
void f5_front_free(struct f5_front *f);
/* Token ids of UTF-8 text: *ids (malloc'd), *n. */
vox_status f5_tokenize(const struct f5_front *f, const char *text, size_t len, int32_t **ids, int64_t *n);
/* The symbols of a text, each followed by a 0x1F unit separator (tests): *out (malloc'd), *len. */
vox_status f5_symbols(const struct f5_front *f, const char *text, size_t len, char **out, size_t *out_len);
/* The word segmentation (jieba-rs cut) of a text, each segment followed by 0x1F (tests). */
vox_status f5_segment(const struct f5_front *f, const char *text, size_t len, char **out, size_t *out_len);

#endif
