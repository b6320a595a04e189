/* Internal: the part of the Vulkan 1.1 API the backend uses, declared here so that vox builds without
 * the Vulkan SDK and links nothing new (the loader, libvulkan.so.1, is opened at run time).
 *
 * Every type below has the layout of the official vulkan_core.h (the struct bodies are copied from it,
 * Apache-2.0 OR MIT, Copyright 2015-2022 The Khronos Group Inc.); core/tests/test_vulkan_abi.c compares
 * sizes and offsets with the system header wherever one is installed. With -DVOX_VULKAN_SYSTEM_HEADERS=ON
 * the official header is used instead. */
#ifndef VOX_VULKAN_VK_DECL_H
#define VOX_VULKAN_VK_DECL_H

#if defined(VOX_VULKAN_SYSTEM_HEADERS)
#include <vulkan/vulkan_core.h>
#else

#include <stddef.h>
#include <stdint.h>

#define VK_MAKE_API_VERSION(variant, major, minor, patch) \
    ((((uint32_t)(variant)) << 29U) | (((uint32_t)(major)) << 22U) | (((uint32_t)(minor)) << 12U) | ((uint32_t)(patch)))
#define VK_API_VERSION_MAJOR(version) (((uint32_t)(version) >> 22U) & 0x7FU)
#define VK_API_VERSION_MINOR(version) (((uint32_t)(version) >> 12U) & 0x3FFU)
#define VK_API_VERSION_PATCH(version) ((uint32_t)(version) & 0xFFFU)
#define VK_API_VERSION_1_0 VK_MAKE_API_VERSION(0, 1, 0, 0)
#define VK_API_VERSION_1_1 VK_MAKE_API_VERSION(0, 1, 1, 0)
#define VK_API_VERSION_1_3 VK_MAKE_API_VERSION(0, 1, 3, 0)
#define VK_MAX_PHYSICAL_DEVICE_NAME_SIZE 256U
#define VK_UUID_SIZE 16U
#define VK_MAX_EXTENSION_NAME_SIZE 256U
#define VK_MAX_MEMORY_TYPES 32U
#define VK_MAX_MEMORY_HEAPS 16U
#define VK_WHOLE_SIZE (~0ULL)
#define VK_QUEUE_FAMILY_IGNORED (~0U)
#define VKAPI_ATTR
#define VKAPI_CALL
#define VKAPI_PTR

typedef uint32_t VkBool32;
typedef uint32_t VkFlags;
typedef uint64_t VkDeviceSize;

/* Dispatchable handles are pointers; non-dispatchable ones are pointers on 64-bit targets and 64-bit
 * integers elsewhere (as the official header). */
#define VX_VK_HANDLE(name) typedef struct name##_T *name;
#if defined(__LP64__) || defined(_WIN64) || defined(__x86_64__) || defined(__aarch64__) || defined(__powerpc64__) || \
    (defined(__riscv) && __riscv_xlen == 64)
#define VX_VK_NDHANDLE(name) typedef struct name##_T *name;
#define VK_NULL_HANDLE NULL
#else
#define VX_VK_NDHANDLE(name) typedef uint64_t name;
#define VK_NULL_HANDLE 0
#endif
VX_VK_HANDLE(VkInstance)
VX_VK_HANDLE(VkPhysicalDevice)
VX_VK_HANDLE(VkDevice)
VX_VK_HANDLE(VkQueue)
VX_VK_HANDLE(VkCommandBuffer)
VX_VK_NDHANDLE(VkBuffer)
VX_VK_NDHANDLE(VkBufferView)
VX_VK_NDHANDLE(VkDeviceMemory)
VX_VK_NDHANDLE(VkShaderModule)
VX_VK_NDHANDLE(VkPipeline)
VX_VK_NDHANDLE(VkPipelineLayout)
VX_VK_NDHANDLE(VkPipelineCache)
VX_VK_NDHANDLE(VkDescriptorSetLayout)
VX_VK_NDHANDLE(VkDescriptorPool)
VX_VK_NDHANDLE(VkDescriptorSet)
VX_VK_NDHANDLE(VkCommandPool)
VX_VK_NDHANDLE(VkFence)
VX_VK_NDHANDLE(VkSemaphore)
VX_VK_NDHANDLE(VkQueryPool)
VX_VK_NDHANDLE(VkSampler)

