/* Internal: the Vulkan backend. The loader (libvulkan.so.1) is opened at run time: without it, or
 * without a Vulkan device, vox simply has no GPUs (vx_vk_devices lists none and says why).
 *
 * A vx_gpu is one logical device with one compute queue. Work is recorded as a chain of dispatches into
 * one command buffer (vx_gpu_begin .. vx_gpu_submit); every dispatch waits for the earlier ones whose
 * buffers it touches (a barrier where a buffer range one of them wrote is read or written, or one
 * read is written), so a chain reads like sequential code. Buffers are plain
 * storage buffers; weights live in device-local memory, staging copies go through a host buffer. */
#ifndef VOX_VULKAN_VK_H
#define VOX_VULKAN_VK_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "vk_decl.h"
#include "vox.h"

/* ------------------------------------------------------------------------------ devices */
typedef enum vx_vk_type {
    VX_VK_OTHER = 0, VX_VK_INTEGRATED = 1, VX_VK_DISCRETE = 2, VX_VK_VIRTUAL = 3, VX_VK_CPU = 4
} vx_vk_type;

typedef struct vx_vk_device_info {
    int index;                       /* vox's Vulkan index (the loader's enumeration order) */
    char name[256];
    vx_vk_type type;
    const char *type_name;           /* "discrete", "integrated", "virtual", "cpu", "other" */
    int software;                    /* a CPU renderer (llvmpipe/lavapipe, SwiftShader): never picked by auto */
    uint32_t api_version, driver_version, vendor_id, device_id;
    uint64_t memory_total;           /* device-local heaps (all heaps when none is device-local) */
    uint64_t memory_free;            /* VK_EXT_memory_budget when present, else an estimate */
    int memory_free_estimated;       /* 1: no budget extension, memory_free = memory_total */
    uint32_t subgroup_size;          /* 0 when the device does not say (Vulkan 1.0) */
    uint64_t max_storage_buffer_range;
    uint64_t min_storage_offset_align; /* minStorageBufferOffsetAlignment: binding offsets are multiples */
    uint32_t max_workgroup_invocations, max_shared_memory;
    float timestamp_period_ns;       /* 0: no compute timestamps */
    /* VK_KHR_cooperative_matrix as the GEMM needs it: 16x16x16 float16 products into float32 at subgroup
     * scope, with shaderFloat16, the Vulkan memory model and basic subgroup operations in compute */
    int coopmat;
    char coopmat_shapes[96];         /* every f16 x f16 -> f32 MxNxK the device lists ("" when none) */
    /* VK_NV_cooperative_matrix2 as gemm_cm2.comp needs it (with coopmat): workgroup-scope float16 x
     * float16 -> float32 matrices of flexible sizes at some workgroup size (coopmat2_invocations, 256
     * preferred), tensor-addressed loads, per-element operations, row reductions, conversions and 16-bit
     * storage (gemm_cm2.comp, attention_cm2.comp) */
    int coopmat2;
    uint32_t coopmat2_invocations;
    char coopmat2_shapes[96];        /* "MgxNgxKg@invocations" of each f16 x f16 -> f32 workgroup entry (granularities) */
} vx_vk_device_info;

/* The devices of this machine, enumerated once (thread-safe). *n = 0 when Vulkan is unavailable; then
 * vx_vk_unavailable_reason() says why (no loader, no instance, no device), else it returns NULL. */
const vx_vk_device_info *vx_vk_devices(int *n);
const char *vx_vk_unavailable_reason(void);

/* ------------------------------------------------------------------------------ device spec */
/* The --device string: cpu | auto | gpu[:N] | vulkan[:N], then ",strict" and key=value options that
 * the model family checks (such as ",codec=cpu").
 * auto picks the first non-software Vulkan device with the most memory, else the CPU; gpu/vulkan
 * without N picks as auto does but may pick a software renderer when it is the only device (so a CI
 * machine with lavapipe runs the GPU path when asked to); an explicit N is used as is. */
typedef struct vx_device_spec {
    int gpu;            /* 1: run on Vulkan device `index`; 0: the CPU */
    int index;
    int strict;         /* a fallback for lack of video memory is an error (also VOX_GPU_STRICT=1) */
    /* the other options, "key=value" each, for the model family to check (engine.c) */
    struct { char key[24], value[24]; } opts[4];
    int n_opts;
    int asked_auto;     /* "auto": the choice was vox's */
} vx_device_spec;

/* Parses and resolves spec (NULL or "" = "cpu"). Errors: VOX_ERR_INVALID_ARGUMENT for a malformed
 * string, VOX_ERR_NOT_FOUND for a device index that does not exist or Vulkan missing when asked. */
vox_status vx_device_spec_parse(const char *spec, vx_device_spec *out);

/* ------------------------------------------------------------------------------ context */
typedef struct vx_gpu vx_gpu;

typedef struct vx_gbuf {
    VkBuffer buf;
    VkDeviceMemory mem;
    uint64_t size;
    void *map;           /* host-visible buffers: the persistent mapping */
} vx_gbuf;

