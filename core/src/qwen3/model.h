/* Internal: the Qwen3-TTS-12Hz family's model state (engine->impl) and its parts.
 *
 *   tokenizer.h      Qwen2 byte-level BPE text tokenizer (vocab, merges, added tokens from the .tmod)
 *   lm.h             talker + code predictor, prompts, sampling, generation, sessions
 *   codec.h          speech tokenizer decoder (codes -> 24 kHz PCM): stream and reference modes
 *   voice_encoder.h  voice creation: resampling, mel, ECAPA-TDNN speaker encoder, Mimi encoder + RVQ
 *
 * Each part binds its own weights from the .tmod (used in place) and reads its configuration from
 * the manifest; family.c loads them in that order and wires them to the C ABI. */
#ifndef VOX_QWEN3_MODEL_H
#define VOX_QWEN3_MODEL_H

#include "../engine.h"
#include "../json.h"
#include "../kernels.h"
#include "vox.h"

typedef struct q3_tokenizer q3_tokenizer;
typedef struct q3_lm q3_lm;
typedef struct q3_codec q3_codec;
typedef struct q3_venc q3_venc;
typedef struct q3_prime_cache q3_prime_cache;

/* The codec decoder's two modes (the decoder option; q3_decode). */
enum { Q3_DECODER_STREAM = 0, Q3_DECODER_REFERENCE = 1 };

/* The family's manifest check (manifest.c). */
vox_status q3_check_manifest(const vox_model *m, const vox_json *root);

typedef struct q3_model {
    const vox_model *file;
    const vox_json *manifest;        /* root object */
    const vox_json *config;          /* manifest "config" (the official config.json) */
    const vox_json *st_config;       /* manifest "speech_tokenizer_config" */
    const vox_json *generation;      /* manifest "generation" (generation_config.json) */
    char variant[16];                /* base | custom_voice | voice_design */
    char size[8];                    /* 0b6 | 1b7 | ... (config tts_model_size) */
    char model_id[65];
    q3_tokenizer *tok;
    q3_lm *lm;
    q3_codec *codec;
    q3_venc *venc;                   /* NULL unless the model can clone voices (Base) */
    q3_prime_cache *primes;          /* primed stream-decoder states of recent voices (codec.h) */
    struct vx_q3_gpu *gpu;           /* talker + predictor in VRAM (--device vulkan), or NULL */
} q3_model;

/* Bind a 2-D weight (any float dtype) / a float32 tensor of the .tmod by name; VOX_ERR_FORMAT naming
 * the tensor when it is missing or of an unexpected dtype/shape (expect_rows/cols < 0: any). */
vox_status q3_bind_mat(const q3_model *m, const char *name, int64_t expect_rows, int64_t expect_cols, vx_mat *out);
vox_status q3_bind_f32(const q3_model *m, const char *name, int64_t expect_n, const float **out);
/* The same with a printf-style name. */
vox_status q3_bind_matf(const q3_model *m, vx_mat *out, int64_t rows, int64_t cols, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
vox_status q3_bind_f32f(const q3_model *m, const float **out, int64_t n, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Drop this process's resident pages of the tensors whose names start with one of the prefixes
 * (madvise MADV_DONTNEED on the read-only mapping: nothing is lost, they fault back in from the page
 * cache when used again), e.g. the voice encoders' once a voice is made. A no-op off Linux. */
void q3_release_tensors(const q3_model *m, const char *const *prefixes, int n_prefixes);
/* Integer members of a config object; VOX_ERR_FORMAT naming the key when absent or not an integer. */
vox_status q3_cfg_int(const vox_json *obj, const char *key, int64_t *out);
vox_status q3_cfg_num(const vox_json *obj, const char *key, double *out);

#endif