/* Enums are int-sized in C: declared as 32-bit integers with their values as constants. */
typedef int32_t VkResult;
typedef int32_t VkStructureType;
typedef int32_t VkPhysicalDeviceType;
typedef int32_t VkSharingMode;
typedef int32_t VkDescriptorType;
typedef int32_t VkCommandBufferLevel;
typedef int32_t VkQueryType;
typedef int32_t VkPipelineBindPoint;
typedef int32_t VkShaderStageFlagBits;
typedef int32_t VkQueryResultFlagBits;
typedef VkFlags VkInstanceCreateFlags, VkSampleCountFlags, VkMemoryPropertyFlags, VkMemoryHeapFlags, VkQueueFlags,
    VkDeviceCreateFlags, VkDeviceQueueCreateFlags, VkBufferCreateFlags, VkBufferUsageFlags, VkShaderModuleCreateFlags,
    VkDescriptorSetLayoutCreateFlags, VkShaderStageFlags, VkPipelineLayoutCreateFlags, VkPipelineShaderStageCreateFlags,
    VkPipelineCreateFlags, VkPipelineCacheCreateFlags, VkDescriptorPoolCreateFlags, VkDescriptorPoolResetFlags,
    VkCommandPoolCreateFlags, VkCommandBufferUsageFlags, VkCommandBufferResetFlags, VkAccessFlags, VkPipelineStageFlags,
    VkFenceCreateFlags, VkQueryPoolCreateFlags, VkQueryPipelineStatisticFlags, VkQueryResultFlags, VkMemoryMapFlags,
    VkSubgroupFeatureFlags, VkDependencyFlags;

enum {
    VK_SUCCESS = 0,
    VK_NOT_READY = 1,
    VK_TIMEOUT = 2,
    VK_INCOMPLETE = 5,
    VK_ERROR_OUT_OF_HOST_MEMORY = -1,
    VK_ERROR_OUT_OF_DEVICE_MEMORY = -2,
    VK_ERROR_INITIALIZATION_FAILED = -3,
    VK_ERROR_DEVICE_LOST = -4,
    VK_ERROR_MEMORY_MAP_FAILED = -5,
    VK_ERROR_LAYER_NOT_PRESENT = -6,
    VK_ERROR_EXTENSION_NOT_PRESENT = -7,
    VK_ERROR_FEATURE_NOT_PRESENT = -8,
    VK_ERROR_INCOMPATIBLE_DRIVER = -9,
    VK_ERROR_TOO_MANY_OBJECTS = -10,
};

enum {
    VK_STRUCTURE_TYPE_APPLICATION_INFO = 0,
    VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO = 1,
    VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO = 2,
    VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO = 3,
    VK_STRUCTURE_TYPE_SUBMIT_INFO = 4,
    VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO = 5,
    VK_STRUCTURE_TYPE_FENCE_CREATE_INFO = 8,
    VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO = 11,
    VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO = 12,
    VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO = 16,
    VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO = 17,
    VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO = 18,
    VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO = 29,
    VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO = 30,
    VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO = 32,
    VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO = 33,
    VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO = 34,
    VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET = 35,
    VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO = 39,
    VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO = 40,
    VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO = 42,
    VK_STRUCTURE_TYPE_MEMORY_BARRIER = 46,
    VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2 = 1000059001,
    VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_PROPERTIES_2 = 1000059006,
    VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES = 1000094000,
    VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_BUDGET_PROPERTIES_EXT = 1000237000,
    VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2 = 1000059000,
    VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES = 1000082000,
    VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_MEMORY_MODEL_FEATURES = 1000211000,
    VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR = 1000506000,
    VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_KHR = 1000506001,
};

