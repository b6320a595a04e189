/* Internal: what a model family implements, and the registry of the families this build has.
 *
 * A family is one folder (core/src/<family>/) that fills one vx_family. The generic layers (the
 * .tmod container, engines, voices and .tvoice files, sessions, options, verification runs) call the
 * family only through this struct and never name a family; families.c is the one list of them.
 * Everything a family does not do is NULL, and the ABI then says so (VOX_ERR_UNSUPPORTED, naming the
 * family). docs/architecture.md tells how a new family plugs in. */
#ifndef VOX_FAMILY_H
#define VOX_FAMILY_H

#include "engine.h"
#include "options.h"
#include "vox.h"

/* ------------------------------------------------------------------------------ voice schema */
/* An array a voice of the family may hold: its in-memory dtype (F32, or I32 for ids, stored as I64 in
 * the file) and rank; shape entries > 0 are fixed, 0 free (the family's voice_check fits them to the
 * model). */
typedef struct vx_voice_array_spec {
    const char *name;
    vox_dtype dtype;
    int32_t ndim;
    int64_t shape[2];
} vx_voice_array_spec;

/* A voice mode: the variant it belongs to (NULL: any), the arrays it must and may hold, and a text it
 * must hold (NULL: none). */
typedef struct vx_voice_mode {
    const char *mode, *variant;
    const char *required[4], *allowed[4];
    const char *text;
} vx_voice_mode;

typedef struct vx_voice_schema {
    const vx_voice_array_spec *arrays;
    size_t n_arrays;
    const char *const *texts;   /* the texts a voice may hold (NULL-terminated) */
    const vx_voice_mode *modes;
    size_t n_modes;
    int portable;               /* 1: a voice fits any weights of its family and variant (its model_id is
                                   informative), 0: only the weights it was made with */
} vx_voice_schema;

/* ------------------------------------------------------------------------------ verification runs */
/* One verification entry (vox_engine_run), described for vox_engine_info and docs/c-abi.md. */
typedef struct vx_entry {
    const char *name;
    int needs_voice;            /* 1: runs in a session of the given voice */
    const char *inputs;         /* e.g. "text (U8), codes (I32 [frames][groups])" */
    const char *outputs;        /* e.g. "talker_logits, predictor_logits" */
    const char *doc;
} vx_entry;

/* What vox_engine_run keeps (run.c). */
bool vx_trace_wants(const vox_trace *t, const char *name);
/* Every requested output is kept: an entry may stop computing. */
bool vx_trace_complete(const vox_trace *t);
/* Keep a copy of the array (when wanted); VOX_ERR_OUT_OF_MEMORY. */
vox_status vx_trace_put(vox_trace *t, const char *name, vox_dtype dtype, int32_t ndim, const int64_t *shape,
                        const void *data);
/* The input `name` of a run, or NULL. */
const vox_array *vx_run_input(const vox_array *inputs, size_t n, const char *name);
/* Elements of an array (product of the shape). */
size_t vx_array_count(const vox_array *a);

/* ------------------------------------------------------------------------------ the family */
struct vx_family {
    const char *name;           /* the manifest's "family" */

    /* The container (tmod.c) checked the keys every model has; this checks the family's own keys and
     * tensors, so that vox_model_open refuses a file the family could not load. */
    vox_status (*check_manifest)(const vox_model *m, const vox_json *root);
    /* Bind the weights and configs of e->model; set e->impl and e->info (a JSON object that engine.c
     * completes with the device, placement, stages and entries). */
    vox_status (*load)(vox_engine *e);
    void (*unload)(vox_engine *e);
    /* Keys the family takes in the device string after the device ("codec" of ",codec=cpu"),
     * NULL-terminated; the values are checked by load. */
    const char *const *device_options;
    /* The stages of vox_engine_stage_stats, in order (NULL-terminated, at most VX_MAX_STAGES). */
    const char *const *stages;

    vox_status (*tokenize)(vox_engine *e, const char *text, int32_t *ids, size_t capacity, size_t *n_ids);

    /* Voices. The schema (arrays, texts, modes) is checked generically when a voice is read or
     * written; voice_check fits a voice to this engine's model (shapes, speakers). The voice functions
     * fill an empty voice (family, mode, model_id, variant and the data). */
    const vx_voice_schema *voices;
    const vx_option_set *clone_options;   /* vox_clone_params.options (NULL: none) */
    vox_status (*voice_clone)(vox_engine *e, const float *mono, size_t n, int32_t sample_rate,
                              const vox_clone_params *p, const void *clone_opts, vox_voice *v);
    vox_status (*voice_speaker)(vox_engine *e, const char *speaker, const char *instruct, vox_voice *v);
    vox_status (*voice_design)(vox_engine *e, const char *description, vox_voice *v);
    vox_status (*voice_check)(vox_engine *e, const vox_voice *v);

    /* Synthesis options: the descriptor table, the family's and the model's defaults (the voice's and
     * the caller's are applied on top by session.c), and rules across options (optional). */
    const vx_option_set *synth_options;
    void (*option_defaults)(const vox_engine *e, void *opts);
    vox_status (*options_check)(const vox_engine *e, const void *opts);

    /* Sessions: init after the common fields and the options are set. */
    vox_status (*session_init)(vox_session *s);
    vox_status (*session_pull)(vox_session *s, vox_chunk *out);
    void (*session_free)(vox_session *s);
    /* Bytes of the committed text the session has used (its spans, its stable tokens): what a
     * set_pending may no longer change. NULL: all of it. */
    size_t (*session_used)(const vox_session *s);
    /* Named outputs of a session (vox_session_output), listed in session_outputs (NULL-terminated). */
    const char *const *session_outputs;
    vox_status (*session_output)(vox_session *s, const char *name, vox_array *out);

    /* Verification entries (vox_engine_run): s is a session of the given voice (NULL for entries that
     * need none), fed and ended with the "text" input. */
    const vx_entry *entries;
    size_t n_entries;
    vox_status (*run)(vox_engine *e, vox_session *s, const vx_entry *entry, const vox_array *inputs, size_t n_inputs,
                      vox_trace *t);
};

/* The families this build has, by manifest name (NULL if none), and all of them. */
const vx_family *vx_family_find(const char *name);
const vx_family *const *vx_families(size_t *n);
/* "a, b, c": the names of the families, for messages. */
const char *vx_family_names(void);

#endif
