/* Internal: the Qwen3-TTS language-model side: talker + code predictor (weights in place, any dtype),
 * prompt building (Base ICL / x-vector, CustomVoice speaker + instruction + dialects, VoiceDesign;
 * streaming and non-streaming text), the official logits processing with Philox sampling
 * (bit-identical to vox.reference.qwen3.sampling), the generation loop with its stop rules and the
 * guard, and the family's sessions (text feeding, chunking, decoder modes, cancellation).
 * Mirrors vox.reference.qwen3.{talker, code_predictor, prompt, sampling, generate}. */
#ifndef VOX_QWEN3_LM_H
#define VOX_QWEN3_LM_H

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

vox_status q3_lm_load(const q3_model *m, q3_lm **out);
void q3_lm_free(q3_lm *lm);

/* The family's session functions (family.c forwards to them; see struct vx_family in engine.h). */
void q3_default_params(const vox_engine *e, const vox_voice *v, vox_synth_params *p);
vox_status q3_session_init(vox_session *s);
vox_status q3_session_pull(vox_session *s, vox_chunk *out);
void q3_session_free(vox_session *s);
vox_status q3_session_codes(const vox_session *s, const int32_t **codes, size_t *n_frames, size_t *n_groups);
vox_status q3_session_prompt(vox_session *s, const float **embeds, size_t *n_rows, size_t *dim);
vox_status q3_session_teacher_force(vox_session *s, const int32_t *codes, size_t n_frames, float *talker_logits,
                                    float *predictor_logits);

#endif
