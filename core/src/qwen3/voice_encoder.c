/* PLACEHOLDER until native voice creation lands. */
#include "voice_encoder.h"

#include "../error.h"

vox_status q3_venc_load(const q3_model *m, q3_venc **out) {
    (void)m;
    *out = NULL;
    return VOX_OK;
}
void q3_venc_free(q3_venc *v) { (void)v; }
int32_t q3_venc_embedding_dim(const q3_venc *v) { (void)v; return 0; }
static vox_status todo(void) { return vox_set_error(VOX_ERR_UNSUPPORTED, "native voice creation is not in this build yet"); }
vox_status q3_resample(const float *mono, int64_t n, int32_t sample_rate, int32_t target_rate, float **out,
                       int64_t *n_out) {
    (void)mono, (void)n, (void)sample_rate, (void)target_rate, (void)out, (void)n_out;
    return todo();
}
vox_status q3_speaker_embedding(const q3_venc *v, vx_pool *pool, const float *wav24k, int64_t n, float *emb) {
    (void)v, (void)pool, (void)wav24k, (void)n, (void)emb;
    return todo();
}
vox_status q3_encode_codes(const q3_venc *v, vx_pool *pool, const float *wav24k, int64_t n, int32_t **codes,
                           int64_t *n_frames) {
    (void)v, (void)pool, (void)wav24k, (void)n, (void)codes, (void)n_frames;
    return todo();
}
vox_status q3_voice_clone(vox_engine *e, const float *mono, size_t n, int32_t sample_rate, const vox_clone_params *p,
                          vox_voice *v) {
    (void)e, (void)mono, (void)n, (void)sample_rate, (void)p, (void)v;
    return todo();
}