enum {
    VK_PHYSICAL_DEVICE_TYPE_OTHER = 0,
    VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU = 1,
    VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU = 2,
    VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU = 3,
    VK_PHYSICAL_DEVICE_TYPE_CPU = 4,
    VK_QUEUE_GRAPHICS_BIT = 0x1,
    VK_QUEUE_COMPUTE_BIT = 0x2,
    VK_QUEUE_TRANSFER_BIT = 0x4,
    VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT = 0x1,
    VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT = 0x2,
    VK_MEMORY_PROPERTY_HOST_COHERENT_BIT = 0x4,
    VK_MEMORY_PROPERTY_HOST_CACHED_BIT = 0x8,
    VK_MEMORY_HEAP_DEVICE_LOCAL_BIT = 0x1,
    VK_BUFFER_USAGE_TRANSFER_SRC_BIT = 0x1,
    VK_BUFFER_USAGE_TRANSFER_DST_BIT = 0x2,
    VK_BUFFER_USAGE_STORAGE_BUFFER_BIT = 0x20,
    VK_SHARING_MODE_EXCLUSIVE = 0,
    VK_DESCRIPTOR_TYPE_STORAGE_BUFFER = 7,
    VK_SHADER_STAGE_COMPUTE_BIT = 0x20,
    VK_PIPELINE_BIND_POINT_COMPUTE = 1,
    VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT = 0x2,
    VK_COMMAND_BUFFER_LEVEL_PRIMARY = 0,
    VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT = 0x1,
    VK_ACCESS_SHADER_READ_BIT = 0x20,
    VK_ACCESS_SHADER_WRITE_BIT = 0x40,
    VK_ACCESS_TRANSFER_READ_BIT = 0x800,
    VK_ACCESS_TRANSFER_WRITE_BIT = 0x1000,
    VK_ACCESS_HOST_READ_BIT = 0x2000,
    VK_ACCESS_HOST_WRITE_BIT = 0x4000,
    VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT = 0x1,
    VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT = 0x800,
    VK_PIPELINE_STAGE_TRANSFER_BIT = 0x1000,
    VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT = 0x2000,
    VK_PIPELINE_STAGE_HOST_BIT = 0x4000,
    VK_QUERY_TYPE_TIMESTAMP = 2,
    VK_QUERY_RESULT_64_BIT = 0x1,
    VK_QUERY_RESULT_WAIT_BIT = 0x2,
    VK_SUBGROUP_FEATURE_BASIC_BIT = 0x1,
    VK_SUBGROUP_FEATURE_ARITHMETIC_BIT = 0x4,
};

typedef struct VkPhysicalDeviceFeatures VkPhysicalDeviceFeatures;            /* only passed as NULL */
typedef struct VkCommandBufferInheritanceInfo VkCommandBufferInheritanceInfo;
typedef struct VkDescriptorImageInfo VkDescriptorImageInfo;
typedef struct VkAllocationCallbacks VkAllocationCallbacks;

typedef struct VkApplicationInfo {
 VkStructureType sType;
 const void* pNext;
 const char* pApplicationName;
 uint32_t applicationVersion;
 const char* pEngineName;
 uint32_t engineVersion;
 uint32_t apiVersion;
} VkApplicationInfo;

typedef struct VkInstanceCreateInfo {
 VkStructureType sType;
 const void* pNext;
 VkInstanceCreateFlags flags;
 const VkApplicationInfo* pApplicationInfo;
 uint32_t enabledLayerCount;
 const char* const* ppEnabledLayerNames;
 uint32_t enabledExtensionCount;
 const char* const* ppEnabledExtensionNames;
} VkInstanceCreateInfo;

typedef struct VkExtensionProperties {
 char extensionName[VK_MAX_EXTENSION_NAME_SIZE];
 uint32_t specVersion;
} VkExtensionProperties;

typedef struct VkExtent3D {
 uint32_t width;
 uint32_t height;
 uint32_t depth;
} VkExtent3D;

typedef struct VkQueueFamilyProperties {
 VkQueueFlags queueFlags;
 uint32_t queueCount;
 uint32_t timestampValidBits;
 VkExtent3D minImageTransferGranularity;
} VkQueueFamilyProperties;

typedef struct VkMemoryType {
 VkMemoryPropertyFlags propertyFlags;
 uint32_t heapIndex;
} VkMemoryType;

typedef struct VkMemoryHeap {
 VkDeviceSize size;
 VkMemoryHeapFlags flags;
} VkMemoryHeap;

typedef struct VkPhysicalDeviceMemoryProperties {
 uint32_t memoryTypeCount;
 VkMemoryType memoryTypes[VK_MAX_MEMORY_TYPES];
 uint32_t memoryHeapCount;
 VkMemoryHeap memoryHeaps[VK_MAX_MEMORY_HEAPS];
} VkPhysicalDeviceMemoryProperties;

