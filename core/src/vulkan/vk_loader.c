/* The Vulkan loader, opened at run time, one instance per process, and the device list. */

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vk_internal.h"

void vx_vk_cm_features_chain(vx_vk_cm_features *f) {
    memset(f, 0, sizeof *f);
    f->cm.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR;
    f->mm.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_MEMORY_MODEL_FEATURES;
    f->f16.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES;
    f->cm.pNext = &f->mm;
    f->mm.pNext = &f->f16;
}

void vx_vk_cm2_features_chain(vx_vk_cm2_features *f) {
    memset(f, 0, sizeof *f);
    f->cm2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_FEATURES_NV;
    f->s16.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES;
    f->cm2.pNext = &f->s16;
}

static vx_vk_fns fns;
static uint32_t api_version;   /* the instance's (1.1 or 1.3) */
static VkInstance instance;
static VkPhysicalDevice *phys;
static vx_vk_device_info *infos;
static int n_infos;
static char reason[256];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static int has_ext(const VkExtensionProperties *e, uint32_t n, const char *name) {
    for (uint32_t i = 0; i < n; i++)
        if (!strcmp(e[i].extensionName, name)) return 1;
    return 0;
}

int vx_vk_device_has_ext(VkPhysicalDevice pd, const char *name) {
    uint32_t n = 0;
    if (fns.vkEnumerateDeviceExtensionProperties(pd, NULL, &n, NULL) != VK_SUCCESS || !n) return 0;
    VkExtensionProperties *e = calloc(n, sizeof *e);
    if (!e) return 0;
    int ok = fns.vkEnumerateDeviceExtensionProperties(pd, NULL, &n, e) == VK_SUCCESS && has_ext(e, n, name);
    free(e);
    return ok;
}

static const char *type_name(vx_vk_type t) {
    switch (t) {
    case VX_VK_DISCRETE: return "discrete";
    case VX_VK_INTEGRATED: return "integrated";
    case VX_VK_VIRTUAL: return "virtual";
    case VX_VK_CPU: return "cpu";
    default: return "other";
    }
}

/* Free memory of the device-local heaps (all heaps when none is device-local, as on CPU renderers). */
static void memory_of(VkPhysicalDevice pd, vx_vk_device_info *d) {
    int budget = vx_vk_device_has_ext(pd, "VK_EXT_memory_budget");
    VkPhysicalDeviceMemoryBudgetPropertiesEXT b;
    memset(&b, 0, sizeof b);
    b.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_BUDGET_PROPERTIES_EXT;
    VkPhysicalDeviceMemoryProperties2 mp2;
    memset(&mp2, 0, sizeof mp2);
    mp2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_PROPERTIES_2;
    mp2.pNext = budget ? &b : NULL;
    fns.vkGetPhysicalDeviceMemoryProperties2(pd, &mp2);
    const VkPhysicalDeviceMemoryProperties *mp = &mp2.memoryProperties;
    int any_local = 0;
    for (uint32_t h = 0; h < mp->memoryHeapCount; h++)
        if (mp->memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) any_local = 1;
    for (uint32_t h = 0; h < mp->memoryHeapCount; h++) {
        if (any_local && !(mp->memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT)) continue;
        d->memory_total += mp->memoryHeaps[h].size;
        if (budget) d->memory_free += b.heapBudget[h] > b.heapUsage[h] ? b.heapBudget[h] - b.heapUsage[h] : 0;
    }
    d->memory_free_estimated = !budget;
    if (!budget) d->memory_free = d->memory_total;
}

/* Cooperative matrices as gemm_cm.glsl uses them: the extensions, their features, and a 16x16x16
 * float16 x float16 -> float32 shape at subgroup scope among the device's properties. */
