/* Internal to the Qwen3 language-model files (lm.c, talker.c, sampling.c, prompt.c, lm_session.c):
 * the loaded model (struct q3_lm), the decoder stack shared by talker and code predictor, KV caches
 * and scratch, the logits processing, and the session state. See lm.h for the overview. */
#ifndef VOX_QWEN3_LM_INTERNAL_H
#define VOX_QWEN3_LM_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "lm.h"

/* ------------------------------------------------------------------------------ decoder stack */
typedef struct q3_layer {
    vx_mat q, k, v, o, gate, up, down;
    const float *qb, *kb, *vb, *ob;                 /* attention biases (NULL without attention_bias) */
    const float *in_norm, *post_norm, *q_norm, *k_norm;
    int64_t window;                                 /* sliding window; 0: full attention */
} q3_layer;

/* A Qwen3 decoder (reference talker.Qwen3Decoder + DecoderConfig): talker or code predictor. */
typedef struct q3_decoder {
    int64_t hidden, n_layers, heads, kv_heads, head_dim, inter;
    float eps, scale;                               /* rms_norm_eps; head_dim ** -0.5 as float32 */
    double theta;
    q3_layer *layers;
    const float *norm;
    float *inv_freq;                                /* [head_dim / 2], reference nn.rope_inv_freq */
    int n_section;                                  /* talker mrope: 3 sections; 0: plain 1-D rope */
    int64_t section[4];
    int interleaved;
} q3_decoder;

/* Keys (post-rope) and values of every layer: [cap][kv_heads][head_dim] each. */
typedef struct q3_kv {
    int64_t cap, len, n_layers, row;                /* row = kv_heads * head_dim */
    float **k, **v;
} q3_kv;

/* Work buffers of a decoder forward over at most `rows` rows (allocated once per session). */
typedef struct q3_scratch {
    int64_t rows;
    float *h, *q, *a, *t, *g, *u, *cos, *sin;
} q3_scratch;

vox_status q3_kv_init(q3_kv *kv, const q3_decoder *d, int64_t cap);
vox_status q3_kv_reserve(q3_kv *kv, int64_t cap);   /* grow (keeps contents) */
void q3_kv_free(q3_kv *kv);
vox_status q3_scratch_init(q3_scratch *s, const q3_decoder *d, int64_t rows);
void q3_scratch_free(q3_scratch *s);

/* cos/sin [n][head_dim] for positions start.. (all three mrope axes equal, as text prompts have). */
void q3_rope_table(const q3_decoder *d, int64_t start, int64_t n, float *cos, float *sin);
/* The general 3-axis rope: pos [3][n] (temporal, height, width) -> cos/sin [n][head_dim]
 * (reference talker.mrope_cos_sin). */
void q3_mrope_table(const q3_decoder *d, const int64_t *pos, int64_t n, float *cos, float *sin);

/* x [n][hidden] holds the new positions' inputs (kv->len ..): runs every layer (appending to kv),
 * leaves the residual stream in x and writes the final-normed hidden states to out [n][hidden].
 * n <= scratch rows; cos/sin [n][head_dim]. */
void q3_decoder_forward(const q3_decoder *d, vx_pool *pool, q3_scratch *sc, q3_kv *kv, float *x, int64_t n,
                        const float *cos, const float *sin, float *out);

/* ------------------------------------------------------------------------------ the model */
struct q3_lm {
    const q3_model *m;
    q3_decoder talker, pred;
    int64_t vocab, n_groups, text_vocab, text_hidden, text_inter, pvocab;
    vx_mat text_emb, fc1, fc2, codec_emb, codec_head;
    const float *fc1_b, *fc2_b;
    vx_mat *pemb, *phead;                           /* [n_groups - 1] predictor embeddings / heads */
    vx_mat proj;                                    /* small_to_mtp_projection (has_proj) */
    const float *proj_b;
    int has_proj;
    /* ids */
    int32_t codec_pad, codec_bos, codec_eos, think, nothink, think_bos, think_eos;
    int32_t tts_bos, tts_eos, tts_pad;              /* text token ids */
    float *tts_bos_e, *tts_eos_e, *tts_pad_e;       /* their text embeddings [hidden] */
    float *pred_cos, *pred_sin;                     /* predictor rope for positions 0..n_groups */
    int64_t gen_max_new_tokens;                     /* generation config max_new_tokens (guard cap) */
};