typedef struct VkPhysicalDeviceMemoryProperties2 {
 VkStructureType sType;
 void* pNext;
 VkPhysicalDeviceMemoryProperties memoryProperties;
} VkPhysicalDeviceMemoryProperties2;

typedef struct VkPhysicalDeviceMemoryBudgetPropertiesEXT {
 VkStructureType sType;
 void* pNext;
 VkDeviceSize heapBudget[VK_MAX_MEMORY_HEAPS];
 VkDeviceSize heapUsage[VK_MAX_MEMORY_HEAPS];
} VkPhysicalDeviceMemoryBudgetPropertiesEXT;

typedef struct VkPhysicalDeviceLimits {
 uint32_t maxImageDimension1D;
 uint32_t maxImageDimension2D;
 uint32_t maxImageDimension3D;
 uint32_t maxImageDimensionCube;
 uint32_t maxImageArrayLayers;
 uint32_t maxTexelBufferElements;
 uint32_t maxUniformBufferRange;
 uint32_t maxStorageBufferRange;
 uint32_t maxPushConstantsSize;
 uint32_t maxMemoryAllocationCount;
 uint32_t maxSamplerAllocationCount;
 VkDeviceSize bufferImageGranularity;
 VkDeviceSize sparseAddressSpaceSize;
 uint32_t maxBoundDescriptorSets;
 uint32_t maxPerStageDescriptorSamplers;
 uint32_t maxPerStageDescriptorUniformBuffers;
 uint32_t maxPerStageDescriptorStorageBuffers;
 uint32_t maxPerStageDescriptorSampledImages;
 uint32_t maxPerStageDescriptorStorageImages;
 uint32_t maxPerStageDescriptorInputAttachments;
 uint32_t maxPerStageResources;
 uint32_t maxDescriptorSetSamplers;
 uint32_t maxDescriptorSetUniformBuffers;
 uint32_t maxDescriptorSetUniformBuffersDynamic;
 uint32_t maxDescriptorSetStorageBuffers;
 uint32_t maxDescriptorSetStorageBuffersDynamic;
 uint32_t maxDescriptorSetSampledImages;
 uint32_t maxDescriptorSetStorageImages;
 uint32_t maxDescriptorSetInputAttachments;
 uint32_t maxVertexInputAttributes;
 uint32_t maxVertexInputBindings;
 uint32_t maxVertexInputAttributeOffset;
 uint32_t maxVertexInputBindingStride;
 uint32_t maxVertexOutputComponents;
 uint32_t maxTessellationGenerationLevel;
 uint32_t maxTessellationPatchSize;
 uint32_t maxTessellationControlPerVertexInputComponents;
 uint32_t maxTessellationControlPerVertexOutputComponents;
 uint32_t maxTessellationControlPerPatchOutputComponents;
 uint32_t maxTessellationControlTotalOutputComponents;
 uint32_t maxTessellationEvaluationInputComponents;
 uint32_t maxTessellationEvaluationOutputComponents;
 uint32_t maxGeometryShaderInvocations;
 uint32_t maxGeometryInputComponents;
 uint32_t maxGeometryOutputComponents;
 uint32_t maxGeometryOutputVertices;
 uint32_t maxGeometryTotalOutputComponents;
 uint32_t maxFragmentInputComponents;
 uint32_t maxFragmentOutputAttachments;
 uint32_t maxFragmentDualSrcAttachments;
 uint32_t maxFragmentCombinedOutputResources;
 uint32_t maxComputeSharedMemorySize;
 uint32_t maxComputeWorkGroupCount[3];
 uint32_t maxComputeWorkGroupInvocations;
 uint32_t maxComputeWorkGroupSize[3];
 uint32_t subPixelPrecisionBits;
 uint32_t subTexelPrecisionBits;
 uint32_t mipmapPrecisionBits;
 uint32_t maxDrawIndexedIndexValue;
 uint32_t maxDrawIndirectCount;
 float maxSamplerLodBias;
 float maxSamplerAnisotropy;
 uint32_t maxViewports;
 uint32_t maxViewportDimensions[2];
 float viewportBoundsRange[2];
 uint32_t viewportSubPixelBits;
 size_t minMemoryMapAlignment;
 VkDeviceSize minTexelBufferOffsetAlignment;
 VkDeviceSize minUniformBufferOffsetAlignment;
 VkDeviceSize minStorageBufferOffsetAlignment;
 int32_t minTexelOffset;
 uint32_t maxTexelOffset;
 int32_t minTexelGatherOffset;
 uint32_t maxTexelGatherOffset;
 float minInterpolationOffset;
 float maxInterpolationOffset;
 uint32_t subPixelInterpolationOffsetBits;
 uint32_t maxFramebufferWidth;
 uint32_t maxFramebufferHeight;
 uint32_t maxFramebufferLayers;
 VkSampleCountFlags framebufferColorSampleCounts;
 VkSampleCountFlags framebufferDepthSampleCounts;
 VkSampleCountFlags framebufferStencilSampleCounts;
 VkSampleCountFlags framebufferNoAttachmentsSampleCounts;
 uint32_t maxColorAttachments;
 VkSampleCountFlags sampledImageColorSampleCounts;
 VkSampleCountFlags sampledImageIntegerSampleCounts;
 VkSampleCountFlags sampledImageDepthSampleCounts;
 VkSampleCountFlags sampledImageStencilSampleCounts;
 VkSampleCountFlags storageImageSampleCounts;
 uint32_t maxSampleMaskWords;
 VkBool32 timestampComputeAndGraphics;
 float timestampPeriod;
 uint32_t maxClipDistances;
 uint32_t maxCullDistances;
 uint32_t maxCombinedClipAndCullDistances;
 uint32_t discreteQueuePriorities;
 float pointSizeRange[2];
 float lineWidthRange[2];
 float pointSizeGranularity;
 float lineWidthGranularity;
 VkBool32 strictLines;
 VkBool32 standardSampleLocations;
 VkDeviceSize optimalBufferCopyOffsetAlignment;
 VkDeviceSize optimalBufferCopyRowPitchAlignment;
 VkDeviceSize nonCoherentAtomSize;
} VkPhysicalDeviceLimits;