static void coopmat_of(VkPhysicalDevice pd, const VkPhysicalDeviceSubgroupProperties *sg, vx_vk_device_info *d) {
    if (!fns.vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR || !vx_vk_device_has_ext(pd, "VK_KHR_cooperative_matrix"))
        return;
    uint32_t n = 0;
    if (fns.vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR(pd, &n, NULL) != VK_SUCCESS || !n) return;
    VkCooperativeMatrixPropertiesKHR *cp = calloc(n, sizeof *cp);
    if (!cp) return;
    for (uint32_t i = 0; i < n; i++) cp[i].sType = VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_KHR;
    int shape = 0;
    if (fns.vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR(pd, &n, cp) == VK_SUCCESS)
        for (uint32_t i = 0; i < n; i++) {
            const VkCooperativeMatrixPropertiesKHR *c = &cp[i];
            if (c->AType != VK_COMPONENT_TYPE_FLOAT16_KHR || c->BType != VK_COMPONENT_TYPE_FLOAT16_KHR ||
                c->CType != VK_COMPONENT_TYPE_FLOAT32_KHR || c->ResultType != VK_COMPONENT_TYPE_FLOAT32_KHR ||
                c->scope != VK_SCOPE_SUBGROUP_KHR)
                continue;
            size_t len = strlen(d->coopmat_shapes);
            snprintf(d->coopmat_shapes + len, sizeof d->coopmat_shapes - len, "%s%ux%ux%u", len ? " " : "", c->MSize,
                     c->NSize, c->KSize);
            if (c->MSize == 16 && c->NSize == 16 && c->KSize == 16) shape = 1;
        }
    free(cp);
    vx_vk_cm_features cf;
    vx_vk_cm_features_chain(&cf);
    VkPhysicalDeviceFeatures2 f2;
    memset(&f2, 0, sizeof f2);
    f2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
    f2.pNext = &cf.cm;
    fns.vkGetPhysicalDeviceFeatures2(pd, &f2);
    d->coopmat = shape && cf.cm.cooperativeMatrix && cf.mm.vulkanMemoryModel && cf.f16.shaderFloat16 &&
                 vx_vk_device_has_ext(pd, "VK_KHR_vulkan_memory_model") &&
                 vx_vk_device_has_ext(pd, "VK_KHR_shader_float16_int8") &&
                 (sg->supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) && (sg->supportedOperations & VK_SUBGROUP_FEATURE_BASIC_BIT);
}

/* VK_NV_cooperative_matrix2 as gemm_cm2.comp uses it (after coopmat_of: it builds on cooperative
 * matrices): the extension, its features, 16-bit storage, and a workgroup-scope float16 x float16 ->
 * float32 entry whose granularities divide 32 (every dimension of the shaders' matrices is a multiple of 32). */
static void coopmat2_of(VkPhysicalDevice pd, vx_vk_device_info *d) {
    if (!d->coopmat || d->api_version < VK_API_VERSION_1_3 || api_version < VK_API_VERSION_1_3 ||
        !fns.vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV ||
        !vx_vk_device_has_ext(pd, "VK_NV_cooperative_matrix2"))
        return;
    uint32_t n = 0;
    if (fns.vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV(pd, &n, NULL) != VK_SUCCESS || !n) return;
    VkCooperativeMatrixFlexibleDimensionsPropertiesNV *cp = calloc(n, sizeof *cp);
    if (!cp) return;
    for (uint32_t i = 0; i < n; i++) cp[i].sType = VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_FLEXIBLE_DIMENSIONS_PROPERTIES_NV;
    uint32_t inv = 0;
    if (fns.vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV(pd, &n, cp) == VK_SUCCESS)
        for (uint32_t i = 0; i < n; i++) {
            const VkCooperativeMatrixFlexibleDimensionsPropertiesNV *c = &cp[i];
            if (c->AType != VK_COMPONENT_TYPE_FLOAT16_KHR || c->BType != VK_COMPONENT_TYPE_FLOAT16_KHR ||
                c->CType != VK_COMPONENT_TYPE_FLOAT32_KHR || c->ResultType != VK_COMPONENT_TYPE_FLOAT32_KHR ||
                c->scope != VK_SCOPE_WORKGROUP_KHR)
                continue;
            size_t len = strlen(d->coopmat2_shapes);
            snprintf(d->coopmat2_shapes + len, sizeof d->coopmat2_shapes - len, "%s%ux%ux%u@%u", len ? " " : "",
                     c->MGranularity, c->NGranularity, c->KGranularity, c->workgroupInvocations);
            int fits = c->MGranularity && 32 % c->MGranularity == 0 && c->NGranularity && 32 % c->NGranularity == 0 &&
                       c->KGranularity && 32 % c->KGranularity == 0 && c->workgroupInvocations >= 64 &&
                       c->workgroupInvocations <= d->max_workgroup_invocations;
            if (fits && (inv != 256 && (c->workgroupInvocations == 256 || c->workgroupInvocations > inv)))
                inv = c->workgroupInvocations;
        }
    free(cp);
    vx_vk_cm2_features cf;
    vx_vk_cm2_features_chain(&cf);
    VkPhysicalDeviceFeatures2 f2;
    memset(&f2, 0, sizeof f2);
    f2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
    f2.pNext = &cf.cm2;
    fns.vkGetPhysicalDeviceFeatures2(pd, &f2);
    d->coopmat2_invocations = inv;
    d->coopmat2 = inv && cf.cm2.cooperativeMatrixWorkgroupScope && cf.cm2.cooperativeMatrixFlexibleDimensions &&
                  cf.cm2.cooperativeMatrixReductions &&
                  cf.cm2.cooperativeMatrixConversions && cf.cm2.cooperativeMatrixPerElementOperations &&
                  cf.cm2.cooperativeMatrixTensorAddressing && cf.s16.storageBuffer16BitAccess;
}