/* A binding of a dispatch: a range of a buffer (size 0 = to the end). */
typedef struct vx_gbind {
    const vx_gbuf *b;
    uint64_t offset, size;
} vx_gbind;

vox_status vx_gpu_create(int index, vx_gpu **out);
void vx_gpu_free(vx_gpu *g);
const vx_vk_device_info *vx_gpu_info(const vx_gpu *g);
/* The largest range one storage-buffer binding may cover: the device's maxStorageBufferRange, or less
 * when VOX_VK_MAX_RANGE (bytes) says so (tests use it to exercise the splitting of big matrices). */
uint64_t vx_gpu_max_range(const vx_gpu *g);
uint64_t vx_gpu_bytes_allocated(const vx_gpu *g);
/* 1 when the device was created with cooperative matrices (info.coopmat, unless VOX_VK_COOPMAT=0): the
 * prefill GEMM of f16/bf16 weights then runs on them (gemm_cm_*.comp). */
int vx_gpu_coopmat(const vx_gpu *g);
/* 1 when the device was also created with VK_NV_cooperative_matrix2 (info.coopmat2, unless
 * VOX_VK_COOPMAT2=0): the workgroup-scope GEMM gemm_cm2.comp, in tiles of *tm x rows by *tn weight
 * rows, and attention_cm2.comp. */
int vx_gpu_coopmat2(const vx_gpu *g);
/* Why a device with info.coopmat2 does not use it ("" when it does or has none): its pipelines failed. */
const char *vx_gpu_coopmat2_off(const vx_gpu *g);
void vx_gpu_cm2_tile(const vx_gpu *g, uint32_t *tm, uint32_t *tn);
/* Linear layers of up to this many x rows are GEMVs, larger ones the tiled GEMM: VX_GEMV_MAX_ROWS, or
 * VOX_VK_GEMV_MAX_ROWS (>= 4) to measure where one wins over the other. On an H200 (bf16 4096x2048) the
 * GEMV takes 50 us for 16 rows and 180 us for 64, the GEMM 80-105 us and 110-120 us: the GEMM wins
 * from about 32 rows (q8 from about 48, f32 breaks even at 64). */
#define VX_GEMV_MAX_ROWS 32
int vx_gpu_gemv_max_rows(const vx_gpu *g);

/* Builds every shader's pipeline now (they are otherwise built on first use), so that the first
 * synthesis does not pay for it: the engine calls it at load. */
vox_status vx_gpu_prepare(vx_gpu *g);

/* Device-local (host = 0) or host-visible coherent (host = 1) storage buffer. Sizes round up to 16. */
vox_status vx_gpu_alloc(vx_gpu *g, uint64_t size, int host, vx_gbuf *out);
void vx_gpu_release(vx_gpu *g, vx_gbuf *b);
/* Synchronous copies between host memory and a buffer (through a staging buffer when needed; a plain
 * memcpy for host-visible buffers). A thread recording a chain must not copy to device-local buffers
 * (the device is locked from vx_gpu_begin to vx_gpu_submit, so sessions on several threads take turns). */
vox_status vx_gpu_upload(vx_gpu *g, vx_gbuf *dst, uint64_t offset, const void *src, uint64_t n);
vox_status vx_gpu_download(vx_gpu *g, const vx_gbuf *src, uint64_t offset, void *dst, uint64_t n);

/* Recording. label names the dispatch's stage for VOX_PROFILE=gpu (a static string, or NULL). */
vox_status vx_gpu_begin(vx_gpu *g);
vox_status vx_gpu_dispatch(vx_gpu *g, int shader, const vx_gbind *binds, int n_binds, const void *push,
                           uint32_t push_size, uint32_t gx, uint32_t gy, uint32_t gz, const char *label);
/* Ends the chain, submits it and waits for it. Always call it after vx_gpu_begin: when a dispatch
 * failed, the chain is dropped and the first error is returned again. */
vox_status vx_gpu_submit(vx_gpu *g);

/* Dispatches, and barriers between them, of every chain submitted so far. A chain puts a barrier
 * before a dispatch only when it touches a buffer range that a dispatch since the last barrier wrote,
 * or writes one that such a dispatch read (the shader's readonly bindings say which it writes);
 * VOX_VK_BARRIERS=all (or vx_gpu_set_full_barriers) puts one between every two, as a reference. */
typedef struct vx_gpu_count {
    uint64_t chains, dispatches, barriers;
} vx_gpu_count;
void vx_gpu_counts(const vx_gpu *g, vx_gpu_count *c);
void vx_gpu_set_full_barriers(vx_gpu *g, int on);

/* VOX_PROFILE=gpu (or vx_gpu_set_profile): timestamps around every dispatch, summed per "label/shader"
 * (label: the stage, e.g. "talker" or "predictor/head"; NULL: the shader alone). */
void vx_gpu_set_profile(vx_gpu *g, int on);
void vx_gpu_profile_print(const vx_gpu *g, FILE *f);
/* The summed time of one profile line in ms, and how many dispatches it had (tests, bench). */
double vx_gpu_profile_ms(const vx_gpu *g, const char *label, int *count);

#endif