typedef struct VkPhysicalDeviceSparseProperties {
 VkBool32 residencyStandard2DBlockShape;
 VkBool32 residencyStandard2DMultisampleBlockShape;
 VkBool32 residencyStandard3DBlockShape;
 VkBool32 residencyAlignedMipSize;
 VkBool32 residencyNonResidentStrict;
} VkPhysicalDeviceSparseProperties;

typedef struct VkPhysicalDeviceProperties {
 uint32_t apiVersion;
 uint32_t driverVersion;
 uint32_t vendorID;
 uint32_t deviceID;
 VkPhysicalDeviceType deviceType;
 char deviceName[VK_MAX_PHYSICAL_DEVICE_NAME_SIZE];
 uint8_t pipelineCacheUUID[VK_UUID_SIZE];
 VkPhysicalDeviceLimits limits;
 VkPhysicalDeviceSparseProperties sparseProperties;
} VkPhysicalDeviceProperties;

typedef struct VkPhysicalDeviceProperties2 {
 VkStructureType sType;
 void* pNext;
 VkPhysicalDeviceProperties properties;
} VkPhysicalDeviceProperties2;

typedef struct VkPhysicalDeviceSubgroupProperties {
 VkStructureType sType;
 void* pNext;
 uint32_t subgroupSize;
 VkShaderStageFlags supportedStages;
 VkSubgroupFeatureFlags supportedOperations;
 VkBool32 quadOperationsInAllStages;
} VkPhysicalDeviceSubgroupProperties;

typedef struct VkDeviceQueueCreateInfo {
 VkStructureType sType;
 const void* pNext;
 VkDeviceQueueCreateFlags flags;
 uint32_t queueFamilyIndex;
 uint32_t queueCount;
 const float* pQueuePriorities;
} VkDeviceQueueCreateInfo;

typedef struct VkDeviceCreateInfo {
 VkStructureType sType;
 const void* pNext;
 VkDeviceCreateFlags flags;
 uint32_t queueCreateInfoCount;
 const VkDeviceQueueCreateInfo* pQueueCreateInfos;
 uint32_t enabledLayerCount;
 const char* const* ppEnabledLayerNames;
 uint32_t enabledExtensionCount;
 const char* const* ppEnabledExtensionNames;
 const VkPhysicalDeviceFeatures* pEnabledFeatures;
} VkDeviceCreateInfo;

