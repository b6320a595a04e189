/* Internal to core/src/vulkan/: the loader's tables shared by the context code. */
#ifndef VOX_VULKAN_VK_INTERNAL_H
#define VOX_VULKAN_VK_INTERNAL_H

#include "vk.h"
#include "vk_fns.h"

/* The instance-level table, the instance and the physical device of vox index `index` (NULL when the
 * index is not a usable device). */
const vx_vk_fns *vx_vk_instance(VkInstance *inst, VkPhysicalDevice *pd, int index);
int vx_vk_device_has_ext(VkPhysicalDevice pd, const char *name);

#endif