static void describe(VkPhysicalDevice pd, int index, vx_vk_device_info *d) {
    VkPhysicalDeviceSubgroupProperties sg;
    memset(&sg, 0, sizeof sg);
    sg.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES;
    VkPhysicalDeviceProperties2 p2;
    memset(&p2, 0, sizeof p2);
    p2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2;
    p2.pNext = &sg;
    fns.vkGetPhysicalDeviceProperties2(pd, &p2);
    const VkPhysicalDeviceProperties *p = &p2.properties;
    memset(d, 0, sizeof *d);
    d->index = index;
    snprintf(d->name, sizeof d->name, "%s", p->deviceName);
    d->type = (vx_vk_type)p->deviceType;
    if (d->type < VX_VK_OTHER || d->type > VX_VK_CPU) d->type = VX_VK_OTHER;
    d->type_name = type_name(d->type);
    /* CPU renderers report the CPU type; older SwiftShader builds report "other" but name themselves. */
    d->software = d->type == VX_VK_CPU || strstr(d->name, "llvmpipe") || strstr(d->name, "SwiftShader");
    d->api_version = p->apiVersion;
    d->driver_version = p->driverVersion;
    d->vendor_id = p->vendorID;
    d->device_id = p->deviceID;
    d->subgroup_size = sg.subgroupSize;
    d->max_storage_buffer_range = p->limits.maxStorageBufferRange;
    d->min_storage_offset_align = p->limits.minStorageBufferOffsetAlignment ? p->limits.minStorageBufferOffsetAlignment : 1;
    d->max_workgroup_invocations = p->limits.maxComputeWorkGroupInvocations;
    d->max_shared_memory = p->limits.maxComputeSharedMemorySize;
    d->timestamp_period_ns = p->limits.timestampComputeAndGraphics ? p->limits.timestampPeriod : 0.0f;
    memory_of(pd, d);
    coopmat_of(pd, &sg, d);
    coopmat2_of(pd, d);
}