typedef struct VkBufferCreateInfo {
 VkStructureType sType;
 const void* pNext;
 VkBufferCreateFlags flags;
 VkDeviceSize size;
 VkBufferUsageFlags usage;
 VkSharingMode sharingMode;
 uint32_t queueFamilyIndexCount;
 const uint32_t* pQueueFamilyIndices;
} VkBufferCreateInfo;

typedef struct VkMemoryRequirements {
 VkDeviceSize size;
 VkDeviceSize alignment;
 uint32_t memoryTypeBits;
} VkMemoryRequirements;

typedef struct VkMemoryAllocateInfo {
 VkStructureType sType;
 const void* pNext;
 VkDeviceSize allocationSize;
 uint32_t memoryTypeIndex;
} VkMemoryAllocateInfo;

typedef struct VkShaderModuleCreateInfo {
 VkStructureType sType;
 const void* pNext;
 VkShaderModuleCreateFlags flags;
 size_t codeSize;
 const uint32_t* pCode;
} VkShaderModuleCreateInfo;

typedef struct VkDescriptorSetLayoutBinding {
 uint32_t binding;
 VkDescriptorType descriptorType;
 uint32_t descriptorCount;
 VkShaderStageFlags stageFlags;
 const VkSampler* pImmutableSamplers;
} VkDescriptorSetLayoutBinding;

typedef struct VkDescriptorSetLayoutCreateInfo {
 VkStructureType sType;
 const void* pNext;
 VkDescriptorSetLayoutCreateFlags flags;
 uint32_t bindingCount;
 const VkDescriptorSetLayoutBinding* pBindings;
} VkDescriptorSetLayoutCreateInfo;

typedef struct VkPushConstantRange {
 VkShaderStageFlags stageFlags;
 uint32_t offset;
 uint32_t size;
} VkPushConstantRange;

typedef struct VkPipelineLayoutCreateInfo {
 VkStructureType sType;
 const void* pNext;
 VkPipelineLayoutCreateFlags flags;
 uint32_t setLayoutCount;
 const VkDescriptorSetLayout* pSetLayouts;
 uint32_t pushConstantRangeCount;
 const VkPushConstantRange* pPushConstantRanges;
} VkPipelineLayoutCreateInfo;

typedef struct VkSpecializationMapEntry {
 uint32_t constantID;
 uint32_t offset;
 size_t size;
} VkSpecializationMapEntry;

typedef struct VkSpecializationInfo {
 uint32_t mapEntryCount;
 const VkSpecializationMapEntry* pMapEntries;
 size_t dataSize;
 const void* pData;
} VkSpecializationInfo;

typedef struct VkPipelineShaderStageCreateInfo {
 VkStructureType sType;
 const void* pNext;
 VkPipelineShaderStageCreateFlags flags;
 VkShaderStageFlagBits stage;
 VkShaderModule module;
 const char* pName;
 const VkSpecializationInfo* pSpecializationInfo;
} VkPipelineShaderStageCreateInfo;

typedef struct VkComputePipelineCreateInfo {
 VkStructureType sType;
 const void* pNext;
 VkPipelineCreateFlags flags;
 VkPipelineShaderStageCreateInfo stage;
 VkPipelineLayout layout;
 VkPipeline basePipelineHandle;
 int32_t basePipelineIndex;
} VkComputePipelineCreateInfo;

typedef struct VkPipelineCacheCreateInfo {
 VkStructureType sType;
 const void* pNext;
 VkPipelineCacheCreateFlags flags;
 size_t initialDataSize;
 const void* pInitialData;
} VkPipelineCacheCreateInfo;

typedef struct VkDescriptorPoolSize {
 VkDescriptorType type;
 uint32_t descriptorCount;
} VkDescriptorPoolSize;

typedef struct VkDescriptorPoolCreateInfo {
 VkStructureType sType;
 const void* pNext;
 VkDescriptorPoolCreateFlags flags;
 uint32_t maxSets;
 uint32_t poolSizeCount;
 const VkDescriptorPoolSize* pPoolSizes;
} VkDescriptorPoolCreateInfo;

typedef struct VkDescriptorSetAllocateInfo {
 VkStructureType sType;
 const void* pNext;
 VkDescriptorPool descriptorPool;
 uint32_t descriptorSetCount;
 const VkDescriptorSetLayout* pSetLayouts;
} VkDescriptorSetAllocateInfo;

