/* PLACEHOLDER until the native talker lands. */
#include "lm.h"

#include "../error.h"

vox_status q3_lm_load(const q3_model *m, q3_lm **out) {
    (void)m;
    *out = NULL;
    return VOX_OK;
}
void q3_lm_free(q3_lm *lm) { (void)lm; }
void q3_default_params(const vox_engine *e, const vox_voice *v, vox_synth_params *p) { (void)e, (void)v, (void)p; }
static vox_status todo(void) { return vox_set_error(VOX_ERR_UNSUPPORTED, "native synthesis is not in this build yet"); }
vox_status q3_session_init(vox_session *s) { (void)s; return todo(); }
vox_status q3_session_pull(vox_session *s, vox_chunk *out) { (void)s, (void)out; return todo(); }
void q3_session_free(vox_session *s) { (void)s; }
vox_status q3_session_codes(const vox_session *s, const int32_t **codes, size_t *n_frames, size_t *n_groups) {
    (void)s, (void)codes, (void)n_frames, (void)n_groups;
    return todo();
}
vox_status q3_session_prompt(vox_session *s, const float **embeds, size_t *n_rows, size_t *dim) {
    (void)s, (void)embeds, (void)n_rows, (void)dim;
    return todo();
}
vox_status q3_session_teacher_force(vox_session *s, const int32_t *codes, size_t n_frames, float *talker_logits,
                                    float *predictor_logits) {
    (void)s, (void)codes, (void)n_frames, (void)talker_logits, (void)predictor_logits;
    return todo();
}