#define VX_VK_LOAD(name, ret, args)                                                                    \
    if (!(fns.name = (ret(*) args)(void (*)(void))fns.vkGetInstanceProcAddr(inst, #name))) {            \
        snprintf(reason, sizeof reason, "the Vulkan loader lacks %s", #name);                           \
        return 0;                                                                                       \
    }

static int load_global(void) {
    VkInstance inst = NULL;
    VX_VK_GLOBAL_FNS(VX_VK_LOAD)
    return 1;
}
static int load_instance(VkInstance inst) {
    VX_VK_INSTANCE_FNS(VX_VK_LOAD)
    return 1;
}

static void init(void) {
    const char *names[] = {"libvulkan.so.1", "libvulkan.so"};
    void *lib = NULL;
    for (int i = 0; i < 2 && !lib; i++) lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        snprintf(reason, sizeof reason, "no Vulkan loader (libvulkan.so.1 not found)");
        return;
    }
    fns.vkGetInstanceProcAddr = (PFN_vkGetInstanceProcAddr)(void (*)(void))dlsym(lib, "vkGetInstanceProcAddr");
    if (!fns.vkGetInstanceProcAddr) {
        snprintf(reason, sizeof reason, "the Vulkan loader has no vkGetInstanceProcAddr");
        return;
    }
    /* Vulkan 1.1 is the floor: subgroup properties, *2 queries, storage-buffer features used by the shaders. */
    uint32_t (*enum_version)(uint32_t *) =
        (uint32_t(*)(uint32_t *))(void (*)(void))fns.vkGetInstanceProcAddr(NULL, "vkEnumerateInstanceVersion");
    uint32_t version = VK_API_VERSION_1_0;
    if (enum_version) enum_version(&version);
    if (version < VK_API_VERSION_1_1) {
        snprintf(reason, sizeof reason, "the Vulkan loader is older than 1.1");
        return;
    }
    if (!load_global()) return;
    VkApplicationInfo app;
    memset(&app, 0, sizeof app);
    app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
    app.pApplicationName = "vox";
    app.pEngineName = "vox";
    /* 1.3 where the loader has it: the cooperative-matrix-2 shader is SPIR-V 1.6, which a device takes
     * only at an API version of 1.3 (the lower of this and its own); 1.1 features need nothing more */
    app.apiVersion = version >= VK_API_VERSION_1_3 ? VK_API_VERSION_1_3 : VK_API_VERSION_1_1;
    api_version = app.apiVersion;
    VkInstanceCreateInfo ci;
    memset(&ci, 0, sizeof ci);
    ci.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
    ci.pApplicationInfo = &app;
    VkResult r = fns.vkCreateInstance(&ci, NULL, &instance);
    if (r != VK_SUCCESS) {
        snprintf(reason, sizeof reason, "vkCreateInstance failed (VkResult %d): no usable Vulkan driver", (int)r);
        instance = NULL;
        return;
    }
    if (!load_instance(instance)) return;
    fns.vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR =
        (VkResult(*)(VkPhysicalDevice, uint32_t *, VkCooperativeMatrixPropertiesKHR *))(void (*)(void))
            fns.vkGetInstanceProcAddr(instance, "vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR");
    fns.vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV =
        (VkResult(*)(VkPhysicalDevice, uint32_t *, VkCooperativeMatrixFlexibleDimensionsPropertiesNV *))(void (*)(void))
            fns.vkGetInstanceProcAddr(instance, "vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV");
    uint32_t n = 0;
    if (fns.vkEnumeratePhysicalDevices(instance, &n, NULL) != VK_SUCCESS || n == 0) {
        snprintf(reason, sizeof reason, "Vulkan found no device");
        return;
    }
    phys = calloc(n, sizeof *phys);
    vx_vk_device_info *all = calloc(n, sizeof *all);
    if (!phys || !all || fns.vkEnumeratePhysicalDevices(instance, &n, phys) < 0) {
        snprintf(reason, sizeof reason, "Vulkan device enumeration failed");
        free(all);
        return;
    }
    int k = 0;
    for (uint32_t i = 0; i < n; i++) {
        VkPhysicalDeviceProperties p;
        fns.vkGetPhysicalDeviceProperties(phys[i], &p);
        if (p.apiVersion < VK_API_VERSION_1_1) continue;   /* listed nowhere: vox cannot use it */
        describe(phys[i], (int)i, &all[k++]);
    }
    infos = all;
    n_infos = k;
    if (!k) snprintf(reason, sizeof reason, "no Vulkan 1.1 device");
}

const vx_vk_device_info *vx_vk_devices(int *n) {
    pthread_once(&once, init);
    *n = n_infos;
    return infos;
}

const char *vx_vk_unavailable_reason(void) {
    pthread_once(&once, init);
    return n_infos ? NULL : reason;
}

const vx_vk_fns *vx_vk_instance(VkInstance *inst, VkPhysicalDevice *pd, int index) {
    pthread_once(&once, init);
    for (int i = 0; i < n_infos; i++)
        if (infos[i].index == index) {
            *inst = instance;
            *pd = phys[index];
            return &fns;
        }
    return NULL;
}