typedef struct VkDescriptorBufferInfo {
 VkBuffer buffer;
 VkDeviceSize offset;
 VkDeviceSize range;
} VkDescriptorBufferInfo;

typedef struct VkWriteDescriptorSet {
 VkStructureType sType;
 const void* pNext;
 VkDescriptorSet dstSet;
 uint32_t dstBinding;
 uint32_t dstArrayElement;
 uint32_t descriptorCount;
 VkDescriptorType descriptorType;
 const VkDescriptorImageInfo* pImageInfo;
 const VkDescriptorBufferInfo* pBufferInfo;
 const VkBufferView* pTexelBufferView;
} VkWriteDescriptorSet;

typedef struct VkCommandPoolCreateInfo {
 VkStructureType sType;
 const void* pNext;
 VkCommandPoolCreateFlags flags;
 uint32_t queueFamilyIndex;
} VkCommandPoolCreateInfo;

typedef struct VkCommandBufferAllocateInfo {
 VkStructureType sType;
 const void* pNext;
 VkCommandPool commandPool;
 VkCommandBufferLevel level;
 uint32_t commandBufferCount;
} VkCommandBufferAllocateInfo;

typedef struct VkCommandBufferBeginInfo {
 VkStructureType sType;
 const void* pNext;
 VkCommandBufferUsageFlags flags;
 const VkCommandBufferInheritanceInfo* pInheritanceInfo;
} VkCommandBufferBeginInfo;

typedef struct VkMemoryBarrier {
 VkStructureType sType;
 const void* pNext;
 VkAccessFlags srcAccessMask;
 VkAccessFlags dstAccessMask;
} VkMemoryBarrier;

typedef struct VkBufferCopy {
 VkDeviceSize srcOffset;
 VkDeviceSize dstOffset;
 VkDeviceSize size;
} VkBufferCopy;

typedef struct VkSubmitInfo {
 VkStructureType sType;
 const void* pNext;
 uint32_t waitSemaphoreCount;
 const VkSemaphore* pWaitSemaphores;
 const VkPipelineStageFlags* pWaitDstStageMask;
 uint32_t commandBufferCount;
 const VkCommandBuffer* pCommandBuffers;
 uint32_t signalSemaphoreCount;
 const VkSemaphore* pSignalSemaphores;
} VkSubmitInfo;

typedef struct VkFenceCreateInfo {
 VkStructureType sType;
 const void* pNext;
 VkFenceCreateFlags flags;
} VkFenceCreateInfo;

typedef struct VkQueryPoolCreateInfo {
 VkStructureType sType;
 const void* pNext;
 VkQueryPoolCreateFlags flags;
 VkQueryType queryType;
 uint32_t queryCount;
 VkQueryPipelineStatisticFlags pipelineStatistics;
} VkQueryPoolCreateInfo;

/* The features the cooperative-matrix shaders need (16-bit floats in registers and shared memory, the
 * Vulkan memory model). VkPhysicalDeviceFeatures2 holds the 55 VkBool32 of VkPhysicalDeviceFeatures as
 * an array (vox reads none of them). */
typedef struct VkPhysicalDeviceFeatures2 {
 VkStructureType sType;
 void* pNext;
 VkBool32 features[55];
} VkPhysicalDeviceFeatures2;

typedef struct VkPhysicalDeviceShaderFloat16Int8Features {
 VkStructureType sType;
 void* pNext;
 VkBool32 shaderFloat16;
 VkBool32 shaderInt8;
} VkPhysicalDeviceShaderFloat16Int8Features;

typedef struct VkPhysicalDeviceVulkanMemoryModelFeatures {
 VkStructureType sType;
 void* pNext;
 VkBool32 vulkanMemoryModel;
 VkBool32 vulkanMemoryModelDeviceScope;
 VkBool32 vulkanMemoryModelAvailabilityVisibilityChains;
} VkPhysicalDeviceVulkanMemoryModelFeatures;

typedef void (VKAPI_PTR *PFN_vkVoidFunction)(void);
typedef PFN_vkVoidFunction (VKAPI_PTR *PFN_vkGetInstanceProcAddr)(VkInstance instance, const char *pName);

#endif /* VOX_VULKAN_SYSTEM_HEADERS */

