/* Internal: what the engine needs from an open .tmod beyond the public accessors of vox.h. */
#ifndef VOX_TMOD_H
#define VOX_TMOD_H

#include "json.h"
#include "vox.h"

/* Layout constants of format version 1 (docs/formats.md). */
#define VOX_TMOD_MAGIC "VOXM"
#define VOX_TMOD_VERSION 1u
#define VOX_TMOD_HEADER_SIZE 64u
#define VOX_TMOD_ALIGN 4096u
/* A manifest is ~100 KB for a real model; the limit keeps a corrupt length from driving a huge parse. */
#define VOX_TMOD_MAX_MANIFEST (64u << 20)
/* Values (JSON nodes) in a manifest: a real one has ~5000 (about 10 per tensor). The limit keeps the
 * parse of a hostile manifest of the maximum length from costing gigabytes (~45 bytes per byte of
 * "[0,0,...]"): at most ~23 MiB of nodes. vox.formats.tmod.MAX_MANIFEST_VALUES is the same. */
#define VOX_TMOD_MAX_MANIFEST_VALUES ((size_t)1 << 18)

/* The parsed manifest (root object); valid while the model is open. */
const vox_json *vox_model_json(const vox_model *model);
/* The member `key` of a manifest object, of JSON type `type`; NULL with *st set to a VOX_ERR_FORMAT that
 * names the file, `where` ("tokenizer: ") and the key otherwise. For the families' manifest checks. */
const vox_json *vx_manifest_member(const vox_model *m, const vox_json *obj, const char *where, const char *key,
                                   vox_json_type type, vox_status *st);
/* The path the model was opened with. */
const char *vox_model_path(const vox_model *model);
/* Drop the resident pages of [p, p + n) of the model's read-only mapping (the whole pages inside the
 * range; nothing when p is not in the mapping): for weights repacked at load whose source is never
 * read again, so that the copy replaces them in memory instead of adding to them. The mapping is
 * private and never written, so a page touched again is simply read back from the file. */
void vox_model_drop_pages(const vox_model *model, const void *p, size_t n);
/* Bytes per element row math: the number of bytes a tensor of `dtype` with n elements whose last
 * axis has k elements occupies, or UINT64_MAX when the shape is impossible for the dtype
 * (q8/q4 need k % 32 == 0) or n is larger than 2^60. */
uint64_t vox_dtype_nbytes(vox_dtype dtype, uint64_t n, uint64_t k);
/* "f32", "q8", ...; NULL for an unknown value. */
const char *vox_dtype_name(vox_dtype dtype);

#endif
