/* Internal: the Vulkan entry points the backend calls, as one table filled at run time (vk_loader.c).
 * X(name, return type, parameter list): global functions come from vkGetInstanceProcAddr(NULL, ...),
 * instance ones after vkCreateInstance, device ones through vkGetDeviceProcAddr. */
#ifndef VOX_VULKAN_VK_FNS_H
#define VOX_VULKAN_VK_FNS_H

#include "vk_decl.h"

#define VX_VK_GLOBAL_FNS(X)                                                                                        \
    X(vkCreateInstance, VkResult, (const VkInstanceCreateInfo *, const VkAllocationCallbacks *, VkInstance *))      \
    X(vkEnumerateInstanceExtensionProperties, VkResult, (const char *, uint32_t *, VkExtensionProperties *))

#define VX_VK_INSTANCE_FNS(X)                                                                                      \
    X(vkDestroyInstance, void, (VkInstance, const VkAllocationCallbacks *))                                        \
    X(vkEnumeratePhysicalDevices, VkResult, (VkInstance, uint32_t *, VkPhysicalDevice *))                          \
    X(vkGetPhysicalDeviceProperties, void, (VkPhysicalDevice, VkPhysicalDeviceProperties *))                       \
    X(vkGetPhysicalDeviceProperties2, void, (VkPhysicalDevice, VkPhysicalDeviceProperties2 *))                     \
    X(vkGetPhysicalDeviceFeatures2, void, (VkPhysicalDevice, VkPhysicalDeviceFeatures2 *))                         \
    X(vkGetPhysicalDeviceMemoryProperties, void, (VkPhysicalDevice, VkPhysicalDeviceMemoryProperties *))           \
    X(vkGetPhysicalDeviceMemoryProperties2, void, (VkPhysicalDevice, VkPhysicalDeviceMemoryProperties2 *))         \
    X(vkGetPhysicalDeviceQueueFamilyProperties, void, (VkPhysicalDevice, uint32_t *, VkQueueFamilyProperties *))   \
    X(vkEnumerateDeviceExtensionProperties, VkResult, (VkPhysicalDevice, const char *, uint32_t *,                 \
                                                       VkExtensionProperties *))                                   \
    X(vkCreateDevice, VkResult, (VkPhysicalDevice, const VkDeviceCreateInfo *, const VkAllocationCallbacks *,      \
                                 VkDevice *))                                                                       \
    X(vkGetDeviceProcAddr, PFN_vkVoidFunction, (VkDevice, const char *))

