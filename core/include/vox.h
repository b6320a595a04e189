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
#define VOX_ABI_VERSION 2

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
    VOX_ERR_LIMIT = 9,            /* a size limit was reached: frames, phonemes, input length */
    VOX_ERR_DEVICE = 10,          /* a compute device does not exist, cannot be used or failed */
    VOX_ERR_SESSION_LIMIT = 11    /* the engine already runs max_sessions sessions */
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
 * Arrays: named n-dimensional data passed in and out of the library (voice data, verification
 * inputs and outputs). Row-major, little-endian. Arrays the library returns are owned by the object
 * they came from (a voice, a session, a trace) and stay valid as long as it does.
 */
typedef struct vox_array {
    const char *name;
    vox_dtype dtype;           /* F32, I32 or U8 (text: UTF-8 bytes, no terminator) */
    int32_t ndim;              /* 0 to VOX_MAX_DIMS (0: a scalar) */
    int64_t shape[VOX_MAX_DIMS]; /* shape[ndim..] are 0 */
    const void *data;
} vox_array;

/* ------------------------------------------------------------------------------------------------
 * Engines. An engine owns one model (its weights mapped from the .tmod) and one thread pool; any
 * number of voices and sessions use it. Engine functions may be called from several threads at
 * once. Every struct passed by pointer starts with struct_size (set by its *_default_params
 * function): later versions of vox append fields and still accept what older callers pass.
 *
 * Model families (Qwen3-TTS, Kokoro, ...) differ in what they can do and in their synthesis
 * options; vox_engine_info says what a model can do, vox_engine_options describes its options.
 */
typedef struct vox_engine vox_engine;
typedef struct vox_voice vox_voice;
typedef struct vox_session vox_session;

typedef struct vox_engine_params {
    uint32_t struct_size;      /* sizeof(vox_engine_params) */
    const char *device;        /* "cpu" (the default; NULL means it too), "auto", "gpu[:N]", "vulkan[:N]",
                                  then ",strict" and the family's device options such as ",codec=cpu"
                                  (docs/vulkan.md) */
    int32_t n_threads;         /* compute threads including the caller's, 1 to 1024; 0: every CPU the
                                  process may use */
    const char *cpu_affinity;  /* pin thread i to the i-th CPU of a list like "0-3,6"; NULL: no pinning */
    int32_t nice;              /* added to the compute threads' nice value, -20 to 19 (0: unchanged) */
    int32_t max_sessions;      /* sessions alive at once (VOX_ERR_LIMIT beyond), 0 to 65536; 0: unlimited */
} vox_engine_params;

VOX_API vox_engine_params vox_engine_default_params(void);
/* Opens `model_path` (.tmod) and prepares it; weights stay in the mapping. */
VOX_API vox_status vox_engine_create(const char *model_path, const vox_engine_params *params, vox_engine **out);
/* Frees the engine. Sessions still alive are cancelled, their calls in progress on other threads are
 * waited for, and they are freed with the engine (their handles are invalid afterwards); voices are
 * independent of the engine and stay valid. NULL is a no-op. */
VOX_API void vox_engine_free(vox_engine *engine);
/* JSON describing the engine: family, variant, size, sample_rate, capabilities (including "stream":
 * how text goes in and audio comes out), speakers, languages, precision, threads, cpu path, device
 * ("cpu" or "vulkan:N"), gpu (null, or the device's name and the matrices and bytes placed in its
 * memory), placement (what runs where and why), stages (the names vox_engine_stage_stats uses) and
 * entries (the verification entries of vox_engine_run, with their inputs and outputs). Owned by the
 * engine. */
VOX_API const char *vox_engine_info(const vox_engine *engine);
/* Token ids of UTF-8 `text` (which should be NFC-normalized: the Python layer does it; vox does not
 * normalize). Writes up to `capacity` ids; *n_ids is the full count (call again with more room). */
VOX_API vox_status vox_engine_tokenize(vox_engine *engine, const char *text, int32_t *ids, size_t capacity,
                                       size_t *n_ids);

typedef struct vox_engine_stats {
    uint32_t struct_size;       /* sizeof(vox_engine_stats) */
    uint64_t sessions_created;
    int32_t sessions_active;
    uint64_t samples_produced;  /* audio samples returned by sessions */
    double compute_ms;          /* cumulative time of the family's stages */
    uint64_t weights_bytes;     /* bytes of tensor data in the model file */
} vox_engine_stats;
VOX_API vox_status vox_engine_stats_get(const vox_engine *engine, vox_engine_stats *out);

/* One stage of the model's pipeline (its names: vox_engine_info "stages"): cumulative compute time and
 * the number of times it ran (a frame, a span, a step, ... as the family counts). */
typedef struct vox_stage_stat {
    const char *name;           /* owned by the library */
    double ms;
    uint64_t count;
} vox_stage_stat;
/* Writes up to `capacity` stages in the family's order; *n_stages is the full count. */
VOX_API vox_status vox_engine_stage_stats(const vox_engine *engine, vox_stage_stat *stages, size_t capacity,
                                          size_t *n_stages);

