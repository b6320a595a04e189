/* PLACEHOLDER until the native codec decoder lands. */
#include "codec.h"

#include <math.h>

#include "../error.h"

vox_status q3_codec_load(const q3_model *m, q3_codec **out) {
    (void)m;
    *out = NULL;
    return VOX_OK;
}
void q3_codec_free(q3_codec *codec) { (void)codec; }
int32_t q3_codec_groups(const q3_codec *codec) { (void)codec; return 16; }
int32_t q3_codec_codebook_size(const q3_codec *codec) { (void)codec; return 2048; }
int32_t q3_codec_samples_per_frame(const q3_codec *codec) { (void)codec; return 1920; }
int32_t q3_codec_sample_rate(const q3_codec *codec) { (void)codec; return 24000; }
static vox_status todo(void) { return vox_set_error(VOX_ERR_UNSUPPORTED, "the native codec decoder is not in this build yet"); }
vox_status q3_stream_create(const q3_codec *codec, q3_stream **out) { (void)codec, (void)out; return todo(); }
void q3_stream_free(q3_stream *s) { (void)s; }
vox_status q3_stream_prime(q3_stream *s, vx_pool *pool, const int32_t *codes, int64_t n) {
    (void)s, (void)pool, (void)codes, (void)n;
    return todo();
}
vox_status q3_stream_push(q3_stream *s, vx_pool *pool, const int32_t *codes, int64_t n, float *pcm) {
    (void)s, (void)pool, (void)codes, (void)n, (void)pcm;
    return todo();
}
vox_status q3_codec_decode_reference(const q3_codec *codec, vx_pool *pool, const int32_t *codes, int64_t n, float *pcm) {
    (void)codec, (void)pool, (void)codes, (void)n, (void)pcm;
    return todo();
}
int64_t q3_reference_cut(int64_t ref_frames, int64_t total_frames, int64_t n_samples) {
    return (int64_t)((double)ref_frames / (double)(total_frames > 1 ? total_frames : 1) * (double)n_samples);
}
vox_status q3_decode(vox_engine *e, const int32_t *codes, size_t n_frames, const int32_t *ref_codes, size_t n_ref,
                     vox_decoder_mode mode, int32_t context, int32_t chunk_frames, float *pcm, size_t capacity,
                     size_t *n_samples) {
    (void)e, (void)codes, (void)n_frames, (void)ref_codes, (void)n_ref, (void)mode, (void)context;
    (void)chunk_frames, (void)pcm, (void)capacity, (void)n_samples;
    return todo();
}