/* text_projection(text_embedding(ids)) -> out [n][hidden]; work: [n][text_hidden + text_inter]. */
void q3_text_embed(const q3_lm *lm, vx_pool *pool, const int32_t *ids, int64_t n, float *work, float *out);
/* Sum of a frame's code embeddings (group 0 first, in order), talker width: out [hidden];
 * tmp [hidden]. */
void q3_frame_embed(const q3_lm *lm, const int32_t *codes, float *tmp, float *out);

/* ------------------------------------------------------------------------------ sampling */
typedef struct q3_sampler {
    int do_sample;
    float temperature;
    int32_t top_k;
    float top_p;
} q3_sampler;

/* Work buffers for processing one row of V scores. */
typedef struct q3_sample_work {
    int64_t cap;
    float *sel;                                     /* top-k selection */
    double *w;                                      /* weights / cumulative sums */
    int32_t *order;                                 /* top-p order */
} q3_sample_work;

vox_status q3_sample_work_init(q3_sample_work *w, int64_t v);
void q3_sample_work_free(q3_sample_work *w);
/* The warpers in transformers' order (temperature, top-k, top-p), in place; nothing when greedy. */
void q3_warp(float *s, int64_t v, const q3_sampler *p, q3_sample_work *w);
/* The talker's processing: repetition penalty over the distinct codes in hist[0..n_distinct),
 * min_new_tokens (EOS -> -inf while n_generated < min_new), suppression of [v-1024, v) except EOS,
 * then the warpers. */
void q3_process_talker(float *s, int64_t v, const int32_t *distinct, int64_t n_distinct, int64_t n_generated,
                       float penalty, int32_t eos, int64_t min_new, const q3_sampler *p, q3_sample_work *w);
int32_t q3_greedy(const float *s, int64_t v);
int32_t q3_sample(const float *s, int64_t v, double u, q3_sample_work *w);
int32_t q3_choose(const float *s, int64_t v, int do_sample, uint64_t seed, uint32_t frame, uint32_t codebook,
                  q3_sample_work *w);

/* ------------------------------------------------------------------------------ sessions */
enum { Q3_ICL, Q3_XVECTOR, Q3_SPEAKER, Q3_DESIGN };
enum { Q3_FRAME = 0, Q3_STOP = 1, Q3_NEED_TEXT = 2, Q3_ERROR = 3 };
#define Q3_EOS_MARK (-1)   /* tts_eos in the text stream */
#define Q3_CHUNK_ROWS 64   /* prefill rows per forward (cancellation is checked between them); 64
                             * rather than 32: the weights are streamed once per 64 rows (prefill -14%) */

/* Statistics of a session's stages, reported to the engine (vx_stats_stage) by the pulling thread. */
typedef struct q3_stats {
    double prefill_ms, talker_ms, predictor_ms, decoder_ms;
    uint64_t prefills, frames, decoded;
} q3_stats;

