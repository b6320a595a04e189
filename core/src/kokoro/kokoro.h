/* Internal: the Kokoro-82M family (StyleTTS2 / ISTFTNet; the official kokoro.KModel v1.0).
 *
 * Activations are float32 and time-major ([t][channels]) everywhere, so convolutions run as
 * im2col + vx_linear on the stored [c_out][c_in * k] weights and LSTM inputs are rows of one GEMM.
 * Weights are used in place from the .tmod mapping (f32, bf16 or q8 matrices); only the transposed
 * convolutions' weights (small) are converted to f32 at load when stored in another dtype. */
#ifndef VOX_KOKORO_H
#define VOX_KOKORO_H

#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "../json.h"
#include "../kernels.h"
#include "../nn/nn.h"
#include "../pool.h"
#include "vox.h"

#define KK_STYLE 128        /* style_dim: ref_s[:128] decoder style, ref_s[128:] predictor style */
#define KK_PACK_ROWS 510    /* rows of a voice pack (one per phoneme count) */
#define KK_MAX_PHONEMES 510 /* phonemes per span (the model input adds a 0 at both ends: 512) */
#define KK_SAMPLE_RATE 24000
#define KK_HOP 300          /* audio samples per predictor frame pair: upsample 10 * 6 * istft hop 5 */

typedef struct kk_conv {    /* Conv1d: weight [c_out][c_in][k] seen as the matrix [c_out][c_in * k] */
    vx_mat w;
    const float *b;         /* NULL: no bias */
    int64_t c_in, c_out, k;
    vx_bf16w bw;            /* bw.data set: packed for bf16 dot products (kk_model.gen_math) */
    vx_i8w iw;              /* iw.data set: packed for int8 dot products (the generator's resblocks) */
} kk_conv;

typedef struct kk_convt {   /* ConvTranspose1d, weight [c_in][c_out / groups][k] in f32 */
    const float *w;
    const float *b;
    int64_t c_in, c_out, k, stride, pad, groups;
    vx_bf16w bw;            /* bw.data set: W^T [k][c_out][c_in] (tap-major) packed for bf16 dot products (dense only) */
} kk_convt;

typedef struct kk_resblk {  /* AdainResBlk1d (decoder, F0/N branches) */
    vx_adain norm1, norm2;
    kk_conv conv1, conv2, sc;  /* sc.w.data NULL: identity shortcut */
    kk_convt pool;             /* upsample: depthwise ConvTranspose1d k3 s2 */
    int upsample;
} kk_resblk;

typedef struct kk_snakeblk { /* AdaINResBlock1 (generator): three dilated conv pairs with Snake */
    vx_adain adain1[3], adain2[3];
    kk_conv convs1[3], convs2[3];
    const float *alpha1[3], *alpha2[3], *inv_alpha1[3], *inv_alpha2[3]; /* inv: 1 / alpha (float) */
    int64_t dil[3], k;
} kk_snakeblk;

typedef struct kk_albert_layer {
    vx_mat q, k, v, o, ffn, ffn_out;
    const float *q_b, *k_b, *v_b, *o_b, *ffn_b, *ffn_out_b, *ln1_w, *ln1_b, *ln2_w, *ln2_b;
} kk_albert_layer;

