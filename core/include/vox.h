/* vox.h: the C ABI of the vox text-to-speech engine. The only public header.
 *
 * Conventions
 *  - Every function that can fail returns a vox_status; VOX_OK is 0. On failure a description of the
 *    problem is kept per thread and read with vox_last_error() (valid until the next failing call
 *    on the same thread).
 *  - Objects are opaque handles created by *_open / *_create and released by *_close / *_free.
 *  - Strings are UTF-8 and NUL-terminated. Pointers returned by the library stay valid for the
 *    lifetime of the object they came from unless a comment says otherwise.
 *  - No callbacks cross this boundary.
 *
 * The header compiles as C99 and C++; it uses only <stddef.h> and <stdint.h>.
 */
#ifndef VOX_H
#define VOX_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#  define VOX_API __declspec(dllimport)
#elif defined(__GNUC__)
#  define VOX_API __attribute__((visibility("default")))
#else
#  define VOX_API
#endif

/* ABI version: bumped when a function's signature or a struct's layout changes incompatibly. */
#define VOX_ABI_VERSION 1

typedef enum vox_status {
    VOX_OK = 0,
    VOX_ERR_INVALID_ARGUMENT = 1, /* a NULL pointer, an out-of-range index, an unknown option */
    VOX_ERR_IO = 2,               /* a file could not be opened, read or mapped */
    VOX_ERR_FORMAT = 3,           /* a file is truncated, corrupt, of a wrong magic or version */
    VOX_ERR_UNSUPPORTED = 4,      /* valid input this build cannot handle */
    VOX_ERR_OUT_OF_MEMORY = 5,
    VOX_ERR_NOT_FOUND = 6,        /* a named tensor, speaker or device does not exist */
    VOX_ERR_INTERNAL = 7,
    VOX_ERR_CANCELLED = 8,        /* vox_session_cancel() was called */
    VOX_ERR_LIMIT = 9             /* a limit was reached: sessions, frames, text length */
} vox_status;

/* Version of the library as "MAJOR.MINOR.PATCH". */
VOX_API const char *vox_version(void);
/* VOX_ABI_VERSION of the library actually loaded: compare with the header's. */
VOX_API int vox_abi_version(void);
/* Message of the last failure on this thread ("" if none). */
VOX_API const char *vox_last_error(void);
/* Short name of a status code, e.g. "VOX_ERR_FORMAT". */
VOX_API const char *vox_status_name(vox_status status);

/* ------------------------------------------------------------------------------------------------
 * Deterministic randomness: Philox4x32-10 (Salmon et al., SC'11), counter-based.
 * All sampling and noise in vox is drawn from it, keyed by the user seed and addressed by position,
 * never from a stateful generator, so the same seed gives the same audio for any thread count and
 * any chunk size.
 */
VOX_API void vox_philox4x32_10(const uint32_t counter[4], const uint32_t key[2], uint32_t out[4]);
/* The uniform double in [0, 1) that vox samples with at (seed, frame, codebook): 53 random bits
 * from the first two output words of counter (frame, codebook, 0, 0) and key (seed low, seed high). */
VOX_API double vox_philox_uniform(uint64_t seed, uint32_t frame, uint32_t codebook);

/* ------------------------------------------------------------------------------------------------
 * Model files (.tmod; docs/formats.md). Opening maps the file read-only and validates the header,
 * the manifest and every tensor's bounds, so a truncated, corrupt or hostile file is an error
 * (VOX_ERR_FORMAT, the message names the file and the problem), never a crash; tensor data is used
 * in place, never copied. Per-tensor checksums are checked on demand (vox_model_verify): that reads
 * the whole file. A model is immutable once open and may be used from several threads at once.
 * The file must not be truncated or rewritten in place while it is open (replace it atomically).
 */
typedef struct vox_model vox_model;

