/* A Vulkan device for vox: memory, the pipeline cache, command chains and timestamps. */

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "ops_codec.h"
#include "shaders.h"
#include "vk_internal.h"

#define MAX_SETS 4096          /* dispatches per chain */
#define VX_CM2_DEFAULT 1       /* VK_NV_cooperative_matrix2 used without VOX_VK_COOPMAT2 (see vx_gpu_create) */
#define POOL_SETS 16384        /* descriptor sets kept across chains (the cache below) */
#define CACHE_SLOTS 32768      /* open addressing, a power of two > POOL_SETS */

/* Descriptor sets are cached by their bindings: a talker step or a predictor frame binds the same
 * buffers every time, so after the first frame no set is allocated or written. The cache (and the
 * pool) is emptied at the next vx_gpu_begin after any buffer is released (a new buffer could reuse a
 * released handle) or when the pool runs low. */
typedef struct set_key {
    int shader, n;
    VkBuffer buf[8];
    uint64_t offset[8], range[8];
} set_key;
typedef struct set_entry {
    set_key key;
    VkDescriptorSet set;
    int used;
} set_entry;
#define MAX_BINDINGS 8
#define MAX_PENDING 64         /* ranges tracked between barriers (more: a barrier) */
#define STAGING_BYTES (64ull << 20)

/* A profile line: "label/shader" (the dispatch's stage label, then its shader). */
typedef struct prof_entry {
    char name[96];
    double ms;
    int count;
} prof_entry;

struct vx_gpu {
    pthread_mutex_t lock;        /* one command buffer: a chain (begin..submit) or a copy at a time */
    const vx_vk_fns *fi;
    vx_vk_device_fns f;
    vx_vk_device_info info;
    VkPhysicalDevice pd;
    VkDevice dev;
    VkQueue queue;
    uint32_t qfam;
    VkPhysicalDeviceMemoryProperties mem;
    VkCommandPool cmd_pool;
    VkCommandBuffer cmd;
    VkFence fence;
    VkDescriptorPool desc_pool;
    set_entry *sets;             /* [CACHE_SLOTS] */
    int n_sets;
    atomic_int sets_dirty;       /* set by vx_gpu_release (any thread), cleared by vx_gpu_begin */
    VkPipelineCache cache;
    VkDescriptorSetLayout set_layout[MAX_BINDINGS + 1];
    VkPipelineLayout pipe_layout[MAX_BINDINGS + 1];
    VkPipeline pipes[VX_SHADER_COUNT];
    VkQueryPool queries;
    uint32_t n_queries;
    const char **query_labels;   /* label of dispatch i (timestamps 2i, 2i+1) in the current chain */
    int *query_shaders;          /* its shader */
    prof_entry *prof;
    int n_prof, profile;
    vx_gbuf staging;
    int recording, n_dispatch;
    /* Buffer ranges that dispatches recorded since the last barrier read or write: the next dispatch
     * gets a barrier only when one of its ranges meets one of these where either side writes. */
    struct { VkBuffer buf; uint64_t lo, hi; int write; } pend[MAX_PENDING];
    int n_pend, full_barriers;   /* full_barriers: VOX_VK_BARRIERS=all, one between every two dispatches */
    int n_barrier;
    uint64_t tot_dispatch, tot_barrier, tot_chains;
    const char *first_label;     /* the label of the chain's first dispatch: chains are counted by it */
    struct { const char *label; uint64_t chains, dispatches, barriers; } kinds[16];
    int n_kinds;
    vox_status chain_status;     /* the first error while recording: the chain is not submitted */
    uint64_t max_range, allocated;
    int coopmat;                 /* created with cooperative matrices (vx_gpu_coopmat) */
    int coopmat2;                /* and with VK_NV_cooperative_matrix2 (vx_gpu_coopmat2) */
    uint32_t cm2_tile[3];        /* gemm_cm2.comp's TM, TN, BK (specialization constants 1 .. 3) */
    char cm2_off[256];           /* why the device has VK_NV_cooperative_matrix2 but vox does not use it */
    int gemv_max_rows;
};

static vox_status vk_fail(VkResult r, const char *what) {
    vox_status st = r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY ? VOX_ERR_OUT_OF_MEMORY
                                                                                             : VOX_ERR_DEVICE;
    return vox_set_error(st, "Vulkan: %s failed (VkResult %d)", what, (int)r);
}

const vx_vk_device_info *vx_gpu_info(const vx_gpu *g) { return &g->info; }
uint64_t vx_gpu_max_range(const vx_gpu *g) { return g->max_range; }
uint64_t vx_gpu_bytes_allocated(const vx_gpu *g) { return g->allocated; }
int vx_gpu_coopmat(const vx_gpu *g) { return g->coopmat; }
int vx_gpu_coopmat2(const vx_gpu *g) { return g->coopmat2; }
const char *vx_gpu_coopmat2_off(const vx_gpu *g) { return g->cm2_off; }
void vx_gpu_cm2_tile(const vx_gpu *g, uint32_t *tm, uint32_t *tn) {
    *tm = g->cm2_tile[0];
    *tn = g->cm2_tile[1];
}
int vx_gpu_gemv_max_rows(const vx_gpu *g) { return g->gemv_max_rows; }

/* The cooperative-matrix shaders: built only on devices created with them; their workgroup is 4
 * subgroups (specialization constant 0, gemm_cm.glsl, gemm_cmh.glsl, codec_gemm_cm.glsl, attention_cm.comp). */
static int coopmat_shader(int shader) {
    return shader == VX_SH_GEMM_CM_F16 || shader == VX_SH_GEMM_CM_BF16 || shader == VX_SH_GEMM_CM_WIDE_F16 ||
           shader == VX_SH_GEMM_CM_WIDE_BF16 || shader == VX_SH_GEMM_CMH_F16 || shader == VX_SH_GEMM_CMH_BF16 ||
           shader == VX_SH_ATTENTION_CM || shader == VX_SH_CODEC_GEMM_CM_F16 || shader == VX_SH_CODEC_GEMM_CM_BF16;
}