typedef struct kk_model {
    vox_model *file;
    const vox_json *manifest, *config, *vocab;
    char model_id[80], variant[32];
    int64_t n_token, hidden, n_layers, max_dur;
    /* PL-BERT (ALBERT, one shared layer applied n_bert_layers times) */
    int64_t bert_hidden, bert_heads, bert_layers, bert_ffn, bert_emb, bert_ctx;
    vx_mat word_emb, pos_emb, type_emb, emb_in;
    const float *emb_ln_w, *emb_ln_b, *emb_in_b;
    kk_albert_layer layer;
    vx_mat bert_enc; const float *bert_enc_b;
    /* prosody predictor */
    vx_lstm dur_lstm[3];
    vx_mat dur_ada[3]; const float *dur_ada_b[3];
    vx_lstm pred_lstm, shared;
    vx_mat dur_proj; const float *dur_proj_b;
    kk_resblk f0[3], n[3];
    kk_conv f0_proj, n_proj;
    /* text encoder */
    vx_mat te_emb;
    kk_conv te_cnn[3];
    const float *te_ln_g[3], *te_ln_b[3];
    vx_lstm te_lstm;
    /* decoder */
    kk_resblk enc, dec[4];
    kk_conv f0_conv, n_conv, asr_res;
    /* generator */
    kk_convt ups[2];
    kk_conv noise_convs[2], conv_post;
    int64_t noise_stride[2], noise_pad[2];
    kk_snakeblk noise_res[2], resblocks[6];
    const float *l_linear_w, *l_linear_b;  /* harmonic merge, [1][9] */
    int64_t n_fft, hop;
    float *stft_basis, *istft_basis, *istft_env_window;  /* owned */
    /* f32 copies of weights stored in another dtype (transposed convolutions) */
    float **owned; size_t n_owned;
    /* The decoder's math (weights.c, choose_generator_math; VOX_KOKORO_GEN=auto|int8|bf16|f32), from
     * what the CPU path's kernels offer (kernels.h, vx_cpu_dots):
     *  - the generator's Snake resblocks (main and noise branch: ~95% of the model's multiplies) as
     *    int8 dot products (per-channel weight codes, each gathered input row quantized with its own
     *    range) on every SIMD path (VNNI where present, vpmaddwd on plain AVX2);
     *  - the decoder's AdainResBlk1d convolutions as bf16 products (AVX512-BF16: bf16 inputs too, ~2x
     *    f32; elsewhere f32 inputs times widened bf16 weights: half the weight bytes, no im2col), and the
     *    Snake resblocks too when int8 is not used;
     *  - f32 on the scalar path. Everything before the decoder (PL-BERT, durations, F0/N) stays f32.
     * Each is measured against the official model in conformance/test_kokoro_native.py and
     * test_kokoro_perceptual.py. gen_math: "int8+bf16", "int8+f32", "bf16" or "f32"; gen_math_why: the reason. */
    int gen_bf16, gen_int8;
    const char *gen_math, *gen_math_why;
    char gen_math_why_buf[160];
    /* voice packs */
    int n_speakers;
    /* the English text frontend (NULL when the .tmod has no frontend data) */
    struct vx_kfront *front;
} kk_model;

vox_status kk_model_load(vox_model *file, const vox_json *manifest, kk_model **out);
void kk_model_free(kk_model *m);

/* A voice pack row [256] of a built-in speaker, or NULL (error set) if there is none of that name. */
const float *kk_speaker_pack(const kk_model *m, const char *name, char *canon, size_t canon_cap);

/* Intermediate tensors of one forward pass, for verification: called with each stage's result
 * (time-major [rows][cols]) when set. */
typedef void (*kk_tap_fn)(void *ctx, const char *name, const float *data, int64_t rows, int64_t cols);

typedef struct kk_forward_opts {
    float speed;         /* durations are divided by it */
    uint64_t seed;
    uint32_t span;       /* span index within the session: part of the noise address */
    int noise;           /* 0: the sine source's random phase and noise are zero (comparisons) */
    kk_tap_fn tap;
    void *tap_ctx;
    const atomic_int *cancel;  /* checked between stages; NULL: never */
    double *stage_ms;    /* [KK_STAGES] cumulative stage times, or NULL */
    const int32_t *durations; /* [n] frames per token in place of the predicted ones (teacher forcing), or NULL */
} kk_forward_opts;

enum { KK_ST_BERT, KK_ST_PREDICTOR, KK_ST_TEXT, KK_ST_F0N, KK_ST_DECODER, KK_ST_GENERATOR, KK_ST_ISTFT, KK_STAGES };
extern const char *const kk_stage_names[KK_STAGES + 1]; /* NULL-terminated */
/* The manifest check of the family (manifest.c). */
vox_status kk_check_manifest(const vox_model *m, const vox_json *root);

