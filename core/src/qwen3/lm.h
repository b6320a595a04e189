/* Internal: the Qwen3-TTS language-model side: talker + code predictor (weights in place, any dtype),
 * prompt building (Base ICL / x-vector, CustomVoice speaker + instruction + dialects, VoiceDesign;
 * streaming and non-streaming text), the official logits processing with Philox sampling
 * (bit-identical to vox.reference.qwen3.sampling), the generation loop with its stop rules and the
 * guard, and the family's sessions (text feeding, chunking, decoder modes, cancellation).
 * Mirrors vox.reference.qwen3.{talker, code_predictor, prompt, sampling, generate}. */
#ifndef VOX_QWEN3_LM_H
#define VOX_QWEN3_LM_H

#include "../family.h"
#include "model.h"

/* The default guard (vox_synth_params.max_new_tokens = 0): talker steps at most
 *     min(Q3_GUARD_BASE + Q3_GUARD_PER_TOKEN * n_text, generation max_new_tokens (8192 if absent))
 * where n_text is the number of text tokens of the utterance (the template's role and end tokens,
 * the ICL reference text and the instruction not counted), i.e. at most ~5 s plus 0.64 s per token,
 * about twice the slowest natural speech. Steps N give at most N - 1 frames (as the official
 * max_new_tokens). While text is still being fed (before vox_session_end) the guard cannot bind:
 * a frame needs its trailing text token, so frames never outrun the text. */
#define Q3_GUARD_BASE 64
#define Q3_GUARD_PER_TOKEN 8

/* Sessions (lm_session.c, generate.c, prompt.c):
 *  - Text: the template "<|im_start|>assistant\n" + text is tokenized up to
 *    q3_tokenizer_stable_prefix while text is still fed, completely at vox_session_end; the prompt
 *    slices the ids as the official generate does (role [:3], text [3:-5]).
 *  - A pull first builds the prompt and runs the prefill (batched, Q3_CHUNK_ROWS rows per forward,
 *    cancellation checked between them). It needs the first text token (streaming text), the
 *    reference-length part of the ICL text stream (streaming ICL), or the whole text
 *    (non_streaming_text); until then it returns VOX_CHUNK_NEED_TEXT.
 *  - Frames: group 0 from the talker (processed + Philox codebook 0), groups 1..15 from the code
 *    predictor (codebooks 1..15); the frame is fed back to the talker lazily, when the next frame
 *    is asked for, because that step needs the frame's trailing text token: a frame whose trailing
 *    token has not arrived yet makes the pull return the frames it has (or VOX_CHUNK_NEED_TEXT).
 *  - Chunks hold chunk_frames frames (fewer when the text runs out or generation ends). After a
 *    full chunk the next group-0 code is sampled ahead (when its text is there) so that the chunk
 *    before EOS / the limit carries is_last = 1; otherwise the stop is reported by VOX_CHUNK_END.
 *    Reference decoder mode returns all audio in one is_last chunk.
 *  - Sampling is keyed by (seed, frame, codebook) and every kernel is thread-count invariant, so
 *    codes and audio do not depend on the thread count, chunk_frames or how the text was split. */

vox_status q3_lm_load(const q3_model *m, q3_lm **out);
void q3_lm_free(q3_lm *lm);

/* The family's synthesis options (vox_synth_params.options; the table is in lm.c). The defaults are
 * the official ones (Qwen3TTSModel._merge_generate_kwargs), then the model's generation config. */
typedef struct q3_options {
    int32_t do_sample;          /* 0: greedy */
    float temperature;
    int32_t top_k;              /* 0: off */
    float top_p;                /* 1: off */
    float repetition_penalty;   /* 1: off */
    int32_t subtalker_do_sample;
    float subtalker_temperature;
    int32_t subtalker_top_k;
    float subtalker_top_p;
    int32_t max_new_tokens;     /* talker steps at most (frames = steps - 1); 0: the guard */
    int32_t decoder;            /* Q3_DECODER_STREAM: streaming decoder warmed up with the last reference
                                   frames; REFERENCE: the official scheme (300-frame pieces, 25 frames of
                                   context), the audio in one chunk at the end */
    int32_t decoder_context;    /* stream mode: reference frames to warm up with; -1: all */
    int32_t chunk_frames;       /* codec frames per audio chunk */
    int32_t non_streaming_text; /* 1: the whole text goes into the prompt (the official non_streaming_mode) */
} q3_options;
extern const vx_option_set q3_options_set;
void q3_option_defaults(const vox_engine *e, void *opts);
vox_status q3_options_check(const vox_engine *e, const void *opts);

/* The family's stages (vox_engine_stage_stats), in order. */
enum { Q3_ST_PREFILL, Q3_ST_TALKER, Q3_ST_PREDICTOR, Q3_ST_DECODER, Q3_ST_VOICE, Q3_STAGES };
extern const char *const q3_stage_names[Q3_STAGES + 1];

/* The family's session functions (family.c forwards to them; see struct vx_family in family.h). */
vox_status q3_session_init(vox_session *s);
vox_status q3_session_pull(vox_session *s, vox_chunk *out);
void q3_session_free(vox_session *s);
vox_status q3_session_output(vox_session *s, const char *name, vox_array *out);
size_t q3_session_used(const vox_session *s);
/* Verification entries (family.c's table): the talker's prefill input, teacher forcing. */
vox_status q3_run_prompt(vox_session *s, vox_trace *t);
vox_status q3_run_teacher_force(vox_session *s, const vox_array *codes, vox_trace *t);

#endif