/* The VK_NV_cooperative_matrix2 shaders: built only on devices created with it; their workgroup is
 * info.coopmat2_invocations (specialization constant 0), their tile g->cm2_tile (constants 1 .. 3). */
static int coopmat2_shader(int shader) { return shader == VX_SH_GEMM_CM2 || shader == VX_SH_ATTENTION_CM2; }

static vox_status pipeline(vx_gpu *g, int shader);

static int codec_coopmat_shader(int shader) {
    return shader == VX_SH_CODEC_GEMM_CM_F16 || shader == VX_SH_CODEC_GEMM_CM_BF16;
}

static int find_queue(const vx_vk_fns *fi, VkPhysicalDevice pd, uint32_t *fam) {
    uint32_t n = 0;
    fi->vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, NULL);
    VkQueueFamilyProperties q[64];
    if (n > 64) n = 64;
    fi->vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, q);
    /* A compute queue with timestamps; a compute-only family first (it is the dedicated one). */
    for (int pass = 0; pass < 2; pass++)
        for (uint32_t i = 0; i < n; i++) {
            if (!(q[i].queueFlags & VK_QUEUE_COMPUTE_BIT)) continue;
            if (pass == 0 && (q[i].queueFlags & VK_QUEUE_GRAPHICS_BIT)) continue;
            *fam = i;
            return q[i].timestampValidBits > 0 ? 2 : 1;
        }
    return 0;
}

vox_status vx_gpu_create(int index, vx_gpu **out) {
    *out = NULL;
    int n;
    const vx_vk_device_info *devs = vx_vk_devices(&n);
    VkInstance inst;
    VkPhysicalDevice pd;
    const vx_vk_fns *fi = vx_vk_instance(&inst, &pd, index);
    if (!fi) return vox_set_error(VOX_ERR_DEVICE, "there is no Vulkan device %d", index);
    vx_gpu *g = calloc(1, sizeof *g);
    if (!g) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    /* error-checking: a thread that calls back in while it records a chain (vx_gpu_begin holds the lock
     * until vx_gpu_submit) gets an error from gpu_lock, not a deadlock that hangs the process */
    pthread_mutexattr_t ma;
    pthread_mutexattr_init(&ma);
    pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_ERRORCHECK);
    pthread_mutex_init(&g->lock, &ma);
    pthread_mutexattr_destroy(&ma);
    g->fi = fi;
    g->pd = pd;
    for (int i = 0; i < n; i++)
        if (devs[i].index == index) g->info = devs[i];
    vox_status st;
    int q = find_queue(fi, pd, &g->qfam);
    if (!q) {
        st = vox_set_error(VOX_ERR_UNSUPPORTED, "Vulkan device %d (%s) has no compute queue", index, g->info.name);
        goto fail;
    }
    if (q < 2) g->info.timestamp_period_ns = 0;
    fi->vkGetPhysicalDeviceMemoryProperties(pd, &g->mem);

    float prio = 1.0f;
    VkDeviceQueueCreateInfo qci;
    memset(&qci, 0, sizeof qci);
    qci.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
    qci.queueFamilyIndex = g->qfam;
    qci.queueCount = 1;
    qci.pQueuePriorities = &prio;
    VkDeviceCreateInfo dci;
    memset(&dci, 0, sizeof dci);
    dci.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
    dci.queueCreateInfoCount = 1;
    dci.pQueueCreateInfos = &qci;
    /* cooperative matrices (the prefill GEMM on tensor cores): their extensions and features */
    const char *cm_ext[] = {"VK_KHR_cooperative_matrix", "VK_KHR_vulkan_memory_model", "VK_KHR_shader_float16_int8"};
    vx_vk_cm_features cf;
    vx_vk_cm_features_chain(&cf);
    const char *cme = getenv("VOX_VK_COOPMAT");
    g->coopmat = g->info.coopmat && !(cme && !strcmp(cme, "0"));
    /* VK_NV_cooperative_matrix2 (gemm_cm2.comp, attention_cm2.comp) on top: VOX_VK_COOPMAT2=1 turns it on,
     * =0 off; by default VX_CM2_DEFAULT (on: measured faster on an H100, its test row passing there) */
    const char *cm_ext2[] = {"VK_KHR_cooperative_matrix", "VK_KHR_vulkan_memory_model", "VK_KHR_shader_float16_int8",
                             "VK_NV_cooperative_matrix2"};
    vx_vk_cm2_features cf2;
    vx_vk_cm2_features_chain(&cf2);
    const char *cme2 = getenv("VOX_VK_COOPMAT2");
    g->coopmat2 = g->coopmat && g->info.coopmat2 && (cme2 && *cme2 ? strcmp(cme2, "0") != 0 : VX_CM2_DEFAULT);
    if (g->coopmat) {
        cf.cm.cooperativeMatrix = 1;
        cf.mm.vulkanMemoryModel = 1;
        cf.f16.shaderFloat16 = 1;
        dci.pNext = &cf.cm;
        dci.enabledExtensionCount = 3;
        dci.ppEnabledExtensionNames = cm_ext;
    }
    if (g->coopmat2) {
        cf2.cm2.cooperativeMatrixWorkgroupScope = 1;
        cf2.cm2.cooperativeMatrixFlexibleDimensions = 1;
        cf2.cm2.cooperativeMatrixConversions = 1;
        cf2.cm2.cooperativeMatrixReductions = 1;
        cf2.cm2.cooperativeMatrixPerElementOperations = 1;
        cf2.cm2.cooperativeMatrixTensorAddressing = 1;
        cf2.s16.storageBuffer16BitAccess = 1;
        cf.f16.pNext = &cf2.cm2;
        dci.enabledExtensionCount = 4;
        dci.ppEnabledExtensionNames = cm_ext2;
        /* the tile: 128 x 128, K steps of 32 (VOX_VK_CM2_TILE=TMxTNxBK, multiples of 32, for measuring others) */
        g->cm2_tile[0] = 128, g->cm2_tile[1] = 128, g->cm2_tile[2] = 32;
        const char *t = getenv("VOX_VK_CM2_TILE");
        unsigned a, b, c;
        if (t && sscanf(t, "%ux%ux%u", &a, &b, &c) == 3 && a && b && c && a % 32 == 0 && b % 32 == 0 && c % 32 == 0 &&
            a <= 256 && b <= 256 && c <= 128)
            g->cm2_tile[0] = a, g->cm2_tile[1] = b, g->cm2_tile[2] = c;
    }
    VkResult r = fi->vkCreateDevice(pd, &dci, NULL, &g->dev);
    if (r != VK_SUCCESS) {
        st = vk_fail(r, "vkCreateDevice");
        goto fail;
    }
