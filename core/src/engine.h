/* Internal: engines, voices and sessions, and the interface a model family implements.
 *
 * The C ABI functions (engine.c, voice.c, session.c) validate their arguments, keep statistics and
 * limits, and dispatch to the engine's family (vx_family). A family (core/src/<family>/family.c)
 * owns its model state (engine->impl) and its session state (session->impl). */
#ifndef VOX_ENGINE_H
#define VOX_ENGINE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "json.h"
#include "pool.h"
#include "vox.h"

typedef struct vx_family vx_family;

struct vox_engine {
    vox_model *model;               /* the mapped .tmod */
    const vox_json *manifest;       /* its parsed manifest (owned by model) */
    const vx_family *family;
    void *impl;                     /* the family's model state */
    vx_pool *pool;
    vox_engine_params params;       /* as given, strings copied below */
    char *device, *cpu_affinity;
    char *info;                     /* vox_engine_info JSON (built by the family at load) */
    struct vx_gpu *gpu;             /* the Vulkan device of --device gpu/vulkan/auto, or NULL (CPU) */
    int gpu_index, gpu_strict, codec_cpu;
    /* Weight placement, filled by the family's load when it puts matrices on the GPU; reported on
     * stderr at start-up (engine.c). A family that leaves it alone runs every matrix on the CPU. */
    int64_t matrices_gpu, matrices_cpu;
    uint64_t bytes_gpu;
    const char *cpu_reason;         /* why matrices stayed on the CPU (static string) */
    pthread_mutex_t lock;           /* stats and the session count */
    int32_t sessions_active;
    vox_engine_stats stats;
};

/* A voice: plain data, independent of the engine that made it (it can be saved, loaded and used
 * with any engine of the same weights). Every pointer is owned (malloc'd) or NULL. */
struct vox_voice {
    char *family;          /* "qwen3_tts" */
    char *mode;            /* icl | xvector | speaker | design */
    char *model_id;        /* binds the voice to weights (docs/formats.md) */
    char *variant;         /* base | custom_voice | voice_design */
    char *name, *ref_text, *speaker, *instruct, *language;
    float *embedding;      /* [n_embedding] */
    size_t n_embedding;
    int32_t *ref_codes;    /* [n_ref_frames][n_groups] */
    size_t n_ref_frames, n_groups;
    int32_t *ref_text_tokens;
    size_t n_ref_text_tokens;
    float *source;         /* the recording as given, mono */
    size_t n_source;
    int32_t source_rate;
    char *defaults;        /* JSON object of default generation parameters ("{}" if none) */
    char *info;            /* vox_voice_info JSON, built on demand */
};

/* Allocate an empty voice (all NULL, defaults "{}"); free with vox_voice_free. */
vox_voice *vx_voice_new(void);
/* strdup that accepts NULL. */
char *vx_strdup(const char *s);

struct vox_session {
    vox_engine *engine;
    const vox_voice *voice;         /* borrowed: the caller keeps the voice alive for the session */
    vox_synth_params params;        /* language copied into `language` below */
    char *language;
    char *text;                     /* everything fed so far (NUL-terminated) */
    size_t text_len, text_cap;
    int ended;                      /* vox_session_end was called */
    atomic_int cancelled;
    void *impl;                     /* the family's state */
};

/* Append to / time the engine's statistics (thread-safe). */
void vx_stats_add(vox_engine *e, const vox_engine_stats *delta);
double vx_now_ms(void);

/* What a model family implements. Functions may be NULL when the family cannot do that thing
 * (the ABI then returns VOX_ERR_UNSUPPORTED with a message naming the family). */
struct vx_family {
    const char *name;  /* the manifest's "family" */
    /* Bind the weights and configs of e->model; set e->impl and e->info. */
    vox_status (*load)(vox_engine *e);
    void (*unload)(vox_engine *e);
    vox_status (*tokenize)(vox_engine *e, const char *text, int32_t *ids, size_t capacity, size_t *n_ids);

    /* Voices: fill the given empty voice (family, mode, model_id, variant and the data). */
    vox_status (*voice_clone)(vox_engine *e, const float *mono, size_t n, int32_t sample_rate,
                              const vox_clone_params *p, vox_voice *v);
    vox_status (*voice_speaker)(vox_engine *e, const char *speaker, const char *instruct, vox_voice *v);
    vox_status (*voice_design)(vox_engine *e, const char *description, vox_voice *v);
    /* Check that a loaded voice fits this engine (mode vs variant, shapes); model_id is checked by voice.c. */
    vox_status (*voice_check)(vox_engine *e, const vox_voice *v);

    /* Sessions. default_params fills the family's defaults (generation config, voice defaults). */
    void (*default_params)(const vox_engine *e, const vox_voice *v, vox_synth_params *p);
    vox_status (*session_init)(vox_session *s);           /* after the common fields are set */
    vox_status (*session_pull)(vox_session *s, vox_chunk *out);
    void (*session_free)(vox_session *s);
    vox_status (*session_codes)(const vox_session *s, const int32_t **codes, size_t *n_frames, size_t *n_groups);
    vox_status (*session_prompt)(vox_session *s, const float **embeds, size_t *n_rows, size_t *dim);
    vox_status (*session_teacher_force)(vox_session *s, const int32_t *codes, size_t n_frames,
                                        float *talker_logits, float *predictor_logits);

    vox_status (*decode)(vox_engine *e, const int32_t *codes, size_t n_frames, const int32_t *ref_codes, size_t n_ref,
                         vox_decoder_mode mode, int32_t context, int32_t chunk_frames, float *pcm, size_t capacity,
                         size_t *n_samples);
    /* vox_engine_trace (Kokoro's stage-by-stage verification entry) */
    vox_status (*trace)(vox_engine *e, const int32_t *ids, size_t n_ids, const float *style, float speed, uint64_t seed,
                        int32_t noise, const char *tap, float *out, size_t capacity, size_t *n_rows, size_t *n_cols);
    /* 1: a voice works with any conversion of the family's weights (Kokoro style packs), so the
     * voice's model_id is informational and not checked against the engine's */
    int portable_voices;
};

/* The families this build knows, by manifest name; NULL if unknown. */
const vx_family *vx_family_find(const char *name);

#endif