typedef enum vox_dtype {
    VOX_DTYPE_F32 = 0,
    VOX_DTYPE_F16 = 1,
    VOX_DTYPE_BF16 = 2,
    VOX_DTYPE_Q8 = 3,  /* blocks of 32 int8 along the last axis, one f32 scale per block */
    VOX_DTYPE_Q4 = 4,  /* blocks of 32 4-bit values (u - 8) along the last axis, one f32 scale per block */
    VOX_DTYPE_I32 = 5,
    VOX_DTYPE_I64 = 6,
    VOX_DTYPE_U8 = 7
} vox_dtype;

#define VOX_MAX_DIMS 4

typedef struct vox_tensor_info {
    const char *name;          /* owned by the model */
    vox_dtype dtype;
    int32_t ndim;              /* 1 to VOX_MAX_DIMS */
    int64_t shape[VOX_MAX_DIMS]; /* shape[ndim..] are 0 */
    const void *data;          /* inside the mapping, 4096-byte aligned; q8/q4: values, then f32 scales */
    uint64_t nbytes;
    uint32_t crc32;            /* CRC-32 of the nbytes at data, as the manifest records it */
} vox_tensor_info;

/* Opens and validates `path`. On failure *out is NULL and nothing is leaked: VOX_ERR_IO (cannot open,
 * not a regular file), VOX_ERR_FORMAT (invalid file), VOX_ERR_OUT_OF_MEMORY. */
VOX_API vox_status vox_model_open(const char *path, vox_model **out);
/* Unmaps and frees; every pointer obtained from the model dies with it. NULL is a no-op. */
VOX_API void vox_model_close(vox_model *model);
/* The manifest JSON as stored in the file (NUL-terminated copy owned by the model). */
VOX_API const char *vox_model_manifest(const vox_model *model);
VOX_API size_t vox_model_tensor_count(const vox_model *model);
/* Tensor `index` in manifest order; VOX_ERR_INVALID_ARGUMENT when index >= the count. */
VOX_API vox_status vox_model_tensor(const vox_model *model, size_t index, vox_tensor_info *out);
/* The tensor of that name (O(log n)); VOX_ERR_NOT_FOUND if there is none. */
VOX_API vox_status vox_model_find_tensor(const vox_model *model, const char *name, vox_tensor_info *out);
/* Recompute the CRC32 of every tensor; VOX_ERR_FORMAT names the first tensor that does not match. */
VOX_API vox_status vox_model_verify(const vox_model *model);

/* ------------------------------------------------------------------------------------------------
 * Engines. An engine owns one model (its weights mapped from the .tmod) and one thread pool; any
 * number of voices and sessions use it. Engine functions may be called from several threads at
 * once. Every struct passed by pointer starts with struct_size (set by its *_default_params
 * function): later versions of vox append fields and still accept what older callers pass.
 */
typedef struct vox_engine vox_engine;
typedef struct vox_voice vox_voice;
typedef struct vox_session vox_session;

typedef struct vox_engine_params {
    uint32_t struct_size;      /* sizeof(vox_engine_params) */
    const char *device;        /* "cpu" (the default; NULL means it too), "auto", "gpu[:N]", "vulkan[:N]",
                                  then ",strict" and/or ",codec=cpu" (docs/vulkan.md) */
    int32_t n_threads;         /* compute threads including the caller's; 0: every CPU the process may use */
    const char *cpu_affinity;  /* pin thread i to the i-th CPU of a list like "0-3,6"; NULL: no pinning */
    int32_t nice;              /* added to the compute threads' nice value (0: unchanged) */
    int32_t max_sessions;      /* sessions alive at once (VOX_ERR_LIMIT beyond); 0: unlimited */
} vox_engine_params;