#define VX_VK_DEVICE_FNS(X)                                                                                        \
    X(vkDestroyDevice, void, (VkDevice, const VkAllocationCallbacks *))                                            \
    X(vkGetDeviceQueue, void, (VkDevice, uint32_t, uint32_t, VkQueue *))                                           \
    X(vkDeviceWaitIdle, VkResult, (VkDevice))                                                                      \
    X(vkCreateBuffer, VkResult, (VkDevice, const VkBufferCreateInfo *, const VkAllocationCallbacks *, VkBuffer *)) \
    X(vkDestroyBuffer, void, (VkDevice, VkBuffer, const VkAllocationCallbacks *))                                  \
    X(vkGetBufferMemoryRequirements, void, (VkDevice, VkBuffer, VkMemoryRequirements *))                           \
    X(vkAllocateMemory, VkResult, (VkDevice, const VkMemoryAllocateInfo *, const VkAllocationCallbacks *,          \
                                   VkDeviceMemory *))                                                               \
    X(vkFreeMemory, void, (VkDevice, VkDeviceMemory, const VkAllocationCallbacks *))                               \
    X(vkBindBufferMemory, VkResult, (VkDevice, VkBuffer, VkDeviceMemory, VkDeviceSize))                            \
    X(vkMapMemory, VkResult, (VkDevice, VkDeviceMemory, VkDeviceSize, VkDeviceSize, VkMemoryMapFlags, void **))    \
    X(vkUnmapMemory, void, (VkDevice, VkDeviceMemory))                                                             \
    X(vkCreateShaderModule, VkResult, (VkDevice, const VkShaderModuleCreateInfo *, const VkAllocationCallbacks *,  \
                                       VkShaderModule *))                                                           \
    X(vkDestroyShaderModule, void, (VkDevice, VkShaderModule, const VkAllocationCallbacks *))                      \
    X(vkCreateDescriptorSetLayout, VkResult, (VkDevice, const VkDescriptorSetLayoutCreateInfo *,                   \
                                              const VkAllocationCallbacks *, VkDescriptorSetLayout *))              \
    X(vkDestroyDescriptorSetLayout, void, (VkDevice, VkDescriptorSetLayout, const VkAllocationCallbacks *))        \
    X(vkCreatePipelineLayout, VkResult, (VkDevice, const VkPipelineLayoutCreateInfo *,                             \
                                         const VkAllocationCallbacks *, VkPipelineLayout *))                        \
    X(vkDestroyPipelineLayout, void, (VkDevice, VkPipelineLayout, const VkAllocationCallbacks *))                  \
    X(vkCreatePipelineCache, VkResult, (VkDevice, const VkPipelineCacheCreateInfo *,                               \
                                        const VkAllocationCallbacks *, VkPipelineCache *))                          \
    X(vkDestroyPipelineCache, void, (VkDevice, VkPipelineCache, const VkAllocationCallbacks *))                    \
    X(vkCreateComputePipelines, VkResult, (VkDevice, VkPipelineCache, uint32_t, const VkComputePipelineCreateInfo *, \
                                           const VkAllocationCallbacks *, VkPipeline *))                            \
    X(vkDestroyPipeline, void, (VkDevice, VkPipeline, const VkAllocationCallbacks *))                              \
    X(vkCreateDescriptorPool, VkResult, (VkDevice, const VkDescriptorPoolCreateInfo *,                             \
                                         const VkAllocationCallbacks *, VkDescriptorPool *))                        \
    X(vkDestroyDescriptorPool, void, (VkDevice, VkDescriptorPool, const VkAllocationCallbacks *))                  \
    X(vkResetDescriptorPool, VkResult, (VkDevice, VkDescriptorPool, VkDescriptorPoolResetFlags))                   \
    X(vkAllocateDescriptorSets, VkResult, (VkDevice, const VkDescriptorSetAllocateInfo *, VkDescriptorSet *))      \
    X(vkUpdateDescriptorSets, void, (VkDevice, uint32_t, const VkWriteDescriptorSet *, uint32_t, const void *))    \
    X(vkCreateCommandPool, VkResult, (VkDevice, const VkCommandPoolCreateInfo *, const VkAllocationCallbacks *,    \
                                      VkCommandPool *))                                                             \
    X(vkDestroyCommandPool, void, (VkDevice, VkCommandPool, const VkAllocationCallbacks *))                        \
    X(vkAllocateCommandBuffers, VkResult, (VkDevice, const VkCommandBufferAllocateInfo *, VkCommandBuffer *))      \
    X(vkResetCommandBuffer, VkResult, (VkCommandBuffer, VkCommandBufferResetFlags))                                \
    X(vkBeginCommandBuffer, VkResult, (VkCommandBuffer, const VkCommandBufferBeginInfo *))                         \
    X(vkEndCommandBuffer, VkResult, (VkCommandBuffer))                                                             \
    X(vkCmdBindPipeline, void, (VkCommandBuffer, VkPipelineBindPoint, VkPipeline))                                 \
    X(vkCmdBindDescriptorSets, void, (VkCommandBuffer, VkPipelineBindPoint, VkPipelineLayout, uint32_t, uint32_t,  \
                                      const VkDescriptorSet *, uint32_t, const uint32_t *))                         \
    X(vkCmdPushConstants, void, (VkCommandBuffer, VkPipelineLayout, VkShaderStageFlags, uint32_t, uint32_t,        \
                                 const void *))                                                                     \
    X(vkCmdDispatch, void, (VkCommandBuffer, uint32_t, uint32_t, uint32_t))                                        \
    X(vkCmdPipelineBarrier, void, (VkCommandBuffer, VkPipelineStageFlags, VkPipelineStageFlags, VkDependencyFlags, \
                                   uint32_t, const VkMemoryBarrier *, uint32_t, const void *, uint32_t,            \
                                   const void *))                                                                   \
    X(vkCmdCopyBuffer, void, (VkCommandBuffer, VkBuffer, VkBuffer, uint32_t, const VkBufferCopy *))                \
    X(vkCmdFillBuffer, void, (VkCommandBuffer, VkBuffer, VkDeviceSize, VkDeviceSize, uint32_t))                    \
    X(vkCmdResetQueryPool, void, (VkCommandBuffer, VkQueryPool, uint32_t, uint32_t))                               \
    X(vkCmdWriteTimestamp, void, (VkCommandBuffer, int32_t, VkQueryPool, uint32_t))                                \
    X(vkQueueSubmit, VkResult, (VkQueue, uint32_t, const VkSubmitInfo *, VkFence))                                 \
    X(vkCreateFence, VkResult, (VkDevice, const VkFenceCreateInfo *, const VkAllocationCallbacks *, VkFence *))    \
    X(vkDestroyFence, void, (VkDevice, VkFence, const VkAllocationCallbacks *))                                    \
    X(vkWaitForFences, VkResult, (VkDevice, uint32_t, const VkFence *, VkBool32, uint64_t))                        \
    X(vkResetFences, VkResult, (VkDevice, uint32_t, const VkFence *))                                              \
    X(vkCreateQueryPool, VkResult, (VkDevice, const VkQueryPoolCreateInfo *, const VkAllocationCallbacks *,        \
                                    VkQueryPool *))                                                                 \
    X(vkDestroyQueryPool, void, (VkDevice, VkQueryPool, const VkAllocationCallbacks *))                            \
    X(vkGetQueryPoolResults, VkResult, (VkDevice, VkQueryPool, uint32_t, uint32_t, size_t, void *, VkDeviceSize,   \
                                        VkQueryResultFlags))

#define VX_VK_DECLARE_PTR(name, ret, args) ret (*name) args;
typedef struct vx_vk_fns {
    PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr;
    /* optional (VK_KHR_cooperative_matrix): NULL when the loader does not know it */
    VkResult (*vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR)(VkPhysicalDevice, uint32_t *,
                                                                   VkCooperativeMatrixPropertiesKHR *);
    /* optional (VK_NV_cooperative_matrix2) */
    VkResult (*vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV)(
        VkPhysicalDevice, uint32_t *, VkCooperativeMatrixFlexibleDimensionsPropertiesNV *);
    VX_VK_GLOBAL_FNS(VX_VK_DECLARE_PTR)
    VX_VK_INSTANCE_FNS(VX_VK_DECLARE_PTR)
} vx_vk_fns;

typedef struct vx_vk_device_fns {
    VX_VK_DEVICE_FNS(VX_VK_DECLARE_PTR)
} vx_vk_device_fns;
#undef VX_VK_DECLARE_PTR

#endif