/* ------------------------------------------------------------------------------------------------
 * Synthesis options. The parameters every model family has are fields of vox_synth_params; the
 * family's own (sampling settings, speed, decoder choices, ...) are a JSON object in `options`, with
 * the names, types, ranges and defaults that vox_engine_options describes. Defaults come from the
 * family, then the model (e.g. its generation config), then the voice (its stored defaults), then
 * the caller. An unknown name, a wrong type or a value out of range is VOX_ERR_INVALID_ARGUMENT with
 * a message naming the option.
 */
typedef struct vox_synth_params {
    uint32_t struct_size;       /* sizeof(vox_synth_params) */
    uint64_t seed;              /* the default: the voice's stored seed, else 0 */
    const char *language;       /* NULL: the voice's language; else one of vox_engine_info "languages" */
    const char *options;        /* JSON object of the family's options; NULL: the defaults */
} vox_synth_params;

/* The seed default of the voice (0 without one); either argument may be NULL. options is NULL. */
VOX_API vox_synth_params vox_synth_default_params(const vox_engine *engine, const vox_voice *voice);
/* JSON describing the family's synthesis options with the defaults that apply to `voice` (NULL: the
 * model's): {"family": "...", "options": [{"name", "type" (bool | int | float | string | enum | json),
 * "default", "min", "max", "choices", "doc"}, ...]}. Writes up to `capacity` bytes including the
 * terminating NUL; *length is the full length without it (call again with more room). */
VOX_API vox_status vox_engine_options(const vox_engine *engine, const vox_voice *voice, char *json, size_t capacity,
                                      size_t *length);

/* ------------------------------------------------------------------------------------------------
 * Voices: who speaks. A voice is immutable once made and may be shared by sessions on any thread.
 * Models clone a voice from a recording, name a built-in speaker (with an optional instruction) or
 * take a description, as their capabilities say (vox_engine_info). Saved as .tvoice
 * (docs/formats.md). A voice holds named texts (such as "ref_text", "speaker", "instruct") and named
 * arrays (such as "speaker_embedding", "ref_codes", "style_pack", "source_wav"), as its family's
 * voice schema defines; vox_voice_info lists them.
 */
typedef struct vox_clone_params {
    uint32_t struct_size;      /* sizeof(vox_clone_params) */
    const char *ref_text;      /* transcript of the recording (the family says when it may be omitted) */
    const char *name;          /* display name stored in the voice; NULL: "voice" */
    const char *language;      /* the voice's default language; NULL: "auto" */
    const char *defaults;      /* JSON object of default synthesis settings kept in the voice ("seed" and
                                  the family's options); NULL: none */
    const char *options;       /* JSON object of the family's cloning options (vox_engine_info
                                  "clone_options"), e.g. {"x_vector_only": true}; NULL: none */
} vox_clone_params;

VOX_API vox_clone_params vox_clone_default_params(void);
/* Clone a voice from `n_frames` frames of interleaved float PCM in [-1, 1] at `sample_rate` Hz (1 kHz
 * to 768 kHz) with `channels` channels (1 to 64; averaged to mono; resampled to the model's rate), at
 * most 600 s (VOX_ERR_LIMIT beyond); a non-finite sample is VOX_ERR_INVALID_ARGUMENT. The recording is
 * kept in the voice ("source_wav"), so a voice can be made again for other weights. */
VOX_API vox_status vox_voice_clone(vox_engine *engine, const float *pcm, size_t n_frames, int32_t channels,
                                   int32_t sample_rate, const vox_clone_params *params, vox_voice **out);
/* A built-in speaker, with an optional style instruction (NULL: none). */
VOX_API vox_status vox_voice_speaker(vox_engine *engine, const char *speaker, const char *instruct, vox_voice **out);
/* A voice from a description. */
VOX_API vox_status vox_voice_design(vox_engine *engine, const char *description, vox_voice **out);
/* Read a .tvoice; VOX_ERR_FORMAT if it is invalid or was made for other weights or another variant. */
VOX_API vox_status vox_voice_load(vox_engine *engine, const char *path, vox_voice **out);
/* Write the voice as .tvoice (atomically: a temporary file renamed into place). */
VOX_API vox_status vox_voice_save(const vox_voice *voice, const char *path);
VOX_API void vox_voice_free(vox_voice *voice);
/* JSON: family, mode, variant, model_id, name, language, defaults, texts {name: text} and arrays
 * {name: shape}. Owned by the voice. */
VOX_API const char *vox_voice_info(const vox_voice *voice);
/* The voice's array `name`; VOX_ERR_NOT_FOUND when it has none of that name. */
VOX_API vox_status vox_voice_array(const vox_voice *voice, const char *name, vox_array *out);