VOX_API vox_engine_params vox_engine_default_params(void);
/* Opens `model_path` (.tmod) and prepares it; weights stay in the mapping. */
VOX_API vox_status vox_engine_create(const char *model_path, const vox_engine_params *params, vox_engine **out);
/* Frees the engine. Every voice and session made with it must be freed first. NULL is a no-op. */
VOX_API void vox_engine_free(vox_engine *engine);
/* JSON describing the engine: family, variant, size, sample_rate, capabilities, speakers, languages,
 * precision, threads, cpu path, device ("cpu" or "vulkan:N") and gpu (null, or the device's name and
 * the matrices and bytes placed in its memory). Owned by the engine. */
VOX_API const char *vox_engine_info(const vox_engine *engine);
/* Token ids of UTF-8 `text` (which should be NFC-normalized: the Python layer does it; vox does not
 * normalize). Writes up to `capacity` ids; *n_ids is the full count (call again with more room). */
VOX_API vox_status vox_engine_tokenize(vox_engine *engine, const char *text, int32_t *ids, size_t capacity,
                                       size_t *n_ids);

typedef struct vox_engine_stats {
    uint32_t struct_size;       /* sizeof(vox_engine_stats) */
    uint64_t sessions_created;
    int32_t sessions_active;
    uint64_t frames_generated;  /* codec frames (80 ms each for Qwen3-TTS-12Hz) */
    uint64_t samples_produced;
    double prefill_ms, talker_ms, predictor_ms, decoder_ms, voice_ms;  /* cumulative compute time */
    uint64_t weights_bytes;     /* bytes of tensor data in the model file */
} vox_engine_stats;
VOX_API vox_status vox_engine_stats_get(const vox_engine *engine, vox_engine_stats *out);

/* ------------------------------------------------------------------------------------------------
 * Voices: who speaks. A voice is immutable once made and may be shared by sessions on any thread.
 * Base models clone a voice from a recording; CustomVoice models name a built-in speaker (with an
 * optional instruction); VoiceDesign models take a description. Saved as .tvoice (docs/formats.md).
 */
typedef struct vox_clone_params {
    uint32_t struct_size;      /* sizeof(vox_clone_params) */
    const char *ref_text;      /* transcript of the recording; NULL or "" with x_vector_only */
    int32_t x_vector_only;     /* 1: the speaker embedding alone (no reference codes, no transcript) */
    const char *name;          /* display name stored in the voice; NULL: "voice" */
    const char *language;      /* the voice's default language; NULL: "auto" */
    const char *defaults;      /* JSON object of default synthesis parameters kept in the voice
                                  (seed, temperature, top_k, ...); NULL: none */
} vox_clone_params;

VOX_API vox_clone_params vox_clone_default_params(void);
/* Clone a voice from `n_frames` frames of interleaved float PCM in [-1, 1] at `sample_rate` Hz with
 * `channels` channels (averaged to mono; resampled to the model's rate). */
VOX_API vox_status vox_voice_clone(vox_engine *engine, const float *pcm, size_t n_frames, int32_t channels,
                                   int32_t sample_rate, const vox_clone_params *params, vox_voice **out);
/* A built-in speaker of a CustomVoice model, with an optional style instruction (NULL: none). */
VOX_API vox_status vox_voice_speaker(vox_engine *engine, const char *speaker, const char *instruct, vox_voice **out);
/* A voice from a description, for VoiceDesign models. */
VOX_API vox_status vox_voice_design(vox_engine *engine, const char *description, vox_voice **out);
/* Read a .tvoice; VOX_ERR_FORMAT if it is invalid or was made for other weights or another variant. */
VOX_API vox_status vox_voice_load(vox_engine *engine, const char *path, vox_voice **out);
/* Write the voice as .tvoice (atomically: a temporary file renamed into place). */
VOX_API vox_status vox_voice_save(const vox_voice *voice, const char *path);
VOX_API void vox_voice_free(vox_voice *voice);
/* JSON: mode, name, speaker, instruct, language, ref_text, ref_frames, model_id. Owned by the voice. */
VOX_API const char *vox_voice_info(const vox_voice *voice);
/* The speaker embedding (n = 0 when the voice has none). Owned by the voice. */
VOX_API vox_status vox_voice_embedding(const vox_voice *voice, const float **data, size_t *n);
/* The reference codes [n_frames][n_groups] (n_frames = 0 when the voice has none). Owned by the voice. */
VOX_API vox_status vox_voice_ref_codes(const vox_voice *voice, const int32_t **codes, size_t *n_frames,
                                       size_t *n_groups);