typedef struct q3_sess {
    vox_session *s;
    const q3_options *o;                /* the session's options (s->opts) */
    const q3_model *m;
    const q3_lm *lm;
    vx_pool *pool;
    /* what the prompt is built from (resolved at init) */
    int mode, nonstream;
    int32_t lang_id;                    /* -1: auto (nothink) */
    int32_t spk_id;                     /* CustomVoice speaker codec row, or -1 */
    const float *spk_embed;             /* Base voices' x-vector [hidden], or NULL */
    int32_t *instr_ids;
    int64_t n_instr;
    const int32_t *ref_ids;             /* ICL: ref text tokens without the template ([3:-2]) */
    int64_t n_ref_ids, n_ref;           /* n_ref: reference frames */
    const int32_t *ref_codes;
    /* text: tokens of "<|im_start|>assistant\n" + text (+ the template's end once final) */
    char *tmpl;
    size_t tmpl_cap, tok_stable;        /* bytes of the current segment's template the ids cover */
    size_t seg_start;                   /* bytes of the text in closed segments (each flush closes one) */
    int32_t *closed;                    /* the closed segments' text ids, in order */
    int64_t n_closed;
    int32_t *ids;
    int64_t n_ids, n_text;              /* n_text: text tokens known (ids[3:], or ids[3:-5] when final) */
    int final;
    /* the text stream S = [ICL ref tokens] + text tokens + [tts_eos once final], embedded row by row */
    int32_t *S;
    float *semb;
    int64_t nS, capS, trail_off;        /* trailing text of frame f is S[trail_off + f], then tts_pad */
    float *twork;                       /* text-embedding work [Q3_CHUNK_ROWS][text_hidden + text_inter] */
    /* the prompt */
    float *prompt;
    int64_t n_prompt;
    int prompt_built, prefilled;
    /* talker */
    q3_kv kv;
    q3_scratch tsc;
    float *x, *hid, *hidden, *logits, *scores, *ftmp;
    struct vx_q3_gsess *gpu;            /* the talker and predictor on the GPU (model on a Vulkan device) */
    vox_status gpu_status;              /* the first GPU failure, returned by the next pull */
    int gpu_sampling;                   /* the predictor's frame in one GPU submission (sampling there) */
    /* code predictor */
    q3_kv pkv;
    q3_scratch psc;
    float *pin, *px, *pout, *plogits;
    q3_sample_work swt, swp;
    q3_sampler talker_sp, pred_sp;
    /* generation */
    int32_t *codes;
    int64_t n_frames, cap_frames;
    uint8_t *seen;
    int32_t *distinct;
    int64_t n_distinct, n_hist;
    int have_code0, pending_adv, stopped, finished, spent;
    int32_t code0;
    /* audio */
    struct q3_stream *stream;
    float *pcm;
    size_t pcm_cap;
    /* codec=cpu overlap (lm_session.c): while the pulling thread decodes chunk k on the CPU, a worker
     * thread generates the frames of chunk k+1 with the LM on the GPU; it owns the generation state
     * (everything above, q->codes included) from its start until the next pull joins it */
    int overlap;                        /* allowed for this session: LM on a GPU, decoder on the CPU */
    int worker_on, worker_r;            /* a worker runs (join it); its q3_next_frame / q3_peek result */
    int ahead;                          /* the frames from worker_first on are the next pull's chunk */
    pthread_t worker;
    int64_t worker_first;               /* the first frame it generates */
    vox_status worker_st;
    char worker_err[512];               /* its error message (errors are per thread) */
    int32_t *dec_codes;                 /* the codes of the chunk being decoded, apart from q->codes */
    size_t dec_cap;
    int64_t n_chunks, n_overlapped;     /* streamed chunks; those decoded beside a worker (VOX_PROFILE) */
    q3_stats gen;                       /* generation statistics (talker, predictor, frames), merged into delta
                                           by the pulling thread when no worker runs */
    /* statistics: not yet reported to the engine / totals for VOX_PROFILE */
    q3_stats delta;
    double tot_prefill, tot_talker, tot_pred, tot_dec;
    int64_t tot_frames, tot_samples, tot_steps;
} q3_sess;

/* prompt.c */
vox_status q3_sess_resolve(q3_sess *q);                 /* voice, language, instruction (at init) */
vox_status q3_sess_update_text(q3_sess *q);             /* tokenize what is stable, extend S */
size_t q3_sess_used(const q3_sess *q);                  /* bytes of the text whose tokens are fixed */
bool q3_sess_can_prefill(const q3_sess *q);
vox_status q3_sess_build_prompt(q3_sess *q);
bool q3_trailing_ready(const q3_sess *q, int64_t frame);
const float *q3_trailing(const q3_sess *q, int64_t frame);
int64_t q3_sess_limit(const q3_sess *q);                /* talker steps allowed (INT64_MAX: unknown yet) */

/* generate.c */
vox_status q3_sess_alloc(q3_sess *q);                   /* buffers that depend only on the model */
vox_status q3_prefill(q3_sess *q);                      /* Q3: VOX_ERR_CANCELLED between chunks */
void q3_talker_step(q3_sess *q, const int32_t *codes, const float *trailing);
/* the code predictor for one frame: codes[1..G-1] from hidden + codes[0]; forced: use the given
 * codes (teacher forcing) and write every group's raw logits to logits_out [G-1][pvocab] if not NULL */
void q3_predict(q3_sess *q, int32_t *codes, int forced, float *logits_out);
int q3_next_frame(q3_sess *q, vox_status *st);          /* Q3_FRAME / Q3_STOP / Q3_NEED_TEXT / Q3_ERROR */
int q3_peek(q3_sess *q, vox_status *st);                /* find out whether the next frame stops */

/* The default guard on talker steps for a text of n_text tokens (see lm.h). */
int64_t q3_guard_steps(const q3_lm *lm, int64_t n_text);

#endif
