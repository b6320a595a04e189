/* Internal: engines, voices and sessions: the family-neutral objects behind the C ABI.
 *
 * The C ABI functions (engine.c, voice.c, tvoice.c, session.c, run.c) validate their arguments, keep
 * statistics and limits, and dispatch to the engine's family (family.h). A family owns its model
 * state (engine->impl) and its session state (session->impl); nothing here knows which family it is. */
#ifndef VOX_ENGINE_H
#define VOX_ENGINE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "json.h"
#include "pool.h"
#include "vox.h"

typedef struct vx_family vx_family;

/* The most stages a family may name (vox_engine_stage_stats). */
#define VX_MAX_STAGES 16
/* Device options a family may take after the device name ("codec=cpu"). */
#define VX_MAX_DEVICE_OPTS 4

typedef struct vx_device_kv {
    char key[24], value[24];
} vx_device_kv;

struct vox_engine {
    vox_model *model;               /* the mapped .tmod */
    const vox_json *manifest;       /* its parsed manifest (owned by model) */
    const vx_family *family;
    void *impl;                     /* the family's model state */
    vx_pool *pool;
    vox_engine_params params;       /* as given, strings copied below */
    char *device, *cpu_affinity;
    char *info;                     /* vox_engine_info JSON (the family's part, completed by engine.c) */
    struct vx_gpu *gpu;             /* the Vulkan device of --device gpu/vulkan/auto, or NULL (CPU) */
    int gpu_index, gpu_strict;
    vx_device_kv device_opts[VX_MAX_DEVICE_OPTS]; /* the family's options of the device string */
    int n_device_opts;
    /* Weight placement, filled by the family's load when it puts matrices on the GPU; reported on
     * stderr at start-up and in the info (engine.c). A family that leaves it alone runs every matrix on
     * the CPU. The reason is the engine's own text (never shared between engines). */
    int64_t matrices_gpu, matrices_cpu;
    uint64_t bytes_gpu;
    char cpu_reason[400];           /* why matrices stayed on the CPU ("" when none did) */
    pthread_mutex_t lock;           /* stats, the session count and the live sessions */
    int32_t sessions_active;
    struct vox_session *sessions;   /* live sessions (doubly linked), freed with the engine */
    pthread_cond_t unlinked;        /* a session left the list */
    vox_engine_stats stats;
    double stage_ms[VX_MAX_STAGES];
    uint64_t stage_count[VX_MAX_STAGES];
};

