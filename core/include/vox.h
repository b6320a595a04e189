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
    VOX_ERR_INTERNAL = 7
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

#ifdef __cplusplus
}
#endif
#endif /* VOX_H */