/* ------------------------------------------------------------------------------------------------
 * Sessions: one utterance. Text is fed (all at once or in pieces), audio is pulled in chunks; the
 * decoder carries its state across chunks, so concatenated chunks are one seamless signal. Sampling
 * is deterministic: the audio depends on the seed, the text and the parameters only, not on the
 * thread count or the chunk size. A session is used by one thread at a time; vox_session_cancel may
 * be called from any thread.
 */
typedef enum vox_decoder_mode {
    VOX_DECODER_STREAM = 0,    /* streaming decoder, warmed up with the last reference frames */
    VOX_DECODER_REFERENCE = 1  /* the official scheme (300-frame pieces, 25 frames of context);
                                  audio arrives in one chunk at the end; for A/B comparisons */
} vox_decoder_mode;

typedef struct vox_synth_params {
    uint32_t struct_size;       /* sizeof(vox_synth_params) */
    uint64_t seed;
    const char *language;       /* NULL: the voice's language; else "auto", "english", "chinese", ... */
    int32_t do_sample;          /* 0: greedy */
    float temperature;
    int32_t top_k;              /* 0: off */
    float top_p;                /* 1: off */
    float repetition_penalty;   /* 1: off */
    int32_t subtalker_do_sample;
    float subtalker_temperature;
    int32_t subtalker_top_k;
    float subtalker_top_p;
    int32_t max_new_tokens;     /* talker steps at most (frames = steps - 1); 0: the guard, which grows
                                   with the text (see docs) and stops runaway generation */
    vox_decoder_mode decoder;
    int32_t decoder_context;    /* stream mode: reference frames to warm up with; -1: all */
    int32_t chunk_frames;       /* codec frames per audio chunk; 4 = 320 ms */
    int32_t non_streaming_text; /* 1: the whole text goes into the prompt (the official non_streaming_mode) */
    /* Kokoro (appended: older callers' struct_size leaves them at the defaults) */
    float speed;                /* speaking rate: durations are divided by it (1 = normal) */
    const char *pronunciations; /* JSON object word -> phonemes, applied before G2P; NULL: none */
    int32_t phoneme_input;      /* 1: the text is already phonemes in the model's symbol set (no frontend) */
    int32_t pause_ms;           /* pause inserted between spans after each span's trailing silence is trimmed */
} vox_synth_params;

/* The defaults of the model (its generation config) and of the voice; either may be NULL. */
VOX_API vox_synth_params vox_synth_default_params(const vox_engine *engine, const vox_voice *voice);

typedef enum vox_chunk_kind {
    VOX_CHUNK_AUDIO = 0,       /* samples hold audio (is_last marks the final chunk) */
    VOX_CHUNK_NEED_TEXT = 1,   /* nothing more until more text is fed, or vox_session_end is called */
    VOX_CHUNK_END = 2          /* the utterance is complete; no more audio */
} vox_chunk_kind;

typedef struct vox_chunk {
    vox_chunk_kind kind;
    const float *samples;      /* mono float PCM; owned by the session, valid until the next pull */
    size_t n_samples;
    int32_t sample_rate;
    int32_t is_last;           /* 1 on the last audio chunk */
    uint32_t first_frame;      /* index of the first codec frame in this chunk */
    uint32_t n_frames;
} vox_chunk;

VOX_API vox_status vox_session_create(vox_engine *engine, const vox_voice *voice, const vox_synth_params *params,
                                      vox_session **out);