/* The value of the device option `key` ("codec=cpu" -> "cpu"), or NULL when it was not given. */
const char *vx_device_opt(const vox_engine *e, const char *key);
/* Set the placement reason (printf-style; kept in the engine). */
void vx_placement_reason(vox_engine *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A named array of a voice (owned data). */
typedef struct vx_voice_array {
    char *name;
    vox_dtype dtype;           /* F32 or I32 in memory (I64 in the file for ids) */
    int32_t ndim;
    int64_t shape[VOX_MAX_DIMS];
    void *data;
    size_t count;              /* elements */
} vx_voice_array;

typedef struct vx_voice_kv {
    char *name, *value;
} vx_voice_kv;

#define VX_VOICE_MAX_ARRAYS 8
#define VX_VOICE_MAX_TEXTS 8

/* A voice: plain data, independent of the engine that made it (it can be saved, loaded and used with
 * any engine of the same weights, or of any weights when the family says its voices are portable).
 * What arrays and texts a voice of a given mode holds is the family's voice schema (family.h). */
struct vox_voice {
    char *family, *mode, *model_id, *variant, *name, *language;
    char *defaults;            /* JSON object of default synthesis settings ("{}" if none) */
    vx_voice_kv texts[VX_VOICE_MAX_TEXTS];
    int n_texts;
    vx_voice_array arrays[VX_VOICE_MAX_ARRAYS];
    int n_arrays;
    int32_t source_rate;       /* the sample rate of the "source_wav" array (the recording as given) */
    char *info;                /* vox_voice_info JSON, built once the voice is complete */
};

/* Allocate an empty voice (all NULL, defaults "{}"); free with vox_voice_free. */
vox_voice *vx_voice_new(void);
/* The voice's array / text of that name, or NULL. */
const vx_voice_array *vx_voice_get_array(const vox_voice *v, const char *name);
const char *vx_voice_text(const vox_voice *v, const char *name);
/* Add an array (the voice takes `data`, malloc'd, count elements of dtype, freed on failure too) or a
 * text (copied). VOX_ERR_INVALID_ARGUMENT for a duplicate name or too many, VOX_ERR_OUT_OF_MEMORY. */
vox_status vx_voice_put_array(vox_voice *v, const char *name, vox_dtype dtype, int32_t ndim, const int64_t *shape,
                              void *data);
vox_status vx_voice_put_text(vox_voice *v, const char *name, const char *value);
/* Build the info JSON once the voice is complete (voices are immutable afterwards). */
vox_status vx_voice_finish(vox_voice *v);
/* strdup that accepts NULL. */
char *vx_strdup(const char *s);

/* How fed text is committed to the family (the stream options "commit" and "idle_ms"). */
enum { VX_COMMIT_AUTO = 0, VX_COMMIT_SENTENCE = 1, VX_COMMIT_MANUAL = 2 };
typedef struct vx_stream_opts {
    int32_t commit;                 /* VX_COMMIT_* */
    int32_t idle_ms;                /* > 0: a pause in feeding this long flushes what is waiting */
} vx_stream_opts;

struct vox_session {
    vox_engine *engine;
    const vox_voice *voice;         /* borrowed: the caller keeps the voice alive for the session */
    uint64_t seed;
    char *language;                 /* the session's language (the params', else the voice's, else "auto") */
    void *opts;                     /* the family's options struct (family->synth_options.size bytes) */
    vox_json_doc *opt_docs[2];      /* the parsed voice defaults and caller options that opts points into */
    vx_stream_opts stream;
    /* The committed text the family reads, changed only by the pulling thread (at the start of a pull,
     * from the writer side below), so the family may read it during its pull without a lock. */
    char *text;                     /* committed text (NUL-terminated) */
    size_t text_len, text_cap;
    size_t flush_mark;              /* the family ends its units here (a flush): text[..flush_mark) is complete */
    int ended;                      /* the text is complete (vox_session_end applied) */
    int words;                      /* once ended: 1 the text has a letter or a digit, 0 not, -1 not yet known */
    /* The writer side: what feed / flush / set_pending / end leave for the next pull (any thread,
     * under wlock). Every byte is checked as it arrives (UTF-8, no control characters). */
    pthread_mutex_t wlock;
    char *wtext;                    /* fed, not yet committed */
    size_t wlen, wcap, wvalid;      /* wvalid: bytes checked; the rest is a sequence the next piece completes */
    char *replace;                  /* set_pending: the new tail after the first `keep` bytes */
    size_t keep;
    size_t used;                    /* bytes of the text the model has used, as of the last pull */
    int has_replace, flush_req, end_req, w_ended;
    double last_feed_ms;
    atomic_int cancelled;
    void *impl;                     /* the family's state */
    /* calls in progress (a free from another thread waits for them), under engine->lock */
    int busy, freeing;
    pthread_cond_t idle;
    struct vox_session *prev, *next; /* the engine's live sessions */
};

/* Create a session without the ABI's argument checks of voice/params shape (run.c uses it too). */
vox_status vx_session_create(vox_engine *e, const vox_voice *voice, const vox_synth_params *params, vox_session **out);
/* Apply what the writer side left (commit, flush, end) to the committed text: the start of a pull, and
 * of a verification run on a session. */
vox_status vx_session_sync(vox_session *s);

/* Time the engine's statistics (thread-safe): `ms` and one more count on the family's stage `stage`,
 * `samples` more samples produced. */
void vx_stats_stage(vox_engine *e, int stage, double ms, uint64_t count);
void vx_stats_samples(vox_engine *e, uint64_t samples);
double vx_now_ms(void);

#endif
