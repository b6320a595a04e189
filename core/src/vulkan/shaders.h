/* Internal: the compute shaders, compiled to SPIR-V and stored in the repository
 * (shaders_spv.c / shaders_spv.h are generated from the .comp files of core/shaders by tools/build_shaders.py;
 * a test fails when they are stale). */
#ifndef VOX_VULKAN_SHADERS_H
#define VOX_VULKAN_SHADERS_H

#include <stdint.h>

typedef struct vx_spv_shader {
    const char *name;         /* the .comp file name without extension, e.g. "gemv_q8" */
    const uint32_t *code;
    uint32_t words;
    uint32_t n_bindings;      /* storage buffers at bindings 0 .. n_bindings-1 of set 0 */
    uint32_t writes;          /* bit i: binding i is not readonly (the dispatch may write it) */
} vx_spv_shader;

/* Every pipeline has a 128-byte push-constant range (the minimum every device offers); a shader's
 * push block is a prefix of it. */
#define VX_PUSH_MAX 128

extern const vx_spv_shader vx_spv_shaders[];

#include "shaders_spv.h"      /* enum { VX_SH_<NAME>, ..., VX_SHADER_COUNT } */

#endif