/* Append UTF-8 text (NFC; see vox_engine_tokenize). VOX_ERR_INVALID_ARGUMENT after vox_session_end. */
VOX_API vox_status vox_session_feed(vox_session *session, const char *text);
/* No more text: the rest of the utterance can be generated. */
VOX_API vox_status vox_session_end(vox_session *session);
/* Compute and return the next chunk (blocking). VOX_ERR_CANCELLED once cancelled. */
VOX_API vox_status vox_session_pull(vox_session *session, vox_chunk *out);
/* Ask a running or future pull to stop as soon as possible. Thread-safe. */
VOX_API void vox_session_cancel(vox_session *session);
VOX_API void vox_session_free(vox_session *session);
/* The codes generated so far, [n_frames][n_groups]. Owned by the session, valid until the next pull. */
VOX_API vox_status vox_session_codes(const vox_session *session, const int32_t **codes, size_t *n_frames,
                                     size_t *n_groups);

/* ------------------------------------------------------------------------------------------------
 * Verification (used by `vox verify` and the conformance suite to compare the native core with the
 * reference and the official code stage by stage).
 */
/* The talker's prefill input embeddings [n_rows][dim] for the session's voice, text and parameters
 * (requires vox_session_end). Owned by the session. */
VOX_API vox_status vox_session_prompt(vox_session *session, const float **embeds, size_t *n_rows, size_t *dim);
/* Teacher forcing: run the talker and the code predictor on `codes` [n_frames][n_groups] instead of
 * sampling, and write the raw logits of every step: talker_logits [(n_frames + 1)][talker vocab],
 * predictor_logits [n_frames][n_groups - 1][codebook size]. Requires vox_session_end; the session
 * is spent afterwards. */
VOX_API vox_status vox_session_teacher_force(vox_session *session, const int32_t *codes, size_t n_frames,
                                             float *talker_logits, float *predictor_logits);
/* Decode codes [n_frames][n_groups] with the engine's codec decoder, after `n_ref` reference frames
 * (ref_codes may be NULL). Stream mode warms up with `context` reference frames (-1: all) and feeds
 * `chunk_frames` frames at a time; reference mode decodes reference + codes the official way and cuts
 * the reference part. Writes up to `capacity` samples; *n_samples is the full count. */
VOX_API vox_status vox_engine_decode(vox_engine *engine, const int32_t *codes, size_t n_frames,
                                     const int32_t *ref_codes, size_t n_ref, vox_decoder_mode mode,
                                     int32_t context, int32_t chunk_frames, float *pcm, size_t capacity,
                                     size_t *n_samples);

/* Kokoro: run one span through the model and copy out the intermediate named `tap` (time-major
 * [*n_rows][*n_cols]): "bert", "d_en", "d", "dur_raw", "durations", "en", "t_en", "F0", "N", "dec",
 * "har_source", "har", "spec" (the pre-iSTFT generator output: log-magnitude | phase argument) or
 * "audio". ids: the model input ([0] + phoneme ids + [0]); style: a voice pack row [256]; noise 0
 * zeroes the sine source's randomness (for comparisons with the official code). Writes up to
 * `capacity` floats; *n_rows and *n_cols give the full shape. */
VOX_API vox_status vox_engine_trace(vox_engine *engine, const int32_t *ids, size_t n_ids, const float *style,
                                    float speed, uint64_t seed, int32_t noise, const char *tap, float *out,
                                    size_t capacity, size_t *n_rows, size_t *n_cols);
/* ------------------------------------------------------------------------------------------------
 * Devices: JSON describing the CPU (name, cores, features and the kernel path vox uses, memory), the
 * Vulkan devices vox can use ("gpus": index, name, type, software, free and total memory, ...) and
 * "vulkan": {"available", "reason"}. Owned by the library. */
VOX_API const char *vox_devices(void);

#ifdef __cplusplus
}
#endif
#endif /* VOX_H */