/* VK_KHR_cooperative_matrix (tensor cores), also where an older official header lacks it. */
#ifndef VK_KHR_cooperative_matrix
#if defined(VOX_VULKAN_SYSTEM_HEADERS)
enum {
    VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR = 1000506000,
    VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_KHR = 1000506001,
};
#endif
typedef int32_t VkComponentTypeKHR;
typedef int32_t VkScopeKHR;
enum {
    VK_COMPONENT_TYPE_FLOAT16_KHR = 0,
    VK_COMPONENT_TYPE_FLOAT32_KHR = 1,
    VK_SCOPE_WORKGROUP_KHR = 2,
    VK_SCOPE_SUBGROUP_KHR = 3,
};

typedef struct VkPhysicalDeviceCooperativeMatrixFeaturesKHR {
 VkStructureType sType;
 void* pNext;
 VkBool32 cooperativeMatrix;
 VkBool32 cooperativeMatrixRobustBufferAccess;
} VkPhysicalDeviceCooperativeMatrixFeaturesKHR;

typedef struct VkCooperativeMatrixPropertiesKHR {
 VkStructureType sType;
 void* pNext;
 uint32_t MSize;
 uint32_t NSize;
 uint32_t KSize;
 VkComponentTypeKHR AType;
 VkComponentTypeKHR BType;
 VkComponentTypeKHR CType;
 VkComponentTypeKHR ResultType;
 VkBool32 saturatingAccumulation;
 VkScopeKHR scope;
} VkCooperativeMatrixPropertiesKHR;

#endif

/* VK_NV_cooperative_matrix2 (workgroup-scope matrices, flexible sizes, tensor-addressed loads) and the
 * 16-bit storage its GEMM reads float16 weights with, also where an older official header lacks them. */
#ifndef VK_NV_cooperative_matrix2
enum {
    VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_FEATURES_NV = 1000593000,
    VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_FLEXIBLE_DIMENSIONS_PROPERTIES_NV = 1000593001,
    VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_PROPERTIES_NV = 1000593002,
};
typedef struct VkPhysicalDeviceCooperativeMatrix2FeaturesNV {
 VkStructureType sType;
 void* pNext;
 VkBool32 cooperativeMatrixWorkgroupScope;
 VkBool32 cooperativeMatrixFlexibleDimensions;
 VkBool32 cooperativeMatrixReductions;
 VkBool32 cooperativeMatrixConversions;
 VkBool32 cooperativeMatrixPerElementOperations;
 VkBool32 cooperativeMatrixTensorAddressing;
 VkBool32 cooperativeMatrixBlockLoads;
} VkPhysicalDeviceCooperativeMatrix2FeaturesNV;

typedef struct VkPhysicalDeviceCooperativeMatrix2PropertiesNV {
 VkStructureType sType;
 void* pNext;
 uint32_t cooperativeMatrixWorkgroupScopeMaxWorkgroupSize;
 uint32_t cooperativeMatrixFlexibleDimensionsMaxDimension;
 uint32_t cooperativeMatrixWorkgroupScopeReservedSharedMemory;
} VkPhysicalDeviceCooperativeMatrix2PropertiesNV;

typedef struct VkCooperativeMatrixFlexibleDimensionsPropertiesNV {
 VkStructureType sType;
 void* pNext;
 uint32_t MGranularity;
 uint32_t NGranularity;
 uint32_t KGranularity;
 VkComponentTypeKHR AType;
 VkComponentTypeKHR BType;
 VkComponentTypeKHR CType;
 VkComponentTypeKHR ResultType;
 VkBool32 saturatingAccumulation;
 VkScopeKHR scope;
 uint32_t workgroupInvocations;
} VkCooperativeMatrixFlexibleDimensionsPropertiesNV;
#endif
#if !defined(VOX_VULKAN_SYSTEM_HEADERS)
enum { VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES = 1000083000 };
typedef struct VkPhysicalDevice16BitStorageFeatures {
 VkStructureType sType;
 void* pNext;
 VkBool32 storageBuffer16BitAccess;
 VkBool32 uniformAndStorageBuffer16BitAccess;
 VkBool32 storagePushConstant16;
 VkBool32 storageInputOutput16;
} VkPhysicalDevice16BitStorageFeatures;
#endif
#endif