#define VX_VK_LOAD_DEV(name, ret, args)                                                                  \
    if (!(g->f.name = (ret(*) args)fi->vkGetDeviceProcAddr(g->dev, #name))) {                            \
        st = vox_set_error(VOX_ERR_DEVICE, "Vulkan: the driver lacks %s", #name);                      \
        goto fail;                                                                                       \
    }
    VX_VK_DEVICE_FNS(VX_VK_LOAD_DEV)
#undef VX_VK_LOAD_DEV
    g->f.vkGetDeviceQueue(g->dev, g->qfam, 0, &g->queue);

    VkCommandPoolCreateInfo cpi;
    memset(&cpi, 0, sizeof cpi);
    cpi.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
    cpi.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    cpi.queueFamilyIndex = g->qfam;
    if ((r = g->f.vkCreateCommandPool(g->dev, &cpi, NULL, &g->cmd_pool)) != VK_SUCCESS) {
        st = vk_fail(r, "vkCreateCommandPool");
        goto fail;
    }
    VkCommandBufferAllocateInfo cai;
    memset(&cai, 0, sizeof cai);
    cai.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
    cai.commandPool = g->cmd_pool;
    cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    cai.commandBufferCount = 1;
    if ((r = g->f.vkAllocateCommandBuffers(g->dev, &cai, &g->cmd)) != VK_SUCCESS) {
        st = vk_fail(r, "vkAllocateCommandBuffers");
        goto fail;
    }
    VkFenceCreateInfo fci;
    memset(&fci, 0, sizeof fci);
    fci.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
    if ((r = g->f.vkCreateFence(g->dev, &fci, NULL, &g->fence)) != VK_SUCCESS) {
        st = vk_fail(r, "vkCreateFence");
        goto fail;
    }
    g->sets = calloc(CACHE_SLOTS, sizeof *g->sets);
    if (!g->sets) {
        st = vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
        goto fail;
    }
    VkDescriptorPoolSize ps = {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, POOL_SETS * MAX_BINDINGS};
    VkDescriptorPoolCreateInfo dpi;
    memset(&dpi, 0, sizeof dpi);
    dpi.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO;
    dpi.maxSets = POOL_SETS;
    dpi.poolSizeCount = 1;
    dpi.pPoolSizes = &ps;
    if ((r = g->f.vkCreateDescriptorPool(g->dev, &dpi, NULL, &g->desc_pool)) != VK_SUCCESS) {
        st = vk_fail(r, "vkCreateDescriptorPool");
        goto fail;
    }
    VkPipelineCacheCreateInfo pci;
    memset(&pci, 0, sizeof pci);
    pci.sType = VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO;
    if ((r = g->f.vkCreatePipelineCache(g->dev, &pci, NULL, &g->cache)) != VK_SUCCESS) {
        st = vk_fail(r, "vkCreatePipelineCache");
        goto fail;
    }
    if (g->info.timestamp_period_ns > 0) {
        g->n_queries = 2 * MAX_SETS;
        VkQueryPoolCreateInfo qpi;
        memset(&qpi, 0, sizeof qpi);
        qpi.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO;
        qpi.queryType = VK_QUERY_TYPE_TIMESTAMP;
        qpi.queryCount = g->n_queries;
        if (g->f.vkCreateQueryPool(g->dev, &qpi, NULL, &g->queries) != VK_SUCCESS) g->n_queries = 0;
        g->query_labels = calloc(MAX_SETS, sizeof *g->query_labels);
        g->query_shaders = calloc(MAX_SETS, sizeof *g->query_shaders);
        if (!g->query_labels || !g->query_shaders) g->n_queries = 0;
    }
    g->max_range = g->info.max_storage_buffer_range;
    const char *mr = getenv("VOX_VK_MAX_RANGE");
    if (mr && strtoull(mr, NULL, 10) >= 4096 && strtoull(mr, NULL, 10) < g->max_range) g->max_range = strtoull(mr, NULL, 10);
    g->gemv_max_rows = VX_GEMV_MAX_ROWS;
    const char *gm = getenv("VOX_VK_GEMV_MAX_ROWS");
    if (gm && atoi(gm) >= 4) g->gemv_max_rows = atoi(gm);
    const char *prof = getenv("VOX_PROFILE");
    if (prof && !strcmp(prof, "gpu")) vx_gpu_set_profile(g, 1);
    const char *bar = getenv("VOX_VK_BARRIERS");
    g->full_barriers = bar && !strcmp(bar, "all");
    /* The cooperative-matrix-2 shaders are built now, as a probe: where the driver rejects one (a tile
     * or workgroup size it does not take), the device is used without them, and says why. */
    for (int i = 0; i < VX_SHADER_COUNT && g->coopmat2; i++)
        if (coopmat2_shader(i) && pipeline(g, i) != VOX_OK) {
            snprintf(g->cm2_off, sizeof g->cm2_off, "%s", vox_last_error());
            g->coopmat2 = 0;
            vox_clear_error();
        }
    *out = g;
    return VOX_OK;
fail:
    vx_gpu_free(g);
    return st;
}

void vx_gpu_free(vx_gpu *g) {
    if (!g) return;
    if (g->dev) {
        g->f.vkDeviceWaitIdle(g->dev);
        vx_gpu_release(g, &g->staging);
        for (int i = 0; i < VX_SHADER_COUNT; i++)
            if (g->pipes[i]) g->f.vkDestroyPipeline(g->dev, g->pipes[i], NULL);
        for (int i = 0; i <= MAX_BINDINGS; i++) {
            if (g->pipe_layout[i]) g->f.vkDestroyPipelineLayout(g->dev, g->pipe_layout[i], NULL);
            if (g->set_layout[i]) g->f.vkDestroyDescriptorSetLayout(g->dev, g->set_layout[i], NULL);
        }
        if (g->queries) g->f.vkDestroyQueryPool(g->dev, g->queries, NULL);
        if (g->cache) g->f.vkDestroyPipelineCache(g->dev, g->cache, NULL);
        if (g->desc_pool) g->f.vkDestroyDescriptorPool(g->dev, g->desc_pool, NULL);
        if (g->fence) g->f.vkDestroyFence(g->dev, g->fence, NULL);
        if (g->cmd_pool) g->f.vkDestroyCommandPool(g->dev, g->cmd_pool, NULL);
        g->f.vkDestroyDevice(g->dev, NULL);
    }
    free(g->sets);
    free(g->query_labels);
    free(g->query_shaders);
    free(g->prof);
    pthread_mutex_destroy(&g->lock);
    free(g);
}

/* ------------------------------------------------------------------------------ memory */
static int memory_type(const vx_gpu *g, uint32_t bits, uint32_t want, uint32_t avoid) {
    for (uint32_t i = 0; i < g->mem.memoryTypeCount; i++) {
        uint32_t fl = g->mem.memoryTypes[i].propertyFlags;
        if ((bits & (1u << i)) && (fl & want) == want && !(fl & avoid)) return (int)i;
    }
    return -1;
}

vox_status vx_gpu_alloc(vx_gpu *g, uint64_t size, int host, vx_gbuf *out) {
    memset(out, 0, sizeof *out);
    size = (size + 15) & ~(uint64_t)15;
    if (!size) size = 16;
    VkBufferCreateInfo bci;
    memset(&bci, 0, sizeof bci);
    bci.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
    bci.size = size;
    bci.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    bci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    VkBuffer buf;
    VkResult r = g->f.vkCreateBuffer(g->dev, &bci, NULL, &buf);
    if (r != VK_SUCCESS) return vk_fail(r, "vkCreateBuffer");
    VkMemoryRequirements req;
    g->f.vkGetBufferMemoryRequirements(g->dev, buf, &req);
    int type;
    if (host) {
        type = memory_type(g, req.memoryTypeBits, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT |
                                                      VK_MEMORY_PROPERTY_HOST_CACHED_BIT, 0);
        if (type < 0)
            type = memory_type(g, req.memoryTypeBits,
                               VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT, 0);
    } else {
        type = memory_type(g, req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0);
        if (type < 0) type = memory_type(g, req.memoryTypeBits, 0, 0);
    }
    if (type < 0) {
        g->f.vkDestroyBuffer(g->dev, buf, NULL);
        return vox_set_error(VOX_ERR_DEVICE, "Vulkan: no suitable memory type for a buffer");
    }
    VkMemoryAllocateInfo mai;
    memset(&mai, 0, sizeof mai);
    mai.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
    mai.allocationSize = req.size;
    mai.memoryTypeIndex = (uint32_t)type;
    VkDeviceMemory mem;
    if ((r = g->f.vkAllocateMemory(g->dev, &mai, NULL, &mem)) != VK_SUCCESS) {
        g->f.vkDestroyBuffer(g->dev, buf, NULL);
        return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "Vulkan: cannot allocate %.1f MiB of %s memory (VkResult %d)",
                             (double)size / 1048576.0, host ? "host-visible" : "device", (int)r);
    }
    if ((r = g->f.vkBindBufferMemory(g->dev, buf, mem, 0)) != VK_SUCCESS) {
        g->f.vkFreeMemory(g->dev, mem, NULL);
        g->f.vkDestroyBuffer(g->dev, buf, NULL);
        return vk_fail(r, "vkBindBufferMemory");
    }
    out->buf = buf;
    out->mem = mem;
    out->size = size;
    if (g->mem.memoryTypes[type].propertyFlags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) {
        if (g->f.vkMapMemory(g->dev, mem, 0, VK_WHOLE_SIZE, 0, &out->map) != VK_SUCCESS) out->map = NULL;
    }
    g->allocated += size;
    return VOX_OK;
}

void vx_gpu_release(vx_gpu *g, vx_gbuf *b) {
    if (!b->buf) return;
    atomic_store(&g->sets_dirty, 1);   /* cached descriptor sets may name this buffer */
    if (b->map) g->f.vkUnmapMemory(g->dev, b->mem);
    g->f.vkDestroyBuffer(g->dev, b->buf, NULL);
    g->f.vkFreeMemory(g->dev, b->mem, NULL);
    g->allocated -= b->size;
    memset(b, 0, sizeof *b);
}

static vox_status one_shot_begin(vx_gpu *g) {
    VkCommandBufferBeginInfo bi;
    memset(&bi, 0, sizeof bi);
    bi.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
    bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    g->f.vkResetCommandBuffer(g->cmd, 0);
    VkResult r = g->f.vkBeginCommandBuffer(g->cmd, &bi);
    return r == VK_SUCCESS ? VOX_OK : vk_fail(r, "vkBeginCommandBuffer");
}

static vox_status one_shot_end(vx_gpu *g) {
    VkResult r = g->f.vkEndCommandBuffer(g->cmd);
    if (r != VK_SUCCESS) return vk_fail(r, "vkEndCommandBuffer");
    VkSubmitInfo si;
    memset(&si, 0, sizeof si);
    si.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
    si.commandBufferCount = 1;
    si.pCommandBuffers = &g->cmd;
    if ((r = g->f.vkQueueSubmit(g->queue, 1, &si, g->fence)) != VK_SUCCESS) return vk_fail(r, "vkQueueSubmit");
    r = g->f.vkWaitForFences(g->dev, 1, &g->fence, 1, ~0ull);
    g->f.vkResetFences(g->dev, 1, &g->fence);
    if (r != VK_SUCCESS) return vk_fail(r, "vkWaitForFences");
    return VOX_OK;
}

/* g->lock for one call; a thread recording a chain of its own (between vx_gpu_begin and vx_gpu_submit)
 * already holds it: that is a caller's error, reported, where a plain mutex would wait for ever. */
static vox_status gpu_lock(vx_gpu *g, const char *what) {
    int e = pthread_mutex_lock(&g->lock);
    if (e == EDEADLK)
        return vox_set_error(VOX_ERR_INTERNAL, "%s between vx_gpu_begin and vx_gpu_submit on the same thread: "
                             "upload, download and prepare before recording or after submitting", what);
    return e ? vox_set_error(VOX_ERR_INTERNAL, "%s: the device lock failed (%d)", what, e) : VOX_OK;
}

static vox_status copy(vx_gpu *g, const vx_gbuf *src, uint64_t so, const vx_gbuf *dst, uint64_t d_o, uint64_t n) {
    vox_status st = one_shot_begin(g);
    if (st != VOX_OK) return st;
    VkBufferCopy c = {so, d_o, n};
    g->f.vkCmdCopyBuffer(g->cmd, src->buf, dst->buf, 1, &c);
    return one_shot_end(g);
}

static vox_status staging(vx_gpu *g) {
    return g->staging.buf ? VOX_OK : vx_gpu_alloc(g, STAGING_BYTES, 1, &g->staging);
}

vox_status vx_gpu_upload(vx_gpu *g, vx_gbuf *dst, uint64_t offset, const void *src, uint64_t n) {
    if (offset + n > dst->size) return vox_set_error(VOX_ERR_INTERNAL, "vx_gpu_upload past the buffer's end");
    if (dst->map) {
        memcpy((char *)dst->map + offset, src, n);
        return VOX_OK;
    }
    vox_status st = gpu_lock(g, "vx_gpu_upload");
    if (st != VOX_OK) return st;
    st = staging(g);
    for (uint64_t done = 0; st == VOX_OK && done < n; done += STAGING_BYTES) {
        uint64_t k = n - done < STAGING_BYTES ? n - done : STAGING_BYTES;
        memcpy(g->staging.map, (const char *)src + done, k);
        st = copy(g, &g->staging, 0, dst, offset + done, (k + 3) & ~3ull);
    }
    pthread_mutex_unlock(&g->lock);
    return st;
}

vox_status vx_gpu_download(vx_gpu *g, const vx_gbuf *src, uint64_t offset, void *dst, uint64_t n) {
    if (offset + n > src->size) return vox_set_error(VOX_ERR_INTERNAL, "vx_gpu_download past the buffer's end");
    if (src->map) {
        memcpy(dst, (const char *)src->map + offset, n);
        return VOX_OK;
    }
    vox_status st = gpu_lock(g, "vx_gpu_download");
    if (st != VOX_OK) return st;
    st = staging(g);
    for (uint64_t done = 0; st == VOX_OK && done < n; done += STAGING_BYTES) {
        uint64_t k = n - done < STAGING_BYTES ? n - done : STAGING_BYTES;
        uint64_t k4 = (k + 3) & ~3ull;
        if (offset + done + k4 > src->size) k4 = k;
        st = copy(g, src, offset + done, &g->staging, 0, k4);
        if (st == VOX_OK) memcpy((char *)dst + done, g->staging.map, k);
    }
    pthread_mutex_unlock(&g->lock);
    return st;
}

/* ------------------------------------------------------------------------------ pipelines */
static vox_status layout_for(vx_gpu *g, uint32_t nb) {
    if (g->pipe_layout[nb]) return VOX_OK;
    VkDescriptorSetLayoutBinding b[MAX_BINDINGS];
    memset(b, 0, sizeof b);
    for (uint32_t i = 0; i < nb; i++) {
        b[i].binding = i;
        b[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
        b[i].descriptorCount = 1;
        b[i].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
    }
    VkDescriptorSetLayoutCreateInfo li;
    memset(&li, 0, sizeof li);
    li.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO;
    li.bindingCount = nb;
    li.pBindings = b;
    VkResult r = g->f.vkCreateDescriptorSetLayout(g->dev, &li, NULL, &g->set_layout[nb]);
    if (r != VK_SUCCESS) return vk_fail(r, "vkCreateDescriptorSetLayout");
    VkPushConstantRange pr = {VK_SHADER_STAGE_COMPUTE_BIT, 0, VX_PUSH_MAX};
    VkPipelineLayoutCreateInfo pli;
    memset(&pli, 0, sizeof pli);
    pli.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO;
    pli.setLayoutCount = 1;
    pli.pSetLayouts = &g->set_layout[nb];
    pli.pushConstantRangeCount = 1;
    pli.pPushConstantRanges = &pr;
    r = g->f.vkCreatePipelineLayout(g->dev, &pli, NULL, &g->pipe_layout[nb]);
    return r == VK_SUCCESS ? VOX_OK : vk_fail(r, "vkCreatePipelineLayout");
}

/* Pipelines are built on first use and kept for the device's life (the driver's pipeline cache makes
 * a rebuild of the same SPIR-V cheap). */
static vox_status pipeline(vx_gpu *g, int shader) {
    if (g->pipes[shader]) return VOX_OK;
    const vx_spv_shader *s = &vx_spv_shaders[shader];
    if ((coopmat_shader(shader) && !g->coopmat) || (coopmat2_shader(shader) && !g->coopmat2))
        return vox_set_error(VOX_ERR_INTERNAL, "Vulkan: shader %s needs cooperative matrices%s, which device %s was "
                             "not created with", s->name, coopmat2_shader(shader) ? " (NV 2)" : "", g->info.name);
    vox_status st = layout_for(g, s->n_bindings);
    if (st != VOX_OK) return st;
    VkShaderModuleCreateInfo mi;
    memset(&mi, 0, sizeof mi);
    mi.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO;
    mi.codeSize = (size_t)s->words * 4;
    mi.pCode = s->code;
    VkShaderModule mod;
    VkResult r = g->f.vkCreateShaderModule(g->dev, &mi, NULL, &mod);
    if (r != VK_SUCCESS) return vk_fail(r, "vkCreateShaderModule");
    VkComputePipelineCreateInfo ci;
    memset(&ci, 0, sizeof ci);
    ci.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO;
    ci.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
    ci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    ci.stage.module = mod;
    ci.stage.pName = "main";
    uint32_t local = 4 * g->info.subgroup_size;
    VkSpecializationMapEntry me = {0, 0, sizeof local};
    VkSpecializationInfo spec = {1, &me, sizeof local, &local};
    if (coopmat_shader(shader)) ci.stage.pSpecializationInfo = &spec;
    uint32_t spec2_data[4] = {g->info.coopmat2_invocations, g->cm2_tile[0], g->cm2_tile[1], g->cm2_tile[2]};
    VkSpecializationMapEntry me2[4] = {{0, 0, 4}, {1, 4, 4}, {2, 8, 4}, {3, 12, 4}};
    VkSpecializationInfo spec2 = {4, me2, sizeof spec2_data, spec2_data};
    if (coopmat2_shader(shader)) ci.stage.pSpecializationInfo = &spec2;
    ci.layout = g->pipe_layout[s->n_bindings];
    ci.basePipelineIndex = -1;
    r = g->f.vkCreateComputePipelines(g->dev, g->cache, 1, &ci, NULL, &g->pipes[shader]);
    g->f.vkDestroyShaderModule(g->dev, mod, NULL);
    if (r != VK_SUCCESS) {
        g->pipes[shader] = VK_NULL_HANDLE;
        return vox_set_error(VOX_ERR_INTERNAL, "Vulkan: building the pipeline of shader %s failed (VkResult %d)",
                             s->name, (int)r);
    }
    return VOX_OK;
}

vox_status vx_gpu_prepare(vx_gpu *g) {
    vox_status st = gpu_lock(g, "vx_gpu_prepare");
    if (st != VOX_OK) return st;
    for (int i = 0; i < VX_SHADER_COUNT && st == VOX_OK; i++)
        if (coopmat2_shader(i) ? g->coopmat2
                               : !coopmat_shader(i) || (g->coopmat && (!codec_coopmat_shader(i) || vx_codec_coopmat_enabled())))
            st = pipeline(g, i);
    pthread_mutex_unlock(&g->lock);
    return st;
}

/* ------------------------------------------------------------------------------ chains */
vox_status vx_gpu_begin(vx_gpu *g) {
    vox_status st = gpu_lock(g, "vx_gpu_begin");   /* held until vx_gpu_submit */
    if (st != VOX_OK) return st;
    if (atomic_exchange(&g->sets_dirty, 0) || g->n_sets + MAX_SETS > POOL_SETS) {   /* none is in flight here */
        g->f.vkResetDescriptorPool(g->dev, g->desc_pool, 0);
        memset(g->sets, 0, CACHE_SLOTS * sizeof *g->sets);
        g->n_sets = 0;
    }
    st = one_shot_begin(g);
    if (st != VOX_OK) {
        pthread_mutex_unlock(&g->lock);
        return st;
    }
    g->recording = 1;
    g->n_dispatch = 0;
    g->n_pend = 0;
    g->n_barrier = 0;
    g->first_label = NULL;
    g->chain_status = VOX_OK;
    if (g->profile && g->n_queries) g->f.vkCmdResetQueryPool(g->cmd, g->queries, 0, g->n_queries);
    return VOX_OK;
}

static vox_status record(vx_gpu *g, int shader, const vx_gbind *binds, int n_binds, const void *push,
                         uint32_t push_size, uint32_t gx, uint32_t gy, uint32_t gz, const char *label);

vox_status vx_gpu_dispatch(vx_gpu *g, int shader, const vx_gbind *binds, int n_binds, const void *push,
                           uint32_t push_size, uint32_t gx, uint32_t gy, uint32_t gz, const char *label) {
    if (!g->recording) return vox_set_error(VOX_ERR_INTERNAL, "vx_gpu_dispatch outside a chain");
    if (g->chain_status != VOX_OK) return g->chain_status;
    return g->chain_status = record(g, shader, binds, n_binds, push, push_size, gx, gy, gz, label);
}

/* FNV-1a over the key's bytes (the key is zeroed before it is filled: no padding garbage) */
static uint32_t key_hash(const set_key *k) {
    const unsigned char *p = (const unsigned char *)k;
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < sizeof *k; i++) h = (h ^ p[i]) * 16777619u;
    return h;
}

/* The descriptor set of these bindings: from the cache, or allocated, written and cached. */
static vox_status descriptor_set(vx_gpu *g, const set_key *key, VkDescriptorSet *out) {
    uint32_t slot = key_hash(key) & (CACHE_SLOTS - 1);
    while (g->sets[slot].used) {
        if (!memcmp(&g->sets[slot].key, key, sizeof *key)) {
            *out = g->sets[slot].set;
            return VOX_OK;
        }
        slot = (slot + 1) & (CACHE_SLOTS - 1);
    }
    VkDescriptorSetAllocateInfo ai;
    memset(&ai, 0, sizeof ai);
    ai.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO;
    ai.descriptorPool = g->desc_pool;
    ai.descriptorSetCount = 1;
    ai.pSetLayouts = &g->set_layout[key->n];
    VkDescriptorSet set;
    VkResult r = g->f.vkAllocateDescriptorSets(g->dev, &ai, &set);
    if (r != VK_SUCCESS) return vk_fail(r, "vkAllocateDescriptorSets");
    VkDescriptorBufferInfo bi[MAX_BINDINGS];
    VkWriteDescriptorSet w[MAX_BINDINGS];
    memset(w, 0, sizeof w);
    for (int i = 0; i < key->n; i++) {
        bi[i].buffer = key->buf[i];
        bi[i].offset = key->offset[i];
        bi[i].range = key->range[i];
        w[i].sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
        w[i].dstSet = set;
        w[i].dstBinding = (uint32_t)i;
        w[i].descriptorCount = 1;
        w[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
        w[i].pBufferInfo = &bi[i];
    }
    g->f.vkUpdateDescriptorSets(g->dev, (uint32_t)key->n, w, 0, NULL);
    g->sets[slot].key = *key;
    g->sets[slot].set = set;
    g->sets[slot].used = 1;
    g->n_sets++;
    *out = set;
    return VOX_OK;
}

/* Whether a dispatch with these bindings (writes: its shader's mask) must wait for the ones recorded
 * since the last barrier: a range of one buffer that either side writes (read after write, write after
 * read or write). Untracked ranges (more than MAX_PENDING) and VOX_VK_BARRIERS=all mean yes. */
static int needs_barrier(const vx_gpu *g, const set_key *key, uint32_t writes) {
    if (g->full_barriers || g->n_pend >= MAX_PENDING - MAX_BINDINGS) return 1;
    for (int i = 0; i < key->n; i++) {
        uint64_t lo = key->offset[i], hi = lo + key->range[i];
        int w = (writes >> i) & 1;
        for (int j = 0; j < g->n_pend; j++)
            if (g->pend[j].buf == key->buf[i] && lo < g->pend[j].hi && g->pend[j].lo < hi && (w || g->pend[j].write))
                return 1;
    }
    return 0;
}

static vox_status record(vx_gpu *g, int shader, const vx_gbind *binds, int n_binds, const void *push,
                         uint32_t push_size, uint32_t gx, uint32_t gy, uint32_t gz, const char *label) {
    if (shader < 0 || shader >= VX_SHADER_COUNT || (uint32_t)n_binds != vx_spv_shaders[shader].n_bindings ||
        push_size > VX_PUSH_MAX)
        return vox_set_error(VOX_ERR_INTERNAL, "vx_gpu_dispatch: bad shader, bindings or push constants");
    if (g->n_dispatch >= MAX_SETS)
        return vox_set_error(VOX_ERR_INTERNAL, "vx_gpu_dispatch: more than %d dispatches in one chain", MAX_SETS);
    if (!gx || !gy || !gz) return VOX_OK;
    vox_status st = pipeline(g, shader);
    if (st != VOX_OK) return st;
    set_key key;
    memset(&key, 0, sizeof key);
    key.shader = shader;
    key.n = n_binds;
    for (int i = 0; i < n_binds; i++) {
        const vx_gbind *b = &binds[i];
        uint64_t size = b->size ? b->size : b->b->size - b->offset;
        if (b->offset % g->info.min_storage_offset_align)
            return vox_set_error(VOX_ERR_INTERNAL, "vx_gpu_dispatch %s: binding %d at offset %llu (the device needs "
                                 "multiples of %llu)", vx_spv_shaders[shader].name, i, (unsigned long long)b->offset,
                                 (unsigned long long)g->info.min_storage_offset_align);
        if (size > g->max_range || b->offset + size > b->b->size)
            return vox_set_error(VOX_ERR_INTERNAL, "vx_gpu_dispatch %s: binding %d covers %llu bytes (limit %llu)",
                                 vx_spv_shaders[shader].name, i, (unsigned long long)size,
                                 (unsigned long long)g->max_range);
        key.buf[i] = b->b->buf;
        key.offset[i] = b->offset;
        key.range[i] = size;
    }
    VkDescriptorSet set;
    vox_status sst = descriptor_set(g, &key, &set);
    if (sst != VOX_OK) return sst;
    /* Each dispatch sees the writes of every earlier one it touches: chains read as sequential code. */
    if (g->n_dispatch > 0 && needs_barrier(g, &key, vx_spv_shaders[shader].writes)) {
        VkMemoryBarrier mb;
        memset(&mb, 0, sizeof mb);
        mb.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
        mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
        mb.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
        g->f.vkCmdPipelineBarrier(g->cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                                  VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &mb, 0, NULL, 0, NULL);
        g->n_pend = 0;
        g->n_barrier++;
    }
    for (int i = 0; i < key.n && g->n_pend < MAX_PENDING; i++, g->n_pend++) {
        g->pend[g->n_pend].buf = key.buf[i];
        g->pend[g->n_pend].lo = key.offset[i];
        g->pend[g->n_pend].hi = key.offset[i] + key.range[i];
        g->pend[g->n_pend].write = (vx_spv_shaders[shader].writes >> i) & 1;
    }
    if (g->n_dispatch == 0) g->first_label = label;
    int timed = g->profile && g->n_queries;
    if (timed)
        g->f.vkCmdWriteTimestamp(g->cmd, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, g->queries, 2u * (uint32_t)g->n_dispatch);
    g->f.vkCmdBindPipeline(g->cmd, VK_PIPELINE_BIND_POINT_COMPUTE, g->pipes[shader]);
    g->f.vkCmdBindDescriptorSets(g->cmd, VK_PIPELINE_BIND_POINT_COMPUTE, g->pipe_layout[n_binds], 0, 1, &set, 0, NULL);
    if (push_size) g->f.vkCmdPushConstants(g->cmd, g->pipe_layout[n_binds], VK_SHADER_STAGE_COMPUTE_BIT, 0, push_size, push);
    g->f.vkCmdDispatch(g->cmd, gx, gy, gz);
    if (timed) {
        g->f.vkCmdWriteTimestamp(g->cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, g->queries,
                                 2u * (uint32_t)g->n_dispatch + 1);
        g->query_labels[g->n_dispatch] = label;
        g->query_shaders[g->n_dispatch] = shader;
    }
    g->n_dispatch++;
    return VOX_OK;
}

static void profile_add(vx_gpu *g, const char *label, int shader, double ms) {
    char name[96];
    const char *sh = vx_spv_shaders[shader].name;
    if (!label) snprintf(name, sizeof name, "%s", sh);
    else snprintf(name, sizeof name, "%s/%s", label, sh);
    for (int i = 0; i < g->n_prof; i++)
        if (!strcmp(g->prof[i].name, name)) {
            g->prof[i].ms += ms;
            g->prof[i].count++;
            return;
        }
    prof_entry *p = realloc(g->prof, (size_t)(g->n_prof + 1) * sizeof *p);
    if (!p) return;
    g->prof = p;
    memset(&g->prof[g->n_prof], 0, sizeof *p);
    snprintf(g->prof[g->n_prof].name, sizeof g->prof[g->n_prof].name, "%s", name);
    g->prof[g->n_prof].ms = ms;
    g->prof[g->n_prof].count = 1;
    g->n_prof++;
}

vox_status vx_gpu_submit(vx_gpu *g) {
    if (!g->recording) return vox_set_error(VOX_ERR_INTERNAL, "vx_gpu_submit outside a chain");
    g->recording = 0;
    g->tot_chains++;
    g->tot_dispatch += (uint64_t)g->n_dispatch;
    g->tot_barrier += (uint64_t)g->n_barrier;
    if (g->profile && g->n_dispatch) {   /* per kind of chain, by its first stage (static strings) */
        int k = 0;
        while (k < g->n_kinds && g->kinds[k].label != g->first_label) k++;
        if (k < 16) {
            if (k == g->n_kinds) memset(&g->kinds[g->n_kinds++], 0, sizeof g->kinds[0]);
            g->kinds[k].label = g->first_label;
            g->kinds[k].chains++;
            g->kinds[k].dispatches += (uint64_t)g->n_dispatch;
            g->kinds[k].barriers += (uint64_t)g->n_barrier;
        }
    }
    if (g->chain_status != VOX_OK) {   /* the error message is the one recording set */
        g->f.vkEndCommandBuffer(g->cmd);
        pthread_mutex_unlock(&g->lock);
        return g->chain_status;
    }
    vox_status st = one_shot_end(g);
    if (st != VOX_OK || !(g->profile && g->n_queries) || !g->n_dispatch) {
        pthread_mutex_unlock(&g->lock);
        return st;
    }
    uint64_t *ts = malloc((size_t)g->n_dispatch * 2 * sizeof *ts);
    if (!ts) {
        pthread_mutex_unlock(&g->lock);
        return VOX_OK;
    }
    if (g->f.vkGetQueryPoolResults(g->dev, g->queries, 0, 2u * (uint32_t)g->n_dispatch,
                                   (size_t)g->n_dispatch * 2 * sizeof *ts, ts, sizeof *ts,
                                   VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT) == VK_SUCCESS)
        for (int i = 0; i < g->n_dispatch; i++)
            profile_add(g, g->query_labels[i], g->query_shaders[i],
                        (double)(ts[2 * i + 1] - ts[2 * i]) * g->info.timestamp_period_ns * 1e-6);
    free(ts);
    pthread_mutex_unlock(&g->lock);
    return VOX_OK;
}

void vx_gpu_set_profile(vx_gpu *g, int on) { g->profile = on && g->info.timestamp_period_ns > 0; }

void vx_gpu_counts(const vx_gpu *g, vx_gpu_count *c) {
    c->chains = g->tot_chains;
    c->dispatches = g->tot_dispatch;
    c->barriers = g->tot_barrier;
}
void vx_gpu_set_full_barriers(vx_gpu *g, int on) { g->full_barriers = on; }

double vx_gpu_profile_ms(const vx_gpu *g, const char *label, int *count) {
    for (int i = 0; i < g->n_prof; i++)
        if (!strcmp(g->prof[i].name, label)) {
            if (count) *count = g->prof[i].count;
            return g->prof[i].ms;
        }
    if (count) *count = 0;
    return 0.0;
}

static int by_time(const void *a, const void *b) {
    double x = ((const prof_entry *)a)->ms, y = ((const prof_entry *)b)->ms;
    return x < y ? 1 : x > y ? -1 : 0;
}

void vx_gpu_profile_print(const vx_gpu *g, FILE *f) {
    if (!g->n_prof) return;
    prof_entry *p = malloc((size_t)g->n_prof * sizeof *p);
    if (!p) return;
    memcpy(p, g->prof, (size_t)g->n_prof * sizeof *p);
    qsort(p, (size_t)g->n_prof, sizeof *p, by_time);
    double total = 0;
    for (int i = 0; i < g->n_prof; i++) total += p[i].ms;
    fprintf(f, "GPU profile (%s): %.3f ms in %d shaders; %llu chains, %llu dispatches, %llu barriers\n", g->info.name,
            total, g->n_prof, (unsigned long long)g->tot_chains, (unsigned long long)g->tot_dispatch,
            (unsigned long long)g->tot_barrier);
    for (int i = 0; i < g->n_prof; i++)
        fprintf(f, "  %-40s %10.3f ms %6.1f%% %8d calls %9.1f us/call\n", p[i].name, p[i].ms,
                total > 0 ? 100.0 * p[i].ms / total : 0.0, p[i].count, 1e3 * p[i].ms / p[i].count);
    for (int k = 0; k < g->n_kinds; k++)
        fprintf(f, "  chains from %-28s %8llu chains, %.1f dispatches and %.1f barriers each\n",
                g->kinds[k].label ? g->kinds[k].label : "(unlabelled)", (unsigned long long)g->kinds[k].chains,
                (double)g->kinds[k].dispatches / (double)g->kinds[k].chains,
                (double)g->kinds[k].barriers / (double)g->kinds[k].chains);
    free(p);
}
