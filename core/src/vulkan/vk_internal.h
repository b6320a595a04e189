/* Internal to core/src/vulkan/: the loader's tables shared by the context code. */
#ifndef VOX_VULKAN_VK_INTERNAL_H
#define VOX_VULKAN_VK_INTERNAL_H

#include "vk.h"
#include "vk_fns.h"

/* The instance-level table, the instance and the physical device of vox index `index` (NULL when the
 * index is not a usable device). */
const vx_vk_fns *vx_vk_instance(VkInstance *inst, VkPhysicalDevice *pd, int index);
int vx_vk_device_has_ext(VkPhysicalDevice pd, const char *name);

/* The feature structs cooperative matrices need, zeroed and chained cm -> mm -> f16: the device listing
 * queries them (vkGetPhysicalDeviceFeatures2), the context sets them to 1 for vkCreateDevice. The
 * chain points into the struct itself: fill it where it stays. */
typedef struct vx_vk_cm_features {
    VkPhysicalDeviceCooperativeMatrixFeaturesKHR cm;
    VkPhysicalDeviceVulkanMemoryModelFeatures mm;
    VkPhysicalDeviceShaderFloat16Int8Features f16;
} vx_vk_cm_features;
void vx_vk_cm_features_chain(vx_vk_cm_features *f);

/* The same for VK_NV_cooperative_matrix2 (gemm_cm2.comp): its features and 16-bit storage, chained
 * cm2 -> s16 (the context puts them after the vx_vk_cm_features chain). */
typedef struct vx_vk_cm2_features {
    VkPhysicalDeviceCooperativeMatrix2FeaturesNV cm2;
    VkPhysicalDevice16BitStorageFeatures s16;
} vx_vk_cm2_features;
void vx_vk_cm2_features_chain(vx_vk_cm2_features *f);

#endif