/* ------------------------------------------------------------------------------------------------
 * Sessions: one utterance. Text is fed (all at once or in pieces), audio is pulled in chunks; the
 * decoder carries its state across chunks, so concatenated chunks are one seamless signal. Sampling
 * is deterministic: the audio depends on the seed, the text and the options only, not on the thread
 * count or the chunk size.
 *
 * Duplex streaming: text may be fed (vox_session_feed / _flush / _set_pending / _end) from other
 * threads while one thread pulls; the text is checked as it arrives. When fed text reaches the model
 * is the stream options in vox_synth_params.options (every family has them):
 *   "commit": "auto" (the default: as soon as the model can take it; vox_engine_info
 *             capabilities.stream.text_in says what that is: "token" models take words as they
 *             arrive and hold back an unfinished word, "chunk" models whole sentences),
 *             "sentence" (complete sentences only) or "manual" (nothing until a flush or the end);
 *   "idle_ms": a pause in feeding this long flushes what waits (0: never).
 * A flush makes what was fed so far complete (an unfinished sentence or word is spoken as it is). With
 * commit auto and no flush, a model whose capabilities.stream.exact is true makes the same audio as
 * for the whole text fed at once. vox_session_pull is used by one thread at a time; vox_session_cancel
 * and vox_session_free may be called from any thread (free cancels a call in progress on another
 * thread and waits for it to return before freeing).
 */
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
    uint32_t first_frame;      /* index of the chunk's first frame in the family's unit (a codec frame,
                                  a span, a piece) */
    uint32_t n_frames;
} vox_chunk;

VOX_API vox_status vox_session_create(vox_engine *engine, const vox_voice *voice, const vox_synth_params *params,
                                      vox_session **out);
/* Append UTF-8 text (NFC; see vox_engine_tokenize); any thread. Control characters other than tab,
 * newline and carriage return are VOX_ERR_INVALID_ARGUMENT (the message gives the byte offset), as is
 * text after vox_session_end. */
VOX_API vox_status vox_session_feed(vox_session *session, const char *text);
/* What was fed so far is complete: the model speaks it without waiting for the rest of a sentence
 * or word. Any thread. */
VOX_API vox_status vox_session_flush(vox_session *session);
/* Typing mode, where a field's unspoken tail is edited: keep the first `keep` bytes of the text fed so
 * far and replace the rest with `text`. VOX_ERR_INVALID_ARGUMENT (the message says the text was
 * spoken) when the model has already used more than `keep` bytes: what it used stays; *used (may be
 * NULL) gets how many bytes that is, as far as the last pull knows. Any thread. */
VOX_API vox_status vox_session_set_pending(vox_session *session, size_t keep, const char *text, size_t *used);
/* No more text: the rest of the utterance can be generated. Any thread. */
VOX_API vox_status vox_session_end(vox_session *session);
/* Compute and return the next chunk (blocking). VOX_ERR_CANCELLED once cancelled. */
VOX_API vox_status vox_session_pull(vox_session *session, vox_chunk *out);
/* Ask a running or future pull to stop as soon as possible. Thread-safe. */
VOX_API void vox_session_cancel(vox_session *session);
VOX_API void vox_session_free(vox_session *session);
/* A named output of the session so far (vox_engine_info "capabilities"."session_outputs"; e.g. the
 * generated "codes" [n_frames][n_groups] of a codec model). Owned by the session, valid until the next
 * call on it. VOX_ERR_NOT_FOUND for a name the family does not have. */
VOX_API vox_status vox_session_output(vox_session *session, const char *name, vox_array *out);

/* ------------------------------------------------------------------------------------------------
 * Verification: the family's stages, run on given inputs, with their intermediates read out by name
 * (as llama.cpp's eval callback observes a graph, but pulled, not called back). vox verify and the
 * conformance suite compare them with the reference and the official code. Each family's entries,
 * inputs and outputs are listed in vox_engine_info "entries" and in docs/c-abi.md.
 */
typedef struct vox_trace vox_trace;

/* Run entry `entry` with the named `inputs` (a "text" input is UTF-8 bytes as a U8 array). With a
 * voice, the entry runs in a session of that voice made with `params` (NULL: the defaults), which
 * gets the "text" input fed and ended; entries that need no voice take NULL. `taps`: the outputs to
 * keep, comma-separated (NULL or "*": every output; the entry may stop early once it has them). */
VOX_API vox_status vox_engine_run(vox_engine *engine, const char *entry, const vox_voice *voice,
                                  const vox_synth_params *params, const vox_array *inputs, size_t n_inputs,
                                  const char *taps, vox_trace **out);
/* The outputs kept, in the order they were produced. */
VOX_API size_t vox_trace_count(const vox_trace *trace);
VOX_API vox_status vox_trace_get(const vox_trace *trace, size_t index, vox_array *out);
/* The output `name` (the first of that name); VOX_ERR_NOT_FOUND when there is none. */
VOX_API vox_status vox_trace_find(const vox_trace *trace, const char *name, vox_array *out);
VOX_API void vox_trace_free(vox_trace *trace);

/* ------------------------------------------------------------------------------------------------
 * Devices: JSON describing the CPU (name, cores, features and the kernel path vox uses, memory), the
 * Vulkan devices vox can use ("gpus": index, name, type, software, free and total memory, ...) and
 * "vulkan": {"available", "reason"}. Owned by the library. */
VOX_API const char *vox_devices(void);

#ifdef __cplusplus
}
#endif
#endif /* VOX_H */