/* ids: the model input [0, phoneme ids..., 0] (n <= 512); style: a voice pack row [256].
 * On success *audio (malloc'd, caller frees) holds *n_audio samples at 24 kHz and *frames the
 * predicted frame count. VOX_ERR_CANCELLED when opts->cancel was set. */
vox_status kk_forward(const kk_model *m, vx_pool *pool, const int32_t *ids, int64_t n, const float *style,
                      const kk_forward_opts *opts, float **audio, int64_t *n_audio);

/* Stages (forward.c calls them in order). */
vox_status kk_albert(const kk_model *m, vx_pool *pool, const int32_t *ids, int64_t n, float *out /*[n][768]*/);
vox_status kk_text_encoder(const kk_model *m, vx_pool *pool, const int32_t *ids, int64_t n, float *out /*[n][512]*/);
vox_status kk_duration_encoder(const kk_model *m, vx_pool *pool, const float *d_en, int64_t n, const float *s,
                               float *d /*[n][hidden + style]*/);
vox_status kk_durations(const kk_model *m, vx_pool *pool, const float *d, int64_t n, float speed, float *raw,
                        int32_t *dur);
vox_status kk_f0n(const kk_model *m, vx_pool *pool, const float *en, int64_t frames, const float *s, float *f0,
                  float *nn);
vox_status kk_decoder(const kk_model *m, vx_pool *pool, const float *asr, const float *f0, const float *nn,
                      int64_t frames, const float *s, float **x_out /*[2 frames][512]*/);
vox_status kk_generator(const kk_model *m, vx_pool *pool, const float *x, int64_t t, const float *s,
                        const float *f0_curve, const kk_forward_opts *opts, float **spec_out, int64_t *n_spec_frames);
vox_status kk_istft(const kk_model *m, vx_pool *pool, const float *spec, int64_t frames, float *audio);
vox_status kk_harmonic_source(const kk_model *m, vx_pool *pool, const float *f0_curve, int64_t t2,
                              const kk_forward_opts *opts, float *har /*[t2 * 60 + 1][n_fft + 2]*/);

/* Building blocks (ops.c). All buffers time-major. */
vox_status kk_conv1d(vx_pool *pool, const kk_conv *c, const float *x, int64_t t_in, int64_t dil, int64_t stride,
                     int64_t pad_l, int64_t pad_r, float *y, int64_t *t_out);
/* A 1x1 convolution (a matrix on each row), through the packed bf16 weight when there is one. */
vox_status kk_conv1x1(vx_pool *pool, const kk_conv *c, const float *bias, const float *x, int64_t t, float *y);
vox_status kk_convt1d(vx_pool *pool, const kk_convt *c, const float *x, int64_t t_in, int64_t out_pad, float *y,
                      int64_t *t_out);
vox_status kk_resblk_run(vx_pool *pool, const kk_resblk *b, const float *s, const float *x, int64_t t,
                         float **y, int64_t *t_out);
/* Scratch a generator stage reuses from block to block (NULL members or a NULL kk_work: allocated per call). */
typedef struct kk_work {
    float *r;        /* [r_cap floats]: the block's inner activation */
    int64_t r_cap;
    void *q;         /* q_size bytes: the int8 convolutions' scratch (vx_conv1d_i8w_work_size) */
    size_t q_size;
} kk_work;
/* AdaINResBlock1: x += conv2(snake2(adain2(conv1_dilated(snake1(adain1(x)))))) three times, x starting as
 * x_in; each AdaIN + Snake is applied as its convolution gathers its input rows, and conv2 adds into x
 * (x_in == x: in place; x_in is only read); in_mean/in_m2 ([c] each, or
 * NULL): x_in's moments (vx_nn_channel_moments) when the caller has them. */
vox_status kk_snakeblk_run_ex(vx_pool *pool, const kk_snakeblk *b, const float *s, const float *x_in, float *x,
                              int64_t t, const double *in_mean, const double *in_m2, kk_work *w);

#endif
